"""godevarrow against real producers and consumers: nanoarrow, polars, duckdb,
arro3 and numpy (DLPack), both ways; and Schema against pyarrow and nanoarrow."""

from __future__ import annotations

import godevarrow as gda
import numpy as np
import pyarrow as pa
import pytest
from conftest import values_address


def sample_batch() -> pa.RecordBatch:
    return pa.record_batch(
        {
            "i": pa.array([1, None, 3, 4], pa.int64()),
            "f": pa.array([0.5, 1.5, None, 3.5], pa.float64()),
            "b": pa.array([True, False, None, True]),
            "s": pa.array(["a", "bb", None, "dddd"]),
            "l": pa.array([[1], [], None, [2, 3]], pa.list_(pa.int32())),
            "d": pa.array([0, 1, None, 19000], pa.date32()),
        }
    )


def sample_reader(copies: int = 2) -> pa.RecordBatchReader:
    batch = sample_batch()
    return pa.RecordBatchReader.from_batches(batch.schema, [batch] * copies)


# ================================================================ nanoarrow


@pytest.fixture
def na():
    return pytest.importorskip("nanoarrow")


def test_nanoarrow_array_consumes_godevarrow_batch(na, leak_check):
    batch = sample_batch()
    arr = na.Array(gda.record_batch(batch))
    assert len(arr) == 4
    assert arr.schema.n_fields == batch.num_columns
    assert pa.record_batch(arr).equals(batch)


def test_nanoarrow_c_array_consumes_godevarrow_array_zero_copy(na, leak_check):
    src = pa.array([1, 2, 3], pa.int64())
    ca = na.c_array(gda.array(src))
    assert ca.length == 3
    assert ca.buffers[1] == values_address(src)
    assert na.Array(ca).to_pylist() == [1, 2, 3]


@pytest.mark.parametrize(
    "column,expected",
    [("i", [1, None, 3, 4]), ("s", ["a", "bb", None, "dddd"]), ("b", [True, False, None, True])],
)
def test_nanoarrow_reads_godevarrow_columns(na, column, expected, leak_check):
    g = gda.record_batch(sample_batch())
    assert na.Array(g.column(column)).to_pylist() == expected


def test_nanoarrow_reads_a_godevarrow_slice(na, leak_check):
    g = gda.array(pa.array(list(range(10)))).slice(3, 4)
    assert na.Array(g).to_pylist() == [3, 4, 5, 6]


def test_nanoarrow_consumes_godevarrow_stream(na, leak_check):
    stream = gda.stream(sample_reader(3))
    got = na.ArrayStream(stream).read_all()
    assert pa.table(got).equals(pa.Table.from_batches([sample_batch()] * 3))


def test_nanoarrow_c_array_stream_consumes_godevarrow_stream(na, leak_check):
    cs = na.c_array_stream(gda.stream(sample_reader(2)))
    chunks = list(cs)
    assert len(chunks) == 2
    assert all(pa.record_batch(c).equals(sample_batch()) for c in chunks)


def test_nanoarrow_device_array_consumes_godevarrow(na, leak_check):
    device = pytest.importorskip("nanoarrow.device")
    darr = device.c_device_array(gda.array(pa.array([7, 8, 9])))
    assert darr.device_type == device.DeviceType.CPU
    assert darr.device_id == -1
    assert na.Array(darr).to_pylist() == [7, 8, 9]


def test_godevarrow_consumes_nanoarrow_c_array(na, leak_check):
    src = na.c_array([1, None, 3], na.int32())
    g = gda.array(src)
    assert g.schema.format == "i"
    assert (len(g), g.null_count) == (3, 1)
    assert pa.array(g).to_pylist() == [1, None, 3]


def test_godevarrow_consumes_nanoarrow_array(na, leak_check):
    src = na.Array(["x", None, "zz"], na.string())
    g = gda.array(src)
    assert g.schema.format == "u"
    assert pa.array(g).to_pylist() == ["x", None, "zz"]
    g.validate(full=True)


def test_godevarrow_consumes_nanoarrow_device_array(na, leak_check):
    device = pytest.importorskip("nanoarrow.device")
    darr = device.c_device_array(pa.array([7, None, 9]))
    assert hasattr(darr, "__arrow_c_device_array__")
    g = gda.array(darr)
    assert g.device == gda.Device.cpu()
    assert pa.array(g).to_pylist() == [7, None, 9]


