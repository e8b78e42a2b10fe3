"""A user's Go function that gets its references wrong (tests_py/gofuncs/goext/gotests/
mistakes.go) fails with GoError naming it, never with an InternalError, and
the library keeps working. Runs in the build test_go_functions.py makes, as
test_in_build.py does."""

from __future__ import annotations

import godevarrow as gda
import gofuncs_under_test as fx
import pyarrow as pa
import pytest
from conftest import values_address

BATCH = pa.record_batch({"n": pa.array([1, 5, None], pa.int64()), "s": ["a", "b", "c"]})


def healthy() -> None:
    """A round trip through the library, and the counters back at rest."""
    assert pa.record_batch(gda.record_batch(BATCH)).equals(BATCH)
    assert fx.total(BATCH, "n") == 6


def test_an_argument_returned_without_retain_is_the_callers(leak_check):
    g = gda.record_batch(BATCH)
    for _ in range(3):
        r = fx.return_argument(g)
        assert pa.record_batch(r).equals(BATCH)
        assert values_address(pa.record_batch(r).column(0)) == values_address(BATCH.column(0))
        del r
    assert pa.record_batch(g).equals(BATCH)
    t = gda.table(BATCH)
    for _ in range(3):
        assert fx.return_table_argument(t).to_pyarrow().equals(t.to_pyarrow())
    del g, t
    healthy()


@pytest.mark.parametrize(
    "name, message",
    [
        ("release_argument", "release_argument: released argument 1 (batch), which it does not own"),
        ("slice_of_released", "slice_of_released: released argument 1 (batch), which it does not own"),
        ("return_released", "return_released: returned a *cdevice.Array that was already released"),
    ],
)
def test_a_reference_mistake_is_the_functions_error(name, message, leak_check):
    g = gda.record_batch(BATCH)
    for _ in range(3):  # the library is not poisoned: the same error each time
        with pytest.raises(gda.GoError) as e:
            getattr(fx, name)(g)
        assert message in str(e.value)
    assert pa.record_batch(g).equals(BATCH)
    del g
    healthy()


def test_a_nil_result_is_the_functions_error(leak_check):
    for _ in range(2):
        with pytest.raises(gda.GoError, match="nil_array: returned a nil"):
            fx.nil_array()
    healthy()
