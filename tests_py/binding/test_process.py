"""Process facts: panics, fork, the GIL, Ctrl-C, threads. Each crash-type
test runs in a subprocess, so a failure is a failed test, not a dead run."""

from __future__ import annotations

import os
import signal

import godevarrow as gda
import pyarrow as pa
import pytest
from conftest import run_in_threads, run_python


def test_a_go_panic_becomes_an_exception_and_the_library_then_refuses_work():
    r = run_python(
        """
        import godevarrow as gda, pyarrow as pa
        from godevarrow import _godevarrow as lib
        try:
            lib.debug_panic()
        except gda.InternalError as e:
            assert "panic" in str(e), e
            print("raised", type(e).__name__)
        try:
            gda.array(pa.array([1, 2]))
        except gda.InternalError as e:
            print("refused:", e)
        """,
        env={"GODEVARROW_ALLOW_PANIC_TEST": "1"},
    )
    assert r.returncode == 0, r.stderr
    assert "raised InternalError" in r.stdout
    assert "refused:" in r.stdout


def test_the_panic_trigger_is_off_by_default(leak_check):
    from godevarrow import _godevarrow as lib

    with pytest.raises(ValueError, match="GODEVARROW_ALLOW_PANIC_TEST"):
        lib.debug_panic()
    assert gda.array(pa.array([1])).to_pyarrow().to_pylist() == [1]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_is_warned():
    r = run_python(
        """
        import os, warnings, godevarrow
        r, w = os.pipe()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pid = os.fork()
            if pid == 0:
                msgs = [str(x.message) for x in caught]
                os.write(w, ("|".join(msgs)).encode())
                os._exit(0)
        os.waitpid(pid, 0)
        os.close(w)
        print(os.read(r, 4096).decode())
        """
    )
    assert r.returncode == 0, r.stderr
    assert "fork" in r.stdout and "spawn" in r.stdout, r.stdout


# A stream whose get_next blocks in C until a Python thread hands it each
# value (tests_py/gilprod/blockprod.c): a batch can only arrive if that
# thread runs Python while the read blocks, that is if the reader released
# the GIL. A read that holds it waits out the producer's timeout and fails
# with "no value was given" instead of hanging.
BLOCKING_C_PRODUCER = """
import ctypes, sys, threading
sys.path.insert(0, TESTS_DIR)
from cabi import ArrowArray, ArrowArrayStream, make_capsule
from conftest import Capsules
import godevarrow as gda

lib = ctypes.CDLL(BLOCKPROD)  # CDLL: each call releases the GIL while it waits in C
lib.blockprod_new.restype = ctypes.POINTER(ArrowArrayStream)
lib.blockprod_new.argtypes = [ctypes.c_int, ctypes.c_int]
lib.blockprod_wait_for_reader.argtypes = [ctypes.c_int]
lib.blockprod_give.argtypes = [ctypes.c_int64]
lib.blockprod_given_while_waiting.restype = ctypes.c_longlong
lib.blockprod_stream_releases.restype = ctypes.c_longlong

stream = lib.blockprod_new(3, READ_TIMEOUT_MS)
cap = make_capsule(ctypes.addressof(stream.contents), b"arrow_array_stream")
got, error = [], None
"""

# The Python thread that hands the producer its three values.
GIVE_THREE = """
def give():
    for i in range(3):
        if not lib.blockprod_wait_for_reader(30000):
            return
        # Python bytecode between the two C calls: it needs the GIL while
        # the reader is blocked in get_next
        lib.blockprod_give(10 * i)

threading.Thread(target=give, daemon=True).start()
"""

GODEVARROW_READS = """
s = gda.stream(Capsules(stream=cap))
try:
    for b in s:
        got.append(b.to_pyarrow().to_pylist()[0])
except gda.GodevarrowError as e:
    error = str(e)
del s
print("live imported streams:", gda.debug_live_objects()["imported_streams"])
"""

# the control: pyarrow's own C reader would release the GIL, so the struct is
# read directly, through a ctypes prototype that keeps the GIL held during
# the call (PYFUNCTYPE)
HELD_GIL_READS = """
get_next = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)(
    ctypes.cast(stream.contents.get_next, ctypes.c_void_p).value
)
while True:
    out = ArrowArray()
    if get_next(ctypes.addressof(stream.contents), ctypes.addressof(out)) != 0:
        error = stream.contents.get_last_error(stream).decode()
        break
    if not out.release:
        break
    got.append(ctypes.c_int64.from_address(out.buffers[1]).value)
    out.release(ctypes.byref(out))
"""

