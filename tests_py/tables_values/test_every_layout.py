"""Every physical layout the format parser knows (the Layout constants of
gosrc) gives, through godevarrow's value encoder, the values pyarrow's
to_pylist gives: the whole array, a slice, single elements, iteration, and
the same data on a (fake) CUDA device. The Go half of the check is
tests_go/layouts_test.go; a layout added to Go without a sample here fails
test_every_layout_has_a_sample."""

from __future__ import annotations

import pathlib
import re

import godevarrow as gda
import pyarrow as pa
import pytest
from pyvalues import same

N = 24
REPO = pathlib.Path(__file__).resolve().parents[2]


def ival(i: int) -> int:
    return i * 7 - 20


def sval(i: int) -> str:
    return chr(ord("a") + i % 26) * (1 + i % 15)  # some longer than a view's 12 inline bytes


def null_or(i: int, v):
    return None if i % 5 == 1 else v


def int_list(i: int):
    return null_or(i, [null_or(i + j + 1, ival(i + j)) for j in range(i % 4)])


def union(mode: str) -> pa.Array:
    types = pa.array([3 if i % 2 == 0 else 7 for i in range(N)], pa.int8())
    ints = [null_or(i, ival(i)) for i in range(N)]
    strs = [null_or(i, sval(i)) for i in range(N)]
    if mode == "sparse":
        return pa.UnionArray.from_sparse(types, [pa.array(ints, pa.int32()), pa.array(strs)], ["i", "s"], [3, 7])
    offsets = pa.array([i // 2 for i in range(N)], pa.int32())
    return pa.UnionArray.from_dense(
        types, offsets, [pa.array(ints[0::2], pa.int32()), pa.array(strs[1::2])], ["i", "s"], [3, 7]
    )


def run_end_encoded() -> pa.Array:
    ends, values, end, k = [], [], 0, 0
    while end < N:
        end = min(end + k % 3 + 1, N)
        ends.append(end)
        values.append(None if k % 4 == 1 else sval(k))
        k += 1
    return pa.RunEndEncodedArray.from_arrays(pa.array(ends, pa.int32()), pa.array(values))


def list_view(large: bool) -> pa.Array:
    """The lists with their items stored last row first: offsets that
    decrease, which only a list view can have."""
    rows = [int_list(i) for i in range(N)]
    values, offsets = [], [0] * N
    for i in reversed(range(N)):
        offsets[i] = len(values)
        values.extend(rows[i] or [])
    cls, width = (pa.LargeListViewArray, pa.int64()) if large else (pa.ListViewArray, pa.int32())
    return cls.from_arrays(
        pa.array(offsets, width),
        pa.array([len(r or []) for r in rows], width),
        pa.array(values, pa.int32()),
        mask=pa.array([r is None for r in rows]),
    )


# one array per Layout constant, named as in gosrc (the samples of the Go test)
SAMPLES = {
    "LayoutNull": lambda: pa.nulls(N),
    "LayoutBool": lambda: pa.array([null_or(i, i % 3 == 0) for i in range(N)]),
    "LayoutFixedWidth": lambda: pa.array([null_or(i, ival(i)) for i in range(N)], pa.int32()),
    "LayoutBinary": lambda: pa.array([null_or(i, sval(i)) for i in range(N)], pa.string()),
    "LayoutLargeBinary": lambda: pa.array([null_or(i, sval(i).encode()) for i in range(N)], pa.large_binary()),
    "LayoutBinaryView": lambda: pa.array([null_or(i, sval(i)) for i in range(N)], pa.string_view()),
    "LayoutList": lambda: pa.array([int_list(i) for i in range(N)], pa.list_(pa.int32())),
    "LayoutLargeList": lambda: pa.array([int_list(i) for i in range(N)], pa.large_list(pa.int32())),
    "LayoutListView": lambda: list_view(False),
    "LayoutLargeListView": lambda: list_view(True),
    "LayoutFixedSizeList": lambda: pa.array(
        [null_or(i, [ival(i), null_or(i + 3, ival(i) + 1)]) for i in range(N)], pa.list_(pa.int32(), 2)
    ),
    "LayoutStruct": lambda: pa.array(
        [null_or(i, {"a": null_or(i + 2, ival(i)), "b": sval(i)}) for i in range(N)],
        pa.struct([("a", pa.int32()), ("b", pa.string())]),
    ),
    "LayoutMap": lambda: pa.array(
        [null_or(i, [(sval(i + j), null_or(i + j + 2, ival(i) + j)) for j in range(i % 3)]) for i in range(N)],
        pa.map_(pa.string(), pa.int32()),
    ),
    "LayoutSparseUnion": lambda: union("sparse"),
    "LayoutDenseUnion": lambda: union("dense"),
    "LayoutRunEndEncoded": run_end_encoded,
}


def layout_names() -> list[str]:
    """The Layout constants, read from the Go file that declares the type."""
    for path in sorted((REPO / "gosrc").rglob("*.go")):
        src = path.read_text()
        if "type Layout int" not in src or path.name.endswith("_test.go"):
            continue
        block = re.search(r"const \(\n(\s*Layout\w+\s+Layout = iota.*?)\n\)", src, re.S)
        assert block, f"{path}: no iota const block of type Layout"
        return re.findall(r"^\s*(Layout\w+)", block.group(1), re.M)
    raise AssertionError("no Go file under gosrc declares type Layout")


def test_every_layout_has_a_sample():
    names = layout_names()
    assert len(names) >= 16, names  # the block was read, not a fragment of it
    assert sorted(SAMPLES) == sorted(names), "a Layout constant without a sample here (or a sample of none)"


@pytest.mark.parametrize("layout", sorted(SAMPLES))
def test_values_match_pyarrow(layout):
    x = SAMPLES[layout]()
    g = gda.array(x)
    where = f"{layout} ({x.type})"
    same(g.to_pylist(), x.to_pylist(), where)
    same(g[3:13].to_pylist(), x[3:13].to_pylist(), f"{where}[3:13]")
    same(g[N:].to_pylist(), [], f"{where}[{N}:]")
    same(list(g), x.to_pylist(), f"{where} iterated")
    for i in (0, 1, 17, -1):
        same(g[i], x[i].as_py(), f"{where}[{i}]")
    # the one-column batch: a record batch's values by row
    batch = pa.record_batch([x], names=["c"])
    same(gda.record_batch(batch).to_pylist(), batch.to_pylist(), f"{where} in a record batch")


@pytest.mark.fakecuda
@pytest.mark.parametrize("layout", sorted(SAMPLES))
def test_values_from_cuda_match_pyarrow(layout):
    x = SAMPLES[layout]()
    on0 = gda.array(x).to_device("cuda:0")
    assert on0.device == gda.Device.cuda(0)
    where = f"{layout} ({x.type}) on cuda:0"
    same(on0.to_pylist(), x.to_pylist(), where)
    same(on0[3:13].to_pylist(), x[3:13].to_pylist(), f"{where}[3:13]")
