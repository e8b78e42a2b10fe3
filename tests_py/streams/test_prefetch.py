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


# A hang guard, not a time limit: a handshake that waits this long failed.
HANG = 30

# A read that waits this long (more than the 50 µs of ArrayStream.prefetch),
# three times in a row, moves a prefetched stream to its read-ahead.
SLOW_READ = 0.005


def hold_each_batch(depth: int | None, n: int, wait: float) -> list[bool]:
    """Reads a stream of n batches from a producer that makes batch k+1 only
    once the consumer holds batch k; while it holds batch k the consumer waits
    (at most ``wait`` s) for batch k+1 to be made. Returns, for each k < n-1,
    whether it was: only a stream that reads ahead (``depth``; None: a plain
    stream) while the consumer works makes it."""
    holding = [threading.Event() for _ in range(n)]
    made = [threading.Event() for _ in range(n)]

    def batches():
        # three reads in a row that wait (without the GIL): a prefetched stream
        # reads ahead from then on (in the consumer's thread while reads are fast)
        for _ in range(3):
            time.sleep(SLOW_READ)
            yield pa.record_batch({"x": [-1]}, schema=SCHEMA)
        for k in range(n):
            if k and not holding[k - 1].wait(HANG):
                raise TimeoutError(f"the consumer never held batch {k - 1}")
            made[k].set()
            yield pa.record_batch({"x": [k]}, schema=SCHEMA)

    stream = gda.stream(pa.RecordBatchReader.from_batches(SCHEMA, batches()))
    if depth is not None:
        stream = stream.prefetch(depth)
    assert values([next(stream), next(stream), next(stream)]) == [-1, -1, -1]
    overlapped, got = [], []
    for k, b in enumerate(stream):
        got.append(values([b])[0])
        holding[k].set()
        if k + 1 < n:
            overlapped.append(made[k + 1].wait(wait))
        del b
    assert got == list(range(n))
    return overlapped


def test_prefetch_overlaps_a_slow_producer_and_a_slow_consumer(leak_check):
    """The producer makes batch k+1 while the consumer still holds batch k."""
    assert hold_each_batch(4, 6, HANG) == [True] * 5


def test_a_stream_that_does_not_read_ahead_fails_the_overlap_check(leak_check):
    """The control of the test above: read in turn, batch k+1 is made only
    when the consumer asks for it, so each wait (here 0.5 s) runs out."""
    assert hold_each_batch(None, 3, 0.5) == [False, False]


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
    p = Producer(1000)
    s = gda.stream(p.reader()).prefetch(2)
    next(s)
    s.close()
    at_close = p.produced
    assert p.finished.wait(HANG), "the producer's stream was not released"
    # the generator's finally ran, so nothing more can be made: after close
    # returned only the read then in flight could finish, and all that was
    # made is bounded by the read-ahead (1 read, depth 2, one in flight)
    assert p.produced - at_close <= 1, (at_close, p.produced)
    assert 1 <= p.produced <= 1 + 2 + 2, p.produced
    with pytest.raises(gda.GodevarrowError, match="consumed|closed"):
        next(s)


def test_dropping_a_prefetched_stream_releases_the_producer(leak_check):
    p = Producer(1000, delay=0.002)
    s = gda.stream(p.reader()).prefetch(2)
    next(s)
    del s
    gc.collect()
    assert p.finished.wait(60)


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
    """While a read waits on its producer, other coroutines run: each batch
    is made only once a coroutine, told that the producer waits, lets it go
    (a loop blocked by the read would leave the producer waiting: it gives
    up after HANG s, which fails the test)."""
    read_a_producer_that_waits_for_the_loop(n=5, work_s=0.0)


