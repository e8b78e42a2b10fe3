"""Optional dependencies. godevarrow itself needs none; a feature that uses
one imports it here, and when it is missing the error names the extra that
installs it (the extras are declared in pyproject.toml)."""

from __future__ import annotations

import importlib
import sys
from typing import Any

from ._godevarrow import GodevarrowError

# module -> the extra that installs it (pip install 'godevarrow[extra]')
EXTRAS = {"pyarrow": "pyarrow", "cupy": "cupy", "cudf": "cudf", "pylibcudf": "cudf", "pandas": "pandas"}


class MissingDependencyError(ModuleNotFoundError, GodevarrowError):
    """An optional dependency of the feature called is not installed. The
    message names the extra that installs it, e.g. ``to_pyarrow() needs
    pyarrow: pip install 'godevarrow[pyarrow]'``; ``name`` is the missing
    module. A ``ModuleNotFoundError`` (so ``except ImportError`` catches it)
    and a ``GodevarrowError``."""


def require(module: str, feature: str, extra: str | None = None) -> Any:
    """The module, imported; MissingDependencyError naming the extra when it
    is not installed (``extra``, else the module's own; an error inside an
    installed module propagates as is)."""
    found = sys.modules.get(module)
    if found is not None:
        return found
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is None or e.name.split(".")[0] != module.split(".")[0]:
            raise  # the module is there; something it imports is not
        top = module.split(".")[0]
        extra = extra or EXTRAS.get(top)
        install = f"'godevarrow[{extra}]'" if extra else top
        raise MissingDependencyError(f"{feature} needs {top}: pip install {install}", name=top) from e


def pandas_frame(obj: Any, kwargs: dict[str, Any]) -> Any:
    """``to_pandas()`` of a Table or RecordBatch: pandas and pyarrow are both
    the pandas extra's, and pyarrow makes the frame."""
    require("pandas", "to_pandas()")
    require("pyarrow", "to_pandas()", extra="pandas")
    return obj.to_pyarrow().to_pandas(**kwargs)
