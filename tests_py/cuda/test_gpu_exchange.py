"""What must hold on a real GPU (marked ``gpu``): the gold corpus through the
device and back, zero-copy exchanges with CuPy and PyTorch both ways (DLPack
and the CUDA Array Interface), a producer's stream honoured while its kernel
still runs, the caller's own context left current, an unknown null count with
its bitmap on the device, and device memory back to its baseline after many
threads' round trips.

The whole module skips without a real driver, each library's tests without
that library, saying which. The same behaviours are proven against the fake
driver in test_cuda_fake.py, test_cuda_bridges.py and test_driver_rules.py;
the GPU kit (``make gpu-kit``) carries this file to a machine with a GPU.
Timings of the same jobs live in the bench (``bench.py --device-only``)."""

from __future__ import annotations

import ctypes
import gc
import threading

import godevarrow as gda
import numpy as np
import pyarrow as pa
import pytest
from cabi import ArrowDeviceArray, struct_of
from conftest import DeviceArrayOnly, DeviceCapsules, corpus_params
from pyarrow import ipc


def _real_driver() -> str:
    """Why godevarrow has no real CUDA device here ('' when it has one)."""
    ok, count, library, message = gda.cuda_status()
    if not ok or count == 0:
        return f"godevarrow has no CUDA device ({message or 'no device'})"
    if "fakecuda" in library:
        return f"godevarrow's CUDA driver is the fake one ({library})"
    return ""


REASON = _real_driver()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(bool(REASON), reason=f"needs a real CUDA GPU: {REASON}")]

N = 1000
# clock cycles a slow kernel spins before it writes: about 0.1 s on a GPU of
# 1-2 GHz, far longer than any of godevarrow's calls takes to return
SPIN_CYCLES = 200_000_000


@pytest.fixture(scope="module")
def cp():
    try:
        import cupy
    except ImportError:
        pytest.skip("CuPy is not installed")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError as e:
        pytest.skip(f"CuPy cannot use a CUDA device: {e}")
    return cupy


@pytest.fixture(scope="module")
def torch():
    try:
        import torch
    except ImportError:
        pytest.skip("PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device (a CPU-only build, or no driver it can use)")
    return torch


@pytest.fixture(scope="module")
def driver():
    """The driver godevarrow loaded, through ctypes."""
    _ok, _count, library, _message = gda.cuda_status()
    lib = ctypes.CDLL(library)
    assert lib.cuInit(0) == 0
    lib.cuCtxGetCurrent.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    lib.cuCtxPopCurrent_v2.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    lib.cuCtxSetCurrent.argtypes = [ctypes.c_void_p]
    lib.cuDevicePrimaryCtxRetain.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]
    lib.cuMemGetInfo_v2.argtypes = [ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)]
    return lib


def device_ptr(g) -> int:
    return g.__cuda_array_interface__["data"][0]


# ------------------------------------------------------------------ corpus


@pytest.mark.parametrize("name", corpus_params())
def test_every_corpus_file_travels_through_the_device_and_back(name, corpus_dir):
    with ipc.open_stream(corpus_dir / name) as reader:
        batches = list(reader)
    second = "cuda:1" if gda.cuda_device_count() > 1 else "cuda:0"
    for batch in batches:
        views = [batch] + ([batch.slice(1, batch.num_rows - 2)] if batch.num_rows > 2 else [])
        for view in views:
            on0 = gda.record_batch(view).to_device("cuda:0")
            assert on0.device == gda.Device.cuda(0) and on0.num_rows == view.num_rows
            there = on0.to_device(second)
            # a zero-copy device export re-imported: sized from the device
            again = gda.record_batch(DeviceArrayOnly(there))
            back = pa.record_batch(again.to_device("cpu"))
            assert back.schema.equals(view.schema, check_metadata=True)
            assert back.equals(view)
            assert again.to_pyarrow().equals(view)


# ------------------------------------------------------ zero-copy, CuPy


def test_cupy_array_imported_by_dlpack_is_not_copied(cp):
    x = cp.arange(N, dtype=cp.int64)
    g = gda.array(x)
    assert g.device == gda.Device.cuda(x.device.id)
    assert device_ptr(g) == x.data.ptr, "DLPack import copied the data"
    assert g.to_pyarrow().to_pylist() == list(range(N))


