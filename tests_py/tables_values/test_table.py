"""Tables and chunked arrays: built from any stream producer, held zero-copy,
read any number of times by pyarrow, polars and DuckDB; and looking at
values (==, [], numpy, repr) on CPU and fake-CUDA data."""

from __future__ import annotations

import pickle

import godevarrow as gda
import numpy as np
import pyarrow as pa
import pytest
from conftest import values_address


def source_table() -> pa.Table:
    return pa.Table.from_batches(
        [
            pa.record_batch({"x": pa.array([1, 2, 3], pa.int64()), "s": ["a", None, "c"]}),
            pa.record_batch({"x": pa.array([4, 5], pa.int64()), "s": ["d", "e"]}),
        ]
    )


def x_addresses(t) -> list[int]:
    """The values-buffer address of column x in each chunk of a pyarrow table."""
    return [values_address(c) for c in pa.table(t).column("x").chunks]


# the peers are optional: only the tests that use one skip without it
PRODUCERS = {
    "pyarrow": lambda: source_table(),
    "polars": lambda: pytest.importorskip("polars").DataFrame(source_table()),
    "duckdb": lambda: pytest.importorskip("duckdb").sql(
        "select * from (values (1::bigint, 'a'), (2, null), (3, 'c')) t(x, s)"
    ),
}


@pytest.mark.parametrize("producer", PRODUCERS)
def test_table_from_a_stream_producer_is_read_three_times_by_every_peer(producer, leak_check):
    pl = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    src = PRODUCERS[producer]()
    t = gda.table(src)
    held = [values_address(pa.array(b.column(0))) for b in t.to_batches()]
    want = pa.table(src).to_pydict() if producer != "duckdb" else {"x": [1, 2, 3], "s": ["a", None, "c"]}
    for _ in range(3):
        # pyarrow: zero-copy, the very buffers the table holds
        back = pa.table(t)
        assert back.to_pydict() == want
        assert x_addresses(back) == held
        # polars: zero-copy for the numbers (the buffers it holds, and
        # exports again, are the table's)
        df = pl.DataFrame(t)
        assert df.to_dict(as_series=False) == want
        assert x_addresses(df.to_arrow()) == held
        # DuckDB scans the stream on every query (its result is its own memory)
        con = duckdb.connect()
        con.register("t", t)
        assert con.sql("select sum(x), count(s) from t").fetchall() == [
            (sum(want["x"]), 2 if len(want["x"]) == 3 else 4)
        ]
        assert con.sql("select count(*) from t").fetchall() == [(len(want["x"]),)]
        con.close()
    assert t.to_pydict() == want


def test_table_from_pyarrow_holds_its_batches_without_copying(leak_check):
    src = source_table()
    t = gda.table(src)
    assert t.num_rows == 5 and t.num_columns == 2 and t.column_names == ["x", "s"]
    assert [len(b) for b in t.to_batches()] == [3, 2]  # not concatenated
    assert x_addresses(t) == x_addresses(src)
    assert t.column("x").to_pylist() == [1, 2, 3, 4, 5] and t.column(-1).to_pylist() == ["a", None, "c", "d", "e"]
    assert [c.num_chunks for c in t.columns] == [2, 2]
    assert t.to_pyarrow().equals(src)
    assert t.column("x").to_pyarrow().equals(src.column("x"))
    assert t.schema == gda.schema(src.schema)


def test_table_slices_across_chunks_and_clamps(leak_check):
    t = gda.table(source_table())
    assert t.slice(2, 2).to_pydict() == {"x": [3, 4], "s": ["c", "d"]}
    assert [len(b) for b in t.slice(2, 2).to_batches()] == [1, 1]
    assert t.slice(4, 100).to_pylist() == [{"x": 5, "s": "e"}]
    assert t.slice(9).num_rows == 0
    assert t[1:4].column("x").to_pylist() == [2, 3, 4]
    assert t[-1] == {"x": 5, "s": "e"} and t[3] == {"x": 4, "s": "d"}
    with pytest.raises(IndexError):
        t[5]
    with pytest.raises(IndexError, match="non-negative"):
        t.slice(-1)


def test_table_equality_ignores_chunking_but_not_values_or_names(leak_check):
    src = source_table()
    one = gda.table(src.combine_chunks())
    assert gda.table(src) == one and gda.table(src).equals(src)
    assert gda.table(src) != gda.table(src.slice(1))
    renamed = src.rename_columns(["y", "s"])
    assert gda.table(src) != gda.table(renamed)
    with_meta = src.replace_schema_metadata({"k": "v"})
    assert gda.table(src).equals(with_meta) and not gda.table(src).equals(with_meta, check_metadata=True)


