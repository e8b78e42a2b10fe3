"""The binding under stress: threads racing one stream or one capsule, a
close during a read, and a poisoned library. Each case runs in a fresh
interpreter, so a hang is a timeout and a crash is an exit code, not a dead
test run (docs/design.md, "A stream's life" and "Panics")."""

from __future__ import annotations

import pytest
from conftest import REPO, run_python

# A pyarrow reader over a Python generator: its get_next needs the GIL. The
# second batch waits (without the GIL) on go_on, which the test sets when
# the read should end: the read is in progress from inside.set() until then.
# The waits give up after a minute (a hang guard: the script then fails).
SLOW_PYTHON_PRODUCER = """
import sys, threading, time
import pyarrow as pa
import godevarrow as gda

schema = pa.schema([("x", pa.int64())])
inside, go_on = threading.Event(), threading.Event()

def batches():
    yield pa.record_batch({"x": [1]})
    inside.set()
    if not go_on.wait(60):
        raise TimeoutError("the test never let the second batch go")
    yield pa.record_batch({"x": [2]})

def slow_stream():
    return gda.stream(pa.RecordBatchReader.from_batches(schema, batches()))

# ArrayStream.close is C (capsule/stream_base.c), which leaves no frame to
# see: wrapped here in a Python frame named close, which stays on the stack
# while the C close waits
c_close = gda.ArrayStream.close

def close(self):
    return c_close(self)

gda.ArrayStream.close = close

def closing(frame):
    while frame is not None:
        if frame.f_code is close.__code__:
            return True
        frame = frame.f_back
    return False

def let_go_once_a_thread_closes():
    # sets go_on once some thread is inside ArrayStream.close (which waits,
    # without the GIL, for the read in progress)
    def watch():
        deadline = time.monotonic() + 60
        while not any(map(closing, sys._current_frames().values())) and time.monotonic() < deadline:
            time.sleep(0.001)
        go_on.set()
    threading.Thread(target=watch, daemon=True).start()
"""


# A hang guard, not a time limit: the thousand-round cases take about 10 s
# with the normal build, and over 30 s with make test-strict's checked build
# on a busy machine.
HANG = 180


def run_case(code: str, **env: str) -> str:
    """Runs code after SLOW_PYTHON_PRODUCER; returns its stdout, asserting a clean exit."""
    result = run_python(SLOW_PYTHON_PRODUCER + code, env=env, timeout=HANG)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_close_from_another_thread_while_a_read_waits_for_the_gil():
    out = run_case("""
base = gda.debug_live_objects()["imported_streams"]
s = slow_stream()
next(s)
got = []
def read():
    try:
        got.append(next(s).to_pyarrow().to_pylist())
    except gda.GodevarrowError as e:
        got.append(type(e).__name__)
t = threading.Thread(target=read)
t.start()
assert inside.wait(60)
let_go_once_a_thread_closes()
s.close()  # waits for the read, without the GIL the read needs
t.join()
assert got == [[{"x": 2}]], got
assert gda.debug_live_objects()["imported_streams"] == base
try:
    next(s)
except gda.GodevarrowError as e:
    print("after close:", e)
""")
    assert "already consumed" in out


def test_aclose_after_a_cancelled_anext():
    out = run_case("""
import asyncio

async def main():
    s = slow_stream()
    await s.__anext__()
    task = asyncio.ensure_future(s.__anext__())  # its read waits in the producer
    assert await asyncio.get_running_loop().run_in_executor(None, inside.wait, 60)
    task.cancel()
    let_go_once_a_thread_closes()
    await s.aclose()
    return gda.debug_live_objects()["imported_streams"]

print("live streams:", asyncio.run(main()))
""")
    assert "live streams: 0" in out


def test_moves_during_a_read_are_refused_and_leave_the_stream_usable():
    out = run_case("""
s = slow_stream()
next(s)
t = threading.Thread(target=lambda: next(s))
t.start()
assert inside.wait(60)
for move in (lambda: s.prefetch(2), lambda: s.__arrow_c_stream__()):
    try:
        move()
    except gda.GodevarrowError as e:
        print("refused:", e)
go_on.set()  # the read was in progress during both moves
t.join()
assert list(s) == []  # the end, read normally
s.close()
""")
    assert out.count("being read in another thread") == 2


