"""Writes the GPU kit's report (run.sh calls it with the kit's venv Python):
the GPU and its driver, the versions of what ran, every test's outcome (from
pytest's JUnit XML) and the device bench's rows, in one Markdown file."""

from __future__ import annotations

import argparse
import ctypes
import datetime
import importlib
import os
import platform
import shutil
import subprocess
import xml.etree.ElementTree as ET


def gpu_lines() -> list[str]:
    lines = []
    smi = shutil.which("nvidia-smi")
    if smi:
        q = "name,driver_version,memory.total,pci.bus_id"
        r = subprocess.run([smi, f"--query-gpu={q}", "--format=csv,noheader"], capture_output=True, text=True)
        for row in r.stdout.strip().splitlines():
            lines.append(f"- GPU (nvidia-smi: {q}): {row}")
        if r.returncode:
            lines.append(f"- nvidia-smi failed ({r.returncode}): {r.stderr.strip()[:200]}")
    else:
        lines.append("- nvidia-smi: not on PATH")
    try:
        cuda = ctypes.CDLL(os.environ.get("GODEVARROW_LIBCUDA") or "libcuda.so.1")
    except OSError as e:
        return lines + [f"- CUDA driver: cannot be loaded ({e})"]
    version, count = ctypes.c_int(), ctypes.c_int()
    rc = cuda.cuInit(0)
    cuda.cuDriverGetVersion(ctypes.byref(version))
    cuda.cuDeviceGetCount(ctypes.byref(count))
    lines.append(
        f"- CUDA driver API {version.value // 1000}.{version.value % 1000 // 10} (cuInit: {rc}),"
        f" {count.value} device(s)"
    )
    for i in range(count.value):
        dev, name = ctypes.c_int(), ctypes.create_string_buffer(256)
        cuda.cuDeviceGet(ctypes.byref(dev), i)
        cuda.cuDeviceGetName(name, 256, dev)
        lines.append(f"- cuda:{i}: {name.value.decode(errors='replace')}")
    return lines


def version_lines() -> list[str]:
    lines = [f"- Python {platform.python_version()} ({platform.machine()}, {platform.platform()})"]
    for module in ("godevarrow", "pyarrow", "numpy", "cupy", "torch", "cudf", "pytest"):
        try:
            m = importlib.import_module(module)
        except Exception as e:  # a broken install is worth reporting as such, whatever it raises
            lines.append(f"- {module}: not importable ({type(e).__name__}: {str(e)[:120]})")
            continue
        extra = ""
        if module == "godevarrow":
            ok, count, library, message = m.cuda_status()
            extra = f" from {os.path.dirname(m.__file__)}; cuda_status: ok={ok}, devices={count},"
            extra += f" driver {library} {message}"
        if module == "torch":
            extra = f" (CUDA {m.version.cuda}, available: {m.cuda.is_available()})"
        lines.append(f"- {module} {getattr(m, '__version__', '?')}{extra}")
    return lines


def test_lines(junit: str) -> tuple[list[str], str]:
    if not os.path.exists(junit):
        return ["No JUnit XML was written: pytest did not run to its end (see its log below)."], "no result"
    root = ET.parse(junit).getroot()
    rows, counts = [], {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    for case in root.iter("testcase"):
        outcome, detail = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed"}.get(child.tag, child.tag)
                detail = (child.get("message") or "").replace("|", "/").replace("\n", " ")[:200]
        counts[outcome] += 1
        rows.append(f"| {case.get('classname', '')}::{case.get('name', '')} | {outcome} | {detail} |")
    summary = ", ".join(f"{v} {k}" for k, v in counts.items())
    return ["| test | outcome | detail |", "| --- | --- | --- |"] + rows, summary


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--junit", required=True)
    p.add_argument("--pytest-log", required=True)
    p.add_argument("--pytest-rc", required=True)
    p.add_argument("--bench", required=True)
    p.add_argument("--bench-rc", required=True)
    p.add_argument("--install", default="")
    a = p.parse_args()
    tests, summary = test_lines(a.junit)
    text = [
        "# godevarrow GPU kit report",
        "",
        f"{datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}, host {platform.node()},"
        f" {os.cpu_count()} CPUs. {a.install}",
        "",
        "## GPU and driver",
        "",
        *gpu_lines(),
        "",
        "## Versions",
        "",
        *version_lines(),
        "",
        f"## Tests: {summary} (pytest exit {a.pytest_rc})",
        "",
        *tests,
        "",
        f"## Device bench (exit {a.bench_rc})",
        "",
    ]
    if os.path.exists(a.bench):
        with open(a.bench) as f:
            text.append(f.read())
    else:
        text.append("The bench wrote no report (see run.log).")
    log = open(a.pytest_log, errors="replace").read() if os.path.exists(a.pytest_log) else ""
    text += ["", "## pytest's log (last 60 lines)", "", "```", *log.splitlines()[-60:], "```", ""]
    with open(a.out, "w") as f:
        f.write("\n".join(text))
    print(f"report: {a.out} (tests: {summary})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
