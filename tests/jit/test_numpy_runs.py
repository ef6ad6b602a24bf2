"""Floating-point events in the fast copy of a loop that only reads arrays (a dot product, a sum of squares):
its run's checks are one flag tested at the run's end, and where it is set the trace's function redoes the
run from its start checking each iteration (codegen.function: rollback). Events at the first, a middle and
the last iteration of a run, in an inner loop run many times, under every np.errstate: the warnings (order,
count, message), the FloatingPointError, the result are CPython's, and the fast copy ran (jit.stats)."""

from __future__ import annotations

import pytest
from helpers import define, numpy_outcome

import jit as jit_module
from jit import jit

np = pytest.importorskip("numpy")

SOURCE = """
def dot(a, b):
    s = 0.0
    for i in range(len(a)):
        s += a[i] * b[i]
    return s


def squares(a, b):
    s = 0.0
    for x in a:
        s += x * x - 1.0
    return s


def rows(m, v):
    total = 0.0
    for r in range(m.shape[0]):
        s = 0.0
        for k in range(m.shape[1]):
            s += m[r, k] * v[k] - 1.0
        total += s
    return total
"""

N = 3000


def vectors(events):
    a = np.linspace(0.5, 2.0, N)
    b = np.linspace(-1.0, 1.0, N)
    for name, index, value in events:
        {"a": a, "b": b}[name][index] = value
    return a, b


def outcome(f, args, state):
    return numpy_outcome(f, args, state)


CASES = {
    "none": [],
    "overflow_early": [("a", 40, 1e300), ("b", 40, 1e300)],
    "overflow_late": [("a", N - 1, 1e300), ("b", N - 1, -1e300)],
    "invalid": [("a", 1500, np.inf), ("b", 1500, 0.0)],  # inf * 0
    "sum_overflows": [("a", 700, 1e308), ("b", 700, 1.5), ("a", 701, 1e308), ("b", 701, 1.5)],
    "underflow": [("a", 2200, 1e-200), ("b", 2200, 1e-200)],
    "two": [("a", 100, 1e-300), ("b", 100, 1e-300), ("a", 2900, np.inf), ("b", 2900, 0.0)],
    "nan_in": [("a", 1200, np.nan)],  # no event: NaN in, NaN out
}
STATES = [{}, {"all": "raise"}, {"all": "ignore"}, {"under": "warn"}]


def fast_runs(jitted):
    return sum(trace["fast_runs"] for tree in jit_module.stats(jitted)["trees"] for trace in tree["traces"])


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("state", STATES, ids=["default", "raise", "ignore", "under"])
def test_events_in_a_read_only_loop(case, state):
    plain = define(SOURCE, "dot", {})
    f = jit(threshold=2)(plain)
    f(*vectors([]))
    assert fast_runs(f) > 0
    assert outcome(f, vectors(CASES[case]), state) == outcome(plain, vectors(CASES[case]), state)
    stats = jit_module.stats(f)
    assert stats["native_entries"] >= 2 and not stats["aborts"]


@pytest.mark.parametrize("state", STATES, ids=["default", "raise", "ignore", "under"])
def test_events_in_an_inner_loop_run_many_times(state):
    plain = define(SOURCE, "rows", {})
    f = jit(threshold=2)(plain)
    m = np.linspace(-2.0, 2.0, 40 * 200).reshape(40, 200)
    v = np.linspace(1.0, 3.0, 200)
    f(m, v)
    assert fast_runs(f) > 0
    for row, col, value in ((3, 150, 1e308), (20, 60, np.inf), (39, 199, 1e-320), (0, 0, 1e308)):
        bad = m.copy()
        bad[row, col] = value
        assert outcome(f, (bad, v), state) == outcome(plain, (bad, v), state), (row, col, value)
    assert outcome(f, (m, v), state) == outcome(plain, (m, v), state)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("state", STATES, ids=["default", "raise", "ignore", "under"])
def test_events_in_a_loop_over_an_array(case, state):
    """`for x in a`: its index counts up to the array's length as a range's counter (Trace.range_counter), so the
    loop has a counted fast copy, checked once per run, as `for i in range(len(a))` has."""
    plain = define(SOURCE, "squares", {})
    f = jit(threshold=2)(plain)
    f(*vectors([]))
    assert fast_runs(f) > 0
    assert outcome(f, vectors(CASES[case]), state) == outcome(plain, vectors(CASES[case]), state)
    for n in (0, 1, 31, 32, 33):  # (short arrays: the checked copy, the fast copy's edge)
        a = np.linspace(0.5, 2.0, n)
        assert repr(f(a, a)) == repr(plain(a, a))
