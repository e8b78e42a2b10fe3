"""CuPy bridge: ``to_cupy`` and ``from_cupy``, zero-copy through DLPack.

Import CuPy lazily: ``import godevarrow.cupy`` works without CuPy; the
functions raise ``godevarrow.MissingDependencyError`` (an ``ImportError``)
naming the extra to install when it is missing.

This module is the Python half of the CUDA backend (gosrc/device/cuda): a
bridge to a CUDA peer, so it may compare device types with CUDA's; the rest
of the package asks a device type's backend (``_device.device_traits``).
"""

from __future__ import annotations

from typing import Any, Optional

from . import _godevarrow as _lib
from ._array import Array, array
from ._device import DeviceType
from ._godevarrow import ArrowInvalid, DeviceError
from ._optional import require

__all__ = ["cupy_dtype", "from_cupy", "to_cupy"]


MIN_CUPY = 13


def _cupy() -> Any:
    cupy = require("cupy", "godevarrow.cupy (CuPy >= 13; or the cupy wheel matching your CUDA)")
    found = getattr(cupy, "__version__", "0")
    major = found.split(".")[0]
    if not major.isdigit() or int(major) < MIN_CUPY:
        raise ImportError(f"godevarrow.cupy needs CuPy >= 13, found CuPy {found}: pip install -U 'godevarrow[cupy]'")
    return cupy


# DLPack dtype (code, bits) -> the CuPy (NumPy) dtype name to_cupy gives
_CUPY_DTYPES = {
    (0, 8): "int8",
    (0, 16): "int16",
    (0, 32): "int32",
    (0, 64): "int64",
    (1, 8): "uint8",
    (1, 16): "uint16",
    (1, 32): "uint32",
    (1, 64): "uint64",
    (2, 16): "float16",
    (2, 32): "float32",
    (2, 64): "float64",
}


def cupy_dtype(arr: Array) -> str:
    """The CuPy dtype ``to_cupy(arr)`` has, without touching a device: the
    array must be 1-D fixed-width numbers without nulls (the DLPack export's
    rules, decided by the extension)."""
    t = _lib.tensor_info(arr._h, False)
    return _CUPY_DTYPES[(t.code, t.bits)]


def _usable_device(cupy: Any) -> None:
    """Raises DeviceError with CuPy's own reason when CuPy cannot use a CUDA
    device (it imports without one; its first device call raises
    ``CUDARuntimeError``, e.g. cudaErrorNoDevice or cudaErrorInsufficientDriver)."""
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError as e:
        raise DeviceError(f"CuPy cannot use a CUDA device: {e}") from e
    if count < 1:
        raise DeviceError("CuPy cannot use a CUDA device: it sees none")


def to_cupy(arr: Array) -> Any:
    """A ``cupy.ndarray`` over the values of a 1-D numeric CUDA array without
    nulls, zero-copy (CuPy's current stream is ordered after the array's
    event). CPU arrays are refused: copy them with ``arr.to_device("cuda")``.
    The array is checked before CuPy is asked for a device."""
    cupy = _cupy()
    if arr.device_type != DeviceType.CUDA:
        raise ArrowInvalid(f"to_cupy() is zero-copy and the array is on {arr.device}: call .to_device('cuda') first")
    dtype = cupy_dtype(arr)
    _usable_device(cupy)
    out = cupy.from_dlpack(arr)
    assert str(out.dtype) == dtype, (out.dtype, dtype)
    return out


def from_cupy(x: Any, *, mask: Optional[Any] = None) -> Array:
    """An Array over a 1-D CuPy array, zero-copy. ``mask`` (optional) is a
    boolean array of the same length, True where a value is valid (the CUDA
    Array Interface's meaning); it is packed into an Arrow validity bitmap on
    the device."""
    values = array(x)
    if mask is None:
        return values
    cupy = _cupy()
    _usable_device(cupy)
    mask = cupy.asarray(mask)
    if mask.shape != (len(values),):
        raise ArrowInvalid(f"mask has shape {mask.shape}, the values have {len(values)}")
    valid = mask.astype(cupy.bool_)
    bits = cupy.packbits(valid, bitorder="little")
    null_count = len(values) - int(cupy.count_nonzero(valid))
    # keep x's stream order: packbits ran on CuPy's current stream, which
    # array() records into the bitmap's event
    return Array(_lib.array_with_validity(values._h, array(bits)._h, null_count))
