"""A test-only stand-in for cudf (never shipped), over the pylibcudf
stand-in: what godevarrow.cudf uses of cudf, at the version chosen by
``CUDF_STANDIN_VERSION`` (rapidsai/cudf v25.08.00 or v26.08.00,
python/cudf/cudf/core/dataframe.py and series.py unless said otherwise).

- ``DataFrame.to_pylibcudf()`` returns ``(Table, {"index": index,
  "columns": names})``, the columns as they are (zero-copy, a slice keeps its
  offset); ``Series.to_pylibcudf()`` ``(Column, {"name": ..., "index": ...})``.
- ``DataFrame.from_pylibcudf(table, metadata)`` checks the metadata keys
  (25.08: ``columns`` and optionally ``index``; 26.08: also
  ``child_names``), builds its columns through a dict ``{name: column}``
  (duplicate names collapse), and without an index has as many rows as its
  first column (none without columns). Each column is first normalised, at
  any depth (25.08: ``ColumnBase.from_pylibcudf`` in core/column/column.py,
  date32 becomes timestamp[s], a null-type column an all-null int8 column;
  26.08: ``_normalize_types_column`` there, the same but an all-null string
  column), then given a dtype by ``dtype_from_pylibcudf_column``
  (utils/dtypes.py): struct fields are named "0", "1", ..., and a dictionary
  column has none (``KeyError``: DICTIONARY32 is not in
  ``PYLIBCUDF_TO_SUPPORTED_NUMPY_TYPES``).
- ``DataFrame.columns = names`` refuses duplicates ("Duplicate column names
  are not allowed") and then other lengths ("Length mismatch: ...").
- ``DataFrame.iloc[a:b]``/``Series.iloc[a:b]`` slice without copying (the
  columns' offset moves, cudf::slice).
- ``DataFrame.to_arrow()`` is a host ``pyarrow.Table`` of the rows as cuDF
  holds them (core/frame.py ``to_arrow``), every field nullable.
"""

from __future__ import annotations

from typing import Any, Optional

import pyarrow as pa
import pylibcudf
from pylibcudf import _column_from_arrow, _to_arrow

__version__ = pylibcudf.__version__


class StructDtype:
    """cudf.StructDtype: ``fields`` maps the field names to their dtypes."""

    def __init__(self, fields: dict[str, Any]) -> None:
        self.fields = fields


class ListDtype:
    """cudf.ListDtype: ``element_type`` is the dtype of the elements."""

    def __init__(self, element_type: Any) -> None:
        self.element_type = element_type


def _dtype_of(t: Any) -> Any:
    if pa.types.is_struct(t):
        return StructDtype({f.name: _dtype_of(f.type) for f in t})
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return ListDtype(_dtype_of(t.value_type))
    return t  # the pyarrow type stands for the numpy/pandas dtype


class CategoricalDtype:
    """cudf.CategoricalDtype (core/dtypes.py): ``categories`` and ``ordered``.
    A categorical column is its codes column with this dtype: what
    ``ColumnBase.to_pylibcudf`` exports (core/column/column.py, 25.08:
    ``col = self.base_children[0]``)."""

    def __init__(self, categories: Any, ordered: bool = False) -> None:
        self.categories = categories
        self.ordered = ordered


def as_categorical(df: DataFrame, name: Any, categories: list[Any]) -> None:
    """Test-only: make column ``name`` (integer codes) a categorical."""
    df._dtypes[name] = CategoricalDtype(categories)


class RangeIndex:
    def __init__(self, n: int) -> None:
        self._n = int(n)

    def __len__(self) -> int:
        return self._n


class _ILoc:
    def __init__(self, obj: Any) -> None:
        self._obj = obj

    def __getitem__(self, key: slice) -> Any:
        if not isinstance(key, slice) or key.step not in (None, 1):
            raise NotImplementedError("the stand-in slices rows with a[b:c] only")
        start, stop, _ = key.indices(len(self._obj))
        return self._obj._sliced(start, stop)


class Series:
    def __init__(self, column: pylibcudf.Column, name: Any = None, dtype: Any = None) -> None:
        self._column = column
        self.name = name
        self.dtype = dtype

    def __len__(self) -> int:
        return self._column.size()

    @property
    def iloc(self) -> _ILoc:
        return _ILoc(self)

    def _sliced(self, start: int, stop: int) -> Series:
        return Series(self._column.sliced(start, stop), self.name, self.dtype)

    def to_pylibcudf(self) -> tuple[pylibcudf.Column, dict[str, Any]]:
        return self._column, {"name": self.name, "index": RangeIndex(len(self))}

    @property
    def null_count(self) -> int:
        return self._column.null_count()

    def to_arrow(self) -> pa.Array:
        return _to_arrow(self._column)


