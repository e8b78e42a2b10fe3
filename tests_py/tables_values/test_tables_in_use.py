"""What a user meets first with tables: pandas, the repr, == with other
libraries' objects, a Python producer's ValueError through a stream, and the
module functions on any protocol object."""

from __future__ import annotations

import datetime as dt
import errno
import sys
import textwrap
import types

import godevarrow as gda
import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from conftest import run_python
from godevarrow import _repr
from godevarrow._table import ChunkedArray

TABLE = pa.table(
    {
        "n": pa.array([1, None, 3], pa.int64()),
        "s": ["a", None, 'say "hi"'],
        "ok": [True, False, None],
        "at": pa.array([dt.datetime(2024, 5, 1, 12, 30), None, dt.datetime(1999, 12, 31)], pa.timestamp("us", "UTC")),
    }
)


# -- pandas (in child processes: this one hides pandas, see conftest.py)

PANDAS_SETUP = """
import datetime as dt
import numpy as np, pandas as pd, pyarrow as pa, godevarrow as gda
TABLE = pa.table(
    {
        "n": pa.array([1, None, 3], pa.int64()),
        "s": ["a", None, 'say "hi"'],
        "ok": [True, False, None],
        "at": pa.array([dt.datetime(2024, 5, 1, 12, 30), None, dt.datetime(1999, 12, 31)], pa.timestamp("us", "UTC")),
    }
)
"""


def run_with_pandas(code: str) -> None:
    proc = run_python(PANDAS_SETUP + textwrap.dedent(code) + "\nprint('done')\n")
    assert proc.returncode == 0 and proc.stdout.strip().endswith("done"), proc.stderr[-3000:]


def test_to_pandas_is_pyarrows_frame():
    run_with_pandas(
        """
        t = gda.table(TABLE)
        pd.testing.assert_frame_equal(t.to_pandas(), TABLE.to_pandas())
        batch = gda.record_batch(TABLE.to_batches()[0])
        pd.testing.assert_frame_equal(batch.to_pandas(), TABLE.to_batches()[0].to_pandas())
        # pyarrow's keywords pass through
        assert isinstance(t.to_pandas(types_mapper=pd.ArrowDtype)["n"].dtype, pd.ArrowDtype)
        # pandas 3 reads the stream protocol itself
        if hasattr(pd.DataFrame, "from_arrow"):
            pd.testing.assert_frame_equal(pd.DataFrame.from_arrow(t), TABLE.to_pandas())
        else:
            assert int(pd.__version__.split(".")[0]) < 3
        """
    )


def test_a_data_frame_of_a_table_names_both_ways():
    run_with_pandas(
        """
        try:
            pd.DataFrame(gda.table(TABLE))
        except gda.ArrowInvalid as e:
            assert "use .to_pandas()" in str(e) and "pandas.DataFrame.from_arrow(...)" in str(e), e
        else:
            raise AssertionError("pd.DataFrame(table) did not raise")
        """
    )
    with pytest.raises(ValueError, match=r"a struct has no single numpy dtype.*to_pandas"):
        np.asarray(gda.record_batch(TABLE.to_batches()[0]))
    # numbers still go to numpy as before
    assert np.asarray(gda.array(pa.array([1, 2, 3]))).tolist() == [1, 2, 3]
    assert np.asarray(gda.chunked_array(pa.chunked_array([[1], [2, 3]]))).tolist() == [1, 2, 3]


def test_to_pandas_without_pandas_names_the_extra(monkeypatch, leak_check):
    t = gda.table(TABLE)
    missing = r"to_pandas\(\) needs pandas: pip install 'godevarrow\[pandas\]'"
    with pytest.raises(gda.MissingDependencyError, match=missing):  # this process hides pandas
        t.to_pandas()
    # pandas there, pyarrow not: the pandas extra installs both, and is named
    monkeypatch.setitem(sys.modules, "pandas", types.ModuleType("pandas"))
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(gda.MissingDependencyError, match=r"needs pyarrow: pip install 'godevarrow\[pandas\]'"):
        t.to_pandas()


# -- repr


