"""godevarrow beside pyarrow, nanoarrow and arro3, measured in one run.

Each row is one job done by every implementation; times are medians over
repetitions, and the last columns are godevarrow's time divided by the fastest
peer's (<= 1.0 means godevarrow is at least as fast), that ratio's 95%
bootstrap interval and the verdict it gives (faster, tie, slower). Benchmarks
are not tests: nothing here asserts anything.

    python benchmarks/bench.py [--quick] [--repeat K] [--out docs/benchmarks.md]
    python benchmarks/bench.py --device-only [--quick]   # the device rows alone (the GPU kit)
"""

from __future__ import annotations

import argparse
import datetime
import functools
import math
import os
import pathlib
import platform
import random
import statistics
import sys
import time
from typing import Any, Callable, Optional

import numpy as np
import pyarrow as pa

Impl = Callable[[Any], Any]


def _two_hops(kind: Any) -> Impl:
    # pyarrow as X: pyarrow exports, imports (X), exports again and imports back
    def trip(obj: Any) -> Any:
        once = kind._import_from_c_device_capsule(*obj.__arrow_c_device_array__())
        return kind._import_from_c_device_capsule(*once.__arrow_c_device_array__())

    return trip


def _peers() -> dict[str, dict[str, Optional[Impl]]]:
    """For each implementation X, the jobs of the table:

    - ``array``/``batch``: a round trip pyarrow -> X -> pyarrow (X imports
      what pyarrow exports, then pyarrow imports what X exports);
    - ``hold``: X's own object for a pyarrow one, ``export``: X exports it
      (the capsules are dropped unconsumed, which releases them);
    - ``import``: X imports from pyarrow (pyarrow's export included);
    - ``stream``/``polars``: pyarrow or polars reads a stream pyarrow -> X;
    - ``values``: X's ``to_pylist`` of its own object for a pyarrow one
      (``values_of`` makes that object once, outside the timing).

    Each uses the protocol the consumer picks: pyarrow the device protocols
    when X offers them, else the plain ones; godevarrow.array picks for itself
    (the plain one for pyarrow's own objects, docs/design.md)."""
    import polars as pl

    impls: dict[str, dict[str, Optional[Impl]]] = {
        "pyarrow": {
            "array": _two_hops(pa.Array),
            "batch": _two_hops(pa.RecordBatch),
            "stream": lambda r: pa.RecordBatchReader._import_from_c_capsule(r.__arrow_c_stream__()),
            "polars": lambda r: pl.DataFrame(r),
            "hold": lambda a: a,
            "export": lambda a: a.__arrow_c_device_array__(),
            "import": lambda a: type(a)._import_from_c_device_capsule(*a.__arrow_c_device_array__()),
            "values_of": lambda a: a,
            "values": lambda x: x.to_pylist(),
        }
    }
    try:
        import godevarrow as gda

        impls["godevarrow"] = {
            "array": lambda a: pa.array(gda.array(a)),
            "batch": lambda b: pa.record_batch(gda.record_batch(b)),
            "stream": lambda r: pa.RecordBatchReader.from_stream(gda.stream(r)),
            "polars": lambda r: pl.DataFrame(gda.stream(r)),
            "hold": gda.array,
            "export": lambda g: g.__arrow_c_device_array__(),
            "import": gda.array,
            "values_of": gda.array,
            "values": lambda x: x.to_pylist(),
        }
    except ImportError as exc:
        print(f"godevarrow: not importable ({exc})", file=sys.stderr)
    try:
        import nanoarrow as na

        impls["nanoarrow"] = {
            "array": lambda a: pa.array(na.c_array(a)),
            "batch": lambda b: pa.record_batch(na.c_array(b)),
            "stream": lambda r: pa.RecordBatchReader.from_stream(na.c_array_stream(r)),
            "polars": lambda r: pl.DataFrame(na.c_array_stream(r)),
            "hold": na.c_array,
            "export": lambda n: n.__arrow_c_array__(),
            "import": na.c_array,
            "values_of": na.Array,
            "values": lambda x: x.to_pylist(),
        }
    except ImportError:
        pass
    try:
        import arro3.core as a3

        def _arro3_import(a: Any) -> Any:
            return (a3.RecordBatch if isinstance(a, pa.RecordBatch) else a3.Array).from_arrow(a)

        impls["arro3"] = {
            "array": lambda a: pa.array(a3.Array.from_arrow(a)),
            "batch": lambda b: pa.record_batch(a3.RecordBatch.from_arrow(b)),
            "stream": lambda r: pa.RecordBatchReader.from_stream(a3.RecordBatchReader.from_arrow(r)),
            "polars": lambda r: pl.DataFrame(a3.RecordBatchReader.from_arrow(r)),
            "hold": _arro3_import,
            "export": lambda x: x.__arrow_c_array__(),
            "import": _arro3_import,
            # arro3's RecordBatch has no to_pylist: its batch cell stays empty
            "values_of": lambda a: a3.Array.from_arrow(a) if isinstance(a, pa.Array) else None,
            "values": lambda x: x.to_pylist(),
        }
    except ImportError:
        pass
    return impls


def _loops_for(fn: Callable[[], Any], min_seconds: float) -> int:
    """How many calls make one sample last at least min_seconds (fn warmed up)."""
    fn()
    loops = 1
    while True:
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        if time.perf_counter() - start >= min_seconds or loops >= 1 << 20:
            return loops
        loops *= 4


def balanced_orders(n: int) -> list[list[int]]:
    """Orders of n items in which every item directly follows every other
    one equally often (a Williams design: n orders for even n, 2n for odd).
    A plain rotation of one order is not enough: it keeps the cyclic
    neighbours, so each item would still nearly always run right after the
    same other one."""
    first = [0]
    low, high = 1, n - 1
    while len(first) < n:
        first.append(low)
        low += 1
        if len(first) < n:
            first.append(high)
            high -= 1
    orders = [[(k + i) % n for k in first] for i in range(n)]
    if n % 2:
        orders += [order[::-1] for order in orders]
    return orders


