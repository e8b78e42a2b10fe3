"""godevarrow.cudf against the pylibcudf/cudf stand-ins (tests_py/cuda/standins),
which copy what the real modules do, awkward parts included, at cuDF 25.08
and 26.08 (each test that can differ runs against both); the releases go
through the C producer whose release needs the GIL. Each test runs in a
subprocess: a release without the GIL aborts it."""

from __future__ import annotations

import pytest
from conftest import REPO, run_python

pytestmark = pytest.mark.fakecuda
CUDA_TESTS = REPO / "tests_py" / "cuda"
PATHS = {"PYTHONPATH": f"{REPO / 'tests_py'}:{CUDA_TESTS}:{CUDA_TESTS / 'standins'}"}


VERSIONS = ["25.08", "26.08"]


@pytest.fixture(params=VERSIONS)
def version(request) -> str:
    return request.param


def sub(code: str, version: str = "25.08", timeout: float = 60):
    r = run_python(code, env={**PATHS, "CUDF_STANDIN_VERSION": version}, timeout=timeout)
    assert r.returncode == 0 and "ok" in r.stdout, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"


def test_from_cudf_puts_the_names_back(version):
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
        """,
        version,
    )


def test_the_gpu_cudf_round_trip_runs_against_the_stand_ins(version):
    # test_gpu.py's cuDF round trip (skipped without a GPU) on the stand-ins
    sub(
        """
        import cudf
        from cudf_round_trips import round_trip_keeps_names
        round_trip_keeps_names(cudf)
        print("ok")
        """,
        version,
    )


def test_from_cudf_of_a_slice_gives_the_rows_of_the_slice(version):
    # cuDF exports a sliced column at offset 0 over its unsliced children
    # and mask: without a copy, the batch would hold the base's first rows
    sub(
        """
        import cudf
        from cudf_round_trips import slices_give_their_rows
        slices_give_their_rows(cudf)
        print("ok")
        """,
        version,
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
    # the oracle's own check: one version is enough
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


def test_to_cudf_carries_known_null_counts(version):
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
        """,
        version,
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
def test_foreign_releases_hold_the_gil(read, check):
    # pylibcudf's release (libcudf/interop.pxd, PylibcudfArrowDeviceArrayRelease)
    # is the same in 25.08 and 26.08: one version runs the matrix
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


def test_from_cudf_is_all_nullable_whatever_the_data(version):
    # cuDF marks a column nullable only when it has nulls (26.08: a mask):
    # the schema of two frames of one shape would differ with their data
    sub(
        """
        import cudf, pyarrow as pa, godevarrow.cudf as gcudf
        with_nulls = gcudf.from_cudf(cudf.DataFrame({"a": [1, None], "s": ["x", None]}))
        without = gcudf.from_cudf(cudf.DataFrame({"a": [1, 2], "s": ["x", "y"]}))
        want = pa.schema([pa.field("a", pa.int64()), pa.field("s", pa.string())])
        for batch in (with_nulls, without):
            assert pa.schema(batch.schema).equals(want), batch.schema
        print("ok")
        """,
        version,
    )


def test_a_round_trip_returns_the_schema_it_was_given(version):
    # cuDF drops nested names and nullability on its way out; the schema
    # to_cudf was given comes back (decimal precision and time zones cannot
    # be put back on the device: they come with a warning naming them)
    sub(
        """
        import decimal, warnings, pyarrow as pa, godevarrow as gda, godevarrow.cudf as gcudf
        point = pa.struct([pa.field("x", pa.int64(), nullable=False), pa.field("label", pa.string())])
        given = pa.schema([
            pa.field("id", pa.int64(), nullable=False),
            pa.field("tags", pa.list_(pa.field("tag", pa.string()))),
            pa.field("p", point),
        ])
        host = pa.record_batch(
            [pa.array([1, 2]), pa.array([["a"], None], given.field("tags").type),
             pa.array([{"x": 1, "label": None}, None], point)],
            schema=given,
        )
        back = gcudf.from_cudf(gcudf.to_cudf(gda.record_batch(host).to_device("cuda:0")))
        assert pa.schema(back.schema).equals(given), back.schema
        assert back.to_pyarrow().to_pydict() == {
            "id": [1, 2], "tags": [["a"], None], "p": [{"x": 1, "label": None}, None]
        }, back.to_pyarrow().to_pydict()

        lossy = pa.record_batch({"d": pa.array([decimal.Decimal("1.25")], pa.decimal128(5, 2)),
                                 "t": pa.array([1], pa.timestamp("ms", "UTC"))})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = gcudf.from_cudf(gcudf.to_cudf(gda.record_batch(lossy).to_device("cuda:0")))
        said = " ".join(str(w.message) for w in caught)
        assert "decimal128(5, 2) arrives as decimal128(38, 2)" in said and "tz=UTC" in said, said
        assert out.to_pyarrow().column(0).to_pylist() == [decimal.Decimal("1.25")]
        print("ok")
        """,
        version,
    )