def test_a_tables_repr_is_schema_shape_device_and_column_previews(leak_check):
    text = repr(gda.table([TABLE.to_batches()[0], TABLE.to_batches()[0]]))
    lines = text.splitlines()
    assert lines[0] == "godevarrow.Table: 6 rows × 4 columns, 2 chunks, on cpu"
    assert lines[1:6] == ["n: int64", "s: utf8", "ok: bool", "at: timestamp[us, tz=UTC]", "----"]
    assert lines[6] == "n: [1, null, 3, 1, null, 3]"
    assert lines[7] == 's: ["a", null, "say \\"hi\\"", "a", null, "say \\"hi\\""]'
    assert lines[8] == "ok: [true, false, null, true, false, null]"
    assert lines[9].startswith("at: [2024-05-01 12:30:00Z, null, 1999-12-31 00:00:00Z, ")


def test_a_batch_and_a_chunked_array_read_alike(leak_check):
    batch = repr(gda.record_batch(TABLE.to_batches()[0]))
    assert batch.startswith("godevarrow.RecordBatch: 3 rows × 4 columns, on cpu\nn: int64\n")
    assert "\nn: [1, null, 3]\n" in batch
    floats = repr(gda.chunked_array(pa.chunked_array([[1.5, None], [2.0]])))
    assert floats == "godevarrow.ChunkedArray<float64>: 3 values, 2 chunks, on cpu\n[1.5, null, 2.0]"
    binary = repr(gda.chunked_array(pa.chunked_array([[b"x", None]], pa.binary())))
    assert binary.endswith("\n[78, null]")  # bytes in hex, as pyarrow prints them


def test_long_data_shows_its_ends_and_reads_only_them(monkeypatch, leak_check):
    n = 1_000_000
    t = gda.table(pa.table({"i": np.arange(n), "f": np.arange(n) / 7, "s": pa.array(["v"] * n)}))
    read = []
    original = ChunkedArray._values

    def counting(self, start, count):
        read.append(count)
        return original(self, start, count)

    monkeypatch.setattr(ChunkedArray, "_values", counting)
    text = repr(t)
    assert "\ni: [0, 1, 2, 3, 4, ..., 999995, 999996, 999997, 999998, 999999]\n" in text
    assert sum(read) <= 3 * 2 * _repr.PREVIEW_EDGE  # the preview's values, not a million
    # lines are width-bounded, and values are not cut to fit: fewer are shown
    assert all(len(line) <= _repr.WIDTH for line in text.splitlines())
    f_line = text.split("\n----\n")[1].splitlines()[1]
    assert ", ..., " in f_line and f_line.endswith("]")


def test_wide_tables_and_long_values_stay_within_the_width(leak_check):
    wide = gda.table(pa.table({f"c{i}": [i] for i in range(30)}))
    text = repr(wide)
    assert "... and 10 more columns" in text and "c19: [19]" in text and "c20: [20]" not in text
    long = repr(gda.table(pa.table({"s": ["x" * 500, "y"]})))
    assert all(len(line) <= _repr.WIDTH for line in long.splitlines())
    assert '"xxxxxxxx' in long and '..., "y"]' in long


def test_a_repr_of_invalid_data_says_why_without_raising(leak_check):
    bad = pa.Array.from_buffers(pa.utf8(), 1, [None, pa.py_buffer(np.array([0, 1], np.int32)), pa.py_buffer(b"\xff")])
    text = repr(gda.table(pa.table({"s": bad})))
    assert text.endswith('\n----\n<values not shown: ArrowInvalid: field "s" (format "u"): invalid UTF-8 in value 0>')


# -- == and equals


def test_equality_agrees_with_equals_for_pyarrow_operands(leak_check):
    t = gda.table(TABLE)
    assert t.equals(TABLE) and t == TABLE and TABLE == t and not (t != TABLE)
    other = TABLE.set_column(0, "n", pa.array([1, 2, 3]))
    assert not t.equals(other) and t != other
    batch = TABLE.to_batches()[0]
    assert gda.record_batch(batch) == batch  # (pyarrow's RecordBatch.__eq__ answers False itself when on the left)
    arr = pa.array([1.5, None])
    assert gda.array(arr) == arr and gda.chunked_array(arr) == pa.chunked_array([arr])
    assert gda.array(arr) != pa.array([1.5, 2.0])
    assert gda.array(pa.array([1, 2])) != TABLE  # a table is no array: not equal, no error


