"""Pickling travels as Arrow IPC, which carries every type, field names,
nullability and metadata. A non-struct array travels as the single column of
a batch whose field is the array's own (name, flags, metadata), marked with
the schema metadata key ``IPC_COLUMN``; a record batch travels as itself."""

from __future__ import annotations

from typing import Any

from ._godevarrow import ArrowInvalid
from ._optional import require

IPC_COLUMN = "godevarrow:array"


def batch_bytes(batch: Any, *, single_column: bool = False) -> bytes:
    """A pyarrow RecordBatch as an IPC stream of one batch."""
    pa = require("pyarrow", "unpickling a godevarrow object")

    if single_column:
        batch = batch.replace_schema_metadata({IPC_COLUMN: "1"})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes()  # type: ignore[no-any-return]


def schema_bytes(pa_schema: Any, *, single_column: bool = False) -> bytes:
    """A pyarrow Schema (or, single_column, a Field) as an IPC stream of no batches."""
    pa = require("pyarrow", "unpickling a godevarrow object")

    target = pa.schema([pa_schema], metadata={IPC_COLUMN: "1"}) if single_column else pa_schema
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, target):
        pass  # the schema message alone
    return sink.getvalue().to_pybytes()  # type: ignore[no-any-return]


def _is_single_column(schema: Any) -> bool:
    return bool((schema.metadata or {}).get(IPC_COLUMN.encode()) == b"1")


def read_batch(data: bytes) -> tuple[Any, bool]:
    """The batch of ``batch_bytes`` (metadata marker removed) and whether it
    carries a single array."""
    pa = require("pyarrow", "unpickling a godevarrow object")

    try:
        batch = pa.ipc.open_stream(pa.py_buffer(data)).read_next_batch()
    except StopIteration:
        # never let StopIteration out of pickle.loads: in a map() or a
        # generator it would end the iteration silently, losing data
        raise ArrowInvalid("the pickled IPC payload has no record batch (truncated, or not godevarrow's)") from None
    single = _is_single_column(batch.schema)
    return (batch.replace_schema_metadata(None) if single else batch), single


def read_schema(data: bytes) -> Any:
    """The pyarrow Schema or Field of ``schema_bytes``."""
    pa = require("pyarrow", "unpickling a godevarrow object")

    schema = pa.ipc.open_stream(pa.py_buffer(data)).schema
    return schema.field(0) if _is_single_column(schema) else schema
