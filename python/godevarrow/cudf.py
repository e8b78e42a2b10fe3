"""cuDF bridge: ``from_cudf`` and ``to_cudf`` through pylibcudf and the Arrow
C Device Data Interface (zero-copy into godevarrow; cuDF copies on its side
when it builds columns from Arrow).

pylibcudf's Arrow export leaves column names empty, so ``from_cudf`` puts the
DataFrame's names back (a zero-copy relabel). libcudf copies ``null_count``
verbatim, so ``to_cudf`` counts the nulls a producer left unknown first.
Needs cuDF >= 25.08 (``pip install 'godevarrow[cudf]'``).
"""

from __future__ import annotations

from typing import Any, Union

from . import _godevarrow as _lib
from ._array import Array, RecordBatch, array, record_batch
from ._optional import require
from ._schema import schema

__all__ = ["from_cudf", "to_cudf"]


MIN_CUDF = (25, 8)


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


def _renamed(batch: RecordBatch, names: list[str]) -> RecordBatch:
    pa = require("pyarrow", "godevarrow.cudf")

    fields = list(pa.schema(batch.schema))
    target = pa.schema([f.with_name(str(n)) for f, n in zip(fields, names)], metadata=pa.schema(batch.schema).metadata)
    return RecordBatch(_lib.array_cast(batch._h, schema(target)._h))


def from_cudf(obj: Any) -> Union[RecordBatch, Array]:
    """A RecordBatch from a ``cudf.DataFrame`` (column names kept) or an Array
    from a ``cudf.Series``, zero-copy on the GPU."""
    cudf, plc = _cudf()
    if isinstance(obj, cudf.Series):
        column, _meta = obj.to_pylibcudf()
        return array(column)
    if not isinstance(obj, cudf.DataFrame):
        raise TypeError(f"from_cudf() takes a cudf.DataFrame or cudf.Series, not {type(obj).__name__}")
    table, _meta = obj.to_pylibcudf()
    return _renamed(record_batch(table), [str(c) for c in obj.columns])


def to_cudf(batch: Any) -> Any:
    """A ``cudf.DataFrame`` from a RecordBatch (or anything with
    ``__arrow_c_device_array__`` / ``__arrow_c_array__`` of struct type), with
    its column names."""
    cudf, plc = _cudf()
    # libcudf copies null_count verbatim and reads -1 as "no nulls": count
    # the unknown ones first (a device-to-host copy of those bitmaps)
    rb = RecordBatch(_lib.array_known_null_counts(record_batch(batch)._h))
    names = rb.column_names
    table = plc.Table.from_arrow(rb)
    df = cudf.DataFrame.from_pylibcudf(table, {"columns": names})
    if list(df.columns) != names:
        df.columns = names
    return df
