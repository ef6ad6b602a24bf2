"""Unary operators with no uop for their operand (an object's ``__neg__``, ``__pos__``, ``__invert__``, ``~`` of a
bool, a Fraction or Decimal) go through CPython's own operator in native code (``_UNARY_OP_GENERIC``, a
barrier) instead of aborting the recording (OPERAND_KIND, INVERT). Checked against CPython and through
jit.stats that the loop ran natively without aborting."""

import decimal
import fractions

from helpers import check, warm_call

import jit as jit_module
from jit import jit


class Vec:
    def __init__(self, x):
        self.x = x

    def __neg__(self):
        return Vec(-self.x)

    def __pos__(self):
        return Vec(self.x + 1)

    def __invert__(self):
        return Vec(~self.x)


class Fragile:
    """Its negation raises once its value reaches a limit."""

    def __init__(self, x):
        self.x = x

    def __neg__(self):
        if self.x >= 40:
            raise ArithmeticError(f"cannot negate {self.x}")
        return -self.x


def _no_aborts(jitted):
    for f in (jitted, jitted.cpython_baseline):
        stats = jit_module.stats(f)
        assert not stats["aborts_by_code"], stats["aborts"]
        assert stats["native_entries"] > 0 and stats["native_iterations"] > 0


def objects_negated(n):
    total = 0
    v = Vec(3)
    for i in range(n):
        total += (-v).x + (+v).x + (~v).x + i
    return total


def bools_inverted(n):
    total = 0
    for i in range(n):
        total += ~(i % 3 == 0) + ~True * i
    return total


def fractions_negated(n):
    total = fractions.Fraction(0)
    for i in range(n):
        total += -fractions.Fraction(i, 7) + +fractions.Fraction(1, i + 1)
    return total


def decimals_negated(n):
    total = decimal.Decimal(0)
    for i in range(n):
        total += -decimal.Decimal(i) / 4
    return total


def raises_midway(n):
    total = 0
    for i in range(n):
        total += -Fragile(i)
    return total


def type_changes_midway(n):
    total = 0
    x = True
    for i in range(n):
        if i == n - 3:
            x = 1.5  # (~ of a float: TypeError, at this line, from inside the compiled loop)
        total += ~x
    return total


def test_objects_with_unary_methods():
    _no_aborts(check(objects_negated, 0, 5, 60, native=True))


def test_invert_of_bools():
    _no_aborts(check(bools_inverted, 0, 7, 60, native=True))


def test_fractions_and_decimals():
    _no_aborts(check(fractions_negated, 3, 50, native=True))
    _no_aborts(check(decimals_negated, 3, 50, native=True))


def test_a_unary_method_raising_in_the_loop():
    check(raises_midway, 10, 39, 41, 80, native=True)


def test_an_operand_becoming_unsupported_in_the_loop():
    check(type_changes_midway, 5, 30, 200, native=True)


def test_warm_call_stays_native():
    jitted = jit(threshold=2, side_exit_threshold=2)(objects_negated)
    for _ in range(3):
        jitted(100)
    result, entries, exits = warm_call(jitted, 100)
    assert result == objects_negated(100)
    assert entries == 1 and exits <= 1
    assert "_UNARY_OP_GENERIC" in jit_module.dump(jitted, "uops")
