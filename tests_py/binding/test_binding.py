"""The binding's declarations: the stub file is generated from them, and the
module has exactly what they declare (docs/design.md, "Layers")."""

from __future__ import annotations

import subprocess
import sys

import godevarrow as gda
import pyarrow as pa
from conftest import REPO

lib = gda._godevarrow


def test_the_stub_file_is_in_step_with_the_declarations():
    result = subprocess.run(
        [sys.executable, str(REPO / "capsule" / "gen_stub.py"), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_records_are_read_by_name():
    arr = gda.array(pa.array([1, None, 3]))
    info = lib.array_info(arr._h)
    assert isinstance(info, lib.ArrayInfo)
    assert (info.length, info.offset, info.null_count, info.n_children, info.is_struct) == (3, 0, 1, 0, False)
    assert info.device_type == gda.DeviceType.CPU
    counters = lib.debug_counters()
    # the cache's size and what the device pools keep: bounded, no live
    # objects; and a running count of tensors made from templates
    cache = {
        "dlpack_template_exports",
        "schema_cache_entries",
        "schema_cache_bytes",
        "pooled_streams",
        "pooled_events",
        "pooled_host_buffers",
        "pooled_device_blocks",
        "pooled_device_bytes",
    }
    assert set(type(counters).__match_args__) == set(gda.debug_live_objects()) | cache
    schema = lib.schema_info(gda.schema(pa.field("a", pa.int8(), metadata={b"k": b"v"}))._h)
    assert (schema.format, schema.name, schema.n_children, schema.has_dictionary) == ("c", "a", 0, False)
    assert schema.metadata is not None
    status = lib.cuda_status()
    assert isinstance(status.available, bool) and isinstance(status.library, str)


def test_every_exception_class_derives_from_the_package_base():
    for name in ("ArrowInvalid", "ArrowNotImplementedError", "DeviceError", "GodevarrowTypeError"):
        assert issubclass(getattr(lib, name), lib.GodevarrowError)
    assert issubclass(lib.StreamError, OSError) and issubclass(lib.DLPackError, BufferError)
