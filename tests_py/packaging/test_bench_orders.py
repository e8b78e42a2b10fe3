"""The benchmark's statistics. Its sampling orders are balanced: what one
implementation leaves behind (allocator state, caches) must fall on every
other one alike, or the table measures the order instead of the
implementations. Its ratios come with an interval, and equal work reads as a
tie rather than as whichever side the machine's noise fell on."""

import importlib.util
import itertools
import pathlib

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "bench.py"


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


def test_ratio_to_fastest_calls_equal_work_a_tie(bench):
    # the same spread for all three: the fastest of the peers is faster than
    # godevarrow by chance alone, and the interval must say so
    same = [1.0, 1.02, 0.98, 1.05, 0.97, 1.01, 0.99, 1.03, 0.96, 1.04, 1.0, 0.995]
    ratio, low, high, verdict = bench.ratio_to_fastest(same, [same[1:] + same[:1], same[::-1]])
    assert low <= 1 <= high
    assert verdict == "tie"
    assert ratio == pytest.approx(1.0, abs=0.02)


def test_ratio_to_fastest_separates_a_real_difference(bench):
    peer = [1.0, 1.02, 0.98, 1.05, 0.97, 1.01, 0.99, 1.03]
    faster = [0.8 * t for t in peer]
    slower = [1.2 * t for t in peer]
    assert bench.ratio_to_fastest(faster, [peer])[3] == "faster"
    assert bench.ratio_to_fastest(slower, [peer])[3] == "slower"
    ratio, low, high, _ = bench.ratio_to_fastest(faster, [peer, slower])
    assert low <= ratio <= high < 1
    assert ratio == pytest.approx(0.8)


def test_ratio_to_fastest_is_reproducible(bench):
    own = [1.0, 1.1, 0.9, 1.05, 0.95]
    peers = [[1.0, 1.02, 0.97, 1.01, 0.99]]
    assert bench.ratio_to_fastest(own, peers) == bench.ratio_to_fastest(own, peers)


def test_ratio_to_fastest_draws_whole_rounds(bench):
    # the machine's speed swings by 2x from round to round, alike for both
    # (sample_times takes the k-th sample of each in round k): drawn in whole
    # rounds, the swing stays out of the interval and a 0.8x difference shows;
    # drawn apart (unequal counts), it hides it
    speed = [1.0, 1.9, 1.2, 2.0, 1.1, 1.7, 1.0, 1.5, 1.3, 2.0, 1.1, 1.6, 1.4, 1.0, 1.8, 1.2]
    jitter = [1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.01, 0.99, 1.0, 1.01, 0.99]
    peer = [s * j for s, j in zip(speed, jitter)]
    own = [0.8 * s * j for s, j in zip(speed, jitter[::-1])]
    ratio, low, high, verdict = bench.ratio_to_fastest(own, [peer])
    assert verdict == "faster"
    assert low <= ratio <= high < 0.9
    assert bench.ratio_to_fastest(own, [peer + [peer[0]]])[3] == "tie"
