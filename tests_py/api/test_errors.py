"""Bad input raises clear exceptions of the documented types; nothing crashes or leaks."""

from __future__ import annotations

import ctypes
import inspect

import godevarrow as gda
import pyarrow as pa
import pytest
from cabi import ArrowArrayStream, ArrowSchema, capsule_name, make_capsule, struct_of
from conftest import Capsules, DeviceCapsules, DeviceStreamOnly

# ------------------------------------------------------------ stream errors


def failing_reader(good_batches: int, message: str) -> tuple[pa.RecordBatchReader, list[pa.RecordBatch]]:
    schema = pa.schema({"x": pa.int64(), "s": pa.string()})
    batches = [pa.record_batch({"x": [i, i + 1], "s": [f"b{i}", None]}, schema=schema) for i in range(good_batches)]

    def gen():
        yield from batches
        raise ValueError(message)

    return pa.RecordBatchReader.from_batches(schema, gen()), batches


def test_foreign_stream_error_becomes_stream_error(leak_check):
    reader, batches = failing_reader(2, "boom at 3")
    stream = gda.stream(reader)
    got = [next(stream), next(stream)]
    for g, want in zip(got, batches):
        assert g.to_pyarrow().equals(want)  # the batches before the failure are intact
    with pytest.raises(gda.StreamError, match="boom at 3") as info:
        next(stream)
    assert isinstance(info.value, gda.GodevarrowError)
    assert isinstance(info.value, OSError)
    assert info.value.errno != 0
    # the error is reported once (a KeyboardInterrupt must not come back on
    # every read); later reads say the stream ended with it
    with pytest.raises(gda.ArrowInvalid, match="ended with an error.*boom at 3"):
        next(stream)
    # the batches read before the error stay valid after it
    for g, want in zip(got, batches):
        assert g.to_pyarrow().equals(want)
    del info
    stream.close()


def test_foreign_stream_error_in_a_for_loop(leak_check):
    reader, batches = failing_reader(2, "boom at 3")
    seen = []
    with pytest.raises(gda.StreamError, match="boom at 3"):
        for batch in gda.stream(reader):
            seen.append(batch.to_pyarrow())
    assert len(seen) == 2
    assert all(g.equals(w) for g, w in zip(seen, batches))


def test_foreign_stream_error_in_read_all(leak_check):
    reader, _ = failing_reader(1, "boom at 2")
    with pytest.raises(gda.StreamError, match="boom at 2"):
        gda.stream(reader).read_all()


def test_stream_error_passes_through_godevarrow_to_pyarrow(leak_check):
    reader, batches = failing_reader(2, "boom at 3")
    out = pa.RecordBatchReader.from_stream(gda.stream(reader))
    assert out.read_next_batch().equals(batches[0])
    assert out.read_next_batch().equals(batches[1])
    with pytest.raises(pa.ArrowException, match="boom at 3"):
        out.read_next_batch()
    del out


def test_stream_error_passes_through_godevarrow_device_stream(leak_check):
    reader, _ = failing_reader(1, "boom at 2")
    # pyarrow -> godevarrow -> ArrowDeviceArrayStream -> godevarrow
    again = gda.stream(DeviceStreamOnly(gda.stream(reader)))
    assert next(again).num_rows == 2
    with pytest.raises(gda.StreamError, match="boom at 2"):
        next(again)
    again.close()


def test_stream_error_reaches_pyarrow_read_all(leak_check):
    reader, _ = failing_reader(2, "boom at 3")
    with pytest.raises(pa.ArrowException, match="boom at 3"):
        pa.RecordBatchReader.from_stream(gda.stream(reader)).read_all()


# ---------------------------------------------------------- no protocol


@pytest.mark.parametrize("fn", [gda.array, gda.record_batch, gda.stream, gda.schema], ids=lambda f: f.__name__)
@pytest.mark.parametrize("obj", [42, "text", [1, 2, 3], object(), None], ids=["int", "str", "list", "object", "None"])
def test_objects_without_a_protocol_raise_type_error(fn, obj):
    with pytest.raises(TypeError) as info:
        fn(obj)
    assert type(obj).__name__ in str(info.value), f"the message should name the type: {info.value}"


