"""Looking at values without pyarrow: to_pylist gives what pyarrow's
to_pylist gives on every column of every file of the gold corpus, unsliced
and sliced; where pyarrow refuses a value, godevarrow refuses it with the
same builtin exception class."""

from __future__ import annotations

import datetime
import decimal

import godevarrow as gda
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest
from conftest import corpus_params
from pyvalues import same


def pyarrow_values(col: pa.Array):
    """pyarrow's to_pylist, or the exception it raises."""
    try:
        return col.to_pylist(), None
    except (ValueError, OverflowError) as e:
        return None, e


def check_column(got: gda.Array, want: pa.Array, where: str) -> None:
    values, refused = pyarrow_values(want)
    if refused is None:
        same(got.to_pylist(), values, where)
        assert len(list(got)) == len(values)
        if len(values):
            same(got[0], values[0], where + "[0]")
            same(got[-1], values[-1], where + "[-1]")
    else:
        kind = OverflowError if isinstance(refused, OverflowError) else ValueError
        with pytest.raises(kind):
            got.to_pylist()


def columns(batch: pa.RecordBatch):
    """(name, pyarrow column) of a batch; None for a column pyarrow cannot
    wrap as a Python array (month and day-time intervals: no Python class)."""
    for i, field in enumerate(batch.schema):
        try:
            yield i, field.name, batch.column(i)
        except KeyError:
            yield i, field.name, None


def read_batches(corpus_dir, name):
    with ipc.open_stream(corpus_dir / name) as reader:
        return list(reader)


@pytest.mark.parametrize("name", corpus_params())
@pytest.mark.parametrize("window", [None, (1, 3), (2, None)], ids=["whole", "slice-1-3", "slice-2-end"])
def test_to_pylist_matches_pyarrow_on_the_corpus(name, window, corpus_dir, leak_check):
    for b, batch in enumerate(read_batches(corpus_dir, name)):
        if window is not None:
            offset, length = window
            batch = batch.slice(offset, length)  # a real offset inside the buffers
        g = gda.record_batch(batch)
        for i, field_name, want in columns(batch):
            got = g.column(i)
            where = f"{name} batch {b} column {field_name!r}"
            if want is None:
                # pyarrow has no Python objects for these: ints (months) and DayTime
                values = got.to_pylist()
                assert len(values) == len(batch)
                assert all(v is None or isinstance(v, (int, gda.DayTime)) for v in values), values[:3]
                continue
            check_column(got, want, where)
        # whole rows, where pyarrow can give them
        values, refused = (None, True)
        try:
            values, refused = batch.to_pylist(), None
        except (ValueError, OverflowError, KeyError):  # lint: allow-except-pass the oracle (pyarrow) refuses these rows
            pass
        if refused is None:
            same(g.to_pylist(), values, f"{name} batch {b} rows")
            same(g.to_pydict(), batch.to_pydict(), f"{name} batch {b} to_pydict")


def test_values_of_every_kind_match_pyarrow(leak_check):
    tz = pa.timestamp("us", "Europe/Paris")
    cases = [
        pa.array([1, None, -3], pa.int8()),
        pa.array([2**64 - 1, 0], pa.uint64()),
        pa.array([1.5, None, float("nan")], pa.float16()),
        pa.array([b"x", None, b""], pa.binary_view()),
        pa.array(["é", None], pa.string_view()),
        pa.array([decimal.Decimal("-1.20"), None], pa.decimal128(5, 2)),
        pa.array([decimal.Decimal("12E+3")], pa.decimal128(5, -3)),
        pa.array([datetime.datetime(2020, 3, 29, 1, 30)], tz),
        pa.array([datetime.datetime(2020, 3, 29, 1, 30)], pa.timestamp("s", "+05:30")),
        pa.array([datetime.datetime(1969, 12, 31, 23, 59, 59, 999000)], pa.timestamp("ms")),
        pa.array([datetime.date(1969, 12, 31)], pa.date64()),
        pa.array([datetime.time(23, 59, 59, 999999)], pa.time64("us")),
        pa.array([1000, 2000], pa.time64("ns")),
        pa.array([datetime.timedelta(days=-1, microseconds=5)], pa.duration("us")),
        pa.array([pa.MonthDayNano([1, -2, 3])], pa.month_day_nano_interval()),
        pa.array([[1, None], None, []], pa.list_view(pa.int32())),
        pa.array([[("k", 1)], None], pa.map_(pa.string(), pa.int64())),
        pa.array([{"a": 1, "b": None}, None], pa.struct([("a", pa.int8()), ("b", pa.string())])),
        pa.array(["a", "b", None, "a"]).dictionary_encode(),
        pa.UnionArray.from_sparse(pa.array([0, 1], pa.int8()), [pa.array([1, 2]), pa.array(["x", "y"])]),
        pa.UnionArray.from_dense(
            pa.array([1, 0, 1], pa.int8()), pa.array([0, 0, 1], pa.int32()), [pa.array([7]), pa.array(["p", None])]
        ),
        pa.RunEndEncodedArray.from_arrays([2, 3], pa.array(["r", None])),
        pa.array([b"\x00" * 16], pa.uuid()),
        pa.array([1, 0, None], pa.int8()).view(pa.bool8()) if hasattr(pa, "bool8") else pa.array([True]),
    ]
    for want in cases:
        got = gda.array(want)
        for view, w in ((got, want), (got.slice(1), want.slice(1))):
            same(view.to_pylist(), w.to_pylist(), str(want.type))


def test_nanosecond_values_a_datetime_cannot_hold_are_refused():
    g = gda.array(pa.array([1], pa.timestamp("ns")))
    with pytest.raises(gda.ArrowInvalid, match="nanosecond value 1 is not exactly representable"):
        g.to_pylist()
    assert gda.array(pa.array([1000], pa.timestamp("ns"))).to_pylist() == [datetime.datetime(1970, 1, 1, 0, 0, 0, 1)]


def test_struct_with_duplicate_field_names_is_refused_like_pyarrow():
    arr = pa.StructArray.from_arrays([pa.array([1]), pa.array([2])], names=["a", "a"])
    with pytest.raises(ValueError):
        arr.to_pylist()
    with pytest.raises(gda.ArrowInvalid, match='two fields named "a"'):
        gda.array(arr).to_pylist()
    assert gda.record_batch(arr).column(1).to_pylist() == [2]


def test_invalid_data_gets_a_clear_error_and_repr_never_raises(leak_check):
    # one string whose bytes are not UTF-8: full validation refuses it before any value is read
    offsets = pa.py_buffer(b"\x00\x00\x00\x00\x02\x00\x00\x00")
    bad = gda.array(pa.Array.from_buffers(pa.string(), 1, [None, offsets, pa.py_buffer(b"\xff\xfe")]))
    for look in (bad.to_pylist, lambda: bad[0], lambda: list(bad), lambda: bad == bad):
        with pytest.raises(gda.ArrowInvalid, match="invalid UTF-8"):
            look()
    assert repr(bad).endswith('<values not shown: ArrowInvalid: field of format "u": invalid UTF-8 in value 0>')
