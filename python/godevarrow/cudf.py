"""cuDF bridge: ``from_cudf`` and ``to_cudf`` through pylibcudf and the Arrow
C Device Data Interface. Needs cuDF >= 25.08 (``pip install 'godevarrow[cudf]'``).

What is shared (docs/cuda.md, "cuDF"): ``from_cudf`` returns a batch over
cuDF's own device buffers (a write through either side shows in the other,
with no event), except for the columns it has to copy: a sliced column (cuDF
exports a slice as the first rows of the unsliced column) and nothing else.
``to_cudf`` hands the batch's device buffers to cuDF without a copy (cuDF
holds them until its DataFrame is gone), except for booleans (cuDF keeps one
byte per value and converts), string views for cuDF < 26.04, data on the host
and a top-level struct with nulls or a sliced validity bitmap, which are
copied first.

What cuDF's own export gets wrong, and what this module does about it:
slices are copied before the export; the names, the nullability and (for a
batch that came from ``to_cudf``) the types godevarrow knows are put back
(a round trip returns the schema it was given; a fresh ``from_cudf`` is
all-nullable, as ``df.to_arrow()``); the device is taken from the buffers,
not from pylibcudf's stamp (the current device). Types cuDF cannot hold and
duplicate names are refused before anything is moved; libcudf never
releases the schema it takes, so it is handed one whose loss frees nothing.

This module is the Python half of the CUDA backend (gosrc/device/cuda): a
bridge to a CUDA peer, so it may compare device types with CUDA's; the rest
of the package asks a device type's backend (``_device.device_traits``).
"""

from __future__ import annotations

import warnings
import weakref
from typing import Any, Optional, Union

from . import _godevarrow as _lib
from ._array import Array, RecordBatch, array, record_batch
from ._device import DeviceType
from ._godevarrow import ArrowNotImplementedError, GodevarrowTypeError
from ._optional import require
from ._schema import schema

__all__ = ["from_cudf", "to_cudf"]


