"""codegen.float_status: the fast copy of a loop whose runs are checked at their end reads the processor's status
flags instead of marking each NumPy float operation. What it must still see: an event of an operation whose
result only the loop's exit reads (LLVM would compute it once, after the loop: it keeps its mark), flags left set
before the call (a run that finds them set is rolled back, clears them and runs again in the fast copy, so the
fast copy still runs: a loop that stores, an inner loop's tree called per row, an outer loop that sets them
before each call), an event of an operation LLVM computes once, before the runs (the run again computes it
again: an inner loop entered at its fast copy by its outer trace), and the events of ordinary runs;
the warnings, the FloatingPointError, the result and the arrays stored into are CPython's, and the fast copy ran
(jit.stats)."""

from __future__ import annotations

import platform

import pytest
from helpers import define, numpy_outcome

import jit as jit_module
from jit import jit

np = pytest.importorskip("numpy")

SOURCE = """
def last_product(a, b):
    t = 0.0
    s = 0.0
    for i in range(len(a)):
        t = a[i] * b[i]
        s += a[i]
    return s, t


def doubled(a, out):
    for i in range(len(a)):
        out[i] = a[i] * 2.0 + a[i]
    return out[len(a) // 2]


def scaled(a, out, x, y):
    for i in range(len(a)):
        out[i] = a[i] + x * y
    return out[len(a) // 2]


def rows_scaled(a, out, s, y):
    for i in range(a.shape[0]):
        x = s[i]
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] + x * y
    return out[a.shape[0] // 2, 1]


def rows(a, out):
    for i in range(1, a.shape[0] - 1):
        for j in range(1, a.shape[1] - 1):
            out[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]) - a[i, j]
    return out[a.shape[0] // 2, 1]


def from_the_end(a, k):
    s = 0.0
    for i in range(1, k + 1):
        s -= a[-i] * 0.5
    return s
"""

N = 2000
STATES = [{}, {"all": "raise"}, {"all": "ignore"}, {"under": "warn"}]
IDS = ["default", "raise", "ignore", "under"]


def fast_runs(jitted):
    return sum(trace["fast_runs"] for tree in jit_module.stats(jitted)["trees"] for trace in tree["traces"])


def outcome(f, args, state):
    return numpy_outcome(f, args, state, (FloatingPointError, IndexError))


def test_the_fast_copy_clears_the_flags_only_where_a_run_is_rolled_back():
    # (not where it starts: that read, at every call of an inner loop's tree, waited for the float operations in
    # flight; the rollback clears them, then runs again in the fast copy entered anew)
    f = jit(threshold=2)(define(SOURCE, "from_the_end", {}))
    f(np.linspace(0.5, 2.0, N), N)
    fast = [text for text in jit_module.dump(f, "ir").split("define ")[1:] if '_fast"' in text.split("\n")[0]]
    assert fast
    if platform.machine() not in ("x86_64", "AMD64"):
        return
    for text in fast:
        lines = text.split("\n")
        labels = [i for i, line in enumerate(lines) if line and not line.startswith(" ") and line.endswith(":")]
        assert not any("mxcsr" in line for line in lines[: labels[0]])  # (the entry block)
        rollback = next(i for i in labels if lines[i].startswith(("rollback", '"rollback')))
        writes = [i for i, line in enumerate(lines) if "llvm.x86.sse.ldmxcsr" in line and "call" in line]
        assert writes and all(i > rollback for i in writes)
        assert any("_fast" in line and "musttail" in line for line in lines[rollback:])  # (the run again)


def test_the_fast_copy_reads_the_status_flags_on_x86_64():
    f = jit(threshold=2)(define(SOURCE, "from_the_end", {}))
    a = np.linspace(0.5, 2.0, N)
    f(a, N)
    assert fast_runs(f) > 0
    fast = [text for text in jit_module.dump(f, "ir").split("define ")[1:] if '_fast"' in text.split("\n")[0]]
    assert fast
    if platform.machine() in ("x86_64", "AMD64"):
        assert all("llvm.x86.sse.stmxcsr" in text for text in fast)


