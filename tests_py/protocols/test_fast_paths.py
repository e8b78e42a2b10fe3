"""The fixed-cost fast paths (docs/design.md, "The fixed cost"): the C base
class of Array, the one-call import, the schema import cache and the hand-over
of unread streams. Each must behave exactly as the general path does."""

import gc

import godevarrow as gda
import numpy as np
import pyarrow as pa
import pytest
from conftest import ArrayOnly, DeviceArrayOnly, StreamOnly, live, run_python
from godevarrow import _godevarrow as lib

pytestmark = pytest.mark.usefixtures("leak_check")


def test_array_base_is_not_made_from_arbitrary_objects():
    with pytest.raises(gda.GodevarrowTypeError, match="made by godevarrow.array"):
        gda.Array(42)
    with pytest.raises(gda.GodevarrowTypeError, match="keyword"):
        gda.Array(handle=None)
    with pytest.raises(TypeError):
        gda.Array()


def test_a_second_view_keeps_the_first_alive():
    arr = gda.array(pa.array([{"a": 1}, {"a": 2}]))
    batch = gda.RecordBatch(arr._h)
    del arr
    gc.collect()
    assert batch.to_pyarrow().column(0).to_pylist() == [1, 2]


def test_device_array_protocol_fast_and_general_calls_agree():
    arr = gda.array(pa.array([1, None, 3]))
    for call in (
        lambda: arr.__arrow_c_device_array__(),
        lambda: arr.__arrow_c_device_array__(None),
        lambda: arr.__arrow_c_device_array__(requested_schema=None),
        lambda: arr.__arrow_c_device_array__(None, future_keyword=None),
        lambda: arr.__arrow_c_device_array__(pa.int64().__arrow_c_schema__()),
    ):
        assert pa.Array._import_from_c_device_capsule(*call()).to_pylist() == [1, None, 3]
    with pytest.raises(gda.ArrowNotImplementedError, match="future_keyword"):
        arr.__arrow_c_device_array__(future_keyword=1)
    with pytest.raises(TypeError):
        arr.__arrow_c_device_array__(None, None)


def test_array_protocol_fast_and_general_calls_agree():
    arr = gda.array(pa.array(["x", None]))
    assert pa.Array._import_from_c_capsule(*arr.__arrow_c_array__()).to_pylist() == ["x", None]
    got = pa.Array._import_from_c_capsule(*arr.__arrow_c_array__(pa.large_string().__arrow_c_schema__()))
    assert got.type == pa.large_string() and got.to_pylist() == ["x", None]
    with pytest.raises(TypeError):
        arr.__arrow_c_array__(None, unexpected=1)


@pytest.mark.fakecuda
def test_array_protocol_copies_device_data_to_the_host():
    arr = gda.array(pa.array([1, 2, 3])).to_device("cuda:0")
    assert pa.Array._import_from_c_capsule(*arr.__arrow_c_array__()).to_pylist() == [1, 2, 3]


@pytest.mark.parametrize("wrap", [lambda a: a, ArrayOnly, DeviceArrayOnly], ids=["pyarrow", "plain", "device"])
def test_one_call_import_gives_the_requested_class(wrap):
    source = pa.array([{"a": 1}])
    arr = gda.array(wrap(source))
    batch = gda.record_batch(wrap(source))
    assert type(arr) is gda.Array and type(batch) is gda.RecordBatch
    assert batch.to_pyarrow().to_pylist() == [{"a": 1}]


