"""Floating-point events in the fast copy of a loop that stores into float64 or int64 arrays (a stencil, an
elementwise product): its run's checks are one flag tested at the run's end, each store logs the element's
old value first, and where the flag is set the log is undone (last store first) and the trace's function
redoes the run from its start checking each iteration (codegen.function: _undoable_stores). Events at the
first, a middle and the last iteration of a run and across runs, with arrays that alias each other (the same
array twice, an in-place recurrence that reads what the run stored), under every np.errstate: the warnings
(order, count, message), the FloatingPointError, the returned value and every element of every array after
the call (by repr, also after the exception) are CPython's, and the fast copy ran (jit.stats)."""

from __future__ import annotations

import pytest
from helpers import define, numpy_outcome

import jit as jit_module
from jit import jit

np = pytest.importorskip("numpy")

SOURCE = """
def product(a, b, out):
    for i in range(len(a)):
        out[i] = a[i] * b[i] - 0.5
    return out[len(out) - 1]


def stencil(a, out):
    for i in range(1, a.shape[0] - 1):
        for j in range(1, a.shape[1] - 1):
            out[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]) - a[i, j]
    return out[1, 1]


def recurrence(a, c):
    for i in range(1, len(a)):
        a[i] = a[i - 1] * c + a[i]
    return a[len(a) - 1]


def running(a, b, acc):
    for i in range(len(a)):
        acc[1] = acc[1] + a[i] * b[i]
    return acc[1]


def roots(a, b, out):
    for i in range(len(a)):
        out[i] = np.sqrt(a[i] * b[i])
    return out[len(out) - 1]


def mixed_stores(a, b, back, out):
    n = len(a)
    for i in range(n):
        back[n - 1 - i] = a[i]
        out[i] = a[i] / b[i]
    return i


def two_stores(a, b, copy, out, ints):
    for i in range(len(a)):
        copy[i] = a[i]
        ints[i] = i
        out[i] = a[i] / b[i]
    return i
"""

N = 1000  # (runs of at most 256 iterations: events in the first, a middle and the last run, at their edges)
STATES = [{}, {"all": "raise"}, {"all": "ignore"}, {"under": "warn", "divide": "raise"}]
STATE_IDS = ["default", "raise", "ignore", "mixed"]


def outcome(f, make, state):
    """What calling f on fresh arrays did: its result or exception, the warnings, and every array after."""
    args = make()
    result = numpy_outcome(f, args, state)
    return (*result, [(x.dtype.str, x.tobytes()) for x in args if isinstance(x, np.ndarray)])


def fast_runs(jitted):
    return sum(trace["fast_runs"] for tree in jit_module.stats(jitted)["trees"] for trace in tree["traces"])


def vectorized(jitted):
    return any(trace.get("vectorized") for tree in jit_module.stats(jitted)["trees"] for trace in tree["traces"])


def compiled(name, *warm):
    plain = define(SOURCE, name, {"np": np})
    f = jit(threshold=2)(plain)
    f(*warm)
    assert fast_runs(f) > 0
    return plain, f


def vectors(events):
    a = np.linspace(0.5, 2.0, N)
    b = np.linspace(-1.0, 1.0, N)
    for name, index, value in events:
        {"a": a, "b": b}[name][index] = value
    return a, b


PRODUCT_CASES = {
    "none": [],
    "first": [("a", 0, 1e300), ("b", 0, 1e300)],
    "run_edge": [("a", 255, 1e300), ("b", 255, 1e300), ("a", 256, np.inf), ("b", 256, 0.0)],
    "middle": [("a", 600, np.inf), ("b", 600, 0.0)],
    "underflow": [("a", 700, 1e-200), ("b", 700, 1e-200)],
    "last": [("a", N - 1, 1e300), ("b", N - 1, -1e300)],
    "nan_in": [("a", 400, np.nan)],  # no event
}


@pytest.mark.parametrize("case", sorted(PRODUCT_CASES))
@pytest.mark.parametrize("state", STATES, ids=STATE_IDS)
def test_events_in_a_storing_loop(case, state):
    plain, f = compiled("product", *vectors([]), np.zeros(N))

    def make():
        return (*vectors(PRODUCT_CASES[case]), np.full(N, 7.0))

    assert outcome(f, make, state) == outcome(plain, make, state)
    stats = jit_module.stats(f)
    assert stats["native_entries"] >= 2 and not stats["aborts"]


def test_a_storing_loop_is_vectorized_and_runs_fast():
    plain, f = compiled("product", *vectors([]), np.zeros(N))
    before = fast_runs(f)
    assert outcome(f, lambda: (*vectors([]), np.zeros(N)), {}) == outcome(
        plain, lambda: (*vectors([]), np.zeros(N)), {}
    )
    assert fast_runs(f) > before
    assert vectorized(f)


def test_the_same_array_twice():
    """out is a: each iteration reads the element it then overwrites (an event undoes the run in place)."""
    plain, f = compiled("product", *vectors([]), np.zeros(N))
    for events in ([], [("a", 300, 1e300), ("b", 300, 1e300)], [("a", 999, np.inf), ("b", 999, 0.0)]):
        for state in STATES:

            def make(events=events):
                a, b = vectors(events)
                return a, b, a

            assert outcome(f, make, state) == outcome(plain, make, state), (events, state)


