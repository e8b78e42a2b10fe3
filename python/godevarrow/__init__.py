"""godevarrow: zero-copy Arrow exchange between Go and Python, on CPUs and GPUs.

A complete Go implementation of the Arrow C (Device) Data Interface, spoken
through the Arrow PyCapsule protocols. Quick start::

    import pyarrow as pa, godevarrow as gda
    batch = gda.record_batch(pa.record_batch({"x": [1, 2, 3]}))   # zero-copy into Go
    back = pa.record_batch(batch)                                 # zero-copy back
"""

from . import _extension

_extension.load()  # the build GODEVARROW_EXTENSION names, if any: before anything imports the extension

from ._array import Array, RecordBatch, array, record_batch  # noqa: E402
from ._device import Device, DeviceType  # noqa: E402
from ._functions import slice, to_pyarrow, validate  # noqa: E402
from ._godevarrow import (  # noqa: E402
    ArrowInvalid,
    ArrowNotImplementedError,
    DeviceError,
    DLPackError,
    GodevarrowError,
    GodevarrowTypeError,
    GoError,
    InternalError,
    StreamError,
    StreamInvalid,
)
from ._gofunc import GoFunction, call, go  # noqa: E402
from ._optional import MissingDependencyError  # noqa: E402
from ._runtime import cuda_available, cuda_device_count, cuda_status, debug_live_objects  # noqa: E402
from ._schema import Schema, schema  # noqa: E402
from ._stream import ArrayStream, stream  # noqa: E402
from ._table import ChunkedArray, Table, chunked_array, table  # noqa: E402
from ._values import DayTime, MonthDayNano, ValueOverflowError  # noqa: E402
from ._version import __version__  # noqa: E402


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
    "GoError",
    "GoFunction",
    "GodevarrowTypeError",
    "InternalError",
    "MissingDependencyError",
    "MonthDayNano",
    "RecordBatch",
    "Schema",
    "StreamError",
    "StreamInvalid",
    "ValueOverflowError",
    "Table",
    "__version__",
    "array",
    "call",
    "chunked_array",
    "cuda_available",
    "cuda_device_count",
    "cuda_status",
    "debug_live_objects",
    "go",
    "record_batch",
    "schema",
    "slice",
    "stream",
    "table",
    "to_pyarrow",
    "validate",
]