def sample_times(fns: dict[str, Callable[[], Any]], repeat: int, min_seconds: float = 0.05) -> dict[str, list[float]]:
    """Samples of seconds per call of each function. Samples are taken in turns
    (one of each function per round), so that a drift of the machine's speed
    during the run (frequency, other load, heap growth) falls on all of them
    alike. What one implementation leaves behind slows the next one (arro3's
    stream read leaves the allocator in a state that costs the next polars
    read 20%), so each sample is preceded by one untimed call of the same
    function, and the rounds follow balanced orders (every function follows
    every other equally often). Short calls are looped so each sample lasts
    min_seconds. At least `repeat` samples are taken, rounded up to whole
    sets of orders."""
    loops = {name: _loops_for(fn, min_seconds) for name, fn in fns.items()}
    samples: dict[str, list[float]] = {name: [] for name in fns}
    names = list(fns)
    orders = balanced_orders(len(names))
    rounds = -(-repeat // len(orders)) * len(orders)
    for round_ in range(rounds):
        for name in (names[i] for i in orders[round_ % len(orders)]):
            fn = fns[name]
            n = loops[name]
            fn()  # settles what the previous function left behind
            start = time.perf_counter()
            for _ in range(n):
                fn()
            samples[name].append((time.perf_counter() - start) / n)
    return samples


def median_times(fns: dict[str, Callable[[], Any]], repeat: int, min_seconds: float = 0.05) -> dict[str, float]:
    """Median seconds per call of each function (see sample_times)."""
    return {name: statistics.median(v) for name, v in sample_times(fns, repeat, min_seconds).items()}


def ratio_to_fastest(
    own: list[float], peers: list[list[float]], level: float = 0.95, resamples: int = 2000
) -> tuple[float, float, float, str]:
    """godevarrow's median time over the fastest peer's median, with a
    bootstrap percentile interval and a verdict: "faster" or "slower" when
    the whole interval is below or above 1, "tie" when it holds 1.

    The interval matters most where the work is the same by construction
    (the stream rows): there the ratio's spread is the machine's, and the
    minimum over several peers' medians is biased low (the fastest of three
    equal runners looks faster than any one of them), so a point estimate
    alone reads above 1 more often than not. Each resample recomputes the
    minimum over the peers, so the interval carries that selection too.

    Samples of equal count are taken as sample_times takes them: the k-th of
    each in the same round, moments apart (this virtual machine's speed
    swings by up to 2x, in phases of a tenth of a second or more). The
    resampling then draws whole rounds, the same rounds for every list (a
    paired bootstrap), so that what a round's speed did to all of them
    stays out of the ratio's spread, as far as the round lay within one
    phase; lists of unequal counts are drawn apart. Seeded: the same
    samples give the same interval."""
    ratio = statistics.median(own) / min(statistics.median(p) for p in peers)
    rng = random.Random(0)
    lists = [own, *peers]
    paired = len({len(v) for v in lists}) == 1

    def resampled_ratio() -> float:
        if paired:
            rounds = rng.choices(range(len(own)), k=len(own))
            medians = [statistics.median(v[k] for k in rounds) for v in lists]
        else:
            medians = [statistics.median(rng.choices(v, k=len(v))) for v in lists]
        return medians[0] / min(medians[1:])

    ratios = sorted(resampled_ratio() for _ in range(resamples))
    tail = (1 - level) / 2
    low, high = ratios[int(tail * resamples)], ratios[int((1 - tail) * resamples) - 1]
    verdict = "faster" if high < 1 else "slower" if low > 1 else "tie"
    return ratio, low, high, verdict


def median_time(fn: Callable[[], Any], repeat: int, min_seconds: float = 0.05) -> float:
    """Median seconds per call of one function (see sample_times)."""
    return median_times({"fn": fn}, repeat, min_seconds)["fn"]


def fmt(seconds: Optional[float]) -> str:
    if seconds is None:
        return "n/a"
    if seconds < 1e-6:
        return f"{seconds * 1e9:.0f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def rows(args: argparse.Namespace) -> list[tuple[str, str, Callable[[], Any]]]:
    # each built when a row first needs it (--profile builds its own row's only)
    small = functools.cache(lambda: pa.array(np.arange(1_000, dtype=np.int64)))
    large = functools.cache(lambda: pa.array(np.arange(args.rows_large, dtype=np.int64)))
    wide = functools.cache(
        lambda: pa.record_batch({f"c{i}": pa.array(np.arange(10, dtype=np.int64)) for i in range(1000)})
    )
    batch = functools.cache(lambda: pa.record_batch({"x": pa.array(np.arange(10, dtype=np.int64))}))
    mixed = functools.cache(
        lambda: pa.record_batch(
            {
                "i": pa.array([i if i % 7 else None for i in range(1_000)], pa.int64()),
                "s": pa.array([f"value {i}" for i in range(1_000)]),
                "f": pa.array(np.linspace(0, 1, 1_000)),
            }
        )
    )
    n_batches = args.batches

    def source() -> pa.RecordBatchReader:
        return pa.RecordBatchReader.from_batches(batch().schema, [batch()] * n_batches)

    return [
        ("round trip, 1 int64 column, 10^3 rows", "array", small),
        (f"round trip, 1 int64 column, {args.rows_large:.0e} rows", "array", large),
        ("round trip, 1,000-column batch", "batch", wide),
        ("export only, 1 int64 column", "export", small),
        ("export only, 1,000-column batch", "export", wide),
        ("import only (pyarrow's export included), 1 int64 column", "import", small),
        ("import only (pyarrow's export included), 1,000-column batch", "import", wide),
        (f"stream of {n_batches:,} small batches, read by pyarrow (per stream)", "stream", source),
        (f"stream of {n_batches:,} small batches, read by polars (per stream)", "polars", source),
        ("to_pylist, 1 int64 column, 10^3 rows", "values", small),
        ("to_pylist, 10^3 rows of int64 (with nulls), string and double (rows as dicts)", "values", mixed),
    ]


def job(
    impls: dict[str, dict[str, Optional[Impl]]], name: str, kind: str, make: Callable[[], Any]
) -> Optional[Callable[[], Any]]:
    """One call of a row's job by one implementation (None: it has none)."""
    fn = impls.get(name, {}).get(kind)
    if fn is None:
        return None
    if kind in ("stream", "polars"):
        # a stream can be read once: build a fresh one per call
        def call() -> None:
            out = fn(make())
            if kind == "stream":
                out.read_all()

        return call
    if kind == "values":
        held = impls[name]["values_of"](make())
        return None if held is None else functools.partial(fn, held)
    hold = impls[name]["hold"] if kind == "export" else None
    return functools.partial(fn, hold(make()) if hold else make())


def profile(args: argparse.Namespace, impls: dict[str, dict[str, Optional[Impl]]]) -> int:
    """Repeats one row's job by one implementation for --seconds, for a
    profiler to watch: `perf record python benchmarks/bench.py --profile 6`
    (`make profile ROW=6`). Without a row number, lists the rows."""
    table = rows(args)
    if not 0 <= args.profile < len(table):
        for i, (label, _, _) in enumerate(table):
            print(f"{i}: {label}")
        return 0 if args.profile == -1 else 2
    label, kind, make = table[args.profile]
    call = job(impls, args.impl, kind, make)
    if call is None:
        print(f"{args.impl} has no job {label!r}", file=sys.stderr)
        return 2
    calls, deadline = 0, time.perf_counter() + args.seconds
    while time.perf_counter() < deadline:
        call()
        calls += 1
    print(f"{label}, {args.impl}: {calls} calls in {args.seconds:g} s")
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, few repetitions")
    parser.add_argument("--repeat", type=int, default=None, help="samples per cell (median reported)")
    parser.add_argument("--rows-large", type=int, default=None, help="rows of the large array (default 10^8)")
    parser.add_argument("--out", help="also write a Markdown report here")
    parser.add_argument(
        "--device-only",
        action="store_true",
        help="only the device sections (what the GPU kit runs: no peers, no memory or reading rows)",
    )
    parser.add_argument(
        "--profile",
        type=int,
        nargs="?",
        const=-1,
        metavar="ROW",
        help="repeat one row's job for a profiler (no ROW: list them)",
    )
    parser.add_argument("--impl", default="godevarrow", help="the implementation --profile runs")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long --profile runs")
    parser.add_argument("--memory-worker", metavar="IMPL", help=argparse.SUPPRESS)
    parser.add_argument("--memory-bytes", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--memory-trips", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--go-call-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--pair-worker", metavar="KIND", help=argparse.SUPPRESS)
    parser.add_argument("--pair-rows", type=int, default=20_000, help=argparse.SUPPRESS)
    parser.add_argument("--equality", action="store_true", help="only the equality section")
    args = parser.parse_args(argv)
    costed_fake_by_default()
    if args.memory_worker:
        return memory_worker(args.memory_worker, args.memory_bytes, args.memory_trips)
    if args.go_call_worker:
        return go_call_worker()
    args.repeat = args.repeat or (4 if args.quick else 16)
    if args.pair_worker:
        return pair_worker(args.pair_worker, args.pair_rows, args.repeat)
    if args.equality:
        print(equality_section(args))
        return 0
    args.rows_large = args.rows_large or (10**6 if args.quick else 10**8)
    args.batches = 1_000 if args.quick else 100_000
    args.reading_raw = []

    if args.device_only:
        return device_only(args, argv)
    impls = _peers()
    if args.profile is not None:
        return profile(args, impls)
    names = ["godevarrow"] + [n for n in ("pyarrow", "nanoarrow", "arro3") if n in impls]
    table: list[list[str]] = []
    raw: list[tuple[str, dict[str, Optional[float]]]] = []
    for label, kind, make in rows(args):
        calls = {name: call for name in names if (call := job(impls, name, kind, make)) is not None}
        if kind in ("stream", "polars"):
            # one call per sample; a whole stream read is long and the
            # machine's noise large against it: three rounds per order
            # (all the 10-minute budget allows)
            samples = sample_times(calls, 3 * len(calls), min_seconds=0)
        else:
            # many short samples: this machine's speed changes for seconds
            # at a time, and many interleaved rounds spread those spells
            # over all implementations alike
            samples = sample_times(calls, args.repeat, min_seconds=0.02)
        cells: dict[str, Optional[float]] = {
            name: statistics.median(samples[name]) if name in samples else None for name in names
        }
        peers = [v for k, v in samples.items() if k != "godevarrow"]
        if peers and "godevarrow" in samples:
            ratio, low, high, verdict = ratio_to_fastest(samples["godevarrow"], peers)
            compared = [f"{ratio:.2f}x", f"{low:.2f}-{high:.2f}", verdict]
        else:
            compared = ["n/a", "n/a", "n/a"]
        table.append([label] + [fmt(cells[n]) for n in names] + compared)
        raw.append((label, dict(cells)))
        print(" | ".join(table[-1]), flush=True)

    header = ["job"] + names + ["godevarrow / fastest peer", "95% interval", "verdict"]
    machine = machine_description(impls)
    text = render(header, table, machine, argv)
    text += memory_section(args, names)
    text += reading_section(args)
    text += equality_section(args)
    text += device_section(args)
    text += device_jobs_section(args)
    text += go_functions_section(args)
    print()
    print(text)
    if args.out:
        png = os.path.splitext(args.out)[0] + ".png"
        # the reading rows too; each compares godevarrow with its own reference
        reading: list[tuple[str, dict[str, Optional[float]]]] = getattr(args, "reading_raw", [])
        series = names + sorted({k for _, cells in reading for k in cells} - set(names))
        if chart(raw + reading, series, png):
            text += f"\n![godevarrow beside its peers]({os.path.basename(png)})\n"
        with open(args.out, "w") as f:
            f.write(text)
    return 0


def device_only(args: argparse.Namespace, argv: Optional[list[str]]) -> int:
    """The device sections alone, with the machine and the command line."""
    cpu = platform.processor() or platform.machine()
    text = "\n".join(
        [
            "# godevarrow device benchmarks",
            "",
            f"{datetime.date.today().isoformat()}, {platform.system()} {platform.machine()} ({cpu}),",
            f"{os.cpu_count()} CPUs, Python {platform.python_version()}, pyarrow {pa.__version__},"
            f" numpy {np.__version__}.",
            f"Command: `python benchmarks/bench.py {' '.join(argv if argv is not None else sys.argv[1:])}`.",
            "",
        ]
    )
    text += device_section(args)
    text += device_jobs_section(args)
    print()
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0


def machine_description(impls: dict[str, Any]) -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    versions = [f"Python {platform.python_version()}", f"pyarrow {pa.__version__}"]
    for mod in ("godevarrow", "nanoarrow", "arro3.core"):
        try:
            m = __import__(mod, fromlist=["_"])
            versions.append(f"{mod} {getattr(m, '__version__', '?')}")
        except ImportError:
            pass
    blas = os.environ.get("OPENBLAS_NUM_THREADS")
    threads = f"; OPENBLAS_NUM_THREADS={blas}" if blas else ""
    return f"{cpu}, {os.cpu_count()} cores; " + ", ".join(versions) + threads


def markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def render(header: list[str], table: list[list[str]], machine: str, argv: Optional[list[str]]) -> str:
    lines = [
        "# godevarrow benchmarks",
        "",
        f"Run {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC on {machine}.",
        f"Command: `python benchmarks/bench.py {' '.join(argv or sys.argv[1:])}`. Medians; lower is better.",
        "",
        "Every column does the same job. A round trip is pyarrow -> X -> pyarrow: pyarrow exports, X imports,",
        "X exports, pyarrow imports (two exchanges; for X = pyarrow both are pyarrow's own). Each consumer uses",
        "the protocol it prefers: pyarrow the device protocols where X offers them (godevarrow), the plain ones",
        "otherwise; godevarrow the device protocols, except that it asks pyarrow's own objects for the plain one",
        '(docs/design.md, "pyarrow is asked for the plain protocol first") and, for a batch whose flat schema',
        'equals one it has just held, for the arrays alone ("pyarrow\'s schema, exported once"; the import',
        "rows repeat one batch, so they measure that; a schema met for the first time takes the full path);",
        "nanoarrow and arro3 the plain ones.",
        "Export-only drops the capsules unconsumed (which releases them); import-only includes",
        "pyarrow's export. The implementations take turns, in balanced orders (each follows each other",
        "equally often), and every sample follows an untimed call of its own (`sample_times`).",
        "The last three columns are godevarrow's median over the fastest peer's, a 95% bootstrap interval",
        "of that ratio (each resample draws whole rounds, the same for every implementation, and picks its",
        "fastest peer anew), and the verdict: faster or slower when",
        "the whole interval is below or above 1, a tie when it holds 1 (`ratio_to_fastest`). The stream rows",
        "are ties by construction: godevarrow and nanoarrow hand pyarrow's stream over unchanged, so each",
        "batch costs pyarrow's export and the consumer's import whoever passes it on; their ratio is the",
        "machine's noise, and against the fastest of three equal peers it reads above 1 more often than not.",
        "Why godevarrow costs what it costs, and what was done about it: `docs/performance.md`;",
        'the fast paths themselves: `docs/design.md`, "The fixed cost of an exchange".',
        "",
    ]
    lines += markdown_table(header, table)
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------ Go functions

GO_EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "go_functions", "filters")