def test_table_from_batches_and_sequences(leak_check):
    batches = source_table().to_batches()
    assert gda.table(batches).num_rows == 5
    assert gda.table(gda.record_batch(batches[0])).num_rows == 3
    assert gda.table([], requested_schema=batches[0].schema).num_rows == 0
    with pytest.raises(gda.ArrowInvalid, match="needs its type"):
        gda.table([])
    with pytest.raises(gda.ArrowInvalid, match="chunked_array"):
        gda.table(pa.chunked_array([[1, 2]]))
    with pytest.raises(gda.ArrowInvalid, match="type"):
        gda.table([batches[0], pa.record_batch({"z": [1.0]})])
    with pytest.raises(gda.GodevarrowTypeError, match="cannot make a godevarrow table"):
        gda.table(42)


def test_chunked_array_from_polars(leak_check):
    pl = pytest.importorskip("polars")
    assert gda.chunked_array(pl.Series("v", [1.5, None])).to_pylist() == [1.5, None]


def test_chunked_array_from_pyarrow_and_arrays(leak_check):
    ca = gda.chunked_array(pa.chunked_array([[1, 2], [], [3]]))
    assert ca.num_chunks == 3 and len(ca) == 3 and list(ca) == [1, 2, 3] and ca[-1] == 3
    assert ca.to_pyarrow().equals(pa.chunked_array([[1, 2], [], [3]]))
    assert gda.chunked_array([pa.array([1]), gda.array(pa.array([2]))]).to_pylist() == [1, 2]
    assert np.asarray(ca).tolist() == [1, 2, 3]  # several chunks: concatenated (a copy)
    with pytest.raises(gda.ArrowInvalid, match="copy=False"):
        ca.__array__(copy=False)
    assert pa.chunked_array(ca).to_pylist() == [1, 2, 3]


def test_table_pickles_and_validates(leak_check):
    t = gda.table(source_table())
    back = pickle.loads(pickle.dumps(t))
    assert isinstance(back, gda.Table) and back == t and [len(b) for b in back.to_batches()] == [3, 2]
    t.validate()
    ca = t.column("s")
    assert pickle.loads(pickle.dumps(ca)) == ca


def test_a_table_read_by_streams_is_fresh_each_time(leak_check):
    t = gda.table(source_table())
    for _ in range(2):
        assert [len(b) for b in gda.stream(t)] == [3, 2]
        assert pa.RecordBatchReader.from_stream(t).read_all().num_rows == 5


def test_repr_shows_type_device_and_edge_values(leak_check):
    arr = gda.array(pa.array(range(100)))
    text = repr(arr)
    assert text.startswith("godevarrow.Array<int64>[100] on cpu")
    assert "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ..., 90, 91, 92, 93, 94, 95, 96, 97, 98, 99]" in text
    assert "[1, null, 'x']" not in repr(gda.array(pa.array(["a", None])))
    assert repr(gda.array(pa.array(["a", None]))).endswith("['a', null]")
    t = gda.table(source_table())
    assert repr(t).startswith("godevarrow.Table: 5 rows × 2 columns, 2 chunks, on cpu\n")
    assert repr(t).endswith('\ns: ["a", null, "c", "d", "e"]')


def test_array_values_equality_and_numpy_on_cpu(leak_check):
    a = gda.array(pa.array([1, 2, 3]))
    assert a == gda.array(pa.array([1, 2, 3])) and a != gda.array(pa.array([1, 2, 4]))
    assert a.equals(pa.array([1, 2, 3])) and a != gda.array(pa.array([1, 2, 3], pa.int32()))
    assert a[1:] == gda.array(pa.array([2, 3]))  # a view at an offset equals fresh data
    assert gda.array(pa.array([float("nan")])) != gda.array(pa.array([float("nan")]))  # as pyarrow's equals
    with pytest.raises(TypeError):
        hash(a)
    view = np.asarray(a)
    assert view.tolist() == [1, 2, 3] and view.ctypes.data == values_address(pa.array(a))  # zero-copy
    with pytest.raises(gda.ArrowInvalid, match="nulls"):
        np.asarray(gda.array(pa.array([1, None])))
    with pytest.raises(gda.ArrowInvalid, match="fixed-width numbers"):
        np.asarray(gda.array(pa.array(["a"])))
    with pytest.raises(gda.ArrowNotImplementedError, match="step"):
        a[::2]
    with pytest.raises(gda.GodevarrowTypeError):
        a["x"]
    assert a[-3] == 1 and a[0:2].to_pylist() == [1, 2]
    with pytest.raises(IndexError):
        a[3]


