"""What a user meets first with tables: pandas, the repr, == with other
libraries' objects, a Python producer's ValueError through a stream, and the
module functions on any protocol object."""

from __future__ import annotations

import datetime as dt
import errno
import sys

import godevarrow as gda
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
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


# -- pandas


def test_to_pandas_is_pyarrows_frame(leak_check):
    t = gda.table(TABLE)
    pd.testing.assert_frame_equal(t.to_pandas(), TABLE.to_pandas())
    batch = gda.record_batch(TABLE.to_batches()[0])
    pd.testing.assert_frame_equal(batch.to_pandas(), TABLE.to_batches()[0].to_pandas())
    # pyarrow's keywords pass through
    frame = t.to_pandas(types_mapper=pd.ArrowDtype)
    assert isinstance(frame["n"].dtype, pd.ArrowDtype)


@pytest.mark.skipif(not hasattr(pd.DataFrame, "from_arrow"), reason="DataFrame.from_arrow is new in pandas 3")
def test_pandas_reads_a_table_through_the_stream_protocol(leak_check):
    pd.testing.assert_frame_equal(pd.DataFrame.from_arrow(gda.table(TABLE)), TABLE.to_pandas())


def test_a_data_frame_of_a_table_names_both_ways(leak_check):
    with pytest.raises(gda.ArrowInvalid, match=r"use \.to_pandas\(\).* pandas\.DataFrame\.from_arrow\(\.\.\.\)"):
        pd.DataFrame(gda.table(TABLE))
    with pytest.raises(ValueError, match=r"a struct has no single numpy dtype.*to_pandas"):
        np.asarray(gda.record_batch(TABLE.to_batches()[0]))
    # numbers still go to numpy as before
    assert np.asarray(gda.array(pa.array([1, 2, 3]))).tolist() == [1, 2, 3]
    assert np.asarray(gda.chunked_array(pa.chunked_array([[1], [2, 3]]))).tolist() == [1, 2, 3]


def test_to_pandas_without_pandas_names_the_extra(monkeypatch, leak_check):
    t = gda.table(TABLE)
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now fails
    with pytest.raises(
        gda.MissingDependencyError, match=r"to_pandas\(\) needs pandas: pip install 'godevarrow\[pandas\]'"
    ):
        t.to_pandas()
    monkeypatch.undo()
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
