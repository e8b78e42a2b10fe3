"""Python values of Arrow data, without pyarrow: the objects pyarrow's
``to_pylist`` gives, and the value part of ``repr``.

Go reads the values (``cdevice.EncodeValues``, without the GIL) and the
extension module builds the objects; what Python itself must build — a
``Decimal``, a ``datetime`` in a time zone — it builds through the MAKERS
below, in the order of ``gosrc/cdevice/values.h``. The conversions follow
pyarrow's, including its refusals: a nanosecond time, timestamp or duration
that a ``datetime`` object cannot hold exactly raises ``ArrowInvalid``
(pyarrow raises ``ValueError``, or returns pandas objects when pandas is
installed; godevarrow never depends on pandas)."""

from __future__ import annotations

import datetime as _dt
import decimal
import functools
import re
import uuid
from typing import Any, Generic, NamedTuple, Optional, TypeVar

from . import _repr
from ._godevarrow import ArrowInvalid, ArrowNotImplementedError, GodevarrowTypeError


class MonthDayNano(NamedTuple):
    """A ``month_day_nano_interval`` value (pyarrow's ``MonthDayNano`` has the same fields)."""

    months: int
    days: int
    nanoseconds: int


class DayTime(NamedTuple):
    """A ``day_time_interval`` value (pyarrow has no Python object for these)."""

    days: int
    milliseconds: int


_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_EPOCH_ORDINAL = _dt.date(1970, 1, 1).toordinal()
_PER_MICROSECOND = (None, None, 1, 1000)  # the units of values.h: s, ms, us, ns
_OFFSET = re.compile(r"^([+-])(\d\d):?(\d\d)$")


def _micros(value: int, unit: int, what: str) -> int:
    if unit == 0:
        return value * 1_000_000
    if unit == 1:
        return value * 1_000
    if unit == 2:
        return value
    if value % 1000:
        raise ArrowInvalid(
            f"the nanosecond value {value} is not exactly representable as {what}, which holds microseconds "
            "(read the integers with a cast to int64, or use pyarrow with pandas for nanosecond objects)"
        )
    return value // 1000


class ValueOverflowError(ArrowInvalid, OverflowError):
    """A value beyond what its Python object can hold (a date, datetime,
    time or timedelta out of the ``datetime`` module's range): an
    ``ArrowInvalid`` that is also the ``OverflowError`` pyarrow raises for
    the same value."""


def _overflow(value: int, unit: int, what: str, e: Exception) -> ValueOverflowError:
    units = ("s", "ms", "us", "ns", "days")
    return ValueOverflowError(f"the value {value} ({units[unit]}) is out of the range of {what} ({e})")


# datetime's range in microseconds from the epoch: 0001-01-01 to 9999-12-31 23:59:59.999999
_MIN_US = (_dt.datetime.min - _EPOCH) // _dt.timedelta(microseconds=1)
_MAX_US = (_dt.datetime.max - _EPOCH) // _dt.timedelta(microseconds=1)
_DAY_US = 86_400_000_000


def _date(days: int) -> _dt.date:
    try:
        return _dt.date.fromordinal(_EPOCH_ORDINAL + days)
    except (OverflowError, ValueError) as e:  # past year 9999 or before year 1
        raise _overflow(days, 4, "datetime.date", e) from None


def _time(value: int, unit: int) -> _dt.time:
    # as pyarrow: the time of day of the epoch plus the value, so a value of
    # a day or more (or a negative one) wraps, as long as that instant is
    # one a datetime holds
    us = _micros(value, unit, "datetime.time")
    if not _MIN_US <= us <= _MAX_US:
        raise _overflow(value, unit, "datetime.time", OverflowError("date value out of range"))
    us %= _DAY_US
    hours, us = divmod(us, 3_600_000_000)
    minutes, us = divmod(us, 60_000_000)
    seconds, us = divmod(us, 1_000_000)
    return _dt.time(hours, minutes, seconds, us)


@functools.lru_cache(maxsize=64)
def _tzinfo(tz: str) -> _dt.tzinfo:
    m = _OFFSET.match(tz)
    if m:
        offset = _dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
        return _dt.timezone(-offset if m.group(1) == "-" else offset)
    import zoneinfo  # as pyarrow: an IANA name is a ZoneInfo

    try:
        return zoneinfo.ZoneInfo(tz)
    except (KeyError, ValueError, OSError) as e:  # not found (a KeyError), or not a key at all
        raise ArrowInvalid(f"unknown time zone {tz!r} (pyarrow refuses it too): {e}") from None


def _timestamp(value: int, unit: int, tz: Optional[str]) -> _dt.datetime:
    us = _micros(value, unit, "datetime.datetime")
    try:
        delta = _dt.timedelta(microseconds=us)
        if tz is None:
            return _EPOCH + delta
        at = _EPOCH_UTC + delta
    except OverflowError as e:
        raise _overflow(value, unit, "datetime.datetime", e) from None
    zone = _tzinfo(tz)  # its errors are its own
    try:
        return at.astimezone(zone)
    except OverflowError as e:  # the local time is past year 9999 or before year 1
        raise _overflow(value, unit, "datetime.datetime", e) from None


def _duration(value: int, unit: int) -> _dt.timedelta:
    us = _micros(value, unit, "datetime.timedelta")
    try:
        return _dt.timedelta(microseconds=us)
    except OverflowError as e:
        raise _overflow(value, unit, "datetime.timedelta", e) from None


def _uuid(raw: bytes) -> uuid.UUID:
    return uuid.UUID(bytes=raw)


# The makers of gosrc/cdevice/values.h, in its order.
MAKERS = (decimal.Decimal, _date, _time, _timestamp, _duration, MonthDayNano, DayTime, _uuid)

