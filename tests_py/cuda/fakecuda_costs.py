"""Measures the fake CUDA driver's calls the way the H200 table in
docs/cuda.md ("What a GPU charges") was measured: through ctypes, each figure
the minimum over several runs of N calls, per call. Run as a script (with
FAKECUDA_COSTS=h200 and GODEVARROW_LIBCUDA naming the fake) it prints one JSON
object: under "latency_us", row name -> microseconds measured (per call, or
per the row's unit: the fastest run); under "charged_us", what the fake's cost
model charged for the same (the most of any run, read from
fakecuda_charged_ns, no clock of this host's in it); and the modelled
bandwidths in GB/s under "bandwidth_gbs"."""

from __future__ import annotations

import ctypes
import json
import mmap
import os
import sys
import time
from typing import Callable

# Row name -> (the H200 figure, in us per unit of the row).
LATENCY_US = {
    "cuPointerGetAttribute(MEMORY_TYPE)": 0.84,
    "cuPointerGetAttribute(DEVICE_ORDINAL)": 0.83,
    "cuMemGetAddressRange": 0.93,
    "cuCtxGetCurrent": 0.32,
    "cuCtxPushCurrent + cuCtxPopCurrent": 0.61,
    "cuStreamCreate + cuStreamDestroy": 4.59,
    "cuEventCreate + cuEventDestroy": 0.95,
    "cuEventRecord": 0.52,
    "cuStreamWaitEvent": 0.54,
    "cuEventSynchronize (completed)": 0.52,
    "cuMemcpyDtoH 8 B pageable": 9.46,
    "cuMemcpyDtoHAsync 8 B pinned + cuStreamSynchronize": 7.54,
    "68 x cuMemcpyDtoHAsync 8 B pinned + one sync": 186.0,
    "68 x cuMemcpyDtoHAsync 8 B pageable + one sync": 555.0,
    "cuMemcpyHtoD 8 B pageable": 6.06,
    "cuMemcpyHtoDAsync 8 B pageable + cuStreamSynchronize": 8.41,
    "cuMemcpyHtoDAsync 8 KB pageable + cuEventRecord (not waited for)": 6.04,
    "cuMemcpyHtoDAsync 8 KB pinned + cuStreamSynchronize": 10.04,
    "cuMemcpyDtoDAsync 8 B + cuStreamSynchronize": 11.98,
    "cuStreamSynchronize (idle)": 0.95,
    "cuStreamQuery (idle)": 0.84,
    "cuCtxGetDevice": 0.55,
    "cuCtxSetCurrent (already current)": 0.54,
    "cuDevicePrimaryCtxRetain + Release": 1.07,
    "cuMemGetInfo": 7.33,
    "cuMemAlloc + cuMemFree 256 B": 90.0,
    "cuMemAlloc + cuMemFree 1 MiB": 88.0,
    "cuMemAlloc + cuMemFree 64 MiB": 152.0,
    "cuMemHostAlloc 1 MiB": 980.0,
    "cuMemHostAlloc 64 MiB": 26_500.0,
    "cuMemHostAlloc 1 GiB": 428_000.0,
    "cuMemFreeHost 1 MiB": 440.0,
    "cuMemFreeHost 64 MiB": 6_600.0,
    "cuMemFreeHost 1 GiB": 120_000.0,
    "cuMemHostRegister 1 GiB": 44_000.0,
    "cuMemHostUnregister 1 GiB": 19_000.0,
}
# Row name -> the H200 figure in GB/s (1 GiB copies there).
BANDWIDTH_GBS = {
    "device -> pinned host": 55.2,
    "pinned host -> device": 55.2,
    "device -> pageable host": 15.4,
    "pageable host -> device": 9.2,
    "device -> registered host": 55.3,
}

MiB, GiB = 1 << 20, 1 << 30
c_ull, c_void_p, c_size_t = ctypes.c_ulonglong, ctypes.c_void_p, ctypes.c_size_t
c_uint, c_int = ctypes.c_uint, ctypes.c_int


