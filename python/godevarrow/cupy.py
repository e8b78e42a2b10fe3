"""CuPy bridge: ``to_cupy`` and ``from_cupy``, zero-copy through DLPack.

Import CuPy lazily: ``import godevarrow.cupy`` works without CuPy, the
functions raise ``ImportError`` with an install hint when it is missing.
"""

from __future__ import annotations

from typing import Any, Optional

from . import _godevarrow as _lib
from ._array import Array, array
from ._device import DeviceType
from ._godevarrow import ArrowInvalid

__all__ = ["from_cupy", "to_cupy"]


MIN_CUPY = 13


def _cupy() -> Any:
    try:
        import cupy
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError(
            "godevarrow.cupy needs CuPy >= 13: pip install 'godevarrow[cupy]' (or the cupy wheel matching your CUDA)"
        ) from e
    found = getattr(cupy, "__version__", "0")
    major = found.split(".")[0]
    if not major.isdigit() or int(major) < MIN_CUPY:
        raise ImportError(f"godevarrow.cupy needs CuPy >= 13, found CuPy {found}: pip install -U 'godevarrow[cupy]'")
    return cupy


def to_cupy(arr: Array) -> Any:
    """A ``cupy.ndarray`` over the values of a 1-D numeric CUDA array without
    nulls, zero-copy (CuPy's current stream is ordered after the array's
    event). CPU arrays are refused: copy them with ``arr.to_device("cuda")``."""
    cupy = _cupy()
    if arr.device_type != DeviceType.CUDA:
        raise ArrowInvalid(f"to_cupy() is zero-copy and the array is on {arr.device}: call .to_device('cuda') first")
    return cupy.from_dlpack(arr)


def from_cupy(x: Any, *, mask: Optional[Any] = None) -> Array:
    """An Array over a 1-D CuPy array, zero-copy. ``mask`` (optional) is a
    boolean array of the same length, True where a value is valid (the CUDA
    Array Interface's meaning); it is packed into an Arrow validity bitmap on
    the device."""
    values = array(x)
    if mask is None:
        return values
    cupy = _cupy()
    mask = cupy.asarray(mask)
    if mask.shape != (len(values),):
        raise ArrowInvalid(f"mask has shape {mask.shape}, the values have {len(values)}")
    valid = mask.astype(cupy.bool_)
    bits = cupy.packbits(valid, bitorder="little")
    null_count = len(values) - int(cupy.count_nonzero(valid))
    # keep x's stream order: packbits ran on CuPy's current stream, which
    # array() records into the bitmap's event
    return Array(_lib.array_with_validity(values._h, array(bits)._h, null_count))
