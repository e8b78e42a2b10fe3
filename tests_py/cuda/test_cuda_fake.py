"""CUDA paths against the strict fake driver (tests_go/fakecuda): device
memory is unreadable from the host, so any host read would crash the run."""

from __future__ import annotations

import ctypes
import os
import pathlib
import random
import subprocess
import sys

import fakecuda as fake
import godevarrow as gda
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest
from conftest import DeviceArrayOnly, DeviceCapsules, corpus_params

# conftest skips these when the fake driver is not the one loaded.
pytestmark = pytest.mark.fakecuda


def test_devices_are_visible():
    assert gda.cuda_available()
    assert gda.cuda_device_count() == int(os.environ.get("FAKECUDA_DEVICES", "2"))
    ok, count, library, message = gda.cuda_status()
    assert ok and "fakecuda" in library and "fakecuda device 0" in message


@pytest.mark.parametrize("name", corpus_params())
def test_corpus_travels_cpu_cuda0_cuda1_cpu(name, corpus_dir, device_leak_check):
    with ipc.open_stream(corpus_dir / name) as reader:
        batches = list(reader)
    for batch in batches:
        views = [batch] + ([batch.slice(1, batch.num_rows - 2)] if batch.num_rows > 2 else [])
        for view in views:
            g = gda.record_batch(view)
            on0 = g.to_device("cuda:0")
            assert on0.device == gda.Device.cuda(0) and on0.num_rows == view.num_rows
            on1 = on0.to_device("cuda:1")
            assert on1.device == gda.Device.cuda(1)
            # a zero-copy device export re-imported: the importer sizes strings from the device
            again = gda.record_batch(DeviceArrayOnly(on1))
            back = again.to_device("cpu")
            assert back.device == gda.Device.cpu()
            got = pa.record_batch(back)
            assert got.schema.equals(view.schema, check_metadata=True)
            assert got.equals(view)
            assert again.to_pyarrow().equals(view)  # to_pyarrow copies to the host itself
            del g, on0, on1, again, back, got


def test_exported_cuda_array_carries_its_event_and_device(device_leak_check):
    producer = fake.CudaProducer(pa.array([1, 2, 3]), device=1)
    g = gda.array(producer)
    caps = g.__arrow_c_device_array__()
    assert "arrow_device_array" in repr(caps[1])
    d = fake.device_array_struct(caps[1])
    assert (d.device_type, d.device_id) == (2, 1)  # ARROW_DEVICE_CUDA, device 1
    # sync_event points at a CUevent (the C Device Data Interface): one the
    # strict fake driver knows, whatever its state (INVALID_HANDLE otherwise)
    assert d.sync_event, "the export carries no sync_event"
    event = ctypes.c_void_p.from_address(d.sync_event).value
    assert event, "sync_event points at a null CUevent"
    fake.make_current(1)
    fake.LIB.cuEventQuery.argtypes = [ctypes.c_void_p]
    assert fake.LIB.cuEventQuery(event) in (0, 600)  # CUDA_SUCCESS or CUDA_ERROR_NOT_READY
    again = gda.array(DeviceCapsules(array=caps))
    assert again.device == gda.Device.cuda(1)
    assert again.null_count == 0
    del g, caps, again
    assert producer.releases == 1


def test_a_copy_to_a_device_is_ordered_by_the_event_it_is_exported_with(device_leak_check):
    # to_device to a device issues its copies and records an event after
    # them, without waiting on the host: the export's sync_event is that
    # event (C Device Data Interface), and the source may go at once
    # values no earlier test copied (a pooled block may still hold those)
    values = pa.array([random.getrandbits(62) for _ in range(3)], pa.int64())
    want = values.buffers()[1].to_pybytes()
    g = gda.array(values).to_device("cuda:1")
    caps = g.__arrow_c_device_array__()  # the struct lives as long as its capsule
    d = fake.device_array_struct(caps[1])
    assert (d.device_type, d.device_id) == (2, 1)
    assert d.sync_event, "a copy to a device is exported without the event its copies are ordered by"
    event = ctypes.c_void_p.from_address(d.sync_event).value
    # a careless reader that skips the event sees the device memory before the copy...
    assert fake.read_device(d.array.buffers[1], 24, device=1) != want
    # ...one that waits for it sees the values
    fake.LIB.cuEventSynchronize.argtypes = [ctypes.c_void_p]
    assert fake.LIB.cuEventSynchronize(event) == 0
    assert fake.read_device(d.array.buffers[1], 24, device=1) == want
    assert g.to_pyarrow().equals(values)
    del g, caps, d


