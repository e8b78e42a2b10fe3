"""The API reference (docs/api.md) covers the package: every public name is
listed there and has a docstring, and no docstring uses Sphinx roles, which
the site (MkDocs) would show as raw text."""

from __future__ import annotations

import enum
import inspect
import pathlib
import re

import godevarrow as gda
import godevarrow.cudf
import godevarrow.cupy
import pytest

API_PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "api.md"
MODULES = [gda, godevarrow.cupy, godevarrow.cudf]
# the special methods a user calls through a protocol or an operator: documented like public ones
DOCUMENTED_DUNDERS = re.compile(
    r"^__(arrow_c_\w+|dlpack\w*|cuda_array_interface|array\w*|len|iter|next|aiter|anext|enter|exit|aenter|aexit"
    r"|eq|getitem|reduce)__$"
)
SPHINX_ROLE = re.compile(r":(func|class|meth|attr|mod|data|exc|obj|ref|py:\w+):`")


def _members(cls: type) -> dict[str, object]:
    """The public members of cls and of its godevarrow bases (not those of
    object, Exception or enum)."""
    found: dict[str, object] = {}
    for klass in reversed(cls.__mro__):
        if not (klass.__module__ or "").startswith("godevarrow"):
            continue
        for name, value in vars(klass).items():
            if (name.startswith("_") and not DOCUMENTED_DUNDERS.match(name)) or isinstance(value, enum.Enum):
                continue
            found[name] = value
    return found


def _doc(value: object) -> str:
    if isinstance(value, (classmethod, staticmethod)):
        value = value.__func__
    return (getattr(value, "__doc__", None) or "").strip()


def _public() -> list[tuple[str, object]]:
    """(qualified name, object) of every public name: module names and class members."""
    out = []
    for module in MODULES:
        for name in module.__all__:
            if name == "__version__":
                continue
            obj = getattr(module, name)
            out.append((f"{module.__name__}.{name}", obj))
            if inspect.isclass(obj):
                out += [(f"{module.__name__}.{name}.{k}", v) for k, v in _members(obj).items()]
    return out


def _listed_members() -> list[str]:
    """The members the page lists under `::: godevarrow`."""
    text = API_PAGE.read_text()
    block = re.search(r"^::: godevarrow\n(.*?)(?=^:::|\Z)", text, re.M | re.S)
    assert block, "docs/api.md renders ::: godevarrow"
    return re.findall(r"^\s+- (\w+)\s*$", block.group(1), re.M)


def test_every_public_name_of_the_package_is_on_the_reference_page():
    listed = _listed_members()
    public = [n for n in gda.__all__ if n != "__version__"]
    assert sorted(set(public) - set(listed)) == [], "add these to docs/api.md"
    assert sorted(set(listed) - set(public)) == [], "docs/api.md lists names the package does not export"
    # the submodules render whole: they are on the page too
    for module in ("godevarrow.cupy", "godevarrow.cudf"):
        assert re.search(rf"^::: {re.escape(module)}\s*$", API_PAGE.read_text(), re.M), module


@pytest.mark.parametrize(("name", "obj"), _public(), ids=[n for n, _ in _public()])
def test_every_public_name_has_a_docstring_without_sphinx_roles(name, obj):
    doc = _doc(obj)
    assert doc, f"{name} has no docstring: MkDocs leaves it out of the reference"
    assert not SPHINX_ROLE.search(doc), f"{name}'s docstring uses a Sphinx role, shown raw by MkDocs: {doc!r}"


def test_the_check_notices_a_new_undocumented_name(monkeypatch):
    # the tests above fail for a name added without docs
    def undocumented_helper() -> None:
        pass

    monkeypatch.setattr(gda, "undocumented_helper", undocumented_helper, raising=False)
    monkeypatch.setattr(gda, "__all__", [*gda.__all__, "undocumented_helper"])
    names = dict(_public())
    assert "godevarrow.undocumented_helper" in names and not _doc(names["godevarrow.undocumented_helper"])
    assert "undocumented_helper" not in _listed_members()


def test_the_plain_markdown_reference_is_current():
    # docs/reference.md reads where the repository is read (no site build);
    # `make api-reference` rewrites it
    from api_reference import render

    page = API_PAGE.parent / "reference.md"
    assert page.read_text() == render(), "docs/reference.md is out of date: run `make api-reference`"
