"""godevarrow.cudf against the pylibcudf/cudf stand-ins (tests_py/standins),
which copy what the real modules do, awkward parts included; the releases go
through the C producer whose release needs the GIL. Each test runs in a
subprocess: a release without the GIL aborts it."""

from __future__ import annotations

import pytest
from conftest import REPO, run_python

pytestmark = pytest.mark.fakecuda
PATHS = {"PYTHONPATH": f"{REPO / 'tests_py'}:{REPO / 'tests_py' / 'standins'}"}


def sub(code: str):
    r = run_python(code, env=PATHS)
    assert r.returncode == 0 and "ok" in r.stdout, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"


def test_item1_from_cudf_puts_the_names_back():
    sub(
        """
        import cudf, godevarrow as gda, godevarrow.cudf as gcudf, gil_producer
        df = cudf.DataFrame({"a": [1, 2, None], "b": ["x", None, "z"]})
        batch = gcudf.from_cudf(df)
        assert batch.column_names == ["a", "b"], batch.column_names
        assert batch.device_type == gda.DeviceType.CUDA
        assert batch.to_pyarrow().column(1).to_pylist() == ["x", None, "z"]
        series = gcudf.from_cudf(df["a"])
        assert series.to_pyarrow().to_pylist() == [1, 2, None]
        del batch, series
        import gc; gc.collect()
        assert gil_producer.releases() == 2
        print("ok")
        """
    )


def test_the_gpu_cudf_round_trip_runs_against_the_stand_ins():
    # test_gpu.py's cuDF round trip (skipped without a GPU) on the stand-ins
    sub(
        """
        import cudf
        from cudf_round_trips import round_trip_keeps_names
        round_trip_keeps_names(cudf)
        print("ok")
        """
    )


# Stand-ins broken on purpose: the round trip above must fail on each (its
# oracle is a literal table, so a value changed or a row lost anywhere
# between cudf and godevarrow shows, even where both sides of the old
# df.to_arrow() comparison would have read the same wrong data).
BROKEN = {
    "a-value-changed-before-the-device-copy": """
        init = cudf.DataFrame.__init__
        def broken_init(self, data=None):
            init(self, None if data is None else dict(data, a=[1, 5, None]))
        cudf.DataFrame.__init__ = broken_init
        """,
    "a-row-dropped-by-from_pylibcudf": """
        build = cudf.DataFrame.from_pylibcudf.__func__
        def broken_build(cls, table, metadata):
            host = gda.record_batch(table).to_device("cpu").to_pyarrow().slice(0, 2)
            return build(cls, pylibcudf.Table.from_arrow(gda.record_batch(host).to_device("cuda:0")), metadata)
        cudf.DataFrame.from_pylibcudf = classmethod(broken_build)
        """,
}


@pytest.mark.parametrize("breakage", list(BROKEN.values()), ids=list(BROKEN))
def test_the_cudf_round_trip_fails_against_a_broken_stand_in(breakage):
    sub(
        """
        import traceback, cudf, pylibcudf, godevarrow as gda
        from cudf_round_trips import round_trip_keeps_names
        """
        + breakage
        + """
        try:
            round_trip_keeps_names(cudf)
        except AssertionError as e:
            # the value check failed, not some other assert on the way
            assert traceback.extract_tb(e.__traceback__)[-1].name == "assert_is_expected", traceback.format_exc()
            print("ok")
        else:
            print("the round trip passed against a broken stand-in")
        """
    )


def test_item8_to_cudf_carries_known_null_counts():
    sub(
        """
        import pyarrow as pa, godevarrow as gda, godevarrow.cudf as gcudf
        batch = gda.record_batch(pa.record_batch({"a": [1, None, 3, None], "b": [None, 2.0, 3.0, 4.0]}))
        sliced = batch.to_device("cuda:0").slice(1, 3)  # slicing leaves the counts unknown
        df = gcudf.to_cudf(sliced)
        assert list(df.columns) == ["a", "b"]
        counts = [df[c].null_count for c in ("a", "b")]
        assert counts == [2, 0], counts
        print("ok")
        """
    )


# Every path that can drop a foreign struct, each with a check that it read
# the data (so the release really comes after a read on that path).
FIRST = "[1, 2, 3]"


@pytest.mark.parametrize(
    "read, check",
    [
        pytest.param("None", "_ is None", id="direct"),
        pytest.param(
            "pa.RecordBatchReader.from_stream(take()).read_all()",
            f"_.column(0).to_pylist() == {FIRST}",
            id="pyarrow-cpu-stream",
        ),
        pytest.param("take().to_device('cpu').to_pyarrow()", f"_.column(0).to_pylist() == {FIRST}", id="to-host"),
        pytest.param(
            "list(gda.stream(take()).prefetch(2))", f"_[0].to_pyarrow().column(0).to_pylist() == {FIRST}", id="prefetch"
        ),
        pytest.param("gda.record_batch(take()).__arrow_c_device_array__()", "len(_) == 2", id="export"),
        pytest.param(
            "asyncio.run(read_async(gda.stream(take())))",
            f"_[0].to_device('cpu').to_pyarrow().column(0).to_pylist() == {FIRST}",
            id="async",
        ),
        pytest.param("pl.DataFrame(take()).sum()", "_.row(0) == (6,)", id="polars"),
        pytest.param(
            "duckdb.connect().register('t', gda.stream(take())).sql('select * from t').fetchall()",
            "_ == [(1,), (2,), (3,)]",
            # found by this test (it failed on 6a7f6aa too): a duckdb scan
            # thread drops the last reference without the GIL; the release
            # guard (held.h) takes it for the producer's release
            id="duckdb",
        ),
        pytest.param(
            "[b.to_device('cpu').to_pyarrow() for b in gda.stream(take())]",
            f"_[0].column(0).to_pylist() == {FIRST}",
            id="stream-to-host",
        ),
    ],
)
def test_item5_foreign_releases_hold_the_gil(read, check):
    sub(
        f"""
        import asyncio, gc, duckdb, polars as pl, pyarrow as pa, godevarrow as gda, pylibcudf, gil_producer

        async def read_async(stream):
            return [b async for b in stream]

        def take():
            # hands the batch over: the reader holds its last reference, so
            # the foreign struct is dropped wherever that reader drops it
            global batch
            taken, batch = batch, None
            return taken

        table = pylibcudf.Table.from_arrow(gda.record_batch(pa.record_batch({{"a": [1, 2, 3]}})).to_device("cuda:0"))
        batch = gda.record_batch(table)
        del table
        _ = {read}
        assert {check}, _
        batch = _ = None
        gc.collect()
        assert gil_producer.releases() == 1, gil_producer.releases()
        print("ok")
        """
    )


def test_cudf_versions_are_checked():
    sub(
        """
        import cudf, godevarrow.cudf as gcudf
        cudf.__version__ = "24.12.00"
        try:
            gcudf.from_cudf(cudf.DataFrame({"a": [1]}))
        except ImportError as e:
            assert "25.08" in str(e) and "24.12" in str(e), e
            print("ok")
        """
    )
