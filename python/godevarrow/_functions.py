"""Module-level functions over any godevarrow object."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, TypeVar, Union, overload

from ._array import Array, RecordBatch
from ._godevarrow import GodevarrowTypeError
from ._optional import require
from ._schema import Schema
from ._stream import ArrayStream
from ._table import ChunkedArray, Table

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


def slice(obj: Any, offset: int = 0, length: Optional[int] = None) -> Any:  # noqa: A001
    """``obj.slice(offset, length)``."""
    return obj.slice(offset, length)


def validate(obj: Union[Array, ChunkedArray], full: bool = True) -> None:
    """``obj.validate(full)``."""
    obj.validate(full)