def test_async_iteration_lets_the_event_loop_run_while_a_producer_works_and_waits(leak_check):
    """The same with a producer that works (1.5 ms of CPU, under the 2 ms
    that count as slow) before it waits for the coroutine: its first read,
    made by a probe while the loop waits for it, spends over half its time
    working, which the measure of a blocked read calls fast; but it came
    only once the loop gave up waiting, so it is not read in the loop's
    thread (which would wait for a coroutine that cannot run until the read
    ends). Three streams: whether the measure calls such a read fast hangs
    on how the GIL changes hands (before the fix, 2 streams in 3 left the
    loop stuck)."""
    for _ in range(3):
        read_a_producer_that_waits_for_the_loop(n=8, work_s=0.0015)


def read_a_producer_that_waits_for_the_loop(n: int, work_s: float) -> None:
    """Reads with `async for` a producer that, before each of its n batches,
    works work_s of its thread's CPU time, then tells a coroutine that it
    waits and waits for it; no read may run in the loop's thread."""
    go_on = [threading.Event() for _ in range(n)]
    readers: list[int] = []

    def work() -> None:
        end = time.thread_time() + work_s
        while time.thread_time() < end:
            pass

    async def main():
        loop = asyncio.get_running_loop()
        waiting: asyncio.Queue[int] = asyncio.Queue()

        def batches():
            for k in range(n):
                work()
                loop.call_soon_threadsafe(waiting.put_nowait, k)
                if not go_on[k].wait(HANG):
                    raise TimeoutError(f"no coroutine ran while batch {k} was read")
                readers.append(threading.get_ident())
                yield pa.record_batch({"x": [k]}, schema=SCHEMA)

        async def let_go():
            for _ in range(n):
                go_on[await waiting.get()].set()

        helper = asyncio.ensure_future(let_go())
        s = gda.stream(pa.RecordBatchReader.from_batches(SCHEMA, batches()))
        got = [values([b])[0] async for b in s]
        await helper
        await s.aclose()
        return got

    assert asyncio.run(main()) == list(range(n))
    assert threading.get_ident() not in readers  # asyncio.run's loop runs in this thread


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
    """A read ahead cancelled while its producer works: the batch it was
    reading comes with the next ``__anext__``. Batch 0 waits (a sleep), so the
    stream reads ahead from then on; batch 1 is made only after the cancel,
    so its read is still in progress when it is cancelled."""
    inside, go_on = threading.Event(), threading.Event()

    def batches():
        for k in range(4):
            if k == 0:
                time.sleep(SLOW_READ)
            if k == 1:
                inside.set()
                if not go_on.wait(HANG):
                    raise TimeoutError("the test never let batch 1 go")
            yield pa.record_batch({"x": [k]}, schema=SCHEMA)

    async def main():
        loop = asyncio.get_running_loop()
        s = gda.stream(pa.RecordBatchReader.from_batches(SCHEMA, batches()))
        first = await s.__anext__()
        task = asyncio.ensure_future(s.__anext__())
        assert await loop.run_in_executor(None, inside.wait, HANG), "the read of batch 1 never began"
        task.cancel()
        go_on.set()
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
        # Go's runtime opens its poller's descriptors at its first timer,
        # which a read-ahead's wait sets: have them open before counting
        assert values([b async for b in gda.stream(Producer(1).reader())]) == [0]
        s = gda.stream(Producer(4, delay=0.3).reader())
        fds = open_fds()
        waiting = asyncio.ensure_future(s.__anext__())
        await asyncio.sleep(0.05)
        assert open_fds() == fds + 2  # the wake pipe
        await s.aclose()
        try:
            got = await asyncio.wait_for(waiting, 60)
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


def slow_stream(n: int) -> gda.ArrayStream:
    """A stream whose every read waits without the GIL (a sleep), so that an
    ``async for`` reads it ahead and waits on the wake pipe for each batch."""
    return gda.stream(Producer(n, delay=SLOW_READ).reader())


def watched_fd(stream: gda.ArrayStream, loop: asyncio.AbstractEventLoop) -> bool:
    """Whether the stream's wake pipe has its reader callback on loop."""
    pipe = stream._wake
    if pipe is None or pipe.read_fd < 0:
        return False
    try:
        loop._selector.get_key(pipe.read_fd)  # type: ignore[attr-defined]
    except KeyError:
        return False
    return True


