"""DLPack: the ``__dlpack__`` producer of Array and the consumer behind
``godevarrow.array(obj)`` for objects such as numpy and CuPy arrays."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from . import _godevarrow as _lib
from ._device import DeviceType
from ._godevarrow import ArrowInvalid, DeviceError, DLPackError

if TYPE_CHECKING:  # pragma: no cover
    from ._core import Array

# The DLPack version the extension produces and reads.
DLPACK_VERSION = (1, 1)


def export(
    arr: Array,
    *,
    stream: Optional[int],
    max_version: Optional[tuple[int, int]],
    dl_device: Optional[tuple[int, int]],
    copy: Optional[bool],
) -> object:
    device = arr.__dlpack_device__()
    if device[0] == DeviceType.CPU and stream is not None:
        raise ArrowInvalid(f"stream must be None for an array in CPU memory, got {stream!r}")
    if dl_device is not None and tuple(dl_device) != tuple(device):
        raise DLPackError(
            f"cannot export to DLPack device {tuple(dl_device)}: the array is on {tuple(device)} "
            "and copies between devices are not available in this build"
        )
    if copy:
        raise DLPackError("copy=True is not supported: godevarrow exports DLPack tensors zero-copy only")
    versioned = max_version is not None and max_version[0] >= 1
    return _lib.dlpack_export(arr._h, versioned)


def from_dlpack(obj: Any) -> Array:
    from ._core import Array

    if hasattr(obj, "__dlpack_device__"):
        dev_type, dev_id = obj.__dlpack_device__()
        if dev_type != DeviceType.CPU:
            raise DeviceError(
                f"the object is on DLPack device ({dev_type}, {dev_id}); only CPU tensors can be imported by this build"
            )
    try:
        capsule = obj.__dlpack__(max_version=DLPACK_VERSION)
    except TypeError:  # a producer that predates DLPack 1.0's keywords
        capsule = obj.__dlpack__()
    return Array(_lib.dlpack_import(capsule))
