"""ChunkedArray and Table, and the constructors chunked_array() and table().

Both are a ``cdevice.ChunkedArray`` in Go (a Table is one of struct type):
the chunks are held as they came, never concatenated, and every
``__arrow_c_stream__`` / ``__arrow_c_device_stream__`` call hands out a
fresh stream over them, so a stream-only producer (a pyarrow Table, a polars
DataFrame, a DuckDB relation) becomes data that can be read any number of
times."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, TypeVar, Union

from . import _godevarrow as _lib
from . import _repr
from ._array import Array, RecordBatch, array, clamp_slice
from ._device import DeviceLike, DeviceType, as_device
from ._godevarrow import ArrowInvalid
from ._optional import pandas_frame, require
from ._protocol import check_kwargs, no_protocol
from ._schema import Schema, column_index, requested_handle, schema
from ._stream import ArrayStream, stream
from ._values import Columns, Values

if TYPE_CHECKING:  # pragma: no cover
    import pandas
    import pyarrow


_C = TypeVar("_C", bound="ChunkedArray")


class ChunkedArray(Values):
    """Arrays (chunks) of one type on one kind of device, read any number of
    times; zero-copy. Make one with `godevarrow.chunked_array`."""

    __slots__ = ("_h", "_info", "__weakref__")

    def __init__(self, handle: Any) -> None:
        self._h = handle
        self._info: Optional[Any] = None

    def _get_info(self) -> Any:
        if self._info is None:
            self._info = _lib.chunked_info(self._h)
        return self._info

    # -- properties
    @property
    def schema(self) -> Schema:
        """The field every chunk has: type, name, nullability, metadata."""
        return Schema(self._get_info().schema)

    @property
    def device_type(self) -> DeviceType:
        """The kind of device the chunks live on."""
        return DeviceType(self._get_info().device_type)

    def __len__(self) -> int:
        """The number of elements (rows, for a table), over all chunks."""
        return int(self._get_info().length)

    @property
    def num_chunks(self) -> int:
        """The number of chunks."""
        return int(self._get_info().n_chunks)

    def chunk(self, i: int) -> Array:
        """Chunk ``i`` (negative counts from the end); zero-copy."""
        n = self.num_chunks
        if not -n <= i < n:
            raise IndexError(f"chunk index {i} out of range for {n} chunks")
        cls = RecordBatch if self._get_info().is_struct else Array
        return cls(_lib.chunked_chunk(self._h, i % n))

    @property
    def chunks(self) -> list[Array]:
        """Every chunk, in order; zero-copy."""
        return [self.chunk(i) for i in range(self.num_chunks)]

    @property
    def null_count(self) -> int:
        """The number of nulls over all chunks (-1 when one chunk's is unknown)."""
        counts = [c.null_count for c in self.chunks]
        return -1 if any(n < 0 for n in counts) else sum(counts)

    # -- protocols
    def __arrow_c_schema__(self) -> object:
        """The field as an ``arrow_schema`` capsule."""
        return _lib.export_schema(self._h)

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        """A fresh stream over the chunks (chunks on a device are copied to the host)."""
        return _lib.export_stream(_lib.chunked_stream(self._h), requested_handle(requested_schema), False)

    def __arrow_c_device_stream__(self, requested_schema: object = None, **kwargs: Any) -> object:
        """A fresh device stream over the chunks; zero-copy."""
        check_kwargs("__arrow_c_device_stream__", kwargs)
        return _lib.export_stream(_lib.chunked_stream(self._h), requested_handle(requested_schema), True)

    def to_stream(self) -> ArrayStream[Any]:
        """A fresh `ArrayStream` over the chunks."""
        return ArrayStream(_lib.chunked_stream(self._h))

    # -- values (Values: to_pylist, [], iteration, ==, repr)
    def _values(self, start: int, n: int) -> list[Any]:
        out: list[Any] = []
        for c in self.slice(start, n).chunks:
            out += c._values(0, len(c))
        return out

    def equals(self, other: object, check_metadata: bool = False) -> bool:
        """Whether ``other`` (a ChunkedArray or Table, or anything
        `godevarrow.chunked_array` reads) holds the same values of the same
        type, whatever the chunking (see `Array.equals`)."""
        other = other if isinstance(other, ChunkedArray) else chunked_array(other)
        return _lib.equal(self._h, other._h, check_metadata)

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> Any:
        """numpy's array of the values (see `Array.__array__`): zero-copy for
        one host chunk; several chunks are concatenated (a copy) unless
        ``copy=False``."""
        np = require("numpy", "numpy conversion")
        chunks = self.chunks
        if len(chunks) == 1:
            return chunks[0].__array__(dtype, copy)
        if copy is False:
            raise ArrowInvalid(f"{len(chunks)} chunks cannot be one numpy array without a copy (copy=False given)")
        if not chunks:
            raise ArrowInvalid("a chunked array of no chunks has no numpy array here; use to_pylist()")
        return np.concatenate([c.__array__(dtype) for c in chunks])

    def _repr_head(self) -> str:
        return f"godevarrow.{type(self).__name__}<{self.schema}>: " + _repr.shape(
            len(self), None, self.num_chunks, self.device_type.name.lower()
        )

    def __repr__(self) -> str:
        """The type, length, chunks and device, then the first and last values
        (only those are read)."""
        return _repr.render(self._repr_head(), [], [("", self._values)], len(self))

    # -- operations
    def slice(self: _C, offset: int = 0, length: Optional[int] = None) -> _C:
        """A zero-copy slice (of the chunks it falls in); past the end, shorter."""
        start, n = clamp_slice(offset, length, len(self))
        return type(self)(_lib.chunked_slice(self._h, start, n))

    def to_device(self: _C, device: DeviceLike) -> _C:
        """A copy of every chunk on ``device`` (the same object when already there)."""
        target = as_device(device)
        chunks = self.chunks
        if chunks and all(c.device == target for c in chunks):
            return self
        if not chunks and self.device_type == target.device_type:
            return self
        return type(self)(_lib.chunked_to_device(self._h, int(target.device_type), target.device_id))

    def validate(self, full: bool = True) -> None:
        """Validate every chunk: ``ArrowInvalid`` names the chunk and the first problem."""
        _lib.chunked_validate(self._h, full)

    def to_pyarrow(self) -> pyarrow.ChunkedArray:
        """A ``pyarrow.ChunkedArray`` (zero-copy for CPU data, else a copy to the host)."""
        pa = require("pyarrow", "to_pyarrow()")
        return pa.chunked_array(self)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as its chunks (each as Arrow IPC) and its schema."""
        return (_from_chunks, (type(self), self.chunks, self.schema))


class Table(ChunkedArray, Columns[ChunkedArray]):
    """A ChunkedArray of record batches: the struct's fields are the columns.
    Make one with `godevarrow.table`."""

    __slots__ = ()

    @property
    def num_columns(self) -> int:
        """The number of columns."""
        return len(self.schema.children)

    def column(self, i: Union[int, str]) -> ChunkedArray:
        """Column ``i`` (an index, or a name) as a ChunkedArray; zero-copy."""
        return ChunkedArray(_lib.chunked_column(self._h, column_index(self.column_names, i)))

    def __repr__(self) -> str:
        """The shape, chunks and device, the schema, then each column's first
        and last values (only those are read), as pyarrow prints them."""
        return self._render_columns(
            "godevarrow.Table: "
            + _repr.shape(len(self), self.num_columns, self.num_chunks, self.device_type.name.lower())
        )

    def to_stream(self) -> ArrayStream[RecordBatch]:
        """A fresh `ArrayStream` over the record batches."""
        return ArrayStream(_lib.chunked_stream(self._h))

    def to_batches(self) -> list[RecordBatch]:
        """The record batches, as held; zero-copy."""
        return self.chunks  # type: ignore[return-value]

    def __getitem__(self, key: Any) -> Any:
        """``table[i]`` is row i as a dict, ``table[a:b]`` a zero-copy slice,
        ``table["name"]`` the column of that name."""
        if isinstance(key, str):
            return self.column(key)
        return super().__getitem__(key)

    def to_pydict(self) -> dict[str, list[Any]]:
        """Each column's values (``to_pylist``) by column name."""
        return {name: col.to_pylist() for name, col in zip(self.column_names, self.columns)}

    def to_pyarrow(self) -> pyarrow.Table:
        """A ``pyarrow.Table`` (zero-copy for CPU data, else a copy to the host)."""
        pa = require("pyarrow", "to_pyarrow()")
        return pa.table(self)  # __arrow_c_stream__ copies device chunks to the host

    def to_pandas(self, **kwargs: Any) -> pandas.DataFrame:
        """A ``pandas.DataFrame``, through pyarrow: ``to_pyarrow().to_pandas(**kwargs)``
        (pyarrow's keywords, e.g. ``types_mapper=pd.ArrowDtype``). Needs
        pandas and pyarrow (``pip install 'godevarrow[pandas]'``); with
        pandas 3, ``pandas.DataFrame.from_arrow(table)`` reads it too."""
        return pandas_frame(self, kwargs)


def _from_chunks(cls: type[ChunkedArray], chunks: list[Array], schema_: Schema) -> ChunkedArray:
    return cls(_lib.chunked_from_arrays([c._h for c in chunks], schema_._h))


def _read(obj: object, requested_schema: object, what: str, protocols: str) -> Any:
    """The chunked-array handle of obj: one of ours, a stream producer (read
    to its end), an Array, or a sequence of Arrays or array producers."""
    if isinstance(obj, ChunkedArray):
        if requested_schema is None or schema(requested_schema) == obj.schema:
            return obj._h
        obj = obj.to_stream()
    if isinstance(obj, ArrayStream) or hasattr(obj, "__arrow_c_device_stream__") or hasattr(obj, "__arrow_c_stream__"):
        return _lib.chunked_read(stream(obj, requested_schema=requested_schema)._h)
    if isinstance(obj, Array) or hasattr(obj, "__arrow_c_device_array__") or hasattr(obj, "__arrow_c_array__"):
        return _lib.chunked_from_arrays([array(obj, requested_schema=requested_schema)._h], None)
    if isinstance(obj, (list, tuple)):
        arrays = [array(x, requested_schema=requested_schema) for x in obj]
        if not arrays and requested_schema is None:
            raise ArrowInvalid(f"a {what} of no chunks needs its type: pass requested_schema")
        target = None if requested_schema is None else schema(requested_schema)._h
        return _lib.chunked_from_arrays([a._h for a in arrays], target)
    raise no_protocol(obj, what, protocols)


_PROTOCOLS = "__arrow_c_device_stream__, __arrow_c_stream__, __arrow_c_device_array__, __arrow_c_array__"


def chunked_array(obj: object, *, requested_schema: object = None) -> ChunkedArray:
    """A ChunkedArray from a stream producer (read to its end; the arrays are
    held, not copied), an array producer (one chunk), or a sequence of them."""
    h = _read(obj, requested_schema, "chunked array", _PROTOCOLS + ", or a sequence of arrays")
    return ChunkedArray(h)


def table(obj: object, *, requested_schema: object = None) -> Table:
    """A Table from a stream producer (a pyarrow Table, a polars or pandas
    DataFrame, a DuckDB relation...; read to its end, the batches held, not
    copied), a record batch, or a sequence of record batches."""
    if isinstance(obj, Table) and requested_schema is None:
        return obj
    h = _read(obj, requested_schema, "table", _PROTOCOLS + ", or a sequence of record batches")
    t = Table(h)
    if not t._get_info().is_struct:
        raise ArrowInvalid(
            f"a table's chunks must be record batches (struct type), but the object gave {t.schema}; "
            "use godevarrow.chunked_array() for other types"
        )
    return t
