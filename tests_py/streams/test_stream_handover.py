"""Streams handed on: an imported stream exported unread and unchanged is the
producer's own stream (docs/design.md, "A stream's life"), so its consumer
talks to the producer directly. Every path must behave like a stream read by
godevarrow: same arrays, same errors, get_schema asked once by us, the
producer released exactly once."""

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


def test_a_stream_handed_on_unread_is_the_producers_own(leak_check):
    handles = live("handles")
    producer = CountingStream(reader())
    s = gda.stream(producer)
    assert producer.get_schema_calls == 1
    assert live("handles") == handles + 1  # the stream's
    out = pa.RecordBatchReader.from_stream(s)
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


def test_reading_a_stream_asks_its_schema_once(leak_check):
    producer = CountingStream(reader())
    s = gda.stream(producer)
    chunks = list(s)
    assert all(isinstance(c, gda.RecordBatch) for c in chunks)
    assert [pa.record_batch(c) for c in chunks] == batches()
    assert producer.get_schema_calls == 1
    del s, chunks
    assert producer.releases == 1


def test_the_schema_of_a_stream_leaves_it_unread(leak_check):
    handles = live("handles")
    producer = CountingStream(reader())
    s = gda.stream(producer)
    assert s.schema == gda.schema(batches()[0].schema)
    assert s.device_type == gda.DeviceType.CPU
    assert "x: int64" in repr(s)
    schema = s.schema
    assert live("handles") == handles + 2  # the stream and its Schema
    assert pa.RecordBatchReader.from_stream(s).read_all().to_batches() == batches()
    assert producer.get_schema_calls == 2  # ours, then pyarrow's: the stream went on unread
    del s, schema
    assert producer.releases == 1


def test_closing_a_stream_releases_the_producer_once(leak_check):
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


def test_dropping_a_stream_releases_the_producer_once(leak_check):
    base = live("imported_streams")
    producer = CountingStream(reader())
    s = gda.stream(producer)
    del s
    assert producer.releases == 1
    assert live("imported_streams") == base


def test_a_second_export_says_consumed_whatever_moved_the_stream():
    messages = set()
    for move in (lambda s: s.__arrow_c_stream__(), lambda s: s.prefetch(1).close(), lambda s: s.close()):
        s = gda.stream(reader())
        move(s)
        with pytest.raises(gda.GodevarrowError, match=CONSUMED) as second:
            s.__arrow_c_stream__()
        messages.add((type(second.value), str(second.value)))
    assert len(messages) == 1


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
def test_other_exports_read_through_go(leak_check, export, get_schema_calls):
    producer = CountingStream(reader())
    s = gda.stream(producer)
    out = export(s)
    assert pa.RecordBatchReader.from_stream(out).read_all().to_batches() == batches()
    assert producer.get_schema_calls == get_schema_calls
    del s, out
    assert producer.releases == 1


def test_async_iteration_releases_the_producer_once(leak_check):
    producer = CountingStream(reader())

    async def read() -> list[Any]:
        return [pa.record_batch(c) async for c in gda.stream(producer)]

    assert asyncio.run(read()) == batches()
    assert producer.releases == 1
