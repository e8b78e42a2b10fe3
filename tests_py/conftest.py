"""Shared fixtures and helpers of the Python suite.

Test modules import the helpers with ``from conftest import ...`` (tests_py has
no ``__init__.py``, so pytest puts this directory on ``sys.path``). The tests
live in one folder per part of the package (api, protocols, streams, ...),
none of them a package either: the helpers shared by several folders (cabi,
fakecuda, gil_producer) stay here, the others beside the tests that use them.
"""

from __future__ import annotations

import gc
import importlib.abc
import os
import pathlib
import subprocess
import sys
import textwrap
import threading

import godevarrow as gda
import pyarrow as pa
import pytest


class _WithoutPandas(importlib.abc.MetaPathFinder):
    """pandas is installed for the to_pandas tests, which run it in child
    processes (test_tables_in_use.py); the suite itself runs without it:
    pyarrow's to_pylist, the reference of the values tests, changes when
    pandas is importable (nanoseconds become pandas objects, or are
    truncated), and godevarrow's answers do not depend on pandas."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.partition(".")[0] == "pandas":
            raise ModuleNotFoundError(f"No module named {name!r} (tests_py/conftest.py hides it)", name=name)


sys.meta_path.insert(0, _WithoutPandas())

REPO = pathlib.Path(__file__).resolve().parent.parent
# gofuncs/goext/ runs only in a process whose godevarrow is the build of its
# Go functions (gofuncs/test_go_functions.py starts one)
collect_ignore = [] if os.environ.get("GODEVARROW_EXTENSION") else ["gofuncs/goext"]
CORPUS = pathlib.Path(
    os.environ.get("GODEVARROW_CORPUS", REPO.parent / "shared" / "testdata" / "arrow-ipc-integration")
)


# ------------------------------------------------------------------ corpus


def corpus_files() -> list[pathlib.Path]:
    return sorted(CORPUS.glob("*.stream")) if CORPUS.is_dir() else []


def corpus_params() -> list:
    """One pytest param per corpus file (id: the file name without .stream),
    or a single placeholder that the ``corpus_dir`` fixture skips."""
    files = corpus_files()
    if not files:
        return [pytest.param("missing", id="corpus-missing")]
    return [pytest.param(f.name, id=f.name.removesuffix(".stream")) for f in files]


@pytest.fixture
def corpus_dir() -> pathlib.Path:
    if not CORPUS.is_dir():
        pytest.skip(f"the Arrow IPC gold corpus is not at {CORPUS} (it lives in shared/ beside the checkout)")
    return CORPUS


# ------------------------------------------------------------- leak checks


def snapshot() -> tuple[dict[str, int], int]:
    gc.collect()
    return gda.debug_live_objects(), pa.total_allocated_bytes()


def _forget_last_failure() -> None:
    # pytest keeps the traceback of the last failed test in sys.last_*; its
    # frames hold that test's arrays, which would show up as a leak later.
    for name in ("last_type", "last_value", "last_traceback", "last_exc"):
        if hasattr(sys, name):
            setattr(sys, name, None)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        # an expected failure (xfail) keeps its traceback as a failure does
        item.stash[_CALL_FAILED] = report.failed or hasattr(report, "wasxfail")
    return report


_CALL_FAILED = pytest.StashKey[bool]()


def pytest_collection_modifyitems(config, items):
    # `fakecuda` tests need the strict fake driver loaded. `nocuda` tests
    # describe life without a driver: `make test` runs them in a second pass
    # with GODEVARROW_LIBCUDA pointing nowhere; in a process that has a (fake
    # or real) driver they cannot hold.
    import fakecuda

    skip_nocuda = pytest.mark.skip(reason="this process has a CUDA driver; run with GODEVARROW_LIBCUDA=/nonexistent")
    skip_fakecuda = pytest.mark.skip(
        reason="the fake CUDA driver is not configured: run through `make test`, "
        "or set GODEVARROW_LIBCUDA to tests_go/fakecuda/libfakecuda.so"
    )
    for item in items:
        if "nocuda" in item.keywords and gda.cuda_available():
            item.add_marker(skip_nocuda)
        if "fakecuda" in item.keywords and fakecuda.LIB is None:
            item.add_marker(skip_fakecuda)


@pytest.fixture
def leak_check(request):
    """Asserts that the Go side and pyarrow's allocator return to their
    baselines once the test dropped its objects (not checked when the test
    itself failed: its traceback keeps its objects alive)."""
    _forget_last_failure()
    before = snapshot()
    yield
    if request.node.stash.get(_CALL_FAILED, False):
        _forget_last_failure()
        return
    after = snapshot()
    assert after[0] == before[0], f"Go objects leaked: before {before[0]}, after {after[0]}"
    assert after[1] == before[1], f"pyarrow bytes leaked: before {before[1]}, after {after[1]}"


@pytest.fixture
def device_leak_check(leak_check):
    """leak_check, and the fake CUDA driver's live allocations, events and
    streams return to their baselines too."""
    import fakecuda

    gc.collect()
    before = fakecuda.live()
    yield
    gc.collect()
    assert fakecuda.live() == before, "device allocations, events or streams leaked"


def pytest_sessionfinish(session, exitstatus):
    """Nothing may be left on the fake devices once every test of the session
    has run, whichever files ran and in whatever order: anything still
    allocated fails the session (exit status 1) with what was left."""
    import fakecuda

    if fakecuda.LIB is None:
        return
    _forget_last_failure()
    gc.collect()
    left = {k: v for k, v in fakecuda.live().items() if v}
    if not left:
        return
    message = f"left on the fake CUDA devices at the end of the session: {left}"
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write("\n")
        reporter.write_line(message, red=True, bold=True)
    else:
        print(message, file=sys.stderr)
    if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def values_address(arr: pa.Array) -> int:
    """The address of a pyarrow array's values buffer (buffer 1): equal addresses mean no copy."""
    return arr.buffers()[1].address


