"""Module-level functions over any godevarrow object."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, TypeVar, Union, overload

from ._array import Array, RecordBatch, array
from ._godevarrow import GodevarrowTypeError
from ._optional import require
from ._schema import Schema
from ._stream import ArrayStream
from ._table import ChunkedArray, Table, chunked_array

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow

_A = TypeVar("_A", bound=Array)


@overload
def to_pyarrow(obj: RecordBatch) -> pyarrow.RecordBatch: ...
@overload
def to_pyarrow(obj: Array) -> pyarrow.Array: ...
@overload
def to_pyarrow(obj: Table) -> pyarrow.Table: ...
@overload
def to_pyarrow(obj: ChunkedArray) -> pyarrow.ChunkedArray: ...
@overload
def to_pyarrow(obj: ArrayStream[Any]) -> pyarrow.RecordBatchReader: ...
@overload
def to_pyarrow(obj: Schema) -> Union[pyarrow.Schema, pyarrow.Field]: ...


def to_pyarrow(obj: object) -> Any:
    """The pyarrow equivalent: RecordBatch → pyarrow.RecordBatch, Array →
    pyarrow.Array, Table → pyarrow.Table, ChunkedArray →
    pyarrow.ChunkedArray, ArrayStream → pyarrow.RecordBatchReader, Schema →
    pyarrow.Schema/Field."""
    if isinstance(obj, (Array, Schema, ChunkedArray)):
        return obj.to_pyarrow()
    if isinstance(obj, ArrayStream):
        pa = require("pyarrow", "to_pyarrow()")

        return pa.RecordBatchReader.from_stream(obj)
    raise GodevarrowTypeError(f"to_pyarrow() takes a godevarrow object, not {type(obj).__name__}")


_C = TypeVar("_C", bound=ChunkedArray)


@overload
def slice(obj: _A, offset: int = 0, length: Optional[int] = None) -> _A: ...  # noqa: A001
@overload
def slice(obj: _C, offset: int = 0, length: Optional[int] = None) -> _C: ...  # noqa: A001
@overload
def slice(obj: object, offset: int = 0, length: Optional[int] = None) -> Union[Array, ChunkedArray]: ...  # noqa: A001


def slice(obj: Any, offset: int = 0, length: Optional[int] = None) -> Any:  # noqa: A001
    """``obj.slice(offset, length)``; another library's array or table is
    read first (`_as_values`), so the slice is a godevarrow object."""
    return _as_values(obj).slice(offset, length)


def validate(obj: object, full: bool = True) -> None:
    """``obj.validate(full)``; another library's array or table is read
    first (`_as_values`)."""
    _as_values(obj).validate(full)


def _as_values(obj: object) -> Union[Array, ChunkedArray]:
    """obj when it is a godevarrow array or chunked array, else what reads
    it: an array producer as an Array (a RecordBatch for structs), a stream
    producer (a table, a data frame) as a Table or ChunkedArray."""
    if isinstance(obj, (Array, ChunkedArray)):
        return obj
    if (
        hasattr(obj, "__arrow_c_device_array__")
        or hasattr(obj, "__arrow_c_array__")
        or not (
            isinstance(obj, ArrayStream)
            or hasattr(obj, "__arrow_c_device_stream__")
            or hasattr(obj, "__arrow_c_stream__")
        )
    ):  # an array (a pyarrow RecordBatch speaks both), or DLPack, or an error naming the protocols
        arr = array(obj)
        return RecordBatch(arr._h) if arr._is_struct() else arr
    read = chunked_array(obj)
    return Table(read._h) if read._get_info().is_struct else read
