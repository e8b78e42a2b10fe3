"""Builds the Go extension module with plain setuptools.

The extension godevarrow._godevarrow is a Go package (./capsule) compiled with
``go build -buildmode=c-shared`` against the running Python's headers. Only Go
and a C compiler are needed at build time; the wheel needs neither.

Packaging (docs/design.md, "Packaging"):
- The binding keeps to CPython's Limited API of 3.10 (capsule/binding.h), so
  the extension is ``_godevarrow.abi3.so`` and the wheel is tagged
  ``cp310-abi3``: one wheel for every CPython from 3.10 up.
  ``GODEVARROW_FULL_API=1`` builds against the full API of the running Python
  instead (a version-specific wheel), for benchmarks/abi3.py.
- An sdist carries the Go modules it needs (``go mod vendor``), and a build
  from a tree with ``vendor/`` uses ``-mod=vendor``: installing the sdist needs
  a Go toolchain but no network.
- ``GODEVARROW_TARGET=x86_64`` or ``aarch64`` (``make wheel``) cross-builds
  for that architecture with ``zig cc`` (the ziglang package) against glibc
  2.17, from any Linux x86-64 machine, and tags the wheel ``linux_<arch>``
  for auditwheel to turn into ``manylinux2014_<arch>``.
- The installed package carries godevarrow's Go source (godevarrow/_gosrc),
  from which ``python -m godevarrow build-ext`` rebuilds the extension with a
  user's Go packages linked in. The go build command is in
  python/godevarrow/_gobuild.py, shared by both.
"""

import importlib.util
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

ROOT = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("_gobuild", os.path.join(ROOT, "python", "godevarrow", "_gobuild.py"))
assert _spec is not None and _spec.loader is not None
gobuild = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gobuild)
FULL_API = os.environ.get("GODEVARROW_FULL_API", "") not in ("", "0")
TARGET = os.environ.get("GODEVARROW_TARGET") or None
LIMITED_API_TAG = "cp310"  # matches Py_LIMITED_API in capsule/binding.h


def find_go() -> str:
    go = shutil.which("go")
    if go is None:
        sys.exit("building godevarrow needs the Go toolchain (https://go.dev/dl/) on PATH")
    return go


def remove_other_builds(out: str) -> None:
    """Removes an earlier build of the other API from the build directory: a
    version-specific .so beside the abi3 one would be packed into the wheel and
    imported first."""
    folder, name = os.path.split(out)
    stem = name.split(".", 1)[0]
    for other in os.listdir(folder):
        if other != name and other.startswith(stem + ".") and other.endswith(".so"):
            os.remove(os.path.join(folder, other))


class GoBuildExt(build_ext):
    def build_extension(self, ext: Extension) -> None:
        go = find_go()
        out = os.path.abspath(self.get_ext_fullpath(ext.name))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        remove_other_builds(out)
        env = gobuild.build_env(FULL_API, TARGET)
        vendor = os.path.isdir(os.path.join(ROOT, "vendor"))
        cmd = gobuild.build_command(go, out, vendor=vendor)
        print(" ".join(cmd), flush=True)
        subprocess.check_call(cmd, cwd=ROOT, env=env)
        header = os.path.splitext(out)[0] + ".h"
        if os.path.exists(header):
            os.remove(header)


class BuildPyWithGoSource(build_py):
    """The package with godevarrow's Go source in godevarrow/_gosrc (for
    build-ext)."""

    def run(self) -> None:
        super().run()
        target = os.path.join(self.build_lib, "godevarrow", "_gosrc")
        shutil.rmtree(target, ignore_errors=True)
        for rel in gobuild.source_files(ROOT):
            os.makedirs(os.path.join(target, os.path.dirname(rel)), exist_ok=True)
            shutil.copy2(os.path.join(ROOT, rel), os.path.join(target, rel))


class VendoringSdist(sdist):
    """An sdist with the Go modules in vendor/, so it builds offline."""

    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        if os.path.isdir(os.path.join(ROOT, "vendor")):
            shutil.copytree(os.path.join(ROOT, "vendor"), os.path.join(base_dir, "vendor"))  # already vendored
            return
        # `go mod vendor` needs the module's packages beside go.mod: run it in the release tree, which has them all
        subprocess.check_call([find_go(), "mod", "vendor"], cwd=base_dir, env={**os.environ, "GOFLAGS": "-mod=mod"})


if TARGET is not None and TARGET not in gobuild.TARGETS:
    sys.exit(f"GODEVARROW_TARGET={TARGET} is not one of {', '.join(gobuild.TARGETS)}")
options: dict[str, dict[str, str]] = {"bdist_wheel": {}}
if not FULL_API:
    options["bdist_wheel"]["py_limited_api"] = LIMITED_API_TAG
if TARGET is not None:
    options["bdist_wheel"]["plat_name"] = f"linux_{TARGET}"  # the wheel's architecture, not this machine's

setup(
    ext_modules=[Extension("godevarrow._godevarrow", sources=[], py_limited_api=not FULL_API)],
    cmdclass={"build_ext": GoBuildExt, "build_py": BuildPyWithGoSource, "sdist": VendoringSdist},
    options=options,
)
