"""mypy --strict over the code the documentation shows and over the example
extension's Python (`make typecheck` runs this after mypy on the package).

Every ```python block of PAGES is written to a file of its own under OUT
and checked as a user would run it. A guide's block may be a fragment that
uses names an earlier sentence introduced (``reader``, ``g``): PRELUDES
declares them, typed, per page, and each block is checked as the body of an
``async def`` (a fragment may show ``async for``).

The example extension (examples/go_functions/filters) is built with
build-ext into OUT/ext when its Go source or the installed godevarrow is
newer than the last build there, and the Python that examples/go_functions/
run.py runs against it is checked with the stub build-ext wrote. The Go
guide's ``myfuncs`` is not built (its Go block elides the body): its stub
is what build-ext's stub generator writes for the guide's signature.

    python tests_py/api/typecheck_docs.py [OUT]      # OUT: build/typecheck-docs
"""

from __future__ import annotations

import ast
import os
import pathlib
import re
import subprocess
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = [
    "README.md",
    "docs/getting-started.md",
    "docs/python-guide.md",
    "docs/go-guide.md",
    "docs/library-authors.md",
]
# the names a page's fragments take from its prose, as a reader would have them
PRELUDES = {
    "docs/python-guide.md": """
        import godevarrow as gda
        from typing import Any
        table: Any          # a pyarrow Table (pyarrow is Any to mypy: it ships no types)
        reader: Any         # a pyarrow RecordBatchReader, or any stream producer
        slow_reader: Any
        g: gda.Array        # a godevarrow array or batch
        x: Any              # a CuPy array and its validity mask
        valid: Any
        df: Any             # a cuDF DataFrame
    """,
}
# the Go guide's PositiveSum(ctx context.Context, batch *cdevice.Array) (int64, error)
GUIDE_FUNCTIONS = [
    {
        "name": "positive_sum",
        "go_name": "example.com/myfuncs.PositiveSum",
        "params": [{"name": "batch", "kind": "array"}],
        "result": "int",
        "doc": "PositiveSum returns the sum of the positive values of the batch's first column.",
    }
]
EXAMPLE = ROOT / "examples" / "go_functions"
UNTYPED = ["pyarrow", "pyarrow.*", "cupy", "cupy.*", "cudf", "cudf.*", "duckdb", "pandas", "pandas.*"]


def blocks(page: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", (ROOT / page).read_text(), re.M | re.S)


def snippet_file(page: str, i: int, block: str, out: pathlib.Path) -> pathlib.Path:
    prelude = textwrap.dedent(PRELUDES.get(page, "")).strip()
    body = textwrap.indent(block, "    ") if block.strip() else "    pass\n"
    path = out / f"{re.sub(r'[^A-Za-z0-9]+', '_', page.removesuffix('.md'))}_{i}.py"
    path.write_text(f"# {page}, block {i + 1}\n{prelude}\n\n\nasync def snippet() -> None:\n{body}")
    return path


def example_code(out: pathlib.Path) -> pathlib.Path:
    """The Python run.py runs in the process that imports the built package."""
    tree = ast.parse((EXAMPLE / "run.py").read_text())
    code = next(
        node.value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "code" for t in node.targets)
        and isinstance(node.value, ast.Constant)
    )
    path = out / "example_go_functions.py"
    path.write_text("# examples/go_functions/run.py, the code it runs\n" + code)
    return path


def build_example(ext: pathlib.Path) -> None:
    """build-ext of the example, unless the one in ext is newer than its
    Go source and the installed extension."""
    import godevarrow._godevarrow as lib

    built = ext / "filters" / "__init__.pyi"
    sources = [*(EXAMPLE / "filters").glob("*.go"), EXAMPLE / "go.mod", pathlib.Path(lib.__file__ or "")]
    if built.exists() and all(built.stat().st_mtime > s.stat().st_mtime for s in sources if s.exists()):
        return
    subprocess.run(
        [sys.executable, "-m", "godevarrow", "build-ext", "-o", str(ext), str(EXAMPLE / "filters")], check=True
    )


def main(argv: list[str]) -> int:
    from godevarrow import _buildext

    out = pathlib.Path(argv[0] if argv else ROOT / "build" / "typecheck-docs").resolve()
    code, stubs = out / "code", out / "stubs"
    for d in (code, stubs, out / "ext"):
        d.mkdir(parents=True, exist_ok=True)
    for old in code.glob("*.py"):
        old.unlink()
    files = [snippet_file(page, i, b, code) for page in PAGES for i, b in enumerate(blocks(page))]
    (stubs / "myfuncs.pyi").write_text(_buildext.stub(GUIDE_FUNCTIONS))
    build_example(out / "ext")
    files.append(example_code(code))
    files += [EXAMPLE / "run.py"]
    # strict, and only the libraries that ship no types are Any: a package
    # the example or the guide imports must be found, with its stub
    config = out / "mypy.ini"
    config.write_text(
        "[mypy]\nstrict = True\nincremental = False\n"
        f"mypy_path = {os.pathsep.join([str(stubs), str(out / 'ext')])}\n\n"
        f"[mypy-{','.join(UNTYPED)}]\nignore_missing_imports = True\n"
    )
    cmd = [sys.executable, "-m", "mypy", "--config-file", str(config), *map(str, files)]
    print(f"mypy --strict over {len(files)} files of documented and example code ({code})", flush=True)
    return subprocess.run(cmd, cwd=str(out)).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
