"""godevarrow against real producers and consumers: nanoarrow, polars, duckdb, arro3, numpy."""

from __future__ import annotations

import godevarrow as gda
import numpy as np
import pyarrow as pa
import pytest


def sample_batch() -> pa.RecordBatch:
    return pa.record_batch(
        {
            "i": pa.array([1, None, 3, 4], pa.int64()),
            "f": pa.array([0.5, 1.5, None, 3.5]),
            "s": pa.array(["a", "bb", None, "dddd"]),
            "l": pa.array([[1], [], None, [2, 3]], pa.list_(pa.int32())),
        }
    )


# ---------------------------------------------------------------- nanoarrow


def test_nanoarrow_consumes_godevarrow_array_and_batch(leak_check):
    na = pytest.importorskip("nanoarrow")
    batch = sample_batch()
    g = gda.record_batch(batch)
    arr = na.Array(g)
    assert len(arr) == 4
    assert pa.record_batch(arr).equals(batch)
    col = na.Array(g.column("s"))
    assert col.to_pylist() == ["a", "bb", None, "dddd"]
    del arr, col


def test_nanoarrow_consumes_godevarrow_stream(leak_check):
    na = pytest.importorskip("nanoarrow")
    batch = sample_batch()
    stream = gda.stream(pa.RecordBatchReader.from_batches(batch.schema, [batch, batch]))
    got = na.ArrayStream(stream).read_all()
    assert pa.table(got).equals(pa.Table.from_batches([batch, batch]))
    del got


def test_godevarrow_consumes_nanoarrow(leak_check):
    na = pytest.importorskip("nanoarrow")
    src = na.c_array([1, 2, 3], na.int32())
    g = gda.array(src)
    assert g.schema.format == "i"
    assert pa.array(g).to_pylist() == [1, 2, 3]
    assert gda.schema(na.c_schema(na.string())).format == "u"
    stream = na.ArrayStream(pa.record_batch(sample_batch()))
    gs = gda.stream(stream)
    assert pa.Table.from_batches([b.to_pyarrow() for b in gs]).equals(pa.Table.from_batches([sample_batch()]))
    del g, gs, stream, src


def test_godevarrow_consumes_nanoarrow_device_array(leak_check):
    na = pytest.importorskip("nanoarrow")
    device = pytest.importorskip("nanoarrow.device")
    darr = device.c_device_array(pa.array([7, 8, 9]))
    g = gda.array(darr)
    assert g.device == gda.Device.cpu()
    assert pa.array(g).to_pylist() == [7, 8, 9]
    del g, darr, na


# ------------------------------------------------------------- polars, duckdb


def test_polars_consumes_godevarrow_stream(leak_check):
    pl = pytest.importorskip("polars")
    batch = sample_batch()
    df = pl.DataFrame(gda.stream(gda.record_batch(batch)))
    assert df.height == 4
    assert df["i"].to_list() == [1, None, 3, 4]
    assert df["s"].to_list() == ["a", "bb", None, "dddd"]
    assert df["l"].to_list() == [[1], [], None, [2, 3]]
    del df


def test_godevarrow_consumes_polars(leak_check):
    pl = pytest.importorskip("polars")
    df = pl.DataFrame({"x": [1, 2, 3], "y": ["a", "b", "c"]})
    batches = gda.stream(df).read_all()
    table = pa.Table.from_batches([b.to_pyarrow() for b in batches])
    assert table.column("x").to_pylist() == [1, 2, 3]
    assert table.column("y").to_pylist() == ["a", "b", "c"]
    del df, batches, table


def test_duckdb_queries_godevarrow_stream(leak_check):
    duckdb = pytest.importorskip("duckdb")
    batch = sample_batch()
    con = duckdb.connect()
    con.register("t", gda.stream(gda.record_batch(batch)))
    total, n, longest = con.execute("select sum(i), count(*), max(length(s)) from t").fetchone()
    con.close()
    assert (total, n, longest) == (8, 4, 4)


# --------------------------------------------------------------------- arro3


