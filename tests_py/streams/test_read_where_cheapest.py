"""Where a prefetched stream reads: in the consumer's thread while its reads
are fast (a producer that needs the GIL gets no thread of its own), and ahead
on another thread, for good, from the first read that blocks."""

from __future__ import annotations

import asyncio
import gc
import threading
import time

import godevarrow as gda
import pyarrow as pa
import pytest

SCHEMA = pa.schema([("x", pa.int64())])

# The producers yield batches made here, in advance: a first-time cost in
# pyarrow (its first record_batch from a dict looks for pandas, hundreds of
# milliseconds of CPU) would make a producer's read slow, which is the
# signal these tests are about.
_BATCHES = [pa.record_batch({"x": [k]}, schema=SCHEMA) for k in range(-1, 2048)]


def batch(k: int) -> pa.RecordBatch:
    return _BATCHES[k + 1]


@pytest.fixture
def no_gc():
    """Python's cyclic collector off: a collection of the test session's heap
    inside a producer's read works for milliseconds, and an async for's first
    read (its probe) that works over 2 ms counts as slow."""
    gc.disable()
    yield
    gc.enable()


# A hang guard, not a time limit: a handshake that waits this long failed.
HANG = 30

# A read that waits this long (more than the 50 µs of ArrayStream.prefetch),
# three times in a row, moves a prefetched stream to its read-ahead.
SLOW_READ = 0.005
# The same for an async for's reads in the loop's thread (see the test).
ASYNC_SLOW_READ = 0.025


def values(batches) -> list[int]:
    return [b.to_pyarrow().column(0)[0].as_py() for b in batches]


class Handshake:
    """A producer that first makes ``waits`` batches of -1 after a sleep each
    (reads that wait), then batches 0..n-1 where batch k+1 is made only once
    the consumer holds batch k (``holding``); ``made`` tells the consumer,
    holding batch k, that batch k+1 was made; ``readers`` records the thread
    of each read."""

    def __init__(self, n: int, waits: int) -> None:
        self.n, self.waits = n, waits
        self.holding = [threading.Event() for _ in range(n)]
        self.made = [threading.Event() for _ in range(n)]
        self.readers: list[int] = []

    def batches(self):
        for _ in range(self.waits):
            time.sleep(SLOW_READ)
            self.readers.append(threading.get_ident())
            yield batch(-1)
        for k in range(self.n):
            if k and not self.holding[k - 1].wait(HANG):
                raise TimeoutError(f"the consumer never held batch {k - 1}")
            self.readers.append(threading.get_ident())
            self.made[k].set()
            yield batch(k)

    def reader(self) -> pa.RecordBatchReader:
        return pa.RecordBatchReader.from_batches(SCHEMA, self.batches())


@pytest.mark.parametrize("depth", [1, 8])
def test_a_gil_bound_producers_fast_reads_run_on_the_consumers_thread(depth, leak_check):
    """Every read of a reader over a Python generator (pyarrow takes the GIL
    in its get_next) happens in the thread that iterates the prefetched
    stream: a read-ahead thread would hand the GIL to and fro for every batch."""
    readers: list[int] = []

    def batches():
        for k in range(200):
            readers.append(threading.get_ident())
            yield batch(k)

    s = gda.stream(pa.RecordBatchReader.from_batches(SCHEMA, batches())).prefetch(depth)
    assert values(s) == list(range(200))
    assert set(readers) == {threading.get_ident()}
    s.close()


@pytest.mark.parametrize("how", ["prefetch", "async for"])
def test_a_fast_producer_that_waits_for_the_consumer_is_read_only_when_asked(how, leak_check):
    """A producer whose batch k+1 waits until the consumer holds batch k (a
    handshake, or a pool of buffers that the consumer hands back) is read,
    while its reads are fast, only when the consumer asks for the next batch:
    a read ahead in the consumer's own thread (several reads in one call)
    would wait for the consumer, which waits for that read
    (docs/performance.md, "What remains"). The producer gives up after HANG
    seconds, so such a read ahead fails the test instead of hanging it."""
    h = Handshake(200, waits=0)
    got: list[int] = []

    def hold(b) -> None:
        got.append(values([b])[0])
        h.holding[got[-1]].set()

    if how == "prefetch":
        s = gda.stream(h.reader()).prefetch(8)
        for b in s:
            hold(b)
        s.close()
    else:

        async def main():
            s = gda.stream(h.reader())
            async for b in s:
                hold(b)
            await s.aclose()

        asyncio.run(main())
    assert got == list(range(200))


