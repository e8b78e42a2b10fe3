"""Bad input raises clear exceptions; nothing crashes or leaks."""

from __future__ import annotations

import ctypes

import godevarrow as gda
import pyarrow as pa
import pytest
from cabi import ArrowSchema

PyCapsule_New = ctypes.pythonapi.PyCapsule_New
PyCapsule_New.restype = ctypes.py_object
PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class Producer:
    """Returns whatever it was given from the protocol methods."""

    def __init__(self, schema=None, array=None, stream=None):
        self.schema, self.array, self.stream = schema, array, stream

    def __arrow_c_schema__(self):
        return self.schema

    def __arrow_c_array__(self, requested_schema=None):
        return self.schema, self.array

    def __arrow_c_stream__(self, requested_schema=None):
        return self.stream


def failing_reader(fail_at: int, message: str) -> pa.RecordBatchReader:
    schema = pa.schema({"x": pa.int64()})

    def gen():
        for i in range(fail_at):
            yield pa.record_batch({"x": [i, i + 1]}, schema=schema)
        raise ValueError(message)

    return pa.RecordBatchReader.from_batches(schema, gen())


def test_stream_error_reaches_godevarrow_after_earlier_batches(leak_check):
    stream = gda.stream(failing_reader(2, "boom at 3"))
    assert next(stream).to_pyarrow().column(0).to_pylist() == [0, 1]
    assert next(stream).to_pyarrow().column(0).to_pylist() == [1, 2]
    with pytest.raises(gda.StreamError, match="boom at 3") as info:
        next(stream)
    assert isinstance(info.value, gda.GodevarrowError) and isinstance(info.value, OSError)
    assert info.value.errno != 0
    with pytest.raises(gda.ArrowInvalid, match="ended with an error.*boom at 3"):  # reported once, then the end
        next(stream)
    stream.close()


def test_stream_error_reaches_pyarrow_consumer_through_godevarrow(leak_check):
    reader = pa.RecordBatchReader.from_stream(gda.stream(failing_reader(2, "boom at 3")))
    assert reader.read_next_batch().num_rows == 2
    assert reader.read_next_batch().num_rows == 2
    with pytest.raises(pa.ArrowException, match="boom at 3"):
        reader.read_next_batch()
    del reader


def test_objects_without_a_protocol_raise_type_error():
    for fn in (gda.array, gda.record_batch, gda.stream, gda.schema):
        with pytest.raises(TypeError, match="int"):
            fn(42)


def test_wrong_capsule_names_raise_value_error(leak_check):
    buf = ctypes.create_string_buffer(128)
    wrong = PyCapsule_New(ctypes.addressof(buf), b"foo", None)
    with pytest.raises(ValueError, match="arrow_schema.*foo"):
        gda.schema(Producer(schema=wrong))
    s, a = pa.array([1]).__arrow_c_array__()
    with pytest.raises(ValueError, match="arrow_array"):
        gda.array(Producer(schema=s, array=wrong))
    with pytest.raises(ValueError, match="arrow_array_stream"):
        gda.stream(Producer(stream=wrong))
    with pytest.raises(TypeError, match="PyCapsule"):
        gda.schema(Producer(schema="not a capsule"))
    del s, a


def test_released_struct_raises_value_error(leak_check):
    zeroed = ArrowSchema()  # release == NULL: a released struct
    cap = PyCapsule_New(ctypes.addressof(zeroed), b"arrow_schema", None)
    with pytest.raises(gda.ArrowInvalid, match="already released"):
        gda.schema(Producer(schema=cap))


def test_double_consumption_raises(leak_check):
    s, a = pa.array([1, 2, 3]).__arrow_c_array__()
    assert len(gda.array(Producer(schema=s, array=a))) == 3
    s2, _ = pa.array([1]).__arrow_c_array__()
    with pytest.raises(gda.ArrowInvalid, match="already released"):
        gda.array(Producer(schema=s2, array=a))
    cap = pa.RecordBatchReader.from_batches(pa.schema({"x": pa.int64()}), []).__arrow_c_stream__()
    gda.stream(Producer(stream=cap)).close()
    with pytest.raises(gda.ArrowInvalid, match="already released"):
        gda.stream(Producer(stream=cap))


def test_record_batch_needs_a_struct():
    with pytest.raises(ValueError, match="struct"):
        gda.record_batch(pa.array([1, 2]))


def test_empty_stream_round_trips(leak_check):
    schema = pa.schema({"x": pa.int64(), "s": pa.string()})
    stream = gda.stream(pa.RecordBatchReader.from_batches(schema, []))
    assert stream.schema == gda.schema(schema)
    got = pa.RecordBatchReader.from_stream(stream).read_all()
    assert got.num_rows == 0 and got.schema.equals(schema)


@pytest.mark.parametrize(
    "typ",
    [
        pa.int64(),
        pa.string(),
        pa.large_binary(),
        pa.list_(pa.int8()),
        pa.struct([("a", pa.bool_())]),
        pa.dictionary(pa.int32(), pa.string()),
        pa.string_view(),
        pa.null(),
        pa.decimal128(5, 2),
    ],
    ids=str,
)
def test_zero_length_arrays_round_trip(typ, leak_check):
    arr = pa.array([], typ)
    g = gda.array(arr)
    assert len(g) == 0
    g.validate(full=True)
    back = pa.array(g)
    assert back.type == typ and len(back) == 0
    del g, back


def test_device_kwargs_rule():
    g = gda.array(pa.array([1]))
    assert len(g.__arrow_c_device_array__(None, future_option=None)) == 2
    with pytest.raises(NotImplementedError, match="future_option"):
        g.__arrow_c_device_array__(None, future_option=1)
    assert gda.stream(g).__arrow_c_device_stream__(None, stream=None) is not None
    with pytest.raises(NotImplementedError, match="stream"):
        gda.stream(g).__arrow_c_device_stream__(None, stream=7)


def test_consumed_stream_cannot_be_exported_or_read_again(leak_check):
    stream = gda.stream(gda.record_batch(pa.record_batch({"x": [1, 2]})))
    cap = stream.__arrow_c_stream__()
    with pytest.raises(ValueError, match="consumed"):
        stream.__arrow_c_stream__()
    with pytest.raises(ValueError, match="consumed"):
        next(stream)
    assert pa.RecordBatchReader.from_stream(_Cap(cap)).read_all().num_rows == 2
    closed = gda.stream(gda.array(pa.array([1])))
    closed.close()
    closed.close()  # idempotent
    with pytest.raises(ValueError, match="consumed"):
        list(closed)


class _Cap:
    def __init__(self, cap):
        self.cap = cap

    def __arrow_c_stream__(self, requested_schema=None):
        return self.cap


@pytest.mark.nocuda
def test_cuda_requests_raise_device_error_without_a_driver():
    g = gda.array(pa.array([1, 2]))
    with pytest.raises(gda.DeviceError, match="CUDA"):
        g.to_device("cuda:0")
    assert gda.cuda_device_count() == 0


def test_every_exception_derives_from_godevarrow_error():
    for cls in (
        gda.ArrowInvalid,
        gda.ArrowNotImplementedError,
        gda.DeviceError,
        gda.GodevarrowTypeError,
        gda.StreamError,
        gda.InternalError,
        gda.DLPackError,
    ):
        assert issubclass(cls, gda.GodevarrowError), cls
    assert issubclass(gda.ArrowInvalid, ValueError)
    assert issubclass(gda.DeviceError, RuntimeError)
    assert issubclass(gda.ArrowNotImplementedError, NotImplementedError)
