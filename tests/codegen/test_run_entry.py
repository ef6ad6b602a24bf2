"""The single-run entry of an inner loop's tree (``codegen.function._build_run``): where the fast copy's loop only
computes values, or also stores them into arrays (logging what it overwrites), the tree call entries go there
first; it runs every trip the range has left in one run and leaves by the range guard's exit, where the run fits
before the periodic check (and, storing, in its log) and the conditions hold, else it goes on in the fast copy,
which decides as before. Results stay CPython's at every trip count (from one trip on: no warm-up to pay for),
where the periodic check falls due within a call's trips, where the conditions fail (the sum leaves 64 bits), for
steps other than 1, where a NumPy float operation has an event in a run (the run is not taken: the elements it
stored are put back, and the fast copy does it again and rolls it back), and where a loop that stores has more
trips than its log holds; and the run counts as the fast copy's (``fast_runs``)."""

from __future__ import annotations

import re

import pytest
from helpers import TEST_OPTIONS, check, define, numpy_outcome

import jit as jit_module
from jit import jit

from .nests import inner_traces, two_level

INT64_MAX = 2**63 - 1
#: inner loops of a few trips are unrolled into the outer trace unless this is 0 (then every one is a tree call)
NOT_UNROLLED = {**TEST_OPTIONS, "unroll_max_trips": 0}


def stepped(n, m, s):
    total = 0
    for i in range(n):
        for j in range(0, m, s):
            total += (i ^ j) & 7
    return total


def function_text(ir_text: str, name: str) -> str:
    found = re.search(rf'define i64 @"{name}"\(.*?\n}}', ir_text, re.S)
    assert found is not None, ir_text
    return found.group(0)


def test_the_call_entry_is_the_single_run_entry_which_goes_on_in_the_fast_copy():
    f = jit(**TEST_OPTIONS)(two_level)
    for _ in range(2):
        assert f(0, 100, 64) == two_level(0, 100, 64)
    (inner,) = inner_traces(f)
    symbol = inner["symbol"]
    ir_text = jit_module.dump(f, "ir")
    assert re.search(rf'call i64 @"{symbol}_call"\(', ir_text)  # (the outer trace's call)
    run = function_text(ir_text, f"{symbol}_call")
    # the entry's choice: the root's function; where the run does not fit or had an event: the fast copy; else
    # its loop, then out by an exit of the tree
    assert len(re.findall(rf'musttail call i64 @"{symbol}"\(', run)) == 1, run
    assert len(re.findall(rf'musttail call i64 @"{symbol}_fast"', run)) == 2, run
    assert "loop_run" in run and f"{symbol}_counts" in run and f"{symbol}_fast_runs" in run
    assert inner["fast_runs"] >= 2 * 95  # (a run per call, the first calls' aside)


@pytest.mark.parametrize("m", [1, 2, 3, 17, 20, 31, 33, 64, 100])
def test_every_trip_count_runs_in_one_run_per_call(m):
    # (not unrolled: each outer iteration calls the inner tree; before the single-run entry, fewer than 32 trips
    # went to the checked copy)
    f = check(two_level, (0, 200, m), (-(2**62), 50, m), (5, 3, m), options=NOT_UNROLLED, native=True)
    for g in (f, f.cpython_baseline):
        (inner,) = inner_traces(g)
        assert inner["fast_runs"] >= 2 * 190, inner  # (the two calls of 200 outer iterations, the first few aside)


@pytest.mark.parametrize("m", [1000, 5000, 16383, 16384, 16385, 40000])
def test_inner_loops_whose_trips_reach_the_periodic_check(m):
    # the runs of one call and the next straddle the iteration where the periodic check falls due (the fuel
    # counts 2**14 iterations between checks): there the run does not fit and the fast copy runs its runs
    check(two_level, (0, 30, m), (7, 40, m), options=NOT_UNROLLED, native=True)


@pytest.mark.parametrize(
    "start",
    [
        INT64_MAX - 7 * 40 * 20,  # (reaches the limit at the last trip: the conditions hold)
        INT64_MAX - 7 * 40 * 20 + 40,  # passes 2**63 in a later call: the conditions fail at that entry
        INT64_MAX - 30,  # they fail at the first entry; the checked copy overflows into a Python int
        -(2**63),
    ],
)
def test_a_sum_near_the_limit_with_a_short_inner_loop(start):
    check(two_level, (0, 40, 20), (start, 40, 20), options=NOT_UNROLLED, native=True)


@pytest.mark.parametrize("s", [1, 2, 3, -1, 7])
def test_a_step_held_in_a_variable(s):
    # the single run is a copy for a step of 1: any other step goes on in the fast copy
    m = 64 if s > 0 else -64
    check(stepped, (100, m, s), (100, 2 * m, s), (100, 0, s), options=NOT_UNROLLED, native=True)


ROWS = """
def row_sums(a, x):
    out = []
    for i in range(a.shape[0]):
        s = 0.0
        for j in range(a.shape[1]):
            s += a[i, j] * x
        out.append(s)
    return out
"""


