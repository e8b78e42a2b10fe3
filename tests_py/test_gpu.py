"""Round trips with CuPy and cuDF on a real GPU (marked ``gpu``).

No machine of this project has a GPU, so these skip here and in CI, saying
why; they are written to pass the first time they meet one (the same
behaviours are proven against the fake driver in test_cuda_fake.py and
test_cuda_bridges.py)."""

from __future__ import annotations

import gc

import godevarrow as gda
import pyarrow as pa
import pytest


def _real_gpu() -> str:
    """Why the real-GPU tests cannot run here ('' when they can)."""
    try:
        import cupy
    except ImportError:
        return "CuPy is not installed"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "no CUDA device"
    except Exception as e:  # noqa: BLE001 - any driver error means no GPU
        return f"no usable CUDA device ({e})"
    ok, _count, library, _message = gda.cuda_status()
    if not ok or "fakecuda" in library:
        return f"godevarrow's CUDA driver is not a real one ({library})"
    return ""


REASON = _real_gpu()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(bool(REASON), reason=f"needs a real CUDA GPU: {REASON}")]


@pytest.fixture
def cp():
    import cupy

    return cupy


def test_cupy_round_trip_zero_copy(cp):
    import godevarrow.cupy as gcp

    x = cp.arange(1000, dtype=cp.int64)
    g = gcp.from_cupy(x)
    assert g.device == gda.Device.cuda(x.device.id)
    assert g.__cuda_array_interface__["data"][0] == x.data.ptr, "zero-copy"
    y = gcp.to_cupy(g)
    assert y.data.ptr == x.data.ptr
    assert cp.array_equal(y, x)
    assert g.to_pyarrow().to_pylist() == list(range(1000))


def test_cupy_mask_becomes_validity(cp):
    import godevarrow.cupy as gcp

    x = cp.arange(10, dtype=cp.float32)
    mask = x % 3 != 0
    g = gcp.from_cupy(x, mask=mask)
    assert g.null_count == 4
    assert g.to_pyarrow().to_pylist() == [None if i % 3 == 0 else float(i) for i in range(10)]


def test_cuda_array_interface_with_cupy(cp):
    g = gda.array(pa.array([1.5, 2.5, 3.5])).to_device("cuda:0")
    y = cp.asarray(g)  # through __cuda_array_interface__ (v3, stream honoured by CuPy)
    assert y.tolist() == [1.5, 2.5, 3.5]
    back = gda.array(y)
    assert back.to_pyarrow().to_pylist() == [1.5, 2.5, 3.5]


def test_corpus_like_batch_through_devices(cp):
    batch = pa.record_batch(
        {"i": pa.array([1, None, 3]), "s": pa.array(["a", None, "ccc"]), "l": pa.array([[1], [], None])}
    )
    g = gda.record_batch(batch)
    for device in ["cuda:0"] + (["cuda:1"] if cp.cuda.runtime.getDeviceCount() > 1 else []) + ["cpu"]:
        g = g.to_device(device)
    assert g.to_pyarrow().equals(batch)


def test_cudf_round_trip_keeps_names(cp):
    cudf = pytest.importorskip("cudf", reason="cuDF is not installed")
    import godevarrow.cudf as gcudf

    df = cudf.DataFrame({"a": [1, 2, None], "b": ["x", None, "z"], "c": [0.5, 1.5, 2.5]})
    batch = gcudf.from_cudf(df)
    assert batch.device_type == gda.DeviceType.CUDA
    assert batch.column_names == ["a", "b", "c"]
    assert batch.to_pyarrow().equals(df.to_arrow().to_batches()[0])
    back = gcudf.to_cudf(batch)
    assert list(back.columns) == ["a", "b", "c"]
    assert back.to_arrow().equals(df.to_arrow())
    series = gcudf.from_cudf(df["c"])
    assert series.to_pyarrow().to_pylist() == [0.5, 1.5, 2.5]
    del batch, back, series
    gc.collect()
