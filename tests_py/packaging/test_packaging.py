"""What a user meets installing and importing godevarrow: the supported
Python range, the stable-ABI extension, device strings, and the errors of
missing optional dependencies (docs/design.md, "Packaging")."""

from __future__ import annotations

import pathlib
import re

import godevarrow as gda
import pytest
from conftest import run_python

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _pyproject() -> str:
    path = ROOT / "pyproject.toml"
    if not path.exists():
        pytest.fail(f"{path} is missing: these tests run from a checkout of the repository")
    return path.read_text()


# ------------------------------------------------------------- Python range


def test_requires_python_classifiers_and_makefile_name_the_same_versions():
    text = _pyproject()
    lowest = re.search(r'requires-python = ">=3\.(\d+)"', text)
    assert lowest, "requires-python must be a lower bound"
    classified = sorted(int(m) for m in re.findall(r'"Programming Language :: Python :: 3\.(\d+)"', text))
    makefile = (ROOT / "Makefile").read_text()
    supported = re.search(r"^SUPPORTED_PYTHONS := (.+)$", makefile, re.M)
    assert supported, "Makefile names SUPPORTED_PYTHONS"
    tested = [int(v.split(".")[1]) for v in supported.group(1).split()]
    assert classified == tested, (classified, tested)
    assert tested[0] == int(lowest.group(1)), "requires-python starts at the oldest tested CPython"
    # the binding's Limited API version is the lowest supported one
    binding = (ROOT / "capsule" / "binding.h").read_text()
    assert f"#define Py_LIMITED_API 0x030{tested[0]:X}0000" in binding


def test_the_extension_is_the_stable_abi_build():
    assert gda._godevarrow.__file__.endswith(".abi3.so"), gda._godevarrow.__file__


# ---------------------------------------------------------------- devices


@pytest.mark.parametrize(
    ("text", "device"),
    [
        ("cpu", gda.Device.cpu()),
        ("CPU", gda.Device.cpu()),
        ("cuda", gda.Device.cuda(0)),
        ("cuda:0", gda.Device.cuda(0)),
        (" cuda:3 ", gda.Device.cuda(3)),
        ("cuda_host:1", gda.Device(gda.DeviceType.CUDA_HOST, 1)),
    ],
)
def test_device_accepts_the_strings_it_prints(text, device):
    assert gda.Device(text) == device
    assert gda.Device(str(device)) == device
    assert eval(repr(device), {"Device": gda.Device}) == device


def test_device_string_with_a_separate_id():
    assert gda.Device("cuda", 2) == gda.Device.cuda(2)
    assert gda.Device(gda.DeviceType.CUDA) == gda.Device.cuda(0)
    with pytest.raises(gda.ArrowInvalid, match="disagree"):
        gda.Device("cuda:1", 2)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("gpu", "unknown device 'gpu'"),
        ("cuda:x", "non-negative integer"),
        ("cuda:-1", "non-negative integer"),
        ("cpu:2", "the CPU has no device ids"),
        ("", "unknown device"),
    ],
)
def test_bad_device_strings_say_what_is_expected(text, message):
    with pytest.raises(gda.ArrowInvalid, match=message):
        gda.Device(text)


# ---------------------------------------------------- optional dependencies

# A subprocess in which the named top-level modules cannot be imported, as on
# a machine where they are not installed.
_BLOCKER = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, Block())
"""


def _without(blocked: set[str], code: str) -> None:
    proc = run_python(_BLOCKER.format(blocked=blocked) + code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().endswith("ok"), proc.stdout


def test_missing_pyarrow_names_the_extra_for_every_feature_that_needs_it():
    _without(
        {"pyarrow"},
        """
