"""DLPack and the CUDA Array Interface on CUDA memory, against the strict fake
driver: producers and consumers built in the tests the way CuPy builds them
(asynchronous copies on a non-blocking stream, ordered with events)."""

from __future__ import annotations

import ctypes
import gc
import sys

import fakecuda as fake
import godevarrow as gda
import numpy as np
import pyarrow as pa
import pytest
from conftest import DeviceCapsules

pytestmark = pytest.mark.fakecuda


def cuda_array(values, device="cuda:0") -> gda.Array:
    """A copy on the device: complete when to_device returns, so it has no event."""
    return gda.array(pa.array(values)).to_device(device)


def cuda_array_with_event(values, device: int = 0) -> gda.Array:
    """A device array whose data is ready after its producer's event, as a
    cuDF column's is."""
    return gda.array(fake.CudaProducer(pa.array(values), device=device))


# ------------------------------------------------------- godevarrow produces


@pytest.mark.parametrize("device", [0, 1])
def test_dlpack_producer_on_cuda_orders_the_consumer_stream(device, device_leak_check):
    g = cuda_array_with_event(np.arange(1000, dtype=np.int64), device)
    assert g.__dlpack_device__() == (2, device)
    user = fake.StreamUser(device)
    waits = fake.LIB.fakecuda_call_count(b"cuStreamWaitEvent")
    cap = g.__dlpack__(stream=user.handle, max_version=(1, 1))
    assert fake.LIB.fakecuda_call_count(b"cuStreamWaitEvent") == waits + 1, "the consumer's stream must wait"
    t = fake.dlpack_tensor(cap)
    assert (t.major, t.minor) == (1, 1)
    assert (t.dl_tensor.device.device_type, t.dl_tensor.device.device_id) == (2, device)
    assert t.dl_tensor.shape[0] == 1000 and (t.dl_tensor.dtype.code, t.dl_tensor.dtype.bits) == (0, 64)
    assert t.flags & 1, "read-only"
    ptr = t.dl_tensor.data + t.dl_tensor.byte_offset
    got = np.frombuffer(user.read(ptr, 8000), dtype=np.int64)
    assert (got == np.arange(1000)).all()
    user.destroy()
    del cap, t


def test_dlpack_producer_stream_rules(device_leak_check):
    g = cuda_array_with_event([1.0, 2.0, 3.0])
    waits = fake.LIB.fakecuda_call_count(b"cuStreamWaitEvent")
    g.__dlpack__(stream=-1, max_version=(1, 0))  # no synchronization
    assert fake.LIB.fakecuda_call_count(b"cuStreamWaitEvent") == waits
    g.__dlpack__(max_version=(1, 0))  # None: the legacy default stream waits
    g.__dlpack__(stream=2, max_version=(1, 0))  # per-thread default stream
    assert fake.LIB.fakecuda_call_count(b"cuStreamWaitEvent") == waits + 2
    with pytest.raises(ValueError, match="ambiguous"):
        g.__dlpack__(stream=0)
    with pytest.raises(ValueError, match="stream"):
        g.__dlpack__(stream=-7)
    legacy = g.__dlpack__(max_version=None)
    assert ctypes.pythonapi.PyCapsule_IsValid(ctypes.py_object(legacy), b"dltensor")


def test_dlpack_cpu_stream_must_be_none(leak_check):
    g = gda.array(pa.array([1, 2, 3]))
    with pytest.raises(ValueError, match="stream must be None"):
        g.__dlpack__(stream=5)
    assert np.from_dlpack(g).tolist() == [1, 2, 3]


