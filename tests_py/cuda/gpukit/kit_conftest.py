"""The GPU kit's conftest (make gpu-kit copies it to tests/conftest.py).

It holds only what the kit's test files import or use from the suite's
conftest.py (tests_py/conftest.py), written again without its ties to the
fake driver and to the source tree: on the kit's machine there is no Go, no
fake driver and no checkout, only the wheel, a CUDA driver and Python.
test_gpu_kit.py imports every kit test file under this conftest, so a name
missing here fails `make test`, not the GPU run.
"""

from __future__ import annotations

import os
import pathlib

import pytest

HERE = pathlib.Path(__file__).resolve().parent
CORPUS = pathlib.Path(os.environ.get("GODEVARROW_CORPUS", HERE / "corpus"))


def corpus_files() -> list[pathlib.Path]:
    return sorted(CORPUS.glob("*.stream")) if CORPUS.is_dir() else []


def corpus_params() -> list:
    """One pytest param per corpus file, or a placeholder that ``corpus_dir`` skips."""
    files = corpus_files()
    if not files:
        return [pytest.param("missing", id="corpus-missing")]
    return [pytest.param(f.name, id=f.name.removesuffix(".stream")) for f in files]


@pytest.fixture
def corpus_dir() -> pathlib.Path:
    if not CORPUS.is_dir():
        pytest.skip(f"the Arrow IPC gold corpus is not at {CORPUS} (the kit carries it in tests/corpus)")
    return CORPUS


class DeviceArrayOnly:
    """Offers only ``__arrow_c_device_array__`` of ``inner``."""

    def __init__(self, inner):
        self.inner = inner

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        return self.inner.__arrow_c_device_array__(requested_schema, **kwargs)


class DeviceCapsules:
    """Hands out the given capsules from the device protocol methods."""

    def __init__(self, array=None, stream=None):
        self.array, self.stream = array, stream

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        return self.array

    def __arrow_c_device_stream__(self, requested_schema=None, **kwargs):
        return self.stream
