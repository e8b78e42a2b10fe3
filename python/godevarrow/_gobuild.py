"""The ``go build`` of the extension module, in one place for setup.py and
for ``python -m godevarrow build-ext`` (a rebuild must be built the way the
installed extension was). setup.py loads this file by path: it imports
nothing from the package."""

from __future__ import annotations

import importlib.util
import os
import sys
import sysconfig

# The files of godevarrow's Go module that travel with the installed package
# (as godevarrow/_gosrc), so that build-ext can rebuild the extension.
SOURCE_ROOTS = ("go.mod", "go.sum", "gosrc", "capsule")
SOURCE_SUFFIXES = (".go", ".c", ".h", ".mod", ".sum")


def is_source(relpath: str) -> bool:
    """Whether a file under SOURCE_ROOTS (a path relative to the module's
    root) is part of the build: Go, C and module files, without tests and
    test data."""
    parts = relpath.replace(os.sep, "/").split("/")
    return relpath.endswith(SOURCE_SUFFIXES) and not relpath.endswith("_test.go") and "testdata" not in parts


def source_files(root: str) -> list[str]:
    """The module's source files under root (paths relative to it): those
    of SOURCE_ROOTS that is_source keeps."""
    found = []
    for top in SOURCE_ROOTS:
        if os.path.isfile(os.path.join(root, top)):
            found.append(top)
        for folder, _dirs, files in os.walk(os.path.join(root, top)):
            found += [os.path.relpath(os.path.join(folder, f), root) for f in files]
    return sorted(f for f in found if is_source(f))


def build_command(go: str, out: str, *, vendor: bool = False) -> list[str]:
    """The command that builds the extension (run in the module's root):
    stripped unless GODEVARROW_GO_LDFLAGS says otherwise (`make profile`
    keeps the symbols)."""
    ldflags = os.environ.get("GODEVARROW_GO_LDFLAGS", "-s -w")
    cmd = [go, "build", "-buildmode=c-shared", "-trimpath", f"-ldflags={ldflags}"]
    if vendor:
        cmd.append("-mod=vendor")  # an sdist: its modules are in vendor/, no download
    return cmd + ["-o", out, "./capsule"]


# The wheels' targets (setup.py with GODEVARROW_TARGET): Go's name for the
# architecture and zig's target triple, whose .2.17 links against glibc
# 2.17's symbol versions (manylinux2014) whatever the build machine's glibc.
TARGETS = {
    "x86_64": ("amd64", "x86_64-linux-gnu.2.17"),
    "aarch64": ("arm64", "aarch64-linux-gnu.2.17"),
}


def build_env(full_api: bool = False, target: str | None = None) -> dict[str, str]:
    """The environment of that command: cgo on, this Python's headers. With
    a target (a key of TARGETS), the C side is compiled and linked by
    ``zig cc`` from the ziglang package for that architecture and glibc
    2.17, and the linker strips the result (a host strip may not read a
    foreign architecture). The Limited API headers are the same for both
    architectures (docs/design.md, "Packaging"), so this Python's serve."""
    env = dict(os.environ)
    env["CGO_ENABLED"] = "1"
    include = sysconfig.get_paths()["include"]
    api = "-DGODEVARROW_FULL_API " if full_api else ""
    env["CGO_CFLAGS"] = f"-I{include} -O2 {api}" + env.get("CGO_CFLAGS", "")
    env.setdefault("GOFLAGS", "-buildvcs=false")
    if target is not None:
        if target not in TARGETS:
            raise ValueError(f"unknown target {target!r}: expected one of {', '.join(TARGETS)}")
        if importlib.util.find_spec("ziglang") is None:
            raise ValueError(f"a build for {target} compiles with zig: pip install ziglang (requirements-dev.txt)")
        if " " in sys.executable:
            raise ValueError(f"cross builds run zig through {sys.executable!r}, whose path must have no spaces")
        goarch, triple = TARGETS[target]
        env["GOOS"] = "linux"
        env["GOARCH"] = goarch
        env["CC"] = f"{sys.executable} -m ziglang cc -target {triple}"
        env["CGO_LDFLAGS"] = "-s " + env.get("CGO_LDFLAGS", "")
    return env