def test_dlpack_dl_device_and_copy(device_leak_check):
    g = cuda_array(np.arange(5, dtype=np.int32))
    # a CPU consumer asks for a CPU tensor: copied, flagged as a copy
    cap = g.__dlpack__(max_version=(1, 1), dl_device=(1, 0))
    t = fake.dlpack_tensor(cap)
    assert t.dl_tensor.device.device_type == 1
    assert t.flags & 2, "DLPACK_FLAG_BITMASK_IS_COPIED"
    del t, cap
    host = gda.array(pa.array(np.arange(5, dtype=np.int32)))
    assert np.from_dlpack(host.to_device("cuda:1"), device="cpu").tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(BufferError, match="copy=False"):
        g.__dlpack__(max_version=(1, 1), dl_device=(1, 0), copy=False)
    # copy=True on the same device: a device-to-device copy, flagged
    cap = g.__dlpack__(max_version=(1, 1), copy=True)
    t = fake.dlpack_tensor(cap)
    assert (t.dl_tensor.device.device_type, t.flags & 2) == (2, 2)
    assert t.dl_tensor.data != fake.dlpack_tensor(g.__dlpack__(max_version=(1, 1))).dl_tensor.data
    del t, cap
    # a copy for a pre-1.0 consumer cannot be flagged: refused
    with pytest.raises(BufferError, match="max_version"):
        g.__dlpack__(dl_device=(1, 0))


def template_exports() -> int:
    return gda._godevarrow.debug_counters().dlpack_template_exports


def test_a_dlpack_export_made_from_the_arrays_template_waits_as_go_would(device_leak_check):
    """Later exports of an array to the same consumer stream are made in C
    from the first one's template only while nothing needs waiting for
    (dlpack_export.h): never when the array's event is pending on another
    queue, and, for an event put off on the caller's default stream, only
    while that stream is still the caller's default one there."""
    waits = lambda: fake.LIB.fakecuda_call_count(b"cuStreamWaitEvent")  # noqa: E731

    # an event pending on the producer's stream: every export to another waits
    g = cuda_array_with_event(np.arange(100, dtype=np.int64))
    user = fake.StreamUser(0)
    before, made = waits(), template_exports()
    caps = [g.__dlpack__(stream=user.handle, max_version=(1, 1)) for _ in range(3)]
    assert waits() - before == 3 and template_exports() == made
    del caps

    # a DLPack import on the caller's default stream puts its event off: an
    # export to that stream waits for nothing, and the second is the template's
    src = fake.FakeCupyArray(np.arange(100, dtype=np.int64))
    put_off = gda.array(src)
    before, made = waits(), template_exports()
    caps = [put_off.__dlpack__(stream=1, max_version=(1, 1)) for _ in range(3)]
    assert waits() == before and template_exports() - made == 2
    tensors = [fake.dlpack_tensor(c) for c in caps]
    assert {t.dl_tensor.data + t.dl_tensor.byte_offset for t in tensors} == {src.ptr.value}
    assert all(t.dl_tensor.shape[0] == 100 and t.flags & 1 for t in tensors), "the template's tensor is read-only"
    legacy = put_off.__dlpack__(stream=1)  # the same template, unversioned
    assert ctypes.pythonapi.PyCapsule_IsValid(ctypes.py_object(legacy), b"dltensor")
    assert template_exports() - made == 3

    # another device's context current: handle 1 names its stream now, so the
    # template does not fit, and Go records the event and makes that stream wait
    fake.make_current(1)
    before, made = waits(), template_exports()
    other = put_off.__dlpack__(stream=1, max_version=(1, 1))
    assert waits() - before == 1 and template_exports() == made
    fake.make_current(0)
    del caps, tensors, legacy, other, put_off
    gc.collect()
    assert src.deleted == 1
    src.free()
    user.destroy()

    # a CPU array never waits: from the second export on, its template's
    h = gda.array(pa.array(np.arange(10, dtype=np.int32)))
    made = template_exports()
    caps = [h.__dlpack__(max_version=(1, 1)) for _ in range(3)]
    assert template_exports() - made == 2
    cpu_tensors = [fake.dlpack_tensor(c) for c in caps]
    assert len({t.dl_tensor.data + t.dl_tensor.byte_offset for t in cpu_tensors}) == 1
    assert all(t.dl_tensor.shape[0] == 10 and t.dl_tensor.device.device_type == 1 for t in cpu_tensors)
    with pytest.raises(ValueError, match="stream must be None"):
        h.__dlpack__(stream=5)  # a stream the template was not made for goes to Go, which words it


