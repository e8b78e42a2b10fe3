"""Go functions called from Python (gosrc/pyfunc, `python -m godevarrow
build-ext`, gda.go): a user's Go packages outside gosrc (the example in
examples/go_functions and tests_py/gofuncs/goext/gotests) are built into
godevarrow's extension once per session, and tests_py/gofuncs/goext/test_in_build.py
runs in a process that imports that build. Here: the build command itself,
its checks and messages, the generated package and its type stub."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import godevarrow as gda
import pytest
from conftest import run_python
from godevarrow import _buildext
from godevarrow._runtime import build_facts

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
PACKAGES = [REPO / "examples" / "go_functions" / "filters", HERE / "goext" / "gotests"]
NAME = "gofuncs_under_test"
needs_go = pytest.mark.skipif(
    shutil.which("go") is None, reason="builds Go code; the wheel's test run has no Go (make test-py runs this)"
)


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("build-ext")
    r = subprocess.run(
        [sys.executable, "-m", "godevarrow", "build-ext", "-o", str(out), "--name", NAME, *map(str, PACKAGES)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stderr
    assert f"built {out / NAME}: 31 Go function(s)" in r.stdout
    assert "  at_least(batch, column, min) -> array" in r.stdout
    # a line before the slow go build says what is happening and how long it takes
    assert "build-ext: building the extension with your Go packages" in r.stderr, r.stderr
    assert "warning" not in r.stderr  # both packages register functions
    return out


@needs_go
def test_the_users_functions_in_the_users_build(built):
    # conftest imports godevarrow first: the variable chooses the build
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(built), str(REPO / "tests_py")]),
        "GODEVARROW_EXTENSION": str(built / NAME / "_godevarrow.abi3.so"),
    }
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            str(HERE / "goext" / "test_in_build.py"),
            str(HERE / "goext" / "test_mistakes_in_build.py"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=str(REPO / "tests_py"),
    )
    print(r.stdout[-3000:])
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    assert " passed" in r.stdout
    # nothing skips, but the corpus case where the gold corpus is not beside the checkout
    skips = [line for line in r.stdout.splitlines() if line.startswith("SKIPPED")]
    assert all("gold corpus is not at" in line for line in skips), skips


@needs_go
def test_the_package_refuses_a_process_that_runs_another_build(built):
    code = f"import godevarrow, {NAME}"
    r = run_python(code, env={"PYTHONPATH": str(built)})
    assert r.returncode != 0
    assert f"{NAME} needs godevarrow's extension built with its Go functions" in r.stderr
    assert "Import gofuncs_under_test before godevarrow, or start Python with GODEVARROW_EXTENSION=" in r.stderr


@needs_go
def test_the_extension_variable_chooses_the_build_and_children_do_not_inherit_it(built):
    code = f"import os, {NAME}, godevarrow as gda; print(len(gda.go), 'GODEVARROW_EXTENSION' in os.environ)"
    r = run_python(code, env={"PYTHONPATH": str(built)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["31", "False"]
    so = built / NAME / "_godevarrow.abi3.so"
    r = run_python("import godevarrow as gda; print(gda.go.shout('hi'))", env={"GODEVARROW_EXTENSION": str(so)})
    assert r.returncode == 0 and r.stdout.strip() == "HI!", r.stderr
    r = run_python("import godevarrow", env={"GODEVARROW_EXTENSION": str(built / "nope.so")})
    assert "GODEVARROW_EXTENSION=" in r.stderr and "is not a file" in r.stderr


@needs_go
def test_the_stub_types_the_functions(built, tmp_path):
    stub = (built / NAME / "__init__.pyi").read_text()
    assert "def at_least(batch: object, column: str, min: int) -> Array:" in stub
    assert "def stream_at_least(batches: object, column: str, min: int) -> ArrayStream[Array]:" in stub
    assert "def max_uint() -> int:" in stub and "def fail(msg: str) -> None:" in stub
    # Go cannot tell *cdevice.Table from *cdevice.ChunkedArray (an alias); the source can
    assert "def first_rows(t: object, n: int) -> Table:" in stub
    assert "def same_table(t: object) -> ChunkedArray:" in stub
    code = tmp_path / "use.py"
    code.write_text(
        f"import {NAME} as fx\n"
        "reveal_type(fx.at_least(None, 'n', 1))\n"
        "reveal_type(fx.total(None, 'n'))\n"
        "fx.total(None, 3)\n"
        "names: list[str] = fx.first_rows(None, 1).column_names\n"
    )
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", str(code)],
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": str(built)},
        cwd=str(tmp_path),
    )
    assert 'Revealed type is "godevarrow._array.Array"' in r.stdout, r.stdout
    assert 'use.py:3: note: Revealed type is "int"' in r.stdout or 'Revealed type is "builtins.int"' in r.stdout
    assert "use.py:4: error:" in r.stdout and 'to "total" has incompatible type "int"; expected "str"' in r.stdout
    assert "use.py:5" not in r.stdout, r.stdout  # a Table's column_names, known to mypy


@needs_go
@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("package broken\n\nfunc init() { undefined() }\n", "undefined: undefined"),
        (
            'package broken\n\nimport "github.com/godevarrow/godevarrow/gosrc/pyfunc"\n\n'
            'func init() { pyfunc.Register("bad", func(ch chan int) {}) }\n',
            'pyfunc.Register("bad"): parameter 1 has type chan int',
        ),
        (
            "package main\n\nfunc main() {}\n",
            "is package main; functions are registered from a library package",
        ),
    ],
    ids=["compile-error", "bad-signature", "main-package"],
)
def test_build_errors_say_what_is_wrong(tmp_path, source, message):
    module = tmp_path / "mod"
    (module / "broken").mkdir(parents=True)
    (module / "go.mod").write_text(
        "module example.com/broken\n\ngo 1.22\n\nrequire github.com/godevarrow/godevarrow v0.1.0\n"
    )
    (module / "broken" / "broken.go").write_text(source)
    r = subprocess.run(
        [sys.executable, "-m", "godevarrow", "build-ext", "-o", str(tmp_path / "out"), str(module / "broken")],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 1 and r.stderr.startswith("build-ext: "), r.stderr
    assert message in r.stderr


def test_build_refuses_what_it_cannot_build(tmp_path, monkeypatch):
    if shutil.which("go"):
        with pytest.raises(_buildext.BuildError, match="/filters, which holds Go source: write it elsewhere"):
            _buildext.build([str(PACKAGES[0])], str(PACKAGES[0].parent))
    (tmp_path / "empty").mkdir()
    with pytest.raises(_buildext.BuildError, match="is not a directory of Go source files"):
        _buildext.build([str(tmp_path / "empty")], str(tmp_path))
    (tmp_path / "loose").mkdir()
    (tmp_path / "loose" / "x.go").write_text("package loose\n")
    if shutil.which("go"):
        with pytest.raises(_buildext.BuildError, match="is in no Go module .* run `go mod init"):
            _buildext.build([str(tmp_path / "loose")], str(tmp_path))
    if shutil.which("go"):
        paths = {**_buildext.sysconfig.get_paths(), "include": str(tmp_path)}
        monkeypatch.setattr(_buildext.sysconfig, "get_paths", lambda: paths)
        with pytest.raises(_buildext.BuildError, match=r"has no Python.h: install them \(Debian and Ubuntu: python3"):
            _buildext.build([str(tmp_path / "loose")], str(tmp_path))
        monkeypatch.undo()
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(_buildext.BuildError, match="build-ext needs the Go toolchain on PATH"):
        _buildext.build([str(tmp_path / "loose")], str(tmp_path))
    assert issubclass(_buildext.BuildError, gda.GodevarrowError)


@needs_go
@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("random", "'random' is a module of Python's standard library"),
        ("pyarrow", "'pyarrow' is already importable here"),
    ],
)
def test_names_that_shadow_a_module_are_refused_before_building(tmp_path, name, message):
    r = subprocess.run(
        [sys.executable, "-m", "godevarrow", "build-ext", "-o", str(tmp_path), "--name", name, str(PACKAGES[0])],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 1 and message in r.stderr and "--force" in r.stderr, r.stderr
    assert "building the extension" not in r.stderr  # refused before the slow build
    assert not (tmp_path / name).exists()


def test_a_rebuild_in_place_is_under_the_name_of_the_package_it_replaces(tmp_path, monkeypatch):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    _buildext.check_name("mine", str(tmp_path / "mine"))  # the package a rebuild overwrites
    with pytest.raises(_buildext.BuildError, match="'mine' is already importable here"):
        _buildext.check_name("mine", str(tmp_path / "elsewhere" / "mine"))
    _buildext.check_name("surely_no_module_of_this_name", str(tmp_path / "x"))
    # run from the folder that holds the Go package: its directory is no package to protect
    (tmp_path / "gopkg").mkdir()
    (tmp_path / "gopkg" / "f.go").write_text("package gopkg\n")
    _buildext.check_name("gopkg", str(tmp_path / "out" / "gopkg"))
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "data.txt").write_text("")
    with pytest.raises(_buildext.BuildError, match="'other' is already importable here"):
        _buildext.check_name("other", str(tmp_path / "out" / "other"))


def test_packages_that_register_nothing_are_named(tmp_path, monkeypatch, capsys):
    functions = [
        {"name": "f", "go_name": "example.com/a.F", "params": [], "result": "int"},
        {"name": "g", "go_name": "example.com/a.init.func1", "params": [], "result": "none"},
    ]
    assert _buildext.unregistered(["example.com/a", "example.com/ab", "example.com/b"], functions) == [
        "example.com/ab",
        "example.com/b",
    ]

    # the command prints the warning build() gives (here, after a build of nothing)
    def build(packages, out, name, *, force, progress):
        progress("building (a stand-in for go build)")
        _buildext.warn_unregistered(["example.com/a", "example.com/quiet"], functions)
        return _buildext.Built(str(tmp_path / "a"), functions)

    monkeypatch.setattr(_buildext, "build", build)
    from godevarrow.__main__ import build_ext

    assert build_ext(["./a"], str(tmp_path), None) == 0
    err = capsys.readouterr().err
    assert "build-ext: building (a stand-in for go build)" in err
    assert "build-ext: warning: the Go package example.com/quiet registers no function" in err
    assert "example.com/a " not in err


def test_toolchain_and_module_checks_name_what_to_install():
    want = build_facts()["go"].partition("-X:")[0]
    fake_go = shutil.which("false") or "/bin/false"
    with pytest.raises(
        _buildext.BuildError, match=f"built with Go {want}, and `go` here is not working.*GOTOOLCHAIN={want}"
    ):
        _buildext.check_toolchain(fake_go, want)
    _buildext.check_modules({"a.b/c": "v1.0.0", "x.y/z": "v2.0.0"}, "a.b/c@v1.0.0", ["/m"])
    with pytest.raises(
        _buildext.BuildError, match=r"a.b/c: godevarrow .* was built with v1.0.0, your modules need v1.2.0"
    ) as info:
        _buildext.check_modules({"a.b/c": "v1.2.0"}, "a.b/c@v1.0.0,d.e/f@v0.1.0", ["/m"])
    assert "In /m run: go get a.b/c@v1.0.0" in str(info.value)


def test_the_installed_package_carries_the_go_source():
    source = pathlib.Path(gda.__file__).parent / "_gosrc"
    for f in (
        "go.mod",
        "go.sum",
        "capsule/exports.go",
        "capsule/module.c",
        "gosrc/pyfunc/register.go",
        "gosrc/pyfunc/internal/gendoc/main.go",
        "gosrc/include/arrow-c-abi.h",
    ):
        assert (source / f).is_file(), f
    assert not list(source.rglob("*_test.go")) and not list(source.rglob("testdata"))


def test_the_installed_build_has_no_go_functions():
    assert len(gda.go) == 0 and list(gda.go) == []
    assert "modules=" in gda._godevarrow.build_info()
    with pytest.raises(AttributeError, match="it has: none"):
        gda.go.anything  # noqa: B018