def test_cupy_array_imported_through_the_cuda_array_interface_alone_is_not_copied(cp):
    x = cp.arange(N, dtype=cp.float32)
    cai_only = type("CAIOnly", (), {"__cuda_array_interface__": x.__cuda_array_interface__})()
    g = gda.array(cai_only)
    assert device_ptr(g) == x.data.ptr, "CUDA Array Interface import copied the data"
    assert g.to_pyarrow().to_pylist() == [float(i) for i in range(N)]
    del g
    gc.collect()
    assert x[-1].item() == N - 1  # the producer's memory is still its own


def test_cupy_reads_a_godevarrow_array_by_dlpack_without_a_copy(cp):
    g = gda.array(pa.array(range(N), pa.int64())).to_device("cuda:0")
    y = cp.from_dlpack(g)
    assert y.data.ptr == device_ptr(g), "cupy.from_dlpack copied godevarrow's array"
    assert y.tolist() == list(range(N))


def test_cupy_reads_a_godevarrow_array_by_the_cuda_array_interface_without_a_copy(cp):
    g = gda.array(pa.array(range(N), pa.int64())).to_device("cuda:0")
    y = cp.asarray(g)
    assert y.data.ptr == device_ptr(g), "cupy.asarray copied godevarrow's array"
    assert y.tolist() == list(range(N))


# --------------------------------------------------- zero-copy, PyTorch


def test_torch_tensor_imported_by_dlpack_is_not_copied(torch):
    t = torch.arange(N, dtype=torch.int64, device="cuda:0")
    g = gda.array(t)
    assert device_ptr(g) == t.data_ptr(), "DLPack import of a tensor copied the data"
    assert g.to_pyarrow().to_pylist() == list(range(N))


def test_torch_tensor_imported_through_the_cuda_array_interface_alone_is_not_copied(torch):
    t = torch.arange(N, dtype=torch.float64, device="cuda:0")
    cai_only = type("CAIOnly", (), {"__cuda_array_interface__": t.__cuda_array_interface__})()
    g = gda.array(cai_only)
    assert device_ptr(g) == t.data_ptr(), "CUDA Array Interface import of a tensor copied the data"
    assert g.to_pyarrow().to_pylist() == [float(i) for i in range(N)]


def test_torch_reads_a_godevarrow_array_by_dlpack_without_a_copy(torch):
    g = gda.array(pa.array(range(N), pa.int64())).to_device("cuda:0")
    t = torch.from_dlpack(g)
    assert t.data_ptr() == device_ptr(g), "torch.from_dlpack copied godevarrow's array"
    assert t.device.type == "cuda" and t.cpu().tolist() == list(range(N))


def test_torch_refuses_the_read_only_cuda_array_interface_and_reads_by_dlpack(torch):
    # godevarrow's __cuda_array_interface__ says read-only (Arrow data is
    # immutable), and PyTorch refuses read-only memory there (seen with
    # PyTorch 2.11 on an H200: "the read only flag is not supported"), so
    # torch users take DLPack, which PyTorch reads without a copy
    g = gda.array(pa.array(range(N), pa.int64())).to_device("cuda:0")
    assert g.__cuda_array_interface__["data"][1] is True
    with pytest.raises(TypeError, match="read only"):
        torch.as_tensor(g, device="cuda:0")
    t = torch.from_dlpack(g)
    assert t.data_ptr() == device_ptr(g), "torch.from_dlpack copied godevarrow's array"
    assert t.cpu().tolist() == list(range(N))


# ------------------------------------------------ the producer's stream

SLOW_FILL = r"""
extern "C" __global__ void slow_fill(long long *out, long long n, long long value, long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x)
        out[i] = value;
}
"""


def _slow_fill_on(cp, stream, x, value: int) -> None:
    """Queues on `stream` a kernel that spins, then fills x with value; checks
    that it still runs when this returns (else the test would prove nothing)."""
    kernel = cp.RawKernel(SLOW_FILL, "slow_fill")
    with stream:
        kernel((1,), (256,), (x, cp.int64(x.size), cp.int64(value), cp.int64(SPIN_CYCLES)))
    assert not stream.done, "the slow kernel had finished already: raise SPIN_CYCLES"


