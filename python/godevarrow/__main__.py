"""``python -m godevarrow info`` and ``python -m godevarrow demo``."""

from __future__ import annotations

import argparse
import os
import sys

from . import _demo


def info() -> int:
    import platform

    from . import _godevarrow as _lib
    from ._runtime import cuda_status
    from ._version import __version__

    build = dict(line.split("=", 1) for line in _lib.build_info().splitlines())
    print(f"godevarrow {__version__}")
    print(f"  Python        {platform.python_version()} ({sys.executable})")
    stable = _lib.__file__ is not None and _lib.__file__.endswith(".abi3.so")
    kind = "CPython's stable ABI, 3.10+" if stable else "built for this CPython only"
    print(f"  extension     {os.path.basename(_lib.__file__ or '?')} ({kind})")
    print(f"  Go            {build.get('go', '?')} ({build.get('goarch', '?')})")
    print(f"  Arrow Go      {build.get('arrow_go', '?')}")
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
    args = parser.parse_args(argv)
    if args.command == "info":
        return info()
    return _demo.run(args.rows)


if __name__ == "__main__":
    sys.exit(main())