def test_requested_schema_without_a_protocol_raises_type_error(leak_check):
    with pytest.raises(TypeError):
        gda.array(pa.array([1]), requested_schema=42)


# ------------------------------------------------------------ capsules


def schema_capsule_pair() -> tuple[object, object]:
    return pa.array([1, 2, 3]).__arrow_c_array__()


def test_wrong_schema_capsule_name(leak_check):
    memory = ctypes.create_string_buffer(128)
    wrong = make_capsule(ctypes.addressof(memory), b"foo")
    with pytest.raises(ValueError, match="arrow_schema") as info:
        gda.schema(Capsules(schema=wrong))
    assert "foo" in str(info.value), info.value


def test_wrong_array_capsule_name(leak_check):
    memory = ctypes.create_string_buffer(128)
    wrong = make_capsule(ctypes.addressof(memory), b"foo")
    schema, _ = schema_capsule_pair()
    with pytest.raises(ValueError, match="arrow_array"):
        gda.array(Capsules(schema=schema, array=wrong))


def test_array_and_schema_capsules_swapped(leak_check):
    schema, array = schema_capsule_pair()
    with pytest.raises(ValueError, match="arrow_schema"):
        gda.array(Capsules(schema=array, array=schema))


def test_wrong_stream_capsule_name(leak_check):
    memory = ctypes.create_string_buffer(128)
    wrong = make_capsule(ctypes.addressof(memory), b"foo")
    with pytest.raises(ValueError, match="arrow_array_stream"):
        gda.stream(Capsules(stream=wrong))


def test_device_capsule_named_as_plain_array(leak_check):
    # a producer whose __arrow_c_device_array__ returns a plain "arrow_array" capsule
    class Liar:
        def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
            return pa.array([1]).__arrow_c_array__()

    with pytest.raises(ValueError, match="arrow_device_array"):
        gda.array(Liar())


def test_non_capsule_from_a_protocol_method(leak_check):
    with pytest.raises(TypeError, match="PyCapsule"):
        gda.schema(Capsules(schema="not a capsule"))
    with pytest.raises(TypeError, match="PyCapsule named 'arrow_array_stream'"):
        gda.stream(Capsules(stream=12345))


def test_released_schema_struct(leak_check):
    zeroed = ArrowSchema()  # release == NULL: a released struct
    with pytest.raises(gda.ArrowInvalid, match="already released"):
        gda.schema(Capsules(schema=make_capsule(ctypes.addressof(zeroed), b"arrow_schema")))


def test_released_stream_struct(leak_check):
    zeroed = ctypes.create_string_buffer(ctypes.sizeof(ArrowArrayStream))
    with pytest.raises(ValueError, match="(?i)released"):
        gda.stream(Capsules(stream=make_capsule(ctypes.addressof(zeroed), b"arrow_array_stream")))


# ----------------------------------------------------- double consumption


def test_array_capsules_imported_twice(leak_check):
    schema, array = schema_capsule_pair()
    producer = Capsules(schema=schema, array=array)
    assert pa.array(gda.array(producer)).to_pylist() == [1, 2, 3]
    with pytest.raises(ValueError, match="(?i)released"):
        gda.array(producer)
    fresh_schema, _ = schema_capsule_pair()
    with pytest.raises(gda.ArrowInvalid, match="already released"):
        gda.array(Capsules(schema=fresh_schema, array=array))


def test_stream_capsule_imported_twice(leak_check):
    reader = pa.RecordBatchReader.from_batches(pa.schema({"x": pa.int64()}), [pa.record_batch({"x": [1]})])
    cap = reader.__arrow_c_stream__()
    assert capsule_name(cap) == "arrow_array_stream"
    assert [b.num_rows for b in gda.stream(Capsules(stream=cap))] == [1]
    assert not struct_of(cap, ArrowArrayStream).release  # moved out of the capsule (release is NULL)
    with pytest.raises(gda.ArrowInvalid, match="already released"):
        gda.stream(Capsules(stream=cap))