# How many values repr shows at each end (pyarrow shows 10).
REPR_EDGE = 10


def _shown(values: list[Any]) -> str:
    return ", ".join(_short(v) for v in values)


def _short(v: Any) -> str:
    r = "null" if v is None else repr(v)
    return r if len(r) <= 80 else r[:77] + "..."


_PROTOCOLS = ("__arrow_c_device_array__", "__arrow_c_array__", "__arrow_c_device_stream__", "__arrow_c_stream__")


def _rereadable_producer(obj: object) -> bool:
    """Whether obj speaks an Arrow data protocol and is not a one-shot
    stream (an iterator, a pyarrow RecordBatchReader, a godevarrow
    ArrayStream), which reading for a comparison would use up."""
    if hasattr(obj, "__next__") or hasattr(obj, "read_next_batch"):
        return False
    return any(hasattr(obj, p) for p in _PROTOCOLS)


class Values:
    """What Array and ChunkedArray share for looking at values: ``to_pylist``,
    indexing, iteration, value equality and the repr. A subclass provides
    ``__len__``, ``slice``, ``equals``, ``device`` and ``_values(start, n)``
    (the Python values of elements [start, start+n))."""

    __slots__ = ()
    _ITER_BLOCK = 4096  # values decoded per call while iterating

    def _values(self, start: int, n: int) -> list[Any]:
        raise NotImplementedError  # pragma: no cover

    def to_pylist(self) -> list[Any]:
        """The values as Python objects, as pyarrow's ``to_pylist`` gives them
        (``None`` for nulls, ``Decimal``, ``datetime``, ``bytes``, dicts for
        structs, lists of ``(key, value)`` tuples for maps...). Device data is
        copied to the host for this; the Arrow data is read without the GIL."""
        return self._values(0, len(self))  # type: ignore[arg-type]

    def __getitem__(self, key: Any) -> Any:
        """``x[i]`` is element i as a Python value (negative i counts from the
        end); ``x[a:b]`` is a zero-copy view (``slice``)."""
        n = len(self)  # type: ignore[arg-type]
        if type(key) is int:  # the common case first
            i = key
        elif isinstance(key, slice):
            start, stop, step = key.indices(n)
            if step != 1:
                raise ArrowNotImplementedError(
                    f"a slice with step {step} is not a zero-copy view; use to_pylist()[::{step}] for its values"
                )
            return self.slice(start, max(stop - start, 0))  # type: ignore[attr-defined]
        elif isinstance(key, bool) or not hasattr(key, "__index__"):
            raise GodevarrowTypeError(f"indices must be integers or slices, not {type(key).__name__}")
        else:
            i = key.__index__()
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError(f"index {i} is out of range for length {n}")
        return self._values(j, 1)[0]

    def __iter__(self) -> Any:
        """The values as Python objects, decoded a block at a time."""
        n = len(self)  # type: ignore[arg-type]
        for start in range(0, n, self._ITER_BLOCK):
            yield from self._values(start, min(self._ITER_BLOCK, n - start))

    def __eq__(self, other: object) -> bool:
        """Value equality (see ``equals``), with godevarrow objects and with
        other libraries' arrays and tables (anything ``equals`` reads, so
        that ``gda.table(t) == t`` for a pyarrow table); one-shot streams
        (which comparing would consume) and other objects are not equal."""
        if not isinstance(other, Values) and not _rereadable_producer(other):
            return NotImplemented
        try:
            return self.equals(other)  # type: ignore[attr-defined,no-any-return]
        except GodevarrowTypeError:
            return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal by value, and mutable-looking to a dict

    def _repr_head(self) -> str:
        raise NotImplementedError  # pragma: no cover

    def __repr__(self) -> str:
        """The class, type, length and device, then the values (the first and
        last REPR_EDGE of long data)."""
        n = len(self)  # type: ignore[arg-type]
        head = self._repr_head()
        try:
            if n <= 2 * REPR_EDGE:
                body = _shown(self._values(0, n))
            else:
                body = f"{_shown(self._values(0, REPR_EDGE))}, ..., {_shown(self._values(n - REPR_EDGE, REPR_EDGE))}"
            return f"{head}\n[{body}]"
        except Exception as e:  # a repr never raises: say why there are no values
            return f"{head}\n<values not shown: {type(e).__name__}: {e}>"


_Col = TypeVar("_Col", bound=Values)


class Columns(Generic[_Col]):
    """What RecordBatch and Table share: the columns of struct data. A
    subclass provides ``schema``, ``num_columns`` and ``column(i)`` (a column
    of type _Col: an Array of a RecordBatch, a ChunkedArray of a Table)."""

    __slots__ = ()

    @property
    def num_rows(self) -> int:
        """The number of rows."""
        return len(self)  # type: ignore[arg-type]

    @property
    def column_names(self) -> list[str]:
        """The names of the columns, in order."""
        return [c.name for c in self.schema.children]  # type: ignore[attr-defined]

    @property
    def columns(self) -> list[_Col]:
        """Every column, in order (an Array each of a RecordBatch, a
        ChunkedArray each of a Table); zero-copy."""
        return [self.column(i) for i in range(self.num_columns)]  # type: ignore[attr-defined]

    def _render_columns(self, head: str) -> str:
        """The repr of struct data under its first line ``head``: the schema,
        then each column's first and last values (only those are read)."""
        fields = [str(c) for c in self.schema.children]  # type: ignore[attr-defined]
        names = self.column_names[: _repr.MAX_COLUMNS]
        columns = [(name, self.column(i)._values) for i, name in enumerate(names)]  # type: ignore[attr-defined]
        return _repr.render(head, fields, columns, len(self))  # type: ignore[arg-type]
