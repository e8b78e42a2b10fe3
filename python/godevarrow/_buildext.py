"""``python -m godevarrow build-ext``: godevarrow's extension module built
again with your Go packages linked in, as an importable Python package.

Go runs one runtime per process, so users' Go functions cannot come in a
second shared library: they are compiled into a new build of godevarrow's
extension, from the Go source the installed package carries (``_gosrc``),
with the same Go toolchain and the same module versions as the installed
build (docs/design.md, "Users' Go code in godevarrow's runtime"). The steps:

1. check the toolchain (``go env GOVERSION``) against the installed build's;
2. copy the Go source to a scratch directory and write a ``go.work`` that
   uses it and the users' modules;
3. list the packages and the module versions the workspace selects, and
   refuse a version that differs from the installed build's, and a package
   name that would shadow another module (``check_name``);
4. write ``capsule/zz_user_functions.go`` (gendoc), which imports the
   packages and hands their doc comments to ``pyfunc.Document``;
5. ``go build`` (the command of ``_gobuild``, as setup.py runs it), after a
   line saying how long it takes, into a new file moved over the old build;
6. load the result in a fresh interpreter, which lists the registered
   functions (and reports a panic in a package's init);
7. write the package: ``__init__.py``, ``__init__.pyi`` (results typed as
   the Go source writes them, ``table_results``), ``py.typed`` and the
   extension; warn of a Go package that registers nothing.
"""

from __future__ import annotations

import importlib.util
import json
import keyword
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from . import _gobuild
from ._godevarrow import GodevarrowError
from ._runtime import build_facts
from ._version import __version__

EXTENSION_FILE = "_godevarrow.abi3.so"
GENERATED_GO_FILE = "zz_user_functions.go"


class BuildError(GodevarrowError, RuntimeError):
    """build-ext could not build the extension; the message says what to do."""


def _run(cmd: list[str], cwd: str, env: dict[str, str], what: str) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(f"{what} failed ({' '.join(cmd)}):\n{done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def check_toolchain(go: str, want: str) -> None:
    have = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True).stdout.strip()
    if have != want:
        raise BuildError(
            f"godevarrow {__version__} was built with Go {want}, and `go` here is {have or 'not working'}; the "
            f"extension must be rebuilt with the same toolchain. Install {want} (https://go.dev/dl/), or run "
            f"with GOTOOLCHAIN={want} (go 1.21 and later download it through the module proxy)."
        )


