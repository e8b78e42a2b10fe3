#!/usr/bin/env python3
"""Refuse test patterns that let a test pass without checking what it names.

Usage: lint_tests.py [PATH ...]   (default: every .py file under tests_py/)

Rules (each reported as FILE:LINE: RULE: message):

broad-raises    ``pytest.raises(Exception)`` or ``BaseException`` (alone or in a
                tuple): any failure passes; pin the documented class.
except-pass     an ``except`` whose body is only ``pass`` (or ``...``), or a bare
                ``return``, ``continue`` or ``break``: whatever its ``try``
                covered may fail unseen.
suppress        ``contextlib.suppress(...)``: the same, spelled as a context
                manager.
timing-assert   an ``assert`` on a difference of ``time.perf_counter()``,
                ``time.monotonic()``, ``time.time()`` (and their ``_ns`` forms)
                values, directly or through names assigned from one: wall-clock
                outcomes belong in benchmarks, and a hang guard is a timeout
                that fails the test, not an assertion on elapsed seconds.

A finding may be allowed where it is justified, by a comment on its line:
``# lint: allow-<rule> <reason>``. The reason is required; every allowance is
listed in the output so that a reviewer sees them all. A marker without a
reason, or naming no rule, is itself an error (bad-allow).

Exit status: 0 when nothing is refused, 1 otherwise.
"""

from __future__ import annotations

import ast
import io
import pathlib
import re
import sys
import tokenize
from dataclasses import dataclass

RULES = ("broad-raises", "except-pass", "suppress", "timing-assert")
TIME_FUNCS = {"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns"}
BROAD = {"Exception", "BaseException"}
ALLOW = re.compile(r"#\s*lint:\s*allow-([\w-]*)(.*)$")


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    rule: str
    message: str
    allowed_because: str | None = None

    def __str__(self) -> str:
        if self.allowed_because is not None:
            return f"{self.path}:{self.line}: allowed {self.rule}: {self.allowed_because}"
        return f"{self.path}:{self.line}: {self.rule}: {self.message}"


class _Imports(ast.NodeVisitor):
    """The local names of the time module, its clocks, pytest.raises and contextlib.suppress."""

    def __init__(self) -> None:
        self.time_modules: set[str] = set()
        self.clocks: set[str] = set()
        self.pytest_modules: set[str] = set()
        self.raises: set[str] = set()
        self.contextlib_modules: set[str] = set()
        self.suppress: set[str] = set()

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            local = a.asname or a.name
            {"time": self.time_modules, "pytest": self.pytest_modules, "contextlib": self.contextlib_modules}.get(
                a.name, set()
            ).add(local)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for a in node.names:
            local = a.asname or a.name
            if node.module == "time" and a.name in TIME_FUNCS:
                self.clocks.add(local)
            elif node.module == "pytest" and a.name == "raises":
                self.raises.add(local)
            elif node.module == "contextlib" and a.name == "suppress":
                self.suppress.add(local)


def _is_call_of(node: ast.AST, modules: set[str], attr: str | set[str], bare: set[str]) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    attrs = {attr} if isinstance(attr, str) else attr
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
        return f.value.id in modules and f.attr in attrs
    return isinstance(f, ast.Name) and f.id in bare


def _names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _is_broad(node: ast.AST) -> bool:
    if isinstance(node, ast.Tuple):
        return any(_is_broad(e) for e in node.elts)
    if isinstance(node, ast.Name):
        return node.id in BROAD
    return isinstance(node, ast.Attribute) and node.attr in BROAD and isinstance(node.value, ast.Name)


_TRY = (ast.Try, ast.TryStar) if hasattr(ast, "TryStar") else (ast.Try,)