REPORT = """
print("got:", got)
print("error:", error)
print("given while the read waited:", lib.blockprod_given_while_waiting())
print("stream releases:", lib.blockprod_stream_releases())
"""


def read_blocking_c_producer(consumer: str, read_timeout_ms: int, giver: str = GIVE_THREE) -> str:
    from conftest import REPO

    blockprod = REPO / "tests_py" / "gilprod" / "libblockprod.so"
    assert blockprod.exists(), f"{blockprod} is not built: run `make fakecuda`"
    code = (
        BLOCKING_C_PRODUCER.replace("TESTS_DIR", repr(str(REPO / "tests_py")))
        .replace("BLOCKPROD", repr(str(blockprod)))
        .replace("READ_TIMEOUT_MS", str(read_timeout_ms))
        + giver
        + consumer
        + REPORT
    )
    r = run_python(code, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_the_gil_is_released_while_a_foreign_stream_blocks():
    """godevarrow reads a C producer whose get_next blocks until a Python
    thread hands it each value: all three arrive only if the GIL was
    released during each read (the producer's 30 s timeout is a hang guard)."""
    out = read_blocking_c_producer(GODEVARROW_READS, read_timeout_ms=30000)
    assert "got: [0, 10, 20]\nerror: None\n" in out, out
    assert "given while the read waited: 3" in out, out
    assert "stream releases: 1" in out, out
    assert "live imported streams: 0" in out, out


def test_a_read_that_holds_the_gil_fails_the_gil_release_check():
    """The control of the test above: the same producer and Python thread,
    read by a consumer that keeps the GIL across get_next, get no value:
    the first read gives up (here after 2 s) with the producer's message."""
    out = read_blocking_c_producer(HELD_GIL_READS, read_timeout_ms=2000)
    assert "got: []\n" in out, out
    assert "error: blockprod: no value was given within 2000 ms" in out, out
    assert "given while the read waited: 0" in out, out


# The giver for a signal during a read: the second value is given after
# SIGINT was sent to the main thread while its read waits in get_next. The
# main thread runs the signal's C handler when the signal wakes it, before
# it can see the value, so the read returns with the signal pending.
SIGNAL_THEN_GIVE = """
import signal
main = threading.main_thread().ident

def give():
    for i in range(3):
        if not lib.blockprod_wait_for_reader(30000):
            return
        if i == 1:
            signal.pthread_kill(main, signal.SIGINT)
        lib.blockprod_give(10 * i)

threading.Thread(target=give, daemon=True).start()
"""

# {open} makes the stream: the producer's own (a foreign stream, its arrays
# held in C) or a cast of it (made in Go: the batch kept for the next read is
# a Go array).
SIGNALLED_READS = """
import pyarrow as pa
s = {open}
got.append(next(s).to_pyarrow().to_pylist()[0])
try:
    next(s)
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted")
got += [b.to_pyarrow().to_pylist()[0] for b in s]
del s
print("live imported streams:", gda.debug_live_objects()["imported_streams"])
"""


@pytest.mark.parametrize(
    "open_stream, values",
    [
        ("gda.stream(Capsules(stream=cap))", "[0, 10, 20]"),
        ('gda.stream(Capsules(stream=cap), requested_schema=pa.field("x", pa.float64()))', "[0.0, 10.0, 20.0]"),
    ],
    ids=["direct read", "read of a cast"],
)
def test_a_signal_during_a_read_keeps_the_batch_for_the_next_read(open_stream, values):
    """A signal that arrives while a read waits in a C producer (without the
    GIL) is raised when the read returns, and the batch that read returned is
    the next read's, not dropped with the KeyboardInterrupt."""
    script = SIGNALLED_READS.replace("{open}", open_stream)
    out = read_blocking_c_producer(script, read_timeout_ms=30000, giver=SIGNAL_THEN_GIVE)
    assert out.startswith("interrupted\n"), out
    assert f"got: {values}\nerror: None\n" in out, out
    assert "stream releases: 1" in out, out
    assert "live imported streams: 0" in out, out


# A read interrupted by Ctrl-C. The producer's second batch waits on an Event
# that the script sets only after the read was interrupted (10 s is a hang
# guard), and prints a marker when it resumes; SIGINT is sent once the
# producer waits and the main thread is inside blocking_read, so the order of
# "interrupted" and the marker says whether the wait was cut short.
CTRL_C = """
import os, signal, sys, threading, time
import pyarrow as pa, godevarrow as gda
schema = pa.schema([("x", pa.int64())])
inside, resume = threading.Event(), threading.Event()
def gen():
    if PREFETCH:  # three reads in a row that wait: the stream reads ahead from then on
        for _ in range(3):
            time.sleep(0.005)
            yield pa.record_batch({"x": [-1]}, schema=schema)
    yield pa.record_batch({"x": [0]}, schema=schema)
    inside.set()
    resume.wait(120)
    print("producer resumed", flush=True)
    yield pa.record_batch({"x": [1]}, schema=schema)
s = gda.stream(pa.RecordBatchReader.from_batches(schema, gen()))
if PREFETCH:
    s = s.prefetch(1)
    next(s), next(s), next(s)
next(s)

def blocking_read():
    return next(s)

def in_blocking_read(frame):
    while frame is not None and frame.f_code.co_name != "blocking_read":
        frame = frame.f_back
    return frame is not None

def interrupt():
    main = threading.main_thread().ident
    inside.wait(30)
    deadline = time.monotonic() + 30  # a hang guard: the script fails below if it runs out
    while not in_blocking_read(sys._current_frames()[main]) and time.monotonic() < deadline:
        time.sleep(0.001)
    os.kill(os.getpid(), signal.SIGINT)

threading.Thread(target=interrupt).start()
try:
    blocking_read()
    print("not interrupted", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
resume.set()
"""

# read ahead: the batch read meanwhile is not lost, the next call returns it
PREFETCH_TAIL = """
b = next(s)
print("then", b.to_pyarrow().column(0)[0].as_py())
"""

# a direct read ran the producer on this thread, where the interrupt ended
# it: the stream reports that it ended with an error
DIRECT_TAIL = """
try:
    next(s)
    print("then a batch")
except gda.ArrowInvalid as e:
    print("then:", repr(str(e)))  # one line
"""


def test_ctrl_c_interrupts_a_blocking_read_ahead_promptly():
    """Waiting on a read-ahead stream is interruptible: KeyboardInterrupt comes
    while the producer still waits (before its marker), and the batch read
    meanwhile is kept."""
    r = run_python("PREFETCH = True\n" + CTRL_C + PREFETCH_TAIL)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines == ["interrupted", "producer resumed", "then 1"], r.stdout


def test_ctrl_c_during_a_direct_read_of_a_python_producer():
    """A direct read runs the producer's get_next on the calling thread, so a
    Python producer is interrupted where it is (here in its wait, which never
    resumes) and reports it; godevarrow raises the KeyboardInterrupt."""
    r = run_python("PREFETCH = False\n" + CTRL_C + DIRECT_TAIL)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "interrupted", r.stdout
    assert "producer resumed" not in lines, r.stdout
    assert len(lines) == 2 and lines[1].startswith("then: "), r.stdout
    assert "ended with an error on an earlier read" in lines[1] and "KeyboardInterrupt" in lines[1], r.stdout


def test_threads_exchange_concurrently(leak_check):
    batch = pa.record_batch({"a": pa.array(range(100)), "s": pa.array([str(i) for i in range(100)])})
    errors: list[BaseException] = []

    def work():
        try:
            for _ in range(300):
                g = gda.record_batch(batch)
                back = pa.record_batch(g)
                assert back.num_rows == 100
                assert pa.record_batch(g.slice(10, 5)).column(0).to_pylist() == list(range(10, 15))
                s = gda.stream(g)
                assert pa.RecordBatchReader.from_stream(s).read_all().num_rows == 100
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    run_in_threads(work, [()] * 8)
    assert not errors, errors[0]


@pytest.mark.parametrize(
    "source,export,count",
    [
        # capsules dropped unconsumed: their destructors release the structs
        (lambda: gda.array(pa.array(range(1000))), lambda g: g.__arrow_c_device_array__(), 200),
        # batches pyarrow imported: pyarrow calls the structs' release callbacks
        (lambda: gda.record_batch(pa.record_batch({"x": list(range(50))})), pa.record_batch, 20),
    ],
    ids=["unconsumed-capsules", "pyarrow-imports"],
)
def test_exports_released_on_threads_go_did_not_create(source, export, count, leak_check):
    """Exports made on one thread, dropped on others."""
    g = source()
    exports = [export(g) for _ in range(count)]
    del g
    parts = [exports[i::4] for i in range(4)]
    del exports
    run_in_threads(list.clear, [(p,) for p in parts])
    del parts


def test_sigint_handler_is_left_alone():
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
