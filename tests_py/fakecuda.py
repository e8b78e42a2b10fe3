"""ctypes access to the strict fake CUDA driver (tests_go/fakecuda), and a
foreign CUDA producer built on it the way cuDF builds its device arrays: the
buffers are filled by asynchronous host-to-device copies on a non-blocking
stream, and the exported sync_event is recorded after them."""

from __future__ import annotations

import ctypes
import os
from typing import Optional

import pyarrow as pa
from cabi import ARRAY_RELEASE, ArrowDeviceArray

LIBRARY = os.environ.get("GODEVARROW_LIBCUDA", "")
HTOD, DTOH, DTOD = 1, 2, 3
CUDA_ERROR_INVALID_VALUE = 1
CUDA_ERROR_OUT_OF_MEMORY = 2
CUDA_ERROR_LAUNCH_FAILED = 719


def load() -> Optional[ctypes.CDLL]:
    if "fakecuda" not in os.path.basename(LIBRARY) or not os.path.exists(LIBRARY):
        return None
    lib = ctypes.CDLL(LIBRARY)
    for name in (
        "fakecuda_live_allocations",
        "fakecuda_live_bytes",
        "fakecuda_live_events",
        "fakecuda_live_streams",
        "fakecuda_live_host_allocations",
        "fakecuda_sync_count",
    ):
        getattr(lib, name).restype = ctypes.c_longlong
    lib.fakecuda_bytes_copied.restype = ctypes.c_longlong
    lib.fakecuda_copy_calls.restype = ctypes.c_longlong
    lib.fakecuda_call_count.restype = ctypes.c_longlong
    lib.fakecuda_device_of.argtypes = [ctypes.c_ulonglong]
    lib.fakecuda_call_count.argtypes = [ctypes.c_char_p]
    lib.fakecuda_fail_nth.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_ulonglong), ctypes.c_size_t]
    lib.cuMemFree_v2.argtypes = [ctypes.c_ulonglong]
    lib.cuMemcpyHtoDAsync_v2.argtypes = [ctypes.c_ulonglong, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    lib.cuMemcpyAsync.argtypes = [ctypes.c_ulonglong, ctypes.c_ulonglong, ctypes.c_size_t, ctypes.c_void_p]
    lib.cuMemcpyDtoDAsync_v2.argtypes = [ctypes.c_ulonglong, ctypes.c_ulonglong, ctypes.c_size_t, ctypes.c_void_p]
    lib.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_size_t]
    lib.cuStreamCreate.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint]
    lib.cuStreamDestroy_v2.argtypes = [ctypes.c_void_p]
    lib.cuStreamSynchronize.argtypes = [ctypes.c_void_p]
    lib.cuEventCreate.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint]
    lib.cuEventRecord.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.cuEventDestroy_v2.argtypes = [ctypes.c_void_p]
    lib.cuDevicePrimaryCtxRetain.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]
    lib.cuCtxSetCurrent.argtypes = [ctypes.c_void_p]
    lib.cuStreamWaitEvent.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint]
    lib.cuMemcpyDtoHAsync_v2.argtypes = [ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_size_t, ctypes.c_void_p]
    lib.cuMemAllocHost_v2.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
    lib.cuMemFreeHost.argtypes = [ctypes.c_void_p]
    lib.cuMemAllocManaged.argtypes = [ctypes.POINTER(ctypes.c_ulonglong), ctypes.c_size_t, ctypes.c_uint]
    return lib


LIB = load()


def check(rc: int, what: str) -> None:
    if rc != 0:
        raise RuntimeError(f"{what} failed with CUDA error {rc}")