@pytest.mark.parametrize("state", STATES, ids=IDS)
@pytest.mark.parametrize("where", [0, 700, N - 1])
def test_an_operation_whose_result_only_the_exit_reads_still_reports_its_events(state, where):
    plain = define(SOURCE, "last_product", {})
    f = jit(threshold=2)(plain)
    a, b = np.linspace(0.5, 2.0, N), np.linspace(1.0, 3.0, N)
    f(a, b)
    assert fast_runs(f) > 0
    for value, other in ((1e300, 1e300), (1e-300, 1e-300), (np.inf, 0.0)):
        a2, b2 = a.copy(), b.copy()
        a2[where], b2[where] = value, other
        assert outcome(f, (a2, b2), state) == outcome(plain, (a2, b2), state), (value, other)
    assert outcome(f, (a, b), state) == outcome(plain, (a, b), state)


def test_flags_set_before_the_call_change_nothing():
    plain = define(SOURCE, "from_the_end", {})
    f = jit(threshold=2)(plain)
    a = np.linspace(0.5, 2.0, N)
    f(a, N)
    before = fast_runs(f)
    for _ in range(3):
        float("1e308") * 10.0  # (an overflow in a Python float: inf, and the processor's flag, which stays set)
        np.float64(1e-300) * np.float64(1e-300)  # (NumPy warns, and leaves the underflow flag set)
        assert f(a, N) == plain(a, N)
    stats = jit_module.stats(f)
    assert fast_runs(f) > before
    assert stats["native_iterations"] >= 3 * N