def test_cuda_array_interface_producer(device_leak_check):
    g = cuda_array_with_event(np.arange(10, dtype=np.float32)).slice(2, 5)
    fake.make_current(0)  # the consumer's current device is the array's (as CuPy's would be)
    cai = g.__cuda_array_interface__
    assert cai["version"] == 3 and cai["shape"] == (5,) and cai["typestr"] == "<f4"
    assert cai["data"][1] is True and cai["strides"] is None and cai["mask"] is None
    assert cai["stream"] == 1, "the array has an event: the legacy default stream was made to wait for it"
    got = np.frombuffer(fake.read_device(cai["data"][0], 20), dtype=np.float32)
    assert got.tolist() == [2, 3, 4, 5, 6]
    assert not hasattr(gda.array(pa.array([1, 2])), "__cuda_array_interface__"), "CPU arrays have none"
    with pytest.raises(BufferError, match="null"):
        _ = cuda_array([1, None, 3]).__cuda_array_interface__
    with pytest.raises(BufferError, match="null"):
        cuda_array([1, None, 3]).__dlpack__(max_version=(1, 1))


# ------------------------------------------------------- godevarrow consumes


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "int64", "float32", "float64"])
def test_dlpack_consumer_waits_for_the_producer(dtype, device_leak_check):
    values = np.arange(1, 301).astype(dtype)
    src = fake.FakeCupyArray(values)
    g = gda.array(src)
    assert g.device == gda.Device.cuda(0)
    assert len(src.dlpack_streams) == 1
    # FakeCupyArray made device 0's primary context current, as CuPy does
    assert src.dlpack_streams[0] == 1, "godevarrow names the caller's default stream"
    assert g.to_pyarrow().to_numpy().tolist() == values.tolist()
    del g
    gc.collect()
    assert src.deleted == 1, "the tensor's deleter runs once, when the array goes"
    src.free()


def test_dlpack_consumer_names_a_pooled_stream_when_another_devices_context_is_current(device_leak_check):
    values = np.arange(1, 51, dtype=np.int64)
    src = fake.FakeCupyArray(values, device=1)
    fake.make_current(0)  # handle 1 would name device 0's default stream
    g = gda.array(src)
    assert g.device == gda.Device.cuda(1)
    assert len(src.dlpack_streams) == 1 and src.dlpack_streams[0] not in (None, -1, 0, 1, 2), src.dlpack_streams
    assert g.to_pyarrow().to_numpy().tolist() == values.tolist()
    del g
    gc.collect()
    assert src.deleted == 1
    src.free()


def held_imports() -> int:
    return gda._godevarrow.debug_counters().held_imports


def test_a_dlpack_import_is_held_in_c_with_its_event_put_off(device_leak_check):
    """gda.array of a DLPack producer on the caller's default stream holds the
    tensor in C (no Go data until Go code reads it): its event is put off,
    a host read still waits for the producer, an Arrow device export
    records the event (not the C export, which has none to hand on), and the
    deleter runs once."""
    src = fake.FakeCupyArray(np.arange(1, 101, dtype=np.int64))
    gda.array(src)  # the first import of a dtype is Go's: it makes the dtype holdable
    gc.collect()
    before, records = held_imports(), fake.LIB.fakecuda_call_count(b"cuEventRecord")
    g = gda.array(src)
    assert held_imports() == before + 1
    assert fake.LIB.fakecuda_call_count(b"cuEventRecord") == records, "the event is put off"
    _, capsule = g.__arrow_c_device_array__()
    assert ctypes.c_void_p.from_address(fake.device_array_struct(capsule).sync_event).value
    assert fake.LIB.fakecuda_call_count(b"cuEventRecord") == records + 1
    assert g.to_pyarrow().to_numpy().tolist() == list(range(1, 101))
    gda.array(np.arange(5, dtype=np.float32))  # NumPy's DLPack: the dtype's first import is Go's
    cpu = gda.array(np.arange(5, dtype=np.float32))
    assert held_imports() == before + 2 and cpu.to_pyarrow().to_pylist() == [0, 1, 2, 3, 4]
    del g, capsule, cpu
    gc.collect()
    assert held_imports() == before
    assert src.deleted == 2
    src.free()


