"""Devices: where the memory of an array lives (Arrow C Device Data Interface)."""

from __future__ import annotations

import enum
from typing import Union

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


class Device:
    """A device type and id. Immutable, hashable, equal by value.

    ``str(Device.cpu())`` is ``"cpu"``, ``str(Device.cuda(1))`` is ``"cuda:1"``;
    wherever a device is taken, those strings are accepted too.
    """

    __slots__ = ("_type", "_id")
    _type: DeviceType
    _id: int

    def __init__(self, device_type: int | DeviceType, device_id: int = -1) -> None:
        try:
            dtype = DeviceType(device_type)
        except ValueError:
            raise ArrowInvalid(f"unknown device type {device_type!r}") from None
        if not isinstance(device_id, int) or isinstance(device_id, bool):
            raise GodevarrowTypeError(f"device_id must be an int, not {type(device_id).__name__}")
        if dtype == DeviceType.CPU:
            device_id = -1
        elif device_id < 0:
            raise ArrowInvalid(f"a {dtype.name} device needs a non-negative device_id, got {device_id}")
        object.__setattr__(self, "_type", dtype)
        object.__setattr__(self, "_id", device_id)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Device is immutable")

    @classmethod
    def cpu(cls) -> Device:
        return cls(DeviceType.CPU)

    @classmethod
    def cuda(cls, device_id: int = 0) -> Device:
        return cls(DeviceType.CUDA, device_id)

    @property
    def device_type(self) -> DeviceType:
        return self._type

    @property
    def device_id(self) -> int:
        return self._id

    def __eq__(self, other: object) -> bool:
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
        return f"Device({self._type.name}, {self._id})"


DeviceLike = Union[Device, str]


def as_device(device: DeviceLike) -> Device:
    """A Device from a Device or one of the strings "cpu", "cuda", "cuda:N"."""
    if isinstance(device, Device):
        return device
    if not isinstance(device, str):
        raise GodevarrowTypeError(f"expected a Device or a string like 'cpu' or 'cuda:0', got {type(device).__name__}")
    name, sep, ident = device.strip().lower().partition(":")
    for dtype in DeviceType:
        if dtype.name.lower() == name:
            if dtype == DeviceType.CPU:
                if sep and ident not in ("-1", "0"):
                    raise ArrowInvalid(f"invalid device {device!r}: the CPU has no device ids")
                return Device.cpu()
            if not sep:
                return Device(dtype, 0)
            try:
                return Device(dtype, int(ident))
            except ValueError:
                raise ArrowInvalid(f"invalid device {device!r}: the id must be a non-negative integer") from None
    raise ArrowInvalid(f"unknown device {device!r} (expected 'cpu', 'cuda' or 'cuda:N')")
