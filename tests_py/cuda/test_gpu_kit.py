"""The GPU kit (``make gpu-kit``) laid out without a GPU, so it does not rot
between the rare runs on one: its files are there and under the size limit,
run.sh parses, the kit's tests import under the kit's own conftest (no fake
driver, no source tree) and skip with the reason, collecting as many tests
as the same files do here, and the bench's device-only mode and the report
writer run to their end."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile

import godevarrow as gda
import pytest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE / "gpukit"))
import assemble  # noqa: E402  (tests_py/cuda/gpukit is not a package)

NO_DRIVER = {"GODEVARROW_LIBCUDA": "/nonexistent/libcuda.so.1"}


@pytest.fixture(scope="module")
def kit(tmp_path_factory) -> pathlib.Path:
    """The kit, with a stand-in for the wheel: an archive of the godevarrow
    this suite runs (its installed files, as a wheel holds them), which
    run.sh's KIT_NO_VENV mode unpacks onto PYTHONPATH. The layout and run.sh
    are under test here; test-wheel tests the wheel itself."""
    root = tmp_path_factory.mktemp("gpukit")
    package = pathlib.Path(gda.__file__).resolve().parent
    wheel = root / "godevarrow-0.0.0-cp310-abi3-manylinux_2_17_x86_64.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted(package.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                z.write(p, p.relative_to(package.parent).as_posix())
    out = root / "gpu-kit"
    notes = assemble.assemble(str(wheel), out, None)
    assert any("MB" in n for n in notes), notes
    return out


def run(args: list[str], cwd: pathlib.Path, env: dict[str, str] | None = None, timeout: float = 300):
    full = dict(os.environ)
    full.update(env or {})
    return subprocess.run(args, cwd=cwd, env=full, capture_output=True, text=True, timeout=timeout)


def test_the_kit_holds_the_wheel_the_tests_the_bench_and_run_sh(kit):
    names = {p.relative_to(kit).as_posix() for p in kit.rglob("*") if p.is_file()}
    expected = {"run.sh", "report.py", "README.md", "bench/bench.py", "tests/conftest.py", "tests/pytest.ini"}
    expected |= {f"tests/{p.name}" for p in assemble.HELPERS}
    expected |= {f"tests/{p.name}" for p in sorted(HERE.glob("test_gpu*.py")) if p.name != "test_gpu_kit.py"}
    assert {"tests/test_gpu.py", "tests/test_gpu_exchange.py"} <= expected
    assert expected <= names, f"missing from the kit: {sorted(expected - names)}"
    assert "tests/test_gpu_kit.py" not in names
    assert len([n for n in names if n.endswith("x86_64.whl") and "/" not in n]) == 1
    corpus = sorted(assemble.corpus_dir().glob("*.stream")) if assemble.corpus_dir().is_dir() else []
    assert {f"tests/corpus/{p.name}" for p in corpus} <= names
    assert assemble.size_of(kit) < assemble.LIMIT
    assert os.access(kit / "run.sh", os.X_OK)


def test_run_sh_parses(kit):
    r = run(["bash", "-n", str(kit / "run.sh")], kit)
    assert r.returncode == 0, r.stderr


def test_assemble_refuses_a_kit_over_its_size_limit(tmp_path, monkeypatch):
    wheel = tmp_path / "godevarrow-0.0.0-cp310-abi3-manylinux_2_17_x86_64.whl"
    wheel.write_bytes(b"\0" * 1024)
    monkeypatch.setattr(assemble, "LIMIT", 1000)
    with pytest.raises(SystemExit, match="over its 0 MB limit"):
        assemble.assemble(str(wheel), tmp_path / "kit", None)


def _junit(path: pathlib.Path) -> list[tuple[str, str, str]]:
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome, message = child.tag, child.get("message") or ""
        cases.append((case.get("name", ""), outcome, message))
    return cases


@pytest.mark.parametrize(
    "env, reason",
    [(NO_DRIVER, "needs a real CUDA GPU"), ({}, "needs a real CUDA GPU")],
    ids=["no-driver", "this-process-driver"],
)
def test_the_kits_tests_import_and_skip_without_a_gpu(kit, tmp_path, env, reason):
    if not env and "fakecuda" not in os.environ.get("GODEVARROW_LIBCUDA", ""):
        pytest.skip("the fake driver is not configured in this process (make test sets it)")
    junit = tmp_path / "junit.xml"
    r = run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--junitxml", str(junit), "."],
        kit / "tests",
        env,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    cases = _junit(junit)
    assert cases, r.stdout[-2000:]
    wrong = [c for c in cases if c[1] != "skipped" or reason not in c[2] and "not installed" not in c[2]]
    assert not wrong, wrong[:5]
    # the kit's conftest gives the same tests as the suite's (the corpus's parameters included)
    files = [str(p) for p in sorted(HERE.glob("test_gpu*.py")) if p.name != "test_gpu_kit.py"]
    here = run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q", *files], REPO, env)
    collected = [line for line in here.stdout.splitlines() if "::" in line]
    assert len(cases) == len(collected), (len(cases), len(collected), here.stdout[-1000:])


def test_the_bench_device_only_mode_and_the_report_run_without_a_gpu(kit, tmp_path):
    bench = tmp_path / "bench.md"
    r = run(
        [sys.executable, str(kit / "bench" / "bench.py"), "--device-only", "--quick", "--out", str(bench)],
        tmp_path,
        NO_DRIVER,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    text = bench.read_text()
    assert "# godevarrow device benchmarks" in text and "device rows skipped" in text, text
    junit = tmp_path / "junit.xml"
    junit.write_text(
        '<testsuites><testsuite><testcase classname="t" name="x">'
        '<skipped message="why"/></testcase></testsuite></testsuites>'
    )
    report = tmp_path / "report.md"
    args = ["--out", str(report), "--junit", str(junit), "--pytest-log", str(tmp_path / "none.log")]
    args += ["--pytest-rc", "0", "--bench", str(bench), "--bench-rc", "0"]
    r = run([sys.executable, str(kit / "report.py"), *args], tmp_path, NO_DRIVER)
    assert r.returncode == 0, r.stderr[-2000:]
    text = report.read_text()
    for part in (
        "## GPU and driver",
        "CUDA driver: cannot be loaded",
        "- pyarrow ",
        "0 passed, 0 failed, 0 error, 1 skipped",
        "| t::x | skipped | why |",
        "device rows skipped",
    ):
        assert part in text, (part, text[:2000])


def test_run_sh_writes_its_report_without_a_gpu(kit, tmp_path):
    out = tmp_path / "out"
    env = dict(NO_DRIVER, PYTHON=sys.executable, KIT_NO_VENV="1", KIT_QUICK="1", OUT=str(out))
    r = run(["bash", str(kit / "run.sh")], tmp_path, env, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert {"report.md", "run.log", "junit.xml", "bench.md", "pytest.log"} <= {p.name for p in out.iterdir()}
    report = (out / "report.md").read_text()
    cases = _junit(out / "junit.xml")
    assert cases and all(c[1] == "skipped" for c in cases), cases[:5]
    assert f"0 passed, 0 failed, 0 error, {len(cases)} skipped (pytest exit 0)" in report, report[:3000]
    assert "godevarrow-gpu-kit." in report, "the kit's godevarrow was not the one imported"
    for part in ("CUDA driver: cannot be loaded", "## Device bench (exit 0)", "device rows skipped"):
        assert part in report, (part, report[:3000])
