"""What every constructor shares: the errors for objects that speak no
protocol, the PyCapsule rule for unknown keywords, and requested schemas."""

from __future__ import annotations

from typing import Any

from ._godevarrow import ArrowInvalid, ArrowNotImplementedError, GodevarrowError, GodevarrowTypeError


def no_protocol(obj: object, what: str, protocols: str) -> GodevarrowTypeError:
    """The error for an object that speaks none of the protocols a constructor
    reads; a stream producer (a pyarrow Table, a polars DataFrame, a DuckDB
    relation) offered where an array is wanted is told to read it as a table."""
    hint = ""
    if what in ("array", "record batch") and (
        hasattr(obj, "__arrow_c_stream__") or hasattr(obj, "__arrow_c_device_stream__")
    ):
        hint = (
            "; it is a stream producer (a table or data frame): read it with godevarrow.table() "
            "(or godevarrow.chunked_array()), which holds its batches and can be read any number of times, "
            "or with godevarrow.stream() to read it once"
        )
    return GodevarrowTypeError(
        f"cannot make a godevarrow {what} from an object of type {type(obj).__name__}: "
        f"it implements none of {protocols}{hint}"
    )


def check_kwargs(method: str, kwargs: dict[str, Any]) -> None:
    """The PyCapsule interface: unknown keywords are accepted only when None."""
    for key, value in kwargs.items():
        if value is not None:
            raise ArrowNotImplementedError(f"{method}() does not support the keyword {key!r} (got {value!r})")


def schema_capsule(requested_schema: object) -> object:
    """The capsule to pass on to a producer for a consumer's requested_schema."""
    if requested_schema is None:
        return None
    if not hasattr(requested_schema, "__arrow_c_schema__"):
        raise no_protocol(requested_schema, "requested schema", "__arrow_c_schema__")
    return requested_schema.__arrow_c_schema__()


# A producer's exception, as the package's exception of the same builtin kind.
_AS_PACKAGE_ERROR = (
    (NotImplementedError, ArrowNotImplementedError),
    (ValueError, ArrowInvalid),
    (TypeError, GodevarrowTypeError),
)


def producer_error(obj: object, e: Exception) -> Exception:
    """The exception to raise for ``e``, raised by a producer while
    godevarrow asked it for data (a pyarrow cast that fails on a requested
    schema, a bug in a producer): the package's exception of the same
    builtin kind (a ValueError stays a ValueError) with ``e`` as its
    ``__cause__``. The package's own exceptions and MemoryError are
    returned unchanged. Used as ``except Exception as e: raise
    producer_error(obj, e)``, which costs nothing when nothing is raised."""
    if isinstance(e, (GodevarrowError, MemoryError)):
        return e
    cls = next((ours for theirs, ours in _AS_PACKAGE_ERROR if isinstance(e, theirs)), GodevarrowError)
    err = cls(f"the {type(obj).__name__} producer raised {type(e).__name__}: {e}")
    err.__cause__ = e
    return err
