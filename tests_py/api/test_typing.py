"""The types a type checker sees (mypy --strict over a user's code): slicing
keeps the receiver's class, a stream is typed by what it yields, and
to_pyarrow() is overloaded by what it is given. (The types of a build's
Go functions: tests_py/gofuncs/test_go_functions.py.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

USER_CODE = """
import godevarrow as gda

def check(batch: gda.RecordBatch, arr: gda.Array, producer: object) -> None:
    reveal_type(batch.slice(1))
    reveal_type(gda.slice(batch, 1, 2))
    reveal_type(arr.slice(1))
    reveal_type(gda.stream(batch))
    for item in gda.stream(batch):
        reveal_type(item)
    reveal_type(gda.stream(producer).read_all())
    reveal_type(next(gda.stream(arr)))
    reveal_type(gda.stream(batch).prefetch(4))
    reveal_type(gda.to_pyarrow(gda.stream(batch)))
    reveal_type(gda.Device("cuda:1"))
    table = gda.table(producer)
    reveal_type(table.slice(1))
    reveal_type(gda.slice(table, 1))
    reveal_type(table.column("x"))
    reveal_type(table.to_batches())
    reveal_type(table.to_pylist())
    reveal_type(gda.go.positive_sum)
    reveal_type(gda.call("positive_sum", batch))
    reveal_type(gda.stream(table))
    reveal_type(table.to_stream())
    reveal_type(gda.stream(gda.stream(table)))
    reveal_type(batch.to_pandas())
    reveal_type(gda.slice(producer, 1))
"""

EXPECTED = [
    "godevarrow._array.RecordBatch",
    "godevarrow._array.RecordBatch",
    "godevarrow._array.Array",
    "godevarrow._stream.ArrayStream[godevarrow._array.RecordBatch]",
    "godevarrow._array.RecordBatch",
    "list[godevarrow._array.Array]",
    "godevarrow._array.Array",
    "godevarrow._stream.ArrayStream[godevarrow._array.RecordBatch]",
    "Any",  # pyarrow ships no type information: its classes are Any to mypy
    "godevarrow._device.Device",
    "godevarrow._table.Table",
    "godevarrow._table.Table",
    "godevarrow._table.ChunkedArray",
    "list[godevarrow._array.RecordBatch]",
    "list[Any]",
    "godevarrow._gofunc.GoFunction",
    "Any",  # what a Go function returns is known to the .pyi build-ext writes, not to godevarrow
    "godevarrow._stream.ArrayStream[godevarrow._array.RecordBatch]",
    "godevarrow._stream.ArrayStream[godevarrow._array.RecordBatch]",
    "godevarrow._stream.ArrayStream[godevarrow._array.RecordBatch]",
    "Any",  # pandas, like pyarrow, is Any to mypy here
    "godevarrow._array.Array | godevarrow._table.ChunkedArray",
]


def test_a_type_checker_sees_precise_types(tmp_path):
    path = tmp_path / "user_code.py"
    path.write_text(textwrap.dedent(USER_CODE))
    cmd = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--ignore-missing-imports", str(path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "MYPYPATH": ""})
    revealed = re.findall(r'Revealed type is "([^"]+)"', proc.stdout)
    assert revealed == EXPECTED, proc.stdout + proc.stderr
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    assert errors == [], proc.stdout
