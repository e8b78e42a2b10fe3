"""godevarrow objects across processes: pickling (Arrow IPC), multiprocessing
with spawn and forkserver, and Dask's distributed scheduler."""

from __future__ import annotations

import multiprocessing as mp
import pickle

import godevarrow as gda
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest
from conftest import corpus_files

FILES = corpus_files() or []


def as_batch(g: gda.Array) -> pa.RecordBatch:
    from godevarrow import _godevarrow as lib

    return pa.record_batch(gda.RecordBatch(lib.array_as_batch(g._h)))


def batches_of(path):
    with ipc.open_stream(path) as r:
        return list(r)


@pytest.mark.parametrize("path", FILES, ids=[f.name.removesuffix(".stream") for f in FILES])
def test_corpus_pickles(path, leak_check):
    for batch in batches_of(path):
        g = gda.record_batch(batch)
        back = pickle.loads(pickle.dumps(g))
        assert isinstance(back, gda.RecordBatch)
        assert back.schema == g.schema
        assert back.to_pyarrow().equals(batch)
        if batch.num_columns and batch.num_rows > 1:
            col = g.column(0).slice(1)
            col_back = pickle.loads(pickle.dumps(col))
            assert type(col_back) is gda.Array and col_back.schema == col.schema
            # compared as one-column batches: pyarrow cannot wrap every array type
            assert as_batch(col_back).equals(as_batch(col))


def test_schemas_pickle(leak_check):
    batch = pa.record_batch({"a": pa.array([1], pa.int8()), "b": pa.array(["x"])}, metadata={"k": "v"})
    g = gda.record_batch(batch)
    for s in (g.schema, g.column(1).schema, gda.schema(pa.field("d", pa.dictionary(pa.int16(), pa.utf8()), False))):
        assert pickle.loads(pickle.dumps(s)) == s


def test_streams_do_not_pickle(leak_check):
    s = gda.stream(gda.record_batch(pa.record_batch({"a": [1]})))
    with pytest.raises(TypeError, match="read once"):
        pickle.dumps(s)
    s.close()


@pytest.mark.fakecuda
def test_device_arrays_come_back_on_the_device(leak_check):
    g = gda.array(pa.array([1, 2, 3])).to_device("cuda:1")
    back = pickle.loads(pickle.dumps(g))
    assert back.device == gda.Device.cuda(1)
    assert back.to_pyarrow().to_pylist() == [1, 2, 3]


def column_sum(batch: gda.RecordBatch) -> tuple[int, gda.RecordBatch]:
    """Runs in a worker: reads the batch godevarrow sent and sends it back."""
    t = batch.to_pyarrow()
    return sum(v for v in t.column(0).to_pylist() if v is not None), batch


def _batch(i: int) -> gda.RecordBatch:
    return gda.record_batch(pa.record_batch({"x": pa.array(range(i, i + 100)), "s": pa.array([str(i)] * 100)}))


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_multiprocessing(method, leak_check):
    ctx = mp.get_context(method)
    batches = [_batch(i) for i in range(4)]
    with ctx.Pool(2) as pool:
        results = pool.map(column_sum, batches)
    for i, (total, back) in enumerate(results):
        assert total == sum(range(i, i + 100))
        assert back.to_pyarrow().equals(batches[i].to_pyarrow())
    del results, batches


def test_dask_distributed_moves_batches_between_workers(leak_check):
    distributed = pytest.importorskip("distributed", reason="dask[distributed] is not installed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        workers = list(client.scheduler_info()["workers"])
        assert len(workers) == 2
        futures = [client.submit(_batch, i, workers=[workers[i % 2]], pure=False) for i in range(4)]
        # each batch made on one worker is read on the other
        sums = [client.submit(column_sum, f, workers=[workers[(i + 1) % 2]], pure=False) for i, f in enumerate(futures)]
        results = client.gather(sums)
        for i, (total, back) in enumerate(results):
            assert total == sum(range(i, i + 100))
            assert back.num_rows == 100 and back.column_names == ["x", "s"]
            # the batch that made the round trip through both workers is intact
            assert back.to_pyarrow().equals(_batch(i).to_pyarrow())
        del results, futures, sums
