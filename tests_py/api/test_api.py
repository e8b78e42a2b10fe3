"""The public Python API (docs/api.md): Array, RecordBatch, ArrayStream, constructors."""

from __future__ import annotations

import re

import godevarrow as gda
import pyarrow as pa
import pytest
from conftest import ArrayOnly, DeviceArrayOnly, DeviceStreamOnly, Spy, StreamOnly, live, values_address

# ----------------------------------------------------------------- package


def test_version_is_a_version_string():
    assert isinstance(gda.__version__, str)
    assert re.match(r"^\d+\.\d+", gda.__version__), gda.__version__
    assert gda.__version__.count(".") >= 2, gda.__version__  # major.minor.patch


def test_public_names_exist():
    for name in (
        "DeviceType",
        "Device",
        "cuda_available",
        "cuda_device_count",
        "schema",
        "array",
        "record_batch",
        "stream",
        "Schema",
        "Array",
        "RecordBatch",
        "ArrayStream",
        "GodevarrowError",
        "ArrowInvalid",
        "DeviceError",
        "StreamError",
        "debug_live_objects",
        "validate",
    ):
        assert hasattr(gda, name), name
    assert issubclass(gda.RecordBatch, gda.Array)


def test_cuda_queries_never_raise():
    assert isinstance(gda.cuda_available(), bool)
    count = gda.cuda_device_count()
    assert isinstance(count, int) and count >= 0
    assert gda.cuda_available() == (count > 0)


def test_debug_live_objects_has_the_documented_counters():
    counters = gda.debug_live_objects()
    for key in (
        "handles",
        "exported_schemas",
        "exported_arrays",
        "exported_streams",
        "imported_arrays",
        "imported_streams",
        "bytes_held",
    ):
        assert isinstance(counters[key], int) and counters[key] >= 0, key


# ------------------------------------------------------------------- Array


def test_array_properties(leak_check):
    src = pa.array([1, None, 3, None, 5], pa.int32())
    g = gda.array(src)
    assert type(g) is gda.Array
    assert len(g) == 5
    assert g.null_count == 2
    assert g.offset == 0
    assert g.device == gda.Device.cpu()
    assert g.device_type == gda.DeviceType.CPU
    assert isinstance(g.device_type, gda.DeviceType)
    assert g.device_id == -1
    assert isinstance(g.schema, gda.Schema)
    assert g.schema.format == "i"
    assert g.schema == gda.schema(pa.int32())
    assert "int32" in repr(g)


def test_array_of_a_pyarrow_slice_keeps_offset(leak_check):
    src = pa.array([1, None, 3, None, 5], pa.int32()).slice(2, 3)
    g = gda.array(src)
    assert (len(g), g.offset, g.null_count) == (3, 2, 1)
    assert pa.array(g).to_pylist() == [3, None, 5]


@pytest.mark.parametrize(
    "offset,length,expected",
    [(0, None, [1, None, 3, None, 5]), (1, 3, [None, 3, None]), (4, None, [5]), (2, 0, []), (5, None, [])],
    ids=["all", "middle", "tail", "empty", "at-end"],
)
def test_array_slice_is_zero_copy(offset, length, expected, leak_check):
    src = pa.array([1, None, 3, None, 5], pa.int64())
    g = gda.array(src)
    s = g.slice(offset, length) if length is not None else g.slice(offset)
    assert isinstance(s, gda.Array)
    assert len(s) == len(expected)
    assert s.offset == g.offset + offset
    assert s.null_count == expected.count(None)
    back = pa.array(s)
    assert back.to_pylist() == expected
    assert values_address(back) == values_address(src)  # same memory: zero-copy
    s.validate(full=True)
    assert len(g) == 5  # the original is untouched


def test_module_level_slice(leak_check):
    g = gda.array(pa.array([1, None, 3, None, 5], pa.int32()))
    assert gda.slice(g, 4).to_pyarrow().to_pylist() == [5]


def test_slice_of_a_slice(leak_check):
    g = gda.array(pa.array(list(range(10))))
    s = g.slice(2, 6).slice(1, 3)
    assert s.offset == 3
    assert pa.array(s).to_pylist() == [3, 4, 5]