TYPES_CUDF_CANNOT_TAKE = {
    "large_list": ("pa.array([[1]], pa.large_list(pa.int64()))", "cast to list<item: int64>"),
    "binary": ("pa.array([b'x'], pa.binary())", "cast to string"),
    "float16": ("pa.array([1], pa.int16()).view(pa.float16())", "cast to float32"),
    "time64": ("pa.array([1], pa.time64('us'))", "cast to duration[us]"),
    "map": ("pa.array([[('k', 1)]], pa.map_(pa.string(), pa.int64()))", "cast to list<"),
    "unsigned-dictionary": (
        "pa.DictionaryArray.from_arrays(pa.array([0], pa.uint8()), pa.array(['x']))",
        "decode it (cast to string)",
    ),
    # libcudf takes it, then cudf's from_pylibcudf has no dtype for it
    "dictionary": (
        "pa.DictionaryArray.from_arrays(pa.array([0], pa.int32()), pa.array(['x']))",
        "then .astype('category') in cuDF",
    ),
    "nested-binary": ("pa.array([{'b': b'x'}], pa.struct([('b', pa.binary())]))", "'v'.b is binary"),
}


@pytest.mark.parametrize("make, hint", list(TYPES_CUDF_CANNOT_TAKE.values()), ids=list(TYPES_CUDF_CANNOT_TAKE))
def test_types_cudf_cannot_take_are_refused_before_the_hand_over(version, make, hint):
    # pylibcudf raises TypeError only after it moved the array in (and its
    # release then runs without the GIL): refused first, nothing moved
    sub(
        f"""
        import pyarrow as pa, godevarrow as gda, godevarrow.cudf as gcudf
        batch = gda.record_batch(pa.record_batch({{"ok": [1], "v": {make}}})).to_device("cuda:0")
        try:
            gcudf.to_cudf(batch)
        except gda.GodevarrowTypeError as e:
            assert "cuDF cannot hold" in str(e) and {hint!r} in str(e), e
        else:
            raise AssertionError("to_cudf took a type cuDF cannot hold")
        # the batch was not handed over: it still exports and reads
        assert batch.to_device("cpu").to_pyarrow().column(0).to_pylist() == [1]
        print("ok")
        """,
        version,
    )


def test_string_views_reach_cudf_as_strings(version):
    # cuDF before 26.04 reads a string view's 16-byte views as int32 offsets
    sub(
        """
        import pyarrow as pa, godevarrow as gda, godevarrow.cudf as gcudf
        views = pa.array(["short", None, "a string longer than twelve bytes"], pa.string_view())
        df = gcudf.to_cudf(gda.record_batch(pa.record_batch({"s": views})).to_device("cuda:0"))
        assert df.to_arrow().column(0).to_pylist() == ["short", None, "a string longer than twelve bytes"]
        print("ok")
        """,
        version,
    )


def test_to_cudf_of_a_struct_array_keeps_its_nulls_and_its_slice(version):
    # libcudf reads a top-level struct's children only: its own validity and
    # offset would be lost
    sub(
        """
        import pyarrow as pa, godevarrow as gda, godevarrow.cudf as gcudf
        structs = gda.array(pa.array([{"x": 1}, None, {"x": 3}])).to_device("cuda:0")
        df = gcudf.to_cudf(structs)
        assert df.to_arrow().to_pydict() == {"x": [1, None, 3]}, df.to_arrow().to_pydict()
        df = gcudf.to_cudf(structs.slice(1, 2))
        assert df.to_arrow().to_pydict() == {"x": [None, 3]}, df.to_arrow().to_pydict()
        assert len(df) == 2
        print("ok")
        """,
        version,
    )


