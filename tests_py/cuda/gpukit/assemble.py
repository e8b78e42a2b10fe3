"""Lays out the GPU kit (``make gpu-kit`` → build/gpu-kit/): the wheel, the
GPU tests with the conftest they need, the gold corpus, the bench, pytest's
wheels, run.sh and its report writer. Refuses a kit of 20 MB or more.

    python tests_py/cuda/gpukit/assemble.py --wheel 'dist/*x86_64.whl' --out build/gpu-kit \
        [--pytest-wheels DIR]
"""

from __future__ import annotations

import argparse
import glob
import os
import pathlib
import shutil
import sys

HERE = pathlib.Path(__file__).resolve().parent
GPU_TESTS = HERE.parent  # tests_py/cuda: the kit's test files
TESTS = GPU_TESTS.parent
REPO = TESTS.parent
LIMIT = 20 * 1000 * 1000
# what the kit's test files import beside conftest (plain Python, no fake driver)
HELPERS = (TESTS / "cabi.py", GPU_TESTS / "cudf_round_trips.py")
# test_gpu_kit.py checks the kit from the source tree: it stays behind
KIT_TESTS_EXCLUDED = ("test_gpu_kit.py",)
PYTEST_INI = """\
[pytest]
addopts = -ra --strict-markers
markers =
    gpu: needs a real CUDA GPU with CuPy or cuDF (skipped elsewhere)
    slow: long-running test
"""


def kit_test_files() -> list[pathlib.Path]:
    return [p for p in sorted(GPU_TESTS.glob("test_gpu*.py")) if p.name not in KIT_TESTS_EXCLUDED]


def corpus_dir() -> pathlib.Path:
    # where tests_py/conftest.py looks for it
    return pathlib.Path(
        os.environ.get("GODEVARROW_CORPUS", REPO.parent / "shared" / "testdata" / "arrow-ipc-integration")
    )


def size_of(root: pathlib.Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def assemble(wheel_pattern: str, out: pathlib.Path, pytest_wheels: str | None) -> list[str]:
    """Writes the kit to out; returns notes on what it could not include."""
    notes = []
    wheels = sorted(glob.glob(wheel_pattern))
    if len(wheels) != 1:
        raise SystemExit(f"assemble: want exactly one wheel matching {wheel_pattern!r}, found {wheels or 'none'}")
    if out.exists():
        shutil.rmtree(out)
    (out / "tests").mkdir(parents=True)
    (out / "bench").mkdir()
    shutil.copy2(wheels[0], out)
    for p in kit_test_files():
        shutil.copy2(p, out / "tests" / p.name)
    for p in HELPERS:
        shutil.copy2(p, out / "tests" / p.name)
    shutil.copy2(HERE / "kit_conftest.py", out / "tests" / "conftest.py")
    (out / "tests" / "pytest.ini").write_text(PYTEST_INI)
    corpus = corpus_dir()
    streams = sorted(corpus.glob("*.stream")) if corpus.is_dir() else []
    if streams:
        (out / "tests" / "corpus").mkdir()
        for p in streams:
            shutil.copy2(p, out / "tests" / "corpus" / p.name)
    else:
        notes.append(f"no gold corpus at {corpus}: its test skips on the GPU, saying so")
    shutil.copy2(REPO / "benchmarks" / "bench.py", out / "bench" / "bench.py")
    for name in ("driver_costs.py", "breakdown.py"):
        shutil.copy2(HERE / name, out / "bench" / name)
    for name in ("run.sh", "report.py"):
        shutil.copy2(HERE / name, out / name)
    (out / "run.sh").chmod(0o755)
    (out / "wheels").mkdir()
    if pytest_wheels:
        for p in sorted(pathlib.Path(pytest_wheels).glob("*.whl")):
            shutil.copy2(p, out / "wheels" / p.name)
    else:
        notes.append("no pytest wheels: run.sh then needs the machine's own pytest")
    (out / "README.md").write_text(
        "# godevarrow GPU kit\n\n"
        f"Built from {os.path.basename(wheels[0])}. On a machine with a CUDA driver, Python with pyarrow and numpy\n"
        "(and CuPy, PyTorch, cuDF where present), no Go and no network needed:\n\n"
        "    OUT=/where/the/report/goes bash run.sh\n\n"
        "It writes $OUT/report.md (GPU, driver, versions, every test's outcome, the device bench's rows)\n"
        "and exits non-zero when a test failed. docs/benchmarks.md in the repository says more.\n"
    )
    size = size_of(out)
    if size >= LIMIT:
        raise SystemExit(f"assemble: the kit is {size / 1e6:.1f} MB, over its {LIMIT / 1e6:.0f} MB limit")
    notes.append(f"{out}: {size / 1e6:.1f} MB")
    return notes


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--wheel", required=True, help="a glob matching exactly one wheel")
    p.add_argument("--out", required=True)
    p.add_argument("--pytest-wheels", help="a folder of pytest's wheels and its dependencies'")
    a = p.parse_args()
    for note in assemble(a.wheel, pathlib.Path(a.out), a.pytest_wheels):
        print(f"gpu-kit: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
