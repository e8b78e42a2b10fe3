#!/usr/bin/env python3
"""Checks the wheels `make wheel` built, independently of auditwheel: one
wheel per architecture, each tagged cp310-abi3 manylinux2014 (glibc 2.17),
and its extension really is what the tag says.

    python .ci/check_wheels.py DIST_DIR ARCH...

For each wheel's extension module (read with binutils' readelf, which reads
any architecture): the ELF machine is the tag's, it needs only glibc's own
libraries, every glibc symbol version it needs is 2.17 or older, every
symbol it leaves undefined without a version is CPython's (the interpreter
provides those), and it carries no symbol table or debug sections.
Exits 1 naming each problem.
"""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys
import tempfile
import zipfile

GLIBC_MAX = (2, 17)
MACHINES = {"x86_64": "Advanced Micro Devices X86-64", "aarch64": "AArch64"}
# glibc's libraries: the only ones a manylinux2014 wheel may need without bundling them
ALLOWED_NEEDED = {
    "libc.so.6",
    "libpthread.so.0",
    "libdl.so.2",
    "libm.so.6",
    "librt.so.1",
    "ld-linux-x86-64.so.2",
    "ld-linux-aarch64.so.1",
}


def wheel_name_pattern(arch: str) -> re.Pattern[str]:
    return re.compile(rf"^godevarrow-[^-]+-cp310-abi3-manylinux2014_{arch}\.manylinux_2_17_{arch}\.whl$")


def readelf(*args: str) -> str:
    return subprocess.run(["readelf", "-W", *args], check=True, capture_output=True, text=True).stdout


def check_shared_object(path: str, arch: str) -> list[str]:
    """The problems of one extension module built for arch (empty: none)."""
    problems = []
    machine = re.search(r"^\s*Machine:\s*(.+)$", readelf("-h", path), re.M)
    if machine is None or machine.group(1).strip() != MACHINES[arch]:
        problems.append(f"ELF machine is {machine.group(1).strip() if machine else '?'}, not {arch}")
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", readelf("-d", path)))
    if needed - ALLOWED_NEEDED:
        problems.append(f"needs libraries outside glibc: {sorted(needed - ALLOWED_NEEDED)}")
    too_new, unversioned = set(), set()
    for line in readelf("--dyn-syms", path).splitlines():
        fields = line.split()
        if len(fields) < 8 or fields[6] != "UND" or not fields[7]:
            continue
        name, _, version = fields[7].partition("@")
        version = version.lstrip("@").split(" ")[0]
        if version.startswith("GLIBC_"):
            numbers = tuple(int(n) for n in re.findall(r"\d+", version))
            if numbers > GLIBC_MAX:
                too_new.add(f"{name}@{version}")
        elif not version and not name.startswith(("Py", "_Py")) and fields[4] != "WEAK":
            unversioned.add(name)
    if too_new:
        problems.append(f"needs glibc newer than 2.17: {sorted(too_new)}")
    if unversioned:
        problems.append(f"leaves undefined, without a version, symbols that are not CPython's: {sorted(unversioned)}")
    sections = set(re.findall(r"^\s*\[\s*\d+\]\s+(\S+)", readelf("-S", path), re.M))
    unstripped = sorted(s for s in sections if s == ".symtab" or s.startswith(".debug"))
    if unstripped:
        problems.append(f"not stripped: has {unstripped}")
    return problems


def check_wheel(wheel: pathlib.Path, arch: str) -> list[str]:
    problems = []
    if not wheel_name_pattern(arch).match(wheel.name):
        problems.append(f"not tagged cp310-abi3-manylinux2014_{arch}.manylinux_2_17_{arch}")
    with zipfile.ZipFile(wheel) as zf, tempfile.TemporaryDirectory() as tmp:
        modules = [n for n in zf.namelist() if n.endswith(".so")]
        if modules != ["godevarrow/_godevarrow.abi3.so"]:
            return [*problems, f"expected exactly godevarrow/_godevarrow.abi3.so, found {modules}"]
        problems += check_shared_object(zf.extract(modules[0], tmp), arch)
    return problems


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    dist, archs = pathlib.Path(argv[0]), argv[1:]
    wheels = sorted(dist.glob("*.whl"))
    failed = False
    for arch in archs:
        mine = [w for w in wheels if w.name.endswith(f"_{arch}.whl")]
        if len(mine) != 1:
            print(f"check_wheels: expected one {arch} wheel in {dist}, found {[w.name for w in mine]}")
            failed = True
            continue
        problems = check_wheel(mine[0], arch)
        for problem in problems:
            print(f"check_wheels: {mine[0].name}: {problem}")
        failed |= bool(problems)
        if not problems:
            print(f"check_wheels: {mine[0].name}: {arch}, glibc <= 2.17, only glibc's libraries, stripped")
    others = [w.name for w in wheels if not any(w.name.endswith(f"_{a}.whl") for a in archs)]
    if others:
        print(f"check_wheels: wheels for no expected architecture: {others}")
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
