"""Builds the Go extension module with plain setuptools.

The extension godevarrow._godevarrow is a Go package (./capsule) compiled with
``go build -buildmode=c-shared`` against the running Python's headers. Only Go
and a C compiler are needed at build time; the wheel needs neither.
"""

import os
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class GoBuildExt(build_ext):
    def build_extension(self, ext: Extension) -> None:
        go = shutil.which("go")
        if go is None:
            sys.exit("building godevarrow needs the Go toolchain (https://go.dev/dl/) on PATH")
        out = os.path.abspath(self.get_ext_fullpath(ext.name))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        env = dict(os.environ)
        env["CGO_ENABLED"] = "1"
        include = sysconfig.get_paths()["include"]
        env["CGO_CFLAGS"] = f"-I{include} -O2 " + env.get("CGO_CFLAGS", "")
        env.setdefault("GOFLAGS", "-buildvcs=false")
        # stripped unless asked otherwise (`make profile` keeps the symbols)
        ldflags = os.environ.get("GODEVARROW_GO_LDFLAGS", "-s -w")
        cmd = [go, "build", "-buildmode=c-shared", "-trimpath", f"-ldflags={ldflags}", "-o", out, "./capsule"]
        print(" ".join(cmd), flush=True)
        subprocess.check_call(cmd, cwd=ROOT, env=env)
        header = os.path.splitext(out)[0] + ".h"
        if os.path.exists(header):
            os.remove(header)


setup(
    ext_modules=[Extension("godevarrow._godevarrow", sources=[])],
    cmdclass={"build_ext": GoBuildExt},
)