def best_per_call(charged: Callable[[], int], calls: int, runs: int, *steps: tuple) -> tuple[float, float]:
    """The minimum over runs of the mean time of calls repetitions of steps
    (each a function and its arguments, returning a CUresult), in us, and the
    most the fake's model charged per repetition in any run (charged:
    fakecuda_charged_ns). The fake's busy-wait bounds every call from below,
    so the fastest run is the one no other process preempted. A failed call
    stops the measurement: it would time an error path."""
    best = most = 0.0
    for run in range(runs):
        failed = 0
        m, t = charged(), time.perf_counter_ns()
        if len(steps) == 1:  # the common case, without a loop over steps
            ((fn, args),) = steps
            for _ in range(calls):
                failed |= fn(*args)
        else:
            (f, a), (g, b) = steps
            for _ in range(calls):
                failed |= f(*a)
                failed |= g(*b)
        wall, model = time.perf_counter_ns() - t, charged() - m
        if failed:
            raise RuntimeError(f"a call of {[fn.__name__ for fn, _ in steps]} failed while it was timed")
        best = wall if run == 0 else min(best, wall)
        most = max(most, model)
    return best / calls / 1000, most / calls / 1000


def measure(library: str) -> dict:
    # No argtypes: the arguments are ctypes objects built once, so each call
    # pays only ctypes' own overhead, the path whose cost the fake subtracts.
    lib = ctypes.CDLL(library)
    lib.fakecuda_modelled_copy_ns.restype = ctypes.c_longlong
    lib.fakecuda_charged_ns.restype = ctypes.c_longlong
    charged = lib.fakecuda_charged_ns

    def ok(rc: int, what: str) -> None:
        if rc != 0:
            raise RuntimeError(f"{what} failed with CUDA error {rc}")

    def checked(fn: Callable[..., int], *args: object) -> tuple:
        ok(fn(*args), fn.__name__)  # each step succeeds once before it is timed
        return fn, args

    ok(lib.cuInit(0), "cuInit")
    ctx = c_void_p()
    ok(lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0), "cuDevicePrimaryCtxRetain")
    ok(lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    dptr, dptr2 = c_ull(), c_ull()
    ok(lib.cuMemAlloc_v2(ctypes.byref(dptr), c_size_t(64 * MiB)), "cuMemAlloc_v2")
    ok(lib.cuMemAlloc_v2(ctypes.byref(dptr2), c_size_t(64 * MiB)), "cuMemAlloc_v2")
    pinned = c_void_p()
    ok(lib.cuMemHostAlloc(ctypes.byref(pinned), c_size_t(64 * MiB), 0), "cuMemHostAlloc")
    pageable = ctypes.create_string_buffer(64 * MiB)
    stream, event = c_void_p(), c_void_p()
    ok(lib.cuStreamCreate(ctypes.byref(stream), 1), "cuStreamCreate")
    ok(lib.cuEventCreate(ctypes.byref(event), 2), "cuEventCreate")
    s, e = stream, event
    ok(lib.cuEventRecord(e, s), "cuEventRecord")
    ok(lib.cuEventSynchronize(e), "cuEventSynchronize")

    d, d2, d8 = c_ull(dptr.value), c_ull(dptr2.value), c_ull(dptr.value + 8)
    h_pin, h_page = c_void_p(pinned.value), c_void_p(ctypes.addressof(pageable))
    eight = c_size_t(8)
    out_uint, out_int, out_ptr, out_ull, out_size = c_uint(), c_int(), c_void_p(), c_ull(), c_size_t()
    r_uint, r_int, r_ptr, r_ull, r_size = (ctypes.byref(x) for x in (out_uint, out_int, out_ptr, out_ull, out_size))
    r_size2 = ctypes.byref(c_size_t())
    sync = checked(lib.cuStreamSynchronize, s)

    def loop68(host: int) -> Callable[[], int]:
        hosts = [c_void_p(host + 8 * i) for i in range(68)]
        devs = [c_ull(dptr.value + 8 * i) for i in range(68)]
        copy = lib.cuMemcpyDtoHAsync_v2

        def run() -> int:
            failed = 0
            for i in range(68):
                failed |= copy(hosts[i], devs[i], eight, s)
            return failed | lib.cuStreamSynchronize(s)

        return run

    small = (200, 60)  # calls, runs: short runs, so that some run is never preempted
    rows: dict[str, tuple[float, float]] = {}
    rows["cuPointerGetAttribute(MEMORY_TYPE)"] = best_per_call(
        charged, *small, checked(lib.cuPointerGetAttribute, r_uint, 2, d)
    )
    rows["cuPointerGetAttribute(DEVICE_ORDINAL)"] = best_per_call(
        charged, *small, checked(lib.cuPointerGetAttribute, r_int, 9, d)
    )
    rows["cuMemGetAddressRange"] = best_per_call(
        charged, *small, checked(lib.cuMemGetAddressRange_v2, r_ull, r_size, d8)
    )
    rows["cuCtxGetCurrent"] = best_per_call(charged, *small, checked(lib.cuCtxGetCurrent, r_ptr))
    rows["cuCtxPushCurrent + cuCtxPopCurrent"] = best_per_call(
        charged, *small, (lib.cuCtxPushCurrent_v2, (ctx,)), (lib.cuCtxPopCurrent_v2, (r_ptr,))
    )
    ok(lib.cuCtxGetCurrent(r_ptr), "cuCtxGetCurrent")
    ok(0 if out_ptr.value == ctx.value else 1, "the context stack after push + pop")
    rows["cuStreamCreate + cuStreamDestroy"] = best_per_call(
        charged, 100, 40, (lib.cuStreamCreate, (r_ptr, 1)), (lib.cuStreamDestroy_v2, (out_ptr,))
    )
    rows["cuEventCreate + cuEventDestroy"] = best_per_call(
        charged, *small, (lib.cuEventCreate, (r_ptr, 2)), (lib.cuEventDestroy_v2, (out_ptr,))
    )
    rows["cuEventRecord"] = best_per_call(charged, *small, checked(lib.cuEventRecord, e, s))
    ok(lib.cuStreamSynchronize(s), "cuStreamSynchronize")
    rows["cuStreamWaitEvent"] = best_per_call(charged, *small, checked(lib.cuStreamWaitEvent, s, e, 0))
    ok(lib.cuStreamSynchronize(s), "cuStreamSynchronize")
    rows["cuEventSynchronize (completed)"] = best_per_call(charged, *small, checked(lib.cuEventSynchronize, e))
    rows["cuMemcpyDtoH 8 B pageable"] = best_per_call(charged, 40, 40, checked(lib.cuMemcpyDtoH_v2, h_page, d, eight))
    rows["cuMemcpyDtoHAsync 8 B pinned + cuStreamSynchronize"] = best_per_call(
        charged, 40, 40, checked(lib.cuMemcpyDtoHAsync_v2, h_pin, d, eight, s), sync
    )
    rows["68 x cuMemcpyDtoHAsync 8 B pinned + one sync"] = best_per_call(charged, 1, 40, (loop68(pinned.value), ()))
    rows["68 x cuMemcpyDtoHAsync 8 B pageable + one sync"] = best_per_call(charged, 1, 30, (loop68(h_page.value), ()))
    rows["cuMemcpyHtoD 8 B pageable"] = best_per_call(charged, 40, 40, checked(lib.cuMemcpyHtoD_v2, d, h_page, eight))
    rows["cuMemcpyHtoDAsync 8 KB pinned + cuStreamSynchronize"] = best_per_call(
        charged, 40, 40, checked(lib.cuMemcpyHtoDAsync_v2, d, h_pin, c_size_t(8192), s), sync
    )
    rows["cuMemcpyHtoDAsync 8 B pageable + cuStreamSynchronize"] = best_per_call(
        charged, 40, 40, checked(lib.cuMemcpyHtoDAsync_v2, d, h_page, eight, s), sync
    )
    rows["cuMemcpyHtoDAsync 8 KB pageable + cuEventRecord (not waited for)"] = best_per_call(
        charged,
        40,
        40,
        checked(lib.cuMemcpyHtoDAsync_v2, d, h_page, c_size_t(8192), s),
        checked(lib.cuEventRecord, e, s),
    )
    ok(lib.cuStreamSynchronize(s), "cuStreamSynchronize")
    rows["cuMemcpyDtoDAsync 8 B + cuStreamSynchronize"] = best_per_call(
        charged, 40, 40, checked(lib.cuMemcpyDtoDAsync_v2, d2, d, eight, s), sync
    )
    rows["cuStreamSynchronize (idle)"] = best_per_call(charged, *small, sync)
    rows["cuStreamQuery (idle)"] = best_per_call(charged, *small, checked(lib.cuStreamQuery, s))
    rows["cuCtxGetDevice"] = best_per_call(charged, *small, checked(lib.cuCtxGetDevice, r_int))
    rows["cuCtxSetCurrent (already current)"] = best_per_call(charged, *small, checked(lib.cuCtxSetCurrent, ctx))
    rows["cuDevicePrimaryCtxRetain + Release"] = best_per_call(
        charged, *small, (lib.cuDevicePrimaryCtxRetain, (r_ptr, 0)), (lib.cuDevicePrimaryCtxRelease_v2, (0,))
    )
    rows["cuMemGetInfo"] = best_per_call(charged, 40, 40, checked(lib.cuMemGetInfo_v2, r_size, r_size2))
    for label, n in (("256 B", 256), ("1 MiB", MiB), ("64 MiB", 64 * MiB)):
        rows[f"cuMemAlloc + cuMemFree {label}"] = best_per_call(
            charged, 5, 30, (lib.cuMemAlloc_v2, (r_ull, c_size_t(n))), (lib.cuMemFree_v2, (out_ull,))
        )

    # Host allocations and registrations: each call timed on its own.
    def best_single(runs: int, first: tuple, second: tuple) -> tuple[tuple[float, float], tuple[float, float]]:
        best = [float("inf"), float("inf")]
        most = [0.0, 0.0]
        for _ in range(runs):
            for i, (fn, args) in enumerate((first, second)):
                m, t0 = charged(), time.perf_counter_ns()
                rc = fn(*args)
                t1 = time.perf_counter_ns()
                ok(rc, fn.__name__)
                best[i], most[i] = min(best[i], (t1 - t0) / 1000), max(most[i], (charged() - m) / 1000)
        return (best[0], most[0]), (best[1], most[1])

    for label, n, runs in (("1 MiB", MiB, 10), ("64 MiB", 64 * MiB, 3), ("1 GiB", GiB, 2)):
        rows[f"cuMemHostAlloc {label}"], rows[f"cuMemFreeHost {label}"] = best_single(
            runs, (lib.cuMemHostAlloc, (r_ptr, c_size_t(n), 0)), (lib.cuMemFreeHost, (out_ptr,))
        )
    # Registration of 1 GiB the fake never touches (an untouched mapping).
    area = mmap.mmap(-1, GiB)
    base = c_void_p(ctypes.addressof(ctypes.c_char.from_buffer(area)))
    rows["cuMemHostRegister 1 GiB"], rows["cuMemHostUnregister 1 GiB"] = best_single(
        2, (lib.cuMemHostRegister_v2, (base, c_size_t(GiB), 0)), (lib.cuMemHostUnregister, (base,))
    )

    # Bandwidths: the modelled transfer time of one 64 MiB copy (a wall clock
    # would time this host's memmove, which is slower than the link).
    n = c_size_t(64 * MiB)

    def modelled_gbs(fn: Callable[..., int], *args: object) -> float:
        lib.fakecuda_reset_counters()
        ok(fn(*args), fn.__name__)
        ok(lib.cuStreamSynchronize(s), "cuStreamSynchronize")
        return 64 * MiB / lib.fakecuda_modelled_copy_ns()

    result = {
        "latency_us": {row: wall for row, (wall, _) in rows.items()},
        "charged_us": {row: model for row, (_, model) in rows.items()},
        "costs": lib.fakecuda_costs_enabled(),
    }
    if not result["costs"]:
        return dict(result, bandwidth_gbs={})
    bandwidth = {
        "device -> pinned host": modelled_gbs(lib.cuMemcpyDtoHAsync_v2, h_pin, d, n, s),
        "pinned host -> device": modelled_gbs(lib.cuMemcpyHtoDAsync_v2, d, h_pin, n, s),
        "device -> pageable host": modelled_gbs(lib.cuMemcpyDtoHAsync_v2, h_page, d, n, s),
        "pageable host -> device": modelled_gbs(lib.cuMemcpyHtoDAsync_v2, d, h_page, n, s),
    }
    ok(lib.cuMemHostRegister_v2(h_page, n, 0), "cuMemHostRegister_v2")
    bandwidth["device -> registered host"] = modelled_gbs(lib.cuMemcpyDtoHAsync_v2, h_page, d, n, s)
    ok(lib.cuMemHostUnregister(h_page), "cuMemHostUnregister")
    return dict(result, bandwidth_gbs=bandwidth)


if __name__ == "__main__":
    json.dump(measure(os.environ["GODEVARROW_LIBCUDA"]), sys.stdout)