@pytest.mark.parametrize("state", [{}, {"all": "raise"}, {"all": "ignore"}, {"over": "warn", "invalid": "raise"}])
@pytest.mark.parametrize("where", [(0, 0), (3, 40), (29, 63)])
def test_an_event_in_a_run_goes_on_in_the_fast_copy(state, where):
    np = pytest.importorskip("numpy")
    plain = define(ROWS, "row_sums", {})
    f = jit(threshold=2)(plain)
    a = np.linspace(0.5, 2.0, 30 * 64).reshape(30, 64)
    x = np.float64(1.5)
    with np.errstate(**state):  # (recorded under that state: the events it ignores, the traces ignore)
        for _ in range(3):
            assert repr(f(a, x)) == repr(plain(a, x))
    before = sum(trace["fast_runs"] for trace in inner_traces(f))
    row, column = where
    beside = column + 1 if column < 63 else column - 1
    # an overflow (1.7e308 * 1.5), an invalid operation (inf + -inf in the sum), an underflow, no event at all
    cases = [{column: 1.7e308}, {column: np.inf, beside: -np.inf}, {column: 1e-310}, {column: 2.0}]
    for values in cases:
        bad = a.copy()
        for at, value in values.items():
            bad[row, at] = value
        catch = (FloatingPointError,)
        assert numpy_outcome(f, (bad, x), state, catch) == numpy_outcome(plain, (bad, x), state, catch), values
    assert sum(trace["fast_runs"] for trace in inner_traces(f)) - before >= 4 * min(row, 25)  # (rows before it)


SCALED = """
def scaled_rows(a, out, x):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] * x - 1.0
    return out[a.shape[0] // 2, 0]
"""
#: what out holds before each call: an element the run must put back after an event is not what it stored
BEFORE = -7.25


def scaled_outcome(func, a, x, state):
    """func(a, out, x)'s outcome under np.errstate(**state) (``numpy_outcome``), and out afterwards (filled with
    BEFORE first)."""
    out = a.copy()
    out[...] = BEFORE
    result = numpy_outcome(func, (a, out, x), state)
    return result, repr(out.tolist())  # (by repr: a NaN stored equals a NaN)


def warmed(rows, columns, x):
    """plain and jitted scaled_rows, called on a rows x columns array until compiled (outcomes compared), and the
    array."""
    np = pytest.importorskip("numpy")
    plain = define(SCALED, "scaled_rows", {})
    f = jit(threshold=2)(plain)
    a = np.linspace(0.5, 2.0, rows * columns).reshape(rows, columns)
    for _ in range(3):
        assert scaled_outcome(f, a, np.float64(x), {}) == scaled_outcome(plain, a, np.float64(x), {})
    return plain, f, a


def test_a_loop_that_stores_has_a_single_run_entry_that_puts_back_what_it_stored():
    _, f, _ = warmed(30, 64, 1.5)
    (inner,) = inner_traces(f)
    symbol = inner["symbol"]
    ir_text = jit_module.dump(f, "ir")
    # the arrays' headers: the outer trace calls the proven entry, which is the single run
    run = function_text(ir_text, f"{symbol}_call_proven")
    assert "loop_run" in run and "run_events" in run and "undo" in run, run
    assert len(re.findall(rf'musttail call i64 @"{symbol}_fast"', run)) == 2, run


@pytest.mark.parametrize("columns", [1, 2, 7, 31, 33, 255, 256, 257, 600])
def test_a_loop_that_stores_runs_in_one_run_per_call_up_to_its_log(columns):
    # (a run's log holds 256 iterations: past that, the fast copy runs the call in runs of its own)
    np = pytest.importorskip("numpy")
    plain, f, a = warmed(40, columns, 0.75)
    before = sum(trace["fast_runs"] for trace in inner_traces(f))
    assert scaled_outcome(f, a, np.float64(0.75), {}) == scaled_outcome(plain, a, np.float64(0.75), {})
    runs = sum(trace["fast_runs"] for trace in inner_traces(f)) - before
    if columns <= 256:  # (the outer loop's first iteration aside: it is the interpreter's)
        assert 39 <= runs <= 40, runs
    else:
        assert runs >= 2 * 39, runs


@pytest.mark.parametrize("state", [{}, {"all": "raise"}, {"all": "ignore"}, {"over": "warn", "invalid": "raise"}])
@pytest.mark.parametrize("where", [(0, 0), (3, 40), (29, 63), (29, 0)])
def test_an_event_in_a_run_that_stores_is_undone_and_goes_on_in_the_fast_copy(state, where):
    # (an overflow (1.7e308 * 1.5), an invalid operation (inf * 0.0), an underflow, no event: where one raises, the
    # elements of the row after it hold what they held before the call, as in CPython)
    np = pytest.importorskip("numpy")
    plain, f, a = warmed(30, 64, 1.5)
    row, column = where
    for value, x in [(1.7e308, 1.5), (np.inf, 0.0), (1e-310, 1e-10), (2.0, 1.5)]:
        bad = a.copy()
        bad[row, column] = value
        if x == 0.0:  # (every element times 0.0: only the infinity's is invalid)
            bad[bad != value] = 1.0
        got = scaled_outcome(f, bad, np.float64(x), state)
        assert got == scaled_outcome(plain, bad, np.float64(x), state), (value, x)
