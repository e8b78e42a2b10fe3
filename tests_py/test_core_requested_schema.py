"""requested_schema, on both sides of the PyCapsule protocols."""

from __future__ import annotations

import godevarrow as gda
import pyarrow as pa
import pytest


def values_address(arr: pa.Array) -> int:
    return arr.buffers()[1].address


def test_same_schema_is_zero_copy(leak_check):
    src = pa.array([1, 2, 3], pa.int32())
    g = gda.array(src)
    for method in ("__arrow_c_array__", "__arrow_c_device_array__"):
        caps = getattr(g, method)(pa.int32().__arrow_c_schema__())
        importer = (
            pa.Array._import_from_c_capsule if method == "__arrow_c_array__" else pa.Array._import_from_c_device_capsule
        )
        back = importer(*caps)
        assert back.type == pa.int32()
        assert values_address(back) == values_address(src)
    del g, back


@pytest.mark.parametrize(
    "source,target,expected",
    [
        (pa.array([1, None, 3], pa.int32()), pa.int64(), [1, None, 3]),
        (pa.array(["a", None, "ccc"]), pa.large_string(), ["a", None, "ccc"]),
        (pa.array([1.5, 2.5]), pa.float32(), [1.5, 2.5]),
    ],
    ids=["int32-int64", "string-large_string", "float64-float32"],
)
def test_castable_requests_are_cast(source, target, expected, leak_check):
    g = gda.array(source)
    back = pa.Array._import_from_c_capsule(*g.__arrow_c_array__(target.__arrow_c_schema__()))
    assert back.type == target and back.to_pylist() == expected
    back = pa.Array._import_from_c_device_capsule(*g.__arrow_c_device_array__(target.__arrow_c_schema__()))
    assert back.type == target and back.to_pylist() == expected
    del g, back


def test_stream_request_casts_every_batch(leak_check):
    schema = pa.schema({"x": pa.int32()})
    reader = pa.RecordBatchReader.from_batches(schema, [pa.record_batch({"x": [1, 2]}, schema=schema)] * 3)
    stream = gda.stream(reader)
    target = pa.schema({"x": pa.int64()})
    got = pa.RecordBatchReader.from_stream(stream, schema=target).read_all()
    assert got.schema == target and got.column("x").to_pylist() == [1, 2] * 3


@pytest.mark.parametrize(
    "source,target,match",
    [
        (pa.array([1, 2], pa.int64()), pa.struct([("a", pa.int64())]), "(?i)compatible|cast"),
        (pa.array(["abc"]), pa.int64(), "(?i)cast"),
    ],
    ids=["int64-struct", "unparsable-string"],
)
def test_incompatible_requests_raise(source, target, match, leak_check):
    g = gda.array(source)
    with pytest.raises(ValueError, match=match):
        g.__arrow_c_array__(target.__arrow_c_schema__())
    # the producer here is pyarrow, which raises its own error types
    with pytest.raises((ValueError, NotImplementedError), match=match) as info:
        gda.array(source, requested_schema=target)
    info.value.__traceback__ = None  # the traceback's frames would keep arrays alive past the leak check
    del g, info


def test_record_batch_with_other_field_count_or_names_raises(leak_check):
    g = gda.record_batch(pa.record_batch({"a": [1], "b": [2]}))
    with pytest.raises(ValueError, match="fields"):
        g.__arrow_c_array__(pa.schema({"a": pa.int64()}).__arrow_c_schema__())
    with pytest.raises(ValueError, match="names"):
        g.__arrow_c_array__(pa.schema({"a": pa.int64(), "c": pa.int64()}).__arrow_c_schema__())
    ok = g.__arrow_c_array__(pa.schema({"a": pa.int32(), "b": pa.int64()}).__arrow_c_schema__())
    assert pa.RecordBatch._import_from_c_capsule(*ok).schema.field("a").type == pa.int32()
    del g, ok


def test_consumer_applies_request_the_producer_ignored(leak_check):
    class Ignores:
        def __init__(self, arr):
            self.arr = arr

        def __arrow_c_array__(self, requested_schema=None):
            return self.arr.__arrow_c_array__()  # ignores the request

    g = gda.array(Ignores(pa.array([1, 2], pa.int32())), requested_schema=pa.int64())
    assert g.schema.format == "l"
    assert pa.array(g).to_pylist() == [1, 2]
    s = gda.stream(
        pa.RecordBatchReader.from_batches(pa.schema({"x": pa.int32()}), []),
        requested_schema=pa.schema({"x": pa.int64()}),
    )
    assert s.schema.children[0].format == "l"
    del g, s


def test_request_for_a_non_nullable_field_with_nulls_raises(leak_check):
    g = gda.array(pa.array([1, None], pa.int32()))
    with pytest.raises(ValueError, match="null"):
        g.__arrow_c_array__(pa.field("x", pa.int64(), nullable=False).__arrow_c_schema__())
    del g


def test_unproducible_encoding_in_one_field_keeps_the_other_fields_cast(leak_check):
    batch = pa.record_batch({"a": pa.array([1, 2], pa.int32()), "b": pa.array(["x", None])})
    requested = pa.schema([("a", pa.int64()), ("b", pa.string_view())])
    g = gda.record_batch(batch)
    got = pa.RecordBatch._import_from_c_capsule(*g.__arrow_c_array__(requested.__arrow_c_schema__()))
    assert got.schema.field("a").type == pa.int64(), "the castable field is cast"
    assert got.schema.field("b").type in (pa.string(), pa.string_view())
    assert got.to_pydict() == batch.to_pydict()
    table = pa.RecordBatchReader.from_stream(gda.stream(g), schema=requested).read_all()
    assert table.schema.field("a").type == pa.int64()
    assert table.to_pydict() == batch.to_pydict()
