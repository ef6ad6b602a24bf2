"""jit.numpy_errstate: NumPy float operations in traces ignore the events NumPy's error state ignored when they
were recorded (by default underflow), behind a guard that the state still does (``_GUARD_NP_ERRSTATE``).

Before, native code left at every event and recording gave up on an operation that had one: a sum of
``np.exp(-0.5 * d * d)`` whose terms underflow to zero ran 1.6 iterations per native entry, slower than CPython.
What must hold: such loops run natively (jit.stats) with CPython's result; the guard is checked where the state
may have changed (every entry from Python, after Python code the loop runs: np.seterr in a helper); under another
state the function gives CPython's outcome (result, FloatingPointError, warnings, arrays stored into) and its trees
are recorded again for it; states alternating call after call settle on traces that ignore nothing; threads with
their own states each get theirs; and where NumPy's state cannot be read, nothing is ignored."""

from __future__ import annotations

import threading

import pytest
from helpers import assert_native, define, numpy_outcome

import jit as jit_module
from jit import jit, numpy_errstate

np = pytest.importorskip("numpy")

SOURCE = """
def gaussian_sums(xs, grid, h):
    out = np.zeros(len(grid))
    for i in range(len(grid)):
        s = 0.0
        for x in xs:
            d = (grid[i] - x) / h
            s += np.exp(-0.5 * d * d)
        out[i] = s
    return out.sum()


def products(a, k):
    total = 0.0
    for i in range(len(a)):
        total += a[i] * k
    return total


def scaled_into(a, out, k):
    for i in range(len(a)):
        out[i] = a[i] * k - 1.0
    return out[len(a) // 2]


def tails(a):
    t = 0.0
    i = 0
    while i < len(a):
        t += a[i] * a[i] * 1e-300
        i += 1
    return t


def ratios(a, b):
    t = 0.0
    n = 0
    for i in range(len(a)):
        r = a[i] / b[i]
        if r == r:
            t += r
        else:
            n += 1
    return t, n


def switched(a, modes):
    t = 0.0
    for i in range(len(a)):
        np.seterr(under=modes[i])
        t += a[i] * 1e-300
    return t
"""

CATCH = (FloatingPointError,)


def compiled(name, *args, state=None):
    """plain and jitted name (warm-up off), called three times on args under np.errstate(**state)."""
    plain = define(SOURCE, name, {"np": np})
    f = jit(threshold=2, warmup=0)(plain)
    with np.errstate(**(state or {})):
        for _ in range(3):
            f(*args)
    return plain, f


def guards(f):
    """The _GUARD_NP_ERRSTATE lines of f's traces (their operands), as the uops dump shows them."""
    return [line for line in jit_module.dump(f, "uops").splitlines() if "_GUARD_NP_ERRSTATE" in line]


def warm_exits(f, *args):
    before = jit_module.stats(f)["exits_to_interpreter"]
    result = f(*args)
    return result, jit_module.stats(f)["exits_to_interpreter"] - before


def test_a_gaussian_sum_whose_exponentials_underflow_runs_natively():
    xs, grid = np.linspace(0.0, 100.0, 800), np.linspace(0.0, 100.0, 20)
    plain, f = compiled("gaussian_sums", xs, grid, 0.5)
    result, exits = warm_exits(f, xs, grid, 0.5)
    assert repr(result) == repr(plain(xs, grid, 0.5))
    assert_native(f)
    assert exits <= 2, exits  # (was one per underflowing term: most of 16000)
    assert not jit_module.stats(f)["aborts"]
    assert guards(f) and all("operand=under ignored" in line for line in guards(f))


@pytest.mark.parametrize("name", ["products", "tails"])
def test_products_that_underflow_run_natively(name):
    # (a counted loop checked once per run by the status flags; a while loop checked by each product's mark)
    a = np.concatenate([np.full(500, 1e-160), np.linspace(0.5, 2.0, 500)])
    args = (a, 1e-200) if name == "products" else (a,)
    plain, f = compiled(name, *args)
    result, exits = warm_exits(f, *args)
    assert repr(result) == repr(plain(*args))
    assert_native(f)
    assert exits <= 2, exits


def test_a_run_that_stores_ignores_underflow_and_keeps_what_it_stored():
    a = np.linspace(0.5, 2.0, 3000)
    a[100:2000] = 1e-300
    plain, f = compiled("scaled_into", a, np.zeros(3000), np.float64(1e-100))
    out, expected = np.zeros(3000), np.zeros(3000)
    result, exits = warm_exits(f, a, out, np.float64(1e-100))
    assert repr(result) == repr(plain(a, expected, np.float64(1e-100)))
    assert out.tobytes() == expected.tobytes()
    assert exits <= 2, exits


STATES = [{"under": "raise"}, {"under": "warn"}, {"all": "raise"}, {"over": "raise"}, {"all": "ignore"}]


@pytest.mark.parametrize("state", STATES, ids=["under_raise", "under_warn", "raise", "over_raise", "ignore"])
def test_another_state_gives_cpythons_outcome_at_every_call(state):
    # recorded under the default state (underflow ignored), then called under another, repeatedly: each call's
    # result or FloatingPointError, its warnings and the array stored into are CPython's, while the trees are
    # recorded again for the new state
    a = np.linspace(0.5, 2.0, 3000)
    plain, f = compiled("scaled_into", a, np.zeros(3000), np.float64(1.5))
    bad = a.copy()
    bad[1700] = 1e-300
    for _ in range(6):
        out, expected = np.full(3000, -7.25), np.full(3000, -7.25)
        got = numpy_outcome(f, (bad, out, np.float64(1e-100)), state, CATCH)
        assert got == numpy_outcome(plain, (bad, expected, np.float64(1e-100)), state, CATCH)
        assert out.tobytes() == expected.tobytes()
    with np.errstate(**state):
        assert repr(f(a, np.zeros(3000), np.float64(1.5))) == repr(plain(a, np.zeros(3000), np.float64(1.5)))
    assert_native(f)


