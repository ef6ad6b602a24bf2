"""Floating-point events in a chain of NumPy float operations with array reads and writes between them (the
merged bounds guards leave no other exit among them): an event at the first, a middle or the last operation of
an expression, two events in one iteration, an underflow, and a store right after. The warnings (their order and
count), the FloatingPointError under np.errstate(all="raise"), the result and the array written are CPython's;
the loops run natively (jit.stats)."""

from __future__ import annotations

import warnings

import pytest
from helpers import define

import jit as jit_module
from jit import jit

np = pytest.importorskip("numpy")

SOURCE = """
def run(a, b, c, d, out):
    s = 0.0
    for i in range(len(a)):
        x = a[i] * b[i] * c[i] + d[i] - a[i]
        y = c[i] / d[i]
        out[i] = x + y
        s += x * 0.5
    return s
"""

N = 120


def inputs(events):
    a = np.linspace(0.5, 2.0, N)
    b = np.linspace(1.0, 3.0, N)
    c = np.linspace(-1.0, 1.0, N) + 3.0
    d = np.linspace(2.0, 4.0, N)
    for name, index, value in events:
        {"a": a, "b": b, "c": c, "d": d}[name][index] = value
    return a, b, c, d, np.zeros(N)


def outcome(f, events, state):
    args = inputs(events)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with np.errstate(**state):
            try:
                result = repr(f(*args))
            except FloatingPointError as exc:
                result = f"FloatingPointError: {exc}"
    return result, [str(w.message) for w in seen], args[4].tobytes()


CASES = {
    "first": [("a", 90, 1e300), ("b", 90, 1e300)],  # a * b overflows
    "middle": [("a", 60, 1e200), ("b", 60, 1e100), ("c", 60, 1e10)],  # (a * b) * c overflows
    "last": [("a", 70, np.inf)],  # ... - a[i] is invalid (inf - inf)
    "add": [("d", 50, np.finfo(np.float64).max), ("a", 50, 1e154), ("b", 50, 1e154), ("c", 50, 10.0)],  # + d
    "two": [("a", 95, 1e300), ("b", 95, 1e300), ("d", 95, 0.0)],  # overflow, then divide by zero
    "underflow": [("a", 85, 1e-300), ("b", 85, 1e-300)],  # reported only if asked
    # (the checks of an expression's operations are one guard, on the sum of their NaN-or-zero marks)
    "denormal": [("a", 20, 1e-160), ("b", 20, 1e-160)],  # a * b is a denormal: an underflow
    "zero_times_tiny": [("a", 10, 0.0), ("b", 10, 1e-300)],  # an exact zero: no event
    "divide_by_zero": [("d", 40, 0.0)],  # c / d
    "zero_by_zero": [("c", 15, 0.0), ("d", 15, 0.0)],  # invalid, not a division by zero
    "nan_operand": [("a", 30, np.nan)],  # NaN in, NaN out: NumPy reports nothing
    "tiny_quotient": [("c", 45, 1e-300), ("d", 45, 1e10)],  # c / d underflows
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize(
    "state", [{}, {"all": "raise"}, {"all": "ignore"}, {"under": "warn"}], ids=["default", "raise", "ignore", "under"]
)
def test_events_in_a_run_of_float_operations(case, state):
    plain = define(SOURCE, "run", {})
    f = jit(threshold=2)(plain)
    f(*inputs([]))
    assert outcome(f, CASES[case], state) == outcome(plain, CASES[case], state)
    stats = jit_module.stats(f)
    assert stats["native_entries"] >= 2 and not stats["aborts"]