def make_current(device: int) -> None:
    assert LIB is not None
    check(LIB.cuInit(0), "cuInit")
    ctx = ctypes.c_void_p()
    check(LIB.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), device), "cuDevicePrimaryCtxRetain")
    check(LIB.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")


def live() -> dict[str, int]:
    """What the driver holds, less what godevarrow's CUDA pools keep for
    reuse (bounded, no leak): what godevarrow's operations still hold."""
    assert LIB is not None
    from godevarrow import _godevarrow

    pooled = _godevarrow.debug_counters()
    return {
        "allocations": LIB.fakecuda_live_allocations() - pooled.pooled_device_blocks,
        "bytes": LIB.fakecuda_live_bytes() - pooled.pooled_device_bytes,
        "events": LIB.fakecuda_live_events() - pooled.pooled_events,
        "streams": LIB.fakecuda_live_streams() - pooled.pooled_streams,
        "host_allocations": LIB.fakecuda_live_host_allocations() - pooled.pooled_host_buffers,
    }


def read_device(ptr: int, n: int, device: int = 0) -> bytes:
    """A synchronous device-to-host copy, with no wait on anyone's event."""
    assert LIB is not None
    make_current(device)
    buf = ctypes.create_string_buffer(max(n, 1))
    check(LIB.cuMemcpyDtoH_v2(buf, ptr, n), "cuMemcpyDtoH_v2")
    return buf.raw[:n]


PyCapsule_New = ctypes.pythonapi.PyCapsule_New
PyCapsule_New.restype = ctypes.py_object
PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


# Producers whose array was offered and not yet released: a C producer's
# release callback is code in its library, alive for the process, while a
# ctypes callback is freed with its Python object, and a consumer may call
# it after the producer object itself is gone (gda.array(CudaProducer(...))).
_AWAITING_RELEASE: set = set()


class CudaProducer:
    """A flat pyarrow array (no children) copied to a fake CUDA device the way
    cuDF does it, offered through __arrow_c_device_array__ once."""

    def __init__(
        self, values: pa.Array, device: int = 0, record_event: bool = True, one_allocation: bool = False
    ) -> None:
        assert LIB is not None
        self.values = values
        self.device = device
        self.releases = 0
        self.device_buffers: list[int] = []
        make_current(device)
        stream = ctypes.c_void_p()
        check(LIB.cuStreamCreate(ctypes.byref(stream), 1), "cuStreamCreate")  # non-blocking, like cuDF's
        self.stream = stream
        buffers = values.buffers()
        self.struct = ArrowDeviceArray()
        self.c_buffers = (ctypes.c_void_p * len(buffers))()
        # one_allocation: every buffer carved from one cuMemAlloc, 64-byte
        # aligned, as a pool allocator (RMM, CuPy) hands them out
        block, at = ctypes.c_ulonglong(), 0
        if one_allocation:
            total = sum((b.size + 63) // 64 * 64 for b in buffers if b is not None)
            check(LIB.cuMemAlloc_v2(ctypes.byref(block), max(total, 1)), "cuMemAlloc_v2")
            self.device_buffers.append(block.value)
        for i, buf in enumerate(buffers):
            if buf is None:
                continue
            ptr = ctypes.c_ulonglong(block.value + at)
            at += (buf.size + 63) // 64 * 64
            if not one_allocation:
                check(LIB.cuMemAlloc_v2(ctypes.byref(ptr), max(buf.size, 1)), "cuMemAlloc_v2")
                self.device_buffers.append(ptr.value)
            check(LIB.cuMemcpyHtoDAsync_v2(ptr.value, buf.address, buf.size, stream), "cuMemcpyHtoDAsync_v2")
            self.c_buffers[i] = ptr.value
        self.event = ctypes.c_void_p()
        check(LIB.cuEventCreate(ctypes.byref(self.event), 2), "cuEventCreate")
        if record_event:
            check(LIB.cuEventRecord(self.event, stream), "cuEventRecord")
        self.event_cell = ctypes.c_void_p(self.event.value)
        a = self.struct.array
        a.length, a.null_count, a.offset = len(values), values.null_count, values.offset
        a.n_buffers, a.n_children = len(buffers), 0
        a.buffers = ctypes.cast(self.c_buffers, ctypes.POINTER(ctypes.c_void_p))
        self._release = ARRAY_RELEASE(self._on_release)
        a.release = self._release
        self.struct.device_type = 2
        self.struct.device_id = device
        self.struct.sync_event = ctypes.addressof(self.event_cell)

    def _on_release(self, _arr: object) -> None:
        assert LIB is not None
        make_current(self.device)
        for p in self.device_buffers:
            check(LIB.cuMemFree_v2(p), "cuMemFree_v2")
        check(LIB.cuEventDestroy_v2(self.event), "cuEventDestroy_v2")
        check(LIB.cuStreamDestroy_v2(self.stream), "cuStreamDestroy_v2")
        self.device_buffers = []
        self.struct.array.release = ARRAY_RELEASE()
        self.releases += 1
        _AWAITING_RELEASE.discard(self)

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        schema = pa.field("values", self.values.type).__arrow_c_schema__()
        _AWAITING_RELEASE.add(self)
        return schema, PyCapsule_New(ctypes.addressof(self.struct), b"arrow_device_array", None)


# ------------------------------------------------------------------ DLPack


def device_array_struct(capsule: object) -> ArrowDeviceArray:
    """The ArrowDeviceArray inside an arrow_device_array capsule (still owned by it)."""
    return ArrowDeviceArray.from_address(PyCapsule_GetPointer(capsule, b"arrow_device_array"))


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [
    ("major", ctypes.c_uint32),
    ("minor", ctypes.c_uint32),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", DELETER),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor),
]

PyCapsule_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
PyCapsule_GetPointer.restype = ctypes.c_void_p
PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def dlpack_tensor(capsule: object, name: bytes = b"dltensor_versioned") -> DLManagedTensorVersioned:
    return DLManagedTensorVersioned.from_address(PyCapsule_GetPointer(capsule, name))


_DTYPES = {"i": 0, "u": 1, "f": 2}


class FakeCupyArray:
    """A 1-D numeric array on a fake CUDA device, made the way CuPy makes one:
    filled by an asynchronous host-to-device copy on a non-blocking stream.
    It offers __cuda_array_interface__ v3 (with that stream) and DLPack 1.x
    (ordering the consumer's stream after its copy with an event). memory is
    "device" (cupy.cuda.Memory), "managed" (cupy.cuda.ManagedMemory: DLPack
    kDLCUDAManaged, cupy/_core/dlpack.pyx) or "host" (pinned, kDLCUDAHost)."""

    _DLPACK_DEVICE = {"device": 2, "managed": 13, "host": 3}

    def __init__(self, values, device: int = 0, mask=None, memory: str = "device") -> None:
        import numpy as np

        assert LIB is not None and memory in self._DLPACK_DEVICE
        self.host = np.ascontiguousarray(values)
        self.device = device
        self.memory = memory
        self.mask = mask
        self.deleted = 0
        self.dlpack_streams: list = []
        make_current(device)
        self.stream = ctypes.c_void_p()
        check(LIB.cuStreamCreate(ctypes.byref(self.stream), 1), "cuStreamCreate")
        self.ptr = ctypes.c_ulonglong()
        size = max(self.host.nbytes, 1)
        if memory == "device":
            check(LIB.cuMemAlloc_v2(ctypes.byref(self.ptr), size), "cuMemAlloc_v2")
        elif memory == "managed":
            check(LIB.cuMemAllocManaged(ctypes.byref(self.ptr), size, 1), "cuMemAllocManaged")
        else:
            pinned = ctypes.c_void_p()
            check(LIB.cuMemAllocHost_v2(ctypes.byref(pinned), size), "cuMemAllocHost_v2")
            self.ptr.value = pinned.value
            ctypes.memset(self.ptr.value, 0, size)
        # cuMemcpyAsync: with unified addressing the driver infers the kind
        # of each pointer (CUDA Driver API, cuMemcpyAsync), as CuPy's
        # cudaMemcpyDefault copies do
        check(LIB.cuMemcpyAsync(self.ptr.value, self.host.ctypes.data, self.host.nbytes, self.stream), "cuMemcpyAsync")
        self.event = ctypes.c_void_p()
        check(LIB.cuEventCreate(ctypes.byref(self.event), 2), "cuEventCreate")
        check(LIB.cuEventRecord(self.event, self.stream), "cuEventRecord")
        self._tensors: list = []

    @property
    def __cuda_array_interface__(self) -> dict:
        typestr = self.host.dtype.str
        return {
            "shape": self.host.shape,
            "typestr": typestr,
            "data": (self.ptr.value, False),
            "version": 3,
            "strides": None,
            "mask": self.mask,
            "stream": self.stream.value,
        }

    def __dlpack_device__(self) -> tuple[int, int]:
        return (self._DLPACK_DEVICE[self.memory], self.device)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        assert LIB is not None
        self.dlpack_streams.append(stream)
        make_current(self.device)
        if stream != -1:
            handle = 1 if stream is None else stream
            check(LIB.cuStreamWaitEvent(handle, self.event, 0), "cuStreamWaitEvent")
        t = DLManagedTensorVersioned()
        t.major, t.minor = 1, 1
        t.flags = 0
        shape = (ctypes.c_int64 * 1)(self.host.shape[0])
        t.dl_tensor.data = self.ptr.value
        t.dl_tensor.device = DLDevice(*self.__dlpack_device__())
        t.dl_tensor.ndim = 1
        t.dl_tensor.dtype = DLDataType(_DTYPES[self.host.dtype.kind], self.host.dtype.itemsize * 8, 1)
        t.dl_tensor.shape = shape
        t.dl_tensor.strides = None
        t.dl_tensor.byte_offset = 0

        def deleter(_p):
            self.deleted += 1

        t.deleter = DELETER(deleter)
        self._tensors.append((t, shape, t.deleter))
        return PyCapsule_New(ctypes.addressof(t), b"dltensor_versioned", None)

    def free(self) -> None:
        """Frees the device memory (call once every consumer is done)."""
        assert LIB is not None
        make_current(self.device)
        if self.memory == "host":
            check(LIB.cuMemFreeHost(self.ptr.value), "cuMemFreeHost")
        else:
            check(LIB.cuMemFree_v2(self.ptr.value), "cuMemFree_v2")
        check(LIB.cuEventDestroy_v2(self.event), "cuEventDestroy_v2")
        check(LIB.cuStreamDestroy_v2(self.stream), "cuStreamDestroy_v2")


class StreamUser:
    """A consumer-side non-blocking stream, for reading device memory the way
    a CUDA consumer does: asynchronous copies on its stream, then a sync."""

    def __init__(self, device: int = 0) -> None:
        assert LIB is not None
        make_current(device)
        self.device = device
        self.stream = ctypes.c_void_p()
        check(LIB.cuStreamCreate(ctypes.byref(self.stream), 1), "cuStreamCreate")

    @property
    def handle(self) -> int:
        return self.stream.value

    def read(self, ptr: int, n: int) -> bytes:
        assert LIB is not None
        make_current(self.device)
        buf = ctypes.create_string_buffer(max(n, 1))
        check(LIB.cuMemcpyDtoHAsync_v2(buf, ptr, n, self.stream), "cuMemcpyDtoHAsync_v2")
        check(LIB.cuStreamSynchronize(self.stream), "cuStreamSynchronize")
        return buf.raw[:n]

    def destroy(self) -> None:
        assert LIB is not None
        make_current(self.device)
        check(LIB.cuStreamDestroy_v2(self.stream), "cuStreamDestroy_v2")


class HostVisibleProducer:
    """A flat pyarrow array in pinned host memory (device_type CUDA_HOST) or
    managed memory (CUDA_MANAGED), with a sync_event, offered once through
    __arrow_c_device_array__ and counting its release calls."""

    def __init__(self, values: pa.Array, memory: str, device: int = 0) -> None:
        assert LIB is not None and memory in ("host", "managed")
        self.values, self.device, self.memory = values, device, memory
        self.releases = 0
        self.allocations: list[int] = []
        make_current(device)
        buffers = values.buffers()
        self.c_buffers = (ctypes.c_void_p * len(buffers))()
        for i, buf in enumerate(buffers):
            if buf is None:
                continue
            if memory == "host":
                ptr = ctypes.c_void_p()
                check(LIB.cuMemAllocHost_v2(ctypes.byref(ptr), max(buf.size, 1)), "cuMemAllocHost_v2")
                address = ptr.value
            else:
                dptr = ctypes.c_ulonglong()
                check(LIB.cuMemAllocManaged(ctypes.byref(dptr), max(buf.size, 1), 1), "cuMemAllocManaged")
                address = dptr.value
            ctypes.memmove(address, buf.address, buf.size)
            self.allocations.append(address)
            self.c_buffers[i] = address
        self.event = ctypes.c_void_p()
        check(LIB.cuEventCreate(ctypes.byref(self.event), 2), "cuEventCreate")
        check(LIB.cuEventRecord(self.event, None), "cuEventRecord")
        self.event_cell = ctypes.c_void_p(self.event.value)
        self.struct = ArrowDeviceArray()
        a = self.struct.array
        a.length, a.null_count, a.offset = len(values), values.null_count, values.offset
        a.n_buffers, a.n_children = len(buffers), 0
        a.buffers = ctypes.cast(self.c_buffers, ctypes.POINTER(ctypes.c_void_p))
        self._release = ARRAY_RELEASE(self._on_release)
        a.release = self._release
        self.struct.device_type = 3 if memory == "host" else 13
        self.struct.device_id = device
        self.struct.sync_event = ctypes.addressof(self.event_cell)

    def _on_release(self, _arr: object) -> None:
        assert LIB is not None
        make_current(self.device)
        for p in self.allocations:
            if self.memory == "host":
                check(LIB.cuMemFreeHost(p), "cuMemFreeHost")
            else:
                check(LIB.cuMemFree_v2(p), "cuMemFree_v2")
        check(LIB.cuEventDestroy_v2(self.event), "cuEventDestroy_v2")
        self.allocations = []
        self.struct.array.release = ARRAY_RELEASE()
        self.releases += 1
        _AWAITING_RELEASE.discard(self)

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        schema = pa.field("values", self.values.type).__arrow_c_schema__()
        _AWAITING_RELEASE.add(self)
        return schema, PyCapsule_New(ctypes.addressof(self.struct), b"arrow_device_array", None)
