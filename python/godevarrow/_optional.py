"""Optional dependencies. godevarrow itself needs none; a feature that uses
one imports it here, and when it is missing the error names the extra that
installs it (the extras are declared in pyproject.toml)."""

from __future__ import annotations

import importlib
import sys
from typing import Any

from ._godevarrow import GodevarrowError

# module -> the extra that installs it (pip install 'godevarrow[extra]')
EXTRAS = {"pyarrow": "pyarrow", "cupy": "cupy", "cudf": "cudf", "pylibcudf": "cudf"}


class MissingDependencyError(ModuleNotFoundError, GodevarrowError):
    """An optional dependency of the feature called is not installed. The
    message names the extra that installs it, e.g. ``to_pyarrow() needs
    pyarrow: pip install 'godevarrow[pyarrow]'``; ``name`` is the missing
    module. A ``ModuleNotFoundError`` (so ``except ImportError`` catches it)
    and a ``GodevarrowError``."""


def require(module: str, feature: str) -> Any:
    """The module, imported; MissingDependencyError naming the extra when it
    is not installed (an error inside an installed module propagates as is)."""
    found = sys.modules.get(module)
    if found is not None:
        return found
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is None or e.name.split(".")[0] != module.split(".")[0]:
            raise  # the module is there; something it imports is not
        top = module.split(".")[0]
        install = f"'godevarrow[{EXTRAS[top]}]'" if top in EXTRAS else top
        raise MissingDependencyError(f"{feature} needs {top}: pip install {install}", name=top) from e