def go_call_worker() -> int:
    """In a process that runs the build of examples/go_functions (build-ext):
    samples of a no-op Go call (filters.passthrough) and of each candidate
    pyarrow.compute call that takes and returns the same batch. Prints one
    JSON line: {row: {name: samples}}."""
    import json

    import godevarrow as gda
    import pyarrow.compute as pc

    out: dict[str, dict[str, list[float]]] = {}
    for ncols in (1, 1000):
        batch = pa.record_batch({f"c{i}": pa.array(np.arange(1000, dtype=np.int64)) for i in range(ncols)})
        held = gda.record_batch(batch)
        keep = pa.array(np.ones(1000, dtype=bool))
        everything = pa.array(np.arange(1000, dtype=np.int64))
        passthrough = gda.go.passthrough  # (the worker runs the build with it)
        fns = {
            "godevarrow batch": functools.partial(passthrough, held),
            "pyarrow batch": functools.partial(passthrough, batch),
            "pc.drop_null": functools.partial(pc.drop_null, batch),
            "pc.filter": functools.partial(pc.filter, batch, keep),
            "pc.take": functools.partial(pc.take, batch, everything),
        }
        out[str(ncols)] = sample_times(fns, 24, min_seconds=0.02)
    print(json.dumps(out))
    return 0


def go_functions_section(args: argparse.Namespace) -> str:
    """The call overhead of a Go function (pyfunc, built in with build-ext):
    a no-op taking and returning a batch, beside the cheapest pyarrow.compute
    call that takes and returns the same batch. Needs Go (the build)."""
    import json
    import shutil
    import subprocess
    import tempfile

    if shutil.which("go") is None:
        return "\n## Go functions\n\nNot measured: building the example needs Go on PATH.\n"
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(
            [sys.executable, "-m", "godevarrow", "build-ext", "-o", out, GO_EXAMPLE],
            check=True,
            capture_output=True,
        )
        env = {**os.environ, "GODEVARROW_EXTENSION": os.path.join(out, "filters", "_godevarrow.abi3.so")}
        done = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--go-call-worker"],
            check=True,
            capture_output=True,
            text=True,
            env=env,
        )
    samples = json.loads(done.stdout.strip().splitlines()[-1])
    table = []
    for ncols, fns in samples.items():
        cheapest = min((k for k in fns if k.startswith("pc.")), key=lambda k: statistics.median(fns[k]))
        for given in ("godevarrow batch", "pyarrow batch"):
            ratio, low, high, verdict = ratio_to_fastest(fns[given], [fns[cheapest]])
            table.append(
                [
                    f"no-op Go call, {ncols}-column batch, a {given} in",
                    fmt(statistics.median(fns[given])),
                    f"{fmt(statistics.median(fns[cheapest]))} ({cheapest})",
                    f"{ratio:.2f}x",
                    f"{low:.2f}-{high:.2f}",
                    verdict,
                ]
            )
    lines = [
        "",
        "## Go functions",
        "",
        "A Go function registered with `pyfunc.Register` and built in with `python -m godevarrow build-ext`",
        "(`examples/go_functions`): `passthrough` takes a batch and returns it, so the time is the call's own",
        "cost (arguments converted, the call made without the GIL, the result wrapped). Beside it, the cheapest",
        "`pyarrow.compute` call that takes and returns the same batch (1,000 int64 rows per column), chosen in",
        "the same run among `drop_null`, `filter` (all rows) and `take` (all rows). With a godevarrow batch the",
        "argument is already imported; with a pyarrow batch the time includes pyarrow's export and godevarrow's",
        "import of it, which `pyarrow.compute` does not pay.",
        "",
    ]
    lines += markdown_table(
        ["job", "godevarrow", "cheapest pyarrow.compute", "ratio", "95% interval", "verdict"], table
    )
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------- devices


def hundred_columns() -> pa.RecordBatch:
    """The batch of the device import row: 100 columns of 1,000 rows, a third
    each int64, float64 and strings."""
    cols = {}
    for i in range(100):
        kind = i % 3
        if kind == 0:
            cols[f"c{i}"] = pa.array(np.arange(1000, dtype=np.int64))
        elif kind == 1:
            cols[f"c{i}"] = pa.array(np.arange(1000, dtype=np.float64))
        else:
            cols[f"c{i}"] = pa.array([f"s{j}" for j in range(1000)])
    return pa.record_batch(cols)


def costed_fake_by_default() -> None:
    """Where the CUDA driver is the test suite's fake (no GPU here), the device
    rows run on its costed mode (FAKECUDA_COSTS=h200: each driver call costs
    what an H200 charges, docs/cuda.md), so that they predict hardware; an
    explicit FAKECUDA_COSTS (0: free) wins. The fake reads the variable when
    it is loaded, which is after this."""
    if "fakecuda" in os.path.basename(os.environ.get("GODEVARROW_LIBCUDA", "")):
        os.environ.setdefault("FAKECUDA_COSTS", "h200")
        # freed device addresses are handed out again, as a real allocator
        # does, so that the large copies fit the fake's 2 GiB per device
        os.environ.setdefault("FAKECUDA_REUSE_ADDRESSES", "1")


def _cuda_or_why_not(rows: str) -> tuple[Any, str]:
    """godevarrow, when it has a CUDA device for the rows; else None and the
    text that says why they were skipped (printed too)."""
    try:
        import godevarrow as gda
    except ImportError:
        return None, ""
    ok, count, _library, message = gda.cuda_status()
    if not ok or count == 0:
        line = f"{rows} skipped: {message or 'no CUDA device'}"
        print(line)
        return None, f"\n{line}\n"
    return gda, ""