class ContextSwitchingProducer(fake.FakeCupyArray):
    """A producer whose __dlpack__ leaves another device's context current."""

    def __dlpack__(self, **kw):
        t = super().__dlpack__(**kw)
        fake.make_current(1 - self.device)
        return t


def test_a_dlpack_import_is_not_held_when_the_named_stream_changed_meaning(device_leak_check):
    """The caller's default stream is named to the producer; a producer that
    makes another device's context current meanwhile changes what that
    handle names, so the import is Go's (which records the event on the
    device's own default stream at once) and the values are read after the
    producer's writes."""
    src = ContextSwitchingProducer(np.arange(1, 51, dtype=np.int64))
    first = fake.FakeCupyArray(np.arange(3, dtype=np.int64))
    gda.array(first).to_pyarrow()  # the dtype's first import (Go's) makes it holdable
    gc.collect()
    first.free()
    fake.make_current(0)
    before = held_imports()
    g = gda.array(src)
    assert held_imports() == before, "not held"
    assert g.to_pyarrow().to_numpy().tolist() == list(range(1, 51))
    del g
    gc.collect()
    assert src.deleted == 1
    src.free()


class CaiOnly:
    """Only the CUDA Array Interface of a FakeCupyArray."""

    def __init__(self, src: fake.FakeCupyArray, **override) -> None:
        self.src, self.override = src, override

    @property
    def __cuda_array_interface__(self) -> dict:
        cai = dict(self.src.__cuda_array_interface__)
        cai.update(self.override)
        return cai


@pytest.mark.parametrize("protocol", ["dlpack", "cai"])
def test_imports_and_re_exports_take_streams_and_events_from_pools(protocol, device_leak_check):
    src = fake.FakeCupyArray(np.arange(100, dtype=np.int64))
    offer = src if protocol == "dlpack" else CaiOnly(src)
    warm = [gda.array(offer) for _ in range(4)]  # the first imports fill the pools
    del warm
    gc.collect()
    made = [b"cuStreamCreate", b"cuStreamDestroy_v2", b"cuEventCreate", b"cuEventDestroy_v2"]
    before = [fake.LIB.fakecuda_call_count(fn) for fn in made]
    records = fake.LIB.fakecuda_call_count(b"cuEventRecord")
    imported = [gda.array(offer) for _ in range(4)]
    # each import orders later readers after the producer with an event: a
    # DLPack import on the caller's default stream puts it off until a
    # reader needs it (cdevice's lazy_event.go), a CUDA Array Interface
    # import on the producer's stream records it at once...
    at_import = 0 if protocol == "dlpack" else 4
    assert fake.LIB.fakecuda_call_count(b"cuEventRecord") - records == at_import
    # ...and an export hands it on, recorded then if it was put off, and a
    # second export records nothing new
    _, capsule = imported[0].__arrow_c_device_array__()
    event = ctypes.c_void_p.from_address(fake.device_array_struct(capsule).sync_event).value
    assert event
    _, again = imported[0].__arrow_c_device_array__()
    assert ctypes.c_void_p.from_address(fake.device_array_struct(again).sync_event).value == event
    assert fake.LIB.fakecuda_call_count(b"cuEventRecord") - records == (4 if protocol == "cai" else 1)
    del capsule, again, imported
    gc.collect()
    # the streams and events came from the pools and went back to them
    assert [fake.LIB.fakecuda_call_count(fn) for fn in made] == before
    assert src.deleted == (8 if protocol == "dlpack" else 0)
    src.free()


