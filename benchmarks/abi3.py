"""The Limited API's cost: every godevarrow row of bench.py, timed with the
abi3 build (the one the wheel ships) and with a build against the full C API
of this Python (GODEVARROW_FULL_API=1), in one run.

One Go runtime per process, so each build runs in its own subprocess; the two
alternate, in a fresh random order every round, and each round times every row
a few times. A row's result is the abi3 median over the full-API median, with a
95% bootstrap interval; above 1.05 the Limited API costs more than the 5% the
packaging decision allows (docs/design.md, "Packaging").

    python benchmarks/abi3.py [--rounds N] [--out build/abi3.md]

With ``--against REV`` the same rows compare this tree's build with the
build of git revision REV instead (both abi3): a change's cost on every row,
in one run (``make bench-compare BASE=REV``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ABI3_BUILDS = {"abi3": (ROOT, {}), "full API": (ROOT, {"GODEVARROW_FULL_API": "1"})}


def install(target: str, source: str, extra_env: dict[str, str]) -> None:
    """godevarrow built from the tree at source into target (not the virtualenv)."""
    env = {**os.environ, **extra_env}
    cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps"]
    cmd += ["--target", target, source]
    subprocess.check_call(cmd, env=env)


def checkout(rev: str, into: str) -> str:
    """The tree of git revision rev, extracted under into."""
    os.makedirs(into)
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)
    return into


def worker_jobs(rows_large: int, batches: int) -> list[tuple[str, Callable[[], Any]]]:
    """godevarrow's job of every bench.py row that runs godevarrow's binding:
    the exchange table and the sync read of the reading section."""
    import pyarrow as pa

    bench = bench_module()
    args = argparse.Namespace(rows_large=rows_large, batches=batches)
    impls = bench._peers()
    jobs = []
    for label, kind, make in bench.rows(args):
        call = bench.job(impls, "godevarrow", kind, make)
        if call is not None:
            jobs.append((label, call))

    import godevarrow as gda

    batch = pa.record_batch({"x": pa.array([1], pa.int64())})
    table = pa.Table.from_batches([batch] * batches)

    def sync_read() -> None:
        for _ in gda.stream(table.to_reader()):
            pass

    jobs.append((f"reading: a for loop over a stream of {batches:,} one-row batches", sync_read))
    return jobs


def bench_module() -> Any:
    sys.path.insert(0, HERE)
    import bench

    return bench


def _cuda_batch() -> Any:
    """The held CUDA batch of bench.py's device import row, or None without a driver."""
    import godevarrow as gda

    if not gda.cuda_status()[0]:
        return None
    on_device = gda.record_batch(bench_module().hundred_columns()).to_device("cuda:0")

    class Fresh:
        def __arrow_c_device_array__(self, requested_schema: Any = None, **kwargs: Any) -> Any:
            return on_device.__arrow_c_device_array__()

    return gda.record_batch(Fresh())  # held, as in bench.py


def worker(samples: int, rows_large: int, batches: int, only: str) -> int:
    """Times each job `samples` times (each sample at least 20 ms of calls) and
    prints {label: [seconds per call, ...]} as JSON."""
    out: dict[str, list[float]] = {}
    for label, call in worker_jobs(rows_large, batches):
        if only and not re.search(only, label):
            continue
        try:
            call()  # warm
        except AttributeError:  # a build without this job's API (--against an older revision)
            continue
        loops = 1
        while True:
            start = time.perf_counter()
            for _ in range(loops):
                call()
            if time.perf_counter() - start >= 0.02:
                break
            loops *= 2
        times = []
        for _ in range(samples):
            start = time.perf_counter()
            for _ in range(loops):
                call()
            times.append((time.perf_counter() - start) / loops)
        out[label] = times
    label = "import of a 100-column CUDA batch (the fake driver: make bench's device row)"
    held = _cuda_batch() if not only or re.search(only, label) else None
    if held is not None:
        import godevarrow as gda

        out[label] = bench_module()._import_samples(gda, {"cuda": held}, samples)["cuda"]
    json.dump(out, sys.stdout)
    return 0


def ratio_interval(num: list[float], den: list[float], draws: int = 2000) -> tuple[float, float, float]:
    rng = random.Random(7)

    def resampled(values: list[float]) -> float:
        return statistics.median(rng.choice(values) for _ in values)

    ratios = sorted(resampled(num) / resampled(den) for _ in range(draws))
    return statistics.median(num) / statistics.median(den), ratios[int(0.025 * draws)], ratios[int(0.975 * draws)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=12, help="rounds; each runs both builds once")
    parser.add_argument("--samples", type=int, default=5, help="samples of each row per build and round")
    parser.add_argument("--rows-large", type=int, default=10**7)
    parser.add_argument("--batches", type=int, default=20_000)
    parser.add_argument("--only", default="", help="time only the rows whose label matches this regex")
    parser.add_argument("--out", help="also write the Markdown table here")
    parser.add_argument("--against", help="compare this tree with the build of this git revision")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args.samples, args.rows_large, args.batches, args.only)

    with tempfile.TemporaryDirectory(prefix="godevarrow-abi3-") as tmp:
        builds = ABI3_BUILDS
        if args.against:
            builds = {"this tree": (ROOT, {}), args.against: (checkout(args.against, os.path.join(tmp, "base")), {})}
        targets = {}
        for i, (name, (source, env)) in enumerate(builds.items()):
            targets[name] = os.path.join(tmp, f"build-{i}")
            install(targets[name], source, env)
        samples: dict[str, dict[str, list[float]]] = {name: {} for name in builds}
        order = list(builds)
        for r in range(args.rounds):
            random.shuffle(order)
            for name in order:
                env = {**os.environ, "PYTHONPATH": targets[name], "OPENBLAS_NUM_THREADS": "1"}
                cmd = [sys.executable, __file__, "--worker", f"--samples={args.samples}"]
                cmd += [f"--rows-large={args.rows_large}", f"--batches={args.batches}", f"--only={args.only}"]
                result = json.loads(subprocess.check_output(cmd, env=env, cwd=tmp))
                for label, times in result.items():
                    samples[name].setdefault(label, []).extend(times)
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
        check = subprocess.check_output(
            [sys.executable, "-c", "import godevarrow._godevarrow as m; print(m.__file__)"],
            env={**os.environ, "PYTHONPATH": targets[order[0]]},
            text=True,
        )
        assert check.strip().endswith(".abi3.so"), check

    first, second = builds
    lines = [
        f"Python {sys.version.split()[0]}, {args.rounds} rounds x {args.samples} samples per build and row.",
        "",
        f"| row | {first} | {second} | {first} / {second} | 95% interval | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for label in samples[first]:
        if label not in samples[second]:
            lines.append(f"| {label} | (only in {first}) | | | | |")
            continue
        a, f = samples[first][label], samples[second][label]
        ratio, low, high = ratio_interval(a, f)
        if low > 1.05:
            verdict = "costs more than 5%"
        else:
            verdict = "tie" if low <= 1.0 <= high else ("slower" if low > 1 else "faster")
        lines.append(
            f"| {label} | {statistics.median(a) * 1e6:.2f} µs | {statistics.median(f) * 1e6:.2f} µs "
            f"| {ratio:.3f}x | {low:.3f}-{high:.3f} | {verdict} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
