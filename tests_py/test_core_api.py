"""The Python API contract of ../shared/design/API.md."""

from __future__ import annotations

import godevarrow as gda
import pyarrow as pa
import pytest


def test_version():
    assert isinstance(gda.__version__, str) and gda.__version__.count(".") >= 2


def test_array_properties(leak_check):
    src = pa.array([1, None, 3, None, 5], pa.int32())
    g = gda.array(src)
    assert len(g) == 5 and g.null_count == 2 and g.offset == 0
    assert g.schema.format == "i"
    s = g.slice(1, 3)
    assert len(s) == 3 and s.offset == 1 and s.null_count == 2
    assert pa.array(s).to_pylist() == [None, 3, None]
    assert gda.slice(g, 4).to_pyarrow().to_pylist() == [5]
    assert pa.array(s).buffers()[1].address == src.buffers()[1].address  # zero-copy
    g.validate()
    gda.validate(g, full=False)
    assert "int32" in repr(g)
    with pytest.raises(ValueError, match="out of bounds"):
        g.slice(3, 10)
    del g, s


def test_record_batch_api(leak_check):
    batch = pa.record_batch({"a": [1, 2], "b": ["x", "y"]})
    g = gda.record_batch(batch)
    assert isinstance(g, gda.RecordBatch) and isinstance(g, gda.Array)
    assert (g.num_rows, g.num_columns, g.column_names) == (2, 2, ["a", "b"])
    assert pa.array(g.column(1)).to_pylist() == ["x", "y"]
    assert pa.array(g.column("a")).to_pylist() == [1, 2]
    assert pa.array(g.column(-1)).to_pylist() == ["x", "y"]
    assert [c.schema.name for c in g.columns] == ["a", "b"]
    assert isinstance(g.to_pyarrow(), pa.RecordBatch)
    assert gda.to_pyarrow(g).equals(batch)
    with pytest.raises(KeyError):
        g.column("zz")
    assert type(gda.array(batch)) is gda.Array  # a struct array stays an Array
    del g


def test_stream_api(leak_check):
    batch = pa.record_batch({"a": [1, 2]})
    reader = pa.RecordBatchReader.from_batches(batch.schema, [batch, batch, batch])
    with gda.stream(reader) as s:
        assert s.schema == gda.schema(batch.schema)
        assert s.device_type == gda.DeviceType.CPU
        first = next(iter(s))
        assert isinstance(first, gda.RecordBatch)
        rest = s.read_all()
        assert len(rest) == 2 and all(isinstance(b, gda.RecordBatch) for b in rest)
    one = gda.stream(gda.array(pa.array([1, 2, 3])))
    chunks = list(one)
    assert len(chunks) == 1 and type(chunks[0]) is gda.Array
    assert isinstance(gda.to_pyarrow(gda.stream(gda.record_batch(batch))), pa.RecordBatchReader)
    del first, rest, one, chunks


def test_array_stream_protocols_on_array(leak_check):
    g = gda.record_batch(pa.record_batch({"a": [1, 2]}))
    t = pa.RecordBatchReader.from_stream(g).read_all()
    assert t.num_rows == 2
    del g, t
