"""The cuDF round trips of test_gpu.py, written once: test_gpu.py runs them
with the real cuDF on a GPU, test_cudf_standin.py with the stand-ins
(tests_py/standins) and the fake driver, in `make test`."""

from __future__ import annotations

import gc
from typing import Any

import godevarrow as gda


def round_trip_keeps_names(cudf: Any) -> None:
    import godevarrow.cudf as gcudf

    df = cudf.DataFrame({"a": [1, 2, None], "b": ["x", None, "z"], "c": [0.5, 1.5, 2.5]})
    batch = gcudf.from_cudf(df)
    assert batch.device_type == gda.DeviceType.CUDA
    assert batch.column_names == ["a", "b", "c"]
    assert batch.to_pyarrow().equals(df.to_arrow().to_batches()[0])
    back = gcudf.to_cudf(batch)
    assert list(back.columns) == ["a", "b", "c"]
    assert back.to_arrow().equals(df.to_arrow())
    assert [back[c].null_count for c in ("a", "b", "c")] == [1, 1, 0]
    series = gcudf.from_cudf(df["c"])
    assert series.to_pyarrow().to_pylist() == [0.5, 1.5, 2.5]
    del batch, back, series
    gc.collect()