def test_godevarrow_consumes_nanoarrow_struct(na, leak_check):
    src = na.c_array(pa.record_batch({"a": [1, 2], "b": ["x", "y"]}))
    g = gda.record_batch(src)
    assert g.column_names == ["a", "b"]
    assert g.to_pyarrow().to_pydict() == {"a": [1, 2], "b": ["x", "y"]}


def test_godevarrow_consumes_nanoarrow_streams(na, leak_check):
    for stream in (na.ArrayStream(sample_reader(2)), na.c_array_stream(sample_reader(2))):
        got = gda.stream(stream).read_all()
        assert len(got) == 2
        assert all(b.to_pyarrow().equals(sample_batch()) for b in got)


def test_godevarrow_consumes_nanoarrow_schemas(na, leak_check):
    assert gda.schema(na.c_schema(na.int64())).format == "l"
    assert gda.schema(na.string()).format == "u"
    s = gda.schema(na.struct({"a": na.int32(), "b": na.large_string()}))
    assert s.format == "+s"
    assert [(c.name, c.format) for c in s.children] == [("a", "i"), ("b", "U")]
    assert s == gda.schema(pa.struct([("a", pa.int32()), ("b", pa.large_string())]))


def test_nanoarrow_consumes_godevarrow_schema(na, leak_check):
    s = na.c_schema(gda.schema(pa.schema({"a": pa.int16()})))
    assert s.format == "+s" and s.n_children == 1 and s.child(0).format == "s"


# =================================================================== polars


@pytest.fixture
def pl():
    return pytest.importorskip("polars")


def test_polars_dataframe_from_godevarrow_stream(pl, leak_check):
    df = pl.DataFrame(gda.stream(sample_reader(2)))
    assert df.shape == (8, 6)
    assert df.columns == ["i", "f", "b", "s", "l", "d"]
    assert df["i"].to_list() == [1, None, 3, 4] * 2
    assert df["f"].to_list() == [0.5, 1.5, None, 3.5] * 2
    assert df["b"].to_list() == [True, False, None, True] * 2
    assert df["s"].to_list() == ["a", "bb", None, "dddd"] * 2
    assert df["l"].to_list() == [[1], [], None, [2, 3]] * 2
    assert df["d"].to_list() == sample_batch().column("d").to_pylist() * 2
    del df


def test_polars_dataframe_from_godevarrow_record_batch(pl, leak_check):
    df = pl.DataFrame(gda.record_batch(sample_batch()))
    assert df.height == 4
    assert df["s"].to_list() == ["a", "bb", None, "dddd"]
    del df


def test_polars_series_from_godevarrow_array(pl, leak_check):
    s = pl.Series(gda.array(pa.array([1.5, None, 3.0])))
    assert s.dtype == pl.Float64
    assert s.to_list() == [1.5, None, 3.0]
    del s


def test_godevarrow_consumes_polars_dataframe(pl, leak_check):
    df = pl.DataFrame({"x": [1, 2, None], "y": ["a", None, "c"], "z": [[1], [2, 3], []]})
    stream = gda.stream(df)
    assert [c.name for c in stream.schema.children] == ["x", "y", "z"]
    table = pa.Table.from_batches([b.to_pyarrow() for b in stream])
    assert table.column("x").to_pylist() == [1, 2, None]
    assert table.column("y").to_pylist() == ["a", None, "c"]
    assert table.column("z").to_pylist() == [[1], [2, 3], []]
    del df


def test_godevarrow_consumes_empty_polars_columns_with_dangling_buffers(pl, leak_check):
    # polars exports an empty column's buffers as a Rust empty vector's
    # dangling pointer (0x1 for bytes and booleans, 0x8 for int64): valid for
    # zero bytes, never to be read nor held by Go as a pointer
    df = pl.DataFrame(
        {
            "i8": pl.Series([], dtype=pl.Int8),
            "i64": pl.Series([], dtype=pl.Int64),
            "b": pl.Series([], dtype=pl.Boolean),
            "s": pl.Series([], dtype=pl.Utf8),
            "l": pl.Series([], dtype=pl.List(pl.Int64)),
        }
    )
    batches = list(gda.stream(df))
    assert batches and all(len(b) == 0 for b in batches)
    for b in batches:
        b.validate(full=True)
        for i in range(b.num_columns):
            col = b.column(i)
            assert col.to_pylist() == []
            assert len(col.slice(0, 0)) == 0
        assert b.to_pyarrow().num_rows == 0
    del df, batches


