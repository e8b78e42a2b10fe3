"""Shared fixtures of the Python suite."""

from __future__ import annotations

import gc
import os
import pathlib

import godevarrow as gda
import pyarrow as pa
import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
CORPUS = pathlib.Path(
    os.environ.get("GODEVARROW_CORPUS", REPO.parent / "shared" / "testdata" / "arrow-ipc-integration")
)


def corpus_files() -> list[pathlib.Path]:
    return sorted(CORPUS.glob("*.stream")) if CORPUS.is_dir() else []


@pytest.fixture
def corpus_dir() -> pathlib.Path:
    if not CORPUS.is_dir():
        pytest.skip(f"the Arrow IPC gold corpus is not at {CORPUS} (it lives in shared/ beside the checkout)")
    return CORPUS


def snapshot() -> tuple[dict[str, int], int]:
    gc.collect()
    return gda.debug_live_objects(), pa.total_allocated_bytes()


@pytest.fixture
def leak_check():
    """Asserts that the Go side and pyarrow's allocator return to their
    baselines once the test dropped its objects."""
    before = snapshot()
    yield
    after = snapshot()
    assert after[0] == before[0], f"Go objects leaked: before {before[0]}, after {after[0]}"
    assert after[1] == before[1], f"pyarrow bytes leaked: before {before[1]}, after {after[1]}"