def test_a_gil_bound_producer_is_read_on_the_thread_that_iterates(leak_check):
    """The same from a thread other than the main one: the reads follow the
    consumer, whichever thread it is."""
    readers: list[int] = []
    consumer: list[int] = []
    got: list[int] = []

    def batches():
        for k in range(50):
            readers.append(threading.get_ident())
            yield batch(k)

    s = gda.stream(pa.RecordBatchReader.from_batches(SCHEMA, batches())).prefetch(8)

    def consume():
        consumer.append(threading.get_ident())
        got.extend(values(s))

    t = threading.Thread(target=consume)
    t.start()
    t.join(HANG)
    assert not t.is_alive(), "the consumer never finished"
    assert got == list(range(50))
    assert set(readers) == set(consumer)
    s.close()


def test_a_producer_whose_read_waits_is_read_ahead_from_then_on(leak_check):
    """Three reads in a row wait (a sleep, which releases the GIL: the reading
    thread gives up its CPU). From then on the producer is asked for batch k+1
    while the consumer still holds batch k (a handshake: batch k+1 is made
    only once the consumer holds batch k, and the consumer, holding it, waits
    for batch k+1 to be made), on a thread other than the consumer's."""
    n = 6
    h = Handshake(n, waits=3)  # three reads in a row that wait
    s = gda.stream(h.reader()).prefetch(2)
    assert values([next(s), next(s), next(s)]) == [-1, -1, -1]
    got, overlapped = [], []
    for k, b in enumerate(s):
        got.append(values([b])[0])
        h.holding[k].set()
        if k + 1 < n:
            overlapped.append(h.made[k + 1].wait(HANG))
        del b
    assert got == list(range(n))
    assert overlapped == [True] * (n - 1)
    me = threading.get_ident()
    assert h.readers[:3] == [me] * 3  # the reads that waited were the consumer's own
    assert me not in h.readers[3:]  # then the read-ahead's
    s.close()