def test_one_call_import_reports_what_the_general_path_does():
    class NotAPair:
        def __arrow_c_device_array__(self, requested_schema=None):
            return pa.array([1]).__arrow_c_device_array__()[0]

    with pytest.raises(gda.GodevarrowTypeError, match="must return a .schema capsule, array capsule. tuple"):
        gda.array(NotAPair())

    class Swapped:
        def __arrow_c_array__(self, requested_schema=None):
            s, a = pa.array([1]).__arrow_c_array__()
            return a, s

    with pytest.raises(gda.ArrowInvalid, match="arrow_schema"):
        gda.array(Swapped())
    with pytest.raises(gda.ArrowInvalid, match="struct"):
        gda.record_batch(pa.array([1]))
    assert lib.import_from(object(), gda.Array, None) is NotImplemented
    # a request is passed to the producer (pyarrow casts); our own arrays are
    # the Python layer's to return as they are
    asked = lib.import_from(pa.array([1]), gda.Array, pa.int8().__arrow_c_schema__())
    assert type(asked) is gda.Array and asked.schema.format == "c"
    assert lib.import_from(gda.array(pa.array([1])), gda.Array, None) is NotImplemented
    with pytest.raises(gda.GodevarrowTypeError, match="subclass of ArrayBase"):
        lib.import_from(pa.array([1]), object, None)


def test_schema_cache_never_confuses_schemas():
    # the same structure with different names, flags or metadata: each import
    # must keep its own
    fields = [
        pa.field("a", pa.int64()),
        pa.field("b", pa.int64()),
        pa.field("a", pa.int64(), nullable=False),
        pa.field("a", pa.int64(), metadata={"k": "v"}),
        pa.field("a", pa.int64(), metadata={"k": "w"}),
        pa.field("a", pa.int32()),
    ]
    for _ in range(2):  # the second round is served from the cache
        for f in fields:
            got = gda.schema(f).to_pyarrow()
            assert got.equals(f, check_metadata=True), (got, f)
            arr = gda.array(pa.array([1], f.type), requested_schema=None)
            assert arr.schema.format == gda.schema(f.type).format


# The schema import cache's bounds, as SECURITY.md documents them.
SCHEMA_CACHE_ENTRIES = 256
SCHEMA_CACHE_BYTES = 64 << 20


def test_schema_cache_is_bounded():
    most = 0
    for i in range(600):  # more distinct schemas than the cache holds
        assert gda.schema(pa.field(f"f{i}", pa.int8())).name == f"f{i}"
        size = lib.debug_counters()
        assert 0 < size.schema_cache_entries <= SCHEMA_CACHE_ENTRIES, (i, size)
        assert 0 < size.schema_cache_bytes <= SCHEMA_CACHE_BYTES, (i, size)
        most = max(most, size.schema_cache_entries)
    assert most == SCHEMA_CACHE_ENTRIES  # it filled up, then made room


def test_unread_stream_is_handed_over():
    batches = [pa.record_batch({"x": [i, i + 1]}) for i in range(3)]
    reader = pa.RecordBatchReader.from_batches(batches[0].schema, batches)
    before = live("exported_streams")
    stream = gda.stream(reader)
    capsule = stream.__arrow_c_stream__()
    # the producer's own stream: nothing of godevarrow stands in between
    assert live("exported_streams") == before
    got = pa.RecordBatchReader._import_from_c_capsule(capsule).read_all()
    assert got.to_batches() == batches


def test_read_stream_is_wrapped():
    batches = [pa.record_batch({"x": [i]}) for i in range(3)]
    stream = gda.stream(StreamOnly(pa.RecordBatchReader.from_batches(batches[0].schema, batches)))
    first = next(stream)
    assert first.to_pyarrow() == batches[0]
    rest = pa.RecordBatchReader.from_stream(stream).read_all()
    assert rest.to_batches() == batches[1:]


def test_handed_over_stream_reports_producer_errors():
    def failing():
        yield pa.record_batch({"x": [1]})
        raise ValueError("boom from the producer")

    reader = pa.RecordBatchReader.from_batches(pa.schema({"x": pa.int64()}), failing())
    out = pa.RecordBatchReader.from_stream(gda.stream(reader))
    assert out.read_next_batch().to_pylist() == [{"x": 1}]
    # the producer's ValueError, through pyarrow's own stream handed back
    with pytest.raises(pa.ArrowInvalid, match="boom from the producer"):
        out.read_next_batch()


def test_large_round_trip_is_zero_copy():
    source = pa.array(np.arange(1 << 20, dtype=np.int64))
    back = pa.array(gda.array(source))
    assert back.buffers()[1].address == source.buffers()[1].address


