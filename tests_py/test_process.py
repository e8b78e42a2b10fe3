"""Process facts: panics, fork, the GIL, Ctrl-C, threads. Each crash-type
test runs in a subprocess, so a failure is a failed test, not a dead run."""

from __future__ import annotations

import os
import signal
import threading
import time

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


def test_the_gil_is_released_while_a_foreign_stream_blocks(leak_check):
    """A pyarrow IPC reader on a pipe blocks in C (no Python, no GIL) until
    the writer sends; another Python thread must run meanwhile."""
    import pyarrow.ipc as ipc

    r_fd, w_fd = os.pipe()
    schema = pa.schema([("x", pa.int64())])
    progress = []

    def writer():
        with os.fdopen(w_fd, "wb") as f, ipc.new_stream(f, schema) as w:
            for i in range(3):
                time.sleep(0.1)
                progress.append(("write", i))
                w.write_batch(pa.record_batch({"x": [i]}, schema=schema))
                f.flush()

    with os.fdopen(r_fd, "rb") as f:
        t = threading.Thread(target=writer)
        t.start()
        reader = ipc.open_stream(f)  # reads the schema
        s = gda.stream(reader)
        got = [b.to_pyarrow().column(0)[0].as_py() for b in s]
        t.join()
    assert got == [0, 1, 2]
    assert [p[0] for p in progress] == ["write"] * 3, "the writer thread ran while godevarrow waited"


CTRL_C = """
import os, signal, threading, time
import pyarrow as pa, godevarrow as gda
schema = pa.schema([("x", pa.int64())])
def gen():
    yield pa.record_batch({"x": [0]}, schema=schema)
    time.sleep(2)
    yield pa.record_batch({"x": [1]}, schema=schema)
s = gda.stream(pa.RecordBatchReader.from_batches(schema, gen()))
if PREFETCH:
    s = s.prefetch(1)
next(s)
threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
start = time.perf_counter()
try:
    next(s)
    print("not interrupted")
except KeyboardInterrupt:
    print(f"interrupted after {time.perf_counter() - start:.2f}s")
# the interrupted read is not lost: the next call returns it
b = next(s)
print("then", b.to_pyarrow().column(0)[0].as_py())
"""


def ctrl_c(prefetch: bool) -> tuple[float, str]:
    r = run_python(f"PREFETCH = {prefetch}\n" + CTRL_C)
    assert r.returncode == 0, r.stderr
    assert "interrupted after" in r.stdout, r.stdout
    return float(r.stdout.split("interrupted after ")[1].split("s")[0]), r.stdout


def test_ctrl_c_interrupts_a_blocking_read_ahead_promptly():
    """Waiting on a read-ahead stream is interruptible: KeyboardInterrupt comes
    within a fraction of a second, and the batch read meanwhile is kept."""
    waited, out = ctrl_c(prefetch=True)
    assert waited < 1.0, f"KeyboardInterrupt came after {waited}s of a 2s read"
    assert "then 1" in out


def test_ctrl_c_during_a_direct_read_of_a_python_producer():
    """A direct read runs the producer's get_next on the calling thread, so a
    Python producer is interrupted where it is (here in time.sleep) and
    reports it; godevarrow raises the KeyboardInterrupt promptly."""
    r = run_python("PREFETCH = False\n" + CTRL_C)
    assert "interrupted after" in r.stdout, (r.stdout, r.stderr)
    waited = float(r.stdout.split("interrupted after ")[1].split("s")[0])
    assert waited < 1.0, waited


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