def test_a_slow_producer_behind_a_working_consumer_moves_at_its_third_read(leak_check):
    """The case prefetch is for: a producer that waits (a 1 ms sleep) and a
    consumer that works between reads (3 ms on the CPU). The second and
    third reads, measured, blocked, so the read-ahead reads from the fourth
    on. The consumer's work before a read is not the read's: getrusage's CPU
    time of a running thread lags until its next tick or switch, and with it
    such reads passed for working, and the stream stayed in the consumer's
    thread for tens of reads (gosrc/streams/gate.h). The work reads the wall
    clock: a reading of the thread's CPU clock would bring that count up to
    date. The wait is long beside the read's own CPU work (the generator
    and the batch, tens of µs, more on a loaded machine), so that a read
    stays under half on the CPU however slow the machine is (a 100 µs
    sleep left too little margin: one CI run moved two reads late), and the
    work is longer than the wait, so that a read charged the work, as
    getrusage charged it, would pass for working."""
    readers: list[int] = []

    def batches():
        for k in range(12):
            time.sleep(0.001)
            readers.append(threading.get_ident())
            yield batch(k)

    def work(seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    s = gda.stream(pa.RecordBatchReader.from_batches(SCHEMA, batches())).prefetch(2)
    got = []
    for b in s:
        got.append(values([b])[0])
        work(0.003)
    assert got == list(range(12))
    me = threading.get_ident()
    assert readers[:3] == [me] * 3  # the first three, the consumer's own
    assert me not in readers[3:], [r == me for r in readers]
    s.close()


def test_a_stream_that_moved_to_read_ahead_stays_there(leak_check):
    """After three reads in a row that wait, fast reads stay on the read-ahead
    thread. Read 5 (the third wait) may already be read ahead: a read that
    takes over 50 µs of wall time makes the next one measured, and a loaded
    machine can preempt read 2 for that long, so that the waits of reads 3
    and 4, measured, move the stream (gate.h, gda_read_timer_end)."""
    readers: list[int] = []

    def batches():
        for k in range(100):
            if k in (3, 4, 5):
                time.sleep(SLOW_READ)
            readers.append(threading.get_ident())
            yield batch(k)

    s = gda.stream(pa.RecordBatchReader.from_batches(SCHEMA, batches())).prefetch(4)
    assert values(s) == list(range(100))
    me = threading.get_ident()
    assert readers[:4] == [me] * 4  # no read before the first wait moves it
    assert me not in readers[6:]
    s.close()


# While reads stay fast, a prefetched stream times its first reads, then one
# in 16, 32, and at most one in this many (GDA_TIMED_READ_STRIDE_MAX,
# gosrc/streams/gate.h).
TIMED_READ_STRIDE = 64


def test_a_producer_that_begins_to_wait_late_moves_within_a_stride(leak_check):
    """After the first reads, fast reads are timed one in TIMED_READ_STRIDE at most:
    a producer whose reads all wait from read 100 on is read ahead after at
    most a stride of them and the two measured reads after it."""
    readers: list[int] = []
    start = 100

    def batches():
        for k in range(start + 3 * TIMED_READ_STRIDE):
            if k >= start:
                time.sleep(SLOW_READ)
            readers.append(threading.get_ident())
            yield batch(k)

    s = gda.stream(pa.RecordBatchReader.from_batches(SCHEMA, batches())).prefetch(4)
    assert values(s) == list(range(start + 3 * TIMED_READ_STRIDE))
    me = threading.get_ident()
    assert readers[:start] == [me] * start
    assert me not in readers[start + TIMED_READ_STRIDE + 2 :]
    s.close()


@pytest.mark.parametrize("where", ["loop thread", "read-ahead"])
def test_an_event_loop_runs_other_tasks_during_a_long_async_for(where, leak_check, monkeypatch):
    """Hardly an ``__anext__`` has to wait: the producer's reads are fast and
    made in the loop's thread, or the read-ahead has queued a thousand arrays
    before the ``async for`` over them begins. Another task, made ready just
    before, still runs while the loop goes on: within ASYNC_TURN_ARRAYS arrays
    (a loop that never gave it a turn would run it only after the last one)."""
    from godevarrow import _stream

    n = 2 * _stream.ASYNC_TURN_ARRAYS
    monkeypatch.setattr(_stream, "ASYNC_DEPTH", 1024)  # the deepest read-ahead
    queued = threading.Event()
    ahead = where == "read-ahead"

    def batches():
        for k in range(n):
            if ahead and k == 0:
                time.sleep(SLOW_READ)  # the first read waits: the stream reads ahead
            if k == 1000:
                queued.set()  # a thousand were read (and queued, ahead)
            yield batch(k)

    async def main():
        s = gda.stream(pa.RecordBatchReader.from_batches(SCHEMA, batches()))
        got = [values([await s.__anext__()])[0]]
        if ahead:
            # a wait that gives the loop no turn, until the queue is full
            assert queued.wait(HANG), "the read-ahead never filled its queue"
        ran_at: list[int] = []

        async def other() -> None:
            ran_at.append(len(got))

        task = asyncio.get_running_loop().create_task(other())
        async for b in s:
            got.append(values([b])[0])
        await task
        await s.aclose()
        return got, ran_at

    got, ran_at = asyncio.run(main())
    assert got == list(range(n))
    assert ran_at and ran_at[0] <= 1 + _stream.ASYNC_TURN_ARRAYS, ran_at


def test_a_gil_bound_producers_fast_reads_in_async_for_run_on_the_loops_thread(leak_check, no_gc):
    """After the probe (the first read, made on another thread while the
    loop's thread waits for it), every read of a reader over a Python
    generator happens in the event loop's thread: a read-ahead thread would
    hand the GIL to and fro for every batch. A probe that a loaded machine
    delays past the loop's wait is followed by another (up to four in a row,
    gosrc/streams/oneshot.go, missedProbesBeforeReadAhead)."""
    readers: list[int] = []

    def batches():
        for k in range(300):
            readers.append(threading.get_ident())
            yield batch(k)

    async def main():
        s = gda.stream(pa.RecordBatchReader.from_batches(SCHEMA, batches()))
        got = [values([b])[0] async for b in s]
        await s.aclose()
        return got

    loop_thread = threading.get_ident()  # asyncio.run runs the loop in this thread
    assert asyncio.run(main()) == list(range(300))
    probes = readers.index(loop_thread)
    assert 1 <= probes < 4, readers[:8]
    assert loop_thread not in readers[:probes]
    assert set(readers[probes:]) == {loop_thread}


def test_async_for_reads_a_producer_that_waits_ahead(leak_check):
    """The first read waits (a sleep): from then on the producer is asked for
    batch k+1 while the consumer still holds batch k (a handshake: batch k+1
    is made only once the consumer holds batch k, and the consumer, holding
    it, waits for batch k+1 to be made, giving the loop its turns), on a
    thread other than the loop's."""
    n = 6
    h = Handshake(n, waits=1)

    async def main():
        loop = asyncio.get_running_loop()
        s = gda.stream(h.reader())
        assert values([await s.__anext__()]) == [-1]
        got, overlapped = [], []
        k = 0
        async for b in s:
            got.append(values([b])[0])
            h.holding[k].set()
            if k + 1 < n:
                overlapped.append(await loop.run_in_executor(None, h.made[k + 1].wait, HANG))
            del b
            k += 1
        await s.aclose()
        return got, overlapped

    got, overlapped = asyncio.run(main())
    assert got == list(range(n))
    assert overlapped == [True] * (n - 1)
    assert threading.get_ident() not in h.readers


def test_an_async_for_whose_reads_begin_to_wait_moves_ahead_for_good(leak_check, no_gc):
    """Fast reads run in the loop's thread until three in a row wait (a sleep);
    from then on, fast or not, the producer is read on another thread. The
    first wait is seen by the loop's pacing, whose clock is coarse (a tick of
    up to 10 ms): the reads wait longer than that."""
    readers: list[int] = []

    def batches():
        for k in range(100):
            if k in (3, 4, 5):
                time.sleep(ASYNC_SLOW_READ)
            readers.append(threading.get_ident())
            yield batch(k)

    async def main():
        s = gda.stream(pa.RecordBatchReader.from_batches(SCHEMA, batches()))
        got = [values([b])[0] async for b in s]
        await s.aclose()
        return got

    loop_thread = threading.get_ident()
    assert asyncio.run(main()) == list(range(100))
    # After the probe (or two, when a loaded machine delayed the first past
    # the loop's wait: gosrc/streams/oneshot.go, ProbeHeld), in the loop's
    # thread until the reads wait; read 5 (the third wait) may be read ahead
    # already: a pacing turn due on time (2 ms since the last, ASYNC_TURN_NS)
    # with few arrays taken makes the next read measured
    # (capsule/stream_async.c, stream_async_turn), and a loaded machine can
    # preempt read 2 that long, so that the waits of reads 3 and 4, measured,
    # move the stream (see test_a_stream_that_moved_to_read_ahead_stays_there).
    probes = readers.index(loop_thread)
    assert 1 <= probes < 3, readers[:4]
    assert readers[probes:4] == [loop_thread] * (4 - probes)
    assert loop_thread not in readers[6:]


def test_the_class_of_a_streams_arrays_is_known_before_its_schema_is_asked():
    """Iterating a stream first (its schema never asked, as a short stream's
    set-up does) gives RecordBatch for a stream of struct arrays, Array for
    any other, whether the stream is a producer's or made in Go."""
    batch = pa.record_batch({"x": [1, 2]}, schema=SCHEMA)
    assert type(next(iter(gda.stream(pa.RecordBatchReader.from_batches(SCHEMA, [batch]))))) is gda.RecordBatch
    assert type(next(iter(gda.stream(pa.chunked_array([[1, 2]]))))) is gda.Array
    assert type(next(iter(gda.stream(gda.array(pa.array([1])))))) is gda.Array
    assert type(next(iter(gda.stream(gda.record_batch(batch))))) is gda.RecordBatch