def module_root(package_dir: str) -> str:
    d = package_dir
    while True:
        if os.path.isfile(os.path.join(d, "go.mod")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            raise BuildError(
                f"{package_dir} is in no Go module (no go.mod in it or above it): run `go mod init <module path>` there"
            )
        d = parent


def _json_objects(text: str) -> list[dict[str, Any]]:
    decoder, objects, i = json.JSONDecoder(), [], 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        obj, i = decoder.raw_decode(text, i)
        objects.append(obj)
    return objects


def check_modules(selected: dict[str, str], installed: str, user_modules: Sequence[str]) -> None:
    """Refuses module versions that differ from the installed build's."""
    wrong = []
    for entry in installed.split(","):
        path, _, version = entry.rpartition("@")
        if path and selected.get(path, version) != version:
            wrong.append((path, version, selected[path]))
    if wrong:
        lines = [f"  {p}: godevarrow {__version__} was built with {v}, your modules need {s}" for p, v, s in wrong]
        fixes = " && ".join(f"go get {p}@{v}" for p, v, _ in wrong)
        raise BuildError(
            "the rebuild would link other versions of godevarrow's Go dependencies than the installed build "
            "was tested with:\n" + "\n".join(lines) + f"\nIn {', '.join(user_modules)} run: {fixes}"
        )


GODEVARROW_MODULE = "github.com/godevarrow/godevarrow"


def workspace(go: str, root: str, user_modules: Sequence[str], env: dict[str, str]) -> str:
    """The go.work of a rebuild: godevarrow's source (root) and the users'
    modules, with whatever version of godevarrow they require pointed at
    root (a required version is never downloaded)."""
    go_line = next(line for line in open(os.path.join(root, "go.mod")) if line.startswith("go "))
    versions = set()
    for m in user_modules:
        edit = json.loads(_run([go, "mod", "edit", "-json", os.path.join(m, "go.mod")], root, env, "reading go.mod"))
        versions |= {r["Version"] for r in edit.get("Require") or [] if r["Path"] == GODEVARROW_MODULE}
    uses = "".join(f"\t{m}\n" for m in user_modules)
    replaces = "".join(f"replace {GODEVARROW_MODULE} {v} => ./godevarrow\n" for v in sorted(versions))
    return f"{go_line}\nuse (\n\t./godevarrow\n{uses})\n\n{replaces}"


class Built(NamedTuple):
    package_dir: str  # the Python package written
    functions: list[dict[str, Any]]  # the functions the build registers (go_functions())


class BuildWarning(UserWarning):
    """Something build-ext built but that is likely a mistake (a Go package
    that registers no function)."""


def build(
    packages: Sequence[str],
    out_dir: str = ".",
    name: str | None = None,
    go: str | None = None,
    *,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
) -> Built:
    """Builds godevarrow's extension with the Go packages in the directories
    packages linked in, and writes the Python package out_dir/name (name: the
    first Go package's name). A name that would shadow a module of the
    standard library or an importable package is refused unless force;
    progress is told before the (slow) go build; a Go package that registers
    no function is warned of (BuildWarning)."""
    if not packages:
        raise BuildError("name at least one directory of a Go package")
    dirs = [os.path.abspath(p) for p in packages]
    for d in dirs:
        if not os.path.isdir(d) or not any(f.endswith(".go") for f in os.listdir(d)):
            raise BuildError(f"{d} is not a directory of Go source files")
    go = go or shutil.which("go")
    if go is None:
        raise BuildError("build-ext needs the Go toolchain on PATH (https://go.dev/dl/)")
    facts = build_facts()
    # a build with Go experiments reports them after the version
    # ("go1.26.8-X:cgocheck2", make test-strict's): the rebuild uses them too
    version, _, experiments = facts["go"].partition("-X:")
    check_toolchain(go, version)
    headers = sysconfig.get_paths()["include"]
    if not os.path.isfile(os.path.join(headers, "Python.h")):
        raise BuildError(
            f"the extension is compiled against this Python's C headers, and {headers} has no Python.h: install "
            f"them (Debian and Ubuntu: python{sys.version_info[0]}.{sys.version_info[1]}-dev)"
        )
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_gosrc")
    if not os.path.isfile(os.path.join(source, "go.mod")):
        raise BuildError(
            f"this installation of godevarrow carries no Go source ({source}); reinstall it from a wheel or sdist"
        )
    user_modules = sorted({module_root(d) for d in dirs})

    with tempfile.TemporaryDirectory(prefix="godevarrow-build-ext-") as scratch:
        root = os.path.join(scratch, "godevarrow")
        shutil.copytree(source, root)
        env = _gobuild.build_env()
        env.update(GOWORK=os.path.join(scratch, "go.work"), GOFLAGS="-buildvcs=false")
        if experiments:
            env["GOEXPERIMENT"] = experiments
        with open(os.path.join(scratch, "go.work"), "w") as f:
            f.write(workspace(go, root, user_modules, env))

        listed = _json_objects(_run([go, "list", "-json", *dirs], root, env, "listing your packages"))
        for pkg in listed:
            problems = [pkg["Error"]["Err"]] if pkg.get("Error") else []
            problems += [e["Err"] for e in pkg.get("DepsErrors", [])]
            if problems:
                raise BuildError(f"{pkg['Dir']}: " + "\n".join(problems))
            if pkg["Name"] == "main":
                raise BuildError(f"{pkg['Dir']} is package main; functions are registered from a library package")
        selected = {}
        for line in _run(
            [go, "list", "-m", "-f", "{{.Path}}@{{.Version}}", "all"], root, env, "listing modules"
        ).split():
            path, _, version = line.rpartition("@")
            selected[path] = version
        check_modules(selected, facts.get("modules", ""), user_modules)

        name = name or listed[0]["Name"]
        if not name.isidentifier() or keyword.iskeyword(name) or name == "godevarrow":
            raise BuildError(f"{name!r} cannot name a Python package: choose one with --name")
        if not force:
            check_name(name, os.path.join(os.path.abspath(out_dir), name))
        pairs = [f"{p['ImportPath']}={p['Dir']}" for p in listed]
        generated = os.path.join("capsule", GENERATED_GO_FILE)
        _run([go, "run", "./gosrc/pyfunc/internal/gendoc", "-o", generated, *pairs], root, env, "reading doc comments")

        package_dir = os.path.join(os.path.abspath(out_dir), name)
        if os.path.isdir(package_dir) and any(f.endswith(".go") for f in os.listdir(package_dir)):
            raise BuildError(
                f"the Python package would go to {package_dir}, which holds Go source: write it elsewhere "
                "(-o DIR) or name it otherwise (--name NAME)"
            )
        os.makedirs(package_dir, exist_ok=True)
        extension = os.path.join(package_dir, EXTENSION_FILE)
        if progress is not None:
            progress(build_message(go, env, version))
        # built beside the old build and moved over it: a process running the
        # old one keeps its file (its mapping) intact, and sees a new file
        fresh = os.path.join(package_dir, f".{EXTENSION_FILE}.{os.getpid()}.tmp")
        try:
            _run(_gobuild.build_command(go, fresh), root, env, "go build")
            os.replace(fresh, extension)
        finally:
            for leftover in (fresh, os.path.splitext(fresh)[0] + ".h"):
                if os.path.exists(leftover):
                    os.remove(leftover)
        mark_warm(go, env, version)

    functions = describe(extension)
    tables = table_results(listed)
    for spec in functions:
        if spec["result"] == "chunked_array" and spec["go_name"] in tables:
            spec["result_py"] = "Table"
    write_package(package_dir, name, [p["ImportPath"] for p in listed], functions)
    warn_unregistered([p["ImportPath"] for p in listed], functions)
    return Built(package_dir, functions)


def warn_unregistered(import_paths: Sequence[str], functions: Sequence[dict[str, Any]]) -> None:
    """A BuildWarning for each package that registers no function."""
    for path in unregistered(import_paths, functions):
        warnings.warn(
            f"the Go package {path} registers no function (no pyfunc.Register in its init): nothing of it is "
            "callable from Python",
            BuildWarning,
            stacklevel=3,
        )


def unregistered(import_paths: Sequence[str], functions: Sequence[dict[str, Any]]) -> list[str]:
    """The packages none of the functions comes from (a function's go_name
    is its package's import path, a dot, and its name)."""
    return [p for p in import_paths if not any(f["go_name"].startswith(p + ".") for f in functions)]


def check_name(name: str, package_dir: str) -> None:
    """Refuses a package name that would shadow a module of the standard
    library, or another importable package (not the one at package_dir,
    which a rebuild replaces): importing it would import one or the other
    depending on sys.path."""
    if name in sys.stdlib_module_names:
        raise BuildError(
            f"{name!r} is a module of Python's standard library: a package of that name would shadow it (or be "
            "shadowed). Choose another name with --name, or pass --force to use it anyway"
        )
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return
    locations = list(spec.submodule_search_locations or [])
    if any(os.path.realpath(d) == os.path.realpath(package_dir) for d in locations):
        return
    if spec.origin is None and all(_holds_go(d) for d in locations):
        return  # the Go package's own directory, seen as a namespace package from where you run this
    where = locations[0] if locations else spec.origin
    raise BuildError(
        f"{name!r} is already importable here ({where}): a package of that name would shadow it (or be "
        "shadowed). Choose another name with --name, or pass --force to use it anyway"
    )


def _holds_go(d: str) -> bool:
    try:
        return any(f.endswith(".go") for f in os.listdir(d))
    except OSError:
        return False


def _warm_mark(go: str, env: dict[str, str], version: str) -> str | None:
    # in Go's cache directory, so that `go clean -cache`, which makes the
    # next build a cold one again, removes the mark too
    cache = subprocess.run([go, "env", "GOCACHE"], env=env, capture_output=True, text=True).stdout.strip()
    return os.path.join(cache, f"godevarrow-build-ext-{version}-{__version__}") if cache else None


def build_message(go: str, env: dict[str, str], version: str) -> str:
    """The line printed before go build: a first build (Go's cache has no
    build of this godevarrow with this Go) compiles godevarrow and Arrow Go,
    which takes minutes; later ones take seconds."""
    mark = _warm_mark(go, env, version)
    if mark is not None and os.path.exists(mark):
        return "building the extension with your Go packages (Go's build cache is warm: about 10-30 s)"
    return (
        "building the extension with your Go packages: the first build compiles godevarrow and Arrow Go into "
        "Go's build cache, which takes about 1-3 minutes (later builds take seconds)"
    )


def mark_warm(go: str, env: dict[str, str], version: str) -> None:
    mark = _warm_mark(go, env, version)
    if mark is not None:
        try:
            open(mark, "w").close()
        except OSError:
            pass  # the next build says "first build" again; nothing else depends on it


_DESCRIBE = "import json, godevarrow._godevarrow as lib; print(lib.go_functions())"


def describe(extension: str) -> list[dict[str, Any]]:
    """The functions a build registers, from a fresh interpreter running it."""
    env = {**os.environ, "GODEVARROW_EXTENSION": extension}
    done = subprocess.run([sys.executable, "-c", _DESCRIBE], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(
            "the new build did not load (a panic in a package's init, such as pyfunc.Register refusing a "
            f"function, says why):\n{done.stderr.strip()[-4000:]}"
        )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


_FUNC = re.compile(r"^func\s+(\w+)\s*(?:\[[^\]\n]*\])?\s*\(", re.M)
_CDEVICE_IMPORT = re.compile(r'(?:^|[\s(])(\w+\s+)?"github\.com/godevarrow/godevarrow/gosrc/cdevice"')


def table_results(listed: Sequence[dict[str, Any]]) -> set[str]:
    """The Go functions ("importpath.Name") whose result is written
    ``*cdevice.Table``. Go sees no difference (Table is an alias of
    ChunkedArray, so go_functions() reports ChunkedArray), but the source
    says which the author meant, and the stub follows it: a Table result is
    a godevarrow Table. Functions registered as closures have no name to
    look up, and keep the ChunkedArray annotation."""
    found = set()
    for pkg in listed:
        for file in pkg.get("GoFiles") or []:
            try:
                with open(os.path.join(pkg["Dir"], file), encoding="utf-8") as source_file:
                    src = source_file.read()
            except (OSError, UnicodeDecodeError):
                continue
            m = _CDEVICE_IMPORT.search(src)
            if not m:
                continue
            alias = (m.group(1) or "cdevice").strip()
            if alias in ("_", "."):
                continue
            table = re.compile(rf"^\(?\s*\*\s*{re.escape(alias)}\s*\.\s*Table\b")
            for fn in _FUNC.finditer(src):
                result = _result_text(src, fn.end())
                if table.match(result):
                    found.add(f"{pkg['ImportPath']}.{fn.group(1)}")
    return found


def _result_text(src: str, i: int) -> str:
    """The result of a func declaration whose parameter list opens before
    src[i]: the text between the list's closing parenthesis and the body."""
    depth = 1
    while i < len(src) and depth:
        depth += {"(": 1, ")": -1}.get(src[i], 0)
        i += 1
    end = src.find("{", i)
    return src[i : end if end >= 0 else len(src)].strip()


_PY_PARAM = {"array": "object", "chunked_array": "object", "stream": "object"}
_PY_RESULT = {"array": "Array", "chunked_array": "ChunkedArray", "stream": "ArrayStream[Array]", "none": "None"}

_INIT = '''"""Go functions of {packages}, linked into godevarrow's extension module by
`python -m godevarrow build-ext` (godevarrow {version}).

Import this package before godevarrow, or start Python with
GODEVARROW_EXTENSION naming its {extension}; the functions are also
godevarrow.go.<name>.
"""

import os as _os
import sys as _sys

_EXTENSION = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "{extension}")
_choose = "godevarrow._godevarrow" not in _sys.modules and "GODEVARROW_EXTENSION" not in _os.environ
if _choose:
    _os.environ["GODEVARROW_EXTENSION"] = _EXTENSION
try:
    import godevarrow as _gda
finally:
    if _choose:
        del _os.environ["GODEVARROW_EXTENSION"]
_gda._extension.require(_EXTENSION, __name__)

{assignments}
__all__ = {names!r}
'''


def write_package(package_dir: str, name: str, packages: Sequence[str], functions: list[dict[str, Any]]) -> None:
    names = [f["name"] for f in functions]
    init = _INIT.format(
        packages=", ".join(packages),
        version=__version__,
        extension=EXTENSION_FILE,
        assignments="".join(f"{n} = _gda.go.{n}\n" for n in names),
        names=names,
    )
    with open(os.path.join(package_dir, "__init__.py"), "w") as f:
        f.write(init)
    with open(os.path.join(package_dir, "__init__.pyi"), "w") as f:
        f.write(stub(functions))
    open(os.path.join(package_dir, "py.typed"), "w").close()


def stub(functions: list[dict[str, Any]]) -> str:
    """The .pyi of the generated package: one typed def per function."""
    lines = [
        "# Generated by `python -m godevarrow build-ext`; do not edit.",
        "from godevarrow import Array, ArrayStream, ChunkedArray, Table",
        "",
    ]
    for f in functions:
        params = ", ".join(f"{p['name']}: {_PY_PARAM.get(p['kind'], p['kind'])}" for p in f["params"])
        result = f.get("result_py") or _PY_RESULT.get(f["result"], f["result"])
        lines.append(f"def {f['name']}({params}) -> {result}:")
        doc = f["doc"].strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"') or f"Go: {f['go_name']}."
        lines.append(textwrap.indent(f'"""{doc}"""', "    "))
        lines.append("")
    return "\n".join(lines)
