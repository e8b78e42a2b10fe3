"""The fake driver's registration, memory-information and address-range
calls (cuMemHostRegister, cuMemHostUnregister, cuMemGetInfo,
cuMemGetAddressRange) answer as the CUDA Driver API documents them, so code
that pins host memory or asks for allocation ranges can be tested on it."""

from __future__ import annotations

import ctypes

import fakecuda as fake
import pytest

pytestmark = pytest.mark.fakecuda

CUDA_ERROR_INVALID_VALUE = 1
CUDA_ERROR_NOT_FOUND = 500
CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712
CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713
CU_MEMORYTYPE_HOST = 1


def lib() -> ctypes.CDLL:
    L = fake.LIB
    assert L is not None
    L.cuMemHostRegister_v2.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint]
    L.cuMemHostUnregister.argtypes = [ctypes.c_void_p]
    L.cuMemGetInfo_v2.argtypes = [ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)]
    L.cuMemGetAddressRange_v2.argtypes = [
        ctypes.POINTER(ctypes.c_ulonglong),
        ctypes.POINTER(ctypes.c_size_t),
        ctypes.c_ulonglong,
    ]
    L.cuPointerGetAttribute.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_ulonglong]
    L.fakecuda_host_flags.restype = ctypes.c_longlong
    L.fakecuda_host_flags.argtypes = [ctypes.c_void_p]
    return L


def test_registered_host_memory_is_pinned_until_unregistered(device_leak_check):
    L = lib()
    fake.make_current(0)
    buf = ctypes.create_string_buffer(4096)
    base = ctypes.addressof(buf)
    fake.check(L.cuMemHostRegister_v2(base, 4096, 1), "cuMemHostRegister_v2")  # PORTABLE
    kind = ctypes.c_uint()
    fake.check(L.cuPointerGetAttribute(ctypes.byref(kind), 2, base + 100), "cuPointerGetAttribute")
    assert kind.value == CU_MEMORYTYPE_HOST
    assert L.fakecuda_host_flags(base) == 1
    # overlapping memory cannot be registered twice, and registered memory
    # is not the driver's to free
    assert L.cuMemHostRegister_v2(base + 2048, 4096, 0) == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
    assert L.cuMemFreeHost(ctypes.c_void_p(base)) == CUDA_ERROR_INVALID_VALUE
    # only the base of a registration unregisters it
    assert L.cuMemHostUnregister(base + 8) == CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED
    fake.check(L.cuMemHostUnregister(base), "cuMemHostUnregister")
    assert L.cuMemHostUnregister(base) == CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED
    assert L.cuPointerGetAttribute(ctypes.byref(kind), 2, base) == CUDA_ERROR_INVALID_VALUE


def test_host_registration_refuses_bad_arguments(device_leak_check):
    L = lib()
    fake.make_current(0)
    buf = ctypes.create_string_buffer(64)
    assert L.cuMemHostRegister_v2(ctypes.addressof(buf), 0, 0) == CUDA_ERROR_INVALID_VALUE
    assert L.cuMemHostRegister_v2(None, 64, 0) == CUDA_ERROR_INVALID_VALUE
    assert L.cuMemHostRegister_v2(ctypes.addressof(buf), 64, 16) == CUDA_ERROR_INVALID_VALUE
    d = ctypes.c_ulonglong()
    fake.check(fake.LIB.cuMemAlloc_v2(ctypes.byref(d), 64), "cuMemAlloc_v2")
    assert L.cuMemHostRegister_v2(d.value, 64, 0) == CUDA_ERROR_INVALID_VALUE  # device memory
    fake.check(fake.LIB.cuMemFree_v2(d.value), "cuMemFree_v2")


def test_address_range_names_the_allocation_holding_a_pointer(device_leak_check):
    L = lib()
    fake.make_current(1)
    d = ctypes.c_ulonglong()
    fake.check(fake.LIB.cuMemAlloc_v2(ctypes.byref(d), 1000), "cuMemAlloc_v2")
    base, size = ctypes.c_ulonglong(), ctypes.c_size_t()
    fake.check(L.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), d.value + 999), "range")
    assert (base.value, size.value) == (d.value, 1000)
    # both outputs are optional
    fake.check(L.cuMemGetAddressRange_v2(None, ctypes.byref(size), d.value), "range")
    assert L.cuMemGetAddressRange_v2(ctypes.byref(base), None, d.value + 1000) == CUDA_ERROR_NOT_FOUND
    host = ctypes.create_string_buffer(8)
    assert L.cuMemGetAddressRange_v2(ctypes.byref(base), None, ctypes.addressof(host)) == CUDA_ERROR_NOT_FOUND
    fake.check(fake.LIB.cuMemFree_v2(d.value), "cuMemFree_v2")


def test_memory_information_shrinks_as_memory_is_allocated(device_leak_check):
    L = lib()
    fake.make_current(0)
    free0, total = ctypes.c_size_t(), ctypes.c_size_t()
    fake.check(L.cuMemGetInfo_v2(ctypes.byref(free0), ctypes.byref(total)), "cuMemGetInfo_v2")
    assert 0 < free0.value <= total.value
    d = ctypes.c_ulonglong()
    fake.check(fake.LIB.cuMemAlloc_v2(ctypes.byref(d), 1 << 20), "cuMemAlloc_v2")
    free1 = ctypes.c_size_t()
    fake.check(L.cuMemGetInfo_v2(ctypes.byref(free1), ctypes.byref(total)), "cuMemGetInfo_v2")
    assert free1.value <= free0.value - (1 << 20)
    assert L.cuMemGetInfo_v2(None, ctypes.byref(total)) == CUDA_ERROR_INVALID_VALUE
    fake.check(fake.LIB.cuMemFree_v2(d.value), "cuMemFree_v2")