# pyarrow's own types are asked for the plain protocol first (docs/design.md,
# "Protocol order for pyarrow"). Real pyarrow holds no non-CPU data without a
# CUDA build, so a stand-in pyarrow, in a fresh interpreter, shows which
# methods get called.
_FAKE_PYARROW_MODULES = """
import json, os, sys, types
import numpy as np

fake = types.ModuleType("pyarrow")
fake.__version__ = os.environ["FAKE_PYARROW_VERSION"]
fake_lib = types.ModuleType("pyarrow.lib")
sys.modules["pyarrow"], sys.modules["pyarrow.lib"] = fake, fake_lib
import godevarrow as gda
calls = []
"""

_FAKE_PYARROW = (
    _FAKE_PYARROW_MODULES
    + """
SOURCE = gda.array(np.arange(3, dtype=np.int64))

class Array:
    def __init__(self, plain_raises=None):
        self.plain_raises = plain_raises
    def __arrow_c_array__(self, requested_schema=None):
        calls.append("plain")
        if self.plain_raises:
            raise self.plain_raises
        return SOURCE.__arrow_c_array__()
    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        calls.append("device")
        return SOURCE.__arrow_c_device_array__()

class RecordBatch(Array):
    pass

class Int64Array(Array):
    pass

class Overrides(Array):
    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        return Array.__arrow_c_device_array__(self)

class NotPyarrow:
    __arrow_c_array__ = Array.__arrow_c_array__
    __arrow_c_device_array__ = Array.__arrow_c_device_array__
    plain_raises = None

fake_lib.Array, fake_lib.RecordBatch = Array, RecordBatch
cases = {
    "array": Int64Array(),
    "batch": RecordBatch(),
    "not_on_cpu": Int64Array(NotImplementedError("Implemented only for data on CPU device")),
    "plain_fails": Int64Array(ValueError("boom")),
    "override": Overrides(),
    "not_pyarrow": NotPyarrow(),
}
out = {}
for name, obj in cases.items():
    calls.clear()
    try:
        got = np.from_dlpack(gda.array(obj)).tolist()
    except Exception as e:
        got = f"{type(e).__name__}: {e}"
    out[name] = [got, list(calls)]
print(json.dumps(out))
"""
)


def _protocol_calls(pyarrow_version: str) -> dict:
    import json

    r = run_python(_FAKE_PYARROW, env={"FAKE_PYARROW_VERSION": pyarrow_version})
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_pyarrow_types_are_asked_for_the_plain_protocol_first():
    got = _protocol_calls("18.0.0")
    assert got["array"] == [[0, 1, 2], ["plain"]]
    assert got["batch"] == [[0, 1, 2], ["plain"]]
    # data not on the CPU: pyarrow raises, and the device protocol says where
    assert got["not_on_cpu"] == [[0, 1, 2], ["plain", "device"]]
    # any other error is the producer's answer (as the package's error, docs/python-guide.md)
    assert got["plain_fails"] == ["ArrowInvalid: the Int64Array producer raised ValueError: boom", ["plain"]]
    # an override, or a look-alike outside pyarrow, keeps the general order
    assert got["override"] == [[0, 1, 2], ["device"]]
    assert got["not_pyarrow"] == [[0, 1, 2], ["device"]]


def test_pyarrow_before_18_keeps_the_general_order():
    # pyarrow 17's RecordBatch.__arrow_c_array__ exported non-CPU data as if it were host data
    got = _protocol_calls("17.0.0")
    assert got["array"] == [[0, 1, 2], ["device"]]
    assert got["not_on_cpu"] == [[0, 1, 2], ["device"]]


def test_real_pyarrow_objects_import_alike_through_either_protocol():
    for obj in (pa.array([1, None, 3]), pa.record_batch({"a": [1, 2], "b": ["x", None]})):
        fast = gda.array(obj)
        general = gda.array(DeviceArrayOnly(obj))
        assert fast.device == general.device == gda.Device.cpu()
        assert pa.array(fast).equals(pa.array(general))