def test_equality_does_not_consume_a_one_shot_stream(leak_check):
    t = gda.table(TABLE)
    reader = pa.RecordBatchReader.from_batches(TABLE.schema, TABLE.to_batches())
    assert t != reader
    assert reader.read_all().equals(TABLE)  # still all there


def test_equals_across_chunkings_types_and_nans(leak_check):
    left = gda.chunked_array(pa.chunked_array([[1.0, 2.0], [float("nan")]]))
    assert not left.equals(left)  # a NaN equals nothing, as in pyarrow
    assert gda.chunked_array(pa.chunked_array([[0.0]])) == pa.chunked_array([[-0.0]])
    a = pa.table({"s": ["ab", "c", "def"], "b": [True, False, True], "i": [1, 2, 3]})
    b = pa.concat_tables([a.slice(0, 1), a.slice(1)])
    assert gda.table(a) == b and gda.table(b) == a
    assert gda.table(a).slice(1) == a.slice(1) and gda.table(a).slice(1) != a.slice(0, 2)
    changed = pa.table({"s": ["ab", "c", "deg"], "b": [True, False, True], "i": [1, 2, 3]})
    assert gda.table(a) != changed
    flipped = pa.table({"s": ["ab", "c", "def"], "b": [True, True, True], "i": [1, 2, 3]})
    assert gda.table(a).slice(1) != flipped.slice(1)
    assert gda.table(a) != a.cast(pa.schema([("s", pa.large_utf8()), ("b", pa.bool_()), ("i", pa.int64())]))


# -- a Python producer's error through a stream


def _failing(exc: Exception):
    def batches():
        yield pa.record_batch({"x": [1]})
        raise exc

    return pa.RecordBatchReader.from_batches(pa.schema({"x": pa.int64()}), batches())


def test_a_producers_value_error_is_a_stream_error_and_a_value_error(leak_check):
    with pytest.raises(ValueError, match="bad value in row 7") as info:
        for _ in gda.stream(_failing(ValueError("bad value in row 7"))):
            pass
    assert isinstance(info.value, gda.StreamError) and isinstance(info.value, gda.ArrowInvalid)
    assert type(info.value) is gda.StreamInvalid and info.value.errno == errno.EINVAL


def test_a_producers_io_error_stays_an_os_error_only(leak_check):
    with pytest.raises(gda.StreamError, match="disk gone") as info:
        for _ in gda.stream(_failing(OSError("disk gone"))):
            pass
    assert not isinstance(info.value, ValueError) and info.value.errno != errno.EINVAL


# -- module functions on any protocol object


def test_slice_and_validate_take_any_protocol_object(leak_check):
    part = gda.slice(TABLE, 1)
    assert isinstance(part, gda.Table) and part == TABLE.slice(1)
    assert isinstance(gda.slice(pl.DataFrame({"a": [1, 2, 3]}), 2), gda.Table)
    arr = gda.slice(pa.array([1, 2, 3]), 1, 1)
    assert type(arr) is gda.Array and arr.to_pylist() == [2]
    assert type(gda.slice(TABLE.to_batches()[0], 1)) is gda.RecordBatch
    assert type(gda.slice(pa.chunked_array([[1], [2]]), 1)) is gda.ChunkedArray
    gda.validate(TABLE)
    gda.validate(pa.array(["x"]))
    bad = pa.Array.from_buffers(pa.utf8(), 1, [None, pa.py_buffer(np.array([0, 1], np.int32)), pa.py_buffer(b"\xff")])
    with pytest.raises(gda.ArrowInvalid, match="invalid UTF-8 in value 0"):
        gda.validate(bad)
    with pytest.raises(gda.GodevarrowTypeError, match="from an object of type int: it implements none of"):
        gda.validate(3)