def test_godevarrow_consumes_polars_series(pl, leak_check):
    s = pl.Series("v", [1, None, 3], dtype=pl.Int32)
    chunks = gda.stream(s).read_all()
    assert sum(len(c) for c in chunks) == 3
    assert pa.chunked_array([pa.array(c) for c in chunks]).to_pylist() == [1, None, 3]
    del s


# =================================================================== duckdb


@pytest.fixture
def duckdb():
    return pytest.importorskip("duckdb")


def test_duckdb_queries_a_godevarrow_stream(duckdb, leak_check):
    t = gda.stream(sample_reader(2))  # noqa: F841 - found by duckdb's replacement scan
    total, n, longest, trues = duckdb.sql(
        "select sum(i), count(*), max(length(s)), count(*) filter (where b) from t"
    ).fetchall()[0]
    assert (total, n, longest, trues) == (16, 8, 4, 4)


def test_duckdb_reads_every_value_of_a_godevarrow_stream(duckdb, leak_check):
    con = duckdb.connect()
    con.register("t", gda.stream(sample_reader(1)))
    rows = con.execute("select i, f, b, s, l, d from t").fetchall()
    con.close()
    want = sample_batch().to_pylist()
    assert [list(r) for r in rows] == [[w[k] for k in ("i", "f", "b", "s", "l", "d")] for w in want]


def test_duckdb_queries_a_godevarrow_record_batch_twice(duckdb, leak_check):
    t = gda.record_batch(sample_batch())  # noqa: F841 - a batch can be scanned again and again
    assert duckdb.sql("select count(*) from t").fetchall() == [(4,)]
    assert duckdb.sql("select sum(i) from t").fetchall() == [(8,)]


def test_duckdb_result_into_godevarrow(duckdb, leak_check):
    rel = duckdb.sql("select range as x, 'v' || range::varchar as s from range(5)")
    stream = gda.stream(rel)
    table = pa.Table.from_batches([b.to_pyarrow() for b in stream])
    assert table.column("x").to_pylist() == [0, 1, 2, 3, 4]
    assert table.column("s").to_pylist() == [f"v{i}" for i in range(5)]


def test_duckdb_round_trip_through_godevarrow(duckdb, leak_check):
    t = gda.stream(sample_reader(1))  # noqa: F841
    back = duckdb.sql("select * from t").to_arrow_table()
    again = gda.stream(back)
    got = pa.Table.from_batches([b.to_pyarrow() for b in again])
    assert got.column("i").to_pylist() == [1, None, 3, 4]
    assert got.column("s").to_pylist() == ["a", "bb", None, "dddd"]


# ==================================================================== arro3


@pytest.fixture
def a3():
    return pytest.importorskip("arro3.core")


def test_arro3_consumes_godevarrow(a3, leak_check):
    batch = sample_batch()
    rb = a3.RecordBatch.from_arrow(gda.record_batch(batch))
    assert rb.num_rows == 4
    assert pa.record_batch(rb).equals(batch)
    arr = a3.Array.from_arrow(gda.array(pa.array(["x", None])))
    assert pa.array(arr).to_pylist() == ["x", None]
    table = a3.Table.from_arrow(gda.stream(sample_reader(2)))
    assert pa.table(table).equals(pa.Table.from_batches([batch] * 2))
    reader = a3.RecordBatchReader.from_arrow(gda.stream(sample_reader(2)))
    assert pa.table(reader.read_all()).equals(pa.Table.from_batches([batch] * 2))
    schema = a3.Schema.from_arrow(gda.schema(batch.schema))
    assert pa.schema(schema).equals(batch.schema)


def test_godevarrow_consumes_arro3(a3, leak_check):
    batch = sample_batch()
    g = gda.record_batch(a3.RecordBatch.from_arrow(batch))
    assert g.to_pyarrow().equals(batch)
    ga = gda.array(a3.Array.from_arrow(pa.array([1, None], pa.int16())))
    assert pa.array(ga).to_pylist() == [1, None] and ga.schema.format == "s"
    stream = gda.stream(a3.Table.from_arrow(pa.Table.from_batches([batch] * 2)))
    assert [b.to_pyarrow().equals(batch) for b in stream] == [True, True]
    rstream = gda.stream(a3.RecordBatchReader.from_arrow(sample_reader(3)))
    assert len(rstream.read_all()) == 3
    assert gda.schema(a3.Schema.from_arrow(batch.schema)) == gda.schema(batch.schema)
    assert gda.schema(a3.DataType.from_arrow(pa.int8())).format == "c"
    assert gda.schema(a3.Field.from_arrow(pa.field("f", pa.utf8(), nullable=False))).nullable is False