@pytest.mark.parametrize(
    "offset,length,clamped",
    [(2, 5, [3]), (4, None, []), (4, 1, [])],
    ids=["past-the-end", "offset-past-end", "offset-and-length-past-end"],
)
def test_slice_out_of_bounds_clamps(offset, length, clamped, leak_check):
    """Array.slice's docstring: as in pyarrow, a slice reaching past the end
    is shorter (or empty), and it never reads past the end."""
    g = gda.array(pa.array([1, 2, 3]))
    s = g.slice(offset, length)
    assert pa.array([1, 2, 3]).slice(offset, length).to_pylist() == clamped  # pyarrow's own rule
    assert len(s) == len(clamped)
    assert pa.array(s).to_pylist() == clamped
    s.validate(full=True)


def test_slice_past_the_end_is_clamped_like_pyarrow(leak_check):
    g = gda.array(pa.array([1, None, 3, None, 5], pa.int32()))
    assert g.slice(3, 10).to_pylist() == [None, 5]
    assert len(g.slice(7)) == 0


def test_negative_slice_offset_raises(leak_check):
    g = gda.array(pa.array([1, 2, 3]))
    with pytest.raises(IndexError, match="offset must be non-negative, got -1"):
        g.slice(-1, 1)


def test_validate_passes_on_valid_data(leak_check):
    g = gda.array(pa.array(["a", None, "ccc"]))
    assert g.validate() is None
    assert g.validate(full=True) is None
    assert g.validate(full=False) is None
    assert gda.validate(g) is None
    assert gda.validate(g, full=False) is None


def test_to_pyarrow_of_an_array(leak_check):
    src = pa.array(["x", None, "z"])
    got = gda.array(src).to_pyarrow()
    assert isinstance(got, pa.Array) and not isinstance(got, pa.RecordBatch)
    assert got.equals(src)


def test_array_exports_its_schema(leak_check):
    g = gda.array(pa.array([1.5], pa.float32()))
    assert pa.DataType._import_from_c_capsule(g.__arrow_c_schema__()) == pa.float32()
    assert pa.field(g.schema).type == pa.float32()


def test_array_is_a_one_chunk_stream(leak_check):
    src = pa.array([1, 2, 3])
    g = gda.array(src)
    chunked = pa.chunked_array(g)  # through __arrow_c_stream__
    assert chunked.num_chunks == 1 and chunked.chunk(0).equals(src)
    s = gda.stream(g)
    assert isinstance(s, gda.ArrayStream)
    assert s.schema == g.schema
    chunks = list(s)
    assert len(chunks) == 1
    assert type(chunks[0]) is gda.Array  # not a struct: plain Arrays
    assert pa.array(chunks[0]).equals(src)


def test_array_passed_to_array_is_returned_as_is(leak_check):
    g = gda.array(pa.array([1]))
    assert gda.array(g) is g


def test_struct_array_stays_an_array(leak_check):
    struct = pa.record_batch({"a": [1, 2]}).to_struct_array()
    g = gda.array(struct)
    assert isinstance(g, gda.Array)
    assert g.schema.format == "+s"
    assert pa.array(g).equals(struct)
    assert type(gda.array(pa.record_batch({"a": [1, 2]}))) is gda.Array  # gda.array of a batch too


# ------------------------------------------------------------ constructors


def test_array_prefers_the_device_protocol(leak_check):
    spy = Spy(pa.array([1, 2]))
    gda.array(spy)
    assert spy.calls == ["__arrow_c_device_array__"]
    spy = Spy(pa.record_batch({"a": [1]}))
    gda.record_batch(spy)
    assert spy.calls == ["__arrow_c_device_array__"]


@pytest.mark.parametrize("wrap", [ArrayOnly, DeviceArrayOnly], ids=["c-array", "c-device-array"])
def test_array_from_each_protocol(wrap, leak_check):
    src = pa.array(["a", None, "ccc"])
    g = gda.array(wrap(src))
    assert pa.array(g).equals(src)
    assert g.device == gda.Device.cpu()


def test_stream_prefers_the_device_protocol(leak_check):
    inner = gda.stream(gda.record_batch(pa.record_batch({"a": [1]})))
    spy = Spy(inner)
    s = gda.stream(spy)
    assert spy.calls == ["__arrow_c_device_stream__"]
    assert [b.num_rows for b in s] == [1]