def test_to_cudf_refuses_duplicate_column_names(version):
    # from_pylibcudf builds a dict of the columns: duplicates would collapse
    sub(
        """
        import pyarrow as pa, godevarrow as gda, godevarrow.cudf as gcudf
        host = pa.RecordBatch.from_arrays([pa.array([1]), pa.array([2]), pa.array([3])], ["a", "b", "a"])
        batch = gda.record_batch(host).to_device("cuda:0")
        try:
            gcudf.to_cudf(batch)
        except ValueError as e:
            assert "duplicate column names ['a']" in str(e), e
        else:
            raise AssertionError("duplicate names were taken")
        assert batch.to_device("cpu").to_pyarrow().equals(host)
        print("ok")
        """,
        version,
    )


def test_to_cudf_of_a_batch_without_columns_keeps_its_rows(version):
    # pylibcudf 25.08 counts a table's rows from its first column
    sub(
        """
        import pyarrow as pa, godevarrow as gda, godevarrow.cudf as gcudf
        empty = pa.RecordBatch.from_pydict({}).__class__.from_struct_array(pa.array([{}] * 4, pa.struct([])))
        df = gcudf.to_cudf(gda.record_batch(empty).to_device("cuda:0"))
        assert len(df) == 4 and list(df.columns) == [], (len(df), df.columns)
        print("ok")
        """,
        version,
    )


def test_from_cudf_takes_the_device_from_the_data(version):
    # pylibcudf stamps its export with the current device, not the data's
    sub(
        """
        import cudf, pylibcudf, godevarrow as gda, godevarrow.cudf as gcudf
        pylibcudf.set_current_device(1)
        df = cudf.DataFrame({"a": [1, None, 3]})
        pylibcudf.set_current_device(0)
        batch = gcudf.from_cudf(df)
        assert batch.device == gda.Device.cuda(1), batch.device
        assert batch.to_device("cpu").to_pyarrow().column(0).to_pylist() == [1, None, 3]
        series = gcudf.from_cudf(df["a"])
        assert series.device == gda.Device.cuda(1), series.device
        print("ok")
        """,
        version,
    )


def test_to_cudf_leaks_no_schema(version):
    # libcudf never releases the schema it takes (arrow_array_container)
    sub(
        """
        import gc, pyarrow as pa, godevarrow as gda, godevarrow.cudf as gcudf
        counters = gda._godevarrow.debug_counters
        batch = gda.record_batch(pa.record_batch({"a": [1, None], "s": ["x", "y"]})).to_device("cuda:0")
        gcudf.to_cudf(batch)
        gc.collect()
        before = counters().exported_schemas
        for _ in range(200):
            gcudf.to_cudf(batch)
        gc.collect()
        assert counters().exported_schemas == before, (before, counters())
        print("ok")
        """,
        version,
    )


@pytest.mark.slow
def test_to_cudf_memory_stays_flat_over_many_calls():
    # the schema leak costs about 450 bytes a call (45 MB over the loop); the
    # bounds leave room for the allocator and Go's heap. The batch's null
    # counts are known, so to_cudf makes no CUDA stream (the fake driver
    # keeps every stream it made, as a record).
    sub(
        """
        import gc, pyarrow as pa, godevarrow as gda, godevarrow.cudf as gcudf
        from godevarrow import _godevarrow as lib

        def rss():
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * 4096

        batch = gda.record_batch(pa.record_batch({"a": [1, None], "s": ["x", "y"]})).to_device("cuda:0")
        batch = gda.RecordBatch(lib.array_known_null_counts(batch._h))
        for _ in range(10_000):
            gcudf.to_cudf(batch)
        gc.collect()
        start = rss()
        for _ in range(100_000):
            gcudf.to_cudf(batch)
        gc.collect()
        grown = rss() - start
        assert grown < 16_000_000, f"{grown} bytes more after 10**5 calls"
        print("ok")
        """,
        timeout=600,
    )


def test_from_cudf_says_categoricals_arrive_as_codes(version):
    sub(
        """
        import warnings, cudf, godevarrow.cudf as gcudf
        df = cudf.DataFrame({"c": [0, 1, 0], "n": [1.0, 2.0, 3.0]})
        cudf.as_categorical(df, "c", ["x", "y"])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            batch = gcudf.from_cudf(df)
        said = [str(w.message) for w in caught]
        assert said == ["from_cudf: categorical columns arrive as their integer codes: ['c']"], said
        assert batch.to_pyarrow().column(0).to_pylist() == [0, 1, 0]
        print("ok")
        """,
        version,
    )
