"""requested_schema on both sides of the PyCapsule protocols.

The PyCapsule spec: the producer converts to the requested schema best-effort
(it may return its own schema when it cannot); a request that is not
compatible with the data (say another number of fields) raises. godevarrow is
the producer in the first half of this file and the consumer (pyarrow,
nanoarrow and arro3 producing) in the second.
"""

from __future__ import annotations

import re

import godevarrow as gda
import pyarrow as pa
import pytest
from cabi import capsule_name
from conftest import values_address

IMPORT_ARRAY = {
    "__arrow_c_array__": pa.Array._import_from_c_capsule,
    "__arrow_c_device_array__": pa.Array._import_from_c_device_capsule,
}
IMPORT_BATCH = {
    "__arrow_c_array__": pa.RecordBatch._import_from_c_capsule,
    "__arrow_c_device_array__": pa.RecordBatch._import_from_c_device_capsule,
}
ARRAY_METHODS = pytest.mark.parametrize("method", list(IMPORT_ARRAY))


def export_array(g: gda.Array, method: str, requested) -> pa.Array:
    """g exported through `method` with the requested type (as a capsule, as the spec says) into pyarrow."""
    return IMPORT_ARRAY[method](*getattr(g, method)(requested.__arrow_c_schema__()))


def export_batch(g: gda.RecordBatch, method: str, requested) -> pa.RecordBatch:
    return IMPORT_BATCH[method](*getattr(g, method)(requested.__arrow_c_schema__()))


def export_stream(obj, requested) -> pa.Table:
    return pa.RecordBatchReader.from_stream(obj, schema=requested).read_all()


# ================================================== godevarrow as producer


@ARRAY_METHODS
@pytest.mark.parametrize(
    "src",
    [pa.array([1, None, 3], pa.int32()), pa.array([0.5, 1.5]), pa.array([True, None]), pa.array([1, 2], pa.uint16())],
    ids=["int32", "float64", "bool", "uint16"],
)
def test_same_schema_is_a_zero_copy_no_op(method, src, leak_check):
    g = gda.array(src)
    back = export_array(g, method, src.type)
    assert back.type == src.type
    assert back.equals(src)
    assert values_address(back) == values_address(src), "the same schema must not copy"


@ARRAY_METHODS
def test_same_schema_of_a_string_array_is_zero_copy(method, leak_check):
    src = pa.array(["a", None, "ccc"])
    back = export_array(gda.array(src), method, pa.string())
    assert back.equals(src)
    assert [b.address for b in back.buffers()[1:]] == [b.address for b in src.buffers()[1:]]


@ARRAY_METHODS
def test_same_schema_of_a_batch_is_zero_copy(method, leak_check):
    batch = pa.record_batch({"a": pa.array([1, 2], pa.int32()), "s": ["x", "y"]}, metadata={"k": "v"})
    back = export_batch(gda.record_batch(batch), method, batch.schema)
    assert back.equals(batch)
    assert values_address(back.column(0)) == values_address(batch.column(0))


CASTS = [
    (pa.array([1, None, 3], pa.int32()), pa.int64()),
    (pa.array([1, None, 3], pa.int32()), pa.float64()),
    (pa.array(["a", None, "ccc"]), pa.large_string()),
    (pa.array(["a", None, "ccc"], pa.large_string()), pa.string()),
    (pa.array([b"\x00x", None], pa.binary()), pa.large_binary()),
    (pa.array([[1], None, [2, 3]], pa.list_(pa.int64())), pa.large_list(pa.int64())),
    (pa.array([1, 2], pa.timestamp("s")), pa.timestamp("ms")),
    (pa.array([1.5, 2.5]), pa.float32()),
]
CAST_IDS = [
    "int32-int64",
    "int32-float64",
    "string-large_string",
    "large_string-string",
    "binary-large_binary",
    "list-large_list",
    "timestamp_s-ms",
    "float64-float32",
]