class DataFrame:
    def __init__(self, data: Any = None) -> None:
        self._data: dict[Any, pylibcudf.Column] = {}
        self._dtypes: dict[Any, Any] = {}
        self._index = RangeIndex(0)
        if data is not None:
            host = pa.record_batch(data) if isinstance(data, dict) else data
            for name, arr in zip(host.schema.names, host.columns):
                arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
                self._data[name] = _column_from_arrow(arr, keep_mask=arr.null_count > 0)
                self._dtypes[name] = _dtype_of(arr.type)
            self._index = RangeIndex(host.num_rows)

    @classmethod
    def from_arrow(cls, table: pa.Table) -> DataFrame:
        """A frame holding a copy of ``table`` (struct field names kept in the
        dtypes, as cudf's ``from_arrow``)."""
        return cls(table)

    def __len__(self) -> int:
        return len(self._index)

    @property
    def columns(self) -> list[Any]:
        return list(self._data)

    @columns.setter
    def columns(self, names: list[Any]) -> None:
        names = list(names)
        if len(set(names)) != len(names):
            raise ValueError("Duplicate column names are not allowed")
        if len(names) != len(self._data):
            raise ValueError(f"Length mismatch: expected {len(self._data)} elements, got {len(names)} elements")
        self._dtypes = dict(zip(names, [self._dtypes.get(k) for k in self._data]))
        self._data = dict(zip(names, self._data.values()))

    @property
    def iloc(self) -> _ILoc:
        return _ILoc(self)

    def _sliced(self, start: int, stop: int) -> DataFrame:
        out = DataFrame()
        out._data = {k: c.sliced(start, stop) for k, c in self._data.items()}
        out._dtypes = dict(self._dtypes)
        out._index = RangeIndex(max(0, stop - start))
        return out

    def __getitem__(self, name: Any) -> Series:
        return Series(self._data[name], name, self._dtypes.get(name))

    @property
    def index(self) -> RangeIndex:
        return self._index

    def to_pylibcudf(self) -> tuple[pylibcudf.Table, dict[str, Any]]:
        return pylibcudf.Table(list(self._data.values())), {"index": self._index, "columns": list(self._data)}

    @classmethod
    def from_pylibcudf(cls, table: pylibcudf.Table, metadata: Optional[dict[str, Any]] = None) -> DataFrame:
        allowed = {"columns", "child_names", "index"} if pylibcudf.VERSION >= (26, 8) else {"columns", "index"}
        if not (isinstance(metadata, dict) and "columns" in metadata and not set(metadata) - allowed):
            raise ValueError("Must pass a metadata dict with column names and optionally indices only")
        columns = [_normalize_types_column(c) for c in table.columns()]
        dtypes = [_dtype_from_column(c) for c in columns]
        df = cls()
        # ColumnAccessor({name: cudf_col for name, cudf_col in zip(...)})
        df._data = {name: col for name, col in zip(metadata["columns"], columns, strict=True)}
        df._dtypes = {name: dtype for name, dtype in zip(metadata["columns"], dtypes)}
        index = metadata.get("index")
        df._index = index if index is not None else RangeIndex(columns[0].size() if columns else 0)
        return df

    def to_arrow(self) -> pa.Table:
        arrays = [_to_arrow(c) for c in self._data.values()]
        fields = [pa.field(str(n), a.type) for n, a in zip(self._data, arrays)]
        return pa.Table.from_arrays(arrays, schema=pa.schema(fields)) if arrays else pa.table({})


def _normalize_types_column(col: pylibcudf.Column) -> pylibcudf.Column:
    """TIMESTAMP_DAYS is cast to TIMESTAMP_SECONDS; EMPTY becomes an all-null
    int8 (25.08, ``ColumnBase.from_pylibcudf``) or string (26.08,
    ``_normalize_types_column``) column; children too."""
    kind = col.type().id()
    if kind == "fixed" and col.type().arrow == pa.date32():
        return _column_from_arrow(_to_arrow(col).cast(pa.timestamp("s")), keep_mask=col.nullable())
    if kind == "empty":
        return _column_from_arrow(pa.nulls(col.size(), _EMPTY_AS))
    if kind in ("struct", "list") and any(_needs_normalizing(c) for c in col.children()):
        return _column_from_arrow(_normalized_arrow(_to_arrow(col)), keep_mask=col.nullable())
    return col


_EMPTY_AS = pa.string() if pylibcudf.VERSION >= (26, 8) else pa.int8()


def _needs_normalizing(col: pylibcudf.Column) -> bool:
    kind = col.type().id()
    if kind == "empty" or (kind == "fixed" and col.type().arrow == pa.date32()):
        return True
    return any(_needs_normalizing(c) for c in col.children())


def _normalized_arrow(arr: pa.Array) -> pa.Array:
    def norm(t: pa.DataType) -> pa.DataType:
        if t == pa.date32():
            return pa.timestamp("s")
        if pa.types.is_null(t):
            return _EMPTY_AS
        if pa.types.is_struct(t):
            return pa.struct([f.with_type(norm(f.type)) for f in t])
        if pa.types.is_list(t):
            return pa.list_(t.value_field.with_type(norm(t.value_type)))
        return t

    return arr.cast(norm(arr.type))


def _dtype_from_column(col: pylibcudf.Column) -> Any:
    """utils/dtypes.py ``dtype_from_pylibcudf_column``."""
    kind = col.type().id()
    if kind == "list":
        return ListDtype(_dtype_from_column(col.children()[1]))
    if kind == "struct":
        return StructDtype({str(i): _dtype_from_column(c) for i, c in enumerate(col.children())})
    if kind == "dictionary":
        raise KeyError("<TypeId.DICTIONARY32: 27>")  # PYLIBCUDF_TO_SUPPORTED_NUMPY_TYPES[tid]
    if kind == "string":
        return pa.string()
    return col.type().arrow
