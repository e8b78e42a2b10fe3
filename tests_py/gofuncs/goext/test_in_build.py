"""Go functions of a user's package, called from Python. This file runs in a
process whose godevarrow is the build `python -m godevarrow build-ext` made
of examples/go_functions/filters and tests_py/gofuncs/goext/gotests (the package
gofuncs_under_test): tests_py/gofuncs/test_go_functions.py builds it and runs this
file in a subprocess, since a process runs one build of the extension."""

from __future__ import annotations

import gc
import inspect
import os
import signal
import threading
import time

import godevarrow as gda
import gofuncs_under_test as fx
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from conftest import corpus_params, run_in_threads, values_address

BATCH = pa.record_batch({"n": pa.array([1, 5, None, 10, 3], pa.int64()), "s": ["a", "b", "c", "d", "e"]})


def test_this_process_runs_the_users_build():
    assert os.path.samefile(gda._godevarrow.__file__, os.path.join(os.path.dirname(fx.__file__), "_godevarrow.abi3.so"))
    assert "at_least" in gda.go and "count_rows" in dir(gda.go) and len(gda.go) == len(fx.__all__)
    assert fx.at_least is gda.go.at_least is gda.go.at_least


def test_functions_carry_their_go_doc_comments_and_parameter_names():
    f = gda.go.at_least
    assert f.__doc__.startswith("AtLeast returns the rows of batch whose int64 column is at least min")
    assert "example.com/godevarrow-example/filters.AtLeast(batch *cdevice.Array, column string, min int64)" in f.__doc__
    assert list(inspect.signature(f).parameters) == ["batch", "column", "min"]
    assert inspect.signature(f).return_annotation == "Array"
    assert gda.go.wait_for_cancel.__doc__.startswith("WaitForCancel waits until its context is cancelled")
    # a function literal has no doc comment, and its parameters no names
    assert list(inspect.signature(gda.go.add).parameters) == ["arg1", "arg2"]
    assert "Go: example.com/godevarrow-tests/gotests.init." in gda.go.add.__doc__
    assert gda.go.device_of.devices == (gda.DeviceType.CPU, gda.DeviceType.CUDA)
    assert "at_least" in repr(gda.go) and "at_least(batch" in repr(gda.go.at_least)


def test_filter_aggregate_and_stream_match_pyarrow(leak_check):
    got = fx.at_least(BATCH, "n", 3)
    assert isinstance(got, gda.RecordBatch)
    want = BATCH.filter(pc.greater_equal(BATCH.column("n"), 3))
    assert pa.record_batch(got).equals(want)
    assert fx.total(BATCH, "n") == pc.sum(BATCH.column("n")).as_py() == 19
    assert fx.total(batch=BATCH, column="n") == 19
    assert fx.at_least(BATCH, "n", 100).num_rows == 0
    assert gda.call("total", BATCH, "n") == 19

    reads = []

    def batches():
        for i in range(3):
            reads.append(i)
            yield BATCH

    out = fx.stream_at_least(pa.RecordBatchReader.from_batches(BATCH.schema, batches()), "n", 5)
    assert isinstance(out, gda.ArrayStream) and reads == [], "the transform ran before its result was read"
    first = next(iter(out))
    assert reads == [0] and first.to_pydict() == {"n": [5, 10], "s": ["b", "d"]}
    assert pa.table(out).num_rows == 4 and reads == [0, 1, 2]


def test_any_producer_and_every_godevarrow_kind_as_arguments(leak_check):
    import polars as pl

    assert fx.total(pl.DataFrame({"n": [1, 2, 3]}).to_arrow().to_batches()[0], "n") == 6
    assert fx.total(gda.record_batch(BATCH), "n") == 19
    table = pa.table({"n": [1, 2, 3]})
    assert fx.rows(table) == 3 and fx.rows(gda.table(table)) == 3
    assert fx.rows(pl.DataFrame({"n": [1, 2]})) == 2
    assert fx.count_rows(table) == 3
    assert fx.count_rows(pa.RecordBatchReader.from_batches(BATCH.schema, [BATCH, BATCH])) == 10
    stream = gda.stream(table)
    assert fx.count_rows(stream) == 3
    with pytest.raises(gda.ArrowInvalid, match="consumed"):
        fx.count_rows(stream)  # a stream is moved into the call