def test_godevarrow_capsule_imported_twice_by_pyarrow(leak_check):
    g = gda.array(pa.array([1, 2]))
    schema, array = g.__arrow_c_array__()
    assert pa.Array._import_from_c_capsule(schema, array).to_pylist() == [1, 2]
    with pytest.raises(pa.ArrowInvalid, match="(?i)released"):
        pa.Array._import_from_c_capsule(g.__arrow_c_schema__(), array)


@pytest.mark.parametrize("export", ["__arrow_c_stream__", "__arrow_c_device_stream__"])
def test_exported_stream_is_consumed(export, leak_check):
    batch = pa.record_batch({"x": [1, 2]})
    stream = gda.stream(gda.record_batch(batch))
    cap = getattr(stream, export)()
    with pytest.raises(gda.GodevarrowError, match="consumed"):
        stream.__arrow_c_stream__()
    with pytest.raises(gda.GodevarrowError, match="consumed"):
        stream.__arrow_c_device_stream__()
    with pytest.raises(gda.GodevarrowError, match="consumed"):
        next(stream)
    with pytest.raises(gda.GodevarrowError, match="consumed"):
        stream.read_all()
    # the exported stream is whole and works
    if export == "__arrow_c_stream__":
        got = pa.RecordBatchReader.from_stream(Capsules(stream=cap)).read_all()
        assert got.equals(pa.Table.from_batches([batch]))
    else:
        got = gda.stream(DeviceStreamOnly(DeviceCapsules(stream=cap))).read_all()
        assert len(got) == 1 and got[0].to_pyarrow().equals(batch)


def test_closed_stream_reads_raise_consumed(leak_check):
    closed = gda.stream(gda.array(pa.array([1])))
    closed.close()
    closed.close()  # idempotent
    with pytest.raises(ValueError, match="consumed"):
        list(closed)


def test_partly_read_stream_exports_the_rest(leak_check):
    schema = pa.schema({"x": pa.int64()})
    batches = [pa.record_batch({"x": [i]}, schema=schema) for i in range(3)]
    stream = gda.stream(pa.RecordBatchReader.from_batches(schema, batches))
    assert next(stream).to_pyarrow().equals(batches[0])
    got = pa.RecordBatchReader.from_stream(stream).read_all()
    assert got.column("x").to_pylist() == [1, 2]


# ------------------------------------------------------------ record batch


@pytest.mark.parametrize(
    "obj", [pa.array([1, 2]), pa.array(["a"]), pa.array([[1]], pa.list_(pa.int8()))], ids=["int64", "string", "list"]
)
def test_record_batch_needs_a_struct(obj, leak_check):
    with pytest.raises(ValueError, match="struct") as info:
        gda.record_batch(obj)
    assert isinstance(info.value, gda.GodevarrowError)
    del info


def test_record_batch_of_a_non_struct_godevarrow_array(leak_check):
    g = gda.array(pa.array([1, 2]))
    with pytest.raises(ValueError, match="struct"):
        gda.record_batch(g)


# ------------------------------------------------------ empty and zero-length


def test_empty_stream_round_trips(leak_check):
    schema = pa.schema({"x": pa.int64(), "s": pa.string()}, metadata={"k": "v"})
    stream = gda.stream(pa.RecordBatchReader.from_batches(schema, []))
    assert stream.schema == gda.schema(schema)
    got = pa.RecordBatchReader.from_stream(stream).read_all()
    assert got.num_rows == 0
    assert got.schema.equals(schema, check_metadata=True)


def test_empty_stream_iterates_nothing(leak_check):
    schema = pa.schema({"x": pa.int64()})
    stream = gda.stream(pa.RecordBatchReader.from_batches(schema, []))
    assert list(stream) == []
    assert stream.read_all() == []


