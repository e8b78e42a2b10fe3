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


def test_a_cpu_tensor_is_asked_for_without_a_stream():
    assert _lib.dlpack_consumer_stream(int(DeviceType.CPU), 0) == (None, False)


def test_a_tensor_of_a_type_without_a_backend_is_asked_for_without_a_stream():
    # its import then says the type is not read (test_dlpack_devices)
    assert _lib.dlpack_consumer_stream(int(DeviceType.METAL), 0) == (None, False)


@pytest.mark.fakecuda
def test_the_dlpack_consumer_stream_is_the_callers_default_only_in_the_devices_context():
    import fakecuda as fake

    fake.make_current(0)  # device 0's primary context, as CuPy and PyTorch make it current
    streams = fake.live()["streams"]
    stream, pooled = _lib.dlpack_consumer_stream(int(DeviceType.CUDA), 0)
    assert (stream, pooled) == (1, False), "the caller's context is the device's: its legacy default stream"
    stream, pooled = _lib.dlpack_consumer_stream(int(DeviceType.CUDA), 1)
    assert stream > 2 and pooled, "another device's context is current: a pooled stream, not 1 (that context's)"
    # given back to its backend's pool at once
    assert fake.live()["streams"] == streams
    assert device_count(DeviceType.CUDA) == int(os.environ.get("FAKECUDA_DEVICES", "2"))


@pytest.mark.nocuda
def test_without_a_driver_the_cuda_backend_has_no_devices():
    assert device_count(DeviceType.CUDA) == 0
    with pytest.raises(DeviceError, match="CUDA is not available"):
        _lib.dlpack_consumer_stream(int(DeviceType.CUDA), 0)