def test_zero_copy_in_and_out(leak_check):
    out = fx.passthrough(BATCH)
    assert values_address(pa.record_batch(out).column(0)) == values_address(BATCH.column(0))
    table = pa.table({"n": [1, 2, 3]})
    back = pa.table(fx.same_table(table))
    assert back.equals(table) and values_address(back.column(0).chunks[0]) == values_address(table.column(0).chunks[0])
    source = pa.array([1, 2, 3, 4], pa.int64())
    sliced = pa.array(fx.slice_of(source, 1, 2))
    assert sliced.to_pylist() == [2, 3]
    # the slice's first value is the source's second, in place (8-byte int64s)
    assert values_address(sliced) + 8 * sliced.offset == values_address(source) + 8


@pytest.mark.parametrize("name", corpus_params())
def test_every_type_of_the_gold_corpus_goes_through_a_go_function(name, corpus_dir, leak_check):
    with pa.ipc.open_stream(corpus_dir / name) as reader:
        table = reader.read_all()
    for batch in table.to_batches():
        back = pa.record_batch(fx.passthrough(batch))
        assert back.equals(batch) and back.schema.equals(batch.schema, check_metadata=True)
    assert pa.table(fx.same_table(table)).equals(table)
    assert fx.rows(table) == fx.count_rows(table) == table.num_rows


def test_scalars_round_trip():
    assert fx.add(2, 3) == 5 and fx.add(a := 2**62, a) == -(2**63)  # Go's int64 arithmetic wraps
    assert fx.halve(3) == 1.5 and fx.halve(1.0) == 0.5
    assert fx.negate(True) is False
    assert fx.shout("grün") == "GRÜN!"
    assert fx.max_uint() == 2**64 - 1
    assert fx.small(-128) == -128
    assert fx.describe_args(True, -7, 4_000_000_000, 0.5, "x\x00y") == 'true -7 4000000000 0.5 "x\\x00y"'
    assert fx.fail.__signature__.return_annotation == "None"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: fx.small(300), "300 does not fit in int8"),
        (lambda: fx.small(-(2**70)), "argument 1 \\(arg1\\): -1180591620717411303424 does not fit in a Go integer"),
        (lambda: fx.max_uint.__call__(2**64), "takes 0 arguments|too many"),
        (lambda: fx.small(True), "must be an int, not a bool"),
        (lambda: fx.small("1"), "argument 1 \\(arg1\\)"),
        (lambda: fx.halve("1"), "must be a float, not str"),
        (lambda: fx.negate(1), "must be a bool, not int"),
        (lambda: fx.shout(b"x"), "must be a str, not bytes"),
        (lambda: fx.total(BATCH), "missing a required argument: 'column'"),
        (lambda: fx.total(BATCH, "n", 3), "too many positional arguments"),
        (lambda: fx.total(42, "n"), "argument 1 \\(batch\\)"),
        (lambda: fx.rows(BATCH.column(0).type), "argument 1"),
    ],
)
def test_arguments_that_do_not_fit_are_type_errors(call, message):
    with pytest.raises(TypeError, match=message) as info:
        call()
    assert isinstance(info.value, gda.GodevarrowError)


def test_a_stream_argument_is_converted_once_and_invalid_data_keeps_its_class(leak_check):
    reader = pa.RecordBatchReader.from_batches(BATCH.schema, [BATCH])
    with pytest.raises(gda.GodevarrowTypeError, match=r"stream_at_least\(\) argument 2 \(column\): must be a str"):
        fx.stream_at_least(reader, 42, 1)  # the reader was converted (consumed) before argument 2 failed
    with pytest.raises(ValueError, match="the producer's data is broken") as info:
        fx.total(FailingProducer(), "n")
    assert isinstance(info.value, gda.GodevarrowError) and not isinstance(info.value, TypeError)


