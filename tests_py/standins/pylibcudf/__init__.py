"""A test-only stand-in for pylibcudf (never shipped): what godevarrow
depends on, copied from pylibcudf 25.08 including the awkward parts. Device
memory is the fake CUDA driver's, through godevarrow itself.

- ``Table``/``Column`` export ``__arrow_c_device_array__`` with every field
  named ``""`` (pylibcudf/interop.pyx: ``_to_schema`` builds the schema from
  ``ColumnMetadata`` whose names default to empty) and raise ``ValueError``
  for any ``requested_schema`` (pylibcudf/table.pyx and column.pyx,
  ``__arrow_c_device_array__``: "requested_schema is not supported").
- The exported array's release drops a Python reference without taking the
  GIL (pylibcudf/libcudf/interop.pxd, the ``ArrowDeviceArray`` private data
  owns the table): emulated in C by tests_py/gilprod.
- ``Table.from_arrow``/``Column.from_arrow`` call
  ``__arrow_c_device_array__()`` without a requested schema and take each
  ``null_count`` verbatim (libcudf's ``from_arrow_device`` copies
  ``ArrowArray.null_count``; -1 is not recomputed and reads as "no nulls").
"""

from __future__ import annotations

import ctypes
from typing import Any

import gil_producer
import godevarrow as gda
import pyarrow as pa
from cabi import ArrowDeviceArray

__version__ = "25.08.00"

_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_GetPointer.restype = ctypes.c_void_p
_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _struct(capsule: object) -> ArrowDeviceArray:
    return ArrowDeviceArray.from_address(_GetPointer(capsule, b"arrow_device_array"))


def _null_counts(capsule: object) -> list[int]:
    """The null_count of each child as the producer wrote it (libcudf reads
    the struct, it does not count)."""
    d = _struct(capsule)
    return [d.array.children[i].contents.null_count for i in range(d.array.n_children)]


class _Pair:
    def __init__(self, s: object, a: object) -> None:
        self.pair = (s, a)

    def __arrow_c_device_array__(self, requested_schema: Any = None, **kwargs: Any) -> tuple[object, object]:
        return self.pair


def _pyarrow_type(arr: gda.Array) -> Any:
    field = arr.schema.to_pyarrow()
    return field.type if isinstance(field, pa.Field) else pa.struct(list(field))


class Column:
    def __init__(self, data: gda.Array, null_count: int) -> None:
        self._data = data
        self._null_count = null_count

    def null_count(self) -> int:
        return self._null_count

    def size(self) -> int:
        return len(self._data)

    @staticmethod
    def from_arrow(obj: Any) -> Column:
        s, a = obj.__arrow_c_device_array__()
        count = _struct(a).array.null_count
        arr = gda.array(_Pair(s, a))
        if arr.device_type != gda.DeviceType.CUDA:
            arr = arr.to_device("cuda:0")
        return Column(arr, count)

    def __arrow_c_device_array__(self, requested_schema: Any = None, **kwargs: Any) -> tuple[object, object]:
        if requested_schema is not None:
            raise ValueError("requested_schema is not supported")
        _s, a = self._data.__arrow_c_device_array__()
        return pa.field("", _pyarrow_type(self._data)).__arrow_c_schema__(), gil_producer.wrap(a, self)


class Table:
    def __init__(self, columns: list[Column], batch: Any = None) -> None:
        self._columns = list(columns)
        self._batch = batch

    def columns(self) -> list[Column]:
        return list(self._columns)

    def num_columns(self) -> int:
        return len(self._columns)

    def num_rows(self) -> int:
        return self._columns[0].size() if self._columns else 0

    @staticmethod
    def from_arrow(obj: Any) -> Table:
        if not hasattr(obj, "__arrow_c_device_array__"):
            raise TypeError("the stand-in only reads device arrays (as pylibcudf prefers them)")
        s, a = obj.__arrow_c_device_array__()
        counts = _null_counts(a)
        batch = gda.record_batch(_Pair(s, a))
        if batch.device_type != gda.DeviceType.CUDA:
            batch = batch.to_device("cuda:0")  # libcudf copies host data to the device
        return Table([Column(batch.column(i), n) for i, n in enumerate(counts)], batch)

    def __arrow_c_device_array__(self, requested_schema: Any = None, **kwargs: Any) -> tuple[object, object]:
        if requested_schema is not None:
            raise ValueError("requested_schema is not supported")
        _s, a = self._batch.__arrow_c_device_array__()
        unnamed = pa.schema([pa.field("", f.type, f.nullable) for f in self._batch.schema.to_pyarrow()])
        return unnamed.__arrow_c_schema__(), gil_producer.wrap(a, self)
