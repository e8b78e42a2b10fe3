"""What every constructor shares: the errors for objects that speak no
protocol, the PyCapsule rule for unknown keywords, and requested schemas."""

from __future__ import annotations

from typing import Any

from ._godevarrow import ArrowNotImplementedError, GodevarrowTypeError


def no_protocol(obj: object, what: str, protocols: str) -> GodevarrowTypeError:
    """The error for an object that speaks none of the protocols a constructor
    reads; a stream producer (a pyarrow Table, a polars DataFrame, a DuckDB
    relation) offered where an array is wanted is told to read it as a stream."""
    hint = ""
    if what != "stream" and (hasattr(obj, "__arrow_c_stream__") or hasattr(obj, "__arrow_c_device_stream__")):
        hint = f"; it is a stream producer: read it with godevarrow.stream() (or make one {what} per chunk from that)"
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


def ask(method: Any, requested_schema: object) -> Any:
    """``method(requested_schema)`` of a stream producer, asked again without
    the request when the producer refuses one (pylibcudf raises ``ValueError``
    for any non-None value, nanoarrow ``NotImplementedError``): the consumer
    then casts on its side, as the PyCapsule interface expects. (Arrays are
    asked the same way by ``_godevarrow.import_from``.)"""
    if requested_schema is None:
        return method(None)
    try:
        return method(schema_capsule(requested_schema))
    except (ValueError, NotImplementedError):
        return method(None)
