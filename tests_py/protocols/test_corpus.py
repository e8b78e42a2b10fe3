"""Every file of Arrow's gold IPC corpus round-trips pyarrow -> godevarrow -> pyarrow,
through every protocol, and validates in Go."""

from __future__ import annotations

import godevarrow as gda
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest
from conftest import ArrayOnly, DeviceArrayOnly, DeviceStreamOnly, corpus_params

pytestmark = pytest.mark.parametrize("name", corpus_params())


def read_table(corpus_dir, name) -> pa.Table:
    with ipc.open_stream(corpus_dir / name) as reader:
        return reader.read_all()


def read_batches(corpus_dir, name) -> list[pa.RecordBatch]:
    """The batches as the file has them (Table.to_batches() would drop empty ones)."""
    with ipc.open_stream(corpus_dir / name) as reader:
        return list(reader)


def describe_difference(got: pa.RecordBatch, want: pa.RecordBatch) -> str:
    for i in range(want.num_columns):
        try:
            g, w = got.column(i), want.column(i)
        except KeyError:  # lint: allow-except-pass a failure message only; day_time_interval columns
            continue
        if not g.equals(w):
            return f"column {want.schema.field(i).name!r} differs: {len(g)} values, {len(w)} expected"
    return "data differs"


def assert_batch_equal(got, want: pa.RecordBatch) -> None:
    assert isinstance(got, pa.RecordBatch), type(got)
    same_schema = got.schema.equals(want.schema, check_metadata=True)
    assert same_schema, f"schema\n{got.schema}\n!=\n{want.schema}"
    assert got.num_rows == want.num_rows
    same = got.equals(want)
    assert same, describe_difference(got, want)


def exports_to_pyarrow(g: gda.RecordBatch) -> dict[str, pa.RecordBatch]:
    """The batch back in pyarrow through each way out of godevarrow."""
    return {
        "pa.record_batch": pa.record_batch(g),
        "to_pyarrow": g.to_pyarrow(),
        "__arrow_c_array__": pa.RecordBatch._import_from_c_capsule(*g.__arrow_c_array__()),
        "__arrow_c_device_array__": pa.RecordBatch._import_from_c_device_capsule(*g.__arrow_c_device_array__()),
    }


@pytest.mark.parametrize(
    "wrap",
    [lambda b: b, DeviceArrayOnly, ArrayOnly],
    ids=["pyarrow-batch", "device-array-only", "c-array-only"],
)
def test_batches_round_trip(name, wrap, corpus_dir, leak_check):
    for batch in read_batches(corpus_dir, name):
        g = gda.record_batch(wrap(batch))
        assert isinstance(g, gda.RecordBatch)
        assert g.device == gda.Device.cpu()
        assert g.num_rows == batch.num_rows
        assert g.num_columns == batch.num_columns
        assert g.column_names == batch.schema.names
        assert g.schema == gda.schema(batch.schema)
        for how, got in exports_to_pyarrow(g).items():
            try:
                assert_batch_equal(got, batch)
            except AssertionError as exc:
                raise AssertionError(f"via {how}: {exc}") from None


def test_struct_array_round_trip(name, corpus_dir, leak_check):
    for batch in read_batches(corpus_dir, name):
        # pa.StructArray.from_arrays(batch.columns, ...) cannot wrap every type in pyarrow
        # (day_time_interval columns raise KeyError), to_struct_array() builds the same array.
        struct = batch.to_struct_array()
        g = gda.array(struct)
        assert type(g) is gda.Array  # a struct array is not made a RecordBatch
        assert len(g) == len(struct)
        assert g.schema.format == "+s"
        for back in (pa.array(g), g.to_pyarrow()):
            assert back.type.equals(struct.type, check_metadata=True), f"{back.type} != {struct.type}"
            assert back.equals(struct)


def test_known_schemas_round_trip(name, corpus_dir, leak_check):
    # again, and a twin with an equal schema object of its own: pyarrow is
    # asked for the array alone when the schema is flat (docs/design.md,
    # "pyarrow's schema, exported once")
    for batch in read_batches(corpus_dir, name):
        twin = pa.RecordBatch._import_from_c_capsule(*batch.__arrow_c_array__())
        for source in (batch, batch, twin):
            assert_batch_equal(pa.record_batch(gda.record_batch(source)), batch)
        struct = batch.to_struct_array()
        for source in (struct, struct):
            back = pa.array(gda.array(source))
            assert back.type.equals(struct.type, check_metadata=True) and back.equals(struct)


