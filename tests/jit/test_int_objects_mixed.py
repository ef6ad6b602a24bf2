"""Ints past 64 bits meeting floats, true division and conversions, natively: float arithmetic with an int
object converts it as CPython does (PyLong_AsDouble: OverflowError past a float's range), comparisons of an int
object with a float are exact, int / int past 2**53 is CPython's correctly rounded division, int(), round(),
math.trunc/floor/ceil() of a float past 64 bits make the int object CPython makes, abs() of an int past 64 bits
(and of -2**63) is one, and float() and the math functions take int objects. Differential against CPython (values
with their type, exceptions with their message), native through jit.stats, references and memory counted."""

from __future__ import annotations

import math
import sys
import tracemalloc

import pytest
from helpers import check

import jit


def mixed_float(n, big, x):
    total = 0.0
    c = 0
    for i in range(n):
        v = big * (i + 1)
        total += v * x + x / 3
        if v > x:
            c += 1
        if x <= v:
            c += 2
        if v == x:
            c += 4
        total += float(v) - v / 7
    return total, c


def conversions(n, x):
    acc = 0
    for i in range(n):
        acc = (acc + int(x * (i + 1)) + math.floor(x * i) - round(x / (i + 1)) + math.ceil(-x) + math.trunc(x)) % (
            1 << 90
        )
    return acc


def absolute(n, a):
    s = 0
    for i in range(n):
        s += abs(a - i) % 1000
    return s


def divide(n, a, b):
    t = 0.0
    for i in range(n):
        t += (a + i) / (b - i)
    return t


def roots(n, big):
    t = 0.0
    for i in range(n):
        t += math.sqrt(big * (i + 1)) + math.log(big + i)
        if math.isnan(big + i) or math.isinf(big * i) or not math.isfinite(big - i):
            t = -t
    return t


def grows_then_float(n):
    x = 1
    t = 0.0
    for i in range(n):
        x = x * 3 + 1  # past 2**63 after 40 iterations, past a float's range after about 650
        t = x / 2.0
    return t


def back_and_forth(n, k):
    x = 1
    hits = 0
    for i in range(n):
        x = x * k if i % 30 < 15 else x // k  # crosses 2**63 both ways
        if x > 1e20:
            hits += 1
        if x / 3 < 2.5e18:
            hits += 10
    return x, hits


def floor_div_mod_negative(n, big):
    acc = 0
    for i in range(n):
        q = (big * (i - 20)) // -7
        m = (big * (i - 20)) % -7
        acc = (acc + q + m) % (1 << 70)
    return acc


BIG = 2**70 + 12345


@pytest.mark.parametrize(
    "big,x",
    [(2**70, 1.5), (2**70, 1e30), (3, 0.5), (10**400, 1.0), (-(2**80), -1e25), (2**64, float(2**64)), (2**53 + 1, 0.0)],
)
def test_int_objects_with_floats(big, x):
    # (10**400 * x raises OverflowError in the first iteration: nothing to run natively)
    check(mixed_float, (0, big, x), (2, big, x), (50, big, x), native=True if big != 10**400 else None)


@pytest.mark.parametrize("x", [1e20, 1.5, -3e19, 2.5e19, float("inf"), float("nan"), 1e300, -0.0])
def test_float_to_int_past_64_bits(x):
    # (inf and nan raise in the first iteration: nothing to run natively)
    check(conversions, (0, x), (3, x), (50, x), native=True if math.isfinite(x) else None)


@pytest.mark.parametrize("a", [2**70, -(2**70), -(2**63) + 20, -(2**63) - 20, 5])
def test_abs_past_64_bits(a):
    check(absolute, (50, a), native=True)


@pytest.mark.parametrize(
    "a,b",
    [(2**60, 3), (2**70, 2**65 + 17), (3, 7), (10**400, 3), (10**400, 10**399), (2**60, 40), (1, 2**70), (-(2**54), 9)],
)
def test_true_division_of_ints_past_2_53(a, b):
    # (10**400 / 3: OverflowError in the first iteration; a / (b - i) divides by zero where i == b)
    check(divide, (50, a, b), native=True if a != 10**400 or b != 3 else None)


@pytest.mark.parametrize("big", [2**70, 10**400, 3, -(2**70)])
def test_math_functions_of_int_objects(big):
    # (10**400: OverflowError, a negative int: ValueError, both in the first iteration)
    check(roots, (50, big), native=True if 0 < big < 2**1000 else None)


def test_an_int_growing_past_a_floats_range():
    check(grows_then_float, (30,), (100,), (700,), native=True)