@pytest.mark.parametrize("path", ["dlpack", "cuda_array_interface", "re-export", "copy"])
def test_a_slow_kernel_on_a_cupy_non_blocking_stream_is_never_read_early(cp, path):
    x = cp.zeros(N, dtype=cp.int64)
    cp.cuda.Device(x.device.id).synchronize()
    stream = cp.cuda.Stream(non_blocking=True)
    _slow_fill_on(cp, stream, x, 7)
    with stream:  # CuPy names its current stream to the consumer
        if path == "cuda_array_interface":
            g = gda.array(type("CAIOnly", (), {"__cuda_array_interface__": x.__cuda_array_interface__})())
        else:
            g = gda.array(x)
    if path == "re-export":
        other = cp.cuda.Stream(non_blocking=True)
        with other:
            got = cp.from_dlpack(g).get(stream=other).tolist()
    elif path == "copy":
        got = g.to_device("cpu").to_pyarrow().to_pylist()
    else:
        got = g.to_pyarrow().to_pylist()
    assert got == [7] * N, f"read before the producer's kernel finished: {sorted(set(got))}"
    stream.synchronize()


@pytest.mark.parametrize("path", ["dlpack", "copy"])
def test_a_slow_kernel_on_a_torch_side_stream_is_never_read_early(torch, path):
    t = torch.zeros(N, dtype=torch.int64, device="cuda:0")
    torch.cuda.synchronize()
    stream = torch.cuda.Stream()  # PyTorch's pool streams are non-blocking
    with torch.cuda.stream(stream):
        torch.cuda._sleep(SPIN_CYCLES)
        t.fill_(7)
        assert not stream.query(), "the sleep had finished already: raise SPIN_CYCLES"
        g = gda.array(t)  # torch makes godevarrow's stream wait on its current one
    got = (g.to_device("cpu") if path == "copy" else g).to_pyarrow().to_pylist()
    assert got == [7] * N, f"read before the producer's kernel finished: {sorted(set(got))}"
    stream.synchronize()


SLOW_SUM = r"""
extern "C" __global__ void slow_sum(const long long *in, long long n, long long *out, long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
    long long s = 0;
    for (long long i = 0; i < n; i++) s += in[i];
    *out = s;
}
"""


def test_device_memory_freed_while_a_kernel_reads_it_is_reused_only_after_the_kernel(cp):
    # the pool (gosrc/device/cuda/devpool.c) keeps cuMemFree's promise: a
    # block freed while queued work still reads it is handed out again only
    # after a synchronization of the context
    first = gda.array(pa.array(np.arange(N, dtype=np.int64))).to_device("cuda:0")
    gda._godevarrow.debug_release_pools()
    view = cp.from_dlpack(first)
    ptr = device_ptr(first)
    out = cp.zeros(1, dtype=cp.int64)
    cp.cuda.Device(0).synchronize()
    stream = cp.cuda.Stream(non_blocking=True)
    kernel = cp.RawKernel(SLOW_SUM, "slow_sum")
    with stream:
        # ten times the other tests' spin: gc.collect() below takes tens of
        # milliseconds with PyTorch and CuPy loaded (the H200 run with the
        # plain spin found the kernel done)
        kernel((1,), (1,), (view, cp.int64(N), out, cp.int64(10 * SPIN_CYCLES)))
    del view, first  # released into the pool while the kernel still spins
    gc.collect()
    assert not stream.done, "the slow kernel had finished already: raise SPIN_CYCLES"
    second = gda.array(pa.array(np.full(N, -1, dtype=np.int64))).to_device("cuda:0")
    assert device_ptr(second) == ptr, "the freed block was not reused: the test proves nothing"
    stream.synchronize()
    assert int(out.get()[0]) == N * (N - 1) // 2, "the block was overwritten while the kernel read it"
    assert second.to_pyarrow().to_pylist() == [-1] * N


def test_a_consumers_stream_waits_for_godevarrows_copy(cp):
    n = 8 << 20  # 64 MiB of int64: a copy that takes a while over the link
    host = gda.array(pa.array(np.arange(n, dtype=np.int64)))
    stream = cp.cuda.Stream(non_blocking=True)
    on_device = host.to_device("cuda:0")
    with stream:  # the consumer's stream is named to __dlpack__, which orders it after the copy
        total = int(cp.from_dlpack(on_device).sum())
    assert total == n * (n - 1) // 2


# ------------------------------------------------ the caller's context