ZERO_LENGTH_TYPES = [
    pa.null(),
    pa.bool_(),
    pa.int8(),
    pa.int64(),
    pa.uint64(),
    pa.float16(),
    pa.float64(),
    pa.decimal128(5, 2),
    pa.decimal256(40, 3),
    pa.date32(),
    pa.timestamp("ns", "UTC"),
    pa.duration("ms"),
    pa.string(),
    pa.large_string(),
    pa.binary(),
    pa.large_binary(),
    pa.binary(4),
    pa.string_view(),
    pa.binary_view(),
    pa.list_(pa.int8()),
    pa.large_list(pa.string()),
    pa.list_(pa.int32(), 2),
    pa.list_view(pa.int16()),
    pa.struct([("a", pa.bool_()), ("b", pa.string())]),
    pa.map_(pa.string(), pa.int32()),
    pa.dictionary(pa.int32(), pa.string()),
    pa.dense_union([pa.field("i", pa.int32()), pa.field("s", pa.string())]),
    pa.sparse_union([pa.field("i", pa.int32())]),
    pa.run_end_encoded(pa.int32(), pa.string()),
]


@pytest.mark.parametrize("typ", ZERO_LENGTH_TYPES, ids=str)
def test_zero_length_arrays_round_trip(typ, leak_check):
    arr = pa.nulls(0, typ)  # pa.array([], typ) cannot build unions
    g = gda.array(arr)
    assert len(g) == 0
    assert g.null_count == 0
    g.validate(full=True)
    back = pa.array(g)
    assert back.type == typ
    assert len(back) == 0
    back.validate(full=True)
    assert back.equals(arr)


# ------------------------------------------------------------ device kwargs


def array_and_streams():
    g = gda.record_batch(pa.record_batch({"x": [1, 2]}))
    return {
        "Array.__arrow_c_device_array__": g.__arrow_c_device_array__,
        "Array.__arrow_c_device_stream__": g.__arrow_c_device_stream__,
        "ArrayStream.__arrow_c_device_stream__": gda.stream(g).__arrow_c_device_stream__,
    }


@pytest.mark.parametrize(
    "method",
    ["Array.__arrow_c_device_array__", "Array.__arrow_c_device_stream__", "ArrayStream.__arrow_c_device_stream__"],
)
def test_unknown_keyword_with_a_value_is_not_implemented(method, leak_check):
    fn = array_and_streams()[method]
    with pytest.raises(NotImplementedError, match="future_option"):
        fn(None, future_option=1)
    with pytest.raises(NotImplementedError, match="stream"):
        fn(None, stream=7)


@pytest.mark.parametrize(
    "method, names",
    [
        pytest.param(
            "Array.__arrow_c_device_array__",
            ["arrow_schema", "arrow_device_array"],
            id="Array.__arrow_c_device_array__",
        ),
        pytest.param(
            "Array.__arrow_c_device_stream__", ["arrow_device_array_stream"], id="Array.__arrow_c_device_stream__"
        ),
        pytest.param(
            "ArrayStream.__arrow_c_device_stream__",
            ["arrow_device_array_stream"],
            id="ArrayStream.__arrow_c_device_stream__",
        ),
    ],
)
def test_unknown_keyword_with_none_is_accepted(method, names, leak_check):
    fn = array_and_streams()[method]
    out = fn(None, future_option=None, stream=None)
    caps = out if isinstance(out, tuple) else (out,)
    assert [capsule_name(c) for c in caps] == names


def test_rejected_keyword_does_not_consume_the_stream(leak_check):
    batch = pa.record_batch({"x": [1, 2]})
    stream = gda.stream(gda.record_batch(batch))
    with pytest.raises(NotImplementedError):
        stream.__arrow_c_device_stream__(None, future_option=1)
    got = pa.RecordBatchReader.from_stream(stream).read_all()
    assert got.equals(pa.Table.from_batches([batch]))


def test_device_methods_take_requested_schema_by_keyword(leak_check):
    g = gda.array(pa.array([1, 2], pa.int32()))
    schema, array = g.__arrow_c_device_array__(requested_schema=None)
    assert pa.Array._import_from_c_device_capsule(schema, array).to_pylist() == [1, 2]