@pytest.mark.parametrize("k", [2, 1000, 2**20])
def test_crossing_2_63_both_ways_with_floats(k):
    check(back_and_forth, (200, k), native=True)


@pytest.mark.parametrize("big", [2**70, -(2**70) - 3])
def test_negative_floor_division_and_remainder(big):
    check(floor_div_mod_negative, (60, big), native=True)


def warmed(func, *args):
    f = jit.jit(threshold=2, side_exit_threshold=2, min_native_iterations=0)(func)
    for _ in range(6):
        assert f(*args) == func(*args)
    return f


def test_the_uops_run_natively():
    """Each new uop is in a trace that ran natively (not only recorded)."""
    seen = set()
    for func, args in (
        (mixed_float, (60, BIG, 1.5)),
        (conversions, (60, 1e20)),
        (absolute, (60, BIG)),
        (divide, (60, 2**70, 2**65)),
    ):
        f = warmed(func, *args)
        assert jit.stats(f)["native_entries"] > 0
        seen |= {name for name in _uop_names(jit.dump(f, "uops"))}
    assert {
        "_CONVERT_INT_OBJECT_TO_FLOAT",
        "_COMPARE_OP_INT_OBJECT_FLOAT",
        "_BINARY_OP_TRUEDIV_INT_OBJECT",
        "_CALL_FLOAT_TO_INT_OBJECT",
        "_CALL_ABS_INT_OBJECT",
    } <= seen


def _uop_names(listing: str) -> set[str]:
    return {word for line in listing.splitlines() for word in line.split() if word.startswith("_")}


@pytest.mark.parametrize(
    "func,args",
    [
        (mixed_float, (BIG, 1.5)),
        (conversions, (1e20,)),
        (absolute, (BIG,)),
        (divide, (2**70, 2**65)),
        (roots, (BIG,)),
        (floor_div_mod_negative, (BIG,)),
    ],
)
def test_no_memory_is_leaked_over_100_000_iterations(func, args):
    f = warmed(func, 1000, *args)
    tracemalloc.start()
    try:
        f(100_000, *args)
        first = tracemalloc.get_traced_memory()[0]
        f(100_000, *args)
        second = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert second - first < 10_000
    assert jit.stats(f)["native_iterations"] >= 200_000


def test_an_int_object_passed_in_keeps_its_count():
    big = 2**70 + 99
    x = 12345.5
    for func, args in ((mixed_float, (300, big, x)), (absolute, (300, big)), (roots, (300, big))):
        f = warmed(func, *args)
        before = sys.getrefcount(big), sys.getrefcount(x)
        for _ in range(20):
            assert f(*args) == func(*args)
        assert (sys.getrefcount(big), sys.getrefcount(x)) == before
        assert jit.stats(f)["native_entries"] > 0


def test_overflow_error_at_the_users_line():
    """A float op of an int too large for a float leaves natively; the interpreter raises CPython's
    OverflowError there."""
    f = warmed(grows_then_float, 100)
    with pytest.raises(OverflowError) as jitted:
        f(2000)
    with pytest.raises(OverflowError) as plain:
        grows_then_float(2000)
    assert str(jitted.value) == str(plain.value)
    assert jitted.traceback[-1].lineno == plain.traceback[-1].lineno
    assert math.isfinite(f(600))


def stores(n, big):
    data = [0] * 8
    out = []
    for i in range(n):
        v = big * (i + 1)
        data[i % 8] = v  # the int object itself goes into the list
        out.append(v * 3)
        data[(i + 3) % 8] = i
    return data, out


def built(n, big):
    t = 0
    for i in range(n):
        xs = [big * j for j in range(4)]  # (a comprehension's LIST_APPEND)
        t = (t + xs[3] + xs[1] // 3) % (1 << 80)
    return t


@pytest.mark.parametrize("big", [2**70, 3, -(2**64), 2**63 - 1])
def test_int_objects_stored_into_lists(big):
    check(stores, (0, big), (3, big), (50, big), native=True)
    check(built, (0, big), (3, big), (50, big), native=True)


def test_int_objects_in_lists_have_only_the_lists_reference():
    f = warmed(stores, 50, BIG)
    data, out = f(50, BIG)
    assert (data, out) == stores(50, BIG)
    assert jit.stats(f)["native_entries"] > 0
    # (the list's reference, the comprehension's variable and getrefcount's argument)
    assert {sys.getrefcount(item) for item in out} == {3}
    assert {sys.getrefcount(item) for item in data if abs(item) > 2**63} == {3}