def test_arro3_array_zero_copy_both_ways(a3, leak_check):
    src = pa.array(list(range(50)), pa.int64())
    there = a3.Array.from_arrow(gda.array(src))
    back = gda.array(there)
    assert values_address(pa.array(back)) == values_address(src)


# ==================================================================== numpy

NUMERIC = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64"]


@pytest.mark.parametrize("dtype", NUMERIC)
def test_numpy_from_dlpack_of_godevarrow(dtype, leak_check):
    values = (np.arange(12) * 3).astype(dtype)
    src = pa.array(values)
    g = gda.array(src)
    assert g.__dlpack_device__() == (1, 0)  # (kDLCPU, 0)
    out = np.from_dlpack(g)
    assert out.dtype == np.dtype(dtype)
    assert out.shape == (12,)
    np.testing.assert_array_equal(out, values)
    assert out.__array_interface__["data"][0] == values_address(src), "DLPack export must be zero-copy"
    del g
    np.testing.assert_array_equal(out, values)  # the tensor keeps the memory alive
    del out


@pytest.mark.parametrize("dtype", NUMERIC)
def test_numpy_from_dlpack_of_a_godevarrow_slice(dtype, leak_check):
    values = np.arange(10).astype(dtype)
    g = gda.array(pa.array(values)).slice(3, 4)
    np.testing.assert_array_equal(np.from_dlpack(g), values[3:7])


@pytest.mark.parametrize("dtype", NUMERIC)
def test_godevarrow_from_numpy(dtype, leak_check):
    values = (np.arange(12) * 3).astype(dtype)
    g = gda.array(values)
    assert len(g) == 12 and g.null_count == 0
    assert g.device == gda.Device.cpu()
    back = pa.array(g)
    assert back.type == pa.from_numpy_dtype(np.dtype(dtype))
    np.testing.assert_array_equal(back.to_numpy(), values)
    assert g.schema == gda.schema(pa.from_numpy_dtype(np.dtype(dtype)))


def test_godevarrow_from_numpy_is_zero_copy_and_keeps_numpy_alive(leak_check):
    values = np.arange(1000, dtype=np.int64)
    address = values.__array_interface__["data"][0]
    g = gda.array(values)
    del values
    back = pa.array(g)
    assert values_address(back) == address
    assert back.to_pylist() == list(range(1000))


def test_godevarrow_from_numpy_bool_copies_into_bits(leak_check):
    g = gda.array(np.array([True, False, True]))
    assert pa.array(g).to_pylist() == [True, False, True]


def test_godevarrow_refuses_strided_and_multidimensional_numpy(leak_check):
    with pytest.raises(gda.ArrowInvalid, match="strided"):
        gda.array(np.arange(10)[::2])
    with pytest.raises(gda.ArrowInvalid, match="1-D"):
        gda.array(np.zeros((2, 2)))


def test_numpy_round_trip_through_godevarrow(leak_check):
    values = np.linspace(0, 1, 7, dtype=np.float32)
    np.testing.assert_array_equal(np.from_dlpack(gda.array(values)), values)


def test_dlpack_refuses_arrays_with_nulls(leak_check):
    """DLPack has no validity bitmap. The array API standard says __dlpack__
    raises BufferError when the data cannot be exported; numpy passes it on.
    The message has to say why (the nulls)."""
    g = gda.array(pa.array([1, None, 3]))
    with pytest.raises(BufferError, match="null") as info:
        np.from_dlpack(g)
    assert isinstance(info.value, gda.GodevarrowError)
    del info
    with pytest.raises(BufferError, match="null"):
        g.__dlpack__()


def test_dlpack_of_a_null_free_slice_of_an_array_with_nulls(leak_check):
    g = gda.array(pa.array([None, 1, 2, 3]))
    np.testing.assert_array_equal(np.from_dlpack(g.slice(1)), [1, 2, 3])