@pytest.mark.parametrize("state", STATES, ids=STATE_IDS)
def test_a_recurrence_in_place(state):
    """a[i] reads a[i - 1], which the run stored an iteration before: an undone run must restore every one."""
    warm = np.linspace(0.0, 1.0, N)
    plain, f = compiled("recurrence", warm, 0.5)
    for index, value, c in ((0, 1e300, 1e10), (500, 1e-300, 1e-20), (300, np.inf, 0.0), (N - 1, 1e308, 2.0)):

        def make(index=index, value=value, c=c):
            a = np.linspace(0.0, 1.0, N)
            a[index] = value
            return a, c

        assert outcome(f, make, state) == outcome(plain, make, state), (index, value, c)


@pytest.mark.parametrize("state", STATES, ids=STATE_IDS)
def test_a_stencil(state):
    grid = (np.arange(60 * 300, dtype=np.float64).reshape(60, 300) % 13) * 0.5
    plain, f = compiled("stencil", grid, np.zeros((60, 300)))
    for row, col, value in ((0, 5, 1e308), (30, 1, 1e308), (30, 150, np.inf), (59, 298, 1e-320), (10, 299, np.nan)):

        def make(row=row, col=col, value=value):
            a = grid.copy()
            a[row, col] = value
            return a, np.full((60, 300), -1.0)

        assert outcome(f, make, state) == outcome(plain, make, state), (row, col, value)
    # the same array as input and output: reads of the row above see this call's stores
    for row, col, value in ((20, 40, 1e308), (40, 250, -np.inf)):

        def same(row=row, col=col, value=value):
            a = grid.copy()
            a[row, col] = value
            return a, a

        assert outcome(f, same, state) == outcome(plain, same, state), (row, col, value)


@pytest.mark.parametrize("state", STATES, ids=STATE_IDS)
def test_several_stores_per_iteration(state):
    """Three stores (float64, int64, float64) per iteration, the event after two of them: an undone run puts
    back all three arrays, and the checked copy stores the first two of the failing iteration again."""
    plain, f = compiled("two_stores", *vectors([]), np.zeros(N), np.zeros(N), np.zeros(N, dtype=np.int64))
    for index, value in ((0, 0.0), (256, 1e-320), (777, 0.0), (N - 1, np.inf)):

        def make(index=index, value=value):
            a, b = vectors([])
            b[index] = value
            return a, b, np.full(N, 3.0), np.full(N, 4.0), np.full(N, -1, dtype=np.int64)

        assert outcome(f, make, state) == outcome(plain, make, state), (index, value)


@pytest.mark.parametrize("state", STATES, ids=STATE_IDS)
def test_logged_and_computed_addresses_in_one_run(state):
    """out[i] (a C-contiguous array, or a strided view) has an address affine in the counter: the run logs its
    old values alone and the rollback computes each address; back[n - 1 - i] (an index the iteration computes)
    logs its addresses too. An undone run puts both back, last store first."""
    plain, f = compiled("mixed_stores", *vectors([]), np.zeros(N), np.zeros(N))
    for index, value in ((0, 0.0), (255, 1e-320), (256, 0.0), (640, 0.0), (N - 1, np.inf)):
        for strided in (False, True):

            def make(index=index, value=value, strided=strided):
                a, b = vectors([])
                b[index] = value
                out = np.full(2 * N, 4.0)[::2] if strided else np.full(N, 4.0)
                return a, b, np.full(N, 3.0), out

            assert outcome(f, make, state) == outcome(plain, make, state), (index, value, strided)
    assert fast_runs(f) > 0


@pytest.mark.parametrize("state", STATES, ids=STATE_IDS)
def test_one_element_stored_at_every_iteration(state):
    """acc[1] is stored at each iteration of a run: undone last store first, it gets back its value from before
    the run (not one from its middle)."""
    plain, f = compiled("running", *vectors([]), np.zeros(3))
    for events in ([], [("a", 10, 1e300), ("b", 10, 1e300)], [("a", 300, 1e-200), ("b", 300, 1e-200)]):

        def make(events=events):
            return (*vectors(events), np.array([1.0, 2.0, 3.0]))

        assert outcome(f, make, state) == outcome(plain, make, state), events


ROOT_CASES = {
    "none": [],
    "negative_first": [("a", 0, -1.0)],  # np.sqrt of a negative: invalid
    "negative_at_a_run_edge": [("a", 255, -1.0), ("a", 256, -2.0)],
    "negative_infinity": [("a", 600, -np.inf)],
    "minus_zero": [("a", 300, -0.0)],  # no event: -0.0
    "nan_in": [("a", 400, np.nan)],  # no event
    "overflow_then_root": [("a", 900, 1e300), ("b", 900, 1e300)],  # the product overflows; sqrt(inf) is no event
}


@pytest.mark.parametrize("case", sorted(ROOT_CASES))
@pytest.mark.parametrize("state", STATES, ids=STATE_IDS)
def test_events_of_square_roots_in_a_vectorized_storing_loop(case, state):
    """np.sqrt's check is deferred like the arithmetic's, so the loop is checked once per run and vectorized."""
    a, b = np.linspace(0.5, 2.0, N), np.linspace(1.0, 3.0, N)
    plain, f = compiled("roots", a, b, np.zeros(N))
    assert vectorized(f)

    def make():
        a, b = np.linspace(0.5, 2.0, N), np.linspace(1.0, 3.0, N)
        for name, index, value in ROOT_CASES[case]:
            {"a": a, "b": b}[name][index] = value
        return a, b, np.full(N, 7.0)

    assert outcome(f, make, state) == outcome(plain, make, state)
    assert not jit_module.stats(f)["aborts"]
