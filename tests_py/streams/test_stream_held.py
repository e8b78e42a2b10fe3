"""Arrays read from a foreign stream are held in C (docs/design.md, "Held
imports"; docs/performance.md, "Reading a stream"): no Go data is built per
array, each is released exactly once, and the extension's iterator loses
nothing when a loop stops early."""

from __future__ import annotations

import gc

import godevarrow as gda
import pyarrow as pa
import pytest
from godevarrow import _godevarrow as lib


def held_imports() -> int:
    gc.collect()
    return lib.debug_counters().held_imports


def source_batches(n: int) -> list[pa.RecordBatch]:
    return [pa.record_batch({"x": [i, i + 1], "s": [f"a{i}", None]}) for i in range(n)]


def reader(n: int) -> pa.RecordBatchReader:
    batches = source_batches(n)
    return pa.RecordBatchReader.from_batches(batches[0].schema, batches)


def buffer_addresses(batch: pa.RecordBatch) -> list[list[int | None]]:
    return [[b.address if b is not None else None for b in col.buffers()] for col in batch.columns]


def test_the_arrays_of_a_foreign_stream_are_held_and_released(leak_check):
    before = held_imports()
    batches = source_batches(5)
    kept = list(gda.stream(pa.RecordBatchReader.from_batches(batches[0].schema, batches)))
    assert held_imports() == before + 5
    assert all(isinstance(b, gda.RecordBatch) for b in kept)
    assert [b.to_pyarrow().column(0).to_pylist() for b in kept] == [[i, i + 1] for i in range(5)]
    # each held batch re-exports the producer's buffers: pyarrow reads them in
    # place, every buffer at the address the producer's batch has it
    back = [pa.record_batch(b) for b in kept]
    assert back[2].column(1).to_pylist() == ["a2", None]
    assert [buffer_addresses(b) for b in back] == [buffer_addresses(b) for b in batches]
    assert all(a is not None for b in back for a in buffer_addresses(b)[1][1:])  # offsets and data: real buffers
    del kept, back, batches
    assert held_imports() == before


def test_iteration_uses_the_extensions_iterator_and_loses_nothing(leak_check):
    s = gda.stream(reader(6))
    it = iter(s)
    assert type(it).__name__ == "StreamIterator" and iter(it) is it
    first = []
    for b in s:
        first.append(b.to_pyarrow().column(0)[0].as_py())
        if len(first) == 2:
            break
    # a new loop, next() and read_all() go on where the last one stopped
    assert next(s).to_pyarrow().column(0)[0].as_py() == 2
    rest = [b.to_pyarrow().column(0)[0].as_py() for b in s.read_all()]
    assert first == [0, 1] and rest == [3, 4, 5]
    assert list(s) == [] and list(it) == []
    with pytest.raises(StopIteration):
        next(s)
    s.close()
    with pytest.raises(gda.ArrowInvalid, match="consumed"):
        list(s)


def test_a_stream_whose_layout_the_gate_does_not_check_takes_the_go_import(leak_check):
    # a union is not a held layout: its arrays are Go arrays, still zero-copy
    u = pa.UnionArray.from_sparse(pa.array([0, 1], pa.int8()), [pa.array([1, 2]), pa.array(["a", "b"])])
    batch = pa.record_batch({"u": u})
    before = held_imports()
    got = list(gda.stream(pa.RecordBatchReader.from_batches(batch.schema, [batch, batch])))
    assert held_imports() == before
    assert [b.to_pyarrow().equals(batch) for b in got] == [True, True]


def test_a_producer_error_mid_stream_is_raised_once_through_the_iterator(leak_check):
    def batches():
        yield pa.record_batch({"x": [1]})
        raise ValueError("the producer failed")

    s = gda.stream(pa.RecordBatchReader.from_batches(pa.schema({"x": pa.int64()}), batches()))
    got = []
    with pytest.raises(gda.StreamError, match="the producer failed") as info:
        for b in s:
            got.append(b)
    info.value.__traceback__ = None
    assert len(got) == 1
    with pytest.raises(gda.ArrowInvalid, match="ended with an error"):
        next(s)
    s.close()
    del got


@pytest.mark.fakecuda
def test_the_cuda_arrays_of_a_foreign_device_stream_are_held(device_leak_check):
    from conftest import DeviceStreamOnly
    from godevarrow._stream import stream_of

    batches = [pa.record_batch({"x": [i, i + 1], "s": [f"a{i}", None]}) for i in range(3)]
    on_device = [gda.record_batch(b).to_device("cuda:0") for b in batches]
    inner = stream_of(on_device)
    before = held_imports()
    got = list(gda.stream(DeviceStreamOnly(inner)))
    assert held_imports() == before + 3
    assert [b.device for b in got] == [gda.Device.cuda(0)] * 3
    assert [pa.record_batch(b.to_device("cpu")).equals(want) for b, want in zip(got, batches)] == [True] * 3
    del got, on_device, inner