# ----------------------------------------------------------------- CUDA


@pytest.mark.nocuda
@pytest.mark.parametrize("device", ["cuda:0", "cuda", gda.Device.cuda(0), "cuda:1"], ids=str)
def test_cuda_requests_raise_device_error_without_a_driver(device, leak_check):
    g = gda.array(pa.array([1, 2]))
    with pytest.raises(gda.DeviceError) as info:
        g.to_device(device)
    assert isinstance(info.value, RuntimeError)
    assert isinstance(info.value, gda.GodevarrowError)
    assert "cuda" in str(info.value).lower(), info.value
    del info
    assert pa.array(g).to_pylist() == [1, 2]  # the array is unharmed
    assert gda.cuda_device_count() == 0


# ------------------------------------------------------------ exceptions


def package_exception_classes() -> list[type]:
    return [
        obj
        for name, obj in vars(gda).items()
        if inspect.isclass(obj) and issubclass(obj, BaseException) and not name.startswith("_")
    ]


def test_every_exception_class_derives_from_godevarrow_error():
    classes = package_exception_classes()
    assert gda.GodevarrowError in classes
    assert {
        gda.ArrowInvalid,
        gda.ArrowNotImplementedError,
        gda.DeviceError,
        gda.GodevarrowTypeError,
        gda.StreamError,
        gda.InternalError,
        gda.DLPackError,
    } <= set(classes)
    for cls in classes:
        assert issubclass(cls, gda.GodevarrowError), cls


def test_exception_bases_match_the_contract():
    assert issubclass(gda.GodevarrowError, Exception)
    assert issubclass(gda.ArrowInvalid, ValueError)
    assert issubclass(gda.DeviceError, RuntimeError)
    assert issubclass(gda.StreamError, OSError)
    assert issubclass(gda.ArrowNotImplementedError, NotImplementedError)


def raise_no_protocol():
    gda.array(42)


def raise_wrong_capsule():
    memory = ctypes.create_string_buffer(128)
    gda.schema(Capsules(schema=make_capsule(ctypes.addressof(memory), b"foo")))


def raise_unknown_keyword():
    gda.array(pa.array([1])).__arrow_c_device_array__(None, future_option=1)


def raise_not_a_struct():
    gda.record_batch(pa.array([1]))


def raise_consumed():
    s = gda.stream(gda.array(pa.array([1])))
    s.__arrow_c_stream__()
    s.__arrow_c_stream__()


@pytest.mark.parametrize(
    "fn,builtin,documented,phrase",
    [
        pytest.param(
            raise_no_protocol, TypeError, gda.GodevarrowTypeError, "implements none of", id="raise_no_protocol"
        ),
        pytest.param(
            raise_wrong_capsule,
            ValueError,
            gda.ArrowInvalid,
            "PyCapsule named 'arrow_schema'",
            id="raise_wrong_capsule",
        ),
        pytest.param(
            raise_unknown_keyword,
            NotImplementedError,
            gda.ArrowNotImplementedError,
            "keyword 'future_option'",
            id="raise_unknown_keyword",
        ),
        pytest.param(
            raise_not_a_struct, ValueError, gda.ArrowInvalid, "must have a struct type", id="raise_not_a_struct"
        ),
        # docs/troubleshooting.md: "ArrowInvalid: the stream was already consumed"
        pytest.param(raise_consumed, ValueError, gda.ArrowInvalid, "already consumed", id="raise_consumed"),
    ],
)
def test_errors_raised_by_godevarrow_are_godevarrow_errors(fn, builtin, documented, phrase, leak_check):
    """docs/python-guide.md, "Errors": the documented built-in types, and every
    exception of the package derives from gda.GodevarrowError, so one except
    clause catches everything godevarrow itself raises."""
    with pytest.raises(builtin, match=phrase) as info:
        fn()
    assert isinstance(info.value, gda.GodevarrowError), f"{type(info.value).__mro__} is not a GodevarrowError"
    assert type(info.value) is documented, type(info.value).__mro__
    del info
