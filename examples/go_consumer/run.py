"""Builds consumer.go into a shared library and hands it a stream made in
Python (pyarrow batches, via godevarrow's __arrow_c_stream__)."""

import ctypes
import os
import pathlib
import subprocess
import sys
import tempfile

import godevarrow as gda
import pyarrow as pa

here = pathlib.Path(__file__).resolve().parent
out = pathlib.Path(tempfile.mkdtemp()) / "libconsumer.so"
subprocess.check_call(
    ["go", "build", "-buildmode=c-shared", "-o", str(out), "."],
    cwd=here,
    env={**os.environ, "GOFLAGS": "-buildvcs=false"},
)
lib = ctypes.CDLL(str(out))
lib.SumFirstColumn.restype = ctypes.c_int64
lib.SumFirstColumn.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64)]

batches = [pa.record_batch({"n": pa.array(range(i * 100, (i + 1) * 100))}) for i in range(5)]
stream = gda.stream(pa.RecordBatchReader.from_batches(batches[0].schema, batches))
capsule = stream.__arrow_c_stream__()
ctypes.pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
ctypes.pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
pointer = ctypes.pythonapi.PyCapsule_GetPointer(capsule, b"arrow_array_stream")
count = ctypes.c_int64(0)
total = lib.SumFirstColumn(pointer, ctypes.byref(count))  # Go moves and releases the stream
print(f"Go read {count.value} batches, sum = {total}")
assert total == sum(range(500)) and count.value == 5
sys.exit(0)