def _parametrized_broad(f: ast.FunctionDef | ast.AsyncFunctionDef, imports: _Imports) -> list[int]:
    """Lines of Exception/BaseException given through pytest.mark.parametrize
    to a parameter that the test passes to pytest.raises."""
    raised = {
        n.args[0].id
        for n in ast.walk(f)
        if _is_call_of(n, imports.pytest_modules, "raises", imports.raises)
        and isinstance(n, ast.Call)
        and n.args
        and isinstance(n.args[0], ast.Name)
    }
    lines = []
    for d in f.decorator_list:
        if not (isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr == "parametrize"):
            continue
        if len(d.args) < 2:
            continue
        names_node, values = d.args[0], d.args[1]
        if isinstance(names_node, ast.Constant) and isinstance(names_node.value, str):
            names = [x.strip() for x in names_node.value.split(",")]
        elif isinstance(names_node, (ast.List, ast.Tuple)):
            names = [e.value for e in names_node.elts if isinstance(e, ast.Constant)]
        else:
            continue
        wanted = [i for i, name in enumerate(names) if name in raised]
        if not wanted or not isinstance(values, (ast.List, ast.Tuple)):
            continue
        for case in values.elts:
            if isinstance(case, ast.Call) and isinstance(case.func, ast.Attribute) and case.func.attr == "param":
                row = case.args
            elif len(names) == 1:
                row = [case]
            elif isinstance(case, (ast.Tuple, ast.List)):
                row = case.elts
            else:
                continue
            lines += [row[i].lineno for i in wanted if i < len(row) and _is_broad(row[i])]
    return lines


def _else_fails(node: ast.Try | ast.TryStar) -> bool:
    """try: ... except E: pass / else: raise ...: the exception is required,
    the idiom of a script that has no pytest.raises."""
    return any(isinstance(n, ast.Raise) for s in node.orelse for n in ast.walk(s))


def _swallows(body: list[ast.stmt]) -> bool:
    """The handler does nothing but carry on: pass (or ...), or a bare
    return, continue or break as its only statement."""
    if len(body) == 1 and (
        isinstance(body[0], (ast.Continue, ast.Break)) or (isinstance(body[0], ast.Return) and body[0].value is None)
    ):
        return True
    return all(isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)) for s in body)


class _Timing:
    """Which names of one scope hold clock readings and which hold differences of them."""

    def __init__(self, scope: ast.AST, imports: _Imports, duration_funcs: set[str] | None = None) -> None:
        self.imports = imports
        self.duration_funcs = duration_funcs or set()
        self.readings: set[str] = set()
        self.durations: set[str] = set()
        assigns: list[tuple[list[str], ast.AST]] = []
        for n in ast.walk(scope):
            if isinstance(n, ast.Assign):
                assigns.append(([x.id for t in n.targets for x in ast.walk(t) if isinstance(x, ast.Name)], n.value))
            elif isinstance(n, (ast.AnnAssign, ast.AugAssign)) and n.value is not None:
                assigns.append(([x.id for x in ast.walk(n.target) if isinstance(x, ast.Name)], n.value))
            elif isinstance(n, ast.NamedExpr):
                assigns.append(([n.target.id], n.value))
        changed = True
        while changed:  # names assigned from names: to a fixed point
            changed = False
            for targets, value in assigns:
                kind = self.durations if self.has_difference(value) else self.readings if self.reads(value) else None
                for t in targets if kind is not None else []:
                    if t not in kind:
                        kind.add(t)
                        changed = True

    def is_clock(self, node: ast.AST) -> bool:
        return _is_call_of(node, self.imports.time_modules, TIME_FUNCS, self.imports.clocks)

    def reads(self, node: ast.AST) -> bool:
        """node involves a clock reading (or a difference of them)."""
        return any(self.is_clock(n) for n in ast.walk(node)) or bool(_names_in(node) & (self.readings | self.durations))

    def has_difference(self, node: ast.AST) -> bool:
        """node involves a difference of clock readings, or a name holding one."""
        for n in ast.walk(node):
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub) and (self.reads(n.left) or self.reads(n.right)):
                return True
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in self.duration_funcs:
                return True
        return bool(_names_in(node) & self.durations)


def _allowances(source: str) -> dict[int, tuple[str, str]]:
    out: dict[int, tuple[str, str]] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            m = ALLOW.search(tok.string)
            if m:
                out[tok.start[0]] = (m.group(1), m.group(2).strip())
    return out


def _duration_funcs(tree: ast.AST, imports: _Imports) -> set[str]:
    """Functions that return a difference of clock readings (a "timed(...)" helper)."""
    found: set[str] = set()
    for _ in range(3):  # helpers of helpers
        for f in ast.walk(tree):
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name not in found:
                timing = _Timing(f, imports, found)
                if any(isinstance(r, ast.Return) and r.value and timing.has_difference(r.value) for r in ast.walk(f)):
                    found.add(f.name)
    return found


def _scripts(tree: ast.AST) -> list[ast.Constant]:
    """String constants that are Python programs (what a test runs in a child
    process), docstrings excepted."""
    docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and "\n" in n.value and id(n) not in docstrings:
            try:
                inner = ast.parse(n.value)
            except (SyntaxError, ValueError):
                continue
            if any(isinstance(x, (ast.Import, ast.ImportFrom, ast.Call)) for x in ast.walk(inner)):
                out.append(n)
    return out