def test_arro3_both_ways(leak_check):
    arro3 = pytest.importorskip("arro3.core")
    batch = sample_batch()
    a3 = arro3.RecordBatch.from_arrow(gda.record_batch(batch))
    assert a3.num_rows == 4
    back = gda.record_batch(a3)
    assert pa.record_batch(back).equals(batch)
    reader = arro3.RecordBatchReader.from_arrow(gda.stream(gda.record_batch(batch)))
    assert pa.table(reader.read_all()).equals(pa.Table.from_batches([batch]))
    del a3, back, reader


# --------------------------------------------------------------------- numpy

NUMERIC = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64"]


@pytest.mark.parametrize("dtype", NUMERIC)
def test_numpy_from_dlpack_of_godevarrow(dtype, leak_check):
    values = np.arange(10).astype(dtype)
    g = gda.array(pa.array(values))
    assert g.__dlpack_device__() == (1, 0)
    out = np.from_dlpack(g)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, values)
    sliced = np.from_dlpack(g.slice(3, 4))
    np.testing.assert_array_equal(sliced, values[3:7])
    del g, out, sliced


@pytest.mark.parametrize("dtype", NUMERIC)
def test_godevarrow_from_numpy(dtype, leak_check):
    values = np.arange(10).astype(dtype)
    g = gda.array(values)
    assert pa.array(g).type == pa.from_numpy_dtype(np.dtype(dtype))
    np.testing.assert_array_equal(pa.array(g).to_numpy(), values)
    del g


def test_godevarrow_from_numpy_is_zero_copy_and_keeps_owner_alive(leak_check):
    values = np.arange(1000, dtype=np.int64)
    g = gda.array(values)
    address = values.__array_interface__["data"][0]
    del values
    back = pa.array(g)
    assert back.buffers()[1].address == address
    assert back.to_pylist()[:3] == [0, 1, 2]
    del g, back


def test_godevarrow_from_numpy_bool_copies_into_bits(leak_check):
    g = gda.array(np.array([True, False, True]))
    assert pa.array(g).to_pylist() == [True, False, True]
    del g


def test_numpy_refuses_arrays_with_nulls(leak_check):
    g = gda.array(pa.array([1, None, 3]))
    with pytest.raises(BufferError, match="null"):
        np.from_dlpack(g)
    assert isinstance(gda.DLPackError("x"), gda.GodevarrowError)


def test_dlpack_rejects_non_numeric_and_strided(leak_check):
    with pytest.raises(BufferError, match="integers and floats"):
        gda.array(pa.array(["a"])).__dlpack__()
    with pytest.raises(gda.ArrowInvalid, match="strided"):
        gda.array(np.arange(10)[::2])
    with pytest.raises(gda.ArrowInvalid, match="1-D"):
        gda.array(np.zeros((2, 2)))


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
    del g


# -------------------------------------------------------------------- schemas


def test_schema_from_pyarrow_and_nanoarrow(leak_check):
    field = pa.field("x", pa.list_(pa.int32()), nullable=False, metadata={"k": "v"})
    s = gda.schema(field)
    assert (s.format, s.name, s.nullable) == ("+l", "x", False)
    assert s.metadata == {b"k": b"v"}
    assert [c.format for c in s.children] == ["i"]
    assert s.to_pyarrow().equals(field, check_metadata=True)
    sc = pa.schema([("a", pa.int64()), ("b", pa.string())], metadata={"m": "1"})
    gs = gda.schema(sc)
    assert gs.format == "+s" and [c.name for c in gs.children] == ["a", "b"]
    assert gs.to_pyarrow().equals(sc, check_metadata=True)
    assert gs == gda.schema(sc)
    assert gs != gda.schema(pa.schema([("a", pa.int64())]))
    assert "a: int64" in str(gs)
    na = pytest.importorskip("nanoarrow")
    assert gda.schema(na.c_schema(na.int64())).format == "l"
    d = gda.schema(pa.dictionary(pa.int8(), pa.string()))
    assert d.format == "c" and d.dictionary is not None and d.dictionary.format == "u"
