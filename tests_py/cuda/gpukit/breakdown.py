"""Where the time of the device rows that miss their targets goes, step by
step, on the machine's GPU (the GPU kit runs it; informational, no target).

Each figure is the minimum over 5 runs of the mean of 2,000 calls, in µs
(driver_costs.py's measure, after 200 calls of warm-up).
A step that cannot run here (no CuPy, no PyTorch) is left out, saying why.

    python breakdown.py [--out breakdown.md]
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable

from driver_costs import CALLS, RUNS, per_call_us


def warm_per_call_us(fn: Callable[[], object]) -> float:
    for _ in range(200):
        fn()
    return per_call_us(fn)


class OnlyDLPack:
    """A producer with the DLPack methods of another and nothing else."""

    def __init__(self, x: Any) -> None:
        self.x = x

    def __dlpack__(self, **kw: Any) -> Any:
        return self.x.__dlpack__(**kw)

    def __dlpack_device__(self) -> Any:
        return self.x.__dlpack_device__()


def steps() -> list[tuple[str, str, Callable[[], object]]]:
    import godevarrow as gda
    import numpy as np
    import pyarrow as pa
    from godevarrow import _godevarrow as lib

    jobs: list[tuple[str, str, Callable[[], object]]] = []
    host8k = gda.array(pa.array(np.arange(1024, dtype=np.int64)))
    dev8k = host8k.to_device("cuda:0")
    host8 = gda.array(pa.array(np.arange(1, dtype=np.int64)))
    dev8 = host8.to_device("cuda:0")
    host64k = gda.array(pa.array(np.arange(8192, dtype=np.int64)))
    dev64k = host64k.to_device("cuda:0")
    for label, h, d in (("8 B", host8, dev8), ("8 KB", host8k, dev8k), ("64 KB", host64k, dev64k)):
        jobs.append(("small copies", f'to_device("cpu") of {label}', lambda d=d: d.to_device("cpu")))
        jobs.append(("small copies", f'to_device("cuda:0") of {label}', lambda h=h: h.to_device("cuda:0")))
    copies = "small copies"
    jobs.append((copies, "the C method alone (no device parsing), 8 KB to cpu", lambda: dev8k._to_device(1, -1)))
    jobs.append((copies, "the C method alone (no device parsing), 8 KB to cuda:0", lambda: host8k._to_device(2, 0)))
    pa8k = pa.array(np.arange(1024, dtype=np.int64))
    jobs.append(("small copies", "CPU import of a pyarrow array (Python + Go, no device)", lambda: gda.array(pa8k)))
    try:
        import cupy

        x = cupy.arange(1000, dtype=cupy.int64)
        g = gda.array(x)
        s = cupy.cuda.get_current_stream().ptr or 1
        only_x, only_g = OnlyDLPack(x), OnlyDLPack(g)
        v = (1, 1)
        jobs += [
            ("CuPy", "cupy.from_dlpack(x)", lambda: cupy.from_dlpack(x)),
            ("CuPy", "gda.array(x)", lambda: gda.array(x)),
            ("CuPy", "gda.array(OnlyDLPack(x)) (a Python producer's extra call)", lambda: gda.array(only_x)),
            ("CuPy", "x.__dlpack_device__()", lambda: x.__dlpack_device__()),
            ("CuPy", "x.__dlpack__()", lambda: x.__dlpack__()),
            ("CuPy", "x.__dlpack__(stream=1, max_version=(1, 1))", lambda: x.__dlpack__(stream=1, max_version=v)),
            ("CuPy", "x.__dlpack__(stream=None, max_version=(1, 1))", lambda: x.__dlpack__(max_version=v)),
            (
                "CuPy",
                f"x.__dlpack__(stream=current ({s}), max_version=(1, 1))",
                lambda: x.__dlpack__(stream=s, max_version=v),
            ),
            ("CuPy", "cupy.cuda.get_current_stream()", lambda: cupy.cuda.get_current_stream()),
            ("CuPy", "x.__cuda_array_interface__", lambda: x.__cuda_array_interface__),
            ("CuPy", "cupy.from_dlpack(g)", lambda: cupy.from_dlpack(g)),
            ("CuPy", "g.__dlpack_device__()", lambda: g.__dlpack_device__()),
            ("CuPy", "g.__dlpack__(stream=1, max_version=(1, 1))", lambda: g.__dlpack__(stream=1, max_version=v)),
            ("CuPy", "g.__dlpack__()", lambda: g.__dlpack__()),
            (
                "CuPy",
                "cupy.from_dlpack(OnlyDLPack(x)) (CuPy's consumer, a Python producer)",
                lambda: cupy.from_dlpack(only_x),
            ),
            ("CuPy", "cupy.from_dlpack(OnlyDLPack(g))", lambda: cupy.from_dlpack(only_g)),
        ]
        caps: list[Any] = []

        def import_made_capsule() -> object:
            if not caps:
                caps.extend(x.__dlpack__(stream=1, max_version=v) for _ in range(RUNS * CALLS + 200))
            return lib.dlpack_import(caps.pop())

        jobs.append(("CuPy", "the binding's import of a capsule made beforehand (no stream)", import_made_capsule))
    except Exception as e:  # noqa: BLE001 (reported)
        jobs.append(("CuPy", f"left out: {type(e).__name__}: {e}", lambda: None))
    try:
        import torch

        t = torch.arange(1000, dtype=torch.int64, device="cuda")
        jobs += [
            ("PyTorch", "torch.from_dlpack(t)", lambda: torch.from_dlpack(t)),
            ("PyTorch", "gda.array(t)", lambda: gda.array(t)),
            ("PyTorch", "t.__dlpack_device__()", lambda: t.__dlpack_device__()),
            (
                "PyTorch",
                "t.__dlpack__(stream=1, max_version=(1, 1))",
                lambda: t.__dlpack__(stream=1, max_version=(1, 1)),
            ),
            ("PyTorch", "t.__dlpack__()", lambda: t.__dlpack__()),
            ("PyTorch", "torch.cuda.current_stream()", lambda: torch.cuda.current_stream()),
        ]
    except Exception as e:  # noqa: BLE001 (reported)
        jobs.append(("PyTorch", f"left out: {type(e).__name__}: {e}", lambda: None))
    return jobs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    lines = [
        "## Steps of the device rows on this machine",
        "",
        f"Minimum of {RUNS} runs of the mean of {CALLS:,} calls.",
        "",
        "| group | step | µs |",
        "| --- | --- | --- |",
    ]
    for group, label, fn in steps():
        try:
            us = f"{warm_per_call_us(fn):.2f}" if not label.startswith("left out") else ""
        except Exception as e:  # noqa: BLE001 (reported)
            us = f"failed: {type(e).__name__}: {e}"
        lines.append(f"| {group} | {label} | {us} |")
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