import pickle, numpy as np, godevarrow as gda, godevarrow.cudf
arr = gda.array(np.arange(3))  # through DLPack: no pyarrow needed
checks = {
    "to_pyarrow()": [lambda: arr.to_pyarrow(), lambda: gda.to_pyarrow(arr), lambda: arr.schema.to_pyarrow()],
    "pickling a godevarrow array": [lambda: pickle.dumps(arr)],
    "pickling a godevarrow schema": [lambda: pickle.dumps(arr.schema)],
}
for feature, calls in checks.items():
    for call in calls:
        try:
            call()
        except gda.MissingDependencyError as e:
            assert isinstance(e, ModuleNotFoundError) and isinstance(e, gda.GodevarrowError)
            assert e.name == "pyarrow", e.name
            assert str(e) == f"{feature} needs pyarrow: pip install 'godevarrow[pyarrow]'", str(e)
        else:
            raise AssertionError(f"{feature}: no error")
print("ok")
""",
    )


def test_missing_cupy_and_cudf_name_their_extras():
    _without(
        {"cupy", "cudf", "pylibcudf"},
        """
import numpy as np, godevarrow as gda, godevarrow.cupy as gcupy, godevarrow.cudf as gcudf
arr = gda.array(np.arange(3))
for call, module, extra in [
    (lambda: gcupy.to_cupy(arr), "cupy", "cupy"),
    (lambda: gcudf.to_cudf(arr), "cudf", "cudf"),
]:
    try:
        call()
    except ImportError as e:
        assert isinstance(e, gda.MissingDependencyError), type(e)
        assert e.name == module and f"pip install 'godevarrow[{extra}]'" in str(e), str(e)
    else:
        raise AssertionError("no error")