@pytest.mark.parametrize(
    "values",
    [pa.array([1, None, 3, 4], pa.int32()), pa.array(["alpha", None, "", "delta" * 10])],
    ids=["int32", "utf8"],
)
def test_foreign_producer_is_waited_for(values, device_leak_check):
    # a careless reader that skips the producer's event sees stale device memory...
    careless = fake.CudaProducer(values)
    data_ptr = careless.device_buffers[-1]
    size = values.buffers()[-1].size
    assert fake.read_device(data_ptr, size) != values.buffers()[-1].to_pybytes()
    gda.array(careless)  # consume it so that it is released
    assert careless.releases == 1
    # ...while godevarrow waits on it and reads the right values
    producer = fake.CudaProducer(values)
    g = gda.array(producer)
    assert g.device == gda.Device.cuda(0)
    assert g.to_pyarrow().equals(values)
    assert producer.releases == 0
    del g
    assert producer.releases == 1  # released once, at the last reference


def test_string_import_reads_nothing_and_the_first_read_makes_one_batched_copy(device_leak_check):
    values = pa.array(["a", "bb", None, "dddd"] * 100)
    producer = fake.CudaProducer(values)
    copies, syncs = fake.LIB.fakecuda_copy_calls(fake.DTOH), fake.LIB.fakecuda_sync_count()
    nbytes = fake.LIB.fakecuda_bytes_copied(fake.DTOH)
    g = gda.array(producer)
    assert len(g) == 400 and g.device == gda.Device.cuda(0)
    # the import checks the structs on the host: nothing leaves the device
    assert fake.LIB.fakecuda_bytes_copied(fake.DTOH) == nbytes
    assert fake.LIB.fakecuda_sync_count() == syncs
    # the first and last offsets of the array's range, fetched together
    # after one wait, by the first operation that needs them, and only once:
    # both lie in the offsets' allocation (one driver query says so), so
    # they come as one copy of the offsets between them
    queries = fake.LIB.fakecuda_call_count(b"cuPointerGetAttributes")
    g.validate(full=False)
    g.validate(full=False)
    assert fake.LIB.fakecuda_call_count(b"cuPointerGetAttributes") - queries == 1
    assert fake.LIB.fakecuda_copy_calls(fake.DTOH) - copies == 1
    assert fake.LIB.fakecuda_bytes_copied(fake.DTOH) - nbytes == 401 * 4
    assert fake.LIB.fakecuda_sync_count() - syncs == 1
    assert g.to_pyarrow().equals(values)
    del g


@pytest.mark.parametrize("one_allocation, queries", [(False, 3), (True, 1)])
def test_the_import_asks_the_driver_once_per_allocation(one_allocation, queries, device_leak_check):
    # a string array's three buffers: three allocations, or one pool block
    values = pa.array(["a", None, "ccc"])
    producer = fake.CudaProducer(values, one_allocation=one_allocation)
    single = fake.LIB.fakecuda_call_count(b"cuPointerGetAttribute")
    several = fake.LIB.fakecuda_call_count(b"cuPointerGetAttributes")
    g = gda.array(producer)
    assert fake.LIB.fakecuda_call_count(b"cuPointerGetAttributes") - several == queries
    assert fake.LIB.fakecuda_call_count(b"cuPointerGetAttribute") == single
    assert g.to_pyarrow().equals(values)
    del g


def test_buffers_on_another_device_than_declared_are_rejected(device_leak_check):
    producer = fake.CudaProducer(pa.array([1, 2, 3]), device=1)
    producer.struct.device_id = 0  # lies: the buffers are on device 1
    with pytest.raises(gda.ArrowInvalid, match="device 1"):
        gda.array(producer)
    assert producer.releases == 1


