"""The adversarial corpus, accepted inputs: inputs godevarrow accepts, each
followed by every public operation (hostile_cases.FOLLOWUPS), each case in
its own process. Every operation gives correct data or a clean exception (never
InternalError, never a crash), data that fails full validation is refused by
validate(full=True), every struct is released exactly once, nothing stays
live, and the library still works afterwards. Plus the cases that need a
process of their own set up differently: Ctrl-C in a Python producer, a
failed host allocation, an absurd prefetch depth, threads racing a stream."""

from __future__ import annotations

import os
import subprocess
import textwrap

import hostile_cases
import pytest
from conftest import run_hostile_case, run_python

HERE = os.path.dirname(os.path.abspath(__file__))

# operations that must succeed on valid data; the others may refuse a type
# cleanly (cast, to_device, DLPack export; polars and DuckDB lack some types)
MUST_WORK_ON_VALID = {"len", "null_count", "validate", "slice", "pyarrow"}


@pytest.mark.fakecuda
@pytest.mark.parametrize("name", list(hostile_cases.FOLLOWUPS))
def test_followups_of_an_accepted_input(name):
    result = run_hostile_case(name, timeout=120)
    assert result["exception"] is None, f"the input was not accepted:\n{result.get('traceback')}"
    ops = result["ops"]
    assert set(ops) >= set(hostile_cases.FOLLOWUP_OPS) - (
        {"pyarrow", "polars", "duckdb"} if not result["valid"] else set()
    )
    assert result["valid"] == result["expect_valid"], f"validate(full=True) gave {ops['validate']}"
    for op, outcome in ops.items():
        if outcome == "ok":
            continue
        assert outcome["clean"], f"{op}: {outcome['exception']}: {outcome['message']}"
        assert not (result["valid"] and op in MUST_WORK_ON_VALID), f"{op} failed on valid data: {outcome}"
    if not result["valid"]:
        assert ops["validate"]["exception"] == "ArrowInvalid", ops["validate"]
    else:
        # every hand-on that worked was checked value by value, not only by length
        unchecked = [op for op in ("cast", "polars", "duckdb") if ops[op] == "ok" and op not in result["compared"]]
        assert not unchecked, f"no values were compared for {unchecked}"
    for struct_, count in result["releases"].items():
        assert count == 1, f"the {struct_} was released {count} times"
    live = {k: v for k, v in result["live"].items() if v}
    assert not live, f"godevarrow still holds {live}"
    assert result["health"] is None, f"the library is not healthy after the case: {result['health']}"


def run_case(code: str) -> subprocess.CompletedProcess:
    path = os.pathsep.join(p for p in (HERE, os.path.dirname(HERE), os.environ.get("PYTHONPATH")) if p)
    proc = run_python(textwrap.dedent(code), env={"PYTHONPATH": path})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@pytest.mark.parametrize("prefetch", [False, True])
def test_ctrl_c_in_a_python_producer_is_delivered_once(prefetch):
    run_case(
        f"""
        import pyarrow as pa, godevarrow as gda

        def batches():
            yield pa.record_batch({{"a": [1]}})
            raise KeyboardInterrupt("Ctrl-C in the producer")

        s = gda.stream(pa.RecordBatchReader.from_batches(pa.schema({{"a": pa.int64()}}), batches()))
        if {prefetch}:
            s = s.prefetch(2)
        assert next(s).num_rows == 1
        try:
            next(s)
        except KeyboardInterrupt:
            pass
        else:
            raise AssertionError("the interrupt was not delivered")
        for _ in range(3):
            try:
                next(s)
            except KeyboardInterrupt:
                raise AssertionError("the interrupt was delivered again")
            except gda.ArrowInvalid as e:
                assert "ended" in str(e), e
            else:
                raise AssertionError("the stream went on after its producer failed")
        s.close()
        assert gda.array(pa.array([1, None])).null_count == 1
        """
    )


def test_a_failed_host_allocation_is_a_memory_error():
    # A tensor that claims 2**37 int8 values over a small buffer: the copy
    # np.from_dlpack(x, copy=True) asks for allocates before it reads, and the
    # address space is limited so that the allocation fails.
    run_case(
        """
        import ctypes, resource
        import numpy as np, pyarrow as pa, godevarrow as gda
        import hostile_cases

        p = hostile_cases.Producer()
        s = p.schema(b"c", root="schema")
        a = p.array(1 << 37, [None, p.buffer(b"\\x01" * 64)], root="array")
        x = gda.array(hostile_cases.offer(s, a))
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (used + (8 << 30), hard))
        try:
            np.from_dlpack(x, copy=True)
        except MemoryError as e:
            assert "memory" in str(e), e
        else:
            raise AssertionError("no MemoryError")
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        del x
        assert gda.array(pa.array([1, None])).null_count == 1
        assert p.counts["array"] == 1
        """
    )


def test_an_absurd_prefetch_depth_is_bounded():
    run_case(
        """
        import pyarrow as pa, godevarrow as gda

        batches = [pa.record_batch({"a": [i]}) for i in range(5)]
        s = gda.stream(pa.RecordBatchReader.from_batches(batches[0].schema, batches)).prefetch(10**12)
        assert [b.to_pyarrow()["a"][0].as_py() for b in s] == list(range(5))
        """
    )


def test_threads_racing_one_stream_get_every_batch_once():
    run_case(
        """
        import pyarrow as pa, godevarrow as gda

        n = 200
        batches = (pa.record_batch({"a": [i]}) for i in range(n))
        s = gda.stream(pa.RecordBatchReader.from_batches(pa.schema({"a": pa.int64()}), batches))
        got, errors = [], []

        def read():
            try:
                for b in s:
                    got.append(b.to_pyarrow()["a"][0].as_py())
            except BaseException as e:
                errors.append(e)

        from conftest import run_in_threads

        run_in_threads(read, [()] * 4)
        assert not errors, errors
        assert sorted(got) == list(range(n))
        s.close()
        assert gda.array(pa.array([1, None])).null_count == 1
        """
    )


def _published_null_counts(pair, device=False) -> list[int]:
    """The null counts of an exported map: [map, entries, keys, values]."""
    import cabi

    a = cabi.struct_of(pair[1], cabi.ArrowDeviceArray).array if device else cabi.struct_of(pair[1], cabi.ArrowArray)
    entries = a.children[0].contents
    return [a.null_count, entries.null_count, entries.children[0].contents.null_count,
            entries.children[1].contents.null_count]  # fmt: skip


@pytest.mark.parametrize("path", ["held", "go"])
def test_a_map_with_unknown_null_counts_is_exported_with_its_entries_and_keys_counted(path):
    # The format lets a producer leave every count -1, and godevarrow keeps -1
    # where it may; but pyarrow before 26 aborts the process importing a map
    # whose entries' or keys' count is not 0 (MapArray checks the count, not
    # the bitmap), so an export on the host counts those two (export.go,
    # held.c). The held path re-exports the import as it is; the Go path is
    # taken by a slice.
    import godevarrow as gda

    p = hostile_cases.Producer()
    x = gda.array(hostile_cases.offer(*hostile_cases.map_array(p)))
    if path == "go":
        x = x.slice(0)
    assert _published_null_counts(x.__arrow_c_array__()) == [-1, 0, 0, -1]
    assert _published_null_counts(x.__arrow_c_device_array__(), device=True) == [-1, 0, 0, -1]
    del x
    assert p.counts == {"schema": 1, "array": 1}