@ARRAY_METHODS
@pytest.mark.parametrize("src,target", CASTS, ids=CAST_IDS)
def test_castable_request_is_cast(method, src, target, leak_check):
    g = gda.array(src)
    back = export_array(g, method, target)
    assert back.type == target
    assert back.to_pylist() == src.to_pylist()
    back.validate(full=True)
    assert g.schema == gda.schema(src.type)  # the godevarrow array itself is unchanged


@ARRAY_METHODS
@pytest.mark.parametrize(
    "target",
    [pa.string_view(), pa.dictionary(pa.int32(), pa.string()), pa.large_string()],
    ids=["string_view", "dictionary", "large_string"],
)
def test_string_representation_request_is_honoured_or_ignored(method, target, leak_check):
    """The spec's own example: strings may be offered as 32/64-bit offsets, views or a
    dictionary. A producer converts best-effort, or returns its own representation;
    raising 'not compatible' for the same strings is not an option."""
    src = pa.array(["a", None, "ccc", "a"])
    back = export_array(gda.array(src), method, target)
    assert back.type in (target, src.type)
    assert back.to_pylist() == src.to_pylist()


INCOMPATIBLE = pytest.mark.parametrize(
    "src,target,match,why",
    [
        (pa.array([1, 2], pa.int64()), pa.struct([("a", pa.int64())]), r"struct", r"(?i)compatible|cast"),
        (pa.array(["abc", "1"]), pa.int64(), r"abc|int64", r"(?i)cast"),
    ],
    ids=["int64-struct", "unparsable-string"],
)


@ARRAY_METHODS
@INCOMPATIBLE
def test_incompatible_request_raises(method, src, target, match, why, leak_check):
    """No struct can hold an int64, no int64 is "abc": the export raises, with a
    message naming the requested type or the value, and saying why."""
    g = gda.array(src)
    with pytest.raises(ValueError, match=match) as info:
        getattr(g, method)(target.__arrow_c_schema__())
    assert isinstance(info.value, gda.GodevarrowError)
    assert re.search(why, str(info.value)), info.value
    del info
    assert pa.array(g).equals(src)  # still exportable as is


@ARRAY_METHODS
@pytest.mark.parametrize(
    "src,target",
    [
        (pa.array([1000, 1], pa.int32()), pa.int8()),
        (pa.array([-5, 1], pa.int32()), pa.uint32()),
        (pa.array([1.5, 2.0]), pa.int64()),
    ],
    ids=["int-overflow", "negative-to-unsigned", "float-truncation"],
)
def test_lossy_request_never_returns_wrong_values(method, src, target, leak_check):
    """Best effort: raise, or keep the data's own type; wrapped integers or
    truncated floats under the requested type are not an option."""
    g = gda.array(src)
    try:
        back = export_array(g, method, target)
    except ValueError as exc:
        assert isinstance(exc, gda.GodevarrowError)
        return
    assert back.type == src.type, f"got {back.to_pylist()} as {back.type}"
    assert back.equals(src)


@ARRAY_METHODS
@pytest.mark.parametrize(
    "requested",
    [
        pa.schema({"a": pa.int64()}),
        pa.schema({"a": pa.int64(), "b": pa.string(), "c": pa.int64()}),
    ],
    ids=["fewer-fields", "more-fields"],
)
def test_batch_request_with_another_field_count_raises(method, requested, leak_check):
    g = gda.record_batch(pa.record_batch({"a": [1], "b": ["x"]}))
    with pytest.raises(ValueError, match="fields"):
        getattr(g, method)(requested.__arrow_c_schema__())


@ARRAY_METHODS
def test_batch_request_with_other_field_names_raises(method, leak_check):
    g = gda.record_batch(pa.record_batch({"a": [1], "b": ["x"]}))
    with pytest.raises(ValueError, match="names"):
        getattr(g, method)(pa.schema({"a": pa.int64(), "c": pa.string()}).__arrow_c_schema__())


