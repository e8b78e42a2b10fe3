"""The adversarial corpus of hostile_cases.py: every broken or hostile input gives a
clean Python exception naming the problem, the producer's release callback
runs exactly once per struct, nothing crashes (each case in its own process)
and godevarrow holds nothing afterwards."""

from __future__ import annotations

import builtins
import os
import re

import hostile_cases
import pytest
from conftest import run_hostile_case

HERE = os.path.dirname(os.path.abspath(__file__))


def params():
    for name in hostile_cases.CASES:
        marks = [pytest.mark.fakecuda] if name in hostile_cases.NEEDS_FAKE_CUDA else []
        yield pytest.param(name, id=name, marks=marks)


def test_the_corpus_is_large_enough():
    # the hostile cases here and the follow-up cases of test_operations_on_accepted_inputs.py
    assert len(hostile_cases.CASES) + len(hostile_cases.FOLLOWUPS) >= 120, (
        len(hostile_cases.CASES),
        len(hostile_cases.FOLLOWUPS),
    )


@pytest.mark.parametrize("name", list(params()))
def test_hostile_input(name):
    builtin, match = hostile_cases.EXPECT[name]
    result = run_hostile_case(name, timeout=60)
    assert result["exception"] is not None, "no exception was raised"
    assert builtin in result["bases"], f"{result['exception']} is not a {builtin}:\n{result.get('traceback')}"
    assert issubclass(getattr(builtins, builtin), BaseException)
    assert "GodevarrowError" in result["bases"], f"{result['exception']} is not a godevarrow error"
    assert re.search(match, result["message"], re.IGNORECASE), f"message {result['message']!r} does not match {match!r}"
    assert result["releases"] or name in hostile_cases.NO_STRUCT, "the case handed over no struct"
    for struct_, count in result["releases"].items():
        assert count == 1, f"the {struct_} was released {count} times:\n{result.get('traceback')}"
    live = {k: v for k, v in result["live"].items() if v}
    assert not live, f"godevarrow still holds {live}"
    assert result["health"] is None, f"the library is not healthy after the case: {result['health']}"
