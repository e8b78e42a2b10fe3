"""ArrayStream's C base (capsule/stream_base.c): making the object, __iter__
and close run in C, and the attributes the Python methods share live there.
Whatever Python does to those attributes, a bad value is an exception, never
a crash."""

from __future__ import annotations

import gc
import weakref

import godevarrow as gda
import pyarrow as pa
import pytest
from conftest import live

BATCHES = [pa.record_batch({"x": [1, 2]}), pa.record_batch({"x": [3]})]


def reader() -> pa.RecordBatchReader:
    return pa.RecordBatchReader.from_batches(BATCHES[0].schema, BATCHES)


@pytest.mark.parametrize("bad", [3, None, object(), "godevarrow.stream"])
def test_an_array_stream_is_made_from_a_stream_handle_only(bad):
    with pytest.raises(gda.GodevarrowTypeError, match=r"made by godevarrow.stream\(\) and friends"):
        gda.ArrayStream(bad)


def test_an_array_handle_is_not_a_stream_handle():
    with pytest.raises(gda.GodevarrowTypeError, match="made by godevarrow.stream"):
        gda.ArrayStream(gda.array(pa.array([1]))._h)


def test_iterating_picks_the_class_without_asking_for_the_schema():
    s = gda.stream(reader())
    it = iter(s)
    assert s._info is None  # the class came from the C bookkeeping, not from Go's schema
    got = list(it)
    assert [type(b) for b in got] == [gda.RecordBatch, gda.RecordBatch]
    assert [b.to_pyarrow().to_pylist() for b in got] == [[{"x": 1}, {"x": 2}], [{"x": 3}]]
    plain = gda.stream(gda.array(pa.array([1, 2])))
    assert [type(a) for a in plain] == [gda.Array]


def test_iterating_after_the_schema_was_asked_uses_its_class():
    s = gda.stream(reader())
    assert s.schema.to_pyarrow() == BATCHES[0].schema
    assert s._info is not None
    assert [type(b) for b in s] == [gda.RecordBatch, gda.RecordBatch]


def test_a_stream_read_by_next_then_by_a_for_loop_loses_nothing():
    s = gda.stream(reader())
    first = next(s)
    assert first.to_pyarrow().to_pylist() == [{"x": 1}, {"x": 2}]
    assert [b.to_pyarrow().to_pylist() for b in s] == [[{"x": 3}]]


def test_close_is_idempotent_and_later_reads_say_why():
    base = live("imported_streams"), live("handles")
    s = gda.stream(reader())
    s.close()
    s.close()
    with gda.stream(reader()) as t:
        pass
    t.close()
    with pytest.raises(gda.GodevarrowError, match="already consumed"):
        list(s)
    del s, t
    assert (live("imported_streams"), live("handles")) == base


def test_deleted_or_replaced_attributes_raise_instead_of_crashing():
    s = gda.stream(reader())
    del s._h
    with pytest.raises(AttributeError, match="_h"):
        iter(s)
    with pytest.raises(AttributeError, match="_h"):
        s.close()
    t = gda.stream(reader())
    del t._info, t._wake  # read as "not asked yet" and "no wake pipe"
    assert len(list(t)) == 2
    t.close()
    u = gda.stream(reader())
    u._h = object()
    with pytest.raises(gda.GodevarrowTypeError):
        iter(u)
    with pytest.raises(gda.GodevarrowTypeError):
        u.close()
    with pytest.raises(TypeError):
        u._reads_ahead = "yes"


def test_a_stream_in_a_reference_cycle_is_collected_and_released():
    base = live("imported_streams"), live("handles")
    s = gda.stream(reader())
    s._wake = [s]  # a cycle through the C base's attributes
    gone = weakref.ref(s)
    del s
    gc.collect()
    assert gone() is None
    assert (live("imported_streams"), live("handles")) == base


def test_a_subclass_instance_keeps_its_own_attributes():
    class Tagged(gda.ArrayStream):  # type: ignore[type-arg]
        __slots__ = ("tag",)

    s = Tagged(gda.stream(reader())._h)
    s.tag = "mine"
    assert s.tag == "mine"
    assert len(list(s)) == 2
