"""Unit tests of lint_tests.py: each rule flags its pattern at the right line,
leaves the honest spelling alone, and honours only reasoned allowances.

Run: python -m unittest discover -s .ci -p 'test_*.py' (make lint does).
"""

from __future__ import annotations

import contextlib
import io
import pathlib
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import lint_tests  # noqa: E402


def found(source: str) -> list[tuple[int, str]]:
    """(line, rule) of every refused finding."""
    return [(f.line, f.rule) for f in lint_tests.check_source(textwrap.dedent(source)) if f.allowed_because is None]


class BroadRaises(unittest.TestCase):
    def test_exception_and_base_exception_are_refused(self):
        src = """\
            import pytest
            from pytest import raises as r
            def test_a():
                with pytest.raises(Exception):
                    f()
                with pytest.raises(BaseException, match="x"):
                    f()
                with pytest.raises((ValueError, Exception)):
                    f()
                with r(Exception):
                    f()
                with pytest.raises(expected_exception=builtins.BaseException):
                    f()
            """
        self.assertEqual(found(src), [(4, "broad-raises"), (6, "broad-raises"), (8, "broad-raises"),
                                      (10, "broad-raises"), (12, "broad-raises")])  # fmt: skip

    def test_a_pinned_class_passes(self):
        src = """\
            import pytest, pyarrow as pa
            def test_a():
                with pytest.raises(ValueError, match="x"):
                    f()
                with pytest.raises(pa.ArrowException):
                    f()
                with pytest.raises((TypeError, KeyError)):
                    f()
            """
        self.assertEqual(found(src), [])

    def test_a_parametrized_exception_class_is_refused(self):
        src = """\
            import pytest
            @pytest.mark.parametrize(
                "fn,cls",
                [
                    (f, ValueError),
                    (g, Exception),
                    pytest.param(h, BaseException, id="h"),
                ],
            )
            def test_a(fn, cls):
                with pytest.raises(cls):
                    fn()
            @pytest.mark.parametrize("value", [Exception, 1])
            def test_b(value):
                assert value  # not given to pytest.raises: not this rule's business
            """
        self.assertEqual(found(src), [(6, "broad-raises"), (7, "broad-raises")])


class ExceptPass(unittest.TestCase):
    def test_handlers_that_carry_on_are_refused(self):
        src = """\
            def test_a():
                try:
                    f()
                except ValueError:
                    pass
                try:
                    f()
                except (KeyError, IndexError):
                    ...
                for x in y:
                    try:
                        f(x)
                    except OSError:
                        continue
                try:
                    f()
                except TypeError:
                    return
            """
        self.assertEqual(found(src), [(4, "except-pass"), (8, "except-pass"), (13, "except-pass"), (17, "except-pass")])

    def test_handlers_that_record_or_require_the_exception_pass(self):
        src = """\
            def test_a():
                try:
                    f()
                except ValueError as e:
                    errors.append(e)
                try:
                    f()
                except ValueError:
                    pass
                else:
                    raise SystemExit("f did not fail")
                try:
                    f()
                except ValueError:
                    return None if x else 1
            """
        self.assertEqual(found(src), [])

    def test_contextlib_suppress_is_refused(self):
        src = """\
            import contextlib
            from contextlib import suppress
            def test_a():
                with contextlib.suppress(ValueError):
                    f()
                with suppress(KeyError):
                    f()
            """
        self.assertEqual(found(src), [(4, "suppress"), (6, "suppress")])


class TimingAssert(unittest.TestCase):
    def test_direct_and_named_differences_are_refused(self):
        src = """\
            import time
            from time import perf_counter as pc
            def test_a():
                t0 = time.perf_counter()
                f()
                assert time.perf_counter() - t0 < 1.0
                waited = time.monotonic() - start
                assert waited < 1.0, waited
                t1 = pc()
                t2 = pc()
                assert t2 - t1 < 5
                elapsed_ns = time.monotonic_ns() - s
                ratio = elapsed_ns / 1e9
                assert ratio < 2
            """
        self.assertEqual(found(src), [(6, "timing-assert"), (8, "timing-assert"), (11, "timing-assert"),
                                      (14, "timing-assert")])  # fmt: skip

    def test_a_helper_that_returns_elapsed_time_is_followed(self):
        src = """\
            import time
            def consume(stream):
                start = time.perf_counter()
                for _ in stream:
                    pass
                return time.perf_counter() - start
            def test_overlap():
                plain = consume(a)
                ahead = consume(b)
                assert ahead / plain < 0.8
            """
        self.assertEqual(found(src), [(10, "timing-assert")])

    def test_a_script_that_reports_elapsed_time_is_refused(self):
        src = '''\
            SCRIPT = """
            import time
            start = time.perf_counter()
            wait()
            print(f"interrupted after {time.perf_counter() - start:.2f}s")
            """
            def test_a():
                r = run_python(SCRIPT)
                assert "interrupted" in r.stdout
            '''
        self.assertEqual(found(src), [(5, "timing-assert")])

    def test_deadlines_and_other_differences_pass(self):
        src = """\
            import time
            def test_a():
                deadline = time.monotonic() + 30
                while not done():
                    assert time.monotonic() < deadline, "hung"
                assert a - b == 1
                assert len(xs) - 1 == 2
                print(time.perf_counter() - t0)  # a report, not an assertion
            """
        self.assertEqual(found(src), [])


class Allowances(unittest.TestCase):
    def test_a_reasoned_marker_allows_its_line_and_is_listed(self):
        src = """\
            def test_a():
                try:
                    os.close(fd)
                except OSError:  # lint: allow-except-pass the child may have closed it already
                    pass
            """
        got = lint_tests.check_source(textwrap.dedent(src))
        self.assertEqual(len(got), 1)
        self.assertEqual((got[0].line, got[0].rule), (4, "except-pass"))
        self.assertEqual(got[0].allowed_because, "the child may have closed it already")

    def test_a_marker_without_reason_or_for_another_rule_allows_nothing(self):
        src = """\
            import contextlib
            def test_a():
                try:
                    f()
                except OSError:  # lint: allow-except-pass
                    pass
                with contextlib.suppress(E):  # lint: allow-except-pass wrong rule for this line
                    f()
                x = 1  # lint: allow-everything because
            """
        self.assertEqual(
            found(src),
            [(5, "bad-allow"), (5, "except-pass"), (7, "suppress"), (9, "bad-allow")],
        )


class CommandLine(unittest.TestCase):
    def run_main(self, source: str) -> tuple[int, str]:
        with tempfile.TemporaryDirectory() as d:
            p = pathlib.Path(d) / "test_x.py"
            p.write_text(textwrap.dedent(source))
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                rc = lint_tests.main([str(p)])
        return rc, out.getvalue()

    def test_a_refusal_fails_and_names_file_and_line(self):
        rc, out = self.run_main("import pytest\nwith pytest.raises(Exception):\n    f()\n")
        self.assertEqual(rc, 1)
        self.assertIn("test_x.py:2: broad-raises", out)

    def test_allowances_pass_and_are_listed(self):
        rc, out = self.run_main("try:\n    f()\nexcept OSError:  # lint: allow-except-pass cleanup only\n    pass\n")
        self.assertEqual(rc, 0)
        self.assertIn("1 allowance(s)", out)
        self.assertIn("test_x.py:3: allowed except-pass: cleanup only", out)


if __name__ == "__main__":
    unittest.main()
