"""``python -m godevarrow info``, ``demo`` and ``build-ext``."""

from __future__ import annotations

import argparse
import json
import os
import sys

from . import _demo


def info() -> int:
    import platform

    from . import _godevarrow as _lib
    from ._runtime import build_facts, cuda_status
    from ._version import __version__

    build = build_facts()
    print(f"godevarrow {__version__}")
    print(f"  Python        {platform.python_version()} ({sys.executable})")
    stable = _lib.__file__ is not None and _lib.__file__.endswith(".abi3.so")
    kind = "CPython's stable ABI, 3.10+" if stable else "built for this CPython only"
    print(f"  extension     {os.path.basename(_lib.__file__ or '?')} ({kind})")
    print(f"  Go            {build.get('go', '?')} ({build.get('goarch', '?')})")
    print(f"  Arrow Go      {build.get('arrow_go', '?')}")
    functions = json.loads(_lib.go_functions())
    names = ", ".join(f["name"] for f in functions[:8]) + (", …" if len(functions) > 8 else "")
    print(f"  Go functions  {len(functions)}" + (f" ({names}; built in by build-ext)" if functions else ""))
    ok, count, library, message = cuda_status()
    print("  devices       cpu" + "".join(f", cuda:{i}" for i in range(count)))
    print(f"  CUDA          {message if ok else 'not available. ' + message}")
    try:
        import pyarrow

        print(f"  pyarrow       {pyarrow.__version__}")
    except ImportError:
        print("  pyarrow       not installed")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m godevarrow", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="versions, devices and CUDA driver status")
    demo = sub.add_parser("demo", help="pyarrow -> Go -> nanoarrow/polars/duckdb, with checksums and timings")
    demo.add_argument("--rows", type=int, default=200_000, help="rows of the demo table (default 200000)")
    build = sub.add_parser(
        "build-ext",
        help="build godevarrow's extension with your Go packages linked in (one Go runtime), as a Python package",
    )
    build.add_argument("packages", nargs="+", help="directories of Go packages that call pyfunc.Register")
    build.add_argument("-o", "--out", default=".", help="where to write the package (default: here)")
    build.add_argument("--name", help="the Python package's name (default: the first Go package's)")
    build.add_argument(
        "--force", action="store_true", help="use a name that shadows the standard library or an installed package"
    )
    args = parser.parse_args(argv)
    if args.command == "info":
        return info()
    if args.command == "build-ext":
        return build_ext(args.packages, args.out, args.name, args.force)
    return _demo.run(args.rows)


def build_ext(packages: list[str], out: str, name: str | None, force: bool = False) -> int:
    import warnings

    from ._buildext import BuildError, BuildWarning, build

    def progress(line: str) -> None:
        print(f"build-ext: {line}", file=sys.stderr, flush=True)

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", BuildWarning)
            package_dir, functions = build(packages, out, name, force=force, progress=progress)
    except BuildError as e:
        print(f"build-ext: {e}", file=sys.stderr)
        return 1
    for w in caught:
        print(f"build-ext: warning: {w.message}", file=sys.stderr)
    print(f"built {package_dir}: {len(functions)} Go function(s)")
    for f in functions:
        print(f"  {f['name']}({', '.join(p['name'] for p in f['params'])}) -> {f['result']}")
    print(f"use it: import {os.path.basename(package_dir)} (before godevarrow), from {os.path.dirname(package_dir)}")
    print("after a rebuild, restart the Python process (in Jupyter: the kernel) that imported the old build")
    return 0


if __name__ == "__main__":
    sys.exit(main())