@ARRAY_METHODS
def test_batch_request_casts_fields(method, leak_check):
    batch = pa.record_batch({"a": pa.array([1, None], pa.int32()), "b": ["x", None]})
    target = pa.schema({"a": pa.int64(), "b": pa.large_string()})
    back = export_batch(gda.record_batch(batch), method, target)
    assert back.schema == target
    assert back.to_pydict() == batch.to_pydict()


@ARRAY_METHODS
def test_batch_request_narrows_a_field_whose_values_fit(method, leak_check):
    g = gda.record_batch(pa.record_batch({"a": [1], "b": [2]}))
    back = export_batch(g, method, pa.schema({"a": pa.int32(), "b": pa.int64()}))
    assert back.schema.field("a").type == pa.int32()
    assert back.to_pydict() == {"a": [1], "b": [2]}


def test_request_for_a_non_nullable_field_with_nulls_raises(leak_check):
    g = gda.array(pa.array([1, None], pa.int32()))
    with pytest.raises(ValueError, match="null"):
        g.__arrow_c_array__(pa.field("x", pa.int64(), nullable=False).__arrow_c_schema__())


def test_unproducible_encoding_in_one_field_keeps_the_other_fields_cast(leak_check):
    batch = pa.record_batch({"a": pa.array([1, 2], pa.int32()), "b": pa.array(["x", None])})
    requested = pa.schema([("a", pa.int64()), ("b", pa.string_view())])
    g = gda.record_batch(batch)
    got = pa.RecordBatch._import_from_c_capsule(*g.__arrow_c_array__(requested.__arrow_c_schema__()))
    assert got.schema.field("a").type == pa.int64(), "the castable field is cast"
    assert got.schema.field("b").type in (pa.string(), pa.string_view())
    assert got.to_pydict() == batch.to_pydict()
    table = export_stream(gda.stream(g), requested)
    assert table.schema.field("a").type == pa.int64()
    assert table.to_pydict() == batch.to_pydict()


# ---------------------------------------------------------------- streams


def int32_reader(n: int = 3) -> tuple[pa.RecordBatchReader, list[pa.RecordBatch]]:
    schema = pa.schema({"x": pa.int32(), "s": pa.string()})
    batches = [pa.record_batch({"x": [i, None], "s": [str(i), "z"]}, schema=schema) for i in range(n)]
    return pa.RecordBatchReader.from_batches(schema, batches), batches


def test_stream_same_schema_is_zero_copy(leak_check):
    reader, batches = int32_reader()
    got = export_stream(gda.stream(reader), batches[0].schema)
    assert got.equals(pa.Table.from_batches(batches))
    got_addresses = [values_address(c) for c in got.column("x").chunks]
    assert got_addresses == [values_address(b.column(0)) for b in batches]


def test_array_stream_same_schema_is_zero_copy(leak_check):
    batch = pa.record_batch({"x": pa.array([1, 2], pa.int32())})
    got = export_stream(gda.record_batch(batch), batch.schema)
    assert got.equals(pa.Table.from_batches([batch]))
    assert values_address(got.column(0).chunk(0)) == values_address(batch.column(0))


def test_stream_castable_request_casts_every_batch(leak_check):
    reader, batches = int32_reader()
    target = pa.schema({"x": pa.int64(), "s": pa.large_string()})
    got = export_stream(gda.stream(reader), target)
    assert got.schema == target
    assert got.num_rows == 6
    assert got.to_pydict() == pa.Table.from_batches(batches).to_pydict()


def test_stream_request_with_another_field_count_raises(leak_check):
    reader, _ = int32_reader()
    stream = gda.stream(reader)
    with pytest.raises(ValueError, match="field"):
        stream.__arrow_c_stream__(pa.schema({"x": pa.int64()}).__arrow_c_schema__())


def test_stream_incompatible_request_raises_at_export_or_read(leak_check):
    reader, _ = int32_reader()
    stream = gda.stream(reader)
    target = pa.schema({"x": pa.struct([("a", pa.int32())]), "s": pa.string()})
    with pytest.raises((ValueError, NotImplementedError, pa.ArrowException), match="struct"):
        export_stream(stream, target)


