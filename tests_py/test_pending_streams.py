"""Pending streams: a plain stream whose schema Go has read before stays in C,
unread, until Go is needed (docs/design.md, "Streams passed through"). Handed
on unread it never reaches Go; anything else moves it into Go first. Either
way it must behave exactly like a stream Go took at once: same arrays, same
errors, get_schema asked once, the producer released exactly once."""

from __future__ import annotations

import asyncio
import ctypes
from typing import Any

import godevarrow as gda
import pyarrow as pa
import pytest
from cabi import (
    GET_LAST_ERROR,
    GET_NEXT,
    GET_SCHEMA,
    STREAM_RELEASE,
    ArrowArrayStream,
    capsule_pointer,
    make_capsule,
)
from conftest import DeviceStreamOnly, live

CONSUMED = "already consumed"


class CountingStream:
    """A producer that forwards to pyarrow's C stream of `reader` and counts
    the get_schema and release calls it gets (its capsule has no destructor:
    whatever the consumer does not release would show in the counts)."""

    def __init__(self, reader: pa.RecordBatchReader) -> None:
        self._inner_capsule = reader.__arrow_c_stream__()
        inner = ArrowArrayStream.from_address(capsule_pointer(self._inner_capsule))
        self.inner = inner
        self.get_schema_calls = 0
        self.releases = 0

        def get_schema(_: Any, out: Any) -> int:
            self.get_schema_calls += 1
            return inner.get_schema(ctypes.byref(inner), out)

        def get_next(_: Any, out: Any) -> int:
            return inner.get_next(ctypes.byref(inner), out)

        def get_last_error(_: Any) -> Any:
            return inner.get_last_error(ctypes.byref(inner))

        def release(moved: Any) -> None:
            self.releases += 1
            moved.contents.release = STREAM_RELEASE()  # NULL: released (in the consumer's copy)
            inner.release(ctypes.byref(inner))

        self._callbacks = (GET_SCHEMA(get_schema), GET_NEXT(get_next), GET_LAST_ERROR(get_last_error))
        self._release = STREAM_RELEASE(release)
        self.struct = ArrowArrayStream()
        self.struct.get_schema, self.struct.get_next, self.struct.get_last_error = self._callbacks
        self.struct.release = self._release
        self.struct.private_data = None

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        return make_capsule(ctypes.addressof(self.struct), b"arrow_array_stream")


def batches() -> list[pa.RecordBatch]:
    return [pa.record_batch({"x": [1, 2]}), pa.record_batch({"x": [3]})]


def reader() -> pa.RecordBatchReader:
    b = batches()
    return pa.RecordBatchReader.from_batches(b[0].schema, b)


@pytest.fixture
def known_schema() -> None:
    """Go has read the batches' schema: streams of it start out pending."""
    gda.stream(reader()).read_all()


def test_a_known_schema_keeps_the_stream_out_of_go_until_handed_on(known_schema, leak_check):
    handles = live("handles")
    producer = CountingStream(reader())
    s = gda.stream(producer)
    assert producer.get_schema_calls == 1
    assert live("imported_streams") >= 1
    assert live("handles") == handles  # nothing of it is in Go
    out = pa.RecordBatchReader.from_stream(s)
    assert live("handles") == handles
    assert out.read_all().to_batches() == batches()
    assert producer.get_schema_calls == 2  # pyarrow asked the producer itself
    del out
    assert producer.releases == 1
    assert s.schema == gda.schema(batches()[0].schema)  # the schema stays answerable
    with pytest.raises(gda.GodevarrowError, match=CONSUMED):
        s.__arrow_c_stream__()
    with pytest.raises(gda.GodevarrowError, match=CONSUMED):
        next(s)
    s.close()  # closing a stream handed on does nothing
    del s
    assert producer.releases == 1


def test_an_unknown_schema_goes_to_go_at_once():
    gda.stream(reader()).read_all()  # not the schema below
    handles = live("handles")
    producer = CountingStream(pa.RecordBatchReader.from_batches(pa.schema([("never_seen_before_42", pa.int8())]), []))
    s = gda.stream(producer)
    assert live("handles") == handles + 1
    assert producer.get_schema_calls == 1  # Go reads the schema C asked for
    assert s.read_all() == []
    del s
    assert producer.releases == 1