class FailingProducer:
    """An array producer that fails as it exports."""

    def __arrow_c_array__(self, requested_schema=None):
        raise ValueError("the producer's data is broken")


def test_a_go_error_is_a_python_exception_with_the_go_message(leak_check):
    with pytest.raises(gda.GoError, match="^fail: the disk is full$") as info:
        fx.fail("the disk is full")
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, gda.GodevarrowError)
    with pytest.raises(gda.GoError, match='total: the batch has 0 columns named "zz", not one'):
        fx.total(BATCH, "zz")
    with pytest.raises(gda.GoError, match=r"nil_array: returned a nil \*cdevice.Array and no error"):
        fx.nil_array()
    with pytest.raises(AttributeError, match="no Go function 'nope' in this build"):
        gda.go.nope  # noqa: B018
    with pytest.raises(AttributeError, match="no Go function"):
        gda.call("nope")


def test_a_panic_is_an_exception_and_the_library_goes_on(leak_check):
    for _ in range(3):
        with pytest.raises(gda.GoError, match="^explode panicked: boom\ngoroutine") as info:
            fx.explode("boom")
        assert "gotests.Explode" in str(info.value)  # the stack names the function
    out = fx.explode_later(pa.RecordBatchReader.from_batches(BATCH.schema, [BATCH]))
    with pytest.raises(gda.GoError, match="explode_later panicked: a reader's Next panicked"):
        next(iter(out))
    del out
    assert fx.total(BATCH, "n") == 19
    assert pa.record_batch(gda.record_batch(BATCH)).equals(BATCH)


def test_ctrl_c_cancels_the_context():
    # polars installs a SIGINT handler of its own (signal-hook) that chains
    # to the one it found: Ctrl-C must still reach the call, without a loop
    import polars  # noqa: F401

    entered, cancelled = fx.wait_for_cancel_calls("entered"), fx.wait_for_cancel_calls("cancelled")
    late = []

    def interrupt():
        # Ctrl-C once the call waits in Go (this thread calls Go meanwhile:
        # Go runs without the GIL); the deadline is a hang guard
        deadline = time.monotonic() + 30
        while fx.wait_for_cancel_calls("entered") == entered:
            if time.monotonic() > deadline:
                late.append("the call never began to wait")
                break
            time.sleep(0.001)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt).start()
    with pytest.raises(KeyboardInterrupt):
        fx.wait_for_cancel()
    assert not late, late
    assert fx.wait_for_cancel_calls("entered") == entered + 1
    deadline = time.monotonic() + 30  # a hang guard
    while fx.wait_for_cancel_calls("cancelled") == cancelled and time.monotonic() < deadline:
        time.sleep(0.01)
    assert fx.wait_for_cancel_calls("cancelled") == cancelled + 1, "the Go function's context was not cancelled"
    with pytest.raises(gda.GoError, match='"started" is neither "entered" nor "cancelled"'):
        fx.wait_for_cancel_calls("started")
    assert fx.add(1, 1) == 2


def test_threads_run_go_at_the_same_time_without_the_gil():
    results = []
    run_in_threads(lambda: results.append(fx.rendezvous(4)), [()] * 4)
    assert results == [True] * 4


def test_calls_from_many_threads(leak_check):
    def work(i):
        for _ in range(50):
            assert fx.total(BATCH, "n") == 19
            assert pa.record_batch(fx.at_least(BATCH, "n", i)).num_rows == sum(1 for v in [1, 5, 10, 3] if v >= i)

    run_in_threads(work, [(i,) for i in range(6)])


class GilHeld:
    """A device-array producer whose struct's release needs the GIL (as
    pylibcudf's does) and is counted (tests_py/gilprod)."""

    def __init__(self, batch):
        self.batch = batch

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        import gil_producer

        schema, array = self.batch.__arrow_c_device_array__()
        return schema, gil_producer.wrap(array, self)