def live(key: str) -> int:
    """One counter of ``gda.debug_live_objects()`` after a full collection."""
    gc.collect()
    return gda.debug_live_objects()[key]


def run_in_threads(target, args: list[tuple]) -> None:
    """Runs ``target(*a)`` for each ``a`` in ``args``, each on a thread of its
    own, all at once, and waits for every one of them."""
    threads = [threading.Thread(target=target, args=a) for a in args]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def run_hostile_case(name: str, timeout: float) -> dict:
    """Runs the case `name` of adversarial/hostile_cases.py in a process of its
    own and returns the result it prints, after checking that the process did
    not crash."""
    import json

    here = str(pathlib.Path(__file__).resolve().parent)
    proc = subprocess.run(
        [sys.executable, os.path.join(here, "adversarial", "hostile_cases.py"), name],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=here,
        # the cases import cabi and fakecuda from here
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p)),
    )
    assert proc.returncode == 0, f"the case crashed the process (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_python(code: str, *, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
    )


# --------------------------------------------------------------- producers


class ArrayOnly:
    """Offers only ``__arrow_c_array__`` of ``inner`` (forces the plain C Data path)."""

    def __init__(self, inner):
        self.inner = inner

    def __arrow_c_array__(self, requested_schema=None):
        return self.inner.__arrow_c_array__(requested_schema)


class DeviceArrayOnly:
    """Offers only ``__arrow_c_device_array__`` of ``inner``."""

    def __init__(self, inner):
        self.inner = inner

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        return self.inner.__arrow_c_device_array__(requested_schema, **kwargs)


class StreamOnly:
    """Offers only ``__arrow_c_stream__`` of ``inner``."""

    def __init__(self, inner):
        self.inner = inner

    def __arrow_c_stream__(self, requested_schema=None):
        return self.inner.__arrow_c_stream__(requested_schema)


class DeviceStreamOnly:
    """Offers only ``__arrow_c_device_stream__`` of ``inner``."""

    def __init__(self, inner):
        self.inner = inner

    def __arrow_c_device_stream__(self, requested_schema=None, **kwargs):
        return self.inner.__arrow_c_device_stream__(requested_schema, **kwargs)


class Capsules:
    """Hands out the given capsules from every protocol method, whatever is asked."""

    def __init__(self, schema=None, array=None, stream=None):
        self.schema, self.array, self.stream = schema, array, stream

    def __arrow_c_schema__(self):
        return self.schema

    def __arrow_c_array__(self, requested_schema=None):
        return self.schema, self.array

    def __arrow_c_stream__(self, requested_schema=None):
        return self.stream


class DeviceCapsules:
    """Hands out the given capsules from the device protocol methods:
    ``array`` is a (schema, device array) capsule pair, ``stream`` a device
    stream capsule."""

    def __init__(self, array=None, stream=None):
        self.array, self.stream = array, stream

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        return self.array

    def __arrow_c_device_stream__(self, requested_schema=None, **kwargs):
        return self.stream


class Spy:
    """Forwards the protocol methods ``inner`` has and records which were called."""

    METHODS = (
        "__arrow_c_schema__",
        "__arrow_c_array__",
        "__arrow_c_device_array__",
        "__arrow_c_stream__",
        "__arrow_c_device_stream__",
    )

    def __init__(self, inner):
        self.inner = inner
        self.calls: list[str] = []

    def __getattr__(self, name):
        if name not in self.METHODS or not hasattr(self.inner, name):
            raise AttributeError(name)
        method = getattr(self.inner, name)

        def call(*args, **kwargs):
            self.calls.append(name)
            return method(*args, **kwargs)

        return call