# A pyarrow schema is exported once (docs/design.md, "pyarrow's schema,
# exported once"): a batch whose schema equals the one last imported is asked
# for its array alone. The stand-in pyarrow wraps real pyarrow batches and
# records each call.
_FAKE_PYARROW_KNOWN = (
    """
import pyarrow as real
import cabi
"""
    + _FAKE_PYARROW_MODULES
    + """
SOURCES = {
    "x": real.record_batch({"x": [0, 1, 2]}),
    "y": real.record_batch({"y": [0, 1, 2]}),
    "xy": real.record_batch({"x": [0, 1, 2], "y": [3, 4, 5]}),
}

class Schema:
    def __init__(self, real_schema):
        self.real = real_schema
    def __len__(self):
        return len(self.real)
    def equals(self, other, *, check_metadata=False):
        calls.append("equals")
        return self.real.equals(other.real, check_metadata=check_metadata)

class Array:
    pass

def elsewhere(address, device_type):
    if device_type != 1:
        d = cabi.ArrowDeviceArray.from_address(address)
        d.device_type, d.device_id = device_type, 0

class RecordBatch:
    def __init__(self, name, device_type=1, fails=None, length=None):
        self.real = SOURCES[name]
        self._schema = Schema(self.real.schema)
        self.device_type, self.fails, self.length = device_type, fails, length
    @property
    def schema(self):
        return self._schema
    def __arrow_c_array__(self, requested_schema=None):
        calls.append("plain")
        return self.real.__arrow_c_array__()
    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        calls.append("device")
        return self.real.__arrow_c_device_array__()
    def _export_to_c_device(self, address):
        calls.append("array alone")
        if self.fails:
            raise self.fails
        self.real._export_to_c_device(address)
        elsewhere(address, self.device_type)
        if self.length is not None:
            cabi.ArrowDeviceArray.from_address(address).array.length = self.length

class Overrides(RecordBatch):
    def _export_to_c_device(self, address):
        return RecordBatch._export_to_c_device(self, address)

class DeviceOnly:
    # the same array, device_type set, through the general path
    def __init__(self, name, device_type):
        self.real, self.device_type = SOURCES[name], device_type
    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        schema, array = self.real.__arrow_c_device_array__()
        elsewhere(cabi.capsule_pointer(array), self.device_type)
        return schema, array

fake_lib.Array, fake_lib.RecordBatch = Array, RecordBatch

def outcome(obj):
    try:
        b = gda.record_batch(obj)
        return [b.column_names, np.from_dlpack(b.column(0)).tolist(), str(b.device)]
    except Exception as e:
        return f"{type(e).__name__}: {e}"

x = RecordBatch("x")
cases = [
    ("first", x),
    ("same object", x),
    ("equal schema", RecordBatch("x")),
    ("other names", RecordBatch("y")),
    ("other width", RecordBatch("xy")),
    ("equal again", RecordBatch("xy")),
    ("not on the CPU", RecordBatch("xy", device_type=2)),
    ("export fails", RecordBatch("xy", fails=ValueError("boom"))),
    ("malformed", RecordBatch("xy", length=-1)),
    ("override", Overrides("xy")),
    ("override again", Overrides("xy")),
]
out = {}
for name, obj in cases:
    calls.clear()
    out[name] = [outcome(obj), list(calls)]
out["general path, not on the CPU"] = [outcome(DeviceOnly("xy", 2)), []]
print(json.dumps(out))
"""
)


