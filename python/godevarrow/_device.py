"""Devices: where the memory of an array lives (Arrow C Device Data Interface)."""

from __future__ import annotations

import enum
import functools
from typing import NamedTuple, Union

from . import _godevarrow as _lib
from ._godevarrow import ArrowInvalid, GodevarrowTypeError


class DeviceType(enum.IntEnum):
    """Arrow device types; the values are those of ``ArrowDeviceType`` (and DLPack)."""

    CPU = 1
    CUDA = 2
    CUDA_HOST = 3
    OPENCL = 4
    VULKAN = 7
    METAL = 8
    VPI = 9
    ROCM = 10
    ROCM_HOST = 11
    EXT_DEV = 12
    CUDA_MANAGED = 13
    ONEAPI = 14
    WEBGPU = 15
    HEXAGON = 16


class DeviceTraits(NamedTuple):
    """What the backend of a device type does (all False without a backend).

    host_accessible: the host reads the memory directly once its event completed.
    streams: work on the memory is ordered with the backend's streams and
    events, and a consumer may name a stream (DLPack's ``stream``).
    device_memory: memory of one device that the host cannot read.
    """

    host_accessible: bool
    streams: bool
    device_memory: bool


def device_traits(device_type: object) -> DeviceTraits:
    """The traits of a device type's backend, as the Go core registered it:
    code asks these instead of comparing device types."""
    if not isinstance(device_type, int) or isinstance(device_type, bool):
        return DeviceTraits(False, False, False)
    return _traits(int(device_type))


@functools.lru_cache(maxsize=64)
def _traits(device_type: int) -> DeviceTraits:
    # backends register when the extension loads: the answer never changes
    return DeviceTraits(*_lib.device_traits(device_type))


def device_count(device_type: int) -> int:
    """The number of devices of a device type's backend (0 without a backend
    or driver). Never raises."""
    return _lib.device_count(int(device_type))


class Device:
    """A device type and id. Immutable, hashable, equal by value.

    ``str(Device.cpu())`` is ``"cpu"``, ``str(Device.cuda(1))`` is ``"cuda:1"``;
    wherever a device is taken, those strings are accepted too, this
    constructor included: ``Device("cuda:1")``, ``Device("cuda", 1)`` and
    ``Device(DeviceType.CUDA, 1)`` are the same device. A device type without
    an id is device 0 (the CPU's id is always -1).
    """

    __slots__ = ("_type", "_id", "_key")
    _type: DeviceType
    _id: int
    _key: tuple[int, int]  # (type, id) as plain ints: what the extension takes

    def __init__(self, device_type: int | DeviceType | str, device_id: int | None = None) -> None:
        if isinstance(device_type, str):
            dtype, parsed_id = _parse(device_type)
            if dtype != DeviceType.CPU and None not in (parsed_id, device_id) and device_id != parsed_id:
                raise ArrowInvalid(f"device {device_type!r} and device_id {device_id} disagree")
            device_id = parsed_id if parsed_id is not None else device_id
        else:
            try:
                dtype = DeviceType(device_type)
            except ValueError:
                raise ArrowInvalid(f"unknown device type {device_type!r}") from None
        if device_id is None:
            device_id = -1 if dtype == DeviceType.CPU else 0
        if not isinstance(device_id, int) or isinstance(device_id, bool):
            raise GodevarrowTypeError(f"device_id must be an int, not {type(device_id).__name__}")
        if dtype == DeviceType.CPU:
            device_id = -1
        elif device_id < 0:
            raise ArrowInvalid(f"a {dtype.name} device needs a non-negative device_id, got {device_id}")
        object.__setattr__(self, "_type", dtype)
        object.__setattr__(self, "_id", device_id)
        object.__setattr__(self, "_key", (int(dtype), device_id))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Device is immutable")

    @classmethod
    def cpu(cls) -> Device:
        """The host (``"cpu"``)."""
        return cls(DeviceType.CPU)

    @classmethod
    def cuda(cls, device_id: int = 0) -> Device:
        """CUDA device ``device_id`` (``"cuda:N"``)."""
        return cls(DeviceType.CUDA, device_id)

    @property
    def device_type(self) -> DeviceType:
        """The kind of memory (``DeviceType.CPU``, ``DeviceType.CUDA``, ...)."""
        return self._type

    @property
    def device_id(self) -> int:
        """Which device of its type: -1 for the CPU, else 0, 1, ..."""
        return self._id

    def __eq__(self, other: object) -> bool:
        """Equal to another Device with the same type and id, or to a string naming it (``"cuda:0"``)."""
        if isinstance(other, str):
            try:
                other = as_device(other)
            except ValueError:
                return False
        if not isinstance(other, Device):
            return NotImplemented
        return self._type == other._type and self._id == other._id

    def __hash__(self) -> int:
        return hash((int(self._type), self._id))

    def __str__(self) -> str:
        if self._type == DeviceType.CPU:
            return "cpu"
        return f"{self._type.name.lower()}:{self._id}"

    def __repr__(self) -> str:
        return f"Device({str(self)!r})"


DeviceLike = Union[Device, str]


def _parse(device: str) -> tuple[DeviceType, int | None]:
    """The type and id (None when the string names none) of "cpu", "cuda",
    "cuda:N" and the other device types' names."""
    name, sep, ident = device.strip().lower().partition(":")
    for dtype in DeviceType:
        if dtype.name.lower() == name:
            if dtype == DeviceType.CPU:
                if sep and ident not in ("-1", "0"):
                    raise ArrowInvalid(f"invalid device {device!r}: the CPU has no device ids")
                return dtype, -1
            if not sep:
                return dtype, None
            if not ident.isdigit():
                raise ArrowInvalid(f"invalid device {device!r}: the id must be a non-negative integer")
            return dtype, int(ident)
    raise ArrowInvalid(f"unknown device {device!r} (expected 'cpu', 'cuda' or 'cuda:N')")


def as_device(device: DeviceLike) -> Device:
    """A Device from a Device or one of the strings "cpu", "cuda", "cuda:N"."""
    if isinstance(device, Device):
        return device
    if not isinstance(device, str):
        raise GodevarrowTypeError(f"expected a Device or a string like 'cpu' or 'cuda:0', got {type(device).__name__}")
    return _named(device)


# Devices are immutable: the few a program names are made once (a small
# copy's whole cost was otherwise mostly parsing its device's name). An
# invalid name raises, and is not kept.
@functools.lru_cache(maxsize=64)
def _named(device: str) -> Device:
    return Device(device)


@functools.lru_cache(maxsize=64)
def device_of(device_type: int, device_id: int) -> Device:
    """The Device of a device type and id as the extension reports them (a
    valid pair), made once."""
    return Device(device_type, device_id)
