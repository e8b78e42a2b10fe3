"""The C producer of tests_py/gilprod (built by `make fakecuda`): wraps an
Arrow device array capsule so that its release aborts the process unless the
GIL is held, as pylibcudf's release would corrupt it (it does Py_DECREF
without taking the GIL). Paths that may drop such a struct run in a
subprocess."""

from __future__ import annotations

import ctypes
import pathlib
import sys
from typing import Optional

# one build per CPython (tests_py/gilprod/Makefile)
PATH = (
    pathlib.Path(__file__).resolve().parent / "gilprod" / f"libgilprod.{sys.version_info[0]}.{sys.version_info[1]}.so"
)


def load() -> Optional[ctypes.PyDLL]:
    if not PATH.exists():
        return None
    lib = ctypes.PyDLL(str(PATH))  # PyDLL: called with the GIL held
    lib.gilprod_wrap.restype = ctypes.py_object
    lib.gilprod_wrap.argtypes = [ctypes.py_object, ctypes.py_object]
    lib.gilprod_releases.restype = ctypes.c_longlong
    return lib


LIB = load()


def wrap(capsule: object, owner: object) -> object:
    """A new arrow_device_array capsule holding the array of ``capsule``
    (moved), whose release needs the GIL and drops a reference to ``owner``."""
    if LIB is None:
        raise RuntimeError(f"{PATH} is not built: run `make fakecuda`")
    return LIB.gilprod_wrap(capsule, owner)


def releases() -> int:
    assert LIB is not None
    return int(LIB.gilprod_releases())
