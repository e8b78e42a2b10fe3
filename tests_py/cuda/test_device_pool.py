"""Device memory of copies: the pool (gosrc/device/cuda/devpool.c), where a
freed block of up to 4 MiB is kept and reused after one synchronization of
the device's context (what cuMemFree would have waited for) instead of
paying a cuMemAlloc + cuMemFree pair per copy; and the arena of one copy
(gosrc/cdevice/arena.go), one allocation for every buffer of an array."""

from __future__ import annotations

import ctypes
import gc

import fakecuda as fake
import godevarrow as gda
import numpy as np
import pyarrow as pa
import pytest
from conftest import DeviceArrayOnly

pytestmark = pytest.mark.fakecuda


def calls(fn: str) -> int:
    return fake.LIB.fakecuda_call_count(fn.encode())


def pooled() -> tuple[int, int]:
    c = gda._godevarrow.debug_counters()
    return c.pooled_device_blocks, c.pooled_device_bytes


def data_pointer(arr: gda.Array) -> int:
    caps = arr.__arrow_c_device_array__()  # the struct lives as long as its capsule
    return int(fake.device_array_struct(caps[1]).array.buffers[1])


def host(n: int) -> gda.Array:
    return gda.array(pa.array(np.arange(n, dtype=np.int64)))


def test_a_freed_block_is_reused_after_one_synchronization(device_leak_check):
    src = host(1024)  # 8 KB
    first = src.to_device("cuda:0")
    p = data_pointer(first)
    del first
    gc.collect()
    assert pooled() == (1, 8192)
    allocs, syncs = calls("cuMemAlloc_v2"), calls("cuCtxSynchronize")
    second = src.to_device("cuda:0")
    assert data_pointer(second) == p
    assert calls("cuMemAlloc_v2") == allocs, "the pool's block was not reused"
    # work queued before the block was freed may still read it: the context
    # is synchronized first, as cuMemFree would have
    assert calls("cuCtxSynchronize") == syncs + 1
    assert pooled() == (0, 0)
    assert second.to_pylist() == list(range(1024))

    third = src.to_device("cuda:0")  # nothing idle: a new allocation
    assert calls("cuMemAlloc_v2") == allocs + 1 and data_pointer(third) != p
    del second, third
    gc.collect()
    assert pooled() == (2, 16384)
    # one synchronization makes every block freed before it reusable
    syncs = calls("cuCtxSynchronize")
    again = [src.to_device("cuda:0") for _ in range(2)]
    assert calls("cuCtxSynchronize") == syncs + 1
    assert calls("cuMemAlloc_v2") == allocs + 1
    assert [a.to_pylist()[-1] for a in again] == [1023, 1023]
    del again


def test_a_block_freed_while_queued_work_reads_it_is_reused_after_that_work(device_leak_check):
    # the fake runs a stream's copies at its synchronization points, as a GPU
    # runs them later than they were queued: a consumer's copy out of our
    # buffer waits on its stream when the buffer is freed and handed out again
    src = host(1024).to_device("cuda:0")
    p = data_pointer(src)
    user = fake.StreamUser(0)
    dst = ctypes.c_ulonglong()
    fake.check(fake.LIB.cuMemAlloc_v2(ctypes.byref(dst), 8192), "cuMemAlloc_v2")
    fake.check(fake.LIB.cuMemcpyDtoDAsync_v2(dst.value, p, 8192, user.stream), "cuMemcpyDtoDAsync_v2")
    del src
    gc.collect()
    second = gda.array(pa.array(np.full(1024, -1, dtype=np.int64))).to_device("cuda:0")
    assert data_pointer(second) == p, "the freed block was not reused: the test proves nothing"
    got = np.frombuffer(user.read(dst.value, 8192), dtype=np.int64)
    assert (got == np.arange(1024)).all(), "the block was overwritten before the copy queued on it ran"
    assert second.to_pylist() == [-1] * 1024
    fake.make_current(0)
    fake.check(fake.LIB.cuMemFree_v2(dst.value), "cuMemFree_v2")
    user.destroy()
    del second


def test_sizes_share_a_block_of_their_class_and_large_ones_are_not_kept(device_leak_check):
    a = host(1000).to_device("cuda:0")  # 8,000 bytes: the 8 KiB class
    del a
    gc.collect()
    allocs = calls("cuMemAlloc_v2")
    b = host(1020).to_device("cuda:0")  # 8,160 bytes: the same class
    assert calls("cuMemAlloc_v2") == allocs
    c = host(1030).to_device("cuda:0")  # 8,240 bytes: the next class up
    assert calls("cuMemAlloc_v2") == allocs + 1
    del b, c
    gc.collect()
    assert pooled() == (2, 8192 + 16384)
    big = host(600_000).to_device("cuda:0")  # 4.8 MB: over the 4 MiB kept
    frees = calls("cuMemFree_v2")
    del big
    gc.collect()
    assert calls("cuMemFree_v2") == frees + 1 and pooled() == (2, 8192 + 16384)


