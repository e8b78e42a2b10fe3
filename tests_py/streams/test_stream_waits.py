"""No wait a caller can cause is endless: a producer that reads the stream it
feeds gets an error instead of waiting for itself, tasks awaiting one stream
at once are all served in order, and a read waiting for another thread's read
gives way to Ctrl-C. Each case that could hang runs in its own process, whose
timeout only guards against the hang."""

from __future__ import annotations

import pytest
from conftest import run_python

SELF_READING_PRODUCER = """
import threading, time
import pyarrow as pa, godevarrow as gda
schema = pa.schema([("x", pa.int64())])
fed = {}
seen = []
known = threading.Event()  # a read-ahead starts reading before `fed` is filled

def batches():
    if AHEAD:  # three reads in a row that wait: the stream reads ahead from then on
        for _ in range(3):
            time.sleep(0.005)
            yield pa.record_batch({"x": [0]}, schema=schema)
    yield pa.record_batch({"x": [1]}, schema=schema)
    known.wait(60)
    try:
        next(fed["stream"])  # the stream this generator feeds
    except gda.ArrowInvalid as e:
        seen.append(str(e))
        raise
    yield pa.record_batch({"x": [2]}, schema=schema)

s = gda.stream(pa.RecordBatchReader.from_batches(schema, batches()))
if AHEAD:
    s = s.prefetch(2)
    next(s), next(s), next(s)
fed["stream"] = s
known.set()
got = []
try:
    for b in s:
        got.append(b.to_pydict()["x"])
except gda.StreamError as e:  # the producer's failure, as any producer's
    print("outer:", e)
print("inner:", seen)
print("got:", got)
s.close()
assert pa.record_batch(gda.record_batch(pa.record_batch({"y": [3]}))).to_pydict() == {"y": [3]}
print("healthy")
"""


@pytest.mark.parametrize("ahead", [False, True], ids=["plain", "read-ahead"])
def test_a_producer_reading_the_stream_it_feeds_gets_an_error(ahead):
    r = run_python(f"AHEAD = {ahead}\n" + SELF_READING_PRODUCER, timeout=120)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "inner: [\"the stream's producer read the stream it feeds" in out, out
    assert "outer:" in out and "the stream it feeds" in out.split("outer:")[1], out
    assert "got: [[1]]" in out and "healthy" in out, out


def test_tasks_awaiting_one_stream_at_once_are_all_served_in_order():
    code = """
    import asyncio, threading
    import pyarrow as pa, godevarrow as gda
    schema = pa.schema([("x", pa.int64())])
    gate = threading.Event()

    def batches():
        gate.wait(120)  # without the GIL: nothing is ready until the tasks wait
        for i in range(3):
            yield pa.record_batch({"x": [i]}, schema=schema)

    s = gda.stream(pa.RecordBatchReader.from_batches(schema, batches()))

    async def main():
        first = asyncio.create_task(s.__anext__())
        await asyncio.sleep(0)  # one step: `first` is now waiting on the stream
        second = asyncio.create_task(s.__anext__())
        await asyncio.sleep(0)
        third = asyncio.create_task(s.__anext__())
        await asyncio.sleep(0)
        gate.set()
        got = await asyncio.gather(first, second, third)
        print([b.to_pydict()["x"] for b in got])
        async for _ in s:
            raise AssertionError("a fourth batch")
        await s.aclose()

    asyncio.run(main())
    """
    r = run_python(code, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[[0], [1], [2]]", r.stdout


def test_ctrl_c_ends_a_read_waiting_for_another_threads_read():
    # The handler raises KeyboardInterrupt only when the signal finds the main
    # thread inside ArrayStream.__next__ (its read waiting for the other
    # thread's); a signal that arrives earlier is ignored and sent again. A
    # wait that does not give way to signals hangs, and the timeout fails it.
    code = """
    import signal, sys, threading
    import pyarrow as pa, godevarrow as gda
    schema = pa.schema([("x", pa.int64())])
    inside, release = threading.Event(), threading.Event()

    def batches():
        inside.set()
        release.wait(120)  # the other thread's read blocks here, without the GIL
        yield pa.record_batch({"x": [1]}, schema=schema)

    s = gda.stream(pa.RecordBatchReader.from_batches(schema, batches()))
    other = threading.Thread(target=lambda: print("other read:", next(s).to_pydict()))
    other.start()
    inside.wait(120)
    caught = threading.Event()

    def on_sigint(signum, frame):
        if frame is not None and frame.f_code.co_name == "__next__":
            caught.set()
            raise KeyboardInterrupt
        # not yet waiting: the sender tries again

    signal.signal(signal.SIGINT, on_sigint)
    main = threading.main_thread().ident

    def sender():
        while not caught.wait(0.05):
            signal.pthread_kill(main, signal.SIGINT)

    threading.Thread(target=sender, daemon=True).start()
    try:
        next(s)
        print("no interrupt")
    except KeyboardInterrupt:
        print("interrupted while waiting")
    release.set()
    other.join(120)
    s.close()
    """
    r = run_python(code, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "interrupted while waiting" in r.stdout, r.stdout
    assert "other read: {'x': [1]}" in r.stdout, r.stdout