def test_slice_clamps_like_pyarrow(leak_check):
    a = gda.array(pa.array([1, 2]))
    p = pa.array([1, 2])
    for offset, length in [(1, 100), (5, None), (2, 0), (0, None), (1, None)]:
        assert a.slice(offset, length).to_pylist() == p.slice(offset, length).to_pylist()
    with pytest.raises(IndexError):
        a.slice(-1)


def test_from_dlpack_copy_is_writable(leak_check):
    a = gda.array(pa.array([1.0, 2.0]))
    x = np.from_dlpack(a, copy=True)
    x[0] = 5.0
    assert a.to_pylist() == [1.0, 2.0]
    assert not np.from_dlpack(a).flags.writeable  # a view of Arrow data: read-only


def test_producer_errors_become_package_errors_with_their_cause(leak_check):
    class Broken:
        def __arrow_c_array__(self, requested_schema=None):
            raise RuntimeError("the producer broke")

        def __arrow_c_stream__(self, requested_schema=None):
            raise ValueError("no stream today")

    with pytest.raises(gda.GodevarrowError, match="Broken producer raised RuntimeError: the producer broke") as info:
        gda.array(Broken())
    assert isinstance(info.value.__cause__, RuntimeError)
    with pytest.raises(gda.ArrowInvalid, match="no stream today") as info:
        gda.stream(Broken())
    assert isinstance(info.value.__cause__, ValueError)
    with pytest.raises(gda.ArrowInvalid, match="no stream today"):
        gda.table(Broken())


@pytest.mark.fakecuda
def test_values_equality_numpy_and_repr_on_fake_cuda(device_leak_check):
    host = gda.array(pa.array([1.5, None, 3.0]))
    dev = host.to_device("cuda:0")
    assert dev.to_pylist() == [1.5, None, 3.0] and dev[-1] == 3.0 and list(dev) == [1.5, None, 3.0]
    assert dev == host and dev == host.to_device("cuda:1")
    assert dev[1:].device == gda.Device.cuda(0) and dev[1:] == host[1:]
    assert repr(dev).startswith("godevarrow.Array<float64>[3] on cuda:0") and repr(dev).endswith("[1.5, null, 3.0]")
    full = gda.array(pa.array([1.0, 2.0])).to_device("cuda:0")
    assert np.asarray(full).tolist() == [1.0, 2.0]  # copied to the host
    with pytest.raises(gda.ArrowInvalid, match="copy=False"):
        full.__array__(copy=False)
    with pytest.raises(gda.ArrowInvalid, match="nulls"):
        np.asarray(dev)
    batch = gda.record_batch(pa.record_batch({"x": [1, 2], "s": ["p", None]})).to_device("cuda:0")
    assert batch.to_pylist() == [{"x": 1, "s": "p"}, {"x": 2, "s": None}] and batch["s"][0] == "p"
    t = gda.table([batch, batch])
    assert t.device_type == gda.DeviceType.CUDA and t.num_rows == 4
    assert t.to_pydict() == {"x": [1, 2, 1, 2], "s": ["p", None, "p", None]}
    assert t == gda.table(pa.table({"x": [1, 2, 1, 2], "s": ["p", None, "p", None]}))
    assert t.to_device("cpu").device_type == gda.DeviceType.CPU
    assert pa.table(t).num_rows == 4  # __arrow_c_stream__ copies device chunks to the host
    assert repr(t).startswith("godevarrow.Table: 4 rows × 2 columns, 2 chunks, on cuda\n")
    assert repr(t).endswith('\ns: ["p", null, "p", null]')  # read from the device


def test_a_table_is_read_from_many_threads_at_once(leak_check):
    import threading

    t = gda.table(source_table())
    want = source_table().to_pydict()
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            for _ in range(25):
                assert pa.table(t).to_pydict() == want
                assert t.to_pydict() == want and t[4] == {"x": 5, "s": "e"}
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []


def test_a_failing_stream_leaves_no_table_and_releases_what_it_read(leak_check):
    def batches():
        yield pa.record_batch({"x": [1, 2]})
        raise ValueError("the producer failed after one batch")

    reader = pa.RecordBatchReader.from_batches(pa.schema([("x", pa.int64())]), batches())
    with pytest.raises(gda.StreamError, match="failed after one batch"):
        gda.table(reader)
