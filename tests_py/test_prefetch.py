"""Reading streams ahead (ArrayStream.prefetch) and asyncio iteration."""

from __future__ import annotations

import asyncio
import gc
import os
import threading
import time

import godevarrow as gda
import pyarrow as pa
import pytest

SCHEMA = pa.schema([("x", pa.int64())])


class Producer:
    """A pyarrow RecordBatchReader over a Python generator that can be slow,
    fail at batch k, and counts what it produced."""

    def __init__(self, n: int, delay: float = 0.0, fail_at: int | None = None) -> None:
        self.n, self.delay, self.fail_at = n, delay, fail_at
        self.produced = 0
        self.finished = threading.Event()

    def batches(self):
        try:
            for i in range(self.n):
                if self.delay:
                    time.sleep(self.delay)
                if i == self.fail_at:
                    raise ValueError(f"producer failed at batch {i}")
                self.produced += 1
                yield pa.record_batch({"x": [i]}, schema=SCHEMA)
        finally:
            self.finished.set()

    def reader(self) -> pa.RecordBatchReader:
        return pa.RecordBatchReader.from_batches(SCHEMA, self.batches())


def values(batches) -> list[int]:
    return [b.to_pyarrow().column(0)[0].as_py() for b in batches]


def consume(stream, delay: float) -> float:
    start = time.perf_counter()
    for _ in stream:
        time.sleep(delay)
    return time.perf_counter() - start


def test_prefetch_overlaps_a_slow_producer_and_a_slow_consumer(leak_check):
    n, delay = 12, 0.02
    plain = consume(gda.stream(Producer(n, delay).reader()), delay)
    ahead = consume(gda.stream(Producer(n, delay).reader()).prefetch(4), delay)
    # alone, each side needs n*delay; in sequence 2*n*delay, overlapped ~(n+1)*delay
    assert ahead / plain < 0.8, f"prefetching took {ahead:.3f}s, reading in turn {plain:.3f}s"


def test_an_error_arrives_after_the_batches_before_it(leak_check):
    s = gda.stream(Producer(10, fail_at=4).reader()).prefetch(3)
    got = []
    with pytest.raises(gda.StreamError, match="producer failed at batch 4") as info:
        for b in s:
            got.append(values([b])[0])
    assert got == [0, 1, 2, 3]
    assert isinstance(info.value, gda.GodevarrowError)
    with pytest.raises(gda.ArrowInvalid, match="ended with an error.*batch 4"):  # reported once, then the end
        next(s)
    del info, s


@pytest.mark.parametrize("depth", [1, 2, 16])
def test_prefetched_streams_deliver_everything_in_order(depth, leak_check):
    s = gda.stream(Producer(25).reader()).prefetch(depth)
    assert s.schema == gda.schema(SCHEMA)
    assert values(s) == list(range(25))
    with pytest.raises(StopIteration):
        next(s)


def test_closing_stops_reading_ahead(leak_check):
    p = Producer(1000, delay=0.002)
    s = gda.stream(p.reader()).prefetch(2)
    next(s)
    s.close()
    assert p.finished.wait(5), "the producer's stream was released"
    produced = p.produced
    time.sleep(0.05)
    assert p.produced == produced <= 1 + 2 + 2, "nothing is read after close (depth 2, one in flight)"
    with pytest.raises(gda.GodevarrowError, match="consumed|closed"):
        next(s)


def test_dropping_a_prefetched_stream_releases_the_producer(leak_check):
    p = Producer(1000, delay=0.002)
    s = gda.stream(p.reader()).prefetch(2)
    next(s)
    del s
    gc.collect()
    assert p.finished.wait(5)


def test_a_prefetched_stream_exports_like_any_other(leak_check):
    s = gda.stream(Producer(7).reader()).prefetch(2)
    table = pa.RecordBatchReader.from_stream(s).read_all()
    assert table.column(0).to_pylist() == list(range(7))
    with pytest.raises(gda.GodevarrowError, match="consumed"):
        s.prefetch()


def test_prefetch_arguments(leak_check):
    with pytest.raises(ValueError, match="at least 1"):
        gda.stream(Producer(1).reader()).prefetch(0)
    with pytest.raises(TypeError):
        gda.stream(Producer(1).reader()).prefetch(2.5)  # type: ignore[arg-type]


