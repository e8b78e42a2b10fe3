"""Every script in examples/ runs and finishes cleanly."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
SCRIPTS = sorted(EXAMPLES.glob("*.py")) + sorted(EXAMPLES.glob("*/run.py"))


def test_there_are_examples():
    assert len(SCRIPTS) >= 4


@pytest.mark.parametrize("script", SCRIPTS, ids=[str(s.relative_to(EXAMPLES)) for s in SCRIPTS])
def test_example_runs(script):
    if script.parent.name.startswith("go_") and shutil.which("go") is None:
        pytest.skip("this example builds Go code: the Go toolchain is not on PATH (a wheel install needs none)")
    env = dict(os.environ)
    r = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=script.parent, env=env
    )
    assert r.returncode == 0, f"{script.name} failed:\n{r.stdout}\n{r.stderr}"
    assert r.stdout.strip(), "an example prints what it did"