def test_a_known_pyarrow_schema_is_not_exported_again():
    import json
    import os

    env = {"FAKE_PYARROW_VERSION": "18.0.0", "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    r = run_python(_FAKE_PYARROW_KNOWN, env=env)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    x, y, xy = [["x"], [0, 1, 2], "cpu"], [["y"], [0, 1, 2], "cpu"], [["x", "y"], [0, 1, 2], "cpu"]
    assert got["first"] == [x, ["plain"]]
    assert got["same object"] == [x, ["array alone"]]
    assert got["equal schema"] == [x, ["equals", "array alone"]]
    # pyarrow tells the schemas apart; the column count alone, without equals
    assert got["other names"] == [y, ["equals", "plain"]]
    assert got["other width"] == [xy, ["plain"]]
    assert got["equal again"] == [xy, ["equals", "array alone"]]
    # the array alone says where it is: data elsewhere is imported as the device protocol would
    assert got["not on the CPU"][1] == ["equals", "array alone"]
    assert got["not on the CPU"][0] == got["general path, not on the CPU"][0]
    assert got["not on the CPU"][0] != xy
    assert got["export fails"] == [
        "ArrowInvalid: the RecordBatch producer raised ValueError: boom",
        ["equals", "array alone"],
    ]
    # what the gate declines is imported in Go, which says what is wrong
    assert got["malformed"] == ["ArrowInvalid: ArrowArray: negative length -1", ["equals", "array alone"]]
    # a subclass with its own _export_to_c_device is asked for the pair, every time
    assert got["override"] == [xy, ["plain"]]
    assert got["override again"] == [xy, ["plain"]]


def test_only_flat_schemas_without_metadata_are_known():
    # what pyarrow's equals decides alone (held.c, is_flat)
    flat = pa.record_batch({"only_flat_a": [1], "only_flat_b": ["x"]})  # a schema no other test imports
    gda.record_batch(flat)
    assert lib.debug_known_schemas()[1] is flat.schema
    for other in (
        pa.record_batch({"l": pa.array([[1]])}),
        pa.record_batch({"d": pa.array(["x"]).dictionary_encode()}),
        pa.record_batch({"s": pa.array([{"x": 1}])}),
        pa.record_batch({"a": [1]}, metadata={"k": "v"}),
        pa.record_batch([pa.array([1])], schema=pa.schema([pa.field("a", pa.int64(), metadata={"k": "v"})])),
        pa.record_batch({"v": pa.array(["x"], pa.string_view())}),  # a layout the gate leaves to Go
    ):
        gda.record_batch(other)
        assert lib.debug_known_schemas()[1] is flat.schema, other.schema
    arr = pa.array([1.5])
    gda.array(arr)
    assert lib.debug_known_schemas()[0] is arr.type
    gda.array(pa.array([[1]]))
    assert lib.debug_known_schemas()[0] is arr.type


def _list_batch(child_name):
    return pa.record_batch([pa.array([[1]], pa.list_(pa.field(child_name, pa.int64())))], names=["l"])


def test_schemas_pyarrow_calls_equal_keep_their_own_export():
    # pyarrow's equals compares metadata as a map; the export keeps each order
    first = pa.record_batch({"a": [1]}, metadata={"k1": "1", "k2": "2"})
    second = pa.record_batch({"a": [1]}, metadata={"k2": "2", "k1": "1"})
    assert first.schema.equals(second.schema, check_metadata=True)
    # and some versions of pyarrow ignore a list's child name
    lists = [_list_batch("item"), _list_batch("element")]
    for batch in [first, second, first, second, *lists, *lists]:
        got = pa.record_batch(gda.record_batch(batch)).schema
        assert str(got.field(0).type) == str(batch.schema.field(0).type)
        assert list((got.metadata or {}).items()) == list((batch.schema.metadata or {}).items())


def test_known_schemas_import_what_pyarrow_holds():
    batches = [
        pa.record_batch({"a": [1, None], "b": ["x", "y"]}),
        pa.record_batch({"a": [3, 4], "b": ["z", None]}),  # an equal schema of its own
        pa.record_batch({"a": [1, 2], "b": [3, 4]}),  # the same names, another type
        pa.record_batch(
            [pa.array([1, 2]), pa.array(["x", "y"])],
            schema=pa.schema([pa.field("a", pa.int64(), nullable=False), pa.field("b", pa.string())]),
        ),  # another nullability
    ]
    for batch in batches + batches[::-1] + batches:
        got = pa.record_batch(gda.record_batch(batch))
        assert got.schema.equals(batch.schema, check_metadata=True) and got.equals(batch)
    for arr in (pa.array([1, 2]), pa.array([3]), pa.array([1], pa.int32()), pa.array([{"x": 1}]), pa.array([{"x": 2}])):
        for _ in range(2):
            got = pa.array(gda.array(arr))
            assert got.type.equals(arr.type, check_metadata=True) and got.equals(arr)
