"""Schema: an exact Arrow schema, and the constructor schema()."""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any, Optional, Union

from . import _godevarrow as _lib
from . import _ipc
from ._optional import require
from ._protocol import no_protocol

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow

_FLAG_NULLABLE = 2


def _decode_metadata(blob: Optional[bytes]) -> dict[bytes, bytes]:
    if not blob:
        return {}
    (n,) = struct.unpack_from("=i", blob, 0)
    pos, out = 4, {}
    for _ in range(n):
        (klen,) = struct.unpack_from("=i", blob, pos)
        key = blob[pos + 4 : pos + 4 + klen]
        pos += 4 + klen
        (vlen,) = struct.unpack_from("=i", blob, pos)
        out[key] = blob[pos + 4 : pos + 4 + vlen]
        pos += 4 + vlen
    return out


class Schema:
    """An exact Arrow schema (format string, name, flags, metadata, children).

    Make one with `godevarrow.schema`.
    """

    __slots__ = ("_h", "_info", "__weakref__")

    def __init__(self, handle: Any) -> None:
        self._h = handle
        self._info: Optional[_lib.SchemaInfo] = None

    def _get_info(self) -> _lib.SchemaInfo:
        if self._info is None:
            self._info = _lib.schema_info(self._h)
        return self._info

    def __arrow_c_schema__(self) -> object:
        """The schema as a fresh ``arrow_schema`` capsule (a deep copy)."""
        return _lib.export_schema(self._h)

    @property
    def format(self) -> str:
        """The Arrow C format string (``"l"``, ``"+s"``, ``"tsu:UTC"``, ...)."""
        return self._get_info().format

    @property
    def name(self) -> str:
        """The field name (``""`` when it has none)."""
        return self._get_info().name

    @property
    def flags(self) -> int:
        """The ARROW_FLAG_* bits (1 dictionary ordered, 2 nullable, 4 map keys sorted)."""
        return self._get_info().flags

    @property
    def nullable(self) -> bool:
        """Whether the field may hold nulls (ARROW_FLAG_NULLABLE)."""
        return bool(self.flags & _FLAG_NULLABLE)

    @property
    def metadata(self) -> dict[bytes, bytes]:
        """The field's metadata, as bytes keys and values."""
        return _decode_metadata(self._get_info().metadata)

    @property
    def children(self) -> list[Schema]:
        """The child fields (a struct's fields, a list's item, ...)."""
        return [Schema(_lib.schema_child(self._h, i)) for i in range(self._get_info().n_children)]

    @property
    def dictionary(self) -> Optional[Schema]:
        """The schema of the dictionary values of a dictionary-encoded field."""
        return Schema(_lib.schema_child(self._h, -1)) if self._get_info().has_dictionary else None

    def __eq__(self, other: object) -> bool:
        """Equal types, names, flags, metadata and children (recursively)."""
        if not isinstance(other, Schema):
            if hasattr(other, "__arrow_c_schema__"):
                other = schema(other)
            else:
                return NotImplemented
        return bool(_lib.schema_equal(self._h, other._h))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as Arrow IPC (the schema of an empty batch, exact field)."""
        pa = require("pyarrow", "pickling a godevarrow schema")

        whole = self.format == "+s" and self.dictionary is None
        target = pa.schema(self) if whole else pa.field(self)
        return (_schema_from_ipc, (_ipc.schema_bytes(target, single_column=not whole),))

    def __hash__(self) -> int:
        return hash((self.format, self.name, self.flags))

    def __str__(self) -> str:
        return str(_lib.schema_str(self._h))

    def __repr__(self) -> str:
        return f"godevarrow.Schema({self})"

    def to_pyarrow(self) -> Union[pyarrow.Schema, pyarrow.Field]:
        """A ``pyarrow.Schema`` for a struct with no name (a record batch
        schema), else a ``pyarrow.Field``."""
        pa = require("pyarrow", "to_pyarrow()")

        if self.format == "+s" and self.name == "" and self.dictionary is None:
            return pa.schema(self)
        return pa.field(self)


def _schema_from_ipc(data: bytes) -> Schema:
    return schema(_ipc.read_schema(data))


def schema(obj: object) -> Schema:
    """A Schema from any object with ``__arrow_c_schema__``."""
    if isinstance(obj, Schema):
        return obj
    if not hasattr(obj, "__arrow_c_schema__"):
        raise no_protocol(obj, "schema", "__arrow_c_schema__")
    return Schema(_lib.import_schema(obj.__arrow_c_schema__(), True))


def requested_handle(requested_schema: object) -> Any:
    """A schema handle for a requested_schema (borrowed, not consumed)."""
    if requested_schema is None:
        return None
    if isinstance(requested_schema, Schema):
        return requested_schema._h
    return _lib.import_schema(requested_schema, False)


def column_index(names: list[str], i: Union[int, str]) -> int:
    """The index of column ``i`` (an index, negative from the end, or a
    unique name) among ``names``: KeyError or IndexError otherwise."""
    if isinstance(i, str):
        if names.count(i) != 1:
            raise KeyError(f"no column named {i!r}" if i not in names else f"column name {i!r} is ambiguous")
        return names.index(i)
    n = len(names)
    if not -n <= i < n:
        raise IndexError(f"column index {i} out of range for {n} columns")
    return i % n
