"""The code the README and the getting-started page show runs, and prints
what their comments say it prints; so do the Python guide's blocks marked
as running here."""

from __future__ import annotations

import pathlib
import re

import pytest
from conftest import run_python

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = ["README.md", "docs/getting-started.md", "docs/python-guide.md"]
# Pages of recipes (fragments) run only the blocks marked so.
MARKED_ONLY = {"docs/python-guide.md": "<!-- runs in tests_py/packaging/test_docs_code.py -->\n"}


def _python_blocks(page: str) -> list[str]:
    marker = re.escape(MARKED_ONLY.get(page, ""))
    return re.findall(rf"^{marker}```python\n(.*?)^```", (ROOT / page).read_text(), re.M | re.S)


def _printed_per_comment(block: str) -> list[str]:
    """What each print(...) line's trailing comment says it prints."""
    return [m.group(1).strip() for m in re.finditer(r"^print\(.*\)\s+#\s*(.+)$", block, re.M)]


@pytest.mark.parametrize("page", PAGES)
def test_the_pages_code_prints_what_its_comments_say(page):
    blocks = _python_blocks(page)
    assert blocks, f"{page} shows no Python code"
    for block in blocks:
        proc = run_python(block)
        assert proc.returncode == 0, f"{page}:\n{block}\n{proc.stderr[-3000:]}"
        want = _printed_per_comment(block)
        got = [line.strip() for line in proc.stdout.strip().splitlines()]
        assert got == want, f"{page}: printed {got}, the comments say {want}"