@pytest.mark.parametrize("state", STATES, ids=IDS)
def test_a_negative_index_counts_from_the_end_in_the_fast_copy(state):
    plain = define(SOURCE, "from_the_end", {})
    f = jit(threshold=2)(plain)
    a = np.linspace(0.5, 2.0, N)
    f(a, N)
    assert fast_runs(f) > 0
    for k in (N, N // 2, 0, N + 1, N + 40):  # (past the start of a: NumPy's IndexError)
        assert outcome(f, (a, k), state) == outcome(plain, (a, k), state), k
    bad = a.copy()
    bad[-300] = 1e308
    bad[-1000] = -np.inf
    assert outcome(f, (bad, N), state) == outcome(plain, (bad, N), state)


def test_a_loop_without_numpy_float_operations_reads_no_flags():
    source = """
def ints(n):
    s = 0
    for i in range(n):
        s += (i * 3) & 15
    return s
"""
    plain = define(source, "ints", {})
    f = jit(threshold=2)(plain)
    for _ in range(2):
        assert f(2000) == plain(2000)
    assert fast_runs(f) > 0
    assert "stmxcsr" not in jit_module.dump(f, "ir")


def set_flags():
    """Leave the processor's overflow and underflow flags set, as ordinary Python code may before a call."""
    float("1e308") * 10.0  # (an overflow in a Python float: inf, and the processor's flag, which stays set)
    with np.errstate(all="ignore"):
        np.float64(1e-300) * np.float64(1e-300)  # (NumPy leaves the underflow flag set)


@pytest.mark.parametrize(("name", "scalars"), [("doubled", ()), ("scaled", (np.float64(1.5), np.float64(2.0)))])
def test_flags_set_before_a_storing_loop_change_nothing(name, scalars):
    plain = define(SOURCE, name, {})
    f = jit(threshold=2)(plain)
    n = 20_000  # (about 80 runs of a loop that stores: its log holds 256 iterations)
    a = np.linspace(0.5, 2.0, n)
    f(a, np.zeros(n), *scalars)
    for stale in (False, True, True, False):
        before = fast_runs(f)
        out, expected = np.zeros(n), np.zeros(n)
        if stale:
            set_flags()
        assert f(a, out, *scalars) == plain(a, expected, *scalars)
        assert np.array_equal(out, expected)
        # (the call's runs stayed in the fast copy, not its checked copy: the flags were cleared)
        assert fast_runs(f) - before >= n // 256


@pytest.mark.parametrize("state", STATES, ids=IDS)
@pytest.mark.parametrize("stale", [False, True], ids=["clear", "stale"])
def test_an_event_of_an_operation_computed_before_the_runs_is_reported(state, stale):
    plain = define(SOURCE, "scaled", {})
    f = jit(threshold=2)(plain)
    n = 2000
    a = np.linspace(0.5, 2.0, n)
    f(a, np.zeros(n), np.float64(1.5), np.float64(2.0))
    assert fast_runs(f) > 0
    for x, y in ((1e200, 1e200), (1e-200, 1e-200), (np.inf, 0.0), (1.5, 2.0)):
        out, expected = np.zeros(n), np.zeros(n)
        args = (np.float64(x), np.float64(y))
        if stale:
            set_flags()
        got = outcome(f, (a, out, *args), state)
        assert got == outcome(plain, (a, expected, *args), state), (x, y)
        assert np.array_equal(out, expected, equal_nan=True), (x, y)


@pytest.mark.parametrize("state", STATES, ids=IDS)
@pytest.mark.parametrize("where", [(1, 1), (1, 40), (30, 20), (62, 62)])
def test_an_inner_loop_called_per_row_reports_its_events_after_flags_set_before(state, where):
    plain = define(SOURCE, "rows", {})
    f = jit(threshold=2)(plain)
    a = np.linspace(0.5, 2.0, 64 * 64).reshape(64, 64)
    with np.errstate(**state):  # (recorded under that state: the events it ignores, the traces ignore)
        for _ in range(3):
            f(a, np.zeros((64, 64)))
    before = fast_runs(f)
    out, expected = np.zeros((64, 64)), np.zeros((64, 64))
    set_flags()
    assert outcome(f, (a, out), state) == outcome(plain, (a, expected), state)
    assert np.array_equal(out, expected)
    assert fast_runs(f) - before >= 62  # (a run per row)
    for value in (1e308, -np.inf, np.nan):
        bad = a.copy()
        bad[where] = value
        out, expected = np.zeros((64, 64)), np.zeros((64, 64))
        set_flags()
        assert outcome(f, (bad, out), state) == outcome(plain, (bad, expected), state), value
        assert np.array_equal(out, expected, equal_nan=True), value


@pytest.mark.parametrize("state", STATES, ids=IDS)
def test_an_inner_loop_entered_at_its_fast_copy_reports_the_event_of_an_operation_computed_before_its_runs(state):
    # (x changes per row, and the event is in a row after the first: its call of the inner tree goes straight to
    # the fast copy, which computes x * y once, before its runs)
    plain = define(SOURCE, "rows_scaled", {})
    f = jit(threshold=2)(plain)
    a = np.linspace(0.5, 2.0, 40 * 100).reshape(40, 100)
    s = np.linspace(1.0, 2.0, 40)
    with np.errstate(**state):  # (recorded under that state: the events it ignores, the traces ignore)
        for _ in range(3):
            f(a, np.zeros((40, 100)), s, np.float64(2.0))
    before = fast_runs(f)
    for x, y in ((1e200, 1e200), (1e-200, 1e-200), (np.inf, 0.0), (1.5, 2.0)):
        for stale in (False, True):
            out, expected = np.zeros((40, 100)), np.zeros((40, 100))
            s2 = s.copy()
            s2[7] = x
            if stale:
                set_flags()
            got = outcome(f, (a, out, s2, np.float64(y)), state)
            assert got == outcome(plain, (a, expected, s2, np.float64(y)), state), (x, y, stale)
            assert np.array_equal(out, expected, equal_nan=True), (x, y, stale)
    assert fast_runs(f) - before >= 8 * 6  # (the rows before the event's, in each call, ran in the fast copy)