def test_the_callers_own_context_is_left_current(driver):
    ctx = ctypes.c_void_p()
    # a context of the caller's own, not the primary one godevarrow uses
    if hasattr(driver, "cuCtxCreate_v2"):
        driver.cuCtxCreate_v2.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint, ctypes.c_int]
        rc = driver.cuCtxCreate_v2(ctypes.byref(ctx), 0, 0)
    else:
        driver.cuCtxCreate_v4.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_uint, ctypes.c_int]
        rc = driver.cuCtxCreate_v4(ctypes.byref(ctx), None, 0, 0)
    assert rc == 0 and ctx.value, f"cuCtxCreate failed: {rc}"
    driver.cuCtxDestroy_v2.argtypes = [ctypes.c_void_p]
    try:
        g = gda.record_batch(pa.record_batch({"i": [1, None, 3], "s": ["a", None, "ccc"]}))
        on = g.to_device(f"cuda:{gda.cuda_device_count() - 1}")
        assert on.to_device("cpu").to_pyarrow().equals(g.to_pyarrow())
        current = ctypes.c_void_p()
        assert driver.cuCtxGetCurrent(ctypes.byref(current)) == 0
        assert current.value == ctx.value, "godevarrow left another context current"
        popped = ctypes.c_void_p()
        assert driver.cuCtxPopCurrent_v2(ctypes.byref(popped)) == 0
        assert popped.value == ctx.value, "godevarrow left a context pushed above the caller's"
    finally:
        driver.cuCtxDestroy_v2(ctx)


# ---------------------------------------------------- unknown null count


def test_an_unknown_null_count_with_its_bitmap_on_the_device():
    values = [1, None, 3, None, 5, 6, None]
    g = gda.array(pa.array(values, pa.int64())).to_device("cuda:0")
    schema, array = g.__arrow_c_device_array__()
    struct_of(array, ArrowDeviceArray).array.null_count = -1  # the producer did not count
    imported = gda.array(DeviceCapsules(array=(schema, array)))
    assert imported.null_count == -1, "the import read the device bitmap (or guessed)"
    host = imported.to_pyarrow()
    assert host.to_pylist() == values and host.null_count == 3
    with pytest.raises(gda.ArrowInvalid, match="3 nulls"):
        gda.array(imported, requested_schema=pa.field("values", pa.int64(), nullable=False))


def test_unknown_null_counts_of_a_device_slice_are_counted_for_cudf():
    batch = gda.record_batch(
        pa.record_batch(
            {
                "a": [1, None, 3, None, 5],
                "b": [None, 2.0, 3.0, 4.0, None],
                "c": ["x", None, "z", None, None],
                "d": [True, False, None, True, True],
            }
        )
    )
    sliced = batch.to_device("cuda:0").slice(1, 3)  # a slice's counts are unknown
    counted = gda.RecordBatch(gda._godevarrow.array_known_null_counts(sliced._h))
    _schema, exported = counted.__arrow_c_device_array__()
    children = struct_of(exported, ArrowDeviceArray).array.children
    assert [children[i].contents.null_count for i in range(4)] == [2, 0, 2, 1]


# ------------------------------------------- threads and device memory


def _free_device_memory(driver) -> int:
    ctx = ctypes.c_void_p()
    assert driver.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert driver.cuCtxSetCurrent(ctx) == 0
    assert driver.cuCtxSynchronize() == 0  # frees ordered on streams have run
    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    assert driver.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)) == 0
    return free.value


def _round_trips(threads: int, trips: int, batch: pa.RecordBatch) -> None:
    start = threading.Barrier(threads)
    failures: list[str] = []

    def work() -> None:
        start.wait()
        for _ in range(trips):
            on = gda.record_batch(batch).to_device("cuda:0")
            back = gda.record_batch(DeviceArrayOnly(on)).to_device("cpu")
            if not pa.record_batch(back).equals(batch):
                failures.append("a round trip changed the batch")
            del on, back

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=300)  # a hang guard only
    assert not any(w.is_alive() for w in workers), "a round-trip thread hung"
    assert not failures, failures[:3]


def test_eight_threads_of_device_round_trips_give_device_memory_back(driver):
    # about 9 MiB of device memory per trip: one trip's buffers kept would show
    values = pa.array(range(1 << 19), pa.int64())
    batch = pa.record_batch({"v": values, "s": values.cast(pa.string())})
    _round_trips(8, 2, batch)  # warms up whatever the driver and godevarrow pool per thread
    gc.collect()
    before_objects, before_free = gda.debug_live_objects(), _free_device_memory(driver)
    _round_trips(8, 40, batch)
    gc.collect()
    after_objects, after_free = gda.debug_live_objects(), _free_device_memory(driver)
    assert after_objects == before_objects, f"Go objects kept: {before_objects} -> {after_objects}"
    # the driver hands memory out in 2 MiB pages: less than one trip's 9 MiB
    assert before_free - after_free < (4 << 20), f"device memory not given back: {(before_free - after_free) >> 20} MiB"
