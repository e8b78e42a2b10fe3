"""What the machine's CUDA driver charges for the call sequences godevarrow's
small copies and imports are made of, measured through ctypes (the GPU kit
runs it; docs/cuda.md keeps the table the costed fake charges).

Each figure is the minimum over 5 runs of the mean of 2,000 calls of the
sequence, in µs, and includes ctypes' own overhead per call (the first row,
a call that does nothing on the device, measures it). Needs only the driver
(libcuda.so.1, or GODEVARROW_LIBCUDA) and a device 0.

    python driver_costs.py [--out driver_costs.md]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import sys
import time
from typing import Callable

CALLS, RUNS = 2000, 5
CU_STREAM_NON_BLOCKING = 1
CU_EVENT_DISABLE_TIMING = 2
LEGACY_STREAM = ctypes.c_void_p(1)


def check(rc: int, what: str) -> None:
    if rc != 0:
        raise RuntimeError(f"{what} failed with CUresult {rc}")


def per_call_us(fn: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(RUNS):
        t0 = time.perf_counter()
        for _ in range(CALLS):
            fn()
        best = min(best, (time.perf_counter() - t0) / CALLS)
    return best * 1e6


def measure() -> list[tuple[str, float]]:
    cu = ctypes.CDLL(os.environ.get("GODEVARROW_LIBCUDA", "libcuda.so.1"))  # the fake, in make test
    check(cu.cuInit(0), "cuInit")
    ctx = ctypes.c_void_p()
    check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0), "cuDevicePrimaryCtxRetain")
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    cu.cuMemcpyHtoD_v2.argtypes = [ctypes.c_ulonglong, ctypes.c_void_p, ctypes.c_size_t]
    cu.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_size_t]
    cu.cuMemcpyHtoDAsync_v2.argtypes = [ctypes.c_ulonglong, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    cu.cuMemcpyDtoHAsync_v2.argtypes = [ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_size_t, ctypes.c_void_p]
    stream = ctypes.c_void_p()
    check(cu.cuStreamCreate(ctypes.byref(stream), CU_STREAM_NON_BLOCKING), "cuStreamCreate")
    event = ctypes.c_void_p()
    check(cu.cuEventCreate(ctypes.byref(event), CU_EVENT_DISABLE_TIMING), "cuEventCreate")
    dev = ctypes.c_ulonglong()
    check(cu.cuMemAlloc_v2(ctypes.byref(dev), 65536), "cuMemAlloc")
    pinned = ctypes.c_void_p()
    check(cu.cuMemAllocHost_v2(ctypes.byref(pinned), 65536), "cuMemAllocHost")
    pageable = ctypes.create_string_buffer(65536)
    version = ctypes.c_int()
    current = ctypes.c_void_p()
    popped = ctypes.c_void_p()

    def push_pop() -> None:
        cu.cuCtxPushCurrent_v2(ctx)
        cu.cuCtxPopCurrent_v2(ctypes.byref(popped))

    def async_htod(n: int) -> Callable[[], None]:
        def f() -> None:
            cu.cuMemcpyHtoDAsync_v2(dev.value, pinned.value, n, stream)
            cu.cuStreamSynchronize(stream)

        return f

    def async_htod_pageable(n: int) -> Callable[[], None]:
        def f() -> None:
            cu.cuMemcpyHtoDAsync_v2(dev.value, ctypes.addressof(pageable), n, stream)
            cu.cuStreamSynchronize(stream)

        return f

    def async_dtoh_pageable(n: int) -> Callable[[], None]:
        def f() -> None:
            cu.cuMemcpyDtoHAsync_v2(ctypes.addressof(pageable), dev.value, n, stream)
            cu.cuStreamSynchronize(stream)

        return f

    def async_dtoh(n: int) -> Callable[[], None]:
        def f() -> None:
            cu.cuMemcpyDtoHAsync_v2(pinned.value, dev.value, n, stream)
            cu.cuStreamSynchronize(stream)

        return f

    def ev_on(s: ctypes.c_void_p) -> Callable[[], None]:
        return lambda: cu.cuEventRecord(event, s)

    # a copy to the device ordered by an event instead of waited for on the
    # host (what an array that carries a sync_event needs)
    def htod_then_record(pinned_source: bool) -> Callable[[], None]:
        def f() -> None:
            src = pinned.value if pinned_source else ctypes.addressof(pageable)
            cu.cuMemcpyHtoDAsync_v2(dev.value, src, 8192, stream)
            cu.cuEventRecord(event, stream)

        return f

    def sync_htod_then_record() -> None:
        cu.cuMemcpyHtoD_v2(dev.value, pageable, 8192)
        cu.cuEventRecord(event, LEGACY_STREAM)

    def dtoh_event_wait() -> None:
        cu.cuMemcpyDtoHAsync_v2(pinned.value, dev.value, 8192, stream)
        cu.cuEventRecord(event, stream)
        cu.cuEventSynchronize(event)

    jobs: list[tuple[str, Callable[[], object]]] = [
        (
            "ctypes call that asks nothing of the device (cuDriverGetVersion)",
            lambda: cu.cuDriverGetVersion(ctypes.byref(version)),
        ),
        ("cuCtxGetCurrent", lambda: cu.cuCtxGetCurrent(ctypes.byref(current))),
        ("cuCtxPushCurrent + cuCtxPopCurrent", push_pop),
        ("cuCtxSynchronize, idle", lambda: cu.cuCtxSynchronize()),
        ("cuStreamSynchronize, idle non-blocking stream", lambda: cu.cuStreamSynchronize(stream)),
        ("cuEventRecord on a non-blocking stream", ev_on(stream)),
        ("cuEventRecord on the legacy default stream", ev_on(LEGACY_STREAM)),
        ("cuStreamWaitEvent", lambda: cu.cuStreamWaitEvent(stream, event, 0)),
        ("cuEventQuery, completed", lambda: cu.cuEventQuery(event)),
        ("cuMemcpyHtoDAsync 8 KB from pageable + cuEventRecord (no wait)", htod_then_record(False)),
        ("cuMemcpyHtoDAsync 8 KB from pinned + cuEventRecord (no wait)", htod_then_record(True)),
        ("cuMemcpyHtoD 8 KB from pageable (synchronous) + cuEventRecord on the legacy stream", sync_htod_then_record),
        ("cuMemcpyDtoHAsync 8 KB into pinned + cuEventRecord + cuEventSynchronize", dtoh_event_wait),
    ]
    for n, size in ((8, "8 B"), (8192, "8 KB"), (65536, "64 KB")):
        jobs += [
            (f"cuMemcpyHtoDAsync {size} from pinned + cuStreamSynchronize", async_htod(n)),
            (f"cuMemcpyHtoDAsync {size} from pageable + cuStreamSynchronize", async_htod_pageable(n)),
            (
                f"cuMemcpyHtoD {size} from pinned (synchronous)",
                lambda n=n: cu.cuMemcpyHtoD_v2(dev.value, pinned.value, n),
            ),
            (
                f"cuMemcpyHtoD {size} from pageable (synchronous)",
                lambda n=n: cu.cuMemcpyHtoD_v2(dev.value, pageable, n),
            ),
            (f"cuMemcpyDtoHAsync {size} into pinned + cuStreamSynchronize", async_dtoh(n)),
            (f"cuMemcpyDtoHAsync {size} into pageable + cuStreamSynchronize", async_dtoh_pageable(n)),
            (
                f"cuMemcpyDtoH {size} into pinned (synchronous)",
                lambda n=n: cu.cuMemcpyDtoH_v2(pinned.value, dev.value, n),
            ),
            (
                f"cuMemcpyDtoH {size} into pageable (synchronous)",
                lambda n=n: cu.cuMemcpyDtoH_v2(pageable, dev.value, n),
            ),
        ]
    rows = []
    for label, fn in jobs:
        for _ in range(200):  # warm up
            fn()
        rows.append((label, per_call_us(fn)))
        cu.cuCtxSynchronize()  # the rows that do not wait leave nothing queued
        print(f"{label}: {rows[-1][1]:.2f} µs", flush=True)
    cu.cuMemFree_v2(dev)
    cu.cuMemFreeHost(pinned)
    cu.cuEventDestroy_v2(event)
    cu.cuStreamDestroy_v2(stream)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    rows = measure()
    lines = [
        "## Driver call sequences on this machine",
        "",
        f"Minimum of {RUNS} runs of the mean of {CALLS:,} calls, through ctypes (its overhead is in every row;",
        "the first row measures it).",
        "",
        "| call sequence | µs |",
        "| --- | --- |",
    ]
    lines += [f"| {label} | {us:.2f} |" for label, us in rows]
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
