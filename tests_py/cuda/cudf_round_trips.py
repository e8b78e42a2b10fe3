"""The cuDF round trips of test_gpu.py, written once: test_gpu.py runs them
with the real cuDF on a GPU, test_cudf_standin.py with the stand-ins
(tests_py/cuda/standins) and the fake driver, in `make test`.

The oracle is a literal pyarrow table built here, never ``df.to_arrow()``:
the stand-in's ``to_arrow`` goes through godevarrow itself, so a corruption
in the device copy or the import would show on both sides of a comparison
with it."""

from __future__ import annotations

import gc
from typing import Any

import godevarrow as gda
import pyarrow as pa

DATA = {"a": [1, 2, None], "b": ["x", None, "z"], "c": [0.5, 1.5, 2.5]}


def expected() -> pa.Table:
    return pa.table(
        {
            "a": pa.array([1, 2, None], pa.int64()),
            "b": pa.array(["x", None, "z"], pa.string()),
            "c": pa.array([0.5, 1.5, 2.5], pa.float64()),
        }
    )


def assert_is_expected(got: pa.Table | pa.RecordBatch) -> None:
    """``got`` holds the names, types, values and nulls of ``expected()``.
    cuDF may hand strings out as large_string; that is the only type
    difference accepted (the cast below changes no value)."""
    want = expected()
    table = got if isinstance(got, pa.Table) else pa.Table.from_batches([got])
    assert table.column_names == want.column_names, table.column_names
    types = [pa.string() if t == pa.large_string() else t for t in table.schema.types]
    assert types == want.schema.types, table.schema
    table = table.cast(want.schema)
    assert table.to_pydict() == want.to_pydict(), table.to_pydict()
    assert [c.null_count for c in table.columns] == [1, 1, 0]
    assert table.combine_chunks().equals(want), table


def round_trip_keeps_names(cudf: Any) -> None:
    import godevarrow.cudf as gcudf

    df = cudf.DataFrame(DATA)
    batch = gcudf.from_cudf(df)
    assert batch.device_type == gda.DeviceType.CUDA
    assert batch.column_names == ["a", "b", "c"]
    assert_is_expected(batch.to_pyarrow())
    back = gcudf.to_cudf(batch)
    assert list(back.columns) == ["a", "b", "c"]
    assert_is_expected(back.to_arrow())
    assert [back[c].null_count for c in ("a", "b", "c")] == [1, 1, 0]
    series = gcudf.from_cudf(df["c"])
    assert series.to_pyarrow().to_pylist() == [0.5, 1.5, 2.5]
    del batch, back, series
    gc.collect()


# Rows 0..4 of a frame with nulls in every kind of column cuDF exports
# differently (fixed width, bool, strings, lists, structs).
NESTED = pa.struct([pa.field("x", pa.int64()), pa.field("y", pa.string())])
ROWS = {
    "i": pa.array([1, None, 3, 4, None], pa.int64()),
    "b": pa.array([True, None, False, True, None], pa.bool_()),
    "s": pa.array(["v", "w", None, "y", "z"], pa.string()),
    "l": pa.array([[1], None, [2, 3], [], [4]], pa.list_(pa.int64())),
    "st": pa.array([{"x": 1, "y": "a"}, None, {"x": 3, "y": None}, {"x": 4, "y": "d"}, None], NESTED),
}
# the rows each slice must give, written out (not computed by slicing)
SLICES = {
    (2, 5): {
        "i": [3, 4, None],
        "b": [False, True, None],
        "s": [None, "y", "z"],
        "l": [[2, 3], [], [4]],
        "st": [{"x": 3, "y": None}, {"x": 4, "y": "d"}, None],
    },
    (1, 3): {
        "i": [None, 3],
        "b": [None, False],
        "s": ["w", None],
        "l": [None, [2, 3]],
        "st": [None, {"x": 3, "y": None}],
    },
}


def slices_give_their_rows(cudf: Any) -> None:
    """``from_cudf`` of ``df.iloc[a:b]`` (and of a sliced Series) holds
    exactly the rows of the slice, with their nulls."""
    import godevarrow.cudf as gcudf

    df = cudf.DataFrame.from_arrow(pa.table(ROWS))
    for (start, stop), want in SLICES.items():
        got = gcudf.from_cudf(df.iloc[start:stop]).to_pyarrow()
        assert got.schema.names == list(ROWS), got.schema
        assert got.to_pydict() == want, (start, stop, got.to_pydict())
        for name in ROWS:
            series = gcudf.from_cudf(df[name].iloc[start:stop]).to_pyarrow()
            assert series.to_pylist() == want[name], (name, start, stop, series)