@pytest.mark.parametrize(
    "wrap",
    [StreamOnly, lambda reader: DeviceStreamOnly(gda.stream(reader))],  # pyarrow has no device streams
    ids=["c-stream", "c-device-stream"],
)
def test_stream_from_each_protocol(wrap, leak_check):
    batch = pa.record_batch({"a": [1, 2], "b": ["x", None]})
    s = gda.stream(wrap(pa.RecordBatchReader.from_batches(batch.schema, [batch, batch])))
    got = s.read_all()
    assert len(got) == 2 and all(b.to_pyarrow().equals(batch) for b in got)


def test_schema_of_godevarrow_objects(leak_check):
    batch = pa.record_batch({"a": [1]})
    g = gda.record_batch(batch)
    assert gda.schema(g) == gda.schema(batch.schema)
    assert gda.schema(g.schema) == g.schema
    s = gda.stream(g)
    assert gda.schema(s) == g.schema


# ------------------------------------------------------------- RecordBatch


def sample_batch() -> pa.RecordBatch:
    return pa.record_batch(
        {"a": pa.array([1, 2, 3]), "b": pa.array(["x", None, "z"]), "c": pa.array([0.5, 1.5, None])},
        metadata={"origin": "test"},
    )


def test_record_batch_properties(leak_check):
    batch = sample_batch()
    g = gda.record_batch(batch)
    assert isinstance(g, gda.RecordBatch) and isinstance(g, gda.Array)
    assert g.num_rows == 3 == len(g)
    assert g.num_columns == 3
    assert g.column_names == ["a", "b", "c"]
    assert g.schema.format == "+s"
    assert g.schema.metadata == {b"origin": b"test"}
    assert g.device == gda.Device.cpu()


def test_record_batch_columns(leak_check):
    batch = sample_batch()
    g = gda.record_batch(batch)
    for i, name in enumerate(batch.schema.names):
        by_index, by_name = g.column(i), g.column(name)
        assert isinstance(by_index, gda.Array) and isinstance(by_name, gda.Array)
        assert pa.array(by_index).equals(batch.column(i))
        assert pa.array(by_name).equals(batch.column(i))
        assert by_index.schema.name == name
    assert pa.array(g.column(-1)).equals(batch.column(2))  # negative indices count from the end
    assert [c.schema.name for c in g.columns] == batch.schema.names
    assert [pa.array(c).to_pylist() for c in g.columns] == [c.to_pylist() for c in batch.columns]
    # zero-copy: a column is the batch's buffer
    assert values_address(pa.array(g.column("a"))) == values_address(batch.column(0))
    with pytest.raises(KeyError):
        g.column("nope")
    with pytest.raises(IndexError):  # as pyarrow's RecordBatch.column and Python sequences do
        g.column(3)


def test_record_batch_to_pyarrow(leak_check):
    batch = sample_batch()
    got = gda.record_batch(batch).to_pyarrow()
    assert isinstance(got, pa.RecordBatch)
    assert got.equals(batch)
    assert got.schema.equals(batch.schema, check_metadata=True)
    assert gda.to_pyarrow(gda.record_batch(batch)).equals(batch)  # the module-level function


@pytest.mark.parametrize("offset,length", [(0, 3), (1, 2), (1, 0), (0, 0), (3, 0), (2, 1)], ids=lambda v: str(v))
def test_record_batch_slice(offset, length, leak_check):
    batch = sample_batch()
    g = gda.record_batch(batch).slice(offset, length)
    assert isinstance(g, gda.RecordBatch)
    assert g.num_rows == length
    assert [len(c) for c in g.columns] == [length] * 3
    want = batch.slice(offset, length)
    got = pa.record_batch(g)
    assert [len(c) for c in got.columns] == [length] * 3, "pyarrow sees columns longer than the batch"
    assert got.equals(want)


def test_record_batch_from_a_struct_typed_object(leak_check):
    struct = pa.record_batch({"a": [1, 2]}).to_struct_array()
    g = gda.record_batch(struct)
    assert isinstance(g, gda.RecordBatch)
    assert g.column_names == ["a"]
    assert gda.record_batch(g).column_names == ["a"]