print("ok")
""",
    )


def test_every_extra_an_error_names_exists():
    from godevarrow._optional import EXTRAS

    declared = re.search(r"^\[project\.optional-dependencies\]\n(.*?)^\[", _pyproject(), re.M | re.S)
    assert declared, "pyproject.toml declares extras"
    extras = set(re.findall(r"^(\w+) = \[", declared.group(1), re.M))
    assert set(EXTRAS.values()) <= extras, (EXTRAS, extras)
    assert extras == {"pyarrow", "pandas", "cupy", "cudf"}, "README and troubleshooting.md name exactly these"
    for doc in (ROOT / "README.md", ROOT / "docs" / "troubleshooting.md"):
        named = set(re.findall(r"`\[(\w+)\]`", doc.read_text()))
        assert named == extras, (doc.name, named)


def test_an_error_inside_an_installed_dependency_is_not_reworded(tmp_path, monkeypatch):
    # the dependency is there but something it imports is not: the user sees that error as it is
    (tmp_path / "installed_dep.py").write_text("import module_it_lacks\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from godevarrow._optional import require

    with pytest.raises(ModuleNotFoundError) as info:
        require("installed_dep", "a feature")
    assert not isinstance(info.value, gda.MissingDependencyError)
    assert info.value.name == "module_it_lacks"
    with pytest.raises(
        gda.MissingDependencyError, match=r"^a feature needs not_installed_dep: pip install not_installed_dep$"
    ):
        require("not_installed_dep", "a feature")


# ------------------------------------------------------ errors users meet


def test_a_stream_producer_offered_as_a_batch_is_pointed_to_stream():
    import pyarrow as pa

    table = pa.table({"x": [1, 2]})
    with pytest.raises(
        gda.GodevarrowTypeError, match=r"stream producer \(a table or data frame\): read it with godevarrow\.table\(\)"
    ):
        gda.record_batch(table)
    with pytest.raises(gda.GodevarrowTypeError) as info:
        gda.record_batch(42)
    assert "stream producer" not in str(info.value)
    assert [b.num_rows for b in gda.stream(table)] == [2]


def test_info_names_the_versions_and_the_stable_abi():
    proc = run_python("import sys; from godevarrow.__main__ import main; sys.exit(main(['info']))")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert f"godevarrow {gda.__version__}" in out
    assert re.search(r"^  Python\s+3\.\d+\.\d+", out, re.M), out
    assert re.search(r"^  extension\s+_godevarrow\.abi3\.so \(CPython's stable ABI, 3\.10\+\)$", out, re.M), out
    assert re.search(r"^  Go\s+go1\.\d+", out, re.M), out


# ------------------------------------------------------ the wheels' check

# .ci/check_wheels.py, which `make wheel` runs on every wheel, judged on
# extensions compiled here by the machine's C compiler: one that keeps to
# glibc 2.17 passes, and each thing the manylinux2014 tag forbids is named.
_OLD_GLIBC_ONLY = "#include <stdlib.h>\nvoid *f(size_t n) { return malloc(n); }\n"
# reallocarray entered glibc in 2.26
_NEWER_GLIBC = "#include <stdlib.h>\nvoid *f(void *p, size_t n) { return reallocarray(p, n, 8); }\n"


def _check_wheels():
    import importlib.util

    spec = importlib.util.spec_from_file_location("check_wheels", ROOT / ".ci" / "check_wheels.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _compiler_arch() -> str:
    import subprocess

    # the compiler's target, not this interpreter's machine (the suite also runs under qemu)
    triple = subprocess.run(["cc", "-dumpmachine"], check=True, capture_output=True, text=True).stdout
    return triple.split("-")[0]


def _wheel(tmp_path: pathlib.Path, source: str, *cflags: str, tag: str | None = None) -> pathlib.Path:
    import subprocess
    import zipfile

    arch = _compiler_arch()
    (tmp_path / "ext.c").write_text("#define _GNU_SOURCE\n" + source)
    so = tmp_path / "_godevarrow.abi3.so"
    subprocess.run(["cc", "-shared", "-fPIC", *cflags, "-o", str(so), str(tmp_path / "ext.c")], check=True)
    tag = tag or f"manylinux2014_{arch}.manylinux_2_17_{arch}"
    dist = tmp_path / "dist"
    dist.mkdir()
    wheel = dist / f"godevarrow-0.1.0-cp310-abi3-{tag}.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.write(so, "godevarrow/_godevarrow.abi3.so")
    return wheel


def test_wheel_check_passes_a_stripped_extension_that_needs_only_glibc_2_17(tmp_path, capsys):
    check = _check_wheels()
    wheel = _wheel(tmp_path, _OLD_GLIBC_ONLY, "-s")
    assert check.check_wheel(wheel, _compiler_arch()) == []
    assert check.main([str(wheel.parent), _compiler_arch()]) == 0
    assert "glibc <= 2.17, only glibc's libraries, stripped" in capsys.readouterr().out


def test_wheel_check_names_a_newer_glibc_symbol_and_symbols_left_in(tmp_path, capsys):
    check = _check_wheels()
    wheel = _wheel(tmp_path, _NEWER_GLIBC, "-g")
    problems = check.check_wheel(wheel, _compiler_arch())
    assert "needs glibc newer than 2.17: ['reallocarray@GLIBC_2.26']" in problems, problems
    assert any(p.startswith("not stripped: has [") and "'.symtab'" in p for p in problems), problems
    assert check.main([str(wheel.parent), _compiler_arch()]) == 1
    assert "reallocarray@GLIBC_2.26" in capsys.readouterr().out


def test_wheel_check_names_a_wrong_tag_a_wrong_machine_and_a_missing_architecture(tmp_path, capsys):
    check = _check_wheels()
    arch = _compiler_arch()
    other = "aarch64" if arch == "x86_64" else "x86_64"
    wheel = _wheel(tmp_path, _OLD_GLIBC_ONLY, "-s", tag=f"manylinux_2_34_{arch}")
    assert check.check_wheel(wheel, arch) == [f"not tagged cp310-abi3-manylinux2014_{arch}.manylinux_2_17_{arch}"]
    problems = check.check_wheel(wheel, other)
    assert any(p.startswith("ELF machine is ") and p.endswith(f", not {other}") for p in problems), problems
    assert check.main([str(wheel.parent), arch, other]) == 1
    assert f"expected one {other} wheel in" in capsys.readouterr().out
