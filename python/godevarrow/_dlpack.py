"""Tensor protocols: DLPack (producer and consumer) and the CUDA Array
Interface version 3 (producer and consumer).

Both describe 1-D fixed-width numbers without nulls. The stream rules:

* DLPack producer (``Array.__dlpack__``): on CUDA, ``stream=None`` means the
  legacy default stream, ``1``/``2`` the legacy/per-thread default streams,
  any other positive integer a ``CUstream``; the consumer's stream is made to
  wait for the array's ``sync_event`` (no host synchronization). ``-1`` asks
  for no synchronization; ``0`` is refused as ambiguous. On the CPU the
  stream must be ``None`` (or ``-1``).
* DLPack producer, pinned (``CUDA_HOST``) and managed (``CUDA_MANAGED``)
  memory: a stream is taken and made to wait as on CUDA; ``None`` (a host
  reader such as NumPy) waits on the host before returning.
* DLPack consumer (``godevarrow.array(x)``): for a CUDA, pinned or managed
  tensor godevarrow names a stream to ``x.__dlpack__(stream=...)`` and
  records the array's event on it, so later readers (the host included,
  before it reads) wait for the producer. The stream is ``1``, the legacy
  default stream, when the calling thread's current context is the
  device's (then CuPy and PyTorch, on their default stream, have nothing to
  order), else one of godevarrow's pooled streams (``dlpack.StreamForProducer``).
* CUDA Array Interface producer: when the array has a ``sync_event``, the
  legacy default stream is made to wait for it and ``stream`` is ``1``;
  otherwise ``stream`` is ``None`` (the data is ready).
* CUDA Array Interface consumer: a ``stream`` is recorded into the array's
  event. ``mask`` is refused (it is a byte-per-value array; use
  ``godevarrow.cupy.from_cupy(x, mask=...)``).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Optional, TypeVar

from . import _godevarrow as _lib
from ._device import Device, DeviceType, device_traits
from ._godevarrow import ArrowInvalid, ArrowNotImplementedError, DLPackError

if TYPE_CHECKING:  # pragma: no cover
    from ._array import Array

_Handle = Any  # a handle capsule of the extension: the array module wraps it
_A = TypeVar("_A", bound=_lib.ArrayBase)

# DLPack dtype codes
_INT, _UINT, _FLOAT = 0, 1, 2
_ARROW_FORMATS = {
    (_INT, 8): "c",
    (_INT, 16): "s",
    (_INT, 32): "i",
    (_INT, 64): "l",
    (_UINT, 8): "C",
    (_UINT, 16): "S",
    (_UINT, 32): "I",
    (_UINT, 64): "L",
    (_FLOAT, 16): "e",
    (_FLOAT, 32): "f",
    (_FLOAT, 64): "g",
}
_TYPESTR_KINDS = {_INT: "i", _UINT: "u", _FLOAT: "f"}
_ENDIAN = "<" if sys.byteorder == "little" else ">"


def export(
    arr: Array,
    *,
    stream: Optional[int],
    max_version: Optional[tuple[int, int]],
    dl_device: Optional[tuple[int, int]],
    copy: Optional[bool],
) -> object:
    device: tuple[int, int] = arr.__dlpack_device__()
    target = device if dl_device is None else (int(dl_device[0]), int(dl_device[1]))
    copied = False
    if target != device:
        if copy is False:
            raise DLPackError(
                f"the array is on DLPack device {device}, {target} was requested, and copy=False forbids copying"
            )
        dst = Device.cpu() if target[0] == DeviceType.CPU else Device(target[0], target[1])
        arr, copied = arr.to_device(dst), True
    handle = arr._h
    if copy and not copied:
        handle, copied = _lib.array_copy(arr._h), True
    versioned = max_version is not None and max_version[0] >= 1
    if copied and not versioned:
        # DLPack < 1.0 cannot say that the tensor is a copy; the spec allows it
        # only with the flag, so refuse rather than hand over a silent copy
        raise DLPackError("a copy was requested or needed, which needs max_version >= (1, 0) to be flagged")
    # Go checks stream against DLPack's rules for the array's device (dlpack.ConsumerStream)
    return _lib.dlpack_export(handle, versioned, copied, stream)


def from_dlpack(obj: Any, cls: type[_A]) -> _A:
    """obj as an instance of cls, imported from its ``__dlpack__`` (the binding
    makes the exchange: the stream named, the capsule taken and imported)."""
    arr = _lib.dlpack_import_from(obj, cls)
    if arr is NotImplemented:
        raise ArrowInvalid(f"{type(obj).__name__} has no __dlpack__")
    return arr


# ------------------------------------------------------ CUDA Array Interface


def cuda_array_interface(arr: Array) -> dict[str, Any]:
    """The ``__cuda_array_interface__`` (version 3) of a CUDA array."""
    if not device_traits(arr.device_type).device_memory:
        raise AttributeError(
            f"__cuda_array_interface__ describes CUDA device memory; this array is on {arr.device} "
            "(use __dlpack__ or the Arrow protocols)"
        )
    t = _lib.tensor_info(arr._h, True)
    kind, bits, stream = _TYPESTR_KINDS[t.code], t.bits, t.stream
    return {
        "shape": (t.length,),
        "typestr": f"{'|' if bits == 8 else _ENDIAN}{kind}{bits // 8}",
        "data": (t.data, True),  # read-only: Arrow data is immutable
        "version": 3,
        "strides": None,
        "descr": [("", f"{'|' if bits == 8 else _ENDIAN}{kind}{bits // 8}")],
        "mask": None,
        "stream": stream or None,
    }


def from_cuda_array_interface(obj: Any) -> _Handle:
    """The handle of an array over obj's ``__cuda_array_interface__``."""
    cai = obj.__cuda_array_interface__
    version = cai.get("version")
    if not isinstance(version, int) or version < 2:
        raise ArrowInvalid(f"__cuda_array_interface__ version must be 2 or 3, got {version!r}")
    shape = tuple(cai["shape"])
    if len(shape) != 1:
        raise ArrowInvalid(f"only 1-D arrays become Arrow arrays; __cuda_array_interface__ has shape {shape}")
    typestr = cai["typestr"]
    if len(typestr) < 3 or typestr[0] not in "<>|=" or typestr[1] not in "iuf" or not typestr[2:].isdigit():
        raise ArrowInvalid(f"unsupported __cuda_array_interface__ typestr {typestr!r}")
    if typestr[0] == ("<" if _ENDIAN == ">" else ">") and typestr[2:] != "1":
        raise ArrowNotImplementedError(f"typestr {typestr!r} is not in this machine's byte order")
    code = {"i": _INT, "u": _UINT, "f": _FLOAT}[typestr[1]]
    itemsize = int(typestr[2:])
    fmt = _ARROW_FORMATS.get((code, itemsize * 8))
    if fmt is None:
        raise ArrowNotImplementedError(f"__cuda_array_interface__ typestr {typestr!r} has no Arrow equivalent")
    strides = cai.get("strides")
    if strides is not None and shape[0] > 1 and tuple(strides) != (itemsize,):
        raise ArrowInvalid(
            f"strided arrays (strides {tuple(strides)}, itemsize {itemsize}) are not contiguous; make a contiguous copy"
        )
    if cai.get("mask") is not None:
        raise ArrowNotImplementedError(
            "__cuda_array_interface__ 'mask' is not supported (it is one byte per value; Arrow validity is bits): "
            "use godevarrow.cupy.from_cupy(values, mask=...) or fill the masked values"
        )
    stream = cai.get("stream") if version >= 3 else None
    if stream is None:
        stream = 0
    elif not isinstance(stream, int) or isinstance(stream, bool) or stream <= 0:
        raise ArrowInvalid(f"__cuda_array_interface__ stream must be None or a positive integer, got {stream!r}")
    data = cai["data"]
    ptr = data[0] if data is not None else 0
    return _lib.wrap_cuda_pointer(obj, fmt, int(ptr), int(shape[0]), int(stream))