def test_the_wake_callback_stays_on_the_loop_from_one_wait_to_the_next(leak_check):
    """An ``async for`` over a stream that waits for every batch puts the
    pipe's reader callback on the loop once, not once per wait; it comes off
    at the loop's next pass after the last wait."""

    async def main():
        loop = asyncio.get_running_loop()
        added = []
        add_reader = loop.add_reader

        def counting_add_reader(fd, callback, *args):
            added.append(fd)
            return add_reader(fd, callback, *args)

        loop.add_reader = counting_add_reader  # type: ignore[method-assign]
        s = slow_stream(6)
        got = [values([b])[0] async for b in s]
        on_after_loop = watched_fd(s, loop)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        on_after_a_pass = watched_fd(s, loop)
        s.close()
        return got, len(added), on_after_loop, on_after_a_pass

    got, added, on_after_loop, on_after_a_pass = asyncio.run(main())
    assert got == list(range(6))
    assert added == 1
    assert on_after_loop and not on_after_a_pass


def test_a_stream_read_in_one_event_loop_then_another(leak_check):
    """The reader callback left on a loop that stopped before its next pass
    comes off when another loop reads the stream."""
    s = slow_stream(6)

    async def two():
        return [await s.__anext__(), await s.__anext__()]

    async def two_then_stop():
        got = await two()
        asyncio.get_running_loop().stop()  # before the pass that takes the callback off
        return got

    first = asyncio.new_event_loop()
    second = asyncio.new_event_loop()
    try:
        task = first.create_task(two_then_stop())
        first.run_forever()
        got = task.result()
        assert watched_fd(s, first)
        got += second.run_until_complete(two())
        assert not watched_fd(s, first)
        got += asyncio.run(two())  # a third, after the second closed
        assert values(got) == list(range(6))
    finally:
        s.close()
        first.close()
        second.close()


def test_a_stream_awaited_in_a_loop_that_runs_elsewhere_is_refused(leak_check):
    """While a task of a loop on another thread waits for a stream's next
    array, a second loop's wait on it is refused (one pipe, one loop)."""
    release = threading.Event()

    def batches():
        time.sleep(SLOW_READ)  # the first read blocks: the stream reads ahead
        yield pa.record_batch({"x": [0]}, schema=SCHEMA)
        if not release.wait(HANG):
            raise TimeoutError("the test never released batch 1")
        yield pa.record_batch({"x": [1]}, schema=SCHEMA)

    s = gda.stream(pa.RecordBatchReader.from_batches(SCHEMA, batches()))
    waiting = threading.Event()
    got = []

    async def wait_elsewhere():
        got.append(await s.__anext__())
        waiting.set()
        got.append(await s.__anext__())  # waits on the pipe until release

    t = threading.Thread(target=asyncio.run, args=(wait_elsewhere(),))
    t.start()
    try:
        assert waiting.wait(HANG)
        deadline = time.monotonic() + HANG
        while not (s._wake is not None and s._wake.waiters):
            assert time.monotonic() < deadline, "the other loop never waited on the pipe"
            time.sleep(0.001)

        async def other():
            return await s.__anext__()

        with pytest.raises(gda.GodevarrowError, match="another event loop"):
            asyncio.run(other())
    finally:
        release.set()
        t.join(HANG)
    assert values(got) == [0, 1]
    s.close()


def test_a_stream_closed_on_another_thread_closes_its_pipe_from_the_loop(leak_check):
    """close() on another thread while the reader callback is on a running
    loop: the pipe is closed on the loop's thread, after the callback came
    off (closing it under the loop would leave the loop's selector a stale
    descriptor)."""

    async def main():
        assert values([b async for b in gda.stream(Producer(1).reader())]) == [0]
        fds = open_fds()
        s = slow_stream(4)
        await s.__anext__()
        assert open_fds() == fds + 2  # the wake pipe
        await asyncio.get_running_loop().run_in_executor(None, s.close)
        for _ in range(5):
            await asyncio.sleep(0)
        return open_fds() - fds

    assert asyncio.run(main()) == 0
