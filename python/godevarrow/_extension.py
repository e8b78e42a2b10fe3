"""Which build of the extension module this process runs.

godevarrow's Go code, and the Go functions users link in with ``python -m
godevarrow build-ext``, run in one Go runtime: the extension module
``godevarrow._godevarrow``. A build made by build-ext replaces the installed
one when ``GODEVARROW_EXTENSION`` names it before godevarrow is first
imported (the packages build-ext writes set it themselves). A process runs
one build; the extension refuses to load a second (docs/design.md, "Users'
Go code in godevarrow's runtime").

This module is imported before the extension, and needs nothing from it.
"""

from __future__ import annotations

import importlib.util
import os
import sys

ENV = "GODEVARROW_EXTENSION"
MODULE = "godevarrow._godevarrow"


# the file GODEVARROW_EXTENSION named when it was loaded (identity()): a
# rebuild at the same path is a different file, which this process cannot load
_loaded_identity: tuple[int, ...] | None = None


def identity(path: str) -> tuple[int, ...] | None:
    """What tells one build at path from the next: device, inode, size and
    modification time (build-ext writes each build as a new file)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def load() -> None:
    """Loads the build GODEVARROW_EXTENSION names as godevarrow._godevarrow
    (without it, the installed build is imported as usual)."""
    path = os.environ.get(ENV)
    if not path or MODULE in sys.modules:
        return
    if not os.path.isfile(path):
        raise ImportError(
            f"{ENV}={path!r} is not a file: it names the extension module that "
            "`python -m godevarrow build-ext` built (<package>/_godevarrow.abi3.so)"
        )
    spec = importlib.util.spec_from_file_location(MODULE, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{ENV}={path!r} is not an extension module")
    module = importlib.util.module_from_spec(spec)  # dlopen and PyInit: the Go runtime starts here
    sys.modules[MODULE] = module
    spec.loader.exec_module(module)
    global _loaded_identity
    _loaded_identity = identity(path)
    vars(sys.modules["godevarrow"])["_godevarrow"] = module  # as an import of the submodule would


def require(path: str, package: str) -> None:
    """Raises ImportError unless this process runs the build at path (for
    the packages build-ext writes: their functions live in that build)."""
    running = sys.modules[MODULE].__file__ or "?"
    if not (os.path.exists(running) and os.path.samefile(running, path)):
        raise ImportError(
            f"{package} needs godevarrow's extension built with its Go functions ({path}), but this process "
            f"already runs another build ({running}), and a process can run only one Go runtime. "
            f"Import {package} before godevarrow, or start Python with {ENV}={path}"
        )
    if _loaded_identity is not None and identity(path) != _loaded_identity:
        # importlib.reload after a rebuild: Go cannot unload the runtime
        # running the old build, so the old functions would go on running
        raise ImportError(
            f"{package} was rebuilt ({path}) after this process loaded it, and a process cannot load a second "
            "build: the Go functions here are still the old ones. Restart the Python process (in Jupyter: "
            "restart the kernel) and import it again to use the new build"
        )
