"""Held CUDA imports (docs/design.md, "Held imports"): a CUDA array whose
schema godevarrow has read before is checked in C and kept as the producer
made it, like a CPU one. These tests hold the C gate to what the Go import
does: it reads nothing from the device (the offsets are checked by the first
operation that reads them, after the producer's sync_event, with the Go
import's words), rejects buffers on another device, and re-exports the
producer's own buffers and event."""

from __future__ import annotations

import ctypes
import struct

import fakecuda as fake
import godevarrow as gda
import pyarrow as pa
import pytest
from godevarrow import _godevarrow as lib

pytestmark = pytest.mark.fakecuda


def held_imports() -> int:
    return lib.debug_counters().held_imports


class RawStrings:
    """What CudaProducer reads of a pyarrow array, for string buffers pyarrow
    would refuse to build."""

    type = pa.string()
    null_count = 0
    offset = 0

    def __init__(self, offsets: list[int], data: bytes) -> None:
        self._buffers = [None, pa.py_buffer(struct.pack(f"<{len(offsets)}i", *offsets)), pa.py_buffer(data)]
        self._length = len(offsets) - 1

    def __len__(self) -> int:
        return self._length

    def buffers(self) -> list:
        return self._buffers


def strings_with_offsets(offsets: list[int], data: bytes) -> RawStrings:
    return RawStrings(offsets, data)


def warm_schema(values: pa.Array) -> None:
    """Lets godevarrow read the producer's schema once (the held-schema table
    holds a schema after its first import)."""
    gda.array(fake.CudaProducer(values))


def test_a_cuda_import_is_held_and_its_export_is_the_producers_data(device_leak_check):
    values = pa.array(["x", "yy", None, "zzz"])
    warm_schema(values)
    producer = fake.CudaProducer(values)
    before = held_imports()
    imported = gda.array(producer)
    assert held_imports() == before + 1
    assert imported.device == gda.Device.cuda(0) and len(imported) == 4 and imported.null_count == 1
    # the re-export shares the producer's buffers and carries its event
    _, capsule = imported.__arrow_c_device_array__()
    exported = fake.device_array_struct(capsule)
    assert (exported.device_type, exported.device_id) == (2, 0)
    event = ctypes.c_void_p.from_address(exported.sync_event).value
    assert event == producer.event.value
    buffers = [exported.array.buffers[i] for i in range(exported.array.n_buffers)]
    assert [b for b in buffers if b] == producer.device_buffers
    # the data, copied to the host, is the producer's
    assert pa.array(imported.to_device("cpu")).equals(values)
    del capsule, exported
    assert producer.releases == 0
    del imported
    assert producer.releases == 1


def test_offsets_are_read_only_after_the_producers_event(device_leak_check):
    # The producer's copies are still queued when it hands the array over (the
    # fake driver runs them only when its event is waited for); its first
    # offset is past its last. Read before the wait, the offsets would be the
    # zeros of fresh memory and the array would pass.
    bad = strings_with_offsets([4, 5, 3], b"hello")
    warm_schema(pa.array(["a", "b"]))
    producer = fake.CudaProducer(bad)
    before = held_imports()
    copies = fake.LIB.fakecuda_bytes_copied(fake.DTOH)
    imported = gda.array(producer)
    # the import is held and reads nothing: the offsets stay on the device...
    assert held_imports() == before + 1
    assert fake.LIB.fakecuda_bytes_copied(fake.DTOH) == copies
    # ...until an operation needs them
    with pytest.raises(gda.ArrowInvalid, match="negative or decreasing") as info:
        imported.to_device("cpu")
    info.value.__traceback__ = None
    assert producer.releases == 0
    del imported, info
    assert producer.releases == 1


@pytest.mark.parametrize(
    "offsets, data, match",
    [
        ([0, 1, -1], b"ab", "negative or decreasing"),
        ([-2, 1, 3], b"abc", "negative or decreasing"),
        ([3, 1, 2], b"abc", "negative or decreasing"),
    ],
)
def test_every_operation_that_reads_offsets_rejects_what_the_cpu_import_rejects(
    offsets, data, match, device_leak_check
):
    # the offsets at the ends of the array's range, the CPU import's check (a
    # full check of every offset is validate(full=True)'s job, on the host)
    values = strings_with_offsets(offsets, data)
    warm_schema(pa.array(["a"]))
    producer = fake.CudaProducer(values)
    imported = gda.array(producer)
    operations = [("validate", (False,)), ("to_device", ("cpu",)), ("to_pylist", ())]
    for name, args in operations:
        with pytest.raises(gda.ArrowInvalid, match=match) as info:
            getattr(imported, name)(*args)
        info.value.__traceback__ = None
    del imported, info
    assert producer.releases == 1


def test_a_buffer_on_another_device_is_not_held(device_leak_check):
    values = pa.array(["p", "q"])
    warm_schema(values)
    producer = fake.CudaProducer(values, device=1)
    producer.struct.device_id = 0  # declares cuda:0, holds cuda:1 memory
    with pytest.raises(gda.ArrowInvalid, match="device 1") as info:
        gda.array(producer)
    info.value.__traceback__ = None
    assert producer.releases == 1


@pytest.mark.parametrize("fn", ["cuStreamWaitEvent", "cuMemcpyDtoHAsync_v2", "cuStreamSynchronize"])
def test_a_driver_failure_fetching_the_offsets_is_reported_by_the_operation(fn, device_leak_check):
    values = pa.array(["x", "yy"])
    warm_schema(values)
    producer = fake.CudaProducer(values)
    imported = gda.array(producer)
    fake.LIB.fakecuda_fail_nth(fn.encode(), 1, fake.CUDA_ERROR_OUT_OF_MEMORY)
    try:
        with pytest.raises(gda.DeviceError, match=f"{fn}.*CUDA_ERROR_OUT_OF_MEMORY") as info:
            imported.to_device("cpu")
        info.value.__traceback__ = None
    finally:
        fake.LIB.fakecuda_clear_faults()
    del imported, info
    assert producer.releases == 1


def test_a_held_cuda_batch_travels_on(device_leak_check):
    batch = pa.record_batch({"n": [1, 2, 3], "s": ["a", None, "ccc"], "l": [[1], [], [2, 3]]})
    on_device = gda.record_batch(batch).to_device("cuda:0")

    class Fresh:
        def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
            return on_device.__arrow_c_device_array__()

    gda.record_batch(Fresh())  # the schema enters the table
    before = held_imports()
    held = gda.record_batch(Fresh())
    assert held_imports() == before + 1
    assert held.device == gda.Device.cuda(0) and held.num_rows == 3 and held.column_names == ["n", "s", "l"]
    # a plain export of device data copies to the host; to_device goes through Go
    assert pa.RecordBatch._import_from_c_capsule(*held.__arrow_c_array__()).equals(batch)
    assert pa.record_batch(held.to_device("cpu")).equals(batch)
    assert pa.record_batch(held.to_device("cuda:1").to_device("cpu")).equals(batch)
    del held
