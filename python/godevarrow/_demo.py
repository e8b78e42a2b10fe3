"""The demo behind ``python -m godevarrow demo`` (``make demo``).

It builds a table of mixed types in pyarrow, passes it into Go, where Go
validates it and computes a checksum of every column's values (see the Go
package gosrc/checksum); the same checksums computed here in Python must
match, which proves that Go read the real data. Then the batch is handed on,
zero-copy, to nanoarrow, polars and duckdb (when installed), and every hop is
timed.
"""

from __future__ import annotations

import time
import zlib
from typing import Any, Callable

from . import _godevarrow as _lib


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def _fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:8.2f} ms"
    return f"{seconds:8.2f} s "


def make_table(rows: int) -> Any:
    import datetime

    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(42)
    valid = rng.random(rows) > 0.1
    words = np.array(["arrow", "go", "gpu", "zero-copy", "ünïcödé", ""], dtype=object)
    return pa.record_batch(
        {
            "id": pa.array(np.arange(rows, dtype=np.int64)),
            "score": pa.array(rng.normal(size=rows), mask=~valid),
            "count": pa.array(rng.integers(-1000, 1000, size=rows, dtype=np.int32), mask=~valid),
            "flag": pa.array(rng.random(rows) > 0.5, mask=~valid),
            "word": pa.array(words[rng.integers(0, len(words), size=rows)], pa.string(), mask=~valid),
            "when": pa.array(
                rng.integers(0, 2_000_000_000, size=rows) * 1_000_000, pa.timestamp("us", tz="UTC"), mask=~valid
            ),
            "day": pa.array(
                [datetime.date(2020, 1, 1) + datetime.timedelta(days=int(d)) for d in rng.integers(0, 3000, size=rows)],
                pa.date32(),
            ),
        }
    )


