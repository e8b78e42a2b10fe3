"""Go functions called from Python: ``gda.go.<name>(...)`` and ``gda.call``.

The functions are those registered with ``pyfunc.Register`` in the Go
packages of this build (``python -m godevarrow build-ext``; the installed
build has none). Go describes them (``go_functions``); this module converts
each argument to what its parameter takes (any array, table or stream
producer is imported zero-copy) and makes one ``go_call``, which runs the
function without the GIL.
"""

from __future__ import annotations

import inspect
import json
import operator
from typing import Any, Callable, Iterator

from . import _godevarrow as _lib
from ._array import Array, RecordBatch, array
from ._device import DeviceType
from ._godevarrow import ArrowInvalid, GodevarrowTypeError
from ._stream import ArrayStream, stream
from ._table import ChunkedArray, Table, chunked_array

_CLASSES = (Array, RecordBatch, ChunkedArray, Table, ArrayStream)


def _to_array(x: object) -> object:
    return x if isinstance(x, Array) else array(x)


def _to_chunked(x: object) -> object:
    return (x if isinstance(x, ChunkedArray) else chunked_array(x))._h


def _to_stream(x: object) -> object:
    return (x if isinstance(x, ArrayStream) else stream(x))._h


def _to_int(x: object) -> int:
    if isinstance(x, bool):
        raise TypeError("must be an int, not a bool")
    v = operator.index(x)  # type: ignore[arg-type]
    if not -(2**63) <= v < 2**64:
        raise OverflowError(f"{v} does not fit in a Go integer")
    return v


def _to_float(x: object) -> float:
    if isinstance(x, (bool, str, bytes)):
        raise TypeError(f"must be a float, not {type(x).__name__}")
    return float(x)  # type: ignore[arg-type]


def _to_bool(x: object) -> bool:
    if type(x).__name__ not in ("bool", "bool_"):
        raise TypeError(f"must be a bool, not {type(x).__name__}")
    return bool(x)


def _to_str(x: object) -> str:
    if not isinstance(x, str):
        raise TypeError(f"must be a str, not {type(x).__name__}")
    try:
        x.encode("utf-8")  # a Go string is UTF-8: a lone surrogate has no encoding
    except UnicodeEncodeError as e:
        bad = x[e.start : e.end]
        raise _NotUTF8(f"{e.reason} at index {e.start} ({bad!r}): a Go string must be valid UTF-8") from None
    return x


class _NotUTF8(ValueError):
    """A str argument that is not valid UTF-8 (said as ArrowInvalid, naming the argument)."""


# kind: (conversion, the parameter's annotation, the result's annotation)
_KINDS: dict[str, tuple[Callable[[object], object], str, str]] = {
    "array": (_to_array, "ArrayLike", "Array"),
    "chunked_array": (_to_chunked, "ChunkedArrayLike", "ChunkedArray"),
    "stream": (_to_stream, "StreamLike", "ArrayStream[Array]"),
    "int": (_to_int, "int", "int"),
    "float": (_to_float, "float", "float"),
    "bool": (_to_bool, "bool", "bool"),
    "str": (_to_str, "str", "str"),
    "none": (lambda x: x, "None", "None"),
}