def test_record_batch_of_a_sliced_pyarrow_batch(leak_check):
    batch = sample_batch().slice(1, 2)
    g = gda.record_batch(batch)
    assert g.num_rows == 2
    assert pa.record_batch(g).equals(batch)


# ------------------------------------------------------------- ArrayStream


def three_batch_reader() -> tuple[pa.RecordBatchReader, list[pa.RecordBatch]]:
    schema = pa.schema({"a": pa.int64(), "s": pa.string()}, metadata={"k": "v"})
    batches = [pa.record_batch({"a": [i, i + 1], "s": [str(i), None]}, schema=schema) for i in range(3)]
    return pa.RecordBatchReader.from_batches(schema, batches), batches


def test_stream_properties(leak_check):
    reader, batches = three_batch_reader()
    s = gda.stream(reader)
    assert isinstance(s, gda.ArrayStream)
    assert s.schema == gda.schema(batches[0].schema)
    assert s.schema.metadata == {b"k": b"v"}
    assert s.device_type == gda.DeviceType.CPU
    s.close()


def test_stream_iteration_yields_record_batches(leak_check):
    reader, batches = three_batch_reader()
    got = []
    for item in gda.stream(reader):
        assert isinstance(item, gda.RecordBatch)
        got.append(item.to_pyarrow())
    assert len(got) == 3
    for g, want in zip(got, batches):
        assert g.equals(want)


def test_stream_read_all_returns_the_rest(leak_check):
    reader, batches = three_batch_reader()
    s = gda.stream(reader)
    first = next(s)
    rest = s.read_all()
    assert isinstance(rest, list) and len(rest) == 2
    assert first.to_pyarrow().equals(batches[0])
    assert [b.to_pyarrow().equals(w) for b, w in zip(rest, batches[1:])] == [True, True]
    assert s.read_all() == []
    with pytest.raises(StopIteration):
        next(s)


def test_stream_close_releases_the_producer(leak_check):
    base = live("imported_streams")
    reader, _ = three_batch_reader()
    s = gda.stream(reader)
    assert live("imported_streams") == base + 1
    next(s)
    s.close()
    assert live("imported_streams") == base  # released now, while `s` is still referenced
    s.close()  # idempotent
    with pytest.raises(gda.ArrowInvalid, match="already consumed"):
        list(s)  # a closed stream yields nothing more: it says so


def test_stream_context_manager_closes(leak_check):
    base = live("imported_streams")
    reader, _ = three_batch_reader()
    with gda.stream(reader) as s:
        assert isinstance(s, gda.ArrayStream)
        assert next(s).num_rows == 2
    assert live("imported_streams") == base


def test_stream_of_a_record_batch_is_one_chunk(leak_check):
    batch = sample_batch()
    s = gda.stream(gda.record_batch(batch))
    chunks = list(s)
    assert len(chunks) == 1 and isinstance(chunks[0], gda.RecordBatch)
    assert chunks[0].to_pyarrow().equals(batch)
    # pyarrow reads a RecordBatch's own __arrow_c_stream__ as a one-batch stream
    assert pa.RecordBatchReader.from_stream(gda.record_batch(batch)).read_all().equals(pa.Table.from_batches([batch]))


def test_stream_of_a_stream_is_itself(leak_check):
    s = gda.stream(gda.array(pa.array([1])))
    assert gda.stream(s) is s


def test_non_struct_stream_yields_arrays(leak_check):
    chunked = pa.chunked_array([[1, 2], [3]])
    s = gda.stream(chunked)
    assert s.schema.format == "l"
    chunks = list(s)
    assert [type(c) for c in chunks] == [gda.Array, gda.Array]
    assert [pa.array(c).to_pylist() for c in chunks] == [[1, 2], [3]]


def test_stream_to_pyarrow_reader(leak_check):
    reader, batches = three_batch_reader()
    got = pa.RecordBatchReader.from_stream(gda.stream(reader)).read_all()
    assert got.equals(pa.Table.from_batches(batches))
    assert got.schema.metadata == {b"k": b"v"}
    reader, _ = three_batch_reader()
    assert isinstance(gda.to_pyarrow(gda.stream(reader)), pa.RecordBatchReader)
