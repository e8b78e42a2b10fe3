"""Round trips with CuPy and cuDF on a real GPU (marked ``gpu``).

No machine of this project has a GPU, so these skip here and in CI, saying
why; they are written to pass the first time they meet one (the same
behaviours are proven against the fake driver in test_cuda_fake.py and
test_cuda_bridges.py). The GPU kit (``make gpu-kit``) carries them, with
test_gpu_exchange.py, to a machine that has one."""

from __future__ import annotations

import godevarrow as gda
import pyarrow as pa
import pytest


def _real_gpu() -> str:
    """Why the real-GPU tests cannot run here ('' when they can)."""
    try:
        import cupy
    except ImportError:  # make test installs it (requirements-dev.txt)
        return "CuPy is not installed"
    import godevarrow.cupy as gcp

    try:
        gcp._usable_device(cupy)  # CuPy's own reason, as to_cupy reports it
    except gda.DeviceError as e:
        return str(e)
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
    from cudf_round_trips import round_trip_keeps_names

    round_trip_keeps_names(cudf)  # also run against the stand-ins: test_cudf_standin.py


def test_cudf_slices_give_their_rows(cp):
    cudf = pytest.importorskip("cudf", reason="cuDF is not installed")
    from cudf_round_trips import slices_give_their_rows

    slices_give_their_rows(cudf)  # also run against the stand-ins: test_cudf_standin.py