def test_all_ignored_divisions_by_zero_and_overflows_stay_native():
    a = np.linspace(-1.0, 1.0, 2001)
    b = np.where(np.arange(2001) % 3 == 0, 0.0, 1e-308)
    state = {"all": "ignore"}
    plain, f = compiled("ratios", a, b, state=state)
    with np.errstate(**state):
        result, exits = warm_exits(f, a, b)
        assert repr(result) == repr(plain(a, b))
    assert exits <= 2, exits
    assert guards(f) and all("operand=divide+over+under+invalid ignored" in line for line in guards(f))
    # and under the default state (divide, over, invalid warn): CPython's warnings, from a tree recorded again
    for _ in range(4):
        assert numpy_outcome(f, (a, b), {}) == numpy_outcome(plain, (a, b), {})


def test_a_trace_recorded_where_nothing_is_ignored_has_no_guard():
    a = np.linspace(0.5, 2.0, 2000)
    plain, f = compiled("products", a, 1.5, state={"all": "raise"})
    assert_native(f)
    assert not guards(f)
    for state in ({}, {"all": "raise"}, {"under": "warn"}):
        bad = a.copy()
        bad[900] = 1e-300
        assert numpy_outcome(f, (bad, 1e-100), state) == numpy_outcome(plain, (bad, 1e-100), state)


def test_np_seterr_called_by_the_loop_is_seen_by_the_next_operation():
    # (np.seterr runs as a generic call, a barrier: the hoisted guard is checked again after it)
    a = np.full(2000, 1e-200)
    old = np.geterr()
    try:
        plain, f = compiled("switched", a, ["ignore"] * 2000)
        assert_native(f)
        for at in (5, 700, 1999):
            modes = ["ignore"] * 2000
            modes[at] = "raise"
            np.seterr(**old)
            got = numpy_outcome(f, (a, modes), {}, CATCH)
            np.seterr(**old)
            assert got == numpy_outcome(plain, (a, modes), {}, CATCH), at
            assert got[0].startswith("FloatingPointError: underflow"), got
    finally:
        np.seterr(**old)


def test_states_changing_back_and_forth_settle_on_traces_that_ignore_nothing():
    # (each state ignores an event the other reports: each one's trees fail the other's guard and are recorded
    # again; from the second invalidation on, the function's traces ignore nothing, and serve both states)
    first, second = {"under": "ignore", "over": "warn"}, {"under": "warn", "over": "ignore"}
    a = np.linspace(0.5, 2.0, 3000)
    bad = a.copy()
    bad[10] = 1e-300
    plain = define(SOURCE, "scaled_into", {"np": np})
    f = jit(threshold=2, warmup=0, side_exit_threshold=2)(plain)
    for call in range(48):
        state = first if call // 8 % 2 == 0 else second
        out, expected = np.zeros(3000), np.zeros(3000)
        got = numpy_outcome(f, (bad, out, np.float64(1e-100)), state, CATCH)
        assert got == numpy_outcome(plain, (bad, expected, np.float64(1e-100)), state, CATCH), call
        assert out.tobytes() == expected.tobytes(), call
    assert jit_module.api.state_of(f).monitor.errstate_changes == 2
    assert not guards(f)  # (the trees now live ignore nothing)
    assert jit_module.stats(f)["traces_compiled"] <= 8
    assert_native(f)


def test_threads_with_their_own_states_each_get_theirs():
    a = np.linspace(0.5, 2.0, 3000)
    bad = a.copy()
    bad[2500] = 1e-300
    plain, f = compiled("products", a, 1.5)
    expected = {
        "raise": numpy_outcome(plain, (bad, 1e-100), {"under": "raise"}, CATCH),
        "default": numpy_outcome(plain, (bad, 1e-100), {}, CATCH),
    }
    failures = []
    start = threading.Barrier(2)

    def worker(name, state):
        start.wait()
        for _ in range(60):
            with np.errstate(**state):
                try:
                    got = (repr(f(bad, 1e-100)), [])
                except FloatingPointError as exc:
                    got = (f"FloatingPointError: {exc}", [])
            if got[0] != expected[name][0]:
                failures.append((name, got))

    threads = [
        threading.Thread(target=worker, args=("raise", {"under": "raise"})),
        threading.Thread(target=worker, args=("default", {})),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures[:3]


def test_where_numpys_state_cannot_be_read_nothing_is_ignored(monkeypatch):
    monkeypatch.setattr(numpy_errstate, "access", lambda: None)
    a = np.concatenate([np.full(500, 1e-160), np.linspace(0.5, 2.0, 500)])
    plain, f = compiled("tails", a)
    assert not guards(f)
    assert repr(f(a)) == repr(plain(a))
    # (recording met the underflow as an event, as before the error state was read: it gave up there)
    assert any("raises FloatingPointError" in reason for reason in jit_module.stats(f)["aborts"])


def test_the_layout_checks_pass_on_this_numpy():
    assert numpy_errstate.access() is not None
    with np.errstate(all="warn", under="ignore"):
        assert numpy_errstate.ignored_now() == frozenset({"under"})
    with np.errstate(all="ignore"):
        assert numpy_errstate.ignored_now() == frozenset(numpy_errstate.EVENTS)
    ignored = numpy_errstate.Ignored(frozenset({"under", "divide"}))
    assert numpy_errstate.Ignored.parse(str(ignored)) == ignored
