"""Writes docs/reference.md, the API reference as plain Markdown that reads
anywhere the repository is read (the MkDocs site renders docs/api.md from
the same docstrings): every public name of godevarrow, godevarrow.cupy and
godevarrow.cudf with its signature and docstring.

    python tests_py/api/api_reference.py > docs/reference.md   (make api-reference)

tests_py/api/test_api_docs.py fails when the committed page differs from what
this writes."""

from __future__ import annotations

import enum
import inspect
import sys

HEADER = """# API reference (plain Markdown)

Every public name of `godevarrow`, `godevarrow.cupy` and `godevarrow.cudf`,
with its signature and docstring, written by `tests_py/api/api_reference.py`
(`make api-reference`; a test fails when this page is out of date). The
same docstrings make the [site's reference](api.md) and `help()`.
"""


def signature(obj: object) -> str:
    """The call signature of a function or method, or "" where there is none."""
    target = obj.__func__ if isinstance(obj, (classmethod, staticmethod)) else obj
    if isinstance(target, property) or inspect.isclass(target) or not callable(target):
        return ""
    if not (inspect.isfunction(target) or inspect.ismethod(target)):
        # a method of the C extension: its docstring's first line is the
        # signature (and Python versions infer different ones)
        return "(...)"
    return str(inspect.signature(target))


def doc(obj: object) -> str:
    target = obj.__func__ if isinstance(obj, (classmethod, staticmethod)) else obj
    return inspect.cleandoc(getattr(target, "__doc__", None) or "")


def render() -> str:
    import godevarrow as gda
    import godevarrow.cudf
    import godevarrow.cupy
    from test_api_docs import _members

    out = [HEADER]
    for module in (gda, godevarrow.cupy, godevarrow.cudf):
        out.append(f"## `{module.__name__}`\n")
        for name in module.__all__:
            if name == "__version__":
                continue
            obj = getattr(module, name)
            kind = "class" if inspect.isclass(obj) else "function" if callable(obj) else "object"
            out.append(f"### `{module.__name__}.{name}{signature(obj)}` ({kind})\n")
            if kind == "class" and issubclass(obj, BaseException):
                bases = ", ".join(b.__name__ for b in obj.__mro__[1:] if b not in (object, BaseException))
                out.append(f"Derives from {bases}.\n")
            if text := doc(obj):
                out.append(text + "\n")
            if inspect.isclass(obj) and not issubclass(obj, (BaseException, enum.Enum)):
                for member, value in sorted(_members(obj).items()):
                    out.append(f"#### `{name}.{member}{signature(value)}`\n")
                    if text := doc(value):
                        out.append(text + "\n")
            elif inspect.isclass(obj) and issubclass(obj, enum.Enum):
                out.append("Members: " + ", ".join(f"`{m.name}`" for m in obj) + ".\n")
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(render())
