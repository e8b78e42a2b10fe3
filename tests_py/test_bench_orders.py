"""The benchmark's sampling orders are balanced: what one implementation
leaves behind (allocator state, caches) must fall on every other one alike,
or the table measures the order instead of the implementations."""

import importlib.util
import itertools
import pathlib

import pytest

BENCH = pathlib.Path(__file__).resolve().parent.parent / "benchmarks" / "bench.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("godevarrow_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("n", range(1, 8))
def test_every_item_follows_every_other_equally_often(bench, n):
    orders = bench.balanced_orders(n)
    assert len(orders) == (n if n % 2 == 0 else 2 * n)
    for order in orders:
        assert sorted(order) == list(range(n))
    follows = {pair: 0 for pair in itertools.permutations(range(n), 2)}
    for order in orders:
        for before, after in zip(order, order[1:]):
            follows[before, after] += 1
    assert len(set(follows.values())) <= 1, follows


def test_every_position_is_taken_equally_often(bench):
    orders = bench.balanced_orders(4)
    for position in range(4):
        assert sorted(order[position] for order in orders) == [0, 1, 2, 3]


def test_median_times_samples_each_function_in_every_round(bench):
    calls: list[str] = []
    fns = {name: (lambda name=name: calls.append(name)) for name in "abcd"}
    timed = bench.median_times(fns, repeat=5, min_seconds=0)
    assert set(timed) == set("abcd")
    # per round an untimed call and a timed one, 5 rounds rounded up to
    # whole sets of 4 orders; plus the warm-up that sizes the loops
    counts = {name: calls.count(name) for name in "abcd"}
    assert len(set(counts.values())) == 1, counts
    assert counts["a"] >= 2 * 8
