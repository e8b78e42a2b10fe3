"""Builds the Go package filters into godevarrow (one Go runtime: godevarrow's
extension rebuilt with the package linked in) and calls its functions on
pyarrow data: a filter and an aggregate over a batch, and a filter over a
stream that runs as the stream is read."""

import pathlib
import subprocess
import sys
import tempfile

here = pathlib.Path(__file__).resolve().parent

# the package build-ext wrote must be imported before godevarrow (or GODEVARROW_EXTENSION
# names its extension): its functions live in that build of the extension
code = """
import filters
import godevarrow as gda
import pyarrow as pa

batch = pa.record_batch({"n": pa.array([4, 17, None, 42, 8]), "name": ["a", "b", "c", "d", "e"]})
big = filters.at_least(batch, "n", 10)  # Go reads pyarrow's buffers in place
assert isinstance(big, gda.RecordBatch)  # a Go *cdevice.Array is typed Array; a struct one is a RecordBatch
print("at_least(batch, 'n', 10):", big.to_pydict())
print("total(batch, 'n'):", filters.total(batch, "n"))

reader = pa.RecordBatchReader.from_batches(batch.schema, [batch] * 3)
stream = filters.stream_at_least(reader, "n", 10)  # returns at once: filtering happens as it is read
table = pa.table(stream)
print("stream_at_least: ", table.num_rows, "rows from 3 batches")
assert table.num_rows == 6 and filters.total(batch, "n") == 71
help_first_line = gda.go.at_least.__doc__.splitlines()[0]
print("gda.go.at_least.__doc__:", help_first_line)
"""
with tempfile.TemporaryDirectory() as out:
    subprocess.check_call([sys.executable, "-m", "godevarrow", "build-ext", "-o", out, str(here / "filters")])
    subprocess.check_call([sys.executable, "-c", code], cwd=out)
