"""x ** 0.5 is the C library's pow(x, 0.5), as CPython computes it, not sqrt(x): they differ where the exact
root is near the midpoint of two doubles (glibc's pow is off by up to 0.54 ULP). With glibc, native code takes
sqrt(x) only where the exact residual proves pow must return the same double, and calls pow elsewhere
(``codegen.lower.floats._square_root_as_pow``). Differential against CPython, results compared by repr."""

from __future__ import annotations

import math
import random

import pytest
from helpers import check

from codegen.lower import floats

# doubles whose exact root lies near a midpoint: (m + 1/2)**2 rounded, scaled by an even power of two
_rng = random.Random(5)
NEAR_MIDPOINTS = [
    float(((_rng.getrandbits(52) | 1 << 52) + 0.5) ** 2) * 4.0 ** _rng.randint(-80, -45) for _ in range(400)
]
# (found by the same construction: glibc's pow(x, 0.5) and sqrt(x) differ on these)
POW_IS_NOT_SQRT = [9.192945712090271, 1.1210208235814872e-15, 2.8203108359795396e-07, 27.921935411351498]


def roots(xs):
    out = []
    for x in xs:
        out.append(x**0.5)
    return out


def hypot_sum(n):
    total = 0.0
    for i in range(n):
        for j in range(n):
            total += (i * 0.5 * i * 0.5 + j * 0.25 * j * 0.25) ** 0.5
    return total


def test_the_cases_where_pow_and_sqrt_differ_exist_here():
    """(What makes the rewrite pow -> sqrt wrong: on this C library, if it is glibc.)"""
    if floats.GLIBC_POW:
        assert any(x**0.5 != math.sqrt(x) for x in POW_IS_NOT_SQRT)


def test_roots_near_midpoints_are_pows():
    check(roots, (NEAR_MIDPOINTS,), (POW_IS_NOT_SQRT * 10,), native=True)


def test_roots_of_random_doubles():
    rng = random.Random(11)
    xs = [rng.uniform(0, 1e6) for _ in range(2000)]
    xs += [math.ldexp(rng.random() + 0.5, rng.randint(-1000, 1000)) for _ in range(2000)]
    check(roots, (xs,), native=True)


@pytest.mark.parametrize(
    "special",
    [0.0, -0.0, 1.0, 4.0, 2.0, 5e-324, 2.2250738585072014e-308, 1e-300, 1.7976931348623157e308, 0.25],
)
def test_special_values(special):
    check(roots, ([2.0, 3.0] * 10 + [special] + [7.0] * 10,), native=True)


@pytest.mark.parametrize("special", [float("inf"), float("nan"), -1.0, -0.5, -float("inf")])
def test_values_that_leave(special):
    """inf, nan and a negative base (a complex result) leave to the interpreter, which computes them."""
    check(roots, ([2.0, 3.0] * 10 + [special] + [7.0] * 10,), native=True)


def test_a_nest_of_roots():
    check(hypot_sum, (60,), native=True)