@pytest.mark.parametrize(
    "offset,length", [(1, None), (0, 0), (1, 0), (2, 3)], ids=["from-1", "empty", "empty-at-1", "2+3"]
)
def test_sliced_batches_round_trip(name, offset, length, corpus_dir, leak_check):
    for batch in read_batches(corpus_dir, name):
        want = batch.slice(offset, length)
        # sliced by pyarrow, then exported
        g = gda.record_batch(want)
        assert g.num_rows == want.num_rows
        g.validate(full=True)
        assert_batch_equal(pa.record_batch(g), want)
        assert_batch_equal(pa.RecordBatch._import_from_c_capsule(*g.__arrow_c_array__()), want)
        # sliced on the Go side
        if offset <= batch.num_rows:
            gs = gda.record_batch(batch).slice(
                offset, min(length, batch.num_rows - offset) if length is not None else None
            )
            assert gs.num_rows == want.num_rows
            gs.validate(full=True)
            assert_batch_equal(pa.record_batch(gs), want)
            assert_batch_equal(gs.to_pyarrow(), want)


def test_stream_round_trip(name, corpus_dir, leak_check):
    want = read_table(corpus_dir, name)
    with ipc.open_stream(corpus_dir / name) as reader:
        gs = gda.stream(reader)
        assert isinstance(gs, gda.ArrayStream)
        assert gs.schema == gda.schema(want.schema)
        assert gs.device_type == gda.DeviceType.CPU
        got = pa.RecordBatchReader.from_stream(gs).read_all()
    assert got.schema.equals(want.schema, check_metadata=True), f"{got.schema}\n!=\n{want.schema}"
    assert got.equals(want)


def test_stream_keeps_every_batch(name, corpus_dir, leak_check):
    want = read_batches(corpus_dir, name)
    with ipc.open_stream(corpus_dir / name) as reader:
        got = list(pa.RecordBatchReader.from_stream(gda.stream(reader)))
    assert [b.num_rows for b in got] == [b.num_rows for b in want]
    for g, batch in zip(got, want):
        assert_batch_equal(g, batch)


def test_stream_iterated_in_godevarrow(name, corpus_dir, leak_check):
    want = read_batches(corpus_dir, name)
    with ipc.open_stream(corpus_dir / name) as reader, gda.stream(reader) as gs:
        got = list(gs)
    assert len(got) == len(want)
    for g, batch in zip(got, want):
        assert isinstance(g, gda.RecordBatch)
        assert_batch_equal(g.to_pyarrow(), batch)


def test_device_stream_round_trip(name, corpus_dir, leak_check):
    want = read_table(corpus_dir, name)
    with ipc.open_stream(corpus_dir / name) as reader:
        # pyarrow -> godevarrow -> (ArrowDeviceArrayStream) -> godevarrow -> (ArrowArrayStream) -> pyarrow
        again = gda.stream(DeviceStreamOnly(gda.stream(reader)))
        assert again.device_type == gda.DeviceType.CPU
        assert again.schema == gda.schema(want.schema)
        got = pa.RecordBatchReader.from_stream(again).read_all()
    assert got.schema.equals(want.schema, check_metadata=True)
    assert got.equals(want)
    # the same device stream, read batch by batch in godevarrow
    with ipc.open_stream(corpus_dir / name) as reader:
        batches = gda.stream(DeviceStreamOnly(gda.stream(reader))).read_all()
    assert pa.Table.from_batches([b.to_pyarrow() for b in batches], schema=want.schema).equals(want)


def test_validate_every_batch_and_column(name, corpus_dir, leak_check):
    for batch in read_batches(corpus_dir, name):
        g = gda.record_batch(batch)
        g.validate(full=True)
        g.validate(full=False)
        gda.validate(g)
        for column in g.columns:
            column.validate(full=True)
        gda.array(batch.to_struct_array()).validate(full=True)