@pytest.mark.parametrize("method", ["__arrow_c_stream__", "__arrow_c_device_stream__"])
def test_array_one_chunk_stream_request(method, leak_check):
    batch = pa.record_batch({"x": pa.array([1, 2], pa.int32())})
    g = gda.record_batch(batch)
    cap = getattr(g, method)(pa.schema({"x": pa.int64()}).__arrow_c_schema__())

    class Cap:
        pass

    holder = Cap()
    setattr(holder, method, lambda requested_schema=None, **kw: cap)
    got = gda.stream(holder).read_all()
    assert len(got) == 1
    assert got[0].to_pyarrow().schema == pa.schema({"x": pa.int64()})
    assert got[0].to_pyarrow().column(0).to_pylist() == [1, 2]


def test_array_stream_export_requested_via_pyarrow(leak_check):
    batch = pa.record_batch({"x": pa.array([1, 2], pa.int32())})
    got = export_stream(gda.record_batch(batch), pa.schema({"x": pa.int64()}))
    assert got.schema == pa.schema({"x": pa.int64()}) and got.column(0).to_pylist() == [1, 2]
    chunked = pa.chunked_array(gda.array(pa.array([1, 2], pa.int32())), type=pa.int64())
    assert chunked.type == pa.int64() and chunked.to_pylist() == [1, 2]


# ================================================== godevarrow as consumer


def schema_forms(typ):
    """The same requested type as the objects a user might pass."""
    forms = {"pa.DataType": typ, "pa.Field": pa.field("", typ), "gda.Schema": gda.schema(typ)}
    return forms


@pytest.mark.parametrize("form", ["pa.DataType", "pa.Field", "gda.Schema"])
def test_consumer_request_same_schema_is_zero_copy(form, leak_check):
    src = pa.array([1, None, 3], pa.int32())
    g = gda.array(src, requested_schema=schema_forms(pa.int32())[form])
    assert g.schema == gda.schema(pa.int32())
    assert values_address(pa.array(g)) == values_address(src)


@pytest.mark.parametrize("form", ["pa.DataType", "pa.Field", "gda.Schema"])
def test_consumer_request_castable(form, leak_check):
    src = pa.array([1, None, 3], pa.int32())
    g = gda.array(src, requested_schema=schema_forms(pa.int64())[form])
    assert g.schema.format == "l"
    assert pa.array(g).to_pylist() == [1, None, 3]


def test_consumer_request_string_to_large_string(leak_check):
    g = gda.array(pa.array(["a", None]), requested_schema=pa.large_string())
    assert g.schema.format == "U"
    assert pa.array(g).to_pylist() == ["a", None]


def test_consumer_request_is_passed_to_the_producer(leak_check):
    seen = []

    class Producer:
        def __arrow_c_array__(self, requested_schema=None):
            seen.append(requested_schema)
            return pa.array([1, 2], pa.int32()).__arrow_c_array__(requested_schema)

    g = gda.array(Producer(), requested_schema=pa.int64())
    assert len(seen) == 1 and seen[0] is not None
    assert capsule_name(seen[0]) == "arrow_schema"  # the spec passes a schema capsule
    assert g.schema.format == "l"


def test_consumer_request_via_nanoarrow_schema(leak_check):
    na = pytest.importorskip("nanoarrow")
    g = gda.array(pa.array([1, 2], pa.int32()), requested_schema=na.c_schema(na.int64()))
    assert g.schema.format == "l"
    assert pa.array(g).to_pylist() == [1, 2]


@INCOMPATIBLE
def test_consumer_request_incompatible_raises(src, target, match, why, leak_check):
    # the producer here is pyarrow, which raises its own ValueError / NotImplementedError subclasses
    with pytest.raises((ValueError, NotImplementedError), match=match) as info:
        gda.array(src, requested_schema=target)
    assert re.search(why, str(info.value)), info.value
    del info


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