def check_source(source: str, path: str = "<snippet>", first_line: int = 1, embedded: bool = False) -> list[Finding]:
    """Every finding of one file, allowed ones included (with their reason).
    first_line: where source starts in the file; embedded: source is a script
    that a test runs in a child process (a string in the test file)."""
    tree = ast.parse(source, filename=path)
    imports = _Imports()
    imports.visit(tree)
    raw: list[tuple[int, str, str]] = []

    for n in ast.walk(tree):
        if _is_call_of(n, imports.pytest_modules, "raises", imports.raises):
            assert isinstance(n, ast.Call)
            by_keyword = (k.value for k in n.keywords if k.arg == "expected_exception")
            expected = n.args[0] if n.args else next(by_keyword, None)
            if expected is not None and _is_broad(expected):
                raw.append((n.lineno, "broad-raises", "pytest.raises with Exception/BaseException accepts any failure"))
        elif _is_call_of(n, imports.contextlib_modules, "suppress", imports.suppress):
            raw.append((n.lineno, "suppress", "contextlib.suppress hides a failure of the code it covers"))
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for line in _parametrized_broad(n, imports):
                raw.append((line, "broad-raises", "a parametrized pytest.raises expects Exception/BaseException"))
        elif isinstance(n, _TRY) and not _else_fails(n):
            for h in n.handlers:
                if _swallows(h.body):
                    raw.append((h.lineno, "except-pass", "an except that only carries on hides a failure of its try"))

    # one timing scope per top-level definition, and one for the module's own statements
    module_rest = ast.Module(body=[], type_ignores=[])
    scopes: list[ast.AST] = [module_rest]
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            scopes.append(stmt)
        else:
            module_rest.body.append(stmt)
    duration_funcs = _duration_funcs(tree, imports)
    for scope in scopes:
        timing = _Timing(scope, imports, duration_funcs)
        for n in ast.walk(scope):
            if isinstance(n, ast.Assert) and timing.has_difference(n.test):
                raw.append((n.lineno, "timing-assert", "an assertion on elapsed wall-clock time"))
            elif (
                embedded
                and isinstance(n, ast.Call)
                and isinstance(n.func, ast.Name)
                and n.func.id == "print"
                and any(timing.has_difference(a) for a in n.args)
            ):
                # a child process reports elapsed time: its test can only assert on seconds
                raw.append((n.lineno, "timing-assert", "a test's script reports elapsed wall-clock time"))

    allowed = _allowances(source)
    at = first_line - 1
    findings = []
    for line, rule, message in sorted(raw):
        why = None
        if line in allowed and allowed[line][0] == rule and allowed[line][1]:
            why = allowed[line][1]
        findings.append(Finding(path, at + line, rule, message, why))
    for line, (rule, reason) in sorted(allowed.items()):
        if rule not in RULES:
            rules = ", ".join(RULES)
            findings.append(Finding(path, at + line, "bad-allow", f"'allow-{rule}' names no rule (one of {rules})"))
        elif not reason:
            findings.append(Finding(path, at + line, "bad-allow", f"'allow-{rule}' gives no reason"))
    for script in _scripts(tree):
        findings += check_source(script.value, path, at + script.lineno, embedded=True)
    return sorted(findings, key=lambda f: (f.path, f.line, f.rule))


def default_paths(root: pathlib.Path) -> list[pathlib.Path]:
    return sorted((root / "tests_py").rglob("*.py"))


def main(argv: list[str]) -> int:
    root = pathlib.Path(__file__).resolve().parent.parent
    paths = [pathlib.Path(a) for a in argv] or default_paths(root)
    findings: list[Finding] = []
    for p in paths:
        try:
            shown = str(p.resolve().relative_to(root))
        except ValueError:
            shown = str(p)
        findings += check_source(p.read_text(encoding="utf-8"), shown)
    refused = [f for f in findings if f.allowed_because is None]
    allowed = [f for f in findings if f.allowed_because is not None]
    for f in refused:
        print(f)
    if allowed:
        print(f"lint_tests: {len(allowed)} allowance(s):")
        for f in allowed:
            print(f"  {f}")
    print(f"lint_tests: {len(paths)} files, {len(refused)} refused, {len(allowed)} allowed")
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