def test_cuda_array_interface_consumer(device_leak_check):
    values = np.arange(50, dtype=np.float64) / 2
    src = fake.FakeCupyArray(values, device=1)
    obj = CaiOnly(src)
    refs = sys.getrefcount(obj)
    g = gda.array(obj)
    assert g.device == gda.Device.cuda(1), "the device comes from the driver"
    assert sys.getrefcount(obj) == refs + 1, "the array keeps its producer alive"
    assert g.to_pyarrow().to_numpy().tolist() == values.tolist(), "the interface's stream was waited on"
    del g
    gc.collect()
    assert sys.getrefcount(obj) == refs, "released with the array"
    src.free()


@pytest.mark.parametrize(
    "override,error,match",
    [
        ({"mask": object()}, NotImplementedError, "mask"),
        ({"shape": (2, 3)}, ValueError, "1-D"),
        ({"typestr": "<c16"}, ValueError, "typestr"),
        ({"typestr": "<f2"}, None, None),
        ({"strides": (16,)}, ValueError, "strided"),
        ({"stream": 0}, ValueError, "stream"),
        ({"version": 1}, ValueError, "version"),
        ({"data": (12345, False)}, ValueError, "CUDA driver"),
    ],
    ids=["mask", "2-D", "complex", "float16", "strided", "stream-0", "version-1", "host-pointer"],
)
def test_cuda_array_interface_consumer_refuses_clearly(override, error, match, device_leak_check):
    src = fake.FakeCupyArray(np.arange(6, dtype=np.int64))
    obj = CaiOnly(src, **override)
    if error is None:
        g = gda.array(obj)  # a different width over the same bytes is still a valid request
        assert len(g) == 6
        del g
    else:
        with pytest.raises(error, match=match) as info:
            gda.array(obj)
        assert isinstance(info.value, gda.GodevarrowError)
        del info
    gc.collect()
    src.free()


def test_round_trip_through_both_protocols(device_leak_check):
    """godevarrow → DLPack → godevarrow and → CUDA Array Interface → godevarrow:
    the same device memory all along."""
    g = cuda_array(np.arange(100, dtype=np.uint32), "cuda:1")
    via_dlpack = gda.array(_DLPackOnly(g))
    via_cai = gda.array(_CaiOf(g))
    for other in (via_dlpack, via_cai):
        assert other.device == gda.Device.cuda(1)
        assert other.__cuda_array_interface__["data"][0] == g.__cuda_array_interface__["data"][0]
        assert other.to_pyarrow().equals(g.to_pyarrow())


class _DLPackOnly:
    def __init__(self, g):
        self.g = g

    def __dlpack__(self, **kw):
        return self.g.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.g.__dlpack_device__()


class _CaiOf:
    def __init__(self, g):
        self.g = g

    @property
    def __cuda_array_interface__(self):
        return self.g.__cuda_array_interface__


def test_a_producer_that_hides_its_stream_is_read_stale(device_leak_check):
    """The control experiment for the tests above: when the interface does not
    name the stream its copy is queued on, nobody waits, and the fake driver
    shows the unfinished copy (the data reads as zeros)."""
    values = np.arange(1, 9, dtype=np.int64)
    src = fake.FakeCupyArray(values)
    g = gda.array(CaiOnly(src, stream=None))
    assert g.to_pyarrow().to_pylist() != values.tolist()
    del g
    fake.LIB.cuStreamSynchronize(src.stream)
    gc.collect()
    src.free()


