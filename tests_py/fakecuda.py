"""ctypes access to the strict fake CUDA driver (tests_go/fakecuda), and a
foreign CUDA producer built on it the way cuDF builds its device arrays: the
buffers are filled by asynchronous host-to-device copies on a non-blocking
stream, and the exported sync_event is recorded after them."""

from __future__ import annotations

import ctypes
import os
from typing import Optional

import pyarrow as pa

LIBRARY = os.environ.get("GODEVARROW_LIBCUDA", "")
HTOD, DTOH, DTOD = 1, 2, 3
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
    lib.fakecuda_call_count.argtypes = [ctypes.c_char_p]
    lib.fakecuda_fail_nth.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_ulonglong), ctypes.c_size_t]
    lib.cuMemFree_v2.argtypes = [ctypes.c_ulonglong]
    lib.cuMemcpyHtoDAsync_v2.argtypes = [ctypes.c_ulonglong, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    lib.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_size_t]
    lib.cuStreamCreate.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint]
    lib.cuStreamDestroy_v2.argtypes = [ctypes.c_void_p]
    lib.cuStreamSynchronize.argtypes = [ctypes.c_void_p]
    lib.cuEventCreate.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint]
    lib.cuEventRecord.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.cuEventDestroy_v2.argtypes = [ctypes.c_void_p]
    lib.cuDevicePrimaryCtxRetain.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]
    lib.cuCtxSetCurrent.argtypes = [ctypes.c_void_p]
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
    assert LIB is not None
    return {
        "allocations": LIB.fakecuda_live_allocations(),
        "bytes": LIB.fakecuda_live_bytes(),
        "events": LIB.fakecuda_live_events(),
        "streams": LIB.fakecuda_live_streams(),
        "host_allocations": LIB.fakecuda_live_host_allocations(),
    }


def read_device(ptr: int, n: int, device: int = 0) -> bytes:
    """A synchronous device-to-host copy, with no wait on anyone's event."""
    assert LIB is not None
    make_current(device)
    buf = ctypes.create_string_buffer(max(n, 1))
    check(LIB.cuMemcpyDtoH_v2(buf, ptr, n), "cuMemcpyDtoH_v2")
    return buf.raw[:n]


# ------------------------------------------------------------- C structs


class ArrowArray(ctypes.Structure):
    pass


RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArray))
ArrowArray._fields_ = [
    ("length", ctypes.c_int64),
    ("null_count", ctypes.c_int64),
    ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)),
    ("children", ctypes.c_void_p),
    ("dictionary", ctypes.c_void_p),
    ("release", RELEASE),
    ("private_data", ctypes.c_void_p),
]


class ArrowDeviceArray(ctypes.Structure):
    _fields_ = [
        ("array", ArrowArray),
        ("device_id", ctypes.c_int64),
        ("device_type", ctypes.c_int32),
        ("sync_event", ctypes.c_void_p),
        ("reserved", ctypes.c_int64 * 3),
    ]


PyCapsule_New = ctypes.pythonapi.PyCapsule_New
PyCapsule_New.restype = ctypes.py_object
PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class CudaProducer:
    """A flat pyarrow array (no children) copied to a fake CUDA device the way
    cuDF does it, offered through __arrow_c_device_array__ once."""

    def __init__(self, values: pa.Array, device: int = 0, record_event: bool = True) -> None:
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
        for i, buf in enumerate(buffers):
            if buf is None:
                continue
            ptr = ctypes.c_ulonglong()
            check(LIB.cuMemAlloc_v2(ctypes.byref(ptr), max(buf.size, 1)), "cuMemAlloc_v2")
            check(LIB.cuMemcpyHtoDAsync_v2(ptr.value, buf.address, buf.size, stream), "cuMemcpyHtoDAsync_v2")
            self.device_buffers.append(ptr.value)
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
        self._release = RELEASE(self._on_release)
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
        self.struct.array.release = RELEASE()
        self.releases += 1

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        schema = pa.field("values", self.values.type).__arrow_c_schema__()
        return schema, PyCapsule_New(ctypes.addressof(self.struct), b"arrow_device_array", None)