# streams and events come from the CUDA backend's pools once a copy ran
# (their creation faults are injected with empty pools in tests_go's
# TestCUDAFaultInjection)
# (an allocation refused for lack of memory is tried again once the device
# memory pool's idle blocks are freed: test_device_pool.py)
DRIVER_CALLS_OF_A_COPY = [
    ("cuMemAlloc_v2", fake.CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE"),
    ("cuMemcpyHtoDAsync_v2", fake.CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"),
    # a copy to a device is ordered by an event recorded after its copies
    ("cuEventRecord", fake.CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"),
]


@pytest.mark.parametrize("fn, error, name", DRIVER_CALLS_OF_A_COPY)
def test_fault_in_a_copy_to_the_device(fn, error, name, device_leak_check):
    g = gda.record_batch(pa.record_batch({"x": [1, 2, 3], "s": ["a", "b", None]}))
    fake.LIB.fakecuda_fail_nth(fn.encode(), 1, error)
    try:
        with pytest.raises(gda.DeviceError, match=f"{fn}.*{name}") as info:
            g.to_device("cuda:0")
        info.value.__traceback__ = None
    finally:
        fake.LIB.fakecuda_clear_faults()
    del g


@pytest.mark.parametrize("fn", ["cuStreamWaitEvent", "cuMemcpyDtoHAsync_v2", "cuStreamSynchronize"])
def test_fault_while_reading_a_foreign_arrays_offsets(fn, device_leak_check):
    # a non-sticky error: after a 700-class one the context is unusable (see
    # test_driver_rules.py), so a test that "recovers" from it is unrealistic
    producer = fake.CudaProducer(pa.array(["x", "yy", "zzz"]))
    g = gda.array(producer)
    fake.LIB.fakecuda_fail_nth(fn.encode(), 1, fake.CUDA_ERROR_OUT_OF_MEMORY)
    try:
        with pytest.raises(gda.DeviceError, match="CUDA_ERROR_OUT_OF_MEMORY") as info:
            g.validate(full=False)
        info.value.__traceback__ = None
    finally:
        fake.LIB.fakecuda_clear_faults()
    del g, info
    assert producer.releases == 1


def test_cuda_stream_chunks_copy_to_host_for_the_c_stream_interface(device_leak_check):
    batch = pa.record_batch({"x": [1, 2], "s": ["a", None]})
    on_device = gda.record_batch(batch).to_device("cuda:0")
    stream = gda.stream(on_device)
    assert stream.device_type == gda.DeviceType.CUDA
    table = pa.RecordBatchReader.from_stream(stream).read_all()
    assert table.to_batches()[0].equals(batch)
    # __arrow_c_array__ carries CPU memory: device data is copied to the host
    # (pyarrow's pa.array() itself prefers __arrow_c_device_array__ and needs its CUDA build)
    host = pa.RecordBatch._import_from_c_capsule(*on_device.__arrow_c_array__())
    assert host.equals(batch)
    del on_device, stream, host


def test_without_a_driver_cuda_raises_device_error():
    code = (
        "import godevarrow as gda, pyarrow as pa\n"
        "assert not gda.cuda_available() and gda.cuda_device_count() == 0\n"
        "try:\n"
        "    gda.array(pa.array([1])).to_device('cuda:0')\n"
        "except gda.DeviceError as e:\n"
        "    print('DeviceError:', e)\n"
    )
    env = dict(os.environ, GODEVARROW_LIBCUDA="/nonexistent/libcuda.so.1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "DeviceError: CUDA is not available" in out.stdout and "libcuda.so.1" in out.stdout


LEAKY_SESSION = """
import ctypes, fakecuda as fake

def test_passes_and_leaves_one_allocation_behind():
    fake.make_current(0)
    p = ctypes.c_ulonglong()
    fake.check(fake.LIB.cuMemAlloc_v2(ctypes.byref(p), 64), "cuMemAlloc_v2")
    if not LEAK:
        fake.check(fake.LIB.cuMemFree_v2(p.value), "cuMemFree_v2")
"""


@pytest.mark.parametrize("leak", [True, False], ids=["leaked", "freed"])
def test_something_left_on_the_devices_fails_the_session(leak, tmp_path):
    # conftest.py checks the fake devices once the whole session has run (not
    # in a test, whose place in the run depends on file names): a session of
    # one passing test that leaves an allocation behind must exit 1
    (tmp_path / "test_leaky.py").write_text(f"LEAK = {leak}\n" + LEAKY_SESSION)
    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(__file__).resolve().parents[1]))
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest", "test_leaky.py"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert "1 passed" in r.stdout, r.stdout + r.stderr
    left = "left on the fake CUDA devices at the end of the session: {'allocations': 1, 'bytes': 64}"
    assert (r.returncode, left in r.stdout) == ((1, True) if leak else (0, False)), r.stdout + r.stderr