MIN_CUDF = (25, 8)
# cuDF reads string views from 26.04 on (before, as int32 offsets: garbage)
STRING_VIEW_CUDF = (26, 4)


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for p in text.split(".")[:2]:
        digits = "".join(ch for ch in p if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def _cudf() -> Any:
    feature = "godevarrow.cudf (cuDF >= 25.08, see https://docs.rapids.ai/install)"
    cudf = require("cudf", feature)
    pylibcudf = require("pylibcudf", feature)
    found = getattr(cudf, "__version__", "0")
    if _version(found) < MIN_CUDF:
        raise ImportError(
            f"godevarrow.cudf needs cuDF >= 25.08 (pylibcudf's Arrow device interop), found cuDF {found}: "
            "pip install -U 'godevarrow[cudf]'"
        )
    return cudf, pylibcudf


class _Handover:
    """What pylibcudf's ``from_arrow`` reads: the batch's device array, and a
    shallow copy of its schema whose release frees nothing. libcudf moves
    the schema into its arrow_array_container and never releases it
    (arrow_data_structures.cpp in cuDF 25.08 to 26.08): a real schema would
    leak once per call. It reads the schema only while it builds its views
    (pylibcudf never asks an arrow_table for its schema back), so the real
    one (``self.keep``) is freed once ``from_arrow`` returns."""

    def __init__(self, batch: RecordBatch) -> None:
        self.batch = batch
        self.keep, self.array = batch.__arrow_c_device_array__()
        self.copy = _lib.schema_borrowed(self.keep)

    def struct_rows_of_its_own(self) -> bool:
        """Whether the top-level struct has an offset or nulls that its
        children do not show (libcudf's from_arrow_device ignores both)."""
        return self.batch.offset != 0 or self.batch.null_count != 0

    def __arrow_c_device_array__(self, requested_schema: Any = None, **kwargs: Any) -> tuple[object, object]:
        if requested_schema is not None:
            raise ValueError("the hand-over to cuDF takes no requested_schema")
        array, self.array = self.array, None
        return self.copy, array


# ---------------------------------------------------------------- from_cudf


def _has_offset(col: Any) -> bool:
    return col.offset() != 0 or any(_has_offset(c) for c in col.children())


def _unsliced(col: Any) -> Any:
    # libcudf's to_arrow_device exports a view at offset 0 with the view's
    # length over the unsliced children and the unadvanced mask (cuDF 25.08
    # to 26.08, to_arrow_device.cu, dispatch_to_arrow_device_view): a slice
    # would arrive as the first rows of its base. A copy is a column of the
    # slice's rows at offset 0.
    return col.copy() if _has_offset(col) else col


class _Stamped:
    """pylibcudf's export with ``device_id`` taken from the buffers: libcudf
    stamps the current device (create_device_array), not the data's."""

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __arrow_c_device_array__(self, requested_schema: Any = None, **kwargs: Any) -> tuple[object, object]:
        s, a = self.obj.__arrow_c_device_array__()
        _lib.device_array_stamp_device_of_data(a)
        return s, a


# the schema each DataFrame made by to_cudf was given, by id (cudf frames
# are not hashable), forgotten when the frame goes
_GIVEN: dict[int, Any] = {}


def _remember(df: Any, given: Any) -> None:
    key = id(df)
    try:
        weakref.finalize(df, _GIVEN.pop, key, None)
    except TypeError:  # a frame without weak references: nothing to forget it by
        return
    _GIVEN[key] = given


def _cuda_view(t: Any, pa: Any) -> Any:
    """The type as cuDF hands it back: no time zone, decimals at 9/18/38
    digits, large_string kept, date32 (26.08: timestamp[s]), nested names
    dropped. Only used to compare."""
    if pa.types.is_timestamp(t):
        return ("ts", t.unit)
    if pa.types.is_decimal(t):
        return ("dec", t.bit_width, t.scale)
    if pa.types.is_date32(t) or t == pa.timestamp("s"):
        return ("date-or-s",)
    if pa.types.is_string_view(t) or pa.types.is_string(t):
        return ("string",)
    if pa.types.is_struct(t):
        return ("struct", tuple(_cuda_view(f.type, pa) for f in t))
    if pa.types.is_list(t):
        return ("list", _cuda_view(t.value_type, pa))
    if pa.types.is_dictionary(t):
        return ("dict", str(t.index_type), _cuda_view(t.value_type, pa))
    return str(t)


def _all_nullable(t: Any, pa: Any) -> Any:
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _all_nullable(f.type, pa)) for f in t])
    if pa.types.is_list(t):
        return pa.list_(pa.field(t.value_field.name or "item", _all_nullable(t.value_type, pa)))
    return t


def _named(t: Any, dtype: Any, pa: Any) -> Any:
    """``t`` with the nested names cuDF keeps in its dtype (StructDtype.fields,
    ListDtype.element_type) where its export has empty ones."""
    fields = getattr(dtype, "fields", None)
    if pa.types.is_struct(t) and isinstance(fields, dict) and len(fields) == t.num_fields:
        return pa.struct([f.with_name(str(n)).with_type(_named(f.type, d, pa)) for f, (n, d) in zip(t, fields.items())])
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(_named(t.value_type, getattr(dtype, "element_type", None), pa)))
    return t