def device_section(args: argparse.Namespace) -> str:
    """Device rows: copy bandwidth against a plain memcpy of the same bytes in
    the same run, and the import cost of a 100-column CUDA batch against the
    same batch on the CPU. Against the fake driver (no GPU here) the copies
    are host memcpys through the driver's queues, so the ratio measures
    godevarrow's overhead per copy, not PCIe."""
    gda, skipped = _cuda_or_why_not("device rows")
    if gda is None:
        return skipped
    _, count, library, _ = gda.cuda_status()
    import ctypes

    rows_out: list[list[str]] = []
    costed = "fake" in os.path.basename(library) and ctypes.CDLL(library).fakecuda_costs_enabled() == 1
    # copy rows against a host memcpy: on the costed fake a wall clock times
    # the H200's charges and the fake's own memmove and page faults, so there
    # the large copies are measured in the next section (Device jobs), against
    # the driver's copies, on the model's clock
    if not costed:
        # the fake driver never reuses device addresses (2 GiB per device for the
        # whole run), so each copy is timed a few times, one call per sample
        nbytes = (16 if args.quick else 64) << 20
        values = pa.array(np.arange(nbytes // 8, dtype=np.int64))
        host = gda.array(values)
        src = np.ones(nbytes, dtype=np.uint8)

        def alloc_and_memcpy() -> None:
            # to_device allocates its destination (fresh pages fault in as they
            # are written), so the reference allocates too
            dst = np.empty(nbytes, dtype=np.uint8)
            ctypes.memmove(dst.ctypes.data, src.ctypes.data, nbytes)

        warm = np.empty(nbytes, dtype=np.uint8)

        def memcpy_warm() -> None:
            ctypes.memmove(warm.ctypes.data, src.ctypes.data, nbytes)

        # to_device returns after its stream is synchronized: the copy is complete
        base = median_time(alloc_and_memcpy, args.repeat)
        warm_t = median_time(memcpy_warm, args.repeat)
        driver = _raw_driver(library, nbytes, src)
        on_device = host.to_device("cuda:0")
        jobs: list[tuple[str, Callable[[], Any], Optional[Callable[[], Any]]]] = [
            ("copy host -> cuda:0", lambda: host.to_device("cuda:0"), driver and driver[0]),
            ("copy cuda:0 -> host", lambda: on_device.to_device("cpu"), driver and driver[1]),
        ]
        for label, fn, raw in jobs:
            t = median_time(fn, 5, min_seconds=0)
            gbps, ref = nbytes / t / 1e9, nbytes / base / 1e9
            raw_note = ""
            if raw is not None:
                raw_gbps = nbytes / median_time(raw, 5, min_seconds=0) / 1e9
                raw_note = f"; the driver alone (alloc+copy+free) {raw_gbps:.2f} GB/s = {gbps / raw_gbps:.2f}x"
            rows_out.append(
                [
                    f"{label}, {nbytes >> 20} MiB",
                    f"{gbps:.2f} GB/s",
                    f"malloc+memcpy {ref:.2f} GB/s (warm pages {nbytes / warm_t / 1e9:.2f}){raw_note}",
                    f"{gbps / ref:.2f}",
                    ">= 0.80",
                ]
            )
            print(" | ".join(rows_out[-1]), flush=True)

    cpu_batch = gda.record_batch(hundred_columns())
    cuda_batch = cpu_batch.to_device("cuda:0")

    class Fresh:
        def __init__(self, g: Any) -> None:
            self.g = g

        def __arrow_c_device_array__(self, requested_schema: Any = None, **kwargs: Any) -> Any:
            return self.g.__arrow_c_device_array__()

    # Both producers are godevarrow batches held from an import (the CPU one
    # from pyarrow, the CUDA one from a device copy), so each export is a copy
    # of the producer's tree in C; the job timed is the consumer's import
    # alone (and the release when it is dropped), of pairs exported before.
    cuda_held = gda.record_batch(Fresh(cuda_batch))
    samples = _import_samples(gda, {"cpu": cpu_batch, "cuda": cuda_held}, args.repeat)
    ratio, low, high, verdict = ratio_to_fastest(samples["cuda"], [samples["cpu"]])
    t_cpu, t_cuda = statistics.median(samples["cpu"]), statistics.median(samples["cuda"])
    # the Go import (what a CUDA import took before it could be held) of the same CPU batch
    from godevarrow import _godevarrow as lib

    t_cpu_go = median_time(lambda: lib.import_array(*cpu_batch.__arrow_c_device_array__(), True), args.repeat)
    rows_out.append(
        [
            "import of a 100-column batch (34 string columns)",
            f"CUDA {fmt(t_cuda)}",
            f"CPU {fmt(t_cpu)}; CPU through the Go import {fmt(t_cpu_go)} (export included)",
            f"{ratio:.2f} ({low:.2f}-{high:.2f}, {'met' if high <= 2 else 'missed'})",
            "<= 2.00",
        ]
    )
    print(" | ".join(rows_out[-1]), flush=True)
    header = ["device job", "godevarrow", "reference (same run)", "ratio", "target"]
    lines = [
        "",
        f"## Devices ({count} CUDA device(s) via `{os.path.basename(library)}`)",
        "",
    ]
    if costed:
        lines += [
            "**Costed fake (H200 table).** These rows ran on the test suite's fake CUDA driver with",
            "`FAKECUDA_COSTS=h200`, not on a GPU: each driver call busy-waits for what an NVIDIA H200 charges",
            "(the table in docs/cuda.md), pageable copies are synchronous at the pageable bandwidths and pinned",
            "ones asynchronous at the link's 55.2 GB/s. So the per-call costs here predict the GPU's; a large",
            "copy's wall clock does not (the fake still moves its bytes with this host's memmove, and faults",
            "its device memory in): the large copies are in the next section, on the model's clock.",
            "",
        ]
    elif "fake" in os.path.basename(library):
        lines += [
            "These rows ran on the test suite's fake CUDA driver, not a GPU: its device memory is host memory",
            "and its copies are `memcpy` calls behind the driver API's queues, events and checks. So a row here",
            "measures what godevarrow adds around each driver call, against the same work without those calls,",
            "and a missed target means that overhead is large next to a host `memcpy` — which takes nanoseconds",
            "where a real transfer over PCIe takes microseconds. What these rows say about a GPU: nothing about",
            "bandwidth, an upper bound on godevarrow's own cost per call. `make bench` on a machine with a GPU",
            "measures the real driver.",
            "",
        ]
    lines += markdown_table(header, rows_out)
    return "\n".join(lines) + "\n"


def _import_samples(gda: Any, sources: dict[str, Any], repeat: int, pairs: int = 200) -> dict[str, list[float]]:
    """Seconds per import of each source's batch: per sample, `pairs` exports
    made beforehand are imported (and dropped, which releases them) in a
    timed loop; the sources take turns, sample by sample."""

    class Pair:
        __slots__ = ("pair",)

        def __init__(self, pair: Any) -> None:
            self.pair = pair

        def __arrow_c_device_array__(self, requested_schema: Any = None, **kwargs: Any) -> Any:
            return self.pair

    samples: dict[str, list[float]] = {name: [] for name in sources}
    names = list(sources)
    orders = balanced_orders(len(names))
    rounds = -(-max(repeat, 7) // len(orders)) * len(orders)
    for round_ in range(rounds + len(orders)):
        for name in (names[i] for i in orders[round_ % len(orders)]):
            offers = [Pair(sources[name].__arrow_c_device_array__()) for _ in range(pairs)]
            start = time.perf_counter()
            for offer in offers:
                gda.record_batch(offer)
            elapsed = (time.perf_counter() - start) / pairs
            if round_ >= len(orders):  # the first set of rounds warms up
                samples[name].append(elapsed)
            del offers
    return samples


def _known_null_counts_row(gda: Any, lib: Any, library: str, repeat: int) -> list[str]:
    """What an export for cuDF pays when a producer left the null counts
    unknown (libcudf copies the count verbatim): counting them on the host
    needs the validity bits, fetched from the device in one batched copy.
    The batch: 100 int64 columns of 1,000 values, every seventh null, on
    cuda:0, sliced (a slice's counts are unknown). The reference is the CUDA
    import of the same batch; the device-to-host traffic per call comes from
    the fake driver's counters (a real driver keeps none)."""
    import ctypes

    column = pa.array([None if j % 7 == 0 else j for j in range(1000)], type=pa.int64())
    batch = gda.record_batch(pa.record_batch({f"c{i}": column for i in range(100)})).to_device("cuda:0")
    unknown = batch.slice(1, len(batch) - 2)

    class Fresh:
        def __arrow_c_device_array__(self, requested_schema: Any = None, **kwargs: Any) -> Any:
            return batch.__arrow_c_device_array__()

    samples = sample_times(
        {"import": lambda: gda.record_batch(Fresh()), "counts": lambda: lib.array_known_null_counts(unknown._h)},
        repeat,
        min_seconds=0.02,
    )
    ratio, low, high, _ = ratio_to_fastest(samples["counts"], [samples["import"]])
    t_import, t = statistics.median(samples["import"]), statistics.median(samples["counts"])
    traffic = "traffic not counted by this driver"
    try:
        fake = ctypes.CDLL(library)
        for fn in (fake.fakecuda_bytes_copied, fake.fakecuda_copy_calls, fake.fakecuda_sync_count):
            fn.restype = ctypes.c_longlong
        dtoh = 2  # the fake's device-to-host direction
        before = fake.fakecuda_copy_calls(dtoh), fake.fakecuda_bytes_copied(dtoh), fake.fakecuda_sync_count()
        lib.array_known_null_counts(unknown._h)
        after = fake.fakecuda_copy_calls(dtoh), fake.fakecuda_bytes_copied(dtoh), fake.fakecuda_sync_count()
        calls, nbytes, syncs = (a - b for a, b in zip(after, before))
        traffic = f"device to host per call: {nbytes} bytes in {calls} copies, {syncs} synchronization(s)"
    except (OSError, AttributeError):
        pass
    return [
        "null counts for cuDF of a sliced 100-column batch (counts unknown)",
        f"CUDA {fmt(t)}",
        f"the CUDA import of the batch {fmt(t_import)}; {traffic}",
        f"{ratio:.2f} ({low:.2f}-{high:.2f}, {'met' if high <= 2.0 else 'missed'})",
        "<= 2.00",
    ]


# ------------------------------------------------------- device jobs by row


def _cupy_or_reason() -> tuple[Any, str]:
    """CuPy when it can use a device, else None and why not."""
    try:
        import cupy
    except ImportError:
        return None, "CuPy is not installed"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None, "CuPy sees no CUDA device"
    except Exception as e:  # CuPy's CUDARuntimeError and friends: report, never fail the bench
        return None, f"CuPy cannot use a device ({type(e).__name__}: {e})"
    return cupy, ""


def _torch_or_reason() -> tuple[Any, str]:
    """PyTorch when it has CUDA, else None and why not."""
    try:
        import torch
    except ImportError:
        return None, "PyTorch is not installed"
    if not torch.cuda.is_available():
        return None, "PyTorch has no CUDA device"
    return torch, ""


def _cuda_driver(library: str) -> Optional[Any]:
    """The CUDA driver godevarrow uses, through ctypes, with device 0's
    primary context current on the calling thread (None when it cannot be had)."""
    import ctypes

    try:
        lib = ctypes.CDLL(library)
    except OSError:
        return None
    ctx = ctypes.c_void_p()
    if lib.cuInit(0) or lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) or lib.cuCtxSetCurrent(ctx):
        return None
    lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_ulonglong), ctypes.c_size_t]
    lib.cuMemFree_v2.argtypes = [ctypes.c_ulonglong]
    lib.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_size_t]
    lib.cuMemcpyHtoD_v2.argtypes = [ctypes.c_ulonglong, ctypes.c_void_p, ctypes.c_size_t]
    lib.cuMemAllocHost_v2.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
    lib.cuMemFreeHost.argtypes = [ctypes.c_void_p]
    lib.godevarrow_bench_ctx = ctx
    return lib


def _overrun_counter(library: str) -> Callable[[], int]:
    """The fake driver's fakecuda_overrun_ns (ns its own memmove ran past its
    cost model), or a counter that stays 0 on a real driver."""
    import ctypes

    try:
        fn = ctypes.CDLL(library).fakecuda_overrun_ns
    except (OSError, AttributeError):
        return lambda: 0
    fn.restype = ctypes.c_longlong
    return lambda: int(fn())


def _paired_row(
    label: str, own: Callable[[], Any], ref: Callable[[], Any], ref_label: str, target: float, repeat: int
) -> list[str]:
    """A row comparing `own` with `ref`, sampled in turns (sample_times)."""
    samples = sample_times({"own": own, "ref": ref}, repeat, min_seconds=0.02)
    ratio, low, high, _ = ratio_to_fastest(samples["own"], [samples["ref"]])
    t_own, t_ref = statistics.median(samples["own"]), statistics.median(samples["ref"])
    met = "met" if high <= target else "missed"
    return [
        label,
        fmt(t_own),
        f"{ref_label} {fmt(t_ref)}",
        f"{ratio:.2f} ({low:.2f}-{high:.2f}, {met})",
        f"<= {target:.2f}",
    ]


def _skipped_row(label: str, why: str, target: str) -> list[str]:
    return [label, "skipped", why, "n/a", target]


