"""godevarrow.cudf against the pylibcudf/cudf stand-ins (tests_py/standins),
which copy what the real modules do, awkward parts included; the releases go
through the C producer whose release needs the GIL. Each test runs in a
subprocess: a release without the GIL aborts it."""

from __future__ import annotations

import pytest
from conftest import REPO, run_python

pytestmark = pytest.mark.fakecuda
PATHS = {"PYTHONPATH": f"{REPO / 'tests_py'}:{REPO / 'tests_py' / 'standins'}"}


def sub(code: str):
    r = run_python(code, env=PATHS)
    assert r.returncode == 0 and "ok" in r.stdout, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"


def test_item1_from_cudf_puts_the_names_back():
    sub(
        """
        import cudf, godevarrow as gda, godevarrow.cudf as gcudf, gil_producer
        df = cudf.DataFrame({"a": [1, 2, None], "b": ["x", None, "z"]})
        batch = gcudf.from_cudf(df)
        assert batch.column_names == ["a", "b"], batch.column_names
        assert batch.device_type == gda.DeviceType.CUDA
        assert batch.to_pyarrow().column(1).to_pylist() == ["x", None, "z"]
        series = gcudf.from_cudf(df["a"])
        assert series.to_pyarrow().to_pylist() == [1, 2, None]
        del batch, series
        import gc; gc.collect()
        assert gil_producer.releases() == 2
        print("ok")
        """
    )


def test_item8_to_cudf_carries_known_null_counts():
    sub(
        """
        import pyarrow as pa, godevarrow as gda, godevarrow.cudf as gcudf
        batch = gda.record_batch(pa.record_batch({"a": [1, None, 3, None], "b": [None, 2.0, 3.0, 4.0]}))
        sliced = batch.to_device("cuda:0").slice(1, 3)  # slicing leaves the counts unknown
        df = gcudf.to_cudf(sliced)
        assert list(df.columns) == ["a", "b"]
        counts = [df[c].null_count for c in ("a", "b")]
        assert counts == [2, 0], counts
        print("ok")
        """
    )


@pytest.mark.parametrize(
    "read",
    [
        "None",
        "pa.RecordBatchReader.from_stream(batch).read_all()",
        "batch.to_device('cpu').to_pyarrow()",
        "list(gda.stream(batch).prefetch(2))",
        "gda.record_batch(batch).__arrow_c_device_array__()",
    ],
    ids=["direct", "pyarrow-cpu-stream", "to-host", "prefetch", "export"],
)
def test_item5_foreign_releases_hold_the_gil(read):
    sub(
        f"""
        import gc, pyarrow as pa, godevarrow as gda, pylibcudf, gil_producer
        table = pylibcudf.Table.from_arrow(gda.record_batch(pa.record_batch({{"a": [1, 2, 3]}})).to_device("cuda:0"))
        batch = gda.record_batch(table)
        del table
        _ = {read}
        batch = _ = None
        gc.collect()
        assert gil_producer.releases() == 1, gil_producer.releases()
        print("ok")
        """
    )


def test_cudf_versions_are_checked():
    sub(
        """
        import cudf, godevarrow.cudf as gcudf
        cudf.__version__ = "24.12.00"
        try:
            gcudf.from_cudf(cudf.DataFrame({"a": [1]}))
        except ImportError as e:
            assert "25.08" in str(e) and "24.12" in str(e), e
            print("ok")
        """
    )