def _restored(batch: RecordBatch, names: list[str], given: Any, dtypes: list[Any]) -> RecordBatch:
    """The batch with the names cuDF dropped, each field as ``given`` had it
    where cuDF's type is still the one it made of it (else all-nullable, as
    ``df.to_arrow()``)."""
    pa = require("pyarrow", "godevarrow.cudf")

    got = pa.schema(batch.schema)
    fields = []
    for i, (f, name) in enumerate(zip(got, names)):
        old = given.field(i) if given is not None and given.names == names else None
        if old is not None and _cuda_view(old.type, pa) == _cuda_view(f.type, pa):
            if old.nullable or batch.column(i).null_count == 0:
                fields.append(old)
                continue
            fields.append(old.with_nullable(True))
            continue
        fields.append(pa.field(str(name), _all_nullable(_named(f.type, dtypes[i], pa), pa)))
    target = pa.schema(fields, metadata=given.metadata if given is not None and given.names == names else None)
    if target.equals(got, check_metadata=True):
        return batch
    try:
        return RecordBatch(_lib.array_cast(batch._h, schema(target)._h))
    except ArrowNotImplementedError:
        pass
    # a type godevarrow cannot cast on the device (decimal precision, 26.08's
    # date32 -> timestamp[s]): keep cuDF's type, with the names, and say so
    kept = [
        t if _same_storage(t.type, g.type, pa) else t.with_type(_renamed_like(t.type, g.type, pa))
        for t, g in zip(target, got)
    ]
    lost = [f"{t.name}: {t.type} arrives as {k.type}" for t, k in zip(target, kept) if t.type != k.type]
    warnings.warn(f"from_cudf: cuDF does not keep these types: {'; '.join(lost)}", UserWarning, stacklevel=3)
    return RecordBatch(_lib.array_cast(batch._h, schema(pa.schema(kept, metadata=target.metadata))._h))


def _same_storage(want: Any, got: Any, pa: Any) -> bool:
    """Whether ``want`` differs from ``got`` in names and nullability only
    (a relabel, which array_cast does anywhere)."""
    if pa.types.is_struct(want) and pa.types.is_struct(got):
        return want.num_fields == got.num_fields and all(_same_storage(w.type, g.type, pa) for w, g in zip(want, got))
    if pa.types.is_list(want) and pa.types.is_list(got):
        return _same_storage(want.value_type, got.value_type, pa)
    return bool(want == got)


def _renamed_like(want: Any, got: Any, pa: Any) -> Any:
    """``got`` with the nested names and nullability of ``want``."""
    if pa.types.is_struct(want) and pa.types.is_struct(got) and want.num_fields == got.num_fields:
        return pa.struct([w.with_type(_renamed_like(w.type, g.type, pa)) for w, g in zip(want, got)])
    if pa.types.is_list(want) and pa.types.is_list(got):
        return pa.list_(want.value_field.with_type(_renamed_like(want.value_type, got.value_type, pa)))
    return got


def from_cudf(obj: Any) -> Union[RecordBatch, Array]:
    """A RecordBatch from a ``cudf.DataFrame`` (column names kept) or an Array
    from a ``cudf.Series``, on the GPU.

    Zero-copy: the result reads cuDF's device buffers, so a write through
    the DataFrame shows in the batch and the other way round, with no event
    (order such writes yourself). Columns of a sliced frame (``df.iloc[a:b]``)
    are copied first: cuDF's export would hand out the first rows of the
    unsliced column. The schema is all-nullable, as ``df.to_arrow()``, except
    for a DataFrame made by `to_cudf`, whose fields come back as they went in
    (names, nullability, nested names, decimal precision, time zones) where
    cuDF still holds the type it made of them."""
    cudf, plc = _cudf()
    if isinstance(obj, cudf.Series):
        column, _meta = obj.to_pylibcudf()
        arr = array(_Stamped(_unsliced(column)))
        pa = require("pyarrow", "godevarrow.cudf")
        got = pa.field(arr.schema)
        want = got.with_nullable(True).with_type(_all_nullable(_named(got.type, getattr(obj, "dtype", None), pa), pa))
        return arr if want.equals(got) else Array(_lib.array_cast(arr._h, schema(want)._h))
    if not isinstance(obj, cudf.DataFrame):
        raise TypeError(f"from_cudf() takes a cudf.DataFrame or cudf.Series, not {type(obj).__name__}")
    table, _meta = obj.to_pylibcudf()
    columns = table.columns()
    fixed = [_unsliced(c) for c in columns]
    if any(a is not b for a, b in zip(fixed, columns)):
        table = plc.Table(fixed)
    names = [str(c) for c in obj.columns]
    dtypes = [getattr(obj[c], "dtype", None) for c in obj.columns]
    codes = [n for n, d in zip(names, dtypes) if hasattr(d, "categories") and hasattr(d, "ordered")]
    if codes:
        # cuDF exports a categorical column as its codes (ColumnBase.to_pylibcudf)
        warnings.warn(f"from_cudf: categorical columns arrive as their integer codes: {codes}", stacklevel=2)
    return _restored(record_batch(_Stamped(table)), names, _GIVEN.get(id(obj)), dtypes)


