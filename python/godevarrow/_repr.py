"""The repr of tables, record batches and chunked arrays: a head line
(class, shape, chunks, device), the schema, then each column's first and
last values, one line per column, in pyarrow's spelling of values (``null``,
``true``, ISO dates and times, double-quoted strings, hex bytes).

Only the values shown are read (``_values`` of PREVIEW_EDGE elements at
each end), so the repr of a million rows costs what ten rows cost; lines
are cut at WIDTH characters and columns after MAX_COLUMNS are counted, not
shown."""

from __future__ import annotations

import datetime as _dt
import decimal
from typing import Any, Callable, Sequence

PREVIEW_EDGE = 5  # values shown at each end of a column
WIDTH = 100  # the longest line of a repr
VALUE_WIDTH = 40  # the longest value
MAX_COLUMNS = 20  # columns listed before "... and N more columns"


def value_text(v: Any) -> str:
    """One value as pyarrow prints it, cut at VALUE_WIDTH."""
    s = _text(v)
    return s if len(s) <= VALUE_WIDTH else s[: VALUE_WIDTH - 3] + "..."


def _text(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    if isinstance(v, _dt.datetime):
        s = v.isoformat(sep=" ")
        return s[:-6] + "Z" if s.endswith("+00:00") else s
    if isinstance(v, (_dt.date, _dt.time, decimal.Decimal)):
        return str(v)
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_text(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_text(x) for x in v) + "]"
    if isinstance(v, tuple) and not hasattr(v, "_fields"):  # a map entry (key, value)
        return "(" + ", ".join(_text(x) for x in v) + ")"
    return repr(v)


def _cut(line: str) -> str:
    return line if len(line) <= WIDTH else line[: WIDTH - 3] + "..."


def preview(values: Callable[[int, int], list[Any]], n: int, room: int = WIDTH) -> str:
    """``[a, b, ..., y, z]``: the first and last PREVIEW_EDGE of n values,
    read through values(start, count); fewer at each end while the line is
    longer than room, so that values are not cut in the middle."""
    first = [value_text(v) for v in values(0, min(n, PREVIEW_EDGE))]
    start = max(PREVIEW_EDGE, n - PREVIEW_EDGE)
    last = [value_text(v) for v in values(start, n - start)] if n > start else []
    for k in range(PREVIEW_EDGE, 0, -1):
        head, tail = first[:k], last[max(len(last) - k, 0) :]
        gap = [] if len(head) + len(tail) == n else ["..."]
        text = "[" + ", ".join(head + gap + tail) + "]"
        if len(text) <= room:
            break
    return text


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def render(
    head: str, schema_lines: Sequence[str], columns: Sequence[tuple[str, Callable[[int, int], list[Any]]]], n: int
) -> str:
    """The whole repr: head, schema, ``----``, one preview line per column
    (``name: [...]``; a column without a name is its preview alone)."""
    lines = [_cut(head)]
    if schema_lines:
        lines += [_cut(s) for s in schema_lines[:MAX_COLUMNS]]
        extra = len(schema_lines) - MAX_COLUMNS
        if extra > 0:
            lines.append(f"... and {_plural(extra, 'more column')}")
        lines.append("----")
    try:
        for name, values in columns[:MAX_COLUMNS]:
            prefix = f"{name}: " if name else ""
            lines.append(_cut(prefix + preview(values, n, WIDTH - len(prefix))))
    except Exception as e:  # a repr never raises: say why there are no values
        lines.append(_cut(f"<values not shown: {type(e).__name__}: {e}>"))
    return "\n".join(lines)


def shape(rows: int, columns: int | None, chunks: int | None, where: str) -> str:
    """``1,000,000 rows × 5 columns, 3 chunks, on cpu``."""
    parts = [_plural(rows, "row" if columns is not None else "value")]
    if columns is not None:
        parts[0] += f" × {_plural(columns, 'column')}"
    if chunks is not None:
        parts.append(_plural(chunks, "chunk"))
    parts.append(f"on {where}")
    return ", ".join(parts)
