"""A loop's two ways merged into one iteration (``jit.optimizer.merge``): the function of a side trace joined with
its loop (``codegen.joined``) gets a vectorized fast copy of the loop that computes both ways and chooses with
``_SELECT``. Results stay CPython's: sums that leave 64 bits on either way (the conditions fail at the entry, or
in a later call), a product that would overflow only on the way not taken, negative and other steps, floats
(-0.0, nan, inf), floor division and modulo of negatives, ZeroDivisionError on the way taken, and loops that do
not merge (a guard left on one way, a store)."""

import math

import pytest
from helpers import TEST_OPTIONS, check

import jit as jit_module
from jit import jit

INT64_MAX = 2**63 - 1
N = 1000


def traces(f) -> list[dict]:
    return [trace for tree in jit_module.stats(f)["trees"] for trace in tree["traces"]]


def merged_runs(f) -> int:
    """How often a side trace's merged fast copy ran."""
    return sum(t["fast_runs"] for t in traces(f) if t["kind"] == "side" and t["vectorized"])


def branchy(start, n, k):
    total = start
    for j in range(n):
        if j & 1:
            total += j * k & 255
        else:
            total -= j & 15
    return total


def stepped(start, lo, hi, step):
    total = start
    for j in range(lo, hi, step):
        if j & 1:
            total += j & 255
        else:
            total -= (j ^ 5) & 15
    return total


def nested_branchy(n):
    total = 0
    for i in range(n):
        for j in range(n):
            if (i + j) & 1:
                total += i * j & 255
            else:
                total -= (i + j) & 15
    return total


def floats(x, y, n):
    acc = 0.0
    for j in range(n):
        if j & 1:
            acc += x
        else:
            acc -= y
    return acc


def floor_ops(n, d):
    total = 0
    for j in range(n):
        if j & 1:
            total += (j - 500) // d
        else:
            total -= (j - 500) % d
    return total


def divides_on_one_way(n, at):
    total = 0
    for j in range(n):
        if j & 1:
            total += 1000 // (j - at)
        else:
            total -= j & 15
    return total


def stores_on_one_way(out, n):
    total = 0
    for j in range(n):
        if j & 1:
            out[j & 7] = j
        else:
            total -= j & 15
    return total


def test_a_branchy_loop_runs_merged_and_vectorized():
    jitted = check(branchy, (0, N, 3), (5, 3 * N, 7), (-(10**12), N, 1), native=True)
    for f in (jitted, jitted.cpython_baseline):
        assert merged_runs(f) > 0
        (side,) = [t for t in traces(f) if t["kind"] == "side"]
        assert side["joined"]


def test_a_nested_branchy_loop():
    jitted = check(nested_branchy, 30, 100, native=True)
    assert merged_runs(jitted) > 0


@pytest.mark.parametrize(
    "start",
    [
        INT64_MAX - 255 * N // 2,  # (the side's sum reaches about the limit: the conditions fail at the entry)
        INT64_MAX - 128 * N,  # it passes 2**63 on the side's way: an int past 64 bits
        -INT64_MAX + 10,  # the root's way passes -2**63
        INT64_MAX + 5,  # an int past 64 bits from the start
        -(2**64),
    ],
)
def test_sums_near_the_limits(start):
    check(branchy, (0, N, 1), (start, N, 1), native=True)


def test_a_sum_that_leaves_64_bits_in_a_later_call():
    f = jit(**TEST_OPTIONS)(branchy)
    total = 0
    for _ in range(5):
        assert f(0, N, 1) == branchy(0, N, 1)
    for start in (INT64_MAX - 10 * N, INT64_MAX - 100, INT64_MAX):
        total = f(start, N, 1)
        assert total == branchy(start, N, 1) and type(total) is int


def test_a_product_that_overflows_only_on_the_way_not_taken():
    # k * j overflows i64 for every j > 1: the conditions fail (the interval holds for both ways), the checked
    # loop runs each way as recorded, and the side's product is a Python int past 64 bits
    check(branchy, (0, N, 3), (0, N, 2**62), (0, N, -(2**62)), (0, 2, 2**62), native=True)


@pytest.mark.parametrize(
    "lo, hi, step", [(0, N, 1), (N, -N, -3), (0, 5 * N, 7), (N, 0, -1), (0, 0, 1), (3, 4, 1), (0, 33, 1), (1, 68, 2)]
)
def test_steps_and_trip_counts(lo, hi, step):
    warm = (0, 0, 5 * N, 1) if step > 0 else (0, 5 * N, 0, -1)
    check(stepped, warm, (0, lo, hi, step), (-(2**62), lo, hi, step), native=True)


def test_range_bounds_near_the_limits():
    check(stepped, (0, INT64_MAX - 3 * N, INT64_MAX, 3), (0, -INT64_MAX + 2 * N, -INT64_MAX - 1, -2), native=True)


@pytest.mark.parametrize(
    "x, y",
    [(0.1, 0.3), (-0.0, 0.0), (0.0, -0.0), (math.nan, 1.0), (math.inf, math.inf), (1e308, -1e308), (-0.0, -0.0)],
)
def test_float_ways(x, y):
    jitted = check(floats, (0.5, 0.25, N), (x, y, N), (x, y, 1), native=True)
    assert repr(jitted(x, y, N)) == repr(floats(x, y, N))


@pytest.mark.parametrize("d", [7, -7, 1, 3])
def test_floor_division_and_modulo_of_negatives(d):
    check(floor_ops, (N, 7), (N, d), native=True)


def test_zero_division_on_the_way_taken():
    check(divides_on_one_way, (N, -1), (N, 501), (N, 500), native=True)


def test_a_loop_that_stores_on_one_way_is_not_merged():
    jitted = check(stores_on_one_way, ([0] * 8, N), native=True)
    assert merged_runs(jitted) == 0


def test_merging_leaves_the_loop_running_natively():
    f = jit(**TEST_OPTIONS)(nested_branchy)
    for _ in range(3):
        assert f(60) == nested_branchy(60)
    stats = jit_module.stats(f)
    assert stats["native_iterations"] >= 2 * 60 * 60
    assert merged_runs(f) >= 2 * 50  # (each call of the inner tree, after its first way back to the side trace)