# ------------------------------------------------------------------ to_cudf


def _refusal(path: str, t: Any, pa: Any) -> Optional[str]:
    """Why cuDF cannot take ``t`` (libcudf's arrow_to_cudf_type and
    from_arrow_device), with the cast that would work; None when it can."""
    if pa.types.is_dictionary(t):
        # libcudf takes signed indices only, and cudf's from_pylibcudf has no
        # dtype for a dictionary column (KeyError) in 25.08 to 26.08
        return (
            f"{path} is {t}, which cuDF cannot hold: decode it (cast to {t.value_type}), "
            "then .astype('category') in cuDF"
        )
    if pa.types.is_struct(t):
        for f in t:
            why = _refusal(f"{path}.{f.name}", f.type, pa)
            if why:
                return why
        return None
    if pa.types.is_list(t):
        return _refusal(f"{path}[]", t.value_type, pa)
    ok = (
        pa.types.is_null(t)
        or pa.types.is_boolean(t)
        or pa.types.is_integer(t)
        or pa.types.is_float32(t)
        or pa.types.is_float64(t)
        or pa.types.is_date32(t)
        or pa.types.is_timestamp(t)
        or pa.types.is_duration(t)
        or pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or (pa.types.is_decimal(t) and t.bit_width <= 128)
        or pa.types.is_string_view(t)  # converted to strings for cuDF < 26.04
    )
    if ok:
        return None
    hint = _HINTS.get(_kind(t, pa), "no cuDF type holds it")
    if callable(hint):
        hint = hint(t, pa)
    return f"{path} is {t}, which cuDF cannot hold: {hint}"


def _kind(t: Any, pa: Any) -> str:
    for name in (
        "large_list",
        "fixed_size_list",
        "map",
        "float16",
        "time32",
        "time64",
        "date64",
        "binary",
        "large_binary",
        "binary_view",
        "fixed_size_binary",
        "decimal256",
        "list_view",
        "large_list_view",
        "run_end_encoded",
    ):
        test = getattr(pa.types, f"is_{name}", None)
        if test is not None and test(t):
            return name
    if pa.types.is_decimal(t):
        return "decimal256"
    return ""


_HINTS: dict[str, Any] = {
    "large_list": lambda t, pa: f"cast to {pa.list_(t.value_field)}",
    "fixed_size_list": lambda t, pa: f"cast to {pa.list_(t.value_field)}",
    "list_view": lambda t, pa: f"cast to {pa.list_(t.value_field)}",
    "large_list_view": lambda t, pa: f"cast to {pa.list_(t.value_field)}",
    "map": lambda t, pa: f"cast to {pa.list_(pa.struct([t.key_field, t.item_field]))}",
    "float16": "cast to float32",
    "time32": lambda t, pa: f"cast to duration[{t.unit}] (time of day since midnight)",
    "time64": lambda t, pa: f"cast to duration[{t.unit}] (time of day since midnight)",
    "date64": "cast to timestamp[ms]",
    "binary": "cast to string (if it is UTF-8) or to list<uint8>",
    "large_binary": "cast to string (if it is UTF-8) or to list<uint8>",
    "binary_view": "cast to string (if it is UTF-8) or to list<uint8>",
    "fixed_size_binary": "cast to string (if it is UTF-8) or to list<uint8>",
    "decimal256": lambda t, pa: f"cast to decimal128({min(t.precision, 38)}, {t.scale}) if the values fit",
    "run_end_encoded": lambda t, pa: f"decode it (cast to {t.value_type})",
}