def test_validity_bitmap_attached_on_the_device(device_leak_check):
    """What godevarrow.cupy.from_cupy(x, mask=...) does after CuPy packed the mask."""
    from godevarrow import _godevarrow as lib

    values = cuda_array(np.arange(10, dtype=np.int32)).slice(3, 7)
    valid = np.arange(10) % 3 != 0
    bits = gda.array(pa.array(np.packbits(valid, bitorder="little"), pa.uint8())).to_device("cuda:0")
    g = gda.Array(lib.array_with_validity(values._h, bits._h, int((~valid[3:10]).sum())))
    assert g.device == gda.Device.cuda(0) and g.null_count == 3
    assert g.to_pyarrow().to_pylist() == [None if i % 3 == 0 else i for i in range(3, 10)]
    with pytest.raises(ValueError, match="already has"):
        lib.array_with_validity(g._h, bits._h, -1)
    with pytest.raises(ValueError, match="on cpu"):
        lib.array_with_validity(values._h, bits.to_device("cpu")._h, -1)
    with pytest.raises(ValueError, match="bytes"):
        lib.array_with_validity(values._h, bits.slice(0, 0)._h, -1)


@pytest.mark.parametrize(
    "values,per_value",
    [
        (pa.array(np.arange(100_000, dtype=np.int64)), 8),
        (pa.array(np.arange(100_000, dtype=np.float32)), 4),
        (pa.array([[i, i] for i in range(20_000)], pa.list_(pa.int32(), 2)), 8),
        (pa.StructArray.from_arrays([pa.array(np.arange(50_000, dtype=np.int16))], ["a"]), 2),
    ],
    ids=["int64", "float32", "fixed_size_list", "struct"],
)
def test_a_slice_copies_only_its_bytes(values, per_value, device_leak_check):
    g = gda.array(values).slice(1003, 10)
    fake.LIB.fakecuda_reset_counters()
    on_gpu = g.to_device("cuda:0")
    copied = fake.LIB.fakecuda_bytes_copied(fake.HTOD)
    # the 10 values plus at most 7 before them that keep bitmaps byte-aligned
    assert copied <= 17 * per_value + 8, f"{copied} bytes copied for a 10-value slice"
    back = on_gpu.to_device("cpu")
    assert back.to_pyarrow().equals(values.slice(1003, 10))
    if not pa.types.is_struct(values.type):  # record-batch-like structs push their offset down
        assert back.offset == 1003 % 8


@pytest.mark.parametrize(
    "memory,device_type", [("host", gda.DeviceType.CUDA_HOST), ("managed", gda.DeviceType.CUDA_MANAGED)]
)
@pytest.mark.parametrize(
    "values",
    [pa.array([1, None, 3], pa.int64()), pa.array(["a", None, "ccc"]), pa.array([True, False, None])],
    ids=["int64", "string", "bool"],
)
def test_cuda_host_and_managed_memory_is_read_by_the_host(memory, device_type, values, device_leak_check):
    """The C Device Data Interface: CUDA_HOST (pinned) and CUDA_MANAGED memory
    is host-accessible; the sync_event is waited on before the host reads it."""
    producer = fake.HostVisibleProducer(values, memory)
    syncs = fake.LIB.fakecuda_sync_count()
    g = gda.array(producer)
    assert fake.LIB.fakecuda_sync_count() > syncs, "the producer's event was waited on"
    assert g.device_type == device_type and g.device_id == 0
    g.validate(full=True)  # reads the buffers on the host
    assert pa.Array._import_from_c_capsule(*g.__arrow_c_array__()).equals(values)  # copied into CPU memory
    host = g.to_device("cpu")
    assert host.device == gda.Device.cpu() and host.to_pyarrow().equals(values)
    on_gpu = g.to_device("cuda:1")
    assert on_gpu.to_pyarrow().equals(values)
    again = gda.array(DeviceCapsules(array=g.__arrow_c_device_array__()))  # re-exported with its device type
    assert again.device == g.device and again.to_pyarrow().equals(values)
    del g, host, on_gpu, again
    gc.collect()
    assert producer.releases == 1
