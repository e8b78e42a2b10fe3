"""A test-only stand-in for pylibcudf (never shipped): the parts godevarrow
uses, rebuilt from the pylibcudf/libcudf sources of the version chosen by
``CUDF_STANDIN_VERSION`` (25.08 or 26.08; 25.08 when unset), awkward parts
included. Device memory is the fake CUDA driver's, reached through
godevarrow itself.

libcudf's column model is copied as it is: a column view is (type, size,
offset, null_count, mask, data, children) where the offset applies to the
mask and data of that view only, never to its children. Every emulated
behaviour names the function it copies; the sources are rapidsai/cudf at tag
v25.08.00 or v26.08.00:

- ``Table``/``Column.__arrow_c_device_array__``: pylibcudf/table.pyx and
  column.pyx, ``__arrow_c_device_array__`` (a ``requested_schema`` raises
  ``ValueError``, other keywords ``NotImplementedError``), ``_to_schema``
  and ``_to_device_array``.
- The schema: cpp/src/interop/to_arrow_schema.cpp, ``to_arrow_schema`` and
  ``dispatch_to_arrow_type``: every name empty (the metadata pylibcudf
  builds in ``_create_nested_column_metadata`` has none), a column nullable
  only when ``has_nulls()`` (up to 26.06; 26.08: when ``nullable()``, i.e. it
  has a mask; struct children keep ``has_nulls()`` in 26.08 too), decimals at
  precision 9/18/38, time zones dropped.
- The array: cpp/src/interop/to_arrow_device.cu,
  ``dispatch_to_arrow_device_view``: length = size, offset 0, the validity
  pointer is the view's mask unadvanced; fixed-width data is advanced by the
  offset (``set_view_to_buffer``), string and list offsets and struct
  children are the unsliced children (so a slice exports the base's first
  rows); bools are re-packed (``bools_to_mask``); an all-null (EMPTY) column
  is refused (``CUDF_FAIL("Unsupported type for to_arrow_device")``).
  ``create_device_array`` stamps ``device_id`` with the current device, not
  the data's.
- The release: the inline C++ ``PylibcudfArrowDeviceArrayRelease`` of
  pylibcudf/libcudf/interop.pxd does ``Py_DECREF`` without taking the GIL:
  emulated in C by tests_py/gilprod.
- ``Table.from_arrow``: pylibcudf/table.pyx ``from_arrow`` moves the schema
  and the array into an ``arrow_table`` inside ``with nogil``
  (cpp/src/interop/arrow_data_structures.cpp, ``arrow_array_container``:
  ``ArrowSchemaMove``/``ArrowDeviceArrayMove``; its destructor releases the
  array and never the schema, which leaks). Then
  cpp/src/interop/from_arrow_device.cu ``from_arrow_device`` reads the
  children only (the top-level struct's offset, length and validity are
  ignored; 26.08 keeps the length of a zero-column struct), each
  ``null_count`` verbatim, unsupported types raise ``TypeError``
  (``arrow_to_cudf_type`` in cpp/src/interop/arrow_utilities.cpp, "Large list
  types are not supported", "Unsupported type_id for dictionary indices") --
  after the move, so the array is released without the GIL while the
  exception unwinds. A string view is read as int32 offsets before 26.04
  (``dispatch_from_arrow_device<string_view>``), converted from 26.04 on.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any, Optional

import gil_producer
import godevarrow as gda
import numpy as np
import pyarrow as pa
from cabi import ARRAY_RELEASE, ArrowArray, ArrowDeviceArray, ArrowSchema
from godevarrow import _godevarrow as _lib

_VERSION = os.environ.get("CUDF_STANDIN_VERSION", "25.08")
if _VERSION not in ("25.08", "26.08"):
    raise ImportError(f"CUDF_STANDIN_VERSION must be 25.08 or 26.08, not {_VERSION!r}")
__version__ = f"{_VERSION}.00"
VERSION = tuple(int(p) for p in _VERSION.split("."))

CPU, CUDA, CUDA_HOST, CUDA_MANAGED = 1, 2, 3, 13

# the current CUDA device (cudaSetDevice): where new columns are made and
# what an export stamps as its device_id
_CURRENT = [0]


def set_current_device(device: int) -> None:
    """Test-only: cudaSetDevice (cupy.cuda.Device(n).use() in a real program)."""
    _CURRENT[0] = device


_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_GetPointer.restype = ctypes.c_void_p
_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_CapsuleNew = ctypes.pythonapi.PyCapsule_New
_CapsuleNew.restype = ctypes.py_object
_CapsuleNew.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

# a release called as pylibcudf calls it: from Python (the GIL held) when
# an _ArrowTableHolder dies, inside ``with nogil`` when from_arrow fails
_RELEASE_WITH_GIL = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)
_RELEASE_WITHOUT_GIL = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_RELEASE_OFFSET = ArrowArray.release.offset


# libcudf's C++ exceptions as pylibcudf raises them
# (pylibcudf/exception_handler.pxd: cudf::data_type_error -> TypeError,
# std::invalid_argument -> ValueError, std::overflow_error -> OverflowError,
# others -> RuntimeError), with CUDF_FAIL's "CUDF failure at:" prefix
def _fail(cls: type, where: str, message: str) -> Exception:
    return cls(f"CUDF failure at: {where}: {message}")


# ------------------------------------------------------------ device memory


class _Buf:
    """A device address and what keeps it alive (libcudf's views own nothing)."""

    __slots__ = ("ptr", "owner")

    def __init__(self, ptr: int, owner: Any = None) -> None:
        self.ptr = ptr
        self.owner = owner


def _struct(capsule: object, name: bytes = b"arrow_device_array") -> Any:
    cls = ArrowDeviceArray if name == b"arrow_device_array" else ArrowSchema
    return cls.from_address(_GetPointer(capsule, name))


def _upload(data: bytes) -> Optional[_Buf]:
    """New device memory holding ``data`` (rmm's device_buffer)."""
    if not data:
        return None
    host = pa.Array.from_buffers(pa.uint8(), len(data), [None, pa.py_buffer(data)])
    dev = gda.array(host).to_device(f"cuda:{_CURRENT[0]}")
    _s, cap = dev.__arrow_c_device_array__()
    return _Buf(_struct(cap).array.buffers[1], (dev, cap))


def _read(ptr: Optional[int], nbytes: int) -> bytes:
    """Device bytes read back to the host (what a kernel would see)."""
    if nbytes <= 0 or not ptr:
        return b""
    wrapped = gda.Array(_lib.wrap_cuda_pointer(None, "C", int(ptr), int(nbytes), 0))
    return wrapped.to_device("cpu").to_pyarrow().buffers()[1].to_pybytes()[:nbytes]


def _bits(data: bytes, start: int, n: int) -> np.ndarray:
    return np.unpackbits(np.frombuffer(data, np.uint8), bitorder="little")[start : start + n].astype(bool)


def _pack(bools: np.ndarray) -> bytes:
    return np.packbits(bools.astype(np.uint8), bitorder="little").tobytes()


# ------------------------------------------------------------------ columns


class DataType:
    """The libcudf data_type of a column, as a pyarrow type (cuDF's names of
    them do not matter to godevarrow). ``id()`` is one of the kind names."""

    def __init__(self, kind: str, arrow: Any = None) -> None:
        self.kind = kind
        self.arrow = arrow

    def id(self) -> str:
        return self.kind

    def __repr__(self) -> str:
        return f"DataType({self.kind}, {self.arrow})"


class Column:
    """pylibcudf.Column: a libcudf column_view and its owner."""

    def __init__(
        self,
        dtype: DataType,
        size: int,
        data: Optional[_Buf],
        mask: Optional[_Buf],
        null_count: int,
        offset: int,
        children: list[Column],
        owner: Any = None,
    ) -> None:
        self._type = dtype
        self._size = size
        self._data = data
        self._mask = mask
        self._null_count = null_count
        self._offset = offset
        self._children = list(children)
        self._owner = owner

    def type(self) -> DataType:
        return self._type

    def size(self) -> int:
        return self._size

    def offset(self) -> int:
        return self._offset

    def null_count(self) -> int:
        return self._null_count

    def children(self) -> list[Column]:
        return list(self._children)

    def num_children(self) -> int:
        return len(self._children)

    def nullable(self) -> bool:
        return self._mask is not None

    def has_nulls(self) -> bool:
        return self._null_count > 0

    def sliced(self, start: int, stop: int) -> Column:
        """cudf::slice (cpp/src/copying/slice.cu): offset moved, children
        untouched, the null count of the slice recounted."""
        stop = max(start, min(stop, self._size))
        out = Column(
            self._type, stop - start, self._data, self._mask, 0, self._offset + start, self._children, self._owner
        )
        if self._mask is not None:
            out._null_count = int((~_valid(out)).sum())
        return out

    def copy(self) -> Column:
        """column.pyx ``copy``: ``make_unique[column](self.view())``, a deep copy
        of the view's rows at offset 0."""
        return _column_from_arrow(_to_arrow(self), keep_mask=self.nullable())

    @staticmethod
    def from_arrow(obj: Any, dtype: Any = None) -> Column:
        """column.pyx ``from_arrow`` (device arrays only: the path godevarrow
        takes): the column form of ``Table.from_arrow``."""
        if dtype is not None:
            raise NotImplementedError("Creating a Column with the dtype argument specified.")
        s, a = obj.__arrow_c_device_array__()
        holder = _Holder(s, a)
        try:
            col = _get_column(holder.schema, holder.device.array, False, holder)
        except Exception:
            holder.release_without_gil()
            raise
        return col

    def __arrow_c_device_array__(self, requested_schema: Any = None, **kwargs: Any) -> tuple[object, object]:
        if requested_schema is not None:
            raise ValueError("pylibcudf.Column does not support alternative schema")
        _check_kwargs(kwargs)
        schema = pa.field("", _schema_type(self), nullable=_top_nullable(self)).__arrow_c_schema__()
        return schema, _export(_ExportedArray.of(self), self)


class Table:
    """pylibcudf.Table: columns, and (26.08) a row count of its own."""

    def __init__(self, columns: list[Column], num_rows: Optional[int] = None) -> None:
        if not all(isinstance(c, Column) for c in columns):
            raise ValueError("All columns must be pylibcudf Column objects")
        self._columns = list(columns)
        if VERSION >= (26, 8) and num_rows is not None:
            self._num_rows = num_rows
        else:
            # 25.08 table.pyx ``num_rows``: the first column's size, else 0
            self._num_rows = columns[0].size() if columns else 0

    def columns(self) -> list[Column]:
        return list(self._columns)

    def num_columns(self) -> int:
        return len(self._columns)

    def num_rows(self) -> int:
        return self._num_rows

    @staticmethod
    def from_arrow(obj: Any, dtype: Any = None) -> Table:
        if dtype is not None:
            raise NotImplementedError("Creating a Table with the dtype argument specified.")
        if not hasattr(obj, "__arrow_c_device_array__"):
            raise NotImplementedError("the stand-in reads device arrays only (the path godevarrow takes)")
        s, a = obj.__arrow_c_device_array__()
        if _struct(a).device_type == CPU:
            # arrow_table(ArrowSchema&&, ArrowDeviceArray&&), case
            # ARROW_DEVICE_CPU: from_arrow_host copies the data to the
            # device; the schema is only read (the capsule frees it)
            host = gda.record_batch(_Pair(s, a)).to_device(f"cuda:{_CURRENT[0]}")
            return _table_from_device(*host.__arrow_c_device_array__(), internal=True)
        return _table_from_device(s, a)

    def __arrow_c_device_array__(self, requested_schema: Any = None, **kwargs: Any) -> tuple[object, object]:
        if requested_schema is not None:
            raise ValueError("pylibcudf.Table does not support alternative schema")
        _check_kwargs(kwargs)
        fields = [pa.field("", _schema_type(c), nullable=_top_nullable(c)) for c in self._columns]
        schema = pa.schema(fields).__arrow_c_schema__()
        top = _ExportedArray(self._num_rows, 0, [None], [_ExportedArray.of(c) for c in self._columns])
        return schema, _export(top, self)


class _Pair:
    def __init__(self, s: object, a: object) -> None:
        self.pair = (s, a)

    def __arrow_c_device_array__(self, requested_schema: Any = None, **kwargs: Any) -> tuple[object, object]:
        return self.pair


def _check_kwargs(kwargs: dict[str, Any]) -> None:
    extra = [name for name, value in kwargs.items() if value is not None]
    if extra:
        raise NotImplementedError(f"Received unsupported keyword argument(s): {extra}")


# ----------------------------------------------------- reading a column view


def _valid(col: Column) -> np.ndarray:
    if col._mask is None:
        return np.ones(col._size, bool)
    n = col._offset + col._size
    return _bits(_read(col._mask.ptr, (n + 7) // 8), col._offset, col._size)


def _fixed(col: Column, width: int, count: int) -> bytes:
    return _read(col._data.ptr if col._data else None, count * width)


def _to_arrow(col: Column) -> pa.Array:
    """The rows of a column view, read as libcudf reads them (offsets
    applied where the view says), as a host pyarrow array."""
    kind, n, off = col._type.kind, col._size, col._offset
    valid = _valid(col)
    mask = pa.py_buffer(_pack(valid)) if col._mask is not None else None
    nulls = int((~valid).sum())
    if kind == "empty":
        return pa.nulls(n)
    if kind == "fixed":
        t = col._type.arrow
        width = t.bit_width // 8
        data = _fixed(col, width, off + n)[off * width :]
        return pa.Array.from_buffers(t, n, [mask, pa.py_buffer(data)], nulls)
    if kind == "bool":
        values = np.frombuffer(_fixed(col, 1, off + n)[off:], np.uint8).astype(bool)
        return pa.Array.from_buffers(pa.bool_(), n, [mask, pa.py_buffer(_pack(values))], nulls)
    if kind in ("string", "list"):
        offsets_col = col._children[0]
        t = offsets_col._type.arrow
        w = t.bit_width // 8
        raw = _read(offsets_col._data.ptr, (offsets_col._offset + off + n + 1) * w) if n else b""
        offs = np.frombuffer(raw, np.int32 if w == 4 else np.int64)[offsets_col._offset + off :]
        if n == 0:
            offs = np.zeros(1, np.int32 if w == 4 else np.int64)
        rebased = (offs - offs[0]).tobytes()
        if kind == "string":
            chars = _read(col._data.ptr if col._data else None, int(offs[-1]))[int(offs[0]) :]
            st = pa.string() if w == 4 else pa.large_string()
            return pa.Array.from_buffers(st, n, [mask, pa.py_buffer(rebased), pa.py_buffer(chars)], nulls)
        child = _to_arrow(col._children[1]).slice(int(offs[0]), int(offs[-1] - offs[0]))
        lt = pa.list_(pa.field("", child.type))
        return pa.Array.from_buffers(lt, n, [mask, pa.py_buffer(rebased)], nulls, children=[child])
    if kind == "struct":
        children = [_to_arrow(c).slice(off, n) for c in col._children]
        st = pa.struct([pa.field("", c.type) for c in children])
        return pa.Array.from_buffers(st, n, [mask], nulls, children=children)
    if kind == "dictionary":
        indices_col, keys_col = col._children
        it = indices_col._type.arrow
        w = it.bit_width // 8
        raw = _read(indices_col._data.ptr, (indices_col._offset + off + n) * w)[(indices_col._offset + off) * w :]
        indices = pa.Array.from_buffers(it, n, [mask, pa.py_buffer(raw)], nulls)
        return pa.DictionaryArray.from_arrays(indices, _to_arrow(keys_col))
    raise AssertionError(kind)


def _column_from_arrow(arr: pa.Array, keep_mask: bool = True) -> Column:
    """A new column holding ``arr`` at offset 0 (what libcudf's factories and
    copies make)."""
    # compact, children included (a copy's children start at offset 0)
    arr = pa.concat_arrays([arr])
    if not keep_mask and arr.null_count == 0 and arr.buffers()[0] is not None:
        arr = pa.Array.from_buffers(arr.type, len(arr), [None, *arr.buffers()[1:]], 0)
    batch = pa.RecordBatch.from_arrays([arr], ["x"])
    dev = gda.record_batch(batch).to_device(f"cuda:{_CURRENT[0]}")
    col = _table_from_device(*dev.__arrow_c_device_array__(), internal=True).columns()[0]
    _count_nulls(col)
    return col


def _count_nulls(col: Column) -> None:
    # libcudf's factories count the nulls they make (the import above took
    # godevarrow's counts verbatim, and a device copy may leave them unknown)
    if col._mask is not None:
        col._null_count = int((~_valid(col)).sum())
    for child in col._children:
        _count_nulls(child)


# ----------------------------------------------------------------- export


def _top_nullable(col: Column) -> bool:
    # to_arrow_schema.cpp, to_arrow_schema: `child->flags = col.has_nulls()`
    # (26.08: `col.nullable()`)
    return col.nullable() if VERSION >= (26, 8) else col.has_nulls()


def _schema_type(col: Column) -> Any:
    """dispatch_to_arrow_type (to_arrow_schema.cpp) with the empty metadata of
    ``_create_nested_column_metadata`` (column.pyx)."""
    kind = col._type.kind
    if kind == "empty":
        return pa.null()
    if kind in ("fixed", "bool"):
        return col._type.arrow
    if kind == "string":
        offsets = col._children[0] if col._children else None
        return pa.large_string() if offsets is not None and offsets._type.arrow == pa.int64() else pa.string()
    if kind == "list":
        child = col._children[1]
        # the list's child flags: has_nulls() (26.08: nullable()); its name is
        # children_meta[1].name, empty
        nullable = child.nullable() if VERSION >= (26, 8) else child.has_nulls()
        return pa.list_(pa.field("", _schema_type(child), nullable=nullable))
    if kind == "struct":
        # struct children: `child->flags = col.has_nulls()` in both versions
        return pa.struct([pa.field("", _schema_type(c), nullable=c.has_nulls()) for c in col._children])
    if kind == "dictionary":
        indices, keys = col._children
        return pa.dictionary(indices._type.arrow, _schema_type(keys))
    raise AssertionError(kind)


class _ExportedArray:
    """One ArrowArray as dispatch_to_arrow_device_view builds it."""

    def __init__(
        self,
        length: int,
        null_count: int,
        buffers: list[Optional[int]],
        children: list[_ExportedArray],
        dictionary: Optional[_ExportedArray] = None,
        keep: Any = None,
    ) -> None:
        self.length, self.null_count, self.buffers = length, null_count, buffers
        self.children, self.dictionary, self.keep = children, dictionary, keep

    @staticmethod
    def of(col: Column) -> _ExportedArray:
        kind = col._type.kind
        # set_null_mask: the view's mask as it is, not advanced by the offset
        mask = col._mask.ptr if col._mask is not None else None
        if kind == "empty":
            raise _fail(TypeError, "to_arrow_device.cu", "Unsupported type for to_arrow_device")
        if kind == "fixed":
            width = col._type.arrow.bit_width // 8
            data = col._data.ptr + width * col._offset if col._data else None  # set_view_to_buffer
            return _ExportedArray(col._size, col._null_count, [mask, data], [])
        if kind == "bool":
            # bools_to_mask(column): a new bitmask of the view's own rows
            values = np.frombuffer(_fixed(col, 1, col._offset + col._size)[col._offset :], np.uint8).astype(bool)
            bits = _upload(_pack(values))
            return _ExportedArray(col._size, col._null_count, [mask, bits.ptr if bits else None], [], keep=bits)
        if kind == "string":
            if col._size == 0:
                zero = _upload(b"\0" * (8 if _schema_type(col) == pa.large_string() else 4))
                return _ExportedArray(0, 0, [None, zero.ptr, None], [], keep=zero)
            offsets = col._children[0]
            w = offsets._type.arrow.bit_width // 8
            return _ExportedArray(
                col._size,
                col._null_count,
                [mask, offsets._data.ptr + w * offsets._offset, col._data.ptr if col._data else None],
                [],
            )
        if kind == "struct":
            return _ExportedArray(col._size, col._null_count, [mask], [_ExportedArray.of(c) for c in col._children])
        if kind == "list":
            offsets, child = col._children
            return _ExportedArray(
                col._size, col._null_count, [mask, offsets._data.ptr + 4 * offsets._offset], [_ExportedArray.of(child)]
            )
        if kind == "dictionary":
            indices, keys = col._children
            w = indices._type.arrow.bit_width // 8
            # get_indices_annotated: the indices with the parent's offset
            data = indices._data.ptr + w * (indices._offset + col._offset) if indices._data else None
            return _ExportedArray(col._size, col._null_count, [mask, data], [], _ExportedArray.of(keys))
        raise AssertionError(kind)


_LIVE: dict[int, list[Any]] = {}
_NEXT = [1]


@ARRAY_RELEASE
def _release_exported(arr: Any) -> None:
    a = arr.contents
    for i in range(a.n_children):
        child = a.children[i].contents
        if child.release:
            child.release(a.children[i])
    if a.dictionary and a.dictionary.contents.release:
        a.dictionary.contents.release(a.dictionary)
    key = a.private_data
    entry = _LIVE.get(key)
    if entry is not None:
        entry[0] -= 1
        if entry[0] == 0:
            del _LIVE[key]
    ctypes.memset(ctypes.addressof(a) + _RELEASE_OFFSET, 0, ctypes.sizeof(ctypes.c_void_p))


def _build(node: _ExportedArray, key: int, keep: list[Any]) -> ArrowArray:
    out = ArrowArray()
    out.length, out.null_count, out.offset = node.length, node.null_count, 0
    bufs = (ctypes.c_void_p * len(node.buffers))(*node.buffers)
    out.n_buffers, out.buffers = len(node.buffers), ctypes.cast(bufs, type(out.buffers))
    kids = [_build(c, key, keep) for c in node.children]
    ptrs = (ctypes.POINTER(ArrowArray) * max(1, len(kids)))(*[ctypes.pointer(k) for k in kids])
    out.n_children, out.children = len(kids), ctypes.cast(ptrs, type(out.children))
    if node.dictionary is not None:
        d = _build(node.dictionary, key, keep)
        out.dictionary = ctypes.pointer(d)
        keep.append(d)
    out.release, out.private_data = _release_exported, key
    keep.extend([bufs, ptrs, kids, node.keep])
    _LIVE[key][0] += 1
    return out


def _export(top: _ExportedArray, owner: Any) -> object:
    """to_arrow_device_raw (libcudf/interop.pxd): the ArrowDeviceArray of a
    view, device_id the current device (create_device_array:
    rmm::get_current_cuda_device()), wrapped in the release that needs the
    GIL (gilprod)."""
    key = _NEXT[0]
    _NEXT[0] += 1
    keep: list[Any] = []
    _LIVE[key] = [0, keep]
    dev = ArrowDeviceArray()
    dev.array = _build(top, key, keep)
    dev.device_id, dev.device_type = _CURRENT[0], CUDA
    capsule = _CapsuleNew(ctypes.addressof(dev), b"arrow_device_array", None)
    return gil_producer.wrap(capsule, owner)


# ----------------------------------------------------------------- import


class _Holder:
    """_ArrowTableHolder (table.pyx) over arrow_array_container
    (arrow_data_structures.cpp): the moved schema and array."""

    def __init__(self, s: object, a: object, internal: bool = False) -> None:
        self.schema = ArrowSchema()
        self.device = ArrowDeviceArray()
        src_s, src_a = _struct(s, b"arrow_schema"), _struct(a)
        if src_a.device_type not in (CUDA, CUDA_HOST, CUDA_MANAGED):
            raise _fail(RuntimeError, "arrow_data_structures.cpp", "Unsupported ArrowDeviceArray type")
        ctypes.memmove(ctypes.addressof(self.schema), ctypes.addressof(src_s), ctypes.sizeof(ArrowSchema))
        ctypes.memmove(ctypes.addressof(self.device), ctypes.addressof(src_a), ctypes.sizeof(ArrowDeviceArray))
        ctypes.memset(ctypes.addressof(src_s) + ArrowSchema.release.offset, 0, ctypes.sizeof(ctypes.c_void_p))
        ctypes.memset(ctypes.addressof(src_a) + _RELEASE_OFFSET, 0, ctypes.sizeof(ctypes.c_void_p))
        self.internal = internal
        self.keep: list[Any] = []

    def _release_fn(self) -> Optional[int]:
        return ctypes.cast(self.device.array.release, ctypes.c_void_p).value

    def release_without_gil(self) -> None:
        # from_arrow's `with nogil:` block unwinds through ~arrow_array_container
        fn = self._release_fn()
        if fn:
            _RELEASE_WITHOUT_GIL(fn)(ctypes.addressof(self.device.array))
            _clear(self.device.array, _RELEASE_OFFSET)
        self._drop_schema()

    def _drop_schema(self) -> None:
        # ~arrow_array_container never releases `schema`: the leak is copied,
        # except for the stand-in's own imports (godevarrow's counters stay
        # about the bridge)
        fn = ctypes.cast(self.schema.release, ctypes.c_void_p).value
        if self.internal and fn:
            _RELEASE_WITH_GIL(fn)(ctypes.addressof(self.schema))
            _clear(self.schema, ArrowSchema.release.offset)

    def __del__(self) -> None:
        fn = self._release_fn()
        if fn:
            _RELEASE_WITH_GIL(fn)(ctypes.addressof(self.device.array))
            _clear(self.device.array, _RELEASE_OFFSET)
        self._drop_schema()


def _clear(struct: Any, offset: int) -> None:
    ctypes.memset(ctypes.addressof(struct) + offset, 0, ctypes.sizeof(ctypes.c_void_p))


def _table_from_device(s: object, a: object, internal: bool = False) -> Table:
    holder = _Holder(s, a, internal)
    try:
        schema, array = holder.schema, holder.device.array
        if _format(schema) != "+s":
            raise _fail(TypeError, "from_arrow_device.cu", "Must pass a struct to `from_arrow_device`")
        cols = [
            _get_column(schema.children[i].contents, array.children[i].contents, False, holder)
            for i in range(array.n_children)
        ]
    except Exception:
        holder.release_without_gil()
        raise
    if VERSION >= (26, 8) and not cols:
        return Table([], num_rows=int(array.length))  # "A zero-column struct still has a length"
    return Table(cols)


def _format(s: Any) -> str:
    return s.format.decode()


_FIXED = {
    "c": pa.int8(),
    "s": pa.int16(),
    "i": pa.int32(),
    "l": pa.int64(),
    "C": pa.uint8(),
    "S": pa.uint16(),
    "I": pa.uint32(),
    "L": pa.uint64(),
    "f": pa.float32(),
    "g": pa.float64(),
    "tdD": pa.date32(),
}
_UNITS = {"s": "s", "m": "ms", "u": "us", "n": "ns"}
_SIGNED_INDICES = {"c": pa.int8(), "s": pa.int16(), "i": pa.int32(), "l": pa.int64()}


def _unsupported() -> Exception:
    return _fail(TypeError, "arrow_utilities.cpp", "Unsupported type_id conversion to cudf")


def _cudf_type(fmt: str) -> DataType:
    """arrow_to_cudf_type (arrow_utilities.cpp)."""
    if fmt in _FIXED:
        return DataType("fixed", _FIXED[fmt])
    if fmt == "n":
        return DataType("empty")
    if fmt == "b":
        return DataType("bool", pa.bool_())
    if fmt in ("u", "U", "vu"):
        return DataType("string")
    if fmt in ("+l", "+L"):
        return DataType("list")
    if fmt == "+s":
        return DataType("struct")
    if fmt[:3] in ("tss", "tsm", "tsu", "tsn"):
        return DataType("fixed", pa.timestamp(_UNITS[fmt[2]]))  # the zone is not kept
    if fmt[:2] == "tD" and fmt[2:] in _UNITS:
        return DataType("fixed", pa.duration(_UNITS[fmt[2]]))
    if fmt.startswith("d:"):
        parts = fmt[2:].split(",")
        bits = int(parts[2]) if len(parts) > 2 else 128
        scale = int(parts[1])
        # the type keeps the scale only; to_arrow_schema writes 9/18/38 back
        if bits == 32:
            return DataType("fixed", pa.decimal32(9, scale))
        if bits == 64:
            return DataType("fixed", pa.decimal64(18, scale))
        if bits == 128:
            return DataType("fixed", pa.decimal128(38, scale))
    raise _unsupported()


def _get_column(schema: Any, arr: Any, skip_mask: bool, holder: _Holder) -> Column:
    """get_column and dispatch_from_arrow_device (from_arrow_device.cu)."""
    if arr.length > 2**31 - 1:
        raise _fail(OverflowError, "from_arrow_device.cu", "Total number of rows exceeds the column size limit.")
    fmt = _format(schema)
    if schema.dictionary:
        return _dictionary(schema, arr, fmt, holder)
    t = _cudf_type(fmt)
    n, off, nulls = int(arr.length), int(arr.offset), int(arr.null_count)
    validity = arr.buffers[0] if arr.n_buffers else None
    mask = None if skip_mask or not validity else _Buf(validity, holder)
    if t.kind == "empty":
        return Column(t, n, None, None, n, 0, [], holder)
    if t.kind == "fixed":
        return Column(t, n, _Buf(arr.buffers[1], holder) if arr.buffers[1] else None, mask, nulls, off, [], holder)
    if t.kind == "bool":
        if n == 0:
            return Column(t, 0, None, mask, 0, 0, [], holder)
        # mask_to_bools and copy_bitmask: new buffers of the slice's rows
        bits = _bits(_read(arr.buffers[1], (off + n + 7) // 8), off, n)
        data = _upload(bits.astype(np.uint8).tobytes())
        new_mask = None
        if not skip_mask and validity:
            new_mask = _upload(_pack(_bits(_read(validity, (off + n + 7) // 8), off, n)))
        return Column(t, n, data, new_mask, nulls if new_mask else 0, 0, [], holder)
    if t.kind == "string":
        if n == 0:
            return Column(t, 0, None, mask, 0, 0, [], holder)
        if fmt == "vu" and VERSION >= (26, 4):
            return _string_view(arr, n, off, skip_mask, holder)
        # string views before 26.04 land here too: their 16-byte views are
        # read as int32 offsets and their first data buffer as the chars
        width = pa.int64() if fmt == "U" else pa.int32()
        offsets = Column(DataType("fixed", width), off + n + 1, _Buf(arr.buffers[1], holder), None, 0, 0, [], holder)
        chars = _Buf(arr.buffers[2], holder) if arr.n_buffers > 2 and arr.buffers[2] else None
        return Column(DataType("string"), n, chars, mask, nulls, off, [offsets], holder)
    if t.kind == "struct":
        children = [
            _get_column(schema.children[i].contents, arr.children[i].contents, False, holder)
            for i in range(arr.n_children)
        ]
        return Column(t, n, None, mask if not skip_mask else None, nulls, off, children, holder)
    if t.kind == "list":
        if fmt == "+L":
            raise _fail(TypeError, "from_arrow_device.cu", "Large list types are not supported")
        offsets = Column(
            DataType("fixed", pa.int32()), 0 if n == 0 else off + n + 1, _Buf(arr.buffers[1], holder), None, 0, 0, []
        )
        child = _get_column(schema.children[0].contents, arr.children[0].contents, False, holder)
        end = 0 if n == 0 else int(np.frombuffer(_read(arr.buffers[1] + 4 * (off + n), 4), np.int32)[0])
        child = child.sliced(0, end)
        return Column(t, n, None, mask, nulls, off, [offsets, child], holder)
    raise AssertionError(t.kind)


def _dictionary(schema: Any, arr: Any, fmt: str, holder: _Holder) -> Column:
    keys = _get_column(schema.dictionary.contents, arr.dictionary.contents, True, holder)
    if fmt not in _SIGNED_INDICES:
        raise _fail(TypeError, "from_arrow_device.cu", "Unsupported type_id for dictionary indices")
    n, off = int(arr.length), int(arr.offset)
    indices = Column(DataType("fixed", _SIGNED_INDICES[fmt]), off + n, _Buf(arr.buffers[1], holder), None, 0, 0, [])
    mask = _Buf(arr.buffers[0], holder) if arr.buffers[0] else None
    return Column(DataType("dictionary"), n, None, mask, int(arr.null_count), off, [indices, keys], holder)


def _string_view(arr: Any, n: int, off: int, skip_mask: bool, holder: _Holder) -> Column:
    """26.04+: binary_view_to_string_index_pair then make_strings_column (a
    new strings column of the slice's rows)."""
    views = _read(arr.buffers[1], 16 * (off + n))[16 * off :]
    validity = None if skip_mask or not arr.buffers[0] else _bits(_read(arr.buffers[0], (off + n + 7) // 8), off, n)
    data = [arr.buffers[2 + i] for i in range(arr.n_buffers - 3)]
    values: list[Optional[bytes]] = []
    for i in range(n):
        if validity is not None and not validity[i]:
            values.append(None)
            continue
        v = views[16 * i : 16 * i + 16]
        size = int.from_bytes(v[:4], "little", signed=True)
        if size <= 12:
            values.append(v[4 : 4 + size])
        else:
            index = int.from_bytes(v[8:12], "little", signed=True)
            start = int.from_bytes(v[12:16], "little", signed=True)
            values.append(_read(data[index] + start, size))
    host = pa.array(values, pa.binary()).cast(pa.string())
    return _column_from_arrow(host)