def test_one_device_stream_capsule_imported_from_four_threads_is_owned_once():
    # four threads released at once on one capsule, a thousand times: the
    # move out of the capsule must be one step under the GIL (on the code
    # before, about one round in 150 ended with two owners)
    out = run_case(
        """
import ctypes, gc, sys
sys.path.insert(0, TESTS_DIR)
from conftest import run_in_threads
from cabi import (DEVICE_GET_LAST_ERROR, DEVICE_GET_NEXT, DEVICE_GET_SCHEMA, DEVICE_STREAM_RELEASE,
                  ArrowDeviceArrayStream, capsule_pointer, make_capsule)

inner_cap = gda.stream(pa.RecordBatchReader.from_batches(schema, [])).__arrow_c_device_stream__()
inner = ArrowDeviceArrayStream.from_address(capsule_pointer(inner_cap))
releases = []
def release(moved):
    releases.append(1)
    moved.contents.release = DEVICE_STREAM_RELEASE()
callbacks = (
    DEVICE_GET_SCHEMA(lambda _, out: inner.get_schema(ctypes.byref(inner), out)),
    DEVICE_GET_NEXT(lambda _, out: inner.get_next(ctypes.byref(inner), out)),
    DEVICE_GET_LAST_ERROR(lambda _: inner.get_last_error(ctypes.byref(inner))),
    DEVICE_STREAM_RELEASE(release),
)
bad_rounds = 0
for _ in range(1000):
    struct = ArrowDeviceArrayStream()
    struct.device_type = 1
    struct.get_schema, struct.get_next, struct.get_last_error, struct.release = callbacks
    cap = make_capsule(ctypes.addressof(struct), b"arrow_device_array_stream")
    start = threading.Barrier(4)
    results = []
    def take():
        start.wait()
        try:
            results.append(gda._godevarrow.import_stream(cap, True))
        except gda.GodevarrowError as e:
            results.append(e)
    run_in_threads(take, [()] * 4)
    owners = sum(not isinstance(r, Exception) for r in results)
    del results
    gc.collect()
    bad_rounds += owners != 1 or len(releases) != 1
    releases.clear()
print("rounds with other than one owner and one release:", bad_rounds)
""".replace("TESTS_DIR", repr(str(REPO / "tests_py")))
    )
    assert "one release: 0" in out, out


POISON = """
import ctypes, sys
import numpy as np
lib = gda._godevarrow
try:
    lib.debug_panic()
except gda.InternalError:
    pass
else:
    raise SystemExit("debug_panic did not poison the library")

def refused(call):
    try:
        call()
    except gda.InternalError as e:
        return "refuses further work" in str(e)
    return False
"""


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        pytest.param(
            """
cap = pa.RecordBatchReader.from_batches(schema, [pa.record_batch({"x": [7]})]).__arrow_c_stream__()
assert refused(lambda: lib.import_stream(cap, False))
# the capsule still owns the producer's stream: pyarrow reads it
print(pa.RecordBatchReader._import_from_c_capsule(cap).read_all().to_pylist())
""",
            "[{'x': 7}]",
            id="stream-import",
        ),
        pytest.param(
            """
cap = np.arange(3).__dlpack__()
assert refused(lambda: lib.dlpack_import(cap))
name = ctypes.pythonapi.PyCapsule_GetName
name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
print(name(cap))  # not taken: its destructor deletes the tensor
""",
            "b'dltensor'",
            id="dlpack-import",
        ),
        pytest.param(
            """
owner = object()
before = sys.getrefcount(owner)
assert refused(lambda: lib.wrap_cuda_pointer(owner, "l", 0, 0, 0))
print("refcount kept" if sys.getrefcount(owner) == before else "refcount changed")
""",
            "refcount kept",
            id="cuda-array-interface",
        ),
        pytest.param(
            """
arr = pa.array([1, 2, 3])
assert refused(lambda: gda.array(arr))
print(arr.to_pylist())
""",
            "[1, 2, 3]",
            id="array-import",
        ),
    ],
)
def test_a_poisoned_library_takes_nothing(case, expected):
    out = run_case(POISON + case, GODEVARROW_ALLOW_PANIC_TEST="1")
    assert out.strip().splitlines()[-1] == expected, out


def test_a_poisoned_library_refuses_even_the_c_fast_paths():
    # a held import (kept in C) is exported in C: it must refuse all the same
    run_case(
        POISON.replace(
            "try:\n    lib.debug_panic()",
            "held = gda.array(pa.array([1, 2]))\nst = gda.stream(pa.table({'x': [1]}))\ntry:\n    lib.debug_panic()",
        )
        + """
assert refused(lambda: held.__arrow_c_array__())
assert refused(lambda: held.__arrow_c_schema__())
assert refused(lambda: iter(st))  # ArrayStream's C base (stream_base.c)
assert refused(lambda: st.close())
assert refused(lambda: lib.schema_equal(gda.schema(pa.int8()), gda.schema(pa.int8())))
""",
        GODEVARROW_ALLOW_PANIC_TEST="1",
    )


def test_a_truth_value_that_raises_is_an_error_not_true():
    run_case("""
class Undecided:
    def __bool__(self):
        raise ZeroDivisionError("no truth")

cap = pa.int8().__arrow_c_schema__()
try:
    gda._godevarrow.import_schema(cap, Undecided())
except ZeroDivisionError:
    pass
else:
    raise SystemExit("a failing __bool__ was taken as true")
assert gda.schema(pa.int8()).format == "c"
""")