def test_dlpack_refuses_non_numeric_data(leak_check):
    # BufferError from __dlpack__, or TypeError when strings offer no __dlpack__ at all
    with pytest.raises((BufferError, TypeError)):
        np.from_dlpack(gda.array(pa.array(["a", "b"])))
    with pytest.raises(BufferError, match="integers and floats"):
        gda.array(pa.array(["a"])).__dlpack__()


def test_dlpack_versioned_and_legacy_capsules(leak_check):
    g = gda.array(pa.array([1, 2, 3]))
    legacy = g.__dlpack__()
    versioned = g.__dlpack__(max_version=(1, 0))
    assert "dltensor" in repr(legacy) and "dltensor_versioned" not in repr(legacy)
    assert "dltensor_versioned" in repr(versioned)
    del legacy, versioned  # unconsumed capsules delete their tensors
    with pytest.raises(ValueError, match="stream"):
        g.__dlpack__(stream=1)
    with pytest.raises(BufferError):
        g.__dlpack__(dl_device=(2, 0))


def test_dlpack_arguments_outside_the_common_call_are_checked_as_python_checks_them(leak_check):
    # __dlpack__ answers the common call in C (ArrayBase); the rest goes to
    # the Python method, which must word every refusal as a keyword-only
    # Python method does
    g = gda.array(pa.array([1, 2, 3]))
    with pytest.raises(TypeError, match="positional"):
        g.__dlpack__(1)
    with pytest.raises(TypeError, match="unexpected keyword"):
        g.__dlpack__(streams=None)
    for bad in (True, "1", 1.0):
        with pytest.raises(ValueError, match="stream must be an int or None"):
            g.__dlpack__(stream=bad)
    with pytest.raises(TypeError):
        g.__dlpack__(max_version=7)  # not a sequence
    assert "dltensor_versioned" not in repr(g.__dlpack__(max_version=(0, 8)))
    assert "dltensor_versioned" in repr(g.__dlpack__(max_version=[1, 0], copy=False, dl_device=None))
    copied = g.__dlpack__(max_version=(1, 0), copy=True)  # the general path copies
    assert np.from_dlpack(
        type("Capsule", (), {"__dlpack__": lambda self, **kw: copied, "__dlpack_device__": lambda self: (1, 0)})()
    ).tolist() == [1, 2, 3]
    assert g.__dlpack_device__() == (1, 0)


class _DLPackOnly:
    """Offers numpy's DLPack exchange, with __dlpack_device__ and __dlpack__ replaceable."""

    def __init__(self, values, device=None, old_signature=False):
        self.values, self.device, self.old_signature = values, device, old_signature
        self.calls: list[dict] = []

    def __dlpack_device__(self):
        return self.values.__dlpack_device__() if self.device is None else self.device

    def __dlpack__(self, **kwargs):
        self.calls.append(kwargs)
        if self.old_signature and "max_version" in kwargs:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        return self.values.__dlpack__(**{k: v for k, v in kwargs.items() if k != "max_version"})


def test_dlpack_consumer_asks_for_version_1_and_falls_back_for_an_older_producer(leak_check):
    values = np.arange(5, dtype=np.int64)
    new, old = _DLPackOnly(values), _DLPackOnly(values, old_signature=True)
    assert gda.array(new).to_pylist() == [0, 1, 2, 3, 4]
    assert new.calls == [{"max_version": (1, 1)}], "a CPU tensor: no stream named"
    assert gda.array(old).to_pylist() == [0, 1, 2, 3, 4]
    assert old.calls == [{"max_version": (1, 1)}, {}], "asked again without max_version"


@pytest.mark.parametrize("device", [(1,), (1, 0, 0), "cpu", None])
def test_dlpack_consumer_refuses_a_device_that_is_not_a_pair(device, leak_check):
    src = _DLPackOnly(np.arange(3), device=device if device is not None else 5)
    with pytest.raises((ValueError, TypeError)):
        gda.array(src)
    assert src.calls == [], "__dlpack__ is not asked once the device is refused"


# ================================================================= schemas


def test_schema_of_a_pyarrow_field(leak_check):
    field = pa.field("x", pa.list_(pa.int32()), nullable=False, metadata={"k": "v", "k2": "\u00e9"})
    s = gda.schema(field)
    assert isinstance(s, gda.Schema)
    assert s.format == "+l"
    assert s.name == "x"
    assert s.nullable is False
    assert s.metadata == {b"k": b"v", b"k2": "\u00e9".encode()}
    assert [type(c) for c in s.children] == [gda.Schema]
    assert [(c.format, c.name, c.nullable) for c in s.children] == [("i", "item", True)]
    back = s.to_pyarrow()
    assert isinstance(back, pa.Field)
    assert back.equals(field, check_metadata=True)