def python_checksum(col: Any) -> int:
    """The column checksum of gosrc/checksum, computed with pyarrow and numpy."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    valid = np.asarray(col.is_valid().to_numpy(zero_copy_only=False), dtype=np.uint8)
    if pa.types.is_boolean(col.type):
        body = np.asarray(pc.fill_null(col, False).to_numpy(zero_copy_only=False), dtype=np.uint8).tobytes()
    elif pa.types.is_string(col.type) or pa.types.is_large_string(col.type) or pa.types.is_binary(col.type):
        parts = []
        for v in col.to_pylist():
            if v is None:
                parts.append(b"\xff\xff\xff\xff")
            else:
                b = v.encode() if isinstance(v, str) else v
                parts.append(len(b).to_bytes(4, "little") + b)
        body = b"".join(parts)
    else:
        width = col.type.bit_width // 8
        raw = np.frombuffer(col.buffers()[1], dtype=np.uint8)
        values = raw[col.offset * width : (col.offset + len(col)) * width].reshape(len(col), width).copy()
        values[valid == 0] = 0
        body = values.tobytes()
    return zlib.crc32(valid.tobytes(), zlib.crc32(body)) & 0xFFFFFFFF


def run(rows: int) -> int:
    import gc

    import godevarrow as gda

    from ._optional import require

    for module in ("numpy", "pyarrow"):
        require(module, "the demo")
    print(f"godevarrow {gda.__version__} demo: {rows:,} rows\n")
    failures = _exchange(rows)
    # every object of the exchange is gone now: the Go side must hold nothing
    gc.collect()
    live = gda.debug_live_objects()
    leaked = {k: v for k, v in live.items() if v}
    print("live Go objects after the demo:", leaked or "none")
    failures += bool(leaked)
    print("\nresult:", "OK" if not failures else f"{failures} check(s) FAILED")
    return 0 if not failures else 1


def _exchange(rows: int) -> int:
    import pyarrow as pa

    import godevarrow as gda

    batch = make_table(rows)
    nbytes = batch.nbytes
    print(f"pyarrow batch: {batch.num_columns} columns, {nbytes / 1e6:.1f} MB")
    for field in batch.schema:
        print(f"  {field.name:6} {field.type}")
    print()
    hops: list[tuple[str, float, str]] = []

    gbatch, t = _timed(lambda: gda.record_batch(batch))
    hops.append(("pyarrow -> Go (zero-copy import)", t, f"{gbatch.num_rows:,} rows on {gbatch.device}"))

    _, t = _timed(lambda: gbatch.validate(full=True))
    hops.append(("Go: full validation", t, "every offset, UTF-8 string and bitmap checked"))

    go_sums, t = _timed(lambda: _lib.checksums(gbatch._h))
    hops.append(("Go: checksum of every column", t, f"{nbytes / 1e6 / max(t, 1e-9):.0f} MB/s"))

    py_sums = [python_checksum(col) for col in batch.columns]
    failures = 0  # noqa: SIM113
    print("column checksums (CRC-32 of the values), Go vs Python:")
    for name, g, p in zip(batch.schema.names, go_sums, py_sums):
        ok = g == p
        failures += not ok
        print(f"  {name:6} Go {g:08x}  Python {p:08x}  {'match' if ok else 'MISMATCH'}")
    print()

    back, t = _timed(lambda: pa.record_batch(gbatch))
    same = back.equals(batch)
    failures += not same
    hops.append(("Go -> pyarrow (zero-copy export)", t, "equal to the original" if same else "DIFFERS"))

    try:
        import nanoarrow as na

        arr, t = _timed(lambda: na.Array(gbatch))
        hops.append(("Go -> nanoarrow", t, f"{len(arr):,} rows, type {arr.schema.type.name.lower()}"))
    except ImportError:
        hops.append(("Go -> nanoarrow", 0.0, "skipped: nanoarrow not installed"))

    try:
        import polars as pl

        df, t = _timed(lambda: pl.DataFrame(gda.stream(gbatch)))
        total = int(df["id"].sum())
        ok = total == rows * (rows - 1) // 2
        failures += not ok
        hops.append(("Go stream -> polars", t, f"{df.height:,} rows, sum(id) {'correct' if ok else 'WRONG'}"))
    except ImportError:
        hops.append(("Go stream -> polars", 0.0, "skipped: polars not installed"))

    try:
        import duckdb

        con = duckdb.connect()

        def query() -> Any:
            # duckdb reads the godevarrow stream through __arrow_c_stream__
            con.register("godevarrow_batch", gda.stream(gbatch))
            return con.execute("select count(*), count(distinct word) from godevarrow_batch").fetchone()

        (n, words), t = _timed(query)
        con.close()
        ok = n == rows
        failures += not ok
        hops.append(("Go stream -> duckdb SQL", t, f"count(*) = {n:,}, {words} distinct words"))
    except ImportError:
        hops.append(("Go stream -> duckdb SQL", 0.0, "skipped: duckdb not installed"))

    print("hops:")
    for name, seconds, note in hops:
        print(f"  {name:34} {_fmt(seconds)}   {note}")
    print()
    return failures + _gpu_leg(batch, gbatch, go_sums)


def _gpu_leg(batch: Any, gbatch: Any, cpu_sums: list[int]) -> int:
    """CPU -> cuda:0 (-> cuda:1) -> CPU, a device-array exchange on the GPU,
    and the checksums again: the data survived every copy."""
    import godevarrow as gda

    ok, count, library, message = gda.cuda_status()
    if not ok or count == 0:
        print(f"GPU leg skipped: {message or 'no CUDA device'}\n")
        return 0
    fake = " (the strict fake driver: device memory unreadable by the host)" if "fakecuda" in library else ""
    print(f"GPU leg on {count} CUDA device(s) via {library}{fake}:")
    nbytes = batch.nbytes
    hops: list[tuple[str, float, str]] = []
    on_gpu, t = _timed(lambda: gbatch.to_device("cuda:0"))
    hops.append(("cpu -> cuda:0 (copy)", t, f"{nbytes / 1e6 / max(t, 1e-9):.0f} MB/s, {on_gpu.device}"))
    if count > 1:
        on_gpu, t = _timed(lambda: on_gpu.to_device("cuda:1"))
        hops.append(("cuda:0 -> cuda:1 (peer copy)", t, f"{nbytes / 1e6 / max(t, 1e-9):.0f} MB/s"))
    capsules, t = _timed(lambda: on_gpu.__arrow_c_device_array__())
    hops.append(("GPU batch -> ArrowDeviceArray", t, "zero-copy, sync_event set"))
    again, t = _timed(lambda: gda.record_batch(_Capsules(capsules)))
    hops.append(("ArrowDeviceArray -> GPU batch", t, "zero-copy; nothing read from the device"))
    home, t = _timed(lambda: again.to_device("cpu"))
    hops.append(("GPU -> cpu (copy)", t, f"{nbytes / 1e6 / max(t, 1e-9):.0f} MB/s"))
    sums = _lib.checksums(home._h)
    same = sums == cpu_sums and home.to_pyarrow().equals(batch)
    hops.append(("checksums after the round trip", 0.0, "all match" if same else "MISMATCH"))
    for name, seconds, note in hops:
        print(f"  {name:34} {_fmt(seconds)}   {note}")
    print()
    return 0 if same else 1


class _Capsules:
    """Hands a pair of device capsules to godevarrow as a foreign producer would."""

    def __init__(self, capsules: tuple[object, object]) -> None:
        self.capsules = capsules

    def __arrow_c_device_array__(self, requested_schema: object = None, **kwargs: Any) -> tuple[object, object]:
        return self.capsules
