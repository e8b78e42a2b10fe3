"""godevarrow.cupy with the real CuPy (requirements-dev.txt installs
cupy-cuda12x, which imports without a GPU): every line that needs no device
runs here; the device legs are in test_gpu.py, which skips with CuPy's own
reason."""

from __future__ import annotations

import fakecuda as fake
import godevarrow as gda
import godevarrow.cupy as gcp
import pyarrow as pa
import pytest

cupy = pytest.importorskip("cupy", reason="CuPy (cupy-cuda12x) is not installed")


def cupy_device_error() -> str:
    """What CuPy itself raises on its first device call here ('' if it has a device)."""
    try:
        cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError as e:
        return str(e)
    return ""


def test_the_installed_cupy_is_accepted():
    assert int(cupy.__version__.split(".")[0]) >= gcp.MIN_CUPY
    assert gcp._cupy() is cupy


@pytest.mark.parametrize("old", ["12.3.0", "9.6.0", "unknown"])
def test_an_older_cupy_is_refused_naming_both_versions(monkeypatch, old):
    monkeypatch.setattr(cupy, "__version__", old)
    with pytest.raises(ImportError, match=f"CuPy >= 13, found CuPy {old}"):
        gcp.to_cupy(gda.array(pa.array([1])))


def test_cpu_arrays_are_refused_before_any_device_call():
    with pytest.raises(gda.ArrowInvalid, match="call .to_device"):
        gcp.to_cupy(gda.array(pa.array([1, 2, 3])))


@pytest.mark.fakecuda
@pytest.mark.usefixtures("device_leak_check")
@pytest.mark.parametrize(
    "values, dtype",
    [
        (pa.array([1, 2], pa.int8()), "int8"),
        (pa.array([1, 2], pa.uint16()), "uint16"),
        (pa.array([1, 2], pa.int32()), "int32"),
        (pa.array([1, 2], pa.uint64()), "uint64"),
        (pa.array([1.5], pa.float16()), "float16"),
        (pa.array([1.5], pa.float32()), "float32"),
        (pa.array([1.5], pa.float64()), "float64"),
    ],
)
def test_cupy_dtype_of_each_number_type(values, dtype):
    g = gda.array(values).to_device("cuda:0")
    assert gcp.cupy_dtype(g) == dtype
    assert cupy.dtype(dtype).itemsize * 8 == values.type.bit_width, "CuPy's own dtype agrees"


@pytest.mark.fakecuda
@pytest.mark.usefixtures("device_leak_check")
@pytest.mark.parametrize(
    "values, message",
    [
        (pa.array([1, None]), "null"),
        (pa.array(["a"]), "string|utf8"),
        (pa.array([True]), "bool"),
    ],
)
def test_arrays_cupy_cannot_hold_are_refused_before_any_device_call(values, message):
    g = gda.array(values).to_device("cuda:0")
    with pytest.raises((gda.ArrowInvalid, gda.ArrowNotImplementedError, BufferError), match=message):
        gcp.to_cupy(g)


@pytest.mark.fakecuda
@pytest.mark.usefixtures("device_leak_check")
@pytest.mark.skipif(not cupy_device_error(), reason="CuPy has a CUDA device here: the no-device path is not reached")
def test_without_a_device_to_cupy_says_what_cupy_says():
    g = gda.array(pa.array([1, 2, 3])).to_device("cuda:0")  # godevarrow's fake driver has a device, CuPy none
    with pytest.raises(gda.DeviceError, match="CuPy cannot use a CUDA device") as e:
        gcp.to_cupy(g)
    assert cupy_device_error() in str(e.value)
    assert isinstance(e.value.__cause__, cupy.cuda.runtime.CUDARuntimeError)


@pytest.mark.fakecuda
@pytest.mark.usefixtures("device_leak_check")
@pytest.mark.skipif(not cupy_device_error(), reason="CuPy has a CUDA device here: the no-device path is not reached")
def test_without_a_device_from_cupy_with_a_mask_says_what_cupy_says():
    src = fake.FakeCupyArray(__import__("numpy").arange(4, dtype="int64"))
    with pytest.raises(gda.DeviceError, match="CuPy cannot use a CUDA device"):
        gcp.from_cupy(src, mask=[True, False, True, True])
    src.free()


def test_the_gpu_tests_skip_with_cupys_own_reason():
    import test_gpu

    reason = cupy_device_error()
    if not reason:
        pytest.skip("CuPy has a CUDA device here: test_gpu.py runs")
    assert "not installed" not in test_gpu.REASON
    assert reason in test_gpu.REASON, test_gpu.REASON