def test_schema_of_a_pyarrow_schema(leak_check):
    schema = pa.schema(
        [pa.field("a", pa.int64(), nullable=False), pa.field("b", pa.string(), metadata={"x": "y"})],
        metadata={"m": "1"},
    )
    s = gda.schema(schema)
    assert s.format == "+s"
    assert s.name == ""
    assert s.metadata == {b"m": b"1"}
    assert [c.name for c in s.children] == ["a", "b"]
    assert [c.nullable for c in s.children] == [False, True]
    assert s.children[1].metadata == {b"x": b"y"}
    assert s.children[0].metadata == {}
    back = s.to_pyarrow()
    assert isinstance(back, pa.Schema)
    assert back.equals(schema, check_metadata=True)
    assert pa.schema(s).equals(schema, check_metadata=True)  # through __arrow_c_schema__


def test_schema_metadata_is_empty_dict_without_metadata(leak_check):
    assert gda.schema(pa.int8()).metadata == {}


@pytest.mark.parametrize(
    "typ,fmt",
    [
        (pa.null(), "n"),
        (pa.bool_(), "b"),
        (pa.int8(), "c"),
        (pa.uint8(), "C"),
        (pa.int16(), "s"),
        (pa.uint16(), "S"),
        (pa.int32(), "i"),
        (pa.uint32(), "I"),
        (pa.int64(), "l"),
        (pa.uint64(), "L"),
        (pa.float16(), "e"),
        (pa.float32(), "f"),
        (pa.float64(), "g"),
        (pa.binary(), "z"),
        (pa.large_binary(), "Z"),
        (pa.string(), "u"),
        (pa.large_string(), "U"),
        (pa.string_view(), "vu"),
        (pa.binary(5), "w:5"),
        (pa.decimal128(5, 2), "d:5,2"),
        (pa.date32(), "tdD"),
        (pa.timestamp("us", "UTC"), "tsu:UTC"),
        (pa.duration("ns"), "tDn"),
        (pa.list_(pa.int8()), "+l"),
        (pa.large_list(pa.int8()), "+L"),
        (pa.list_(pa.int8(), 3), "+w:3"),
        (pa.struct([("a", pa.int8())]), "+s"),
        (pa.map_(pa.string(), pa.int8()), "+m"),
        (pa.dictionary(pa.int16(), pa.string()), "s"),
    ],
    ids=str,
)
def test_schema_format_strings(typ, fmt, leak_check):
    s = gda.schema(typ)
    assert s.format == fmt
    assert pa.field(s).type == typ


def test_schema_equality(leak_check):
    base = pa.schema({"a": pa.int64(), "b": pa.string()})
    assert gda.schema(base) == gda.schema(pa.schema({"a": pa.int64(), "b": pa.string()}))
    assert gda.schema(base) != gda.schema(pa.schema({"a": pa.int64()}))
    assert gda.schema(base) != gda.schema(pa.schema({"a": pa.int32(), "b": pa.string()}))
    assert gda.schema(base) != gda.schema(pa.schema({"a": pa.int64(), "c": pa.string()}))
    assert gda.schema(base) != gda.schema(base.with_metadata({"k": "v"}))
    assert gda.schema(pa.field("a", pa.int8())) != gda.schema(pa.field("a", pa.int8(), nullable=False))
    assert gda.schema(pa.field("a", pa.int8())) != gda.schema(pa.field("b", pa.int8()))


def test_schema_str_is_readable(leak_check):
    s = gda.schema(pa.schema({"alpha": pa.int64(), "beta": pa.list_(pa.float32())}))
    text = str(s)
    assert "alpha" in text and "beta" in text
    assert "alpha: int64" in text
    assert "float" in text
    assert "0x" not in text  # not an object address
    assert repr(s)


def test_schema_of_a_dictionary_type(leak_check):
    s = gda.schema(pa.dictionary(pa.int8(), pa.string()))
    assert s.format == "c"
    assert s.dictionary is not None and s.dictionary.format == "u"
    assert pa.field(s).type == pa.dictionary(pa.int8(), pa.string())