def test_arguments_are_released_exactly_once_with_the_gil(leak_check):
    import gil_producer

    before = gil_producer.releases()
    assert fx.total(GilHeld(BATCH), "n") == 19
    with pytest.raises(gda.GoError, match='total: the batch has 0 columns named "zz", not one'):
        fx.total(GilHeld(BATCH), "zz")
    out = fx.passthrough(GilHeld(BATCH))
    assert pa.record_batch(out).equals(BATCH)
    del out
    # small takes an int8: the batch is refused before it is imported
    with pytest.raises(TypeError, match=r"small\(\) argument 1 \(arg1\)"):
        fx.small(GilHeld(BATCH))
    gc.collect()
    # three structs were handed over, each released once
    assert gil_producer.releases() - before == 3


@pytest.mark.fakecuda
def test_cuda_data_arrives_with_its_event_waited_and_comes_back_zero_copy(device_leak_check):
    import fakecuda

    values = pa.array([1, 2, 3, 4], pa.int64())
    producer = fakecuda.CudaProducer(values)
    arr = gda.array(producer)
    syncs = fakecuda.LIB.fakecuda_sync_count()
    assert fx.device_of(arr) == "cuda:0"
    assert fakecuda.LIB.fakecuda_sync_count() > syncs, "the producer's sync event was not waited on"
    syncs = fakecuda.LIB.fakecuda_sync_count()
    assert fx.has_event(arr) is True  # OwnEvents: handed over, not waited on
    assert fakecuda.LIB.fakecuda_sync_count() == syncs

    part = fx.slice_of(arr, 1, 2)
    assert part.device == gda.Device("cuda", 0) and len(part) == 2
    caps = part.__arrow_c_device_array__()  # the struct lives as long as its capsule
    struct = fakecuda.device_array_struct(caps[1])
    assert struct.device_type == 2 and struct.sync_event, "the result lost the event its data is ready after"
    assert struct.array.buffers[1] == producer.device_buffers[0], "the result is not the producer's memory"
    assert part.to_device("cpu").to_pylist() == [2, 3]

    with pytest.raises(NotImplementedError, match=r"cpu_only accepts data on \[cpu\], and this is on cuda:0") as info:
        fx.cpu_only(arr)
    assert ".to_device()" in str(info.value)
    del arr, part, struct, caps, info
    gc.collect()
    assert producer.releases == 1


def test_loading_a_second_build_is_refused():
    import glob
    import importlib.util
    import site

    stock = [p for d in site.getsitepackages() for p in glob.glob(os.path.join(d, "godevarrow", "_godevarrow*.so"))]
    assert stock, "the installed godevarrow's extension was not found"
    spec = importlib.util.spec_from_file_location("godevarrow._godevarrow", stock[0])
    with pytest.raises(ImportError, match="already runs another build of godevarrow's extension"):
        importlib.util.module_from_spec(spec)


def test_a_table_result_is_a_table(leak_check):
    rows = fx.first_rows(pa.table(BATCH), 2)
    assert isinstance(rows, gda.Table) and rows.column_names == ["n", "s"]
    assert rows.to_pyarrow().equals(pa.table(BATCH).slice(0, 2))


def test_reloading_after_a_rebuild_says_to_restart(tmp_path):
    # last in this file: it leaves the package's extension a copy of itself.
    # A rebuild writes a new file over the old one (build-ext moves it into
    # place); this process cannot load it, and reload says so
    import importlib
    import shutil

    importlib.reload(fx)  # the same build: reloading is harmless
    extension = os.path.join(os.path.dirname(fx.__file__), "_godevarrow.abi3.so")
    shutil.copy2(extension, tmp_path / "rebuilt.so")
    os.replace(tmp_path / "rebuilt.so", extension)
    with pytest.raises(
        ImportError, match=r"was rebuilt .* Restart the Python process \(in Jupyter: restart the kernel\)"
    ):
        importlib.reload(fx)
    assert fx.first_rows(pa.table(BATCH), 1).num_rows == 1  # the old build goes on working
