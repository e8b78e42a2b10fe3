"""The one comparison of Python values the value tests share: godevarrow's
to_pylist against pyarrow's."""

from __future__ import annotations

import datetime
import decimal
import math

import godevarrow as gda
import pyarrow as pa


def same(got, want, path="value") -> None:
    """got and want are the same Python value: the same types all the way down
    (True is not 1), decimals with the same exponent, datetimes with the same
    UTC offset and wall time, NaN equal to NaN."""
    """got and want are the same Python value: the same types, and for
    decimals the same exponent, for datetimes the same UTC offset, NaN equal
    to NaN."""
    if isinstance(want, pa.MonthDayNano):  # pyarrow's class, ours a NamedTuple of the same fields
        assert isinstance(got, gda.MonthDayNano), f"{path}: {got!r} is not a MonthDayNano"
        assert tuple(got) == tuple(want), f"{path}: {got!r} != {want!r}"
        return
    assert type(got) is type(want), f"{path}: {type(got).__name__} {got!r} != {type(want).__name__} {want!r}"
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want), f"{path}: {len(got)} items, {len(want)} expected"
        for i, (g, w) in enumerate(zip(got, want)):
            same(g, w, f"{path}[{i}]")
    elif isinstance(want, dict):
        assert list(got) == list(want), f"{path}: keys {list(got)} != {list(want)}"
        for k in want:
            same(got[k], want[k], f"{path}[{k!r}]")
    elif isinstance(want, float) and math.isnan(want):
        assert math.isnan(got), f"{path}: {got!r} is not NaN"
    elif isinstance(want, decimal.Decimal):
        assert str(got) == str(want), f"{path}: {got!r} != {want!r}"
    elif isinstance(want, datetime.datetime):
        assert got == want and got.utcoffset() == want.utcoffset(), f"{path}: {got!r} != {want!r}"
        assert got.replace(tzinfo=None) == want.replace(tzinfo=None), f"{path}: {got!r} != {want!r} (wall time)"
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"
