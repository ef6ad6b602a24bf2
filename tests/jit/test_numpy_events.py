"""Floating-point events in a chain of NumPy float operations with array reads and writes between them (the
merged bounds guards leave no other exit among them): an event at the first, a middle or the last operation of
an expression, two events in one iteration, an underflow, and a store right after. The warnings (their order and
count), the FloatingPointError under np.errstate(all="raise"), the result and the array written are CPython's;
the loops run natively (jit.stats)."""

from __future__ import annotations

import platform
import warnings

import pytest
from helpers import define, numpy_outcome

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
    return (*numpy_outcome(f, args, state), args[4].tobytes())


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


# An operation's result that is not finite makes the result of any + - * taking it not finite too: its own check
# is left to theirs where they come before the next guard or store (codegen.lower.numpy_values:
# _finite_checked_later). Not where a division takes it (1 / inf is 0), nor a comparison, nor a store before.
ESCAPES = """
def escapes(a, b, out):
    s = 0.0
    n = 0
    for i in range(len(a)):
        x = a[i] * b[i]
        y = 1.0 / x
        z = a[i] + b[i]
        if z > 1e308:
            n += 1
        w = a[i] - b[i]
        out[i] = w
        s += y + w * 0.5
    return s, n
"""

ESCAPE_CASES = {
    "overflow_then_divided": [("a", 30, 1e300), ("b", 30, 1e300)],  # x is inf, 1 / x is 0: x's own check
    "overflow_then_compared": [("a", 40, np.finfo(np.float64).max), ("b", 40, np.finfo(np.float64).max)],
    "invalid_then_stored": [("a", 50, np.inf), ("b", 50, np.inf)],  # a - b is NaN, stored before any + - *
}


@pytest.mark.parametrize("case", sorted(ESCAPE_CASES))
@pytest.mark.parametrize("state", [{}, {"all": "raise"}, {"all": "ignore"}], ids=["default", "raise", "ignore"])
def test_events_of_results_that_escape_their_chain(case, state):
    plain = define(ESCAPES, "escapes", {})
    f = jit(threshold=2)(plain)
    f(*inputs([])[:2], np.zeros(N))
    events = ESCAPE_CASES[case]

    def run(g):
        a, b, _, _, out = inputs(events)
        return (*numpy_outcome(g, (a, b, out), state), out.tobytes())

    assert run(f) == run(plain)
    assert jit_module.stats(f)["native_iterations"] > 0


CHAIN = """
def chain(a, b, c):
    s = 0.0
    for i in range(len(a)):
        s += a[i] + b[i] - c[i]
    return s
"""


def test_a_chain_of_operations_tests_the_finiteness_of_its_last_result_only():
    """(a + b) - c, then s + that: the finiteness marks (``result * 0``) of the first two are left to the last's,
    one in the trace's function, where there were three; none in its fast copy, whose runs the processor's
    status flags check (codegen.float_status, on x86-64); and an overflow in the first operation is still
    reported there."""
    import re

    plain = define(CHAIN, "chain", {})
    f = jit(threshold=2)(plain)
    a = np.linspace(0.0, 1.0, N)
    assert f(a, a, a) == plain(a, a, a)
    assert f(a, a, a) == plain(a, a, a)
    functions = jit_module.dump(f, "ir").split("define ")[1:]
    counted = [
        (
            len(re.findall(r"fmul double [^,]+,\s+0x0\b", text)),
            0 if "llvm.x86.sse.stmxcsr" in text else len(re.findall(r"= fsub double", text)),
        )
        for text in functions
    ]
    assert any(subtractions for _, subtractions in counted)
    assert all(marks == subtractions for marks, subtractions in counted), counted
    if platform.machine() in ("x86_64", "AMD64"):
        assert any("llvm.x86.sse.stmxcsr" in text for text in functions)
    big = a.copy()
    big[60] = np.finfo(np.float64).max
    for state in ({}, {"over": "raise"}):
        with warnings.catch_warnings(record=True) as seen, np.errstate(**state):
            warnings.simplefilter("always")
            try:
                got = repr(f(big, big, a))
            except FloatingPointError as exc:
                got = str(exc)
        with warnings.catch_warnings(record=True) as expected, np.errstate(**state):
            warnings.simplefilter("always")
            try:
                want = repr(plain(big, big, a))
            except FloatingPointError as exc:
                want = str(exc)
        assert (got, [str(w.message) for w in seen]) == (want, [str(w.message) for w in expected])