def _without_views(t: Any, pa: Any) -> Any:
    if pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_without_views(f.type, pa)) for f in t])
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(_without_views(t.value_type, pa)))
    if pa.types.is_dictionary(t):
        return pa.dictionary(t.index_type, _without_views(t.value_type, pa))
    return t


def _flattened(rb: RecordBatch, pa: Any) -> RecordBatch:
    """A top-level struct with a validity bitmap as libcudf can read it:
    from_arrow_device reads the children only (their offsets and masks), so
    the struct's nulls and offset are merged into the children (a host
    round trip; pyarrow's StructArray.flatten)."""
    struct = Array(rb._h).to_device("cpu").to_pyarrow()
    flat = pa.RecordBatch.from_arrays(struct.flatten(), schema=pa.schema(list(struct.type)))
    return record_batch(flat).to_device(rb.device)


def to_cudf(batch: Any) -> Any:
    """A ``cudf.DataFrame`` from a RecordBatch (or anything with
    ``__arrow_c_device_array__`` / ``__arrow_c_array__`` of struct type), with
    its column names and as many rows.

    Zero-copy for device data: cuDF takes the batch's buffers, so a write
    through the DataFrame changes what the batch reads, and the other way
    round, with no event (order such writes yourself). Copied first: host
    data (to ``cuda:0``), booleans (cuDF converts them to a
    byte per value), string views for cuDF < 26.04 and a top-level struct
    with nulls of its own. Types cuDF cannot hold (large_list, binary,
    float16, time, map, dictionaries, ...) raise
    `GodevarrowTypeError` naming the column and the cast that works, and
    duplicate column names raise ``ValueError``, before anything is handed
    over."""
    cudf, plc = _cudf()
    pa = require("pyarrow", "godevarrow.cudf")

    rb = record_batch(batch)
    given = pa.schema(rb.schema)
    names = list(given.names)
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"to_cudf: duplicate column names {duplicates}: a cuDF DataFrame holds one column per name")
    views = _version(getattr(cudf, "__version__", "0")) >= STRING_VIEW_CUDF
    for f in given:
        why = _refusal(repr(f.name), f.type, pa)
        if why:
            raise GodevarrowTypeError(f"to_cudf: column {why}")
    if rb.device_type == DeviceType.CPU:
        rb = rb.to_device("cuda:0")  # cuDF copies host data anyway, and releases it without the GIL
    wanted = pa.schema([f.with_type(_without_views(f.type, pa)) for f in given])
    if not views and not wanted.equals(given):
        # a host round trip through pyarrow's cast (godevarrow's array_cast
        # leaves a string view as it is)
        host = Array(rb._h).to_device("cpu").to_pyarrow().cast(pa.struct(list(wanted)))
        rb = record_batch(pa.RecordBatch.from_struct_array(host)).to_device(rb.device)
    # libcudf copies null_count verbatim and reads -1 as "no nulls": count
    # the unknown ones first (a device-to-host copy of those bitmaps)
    rb = RecordBatch(_lib.array_known_null_counts(rb._h))
    n = len(rb)
    handover = _Handover(rb)
    if handover.struct_rows_of_its_own():
        rb = _flattened(rb, pa)
        handover = _Handover(RecordBatch(_lib.array_known_null_counts(rb._h)))
    table = plc.Table.from_arrow(handover)
    # an index keeps the row count of a frame without columns (pylibcudf
    # 25.08 counts the rows of the first column)
    df = cudf.DataFrame.from_pylibcudf(table, {"columns": names, "index": cudf.RangeIndex(n)})
    del handover
    if list(df.columns) != names:
        df.columns = names
    _remember(df, given)
    return df