def _with_null_slots(type_: pa.DataType, values: list, valid: np.ndarray, filler) -> pa.Array:
    """An array of values where valid, whose null slots hold filler (not
    zeros): equality must not look at them."""
    shown = [v if ok else filler for v, ok in zip(values, valid)]
    base = pa.array(shown, type_)
    bitmap = pa.array(valid.tolist(), pa.bool_()).buffers()[1]
    return pa.Array.from_buffers(type_, len(values), [bitmap, *base.buffers()[1:]], null_count=int((~valid).sum()))


EQUALITY_CASES = {
    "int8": (pa.int8(), lambda r, n: r.integers(-100, 100, n).tolist(), 7),
    "uint16": (pa.uint16(), lambda r, n: r.integers(0, 60000, n).tolist(), 9),
    "int64": (pa.int64(), lambda r, n: r.integers(-(2**60), 2**60, n).tolist(), -1),
    "float32": (pa.float32(), lambda r, n: r.choice([0.0, -0.0, 1.5, float("nan"), 2.25], n).tolist(), 3.5),
    "float64": (pa.float64(), lambda r, n: r.choice([0.0, -0.0, 1.5, float("nan"), -7.0], n).tolist(), 9.0),
    "utf8": (pa.utf8(), lambda r, n: [str(x) * int(x % 3) for x in r.integers(0, 50, n)], "filler"),
    "large_binary": (pa.large_binary(), lambda r, n: [bytes([x]) * int(x % 4) for x in r.integers(0, 9, n)], b"zz"),
    "bool": (pa.bool_(), lambda r, n: (r.random(n) < 0.5).tolist(), True),
    "timestamp": (pa.timestamp("us"), lambda r, n: r.integers(0, 10**15, n).tolist(), 5),
    "decimal": (
        pa.decimal128(12, 2),
        lambda r, n: [__import__("decimal").Decimal(int(x)) / 100 for x in r.integers(-(10**9), 10**9, n)],
        0,
    ),
    "fixed_size_binary": (pa.binary(3), lambda r, n: [bytes([x % 256, 1, 2]) for x in r.integers(0, 256, n)], b"zzz"),
}


@pytest.mark.parametrize("kind", sorted(EQUALITY_CASES))
def test_equals_agrees_with_pyarrow_on_random_data(kind, leak_check):
    # the buffer comparisons Go makes for speed, against pyarrow's own
    # equals: nulls, what null slots hold, NaN and -0.0, slices at any bit
    # offset, one changed value or validity bit anywhere
    type_, values_of, filler = EQUALITY_CASES[kind]
    rng = np.random.default_rng(sorted(EQUALITY_CASES).index(kind))
    for trial in range(40):
        n = int(rng.integers(1, 200))
        values = values_of(rng, n)
        valid = rng.random(n) > (0.3 if trial % 2 else 0.0)
        a = _with_null_slots(type_, values, valid, values[0] if trial % 4 < 2 else filler)
        b = _with_null_slots(type_, values, valid, filler)
        change = trial % 3
        if change == 1:  # one value, at a valid slot or not
            i = int(rng.integers(0, n))
            other = values_of(rng, 1)[0]
            b = _with_null_slots(type_, values[:i] + [other] + values[i + 1 :], valid, filler)
        elif change == 2:  # one validity bit
            flipped = valid.copy()
            flipped[int(rng.integers(0, n))] ^= True
            b = _with_null_slots(type_, values, flipped, filler)
        start, stop = int(rng.integers(0, n)), n
        other_start = int(rng.integers(0, 8))
        # b's slice starts at another offset: the same values padded in front
        pad = pa.concat_arrays([a.slice(0, other_start), b]) if other_start else b
        pairs = [(a, b), (a.slice(start, stop - start), pad.slice(other_start + start, stop - start))]
        for x, y in pairs:
            want = x.equals(y)
            assert gda.array(x).equals(gda.array(y)) is want, (kind, trial, x, y)
            assert (
                gda.chunked_array(x).equals(pa.chunked_array([y.slice(0, len(y) // 2), y.slice(len(y) // 2)])) is want
            )
