"""The ctypes mirrors of the Arrow C ABI structs: the one place tests_py
defines them, with the helpers that reach the structs inside capsules
(``struct_of``). adversarial/hostile_cases.py and fakecuda.py build producer structs with them.

Member order and types follow gosrc/include/arrow-c-abi.h (the Arrow C data,
device and stream interfaces): ``const char*`` is c_char_p, ``void*`` is
c_void_p, pointers to structs are typed POINTERs (assign a POINTER instance or
None, not an int), and every callback member is a typed CFUNCTYPE. A NULL
callback therefore reads as a falsy function object, never as None: test it
with ``not s.release`` (or ``ctypes.cast(s.release, ctypes.c_void_p).value is None``).
"""

from __future__ import annotations

import ctypes

ArrowDeviceType = ctypes.c_int32


class ArrowSchema(ctypes.Structure):
    pass


class ArrowArray(ctypes.Structure):
    pass


class ArrowDeviceArray(ctypes.Structure):
    pass


class ArrowArrayStream(ctypes.Structure):
    pass


class ArrowDeviceArrayStream(ctypes.Structure):
    pass


# --------------------------------------------------------- callback types

SCHEMA_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowSchema))
ARRAY_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArray))

GET_SCHEMA = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ArrowArrayStream), ctypes.POINTER(ArrowSchema))
GET_NEXT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ArrowArrayStream), ctypes.POINTER(ArrowArray))
GET_LAST_ERROR = ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.POINTER(ArrowArrayStream))
STREAM_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArrayStream))

DEVICE_GET_SCHEMA = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ArrowDeviceArrayStream), ctypes.POINTER(ArrowSchema))
DEVICE_GET_NEXT = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ArrowDeviceArrayStream), ctypes.POINTER(ArrowDeviceArray)
)
DEVICE_GET_LAST_ERROR = ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.POINTER(ArrowDeviceArrayStream))
DEVICE_STREAM_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowDeviceArrayStream))

# ---------------------------------------------------------------- structs

ArrowSchema._fields_ = [
    ("format", ctypes.c_char_p),
    ("name", ctypes.c_char_p),
    # binary (an int32 pair count first): as c_char_p a read stops at the first
    # NUL byte, so read it from its address, not through this member
    ("metadata", ctypes.c_char_p),
    ("flags", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowSchema))),
    ("dictionary", ctypes.POINTER(ArrowSchema)),
    ("release", SCHEMA_RELEASE),
    ("private_data", ctypes.c_void_p),
]

ArrowArray._fields_ = [
    ("length", ctypes.c_int64),
    ("null_count", ctypes.c_int64),
    ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowArray))),
    ("dictionary", ctypes.POINTER(ArrowArray)),
    ("release", ARRAY_RELEASE),
    ("private_data", ctypes.c_void_p),
]

ArrowDeviceArray._fields_ = [
    ("array", ArrowArray),
    ("device_id", ctypes.c_int64),
    ("device_type", ArrowDeviceType),
    ("sync_event", ctypes.c_void_p),
    ("reserved", ctypes.c_int64 * 3),
]

ArrowArrayStream._fields_ = [
    ("get_schema", GET_SCHEMA),
    ("get_next", GET_NEXT),
    ("get_last_error", GET_LAST_ERROR),
    ("release", STREAM_RELEASE),
    ("private_data", ctypes.c_void_p),
]

ArrowDeviceArrayStream._fields_ = [
    ("device_type", ArrowDeviceType),
    ("get_schema", DEVICE_GET_SCHEMA),
    ("get_next", DEVICE_GET_NEXT),
    ("get_last_error", DEVICE_GET_LAST_ERROR),
    ("release", DEVICE_STREAM_RELEASE),
    ("private_data", ctypes.c_void_p),
]


# ---------------------------------------------------------------- capsules

_pythonapi = ctypes.pythonapi
_pythonapi.PyCapsule_New.restype = ctypes.py_object
_pythonapi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_pythonapi.PyCapsule_GetName.restype = ctypes.c_char_p
_pythonapi.PyCapsule_GetName.argtypes = [ctypes.py_object]
_pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
_pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def make_capsule(address: int, name: bytes) -> object:
    """A capsule without destructor over ``address`` (the caller keeps the memory alive)."""
    return _pythonapi.PyCapsule_New(address, name, None)


def capsule_name(capsule: object) -> str:
    return _pythonapi.PyCapsule_GetName(capsule).decode()


def capsule_pointer(capsule: object) -> int:
    return _pythonapi.PyCapsule_GetPointer(capsule, _pythonapi.PyCapsule_GetName(capsule))


def struct_of(capsule: object, cls: type[ctypes.Structure]) -> ctypes.Structure:
    """A view (not a copy) of the C struct a capsule points to (``cls``: one of the structs above)."""
    return cls.from_address(capsule_pointer(capsule))