class GoFunction:
    """A Go function registered with ``pyfunc.Register``, called with
    positional or keyword arguments. Arrays, tables and streams may come from
    any producer of the Arrow PyCapsule protocols (imported zero-copy; a
    stream is moved into the call); results are godevarrow objects."""

    __doc__: str  # always set: the Go doc comment and the Go signature

    def __init__(self, spec: dict[str, Any]) -> None:
        self.__name__ = self.__qualname__ = spec["name"]
        self.go_name: str = spec["go_name"]
        self.devices = tuple(DeviceType(d) for d in spec["devices"])
        self.own_events: bool = spec["own_events"]
        self.result_kind: str = spec["result"]
        self._cancellable: bool = spec["context"]
        self._names = tuple(p["name"] for p in spec["params"])
        self._convert = tuple(_KINDS[p["kind"]][0] for p in spec["params"])
        params = [
            inspect.Parameter(p["name"], inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=_KINDS[p["kind"]][1])
            for p in spec["params"]
        ]
        self.__signature__ = inspect.Signature(params, return_annotation=_KINDS[self.result_kind][2])
        go_types = ", ".join(f"{p['name']} {p['go_type']}" for p in spec["params"])
        result = f" {spec['result_go_type']}" if spec["result_go_type"] else ""
        devices = ", ".join(d.name.lower() for d in self.devices)
        doc = spec["doc"].strip()
        go = f"Go: {self.go_name}({go_types}){result}; accepts data on {devices}."
        self.__doc__ = doc + "\n\n" + go if doc else go

    def __call__(self, *args: object, **kwargs: object) -> Any:
        if kwargs or len(args) != len(self._convert):
            args = self._bind(args, kwargs)
        # godevarrow arrays and Python scalars go as they are; the extension
        # answers NotImplemented when one must be converted first (another
        # producer's data, a table or stream parameter, a numpy scalar)
        try:
            result = _lib.go_call(self.__name__, args, _CLASSES, self._cancellable, True)
        except UnicodeEncodeError:
            # a str the extension cannot encode, found before anything was
            # called or consumed: the conversions below say which argument
            result = NotImplemented
        if result is NotImplemented:
            result = _lib.go_call(self.__name__, self._converted(args), _CLASSES, self._cancellable, False)
        return result

    def _converted(self, args: tuple[object, ...]) -> tuple[object, ...]:
        """Each argument as its parameter takes it; a TypeError names the
        argument. (Converting may consume a producer, a stream's: each
        argument is converted once.)"""
        out = []
        for i, (convert, x) in enumerate(zip(self._convert, args)):
            try:
                out.append(convert(x))
            except (TypeError, OverflowError) as e:
                raise GodevarrowTypeError(f"{self.__name__}() argument {i + 1} ({self._names[i]}): {e}") from e
            except _NotUTF8 as e:
                raise ArrowInvalid(f"{self.__name__}() argument {i + 1} ({self._names[i]}): {e}") from None
        return tuple(out)

    def _bind(self, args: tuple[object, ...], kwargs: dict[str, object]) -> tuple[object, ...]:
        try:
            bound = self.__signature__.bind(*args, **kwargs)
        except TypeError as e:
            raise GodevarrowTypeError(f"{self.__name__}{self.__signature__}: {e}") from None
        return bound.args

    def __repr__(self) -> str:
        return f"<Go function {self.__name__}{self.__signature__} ({self.go_name})>"


class GoFunctions:
    """The Go functions of this build of godevarrow, as attributes (``gda.go``).

    Functions come from Go packages that call ``pyfunc.Register`` and are
    built into godevarrow's extension with ``python -m godevarrow build-ext``
    (docs/go-guide.md); the installed build has none."""

    def __init__(self) -> None:
        self._functions = {spec["name"]: GoFunction(spec) for spec in json.loads(_lib.go_functions())}

    def __getattr__(self, name: str) -> GoFunction:
        try:
            return self.__dict__["_functions"][name]  # type: ignore[no-any-return]
        except KeyError:
            pass
        have = ", ".join(self._functions) or "none"
        raise AttributeError(
            f"no Go function {name!r} in this build of godevarrow (it has: {have}); Go functions are "
            "registered with pyfunc.Register and built in with `python -m godevarrow build-ext`"
        )

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._functions))

    def __iter__(self) -> Iterator[GoFunction]:
        return iter(self._functions.values())

    def __len__(self) -> int:
        return len(self._functions)

    def __contains__(self, name: object) -> bool:
        return name in self._functions

    def __repr__(self) -> str:
        return f"<godevarrow.go: {len(self)} Go function(s): {', '.join(self._functions) or 'none'}>"


go = GoFunctions()


def call(name: str, *args: object, **kwargs: object) -> Any:
    """Calls the Go function registered as name (the same as ``gda.go.<name>(...)``)."""
    return getattr(go, name)(*args, **kwargs)
