"""The device backend seam as the Python layer sees it: the traits it asks
instead of comparing device types, and the binding's per-backend calls."""

from __future__ import annotations

import os

import pytest
from godevarrow import _godevarrow as _lib
from godevarrow._device import DeviceTraits, DeviceType, device_count, device_traits
from godevarrow._godevarrow import DeviceError


def test_cpu_traits_are_host_memory_without_streams():
    assert device_traits(DeviceType.CPU) == DeviceTraits(host_accessible=True, streams=False, device_memory=False)


@pytest.mark.parametrize("t", [DeviceType.METAL, DeviceType.ROCM, 99, -5, 1 << 40])
def test_a_type_without_a_backend_has_no_traits(t):
    assert device_traits(t) == DeviceTraits(False, False, False)
    assert device_count(t) == 0


@pytest.mark.parametrize("t", [None, "cuda", 2.0, True])
def test_a_device_type_that_is_not_an_int_has_no_traits(t):
    assert device_traits(t) == DeviceTraits(False, False, False)


def test_the_cuda_backend_is_linked_into_the_binding():
    # registered whether or not a driver loads: traits are the backend's, not the driver's
    assert device_traits(DeviceType.CUDA) == DeviceTraits(host_accessible=False, streams=True, device_memory=True)
    for t in (DeviceType.CUDA_HOST, DeviceType.CUDA_MANAGED):
        assert device_traits(t) == DeviceTraits(host_accessible=True, streams=True, device_memory=False)


def test_the_cpu_backend_makes_no_streams():
    with pytest.raises(DeviceError, match="the CPU has no streams"):
        _lib.stream_new(int(DeviceType.CPU), 0)


def test_a_stream_of_a_type_without_a_backend_is_refused():
    with pytest.raises(DeviceError, match="no metal backend"):
        _lib.stream_new(int(DeviceType.METAL), 0)


@pytest.mark.fakecuda
def test_stream_new_makes_a_stream_of_the_cuda_backend():
    handle, stream = _lib.stream_new(int(DeviceType.CUDA), 1)
    assert stream > 2  # a stream of its own, not one of the special handles 1 and 2
    del handle  # released through its backend
    assert device_count(DeviceType.CUDA) == int(os.environ.get("FAKECUDA_DEVICES", "2"))


@pytest.mark.nocuda
def test_without_a_driver_the_cuda_backend_has_no_devices():
    assert device_count(DeviceType.CUDA) == 0
    with pytest.raises(DeviceError, match="CUDA is not available"):
        _lib.stream_new(int(DeviceType.CUDA), 0)
