"""Unary operators (- + ~ not) on many types, negative literals, and user classes with __neg__ etc."""

import decimal
import fractions

import pytest
from tier1_check import check_t1

INF = float("inf")
NAN = float("nan")


def neg(x):
    return -x


def pos(x):
    return +x


def inv(x):
    return ~x


def not_(x):
    return not x


class Vector:
    def __init__(self, xs):
        self.xs = xs

    def __neg__(self):
        return Vector([-x for x in self.xs])

    def __pos__(self):
        return Vector(list(self.xs))

    def __invert__(self):
        return Vector(self.xs[::-1])


class NegRaises:
    def __neg__(self):
        raise ArithmeticError("cannot negate")

    def __pos__(self):
        return "positive"


class NoOps:
    pass


VALUES = [
    0,
    5,
    -5,
    2**63,
    -(2**63),
    2**64 + 1,
    True,
    False,
    0.0,
    -0.0,
    NAN,
    -INF,
    1 + 2j,
    -0j,
    "s",
    [1],
    None,
    fractions.Fraction(-1, 3),
    decimal.Decimal("-0"),
    Vector([1, -2.5]),
    NegRaises(),
    NoOps(),
]


@pytest.mark.parametrize("op", [neg, pos, inv], ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", VALUES, ids=lambda v: type(v).__name__ + ":" + repr(v)[:20])
def test_unary_matrix(op, x):
    check_t1(op, x)


@pytest.mark.parametrize("x", [0, 0.0, -0.0, NAN, "", "x", [], None, Vector([]), NoOps()], ids=repr)
def test_not(x):
    check_t1(not_, x)


def negative_literals():
    return (-0.0, 0.0, -0, -5, -2.5, -(1), --3, -1j, -(-(2**63)), -(2**63), +7, -+-1.5, -True, +True, ~True)


def test_negative_literals():
    check_t1(negative_literals, ())


def negate_min(x):
    y = -x
    return y, -y, type(y)


def negate_each(xs):
    out = []
    for x in xs:
        out.append(-x)
        out.append(abs(x))
    return out


def test_negate_int64_min():
    check_t1(negate_min, -(2**63), 2**63 - 1, -(2**64), -0.0)
    # from compiled code: -x and abs(x) of the smallest 64-bit int overflow
    check_t1(
        negate_each,
        list(range(-20, 20)) + [-(2**63)],
        [2**63 - 1] * 20 + [-(2**63), 5],
        [1.5] * 20 + [-0.0, 0.0],
        native=True,
    )


def alternate(n, x):
    for i in range(n):
        x = -x * 2
    return x


def sign_flips(xs):
    total = 0
    for x in xs:
        total = -total + +x - ~x
    return total


def invert_accumulate(n):
    x = 0
    for i in range(n):
        x = ~x ^ i
    return x


def test_unary_in_loops():
    check_t1(alternate, (70, 1), (70, -3), (10, 0.5), (10, -0.0), (3, "x"), native=True)
    check_t1(sign_flips, [], [1, 2, 3], [2**63, -(2**63), 1], [True, False], [1, 2.5], native=True)
    check_t1(invert_accumulate, 0, 1, 100, native=True)


def not_in_loop(xs):
    flags = []
    for x in xs:
        flags.append(not x)
        flags.append(not not x)
    return flags


def test_not_in_loop():
    check_t1(not_in_loop, [0, 1, "", "a", None, [], [0], 0.0, NAN], [], native=True)