def device_jobs_section(args: argparse.Namespace) -> str:
    """One row per job of the table that docs/benchmarks.md's device section
    keeps for a real GPU (import of each batch shape, the DLPack and CUDA
    Array Interface exchanges with CuPy and PyTorch, small and large copies),
    each against its reference measured in the same run. Rows that need CuPy
    or PyTorch say why they were skipped where those cannot use a device (on
    the fake driver CuPy has no device: it loads the real runtime)."""
    gda, skipped = _cuda_or_why_not("device job rows")
    if gda is None:
        return skipped
    library = gda.cuda_status()[2]
    fake = "fake" in os.path.basename(library)
    out: list[list[str]] = []

    def emit(row: list[str]) -> None:
        out.append(row)
        print(" | ".join(row), flush=True)

    # imports: each batch's CUDA import against its CPU import (the same
    # pairs-exported-beforehand method as the device section's import row)
    n = 1000
    ints = pa.array(np.arange(n, dtype=np.int64))
    with_nulls = pa.array([None if j % 7 == 0 else j for j in range(n)], type=pa.int64())
    strings = pa.array([f"s{j}" for j in range(n)])
    shapes = [
        ("1 int64 column", {"c0": ints}, None),
        ("100 int64 columns", {f"c{i}": ints for i in range(100)}, None),
        ("100 int64 columns with nulls", {f"c{i}": with_nulls for i in range(100)}, None),
        ("1 string column", {"c0": strings}, None),
        ("100 string columns", {f"c{i}": strings for i in range(100)}, 1.5),
        ("100 columns, 34 of them strings (the bench row)", None, 1.5),
    ]

    class Fresh:
        def __init__(self, g: Any) -> None:
            self.g = g

        def __arrow_c_device_array__(self, requested_schema: Any = None, **kwargs: Any) -> Any:
            return self.g.__arrow_c_device_array__()

    for label, columns, target in shapes:
        cpu = gda.record_batch(hundred_columns() if columns is None else pa.record_batch(columns))
        cuda = gda.record_batch(Fresh(cpu.to_device("cuda:0")))
        samples = _import_samples(gda, {"cpu": cpu, "cuda": cuda}, args.repeat, pairs=50)
        ratio, low, high, _ = ratio_to_fastest(samples["cuda"], [samples["cpu"]])
        verdict = "" if target is None else f", {'met' if high <= target else 'missed'}"
        emit(
            [
                f"import of a 1,000-row batch on cuda:0, {label}",
                fmt(statistics.median(samples["cuda"])),
                f"CPU import {fmt(statistics.median(samples['cpu']))}",
                f"{ratio:.2f} ({low:.2f}-{high:.2f}{verdict})",
                "(informational)" if target is None else f"<= {target:.2f}",
            ]
        )
        del cpu, cuda

    # the exchanges with CuPy and PyTorch, 1,000 int64 on cuda:0
    cupy, no_cupy = _cupy_or_reason()
    torch, no_torch = _torch_or_reason()
    dl_rows = [
        ("`gda.array(cupy_array)` (DLPack)", "<= 1.00"),
        ("`gda.array(...)` through the CUDA Array Interface only", "(informational)"),
        ("`cupy.from_dlpack(godevarrow_array)`", "<= 1.20"),
    ]
    if cupy is None:
        for label, target in dl_rows:
            emit(_skipped_row(label, no_cupy, target))
    else:
        x = cupy.arange(n, dtype=cupy.int64)
        g = gda.array(x)
        cai = type("CAIOnly", (), {"__cuda_array_interface__": x.__cuda_array_interface__})()
        ref = ("`cupy.from_dlpack(cupy_array)`", lambda: cupy.from_dlpack(x))
        emit(_paired_row(dl_rows[0][0], lambda: gda.array(x), ref[1], ref[0], 1.0, args.repeat))
        row = _paired_row(dl_rows[1][0], lambda: gda.array(cai), ref[1], ref[0], float("inf"), args.repeat)
        emit(row[:3] + [row[3].replace(", met", ""), "(informational)"])
        emit(_paired_row(dl_rows[2][0], lambda: cupy.from_dlpack(g), ref[1], ref[0], 1.2, args.repeat))
    torch_rows = [
        ("`gda.array(torch_tensor)`", "<= 1.00"),
        ("`torch.from_dlpack(godevarrow_array)`", "(informational)"),
    ]
    if torch is None:
        for label, target in torch_rows:
            emit(_skipped_row(label, no_torch, target))
    else:
        t = torch.arange(n, dtype=torch.int64, device="cuda:0")
        g_t = gda.array(t)
        emit(
            _paired_row(
                torch_rows[0][0],
                lambda: gda.array(t),
                lambda: torch.from_dlpack(t),
                "`torch.from_dlpack(tensor)`",
                1.0,
                args.repeat,
            )
        )
        row = _paired_row(
            torch_rows[1][0],
            lambda: torch.from_dlpack(g_t),
            lambda: torch.from_dlpack(t),
            "`torch.from_dlpack(tensor)`",
            float("inf"),
            args.repeat,
        )
        emit(row[:3] + [row[3].replace(", met", ""), "(informational)"])

    # small copies: against one synchronous 8-byte driver copy
    import ctypes

    drv = _cuda_driver(library)
    small_host = gda.array(pa.array(np.arange(1024, dtype=np.int64)))  # 8 KB
    small_dev = small_host.to_device("cuda:0")
    if drv is None:
        emit(_skipped_row('`to_device("cpu")` of 8 KB', "the driver could not be opened through ctypes", "<= 1.20"))
    else:
        word = ctypes.c_ulonglong()
        dptr = ctypes.c_ulonglong()
        drv.cuMemAlloc_v2(ctypes.byref(dptr), 8)

        def one_copy() -> None:
            drv.cuCtxSetCurrent(drv.godevarrow_bench_ctx)
            drv.cuMemcpyDtoH_v2(ctypes.byref(word), dptr.value, 8)

        ref_label = "one synchronous 8-byte driver copy"
        emit(
            _paired_row(
                '`to_device("cpu")` of 8 KB', lambda: small_dev.to_device("cpu"), one_copy, ref_label, 1.2, args.repeat
            )
        )
        emit(
            _paired_row(
                '`to_device("cuda:0")` of 8 KB',
                lambda: small_host.to_device("cuda:0"),
                one_copy,
                ref_label,
                1.2,
                args.repeat,
            )
        )
        drv.cuMemFree_v2(dptr.value)

    # null counts for cuDF: the bitmaps of a sliced batch fetched in one batch
    from godevarrow import _godevarrow as lib

    emit(_known_null_counts_row(gda, lib, library, args.repeat))

    # large copies: 1 GiB on a GPU, 64 MiB on the fake (sixteen staging
    # chunks: the pipeline runs; more would only time this host's memmove)
    nbytes = (64 << 20) if fake or args.quick else (1 << 30)
    size = f"{nbytes >> 20} MiB" if nbytes < (1 << 30) else "1 GiB"
    overrun = _overrun_counter(library)

    def run_once(fn: Callable[[], Any], kept: Optional[list[Any]] = None) -> tuple[float, float]:
        """Wall seconds of one call of fn, and model seconds: the wall less
        the time the fake driver's own memmove ran past its cost model (equal
        to the wall on a real driver). fn's result is released in the window,
        or appended to kept."""
        o = overrun()
        t0 = time.perf_counter()
        if kept is None:
            fn()
        else:
            kept.append(fn())
        wall = time.perf_counter() - t0
        return wall, wall - (overrun() - o) / 1e9

    def medians(runs: list[tuple[float, float]]) -> tuple[float, float]:
        return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)

    def timed(fn: Callable[[], Any], runs: int = 5) -> tuple[float, float]:
        """Median wall and model seconds of fn (run_once)."""
        return medians([run_once(fn) for _ in range(runs)])

    def fresh_rounds(fns: dict[str, Callable[[], Any]], runs: int = 5) -> dict[str, tuple[float, float]]:
        """timed() of copies into fresh memory, as a first copy is: every
        result is kept until the last run (no pool hands a copy used pages),
        and the functions take turns, so that each meets this host's memory
        in the same state (on a virtual machine, fresh pages cost more the
        more of them a run has taken)."""
        kept: list[Any] = []
        samples: dict[str, list[tuple[float, float]]] = {k: [] for k in fns}
        for _ in range(runs):
            for k, fn in fns.items():
                samples[k].append(run_once(fn, kept))
        del kept
        return {k: medians(v) for k, v in samples.items()}

    def first_touch() -> Any:
        """A new host array with a byte written per page: the first touch of
        fresh memory alone."""
        fresh = np.empty(nbytes, dtype=np.uint8)
        fresh[::4096] = 1
        return fresh

    big_host = gda.array(pa.array(np.arange(nbytes // 8, dtype=np.int64)))
    big_dev = big_host.to_device("cuda:0")
    big_dev.to_device("cpu")  # the staging chunks of a large copy made
    steady_t = timed(lambda: big_dev.to_device("cpu"))  # the pool's steady state (a loader's)
    htod_t = timed(lambda: big_host.to_device("cuda:0"))
    fresh_fns: dict[str, Callable[[], Any]] = {"own": lambda: big_dev.to_device("cpu")}
    pinned_t = pageable_put_t = None
    if drv is not None:
        pinned = ctypes.c_void_p()
        dst = ctypes.c_ulonglong()
        if not drv.cuMemAllocHost_v2(ctypes.byref(pinned), nbytes) and not drv.cuMemAlloc_v2(ctypes.byref(dst), nbytes):
            hb = np.arange(nbytes // 8, dtype=np.int64)

            def pinned_copy() -> None:
                drv.cuCtxSetCurrent(drv.godevarrow_bench_ctx)
                drv.cuMemcpyDtoH_v2(pinned.value, dst.value, nbytes)

            def fresh_copy() -> Any:  # what CuPy's .get() does: a new array, a pageable copy
                drv.cuCtxSetCurrent(drv.godevarrow_bench_ctx)
                out = np.empty(nbytes, dtype=np.uint8)
                drv.cuMemcpyDtoH_v2(out.ctypes.data, dst.value, nbytes)
                return out

            def pageable_put() -> None:  # cupy.asarray's copy, into memory allocated beforehand
                drv.cuCtxSetCurrent(drv.godevarrow_bench_ctx)
                drv.cuMemcpyHtoD_v2(dst.value, hb.ctypes.data, nbytes)

            drv.cuMemcpyHtoD_v2(dst.value, hb.ctypes.data, nbytes)  # its pages written, as big_dev's are
            pinned_t, pageable_put_t = timed(pinned_copy), timed(pageable_put)
            if cupy is None:
                fresh_fns["driver"] = fresh_copy
    xb = None
    if cupy is not None:
        xb = cupy.arange(nbytes // 8, dtype=cupy.int64)
        fresh_fns["cupy"] = xb.get
    elif fake:
        fresh_fns["touch"] = first_touch
    # the pool emptied: the large copy's staging chunks are made again in the
    # first round, as a program's first copy makes them. Every result is kept
    # to the end: three rounds of a GiB on a GPU, five of the fake's 64 MiB.
    lib.debug_release_pools()
    fresh = fresh_rounds(fresh_fns, runs=3 if nbytes >= (1 << 30) else 5)
    first_t = fresh.pop("own")
    get_ref, put_ref = ("CuPy `.get()`", None), ("`cupy.asarray`", None)
    if cupy is not None:
        hb = np.arange(nbytes // 8, dtype=np.int64)
        get_ref = ("CuPy `.get()`", fresh["cupy"])
        put_ref = ("`cupy.asarray`", timed(lambda: cupy.asarray(hb)))
        del xb, hb
    elif fake and "driver" in fresh:
        # without CuPy: what the model charges the same pageable copies. The
        # model charges the copy into fresh memory at the H200's bandwidth
        # into touched memory and subtracts the fake's own memmove, page
        # faults included: the first touch of the new pages, as this host
        # takes it, is added back (godevarrow's is in its own memcpy, which
        # the model keeps).
        wall, model = fresh["driver"]
        touched = (wall, model + fresh["touch"][0])
        get_ref = ("the driver's pageable copy into a new array (what `.get()` does)", touched)
        put_ref = ("the driver's pageable copy (what `cupy.asarray` does)", pageable_put_t)
    if drv is not None and pinned_t is not None:
        drv.cuMemFree_v2(dst.value)
        drv.cuMemFreeHost(pinned.value)

    def gbps(t: tuple[float, float]) -> tuple[float, float]:
        return nbytes / t[0] / 1e9, nbytes / t[1] / 1e9

    def bw_row(label: str, own: tuple[float, float], ref: Any, factor: float, why: str) -> list[str]:
        wall, model = gbps(own)
        own_text = f"{model:.2f} GB/s" if not fake else f"{model:.2f} GB/s model ({wall:.2f} wall)"
        if ref[1] is None:
            return [label, own_text, why, "n/a", f">= {factor:.2f}x"]
        ref_wall, ref_model = gbps(ref[1])
        ref_text = f"{ref[0]} {ref_model:.2f} GB/s" + (f" model ({ref_wall:.2f} wall)" if fake else "")
        ratio = model / ref_model
        return [
            label,
            own_text,
            ref_text,
            f"{ratio:.2f} ({'met' if ratio >= factor else 'missed'})",
            f">= {factor:.2f}x",
        ]

    link = ("the link into pinned memory", pinned_t)
    emit(bw_row(f"{size} cuda:0 -> host, repeated", steady_t, link, 0.8, "no pinned reference"))
    emit(bw_row(f"{size} cuda:0 -> host, into fresh memory (a first copy)", first_t, get_ref, 2.0, no_cupy))
    emit(bw_row(f"{size} host (pageable) -> cuda:0", htod_t, put_ref, 2.5, no_cupy))

    header = ["device job", "godevarrow", "reference (same run)", "ratio (95% interval, verdict)", "target"]
    lines = ["", f"## Device jobs, one per row of the GPU table (via `{os.path.basename(library)}`)", ""]
    lines += [
        "One row per job measured on a GPU, each against its reference in the same run; the targets are the",
        "device work's. On a machine with a GPU these rows come from the GPU kit: `make gpu-kit` (on a",
        "machine with Go) writes `build/gpu-kit/` (the x86-64 wheel, the GPU tests with the gold corpus,",
        "this bench, `run.sh`; under 20 MB). On the GPU machine, with only a CUDA driver, Python with",
        "pyarrow and numpy, and whichever of CuPy and PyTorch it has (no Go, no network), one call",
        "`OUT=<dir> bash build/gpu-kit/run.sh` installs the wheel into a venv over the machine's packages,",
        "runs the GPU tests and `bench.py --device-only`, and writes `<dir>/report.md`: the GPU, its driver,",
        "the versions, every test's outcome and these rows. A session lent a GPU through a device tool that",
        "copies the working tree runs that one call with `build/gpu-kit` carried (it is an ignored path)",
        "and `OUT` the folder the tool brings back, within a few minutes, and commits the report's rows",
        "under docs/gpu-runs/, naming the GPU; the latest run's table follows this run's below.",
        "",
    ]
    if fake:
        lines += [
            "On the fake CUDA driver: these rows measure godevarrow's own cost around each driver call, not a",
            "GPU (see the section above); the CuPy and PyTorch rows need a real device. The large copies give",
            "two figures: *wall*, this host's clock, which includes the fake's own memmove wherever it is slower",
            "than the modelled link, and *model*, the wall less that overrun (`fakecuda_overrun_ns`): the H200",
            "table's time for the driver's part, with godevarrow's own host-side memcpy as this host runs it",
            "(its threads are this host's CPUs). The verdict is the model's. Without CuPy, the references of the",
            "copy into fresh memory and of the host-to-device copy are the driver's own pageable copies, which",
            "the model charges at the H200's pageable bandwidths into touched memory; the copy into fresh memory",
            "has this host's first touch of its new pages added (measured in the same run: a byte written per",
            "page of a new array), as godevarrow's own memcpy pays it. Each copy into fresh memory is the",
            "median of five rounds in which the copies take turns, every result kept until the last so that",
            "no pool hands a copy used pages. On a virtual machine fresh pages can cost more the more a",
            "process takes (the hypervisor backs them), as on this project's: that row then measures the host",
            "as much as the copy (docs/performance.md).",
            "",
        ]
    lines += markdown_table(header, out)
    lines += gpu_run_lines()
    return "\n".join(lines) + "\n"


GPU_RUNS = pathlib.Path(__file__).resolve().parent.parent / "docs" / "gpu-runs"


def gpu_run_lines() -> list[str]:
    """The device jobs of the latest GPU kit run committed under
    docs/gpu-runs/ (a session lent a GPU writes one there), so that
    benchmarks.md shows hardware's figures beside this run's."""
    runs = sorted(GPU_RUNS.glob("*.md"))
    if not runs:
        return []
    text = runs[-1].read_text(encoding="utf-8")
    start = text.find("## Device jobs")
    if start < 0:
        return []
    end = text.find("\n## ", start + 1)
    table = text[start : end if end >= 0 else len(text)].splitlines()[1:]
    rel = runs[-1].relative_to(GPU_RUNS.parent.parent).as_posix()
    title = text.splitlines()[0].lstrip("# ")
    return [
        "",
        f"### On a GPU: {title}",
        "",
        f"From `{rel}` (the machine, the versions, what changed between the runs and the driver's",
        "call costs are there; every run is under docs/gpu-runs/). Each ratio is against a reference",
        "measured in the same run on that machine.",
        *table,
    ]


def chart(raw: list[tuple[str, dict[str, Optional[float]]]], names: list[str], path: str) -> bool:
    """A PNG: each job's time per implementation, relative to the fastest."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no chart", file=sys.stderr)
        return False
    fig, ax = plt.subplots(figsize=(9, 1 + 0.9 * len(raw)))
    height = 0.8 / len(names)
    for j, name in enumerate(names):
        ys, xs = [], []
        for i, (_, cells) in enumerate(raw):
            values = [v for v in cells.values() if v]
            if cells.get(name) and values:
                ys.append(i + j * height)
                xs.append(cells[name] / min(values))  # type: ignore[operator]
        ax.barh(ys, xs, height=height, label=name)
    ax.set_yticks([i + 0.4 - height / 2 for i in range(len(raw))])
    ax.set_yticklabels([label for label, _ in raw], fontsize=8)
    ax.invert_yaxis()
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel("time relative to the fastest implementation (lower is better)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# ------------------------------------------------------------------ memory


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def memory_worker(name: str, data_bytes: int, trips: int) -> int:
    """In a process of its own: the peak RSS growth of a round trip of a
    batch of data_bytes, and the RSS growth over `trips` round trips of a
    small array after a warm-up. Prints one JSON line."""
    import gc
    import json

    impl = _peers()[name]
    n_cols = 8
    rows = data_bytes // 8 // n_cols
    big = pa.record_batch({f"c{i}": pa.array(np.arange(rows, dtype=np.int64)) for i in range(n_cols)})
    impl["batch"](pa.record_batch({"c": pa.array(np.arange(10, dtype=np.int64))}))  # type: ignore[misc]
    gc.collect()
    base = _status_kib("VmRSS")
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets the peak (VmHWM) to the current RSS
    except OSError:
        pass
    back = impl["batch"](big)  # type: ignore[misc]
    assert back.num_rows == rows and back.column(n_cols - 1)[rows - 1].as_py() == rows - 1
    peak = max(_status_kib("VmHWM"), _status_kib("VmRSS"))
    del back
    small = pa.array(np.arange(1_000, dtype=np.int64))
    trip = impl["array"]
    for _ in range(trips):  # the Go heap and the allocators reach their steady state
        trip(small)  # type: ignore[misc]
    gc.collect()
    before = _status_kib("VmRSS")
    for _ in range(trips):
        trip(small)  # type: ignore[misc]
    gc.collect()
    after = _status_kib("VmRSS")
    print(json.dumps({"exchange_kib": peak - base, "data_kib": data_bytes // 1024, "leak_kib": after - before}))
    return 0


def memory_section(args: argparse.Namespace, names: list[str]) -> str:
    """RSS rows, each implementation in a fresh process: zero-copy exchange
    means no growth with the data, and repeated round trips must not grow."""
    import json
    import subprocess

    data_bytes = (64 << 20) if args.quick else (1 << 30)
    trips = 10_000 if args.quick else 100_000
    results: dict[str, Optional[dict[str, int]]] = {}
    for name in names:
        cmd = [sys.executable, os.path.abspath(__file__), "--memory-worker", name]
        cmd += ["--memory-bytes", str(data_bytes), "--memory-trips", str(trips)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"memory worker {name} failed: {proc.stderr.strip()[-500:]}", file=sys.stderr)
            results[name] = None
            continue
        results[name] = json.loads(proc.stdout.strip().splitlines()[-1])

    def cell(name: str, key: str) -> str:
        r = results.get(name)
        if r is None:
            return "n/a"
        if key == "exchange_kib":
            return f"{r[key] / 1024:.1f} MiB ({100 * r[key] / r['data_kib']:.2f}% of the data)"
        return f"{r[key]:,} KiB"

    size = f"{data_bytes >> 20} MiB" if data_bytes < 1 << 30 else f"{data_bytes >> 30} GiB"
    table = [
        [f"peak RSS growth, round trip of a {size} batch"] + [cell(n, "exchange_kib") for n in names] + ["< 1%"],
        [f"RSS growth over {trips:,} round trips (after warm-up)"] + [cell(n, "leak_kib") for n in names] + ["~0"],
    ]
    for row in table:
        print(" | ".join(row), flush=True)
    header = ["memory"] + names + ["target"]
    lines = [
        "",
        "## Memory (each implementation in a fresh process; RSS from /proc/self/status)",
        "",
    ]
    lines += markdown_table(header, table)
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------- streams


def _slow_stream_library() -> Optional[Any]:
    """benchmarks/slowstream.c built into build/ (None without a C compiler)."""
    import ctypes
    import shutil
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = os.path.join(root, "build", "libslowstream.so")
    src = os.path.join(root, "benchmarks", "slowstream.c")
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(src):
        cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
        if cc is None:
            return None
        os.makedirs(os.path.dirname(out), exist_ok=True)
        include = os.path.join(root, "gosrc", "include")
        subprocess.check_call([cc, "-O2", "-shared", "-fPIC", f"-I{include}", "-o", out, src])
    lib = ctypes.CDLL(out)
    lib.slowstream_wrap.argtypes = [ctypes.c_void_p, ctypes.c_long]
    lib.slowstream_wrap.restype = ctypes.c_int
    return lib


def equality_tables(rows: int, nulls: float) -> tuple[pa.Table, pa.Table]:
    """Two equal tables of five columns (int64, float64, utf8, bool,
    timestamp) in distinct buffers, so that no comparison can stop at
    "the same memory"; a fraction nulls of each column null."""
    rng = np.random.default_rng(0)
    mask = rng.random(rows) < nulls if nulls else None
    ints, floats, flags = np.arange(rows), rng.random(rows), rng.random(rows) < 0.5
    words = [str(i) for i in range(rows)]

    def build() -> pa.Table:
        return pa.table(
            {
                "i": pa.array(ints.copy(), mask=mask),
                "f": pa.array(floats.copy(), mask=mask),
                "s": pa.array(words, mask=mask),
                "b": pa.array(flags.copy(), mask=mask),
                "t": pa.array(ints.copy(), pa.timestamp("us"), mask=mask),
            }
        )

    return build(), build()


def equality_section(args: argparse.Namespace) -> str:
    """Table.equals on a 10^6 x 5 table beside pyarrow's Table.equals, each
    on its own pair of equal tables in distinct buffers; the target is
    within 1.5x of pyarrow. The tables are imported (and validated, once per
    array) before the timing, as a table that is compared more than once
    is."""
    try:
        import godevarrow as gda
    except ImportError:
        return ""
    rows = 10**5 if args.quick else 10**6
    out: list[list[str]] = []
    for label, nulls in (("no nulls", 0.0), ("10% nulls", 0.1)):
        a, b = equality_tables(rows, nulls)
        ga, gb = gda.table(a), gda.table(b)
        assert a.equals(b) and ga.equals(gb) and ga == b
        jobs = {"godevarrow": functools.partial(ga.equals, gb), "pyarrow": functools.partial(a.equals, b)}
        samples = sample_times(jobs, args.repeat)
        ratio, low, high, _ = ratio_to_fastest(samples["godevarrow"], [samples["pyarrow"]])
        out.append(
            [
                f"Table.equals, {rows:,} rows x 5 columns, {label}",
                fmt(statistics.median(samples["godevarrow"])),
                fmt(statistics.median(samples["pyarrow"])),
                f"{ratio:.2f} ({low:.2f}-{high:.2f}, {'met' if high <= 1.5 else 'missed'})",
                "<= 1.50",
            ]
        )
        print(" | ".join(out[-1]), flush=True)
    header = ["equality job", "godevarrow", "pyarrow", "ratio (95% interval)", "target"]
    lines = [
        "",
        "## Equality",
        "",
        "`Table.equals` of two equal tables held in distinct buffers (int64, float64, utf8, bool and",
        "timestamp columns), beside pyarrow's; the target is met when the whole interval is at or below it.",
        "",
    ]
    return "\n".join(lines + markdown_table(header, out)) + "\n"


def _reading_kit(n: int) -> tuple[Any, Any, Callable[..., int], Any]:
    """The reading section's producers of n one-row batches (CStream: a C++
    reader, slowed by slowstream.c when asked; ListStream: a reader over a
    Python list), its counting loop, and the slow-stream library (None
    without a C compiler)."""
    import ctypes

    batch = pa.record_batch({"x": pa.array([1], pa.int64())})
    table = pa.Table.from_batches([batch] * n)
    slow_lib = _slow_stream_library()
    pythonapi = ctypes.pythonapi
    pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
    pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

    class CStream:
        """pyarrow's C stream of the table; with delay_ns, each get_next waits that long first."""

        def __init__(self, rows: int = n, delay_ns: int = 0) -> None:
            self.table = table.slice(0, rows)
            self.delay_ns = delay_ns

        def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
            capsule = self.table.to_reader().__arrow_c_stream__(requested_schema)
            if self.delay_ns:
                pointer = pythonapi.PyCapsule_GetPointer(capsule, b"arrow_array_stream")
                if slow_lib.slowstream_wrap(pointer, self.delay_ns) != 0:
                    raise MemoryError
            return capsule

    class ListStream:
        """A reader over a Python list of the same batches: each get_next takes
        the GIL to call the list's iterator."""

        def __init__(self, rows: int = n) -> None:
            self.batches = [batch] * rows

        def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
            reader = pa.RecordBatchReader.from_batches(batch.schema, self.batches)
            return reader.__arrow_c_stream__(requested_schema)

    def count(it: Any, rows: int = n, work_s: float = 0.0) -> int:
        k = 0
        for _ in it:
            if work_s:
                end = time.perf_counter() + work_s
                while time.perf_counter() < end:
                    pass
            k += 1
        assert k == rows, k
        return k

    return CStream, ListStream, count, slow_lib


def pair_worker(kind: str, n: int, rounds: int) -> int:
    """In a fresh process: samples of the plain loop and of prefetch(8) over
    one producer kind ("cpp" or "list"), in rounds of their own. Prints one
    JSON line: {"for": samples, "prefetch": samples}."""
    import json

    import godevarrow as gda

    CStream, ListStream, count, _ = _reading_kit(n)
    producer = CStream() if kind == "cpp" else ListStream()
    samples = sample_times(
        {
            "for": lambda: count(gda.stream(producer)),
            "prefetch": lambda: count(gda.stream(producer).prefetch(8)),
        },
        rounds,
        min_seconds=0,
    )
    print(json.dumps(samples))
    return 0


# The parity rows (prefetch over fast reads against the plain loop) run in
# this many fresh processes: one process's ratio of two equal reads sits a
# few tenths of a percent to 3% from 1, the same way all through the process
# (where its memory landed), so one process cannot tell equal from slower.
PAIR_PROCESSES = 8


def pair_in_processes(kind: str, n: int, repeat: int, quick: bool) -> dict[str, list[list[float]]]:
    """The samples of pair_worker from PAIR_PROCESSES fresh processes (2 when
    quick), one after another: {"for": [samples per process], "prefetch": ...}."""
    import json
    import subprocess

    out: dict[str, list[list[float]]] = {"for": [], "prefetch": []}
    for _ in range(2 if quick else PAIR_PROCESSES):
        cmd = [sys.executable, os.path.abspath(__file__), "--pair-worker", kind, "--pair-rows", str(n)]
        cmd += ["--repeat", str(repeat)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=True)
        samples = json.loads(done.stdout.strip().splitlines()[-1])
        for k in out:
            out[k].append(samples[k])
    return out


def ratio_over_processes(
    own: list[list[float]], ref: list[list[float]], level: float = 0.95, resamples: int = 2000
) -> tuple[float, float, float, str]:
    """The geometric mean over processes of each process's ratio of medians
    (own over ref), with a bootstrap interval over the processes (whole
    processes are drawn: what one process's memory did stays in it) and a
    verdict as ratio_to_fastest's."""
    logs = [math.log(statistics.median(o) / statistics.median(r)) for o, r in zip(own, ref)]
    rng = random.Random(0)
    ratios = sorted(math.exp(statistics.fmean(rng.choices(logs, k=len(logs)))) for _ in range(resamples))
    tail = (1 - level) / 2
    low, high = ratios[int(tail * resamples)], ratios[int((1 - tail) * resamples) - 1]
    verdict = "faster" if high < 1 else "slower" if low > 1 else "tie"
    return math.exp(statistics.fmean(logs)), low, high, verdict


def reading_section(args: argparse.Namespace) -> str:
    """Reading a C stream into Python objects, batch by batch: the same job for
    every consumer, on the two kinds of producer users hand us: a C++ reader
    (pyarrow's reader of a table: get_next runs without the GIL) and a reader
    over a Python list (RecordBatchReader.from_batches: get_next takes the GIL
    to call the list's iterator, as generators, polars or DuckDB readers fed
    from Python do). The sync loop is compared with pyarrow's, nanoarrow's and
    arro3's readers; godevarrow's asyncio and prefetching reads with its own
    sync loop on both kinds, and on a producer that waits without the GIL
    before each batch (benchmarks/slowstream.c); a stream's set-up (import,
    first batch, close) with nanoarrow's."""
    import asyncio

    try:
        import godevarrow as gda
    except ImportError:
        return ""
    n = 2_000 if args.quick else 20_000
    CStream, ListStream, count, slow_lib = _reading_kit(n)

    async def acount(s: Any, rows: int) -> int:
        k = 0
        async for _ in s:
            k += 1
        assert k == rows, k
        return k

    try:
        import nanoarrow as na
    except ImportError:
        na = None
    try:
        import arro3.core as a3
    except ImportError:
        a3 = None

    # the reading rows vary most from sample to sample (one sample is one read
    # of a stream, about 20 ms): twice the samples of the other sections
    repeat = max(2 * args.repeat, 5)
    rows_out: list[list[str]] = []
    raw: list[tuple[str, dict[str, Optional[float]]]] = []

    def row(
        label: str,
        own: list[float],
        others: dict[str, list[float]],
        target: float,
        rows: int,
        versus: str = "",
        parity: bool = False,
        processes: bool = False,
    ) -> None:
        """versus: the reference the ratio is taken to (default: the fastest of
        others). parity: the target is "never slower than the reference" (the
        same reads, made the same way): met by a tie too, an interval that
        holds 1. processes: own and the reference are lists of samples, one
        list per process (pair_in_processes), and the ratio is over the
        processes."""
        if processes:
            ratio, low, high, verdict = ratio_over_processes(own, others[versus or next(iter(others))])
            own = [x for samples in own for x in samples]
            others = {k: [x for samples in v for x in samples] for k, v in others.items()}
        else:
            refs = [others[versus]] if versus else list(others.values())
            ratio, low, high, verdict = ratio_to_fastest(own, refs)
        if high <= target:
            met = "met"
        elif parity and verdict == "tie":
            met = "tie, met"
        else:
            met = "missed"
        best = versus or min(others, key=lambda k: statistics.median(others[k]))
        per_s = rows / statistics.median(own)
        rows_out.append(
            [
                label,
                f"{per_s:,.0f}/s",
                ", ".join(f"{k} {rows / statistics.median(v):,.0f}/s" for k, v in others.items()),
                f"{ratio:.2f} ({low:.2f}-{high:.2f}, {met}) vs {best}",
                f"<= {target:.2f}",
            ]
        )
        print(" | ".join(rows_out[-1]), flush=True)
        raw.append(
            (label, {"godevarrow": statistics.median(own), **{k: statistics.median(v) for k, v in others.items()}})
        )

    kinds = {"C++ reader, no GIL in get_next": CStream(), "reader over a Python list, GIL in get_next": ListStream()}
    kinds_first = next(iter(kinds.values()))
    # The `async for` rows run in one event loop, as a program's reads do:
    # asyncio.run per sample would also time a loop's creation and shutdown
    # (about 0.2 ms, 1-5% of a sample), which is asyncio's cost, not the read's.
    event_loop = asyncio.new_event_loop()
    for kind, producer in kinds.items():
        peers: dict[str, Callable[[], Any]] = {"pyarrow": lambda p=producer: count(pa.RecordBatchReader.from_stream(p))}
        if na is not None:
            peers["nanoarrow"] = lambda p=producer: count(na.ArrayStream(p))
        if a3 is not None:
            peers["arro3"] = lambda p=producer: count(a3.RecordBatchReader.from_stream(p))
        samples = sample_times(
            {
                "godevarrow": lambda p=producer: count(gda.stream(p)),
                "async": lambda p=producer: event_loop.run_until_complete(acount(gda.stream(p), n)),
                **peers,
            },
            repeat,
            min_seconds=0,
        )
        own = samples.pop("godevarrow")
        mine = {"async": samples.pop("async")}
        row(f"for loop, {kind}, {n:,} one-row batches (batches/s)", own, samples, 1.0, n, versus="pyarrow")
        row(f"async for, {kind}", mine["async"], {"for loop": own}, 1 / 0.9, n)
        pair = pair_in_processes("cpp" if producer is kinds_first else "list", n, repeat, args.quick)
        row(f"prefetch(8), {kind}", pair["prefetch"], {"for loop": pair["for"]}, 1.0, n, parity=True, processes=True)
    event_loop.close()

    def setup_gda(p: Any) -> None:
        s = gda.stream(p)
        next(iter(s))
        s.close()

    def setup_na(p: Any) -> None:
        s = na.ArrayStream(p)
        s.read_next()
        s.close()

    if na is not None:
        for kind, producer in kinds.items():
            samples = sample_times(
                {"godevarrow": lambda p=producer: setup_gda(p), "nanoarrow": lambda p=producer: setup_na(p)}, repeat
            )
            own = samples.pop("godevarrow")
            row(f"set-up: import, first batch, close ({kind}; per second)", own, samples, 1.0, 1)

    if slow_lib is not None:
        m, delay = (100, 100_000) if args.quick else (400, 100_000)
        slow = CStream(m, delay)

        # the consumer's own work per batch is as long as the producer's time
        # per batch (a sleep takes longer than asked), so that overlapping
        # them can halve the time: the median of three plain reads (one read
        # slowed by the machine would make the work longer than the
        # producer's time, and the best overlap worse than the target)
        def per_batch() -> float:
            start = time.perf_counter()
            count(gda.stream(slow), m)
            return (time.perf_counter() - start) / m

        work = statistics.median(per_batch() for _ in range(3))
        samples = sample_times(
            {
                "prefetch": lambda: count(gda.stream(slow).prefetch(8), m, work),
                "sync": lambda: count(gda.stream(slow), m, work),
            },
            repeat,
            min_seconds=0,
        )
        row(
            f"prefetch(8), producer waits {delay // 1000} µs per batch without the GIL"
            f" ({work * 1e6:.0f} µs in all), consumer works as long",
            samples["prefetch"],
            {"sync loop": samples["sync"]},
            1 / 1.8,
            m,
        )

        async def together(k: int) -> None:
            await asyncio.gather(*(acount(gda.stream(CStream(m // 4, delay)), m // 4) for _ in range(k)))

        samples = sample_times(
            {"four": lambda: asyncio.run(together(4)), "one": lambda: asyncio.run(together(1))}, repeat, min_seconds=0
        )
        row(
            f"4 such streams read together with asyncio vs one ({m // 4} batches each)",
            samples["four"],
            {"one stream": samples["one"]},
            1.5,
            m // 4,
        )
    header = ["reading job", "godevarrow", "reference (same run)", "ratio (95% interval) vs fastest", "target"]
    lines = [
        "",
        "## Reading",
        "",
        "Each consumer reads the same C stream into Python objects. A ratio is godevarrow's time over the",
        "reference's (below 1: godevarrow is faster); the target is met when the whole interval is at or",
        "below it. A target of parity (prefetch over fast reads, which reads in the consumer's thread as",
        "the loop does: never slower than it) is also met by a tie, an interval that holds 1: `prefetch(8)`",
        "over fast batches makes the loop's reads, in the consumer's thread, and times one in 16 to 64 of",
        'them (docs/design.md, "Where a prefetched stream reads"), so a tie is the most it can read (on which',
        "side of 1 the median of equal work falls is a coin's toss); below the loop only a read ahead that",
        "overlaps something would go, and a producer that needs the GIL has nothing to overlap with",
        '(docs/performance.md, "What remains"). Those rows run in 8 fresh processes, one after another,',
        "each timing the plain loop and prefetch alone in turns: a process's ratio of two equal reads sits",
        "up to 3% from 1, the same way all through the process (where its memory landed), so the ratio is",
        "the geometric mean of the processes' ratios, with a bootstrap interval over the processes.",
        "The `async for` rows read inside one event loop, made once for the section, as a program's reads",
        "do (`asyncio.run` per sample would add a loop's creation and shutdown to every read).",
        "Each sample is one read of the whole stream (about 20 ms); on a virtual machine whose speed",
        "swings for a tenth of a second at a time, intervals widen, and runs minutes apart move rows by",
        "several percent.",
        "",
    ]
    lines += markdown_table(header, rows_out)
    args.reading_raw = raw
    return "\n".join(lines) + "\n"


def _raw_driver(library: str, nbytes: int, src: Any) -> Optional[tuple[Callable[[], Any], Callable[[], Any]]]:
    """The same copies made directly through the driver (ctypes), allocation
    and free included as to_device does them: what godevarrow adds on top."""
    import ctypes

    try:
        lib = ctypes.CDLL(library)
        ctx = ctypes.c_void_p()
        if lib.cuInit(0) or lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) or lib.cuCtxSetCurrent(ctx):
            return None
    except OSError:
        return None
    lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_ulonglong), ctypes.c_size_t]
    lib.cuMemFree_v2.argtypes = [ctypes.c_ulonglong]
    lib.cuMemcpyHtoD_v2.argtypes = [ctypes.c_ulonglong, ctypes.c_void_p, ctypes.c_size_t]
    lib.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_size_t]
    resident = ctypes.c_ulonglong()
    lib.cuMemAlloc_v2(ctypes.byref(resident), nbytes)
    lib.cuMemcpyHtoD_v2(resident.value, src.ctypes.data, nbytes)

    def htod() -> None:
        lib.cuCtxSetCurrent(ctx)
        p = ctypes.c_ulonglong()
        lib.cuMemAlloc_v2(ctypes.byref(p), nbytes)
        lib.cuMemcpyHtoD_v2(p.value, src.ctypes.data, nbytes)
        lib.cuMemFree_v2(p.value)

    def dtoh() -> None:
        lib.cuCtxSetCurrent(ctx)
        dst = np.empty(nbytes, dtype=np.uint8)
        lib.cuMemcpyDtoH_v2(dst.ctypes.data, resident.value, nbytes)

    return htod, dtoh


if __name__ == "__main__":
    sys.exit(main())