def test_reading_a_pending_stream_moves_it_into_go(known_schema, leak_check):
    producer = CountingStream(reader())
    s = gda.stream(producer)
    assert isinstance(s, gda.ArrayStream)
    chunks = list(s)
    assert all(isinstance(c, gda.RecordBatch) for c in chunks)
    assert [pa.record_batch(c) for c in chunks] == batches()
    assert producer.get_schema_calls == 1  # Go was given the schema C had read
    del s, chunks
    assert producer.releases == 1


def test_the_schema_of_a_pending_stream_leaves_it_in_c(known_schema, leak_check):
    handles = live("handles")
    producer = CountingStream(reader())
    s = gda.stream(producer)
    assert s.schema == gda.schema(batches()[0].schema)
    assert s.device_type == gda.DeviceType.CPU
    assert "x: int64" in repr(s)
    schema = s.schema
    assert live("handles") == handles + 1  # the Schema alone
    assert pa.RecordBatchReader.from_stream(s).read_all().to_batches() == batches()
    del s, schema
    assert producer.releases == 1


def test_closing_a_pending_stream_releases_the_producer_once(known_schema, leak_check):
    base = live("imported_streams")
    producer = CountingStream(reader())
    s = gda.stream(producer)
    assert live("imported_streams") == base + 1
    s.close()
    assert producer.releases == 1
    assert live("imported_streams") == base
    s.close()  # idempotent
    with pytest.raises(gda.GodevarrowError, match=CONSUMED):
        next(s)
    with pytest.raises(gda.GodevarrowError, match=CONSUMED):
        s.__arrow_c_stream__()
    del s
    assert producer.releases == 1


def test_dropping_a_pending_stream_releases_the_producer_once(known_schema, leak_check):
    base = live("imported_streams")
    producer = CountingStream(reader())
    s = gda.stream(producer)
    del s
    assert producer.releases == 1
    assert live("imported_streams") == base


def test_a_second_export_after_the_first_says_consumed_either_way(known_schema):
    # the message is Go's, whether the stream left from C or from Go
    for prepare in (lambda s: None, lambda s: s.schema):
        s = gda.stream(reader())
        prepare(s)
        s.__arrow_c_stream__()
        with pytest.raises(gda.GodevarrowError, match=CONSUMED) as from_c:
            s.__arrow_c_stream__()
    s = gda.stream(reader())
    s.prefetch(1).close()  # moved into Go, then out
    with pytest.raises(gda.GodevarrowError, match=CONSUMED) as from_go:
        s.__arrow_c_stream__()
    assert type(from_c.value) is type(from_go.value)
    assert str(from_c.value) == str(from_go.value)


@pytest.mark.parametrize(
    ("export", "get_schema_calls"),
    [
        # the schema asked for is the stream's: Go hands the producer's
        # stream on unread, and pyarrow asks the producer for it too
        pytest.param(lambda s: pa.RecordBatchReader.from_stream(s, schema=batches()[0].schema), 2, id="requested"),
        pytest.param(lambda s: gda.stream(gda.stream(s).prefetch(2)), 1, id="prefetch"),
        pytest.param(lambda s: gda.stream(DeviceStreamOnly(s)), 1, id="device"),
    ],
)
def test_other_exports_move_the_stream_into_go_first(known_schema, leak_check, export, get_schema_calls):
    handles = live("handles")
    producer = CountingStream(reader())
    s = gda.stream(producer)
    out = export(s)
    assert live("handles") > handles
    assert pa.RecordBatchReader.from_stream(out).read_all().to_batches() == batches()
    assert producer.get_schema_calls == get_schema_calls
    del s, out
    assert producer.releases == 1


def test_async_iteration_of_a_pending_stream(known_schema, leak_check):
    producer = CountingStream(reader())

    async def read() -> list[Any]:
        return [pa.record_batch(c) async for c in gda.stream(producer)]

    assert asyncio.run(read()) == batches()
    assert producer.releases == 1