def test_consumer_record_batch_request_with_another_field_count_raises(leak_check):
    batch = pa.record_batch({"a": [1], "b": [2]})
    with pytest.raises(ValueError, match="requested schema has 1 fields but the data has 2") as info:
        gda.record_batch(batch, requested_schema=pa.schema({"a": pa.int64()}))
    assert isinstance(info.value, gda.GodevarrowError)


def test_a_requested_cast_of_a_sliced_bool_array_casts_its_own_values(leak_check):
    src = pa.array([True, None, False, True, False]).slice(1)
    got = pa.array(gda.array(src), type=pa.string())
    assert got.to_pylist() == src.cast(pa.string()).to_pylist() == [None, "false", "true", "false"]


def test_a_requested_cast_of_a_sliced_float_array_refuses_nan(leak_check):
    src = pa.array([1.5, None, float("nan"), 2.0]).slice(1)
    with pytest.raises(pa.ArrowInvalid, match="truncated"):
        src.cast(pa.int32())  # pyarrow's rule
    with pytest.raises(gda.ArrowInvalid, match="NaN was truncated"):
        gda.array(src).__arrow_c_array__(requested_schema=pa.int32().__arrow_c_schema__())


SLICED_CASTS = [
    (pa.array([b"ab", None, b"cd", b"ef"], pa.binary(2)), pa.binary()),
    (pa.array([b"ab", None, b"cd", b"ef"], pa.binary(2)), pa.large_binary()),
    (pa.array([1, None, 3, 4], pa.int32()), pa.string()),
    (pa.array([1, None, 3, 4], pa.int64()), pa.float64()),
    (pa.array(["1", None, "3", "4"]), pa.int64()),
    (pa.array(["a", None, "c", "d"]), pa.large_string()),
    (pa.array([True, None, False, True]), pa.int8()),
    (pa.array([1.5, None, 2.5, -1.0]), pa.float32()),
    (pa.array([0, None, 86_400_000, 172_800_000], pa.date64()), pa.date32()),
]


@pytest.mark.parametrize("src, target", SLICED_CASTS, ids=[f"{s.type}-{t}" for s, t in SLICED_CASTS])
@pytest.mark.parametrize("start", [1, 3])
def test_a_requested_cast_of_a_sliced_array_gives_pyarrows_values(src, target, start, leak_check):
    sliced = src.slice(start)
    got = pa.array(gda.array(sliced), type=target)
    assert got.to_pylist() == sliced.cast(target).to_pylist()


def test_consumer_record_batch_request_castable(leak_check):
    batch = pa.record_batch({"a": pa.array([1], pa.int32()), "b": ["x"]})
    target = pa.schema({"a": pa.int64(), "b": pa.large_string()})
    g = gda.record_batch(batch, requested_schema=target)
    assert g.schema == gda.schema(target)
    assert g.to_pyarrow().to_pydict() == {"a": [1], "b": ["x"]}


def test_consumer_stream_request_castable(leak_check):
    reader, batches = int32_reader()
    target = pa.schema({"x": pa.int64(), "s": pa.string()})
    s = gda.stream(reader, requested_schema=target)
    assert s.schema == gda.schema(target)
    got = [b.to_pyarrow() for b in s]
    assert [b.schema for b in got] == [target] * 3
    assert [b.column(0).to_pylist() for b in got] == [b.column(0).to_pylist() for b in batches]


def test_consumer_stream_request_with_another_field_count_raises(leak_check):
    reader, _ = int32_reader()
    with pytest.raises(ValueError, match="requested schema has 1 fields but the data has 2") as info:
        gda.stream(reader, requested_schema=pa.schema({"x": pa.int32()}))
    assert isinstance(info.value, gda.GodevarrowError)


def test_consumer_request_arro3_producer(leak_check):
    a3 = pytest.importorskip("arro3.core")
    src = a3.Array.from_arrow(pa.array([1, 2], pa.int32()))
    g = gda.array(src, requested_schema=pa.int64())
    assert g.schema.format == "l"
    assert pa.array(g).to_pylist() == [1, 2]