def test_the_pool_keeps_at_most_64_mib_per_device(device_leak_check):
    src = host(512 * 1024)  # 4 MiB: the largest class kept
    arrays = [src.to_device("cuda:0") for _ in range(17)]
    frees = calls("cuMemFree_v2")
    del arrays
    gc.collect()
    assert pooled() == (16, 64 << 20)
    assert calls("cuMemFree_v2") == frees + 1


def test_an_allocation_refused_for_memory_frees_the_idle_blocks_and_tries_again(device_leak_check):
    idle = host(100_000).to_device("cuda:0")  # a 1 MiB block, then idle
    del idle
    gc.collect()
    assert pooled() == (1, 1 << 20)
    frees = calls("cuMemFree_v2")
    fake.LIB.fakecuda_fail_nth(b"cuMemAlloc_v2", 1, fake.CUDA_ERROR_OUT_OF_MEMORY)
    try:
        small = host(3).to_device("cuda:0")  # another class: the driver is asked, and refuses once
    finally:
        fake.LIB.fakecuda_clear_faults()
    assert calls("cuMemFree_v2") == frees + 1 and pooled() == (0, 0)
    assert small.to_pylist() == [0, 1, 2]
    del small


def test_a_failed_synchronization_before_a_reuse_is_reported_and_the_block_freed(device_leak_check):
    first = host(1024).to_device("cuda:0")
    del first
    gc.collect()
    assert pooled() == (1, 8192)
    frees = calls("cuMemFree_v2")
    fake.LIB.fakecuda_fail_nth(b"cuCtxSynchronize", 1, fake.CUDA_ERROR_INVALID_VALUE)
    try:
        with pytest.raises(gda.DeviceError, match="cuCtxSynchronize.*CUDA_ERROR_INVALID_VALUE") as info:
            host(1024).to_device("cuda:0")
        info.value.__traceback__ = None
    finally:
        fake.LIB.fakecuda_clear_faults()
    assert pooled() == (0, 0) and calls("cuMemFree_v2") == frees + 1
    again = host(1024).to_device("cuda:0")  # the next copy allocates afresh
    assert again.to_pylist()[-1] == 1023
    del again, info


def test_pools_are_per_device(device_leak_check):
    src = host(1024)
    on0 = src.to_device("cuda:0")
    del on0
    gc.collect()
    allocs = calls("cuMemAlloc_v2")
    on1 = src.to_device("cuda:1")  # device 1's pool is empty: device 0's block is not its memory
    assert calls("cuMemAlloc_v2") == allocs + 1
    assert fake.LIB.fakecuda_device_of(data_pointer(on1)) == 1
    del on1
    gc.collect()
    assert pooled() == (2, 16384)


def test_released_pools_give_the_blocks_back_to_the_driver(device_leak_check):
    arrays = [host(1024).to_device("cuda:0") for _ in range(3)]
    live = fake.LIB.fakecuda_live_allocations()
    del arrays
    gc.collect()
    assert fake.LIB.fakecuda_live_allocations() == live, "idle blocks stay allocated in the pool"
    gda._godevarrow.debug_release_pools()
    assert fake.LIB.fakecuda_live_allocations() == live - 3 and pooled() == (0, 0)


def test_a_batch_is_copied_into_one_allocation(device_leak_check):
    column = pa.array([None if j % 7 == 0 else j for j in range(1000)], pa.int64())
    strings = pa.array([None if j % 5 == 0 else "v" * (j % 9) for j in range(1000)])
    batch = gda.record_batch(pa.record_batch({**{f"c{i}": column for i in range(50)}, "s": strings}))
    allocs = calls("cuMemAlloc_v2")
    on0 = batch.to_device("cuda:0")
    assert calls("cuMemAlloc_v2") == allocs + 1, "one allocation for the batch's 153 buffers"
    caps = on0.__arrow_c_device_array__()  # the struct lives as long as its capsule
    struct = fake.device_array_struct(caps[1]).array
    pointers = [struct.children[i].contents.buffers[k] for i in range(51) for k in range(2)]
    assert all(p % 256 == 0 for p in pointers), "buffers start on 256-byte boundaries (DLPack's alignment)"
    assert len(set(pointers)) == len(pointers)
    del caps, struct
    back = on0.to_device("cpu")
    assert pa.record_batch(back).equals(pa.record_batch(batch))
    on1 = on0.to_device("cuda:1")  # a peer copy carves its own allocation on the other device
    assert calls("cuMemAlloc_v2") == allocs + 2
    assert pa.record_batch(on1.to_device("cpu")).equals(pa.record_batch(batch))
    frees = calls("cuMemFree_v2")
    del on0, on1, back
    gc.collect()
    # the allocations (one per copy) went back to the pool or the driver when
    # the last of their buffers went
    assert pooled()[0] + calls("cuMemFree_v2") - frees == 2


def test_an_empty_buffer_of_a_copy_points_inside_its_allocation(device_leak_check):
    batch = gda.record_batch(pa.record_batch({"s": pa.array(["", ""]), "x": pa.array([1, 2])}))
    on0 = batch.to_device("cuda:0")
    again = gda.record_batch(DeviceArrayOnly(on0))  # re-imported: every buffer's device is checked
    assert again.to_device("cpu").to_pylist() == [{"s": "", "x": 1}, {"s": "", "x": 2}]
    del on0, again
