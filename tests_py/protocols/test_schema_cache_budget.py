"""The schema import cache is bounded in bytes as well as in entries
(SECURITY.md, "Budgets"): each entry counts every copy of its schema that the
cache keeps (format strings, names, metadata), and the cache makes room
by that count. Importing and dropping schemas with large metadata leaves the
process's memory within a bound."""

from __future__ import annotations

import godevarrow as gda
import pyarrow as pa
import pytest
from conftest import run_python
from godevarrow import _godevarrow as lib

# The budgets as SECURITY.md documents them.
SCHEMA_CACHE_ENTRIES = 256
SCHEMA_CACHE_BYTES = 64 << 20
MiB = 1 << 20


def _field(i: int, metadata_bytes: int) -> pa.Field:
    return pa.field(f"f{i}", pa.int8(), metadata={b"k": bytes([65 + i % 26]) * metadata_bytes})


@pytest.mark.usefixtures("leak_check")
def test_schemas_with_large_metadata_are_evicted_by_their_bytes():
    # 12 schemas of 4 MiB metadata: 144 MiB counted (three copies each) if all stayed
    for i in range(12):
        s = gda.schema(_field(i, 4 * MiB))
        assert s.metadata == {b"k": bytes([65 + i]) * (4 * MiB)}
        size = lib.debug_counters()
        assert size.schema_cache_bytes <= SCHEMA_CACHE_BYTES, (i, size)
        assert size.schema_cache_entries <= SCHEMA_CACHE_ENTRIES, (i, size)
        # the entry just added counts its metadata once per copy kept
        assert size.schema_cache_bytes >= 3 * 4 * MiB, (i, size)
        del s


@pytest.mark.usefixtures("leak_check")
def test_a_schema_larger_than_the_byte_budget_is_imported_but_not_cached():
    before = lib.debug_counters()
    big = _field(0, 24 * MiB)  # counted three times over: 72 MiB, more than the whole budget
    first, second = gda.schema(big), gda.schema(big)
    after = lib.debug_counters()
    assert (after.schema_cache_entries, after.schema_cache_bytes) == (
        before.schema_cache_entries,
        before.schema_cache_bytes,
    )
    assert first is not second and first == second
    assert first.metadata == {b"k": b"A" * (24 * MiB)}
    # its data is imported by the general path, twice alike
    batch = pa.record_batch([pa.array([1, 2], pa.int8())], schema=pa.schema([big]))
    for _ in range(2):
        got = gda.record_batch(batch)
        assert got.to_pyarrow().equals(batch, check_metadata=True)
    del got
    after = lib.debug_counters()
    assert after.schema_cache_bytes <= SCHEMA_CACHE_BYTES


_DROP_LARGE_SCHEMAS = """
import ctypes, gc, os
import godevarrow as gda
import pyarrow as pa
from godevarrow import _godevarrow as lib

def rss():
    # what the allocator keeps for reuse is not held memory: hand it back first
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

gda.schema(pa.field("warm", pa.int8(), metadata={b"k": b"v"}))
gc.collect()
base = rss()
for i in range(24):
    f = pa.field(f"f{i}", pa.int8(), metadata={b"k": bytes([65 + i]) * (8 << 20)})
    s = gda.schema(f)
    assert s.metadata == {b"k": bytes([65 + i]) * (8 << 20)}
    del f, s
gc.collect()
live = gda.debug_live_objects()
assert not any(live.values()), live
size = lib.debug_counters()
print("GROWTH", rss() - base, "CACHE", size.schema_cache_entries, size.schema_cache_bytes)
"""


def test_memory_returns_within_a_bound_after_large_schemas_are_dropped():
    # 24 schemas of 8 MiB metadata, each dropped at once: an unbounded cache
    # keeps about 24 x 8 MiB x 3 copies (some 580 MiB) after the last goes.
    # GOMEMLIMIT keeps the Go heap's own slack (garbage not yet collected or
    # returned) out of the measurement: it is the GC's, not the cache's.
    r = run_python(_DROP_LARGE_SCHEMAS, env={"GOMEMLIMIT": "48MiB"}, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    words = r.stdout.split()
    growth, entries, cached = int(words[words.index("GROWTH") + 1]), int(words[-2]), int(words[-1])
    assert growth < 2 * SCHEMA_CACHE_BYTES, f"RSS grew by {growth / MiB:.0f} MiB after everything was dropped"
    assert cached <= SCHEMA_CACHE_BYTES and entries <= SCHEMA_CACHE_ENTRIES, r.stdout
