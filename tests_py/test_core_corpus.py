"""Every file of Arrow's gold IPC corpus round-trips pyarrow -> godevarrow -> pyarrow."""

from __future__ import annotations

import pathlib

import godevarrow as gda
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest
from conftest import corpus_files

FILES = corpus_files()
IDS = [f.name.removesuffix(".stream") for f in FILES]
if not FILES:
    FILES = [pathlib.Path("missing")]
    IDS = ["corpus-missing"]


def read(path: pathlib.Path) -> pa.Table:
    with ipc.open_stream(path) as reader:
        return reader.read_all()


def assert_same_batch(got: pa.RecordBatch, want: pa.RecordBatch) -> None:
    assert got.schema.equals(want.schema, check_metadata=True), f"{got.schema}\n!=\n{want.schema}"
    assert got.equals(want)


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_batches_round_trip(path, corpus_dir, leak_check):
    table = read(corpus_dir / path.name)
    for batch in table.to_batches():
        gbatch = gda.record_batch(batch)
        assert gbatch.num_rows == batch.num_rows
        assert gbatch.column_names == batch.schema.names
        gbatch.validate(full=True)
        assert_same_batch(pa.record_batch(gbatch), batch)
        assert_same_batch(gbatch.to_pyarrow(), batch)
        # through the plain C Data Interface too
        assert_same_batch(pa.RecordBatch._import_from_c_capsule(*gbatch.__arrow_c_array__()), batch)


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_struct_array_round_trip(path, corpus_dir, leak_check):
    table = read(corpus_dir / path.name)
    for batch in table.to_batches():
        struct = batch.to_struct_array()
        garr = gda.array(struct)
        assert type(garr) is gda.Array
        back = pa.array(garr)
        assert back.type.equals(struct.type, check_metadata=True)
        assert back.equals(struct)


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_sliced_batches_round_trip(path, corpus_dir, leak_check):
    table = read(corpus_dir / path.name)
    for batch in table.to_batches():
        for offset, length in [(1, None), (0, 0), (batch.num_rows // 2, 1)]:
            if offset > batch.num_rows:
                continue
            sliced = batch.slice(offset, length)
            gbatch = gda.record_batch(sliced)
            gbatch.validate(full=True)
            assert_same_batch(pa.record_batch(gbatch), sliced)
        # and sliced on the Go side
        if batch.num_rows > 1:
            gslice = gda.record_batch(batch).slice(1)
            assert gslice.num_rows == batch.num_rows - 1
            assert_same_batch(pa.record_batch(gslice), batch.slice(1))


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_stream_round_trip(path, corpus_dir, leak_check):
    want = read(corpus_dir / path.name)
    with ipc.open_stream(corpus_dir / path.name) as reader:
        gstream = gda.stream(reader)
        assert gstream.schema == gda.schema(want.schema)
        got = pa.RecordBatchReader.from_stream(gstream).read_all()
    assert got.schema.equals(want.schema, check_metadata=True)
    assert got.equals(want)


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_device_stream_round_trip(path, corpus_dir, leak_check):
    want = read(corpus_dir / path.name)
    with ipc.open_stream(corpus_dir / path.name) as reader:
        # pyarrow reader -> godevarrow -> godevarrow device stream -> godevarrow -> pyarrow
        again = gda.stream(_DeviceStreamOnly(gda.stream(reader)))
        assert again.device_type == gda.DeviceType.CPU
        batches = again.read_all()
    got = pa.Table.from_batches([b.to_pyarrow() for b in batches], schema=want.schema)
    assert got.equals(want)


class _DeviceStreamOnly:
    """Offers only __arrow_c_device_stream__, so the device stream path is used."""

    def __init__(self, inner):
        self.inner = inner

    def __arrow_c_device_stream__(self, requested_schema=None, **kwargs):
        return self.inner.__arrow_c_device_stream__(requested_schema, **kwargs)
