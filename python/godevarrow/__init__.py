"""godevarrow: zero-copy Arrow exchange between Go and Python, on CPUs and GPUs.

A complete Go implementation of the Arrow C (Device) Data Interface, spoken
through the Arrow PyCapsule protocols. Quick start::

    import pyarrow as pa, godevarrow as gda
    batch = gda.record_batch(pa.record_batch({"x": [1, 2, 3]}))   # zero-copy into Go
    back = pa.record_batch(batch)                                 # zero-copy back
"""

from ._array import Array, RecordBatch, array, record_batch
from ._device import Device, DeviceType
from ._functions import slice, to_pyarrow, validate
from ._godevarrow import (
    ArrowInvalid,
    ArrowNotImplementedError,
    DeviceError,
    DLPackError,
    GodevarrowError,
    GodevarrowTypeError,
    InternalError,
    StreamError,
)
from ._optional import MissingDependencyError
from ._runtime import cuda_available, cuda_device_count, cuda_status, debug_live_objects
from ._schema import Schema, schema
from ._stream import ArrayStream, stream
from ._table import ChunkedArray, Table, chunked_array, table
from ._values import DayTime, MonthDayNano
from ._version import __version__


def _warn_forked_child() -> None:
    import warnings

    warnings.warn(
        "godevarrow was imported before fork(): the Go runtime does not survive fork, and using "
        "godevarrow in this child process may hang or crash. Use the 'spawn' or 'forkserver' "
        "multiprocessing start method instead.",
        RuntimeWarning,
        stacklevel=2,
    )


import os as _os  # noqa: E402

if hasattr(_os, "register_at_fork"):
    _os.register_at_fork(after_in_child=_warn_forked_child)

__all__ = [
    "Array",
    "ArrayStream",
    "ChunkedArray",
    "ArrowInvalid",
    "ArrowNotImplementedError",
    "Device",
    "DeviceError",
    "DeviceType",
    "DLPackError",
    "DayTime",
    "GodevarrowError",
    "GodevarrowTypeError",
    "InternalError",
    "MissingDependencyError",
    "MonthDayNano",
    "RecordBatch",
    "Schema",
    "StreamError",
    "Table",
    "__version__",
    "array",
    "chunked_array",
    "cuda_available",
    "cuda_device_count",
    "cuda_status",
    "debug_live_objects",
    "record_batch",
    "schema",
    "slice",
    "stream",
    "table",
    "to_pyarrow",
    "validate",
]