def test_async_iteration(leak_check):
    async def main():
        out = []
        async with gda.stream(Producer(6, delay=0.001).reader()).prefetch(2) as s:
            async for b in s:
                out.append(values([b])[0])
        return out

    assert asyncio.run(main()) == list(range(6))


def test_async_iteration_lets_the_event_loop_run(leak_check):
    """While a slow producer is read, other coroutines make progress."""

    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.005)
                ticks += 1

        t = asyncio.create_task(ticker())
        got = [b async for b in gda.stream(Producer(5, delay=0.03).reader())]
        t.cancel()
        return len(got), ticks

    n, ticks = asyncio.run(main())
    assert n == 5 and ticks >= 5, f"the event loop ticked {ticks} times during 150 ms of reading"


def test_async_errors_arrive_in_order(leak_check):
    async def main():
        got = []
        s = gda.stream(Producer(5, fail_at=2).reader()).prefetch(2)
        try:
            async for b in s:
                got.append(values([b])[0])
        except gda.StreamError as e:
            return got, str(e)
        finally:
            await s.aclose()
        return got, ""

    got, message = asyncio.run(main())
    assert got == [0, 1] and "batch 2" in message


def test_async_iteration_needs_no_worker_thread(leak_check, monkeypatch):
    """``async for`` takes arrays from the read-ahead queue with the GIL held and
    waits on a pipe the event loop watches: no thread of the loop's pool."""

    def no_threads(*args, **kwargs):
        raise AssertionError("async iteration used asyncio.to_thread")

    monkeypatch.setattr(asyncio, "to_thread", no_threads)

    async def main():
        return [values([b])[0] async for b in gda.stream(Producer(50).reader())]

    assert asyncio.run(main()) == list(range(50))


def test_async_streams_are_read_concurrently(leak_check):
    """Four streams whose producers each wait for all four to be inside a
    read: only reads that overlap can get past the barrier (each producer
    gives up after 10 s, which fails the test)."""
    barrier = threading.Barrier(4, timeout=10)

    def batches():
        for i in range(3):
            barrier.wait()
            yield pa.record_batch({"x": [i]})

    async def read_one():
        reader = pa.RecordBatchReader.from_batches(SCHEMA, batches())
        return [values([b])[0] async for b in gda.stream(reader)]

    async def main():
        return await asyncio.gather(*(read_one() for _ in range(4)))

    assert asyncio.run(main()) == [[0, 1, 2]] * 4


def test_a_cancelled_anext_loses_nothing(leak_check):
    async def main():
        s = gda.stream(Producer(4, delay=0.05).reader())
        first = await s.__anext__()
        task = asyncio.ensure_future(s.__anext__())
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        rest = [b async for b in s]
        await s.aclose()
        return values([first] + rest)

    assert asyncio.run(main()) == [0, 1, 2, 3]


def test_sync_reads_go_on_after_async_ones(leak_check):
    async def two(s):
        return [await s.__anext__(), await s.__anext__()]

    s = gda.stream(Producer(5).reader())
    first = asyncio.run(two(s))
    rest = list(s)
    assert values(first + rest) == list(range(5))
    s.close()


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_aclose_while_another_task_waits_ends_the_wait(leak_check):
    """A stream closed while another task awaits its next array: the waiting
    task is woken (it gets the array whose read the close waited for, or is
    told the stream was consumed, depending on which thread comes first;
    never a hang), and the wake pipe is closed once nobody waits on it."""

    async def main():
        s = gda.stream(Producer(4, delay=0.3).reader())
        fds = open_fds()
        waiting = asyncio.ensure_future(s.__anext__())
        await asyncio.sleep(0.05)
        assert open_fds() == fds + 2  # the wake pipe
        await s.aclose()
        try:
            got = await asyncio.wait_for(waiting, 10)
        except gda.ArrowInvalid as e:
            assert "consumed" in str(e)
        else:
            assert values([got]) == [0]
            del got
        with pytest.raises(gda.ArrowInvalid, match="consumed"):
            await s.__anext__()
        assert open_fds() == fds

    asyncio.run(main())


def test_the_wake_pipe_of_a_dropped_stream_is_closed(leak_check):
    async def main():
        fds = open_fds()
        s = gda.stream(Producer(3, delay=0.01).reader())
        got = [values([b])[0] async for b in s]
        del s
        gc.collect()
        return got, open_fds() - fds

    got, extra = asyncio.run(main())
    assert got == [0, 1, 2] and extra == 0
