"""A counted fast copy with guards in its iteration (a data-dependent branch, an overflow check, int() of a float)
and NumPy float operations is checked once per run (codegen.function: _guarded_run): its float operations and,
on x86-64, its int() of a float are bare instructions whose events the processor's status flags collect; stores
into arrays are logged in a compact log (a store may not run at every iteration); where a guard fails, the run so
far is looked at first (no event: the guard's exit is exact and taken; an event: the run is rolled back and the
checked copy redoes it); the side traces of its branch run inside it (codegen.joined: _joined_fast).

Each kernel is compared with plain CPython on fresh arrays under several np.errstate: the result or the exception
(ValueError and OverflowError of int(), FloatingPointError, IndexError), the warnings (message, order, count) and
every element of every array afterwards (also after an exception), and jit.stats shows the fast copies ran.
NaN, infinities, values past 64 bits, -0.0 and values out of range sit at the first iteration, at the edges of a
run (runs of stores are at most 256 iterations) and at the last."""

from __future__ import annotations

import platform
import sys

import pytest
from helpers import define, numpy_outcome

import jit as jit_module
from jit import jit

np = pytest.importorskip("numpy")

SOURCE = """
def histogram(data, counts, lo, hi):
    bins = len(counts)
    scale = bins / (hi - lo)
    for x in data:
        k = int((x - lo) * scale)
        if 0 <= k < bins:
            counts[k] += 1
    return counts[0]


def above(a, out, t):
    n = 0
    for i in range(len(a)):
        y = a[i] * 3.0 - 1.0
        if y > t:
            out[i] = y
            n += 1
    return n


def indexed(a, t):
    n = 0
    for i in range(len(a)):
        k = int(a[i] * 4.0)
        if k < t:
            n += k
    return n
"""

N = 1000
STATES = [{}, {"all": "raise"}, {"all": "ignore"}, {"under": "warn", "invalid": "raise"}, {"over": "raise"}]
STATE_IDS = ["default", "raise", "ignore", "mixed", "over"]
CATCH = (FloatingPointError, ValueError, OverflowError, IndexError)


def data():
    """A histogram's data: about one value in seven outside [0, 10)."""
    return (np.arange(N, dtype=np.float64) * 0.6180339887498949) % 1.0 * 12.0 - 1.0


def runs(jitted, kind=None):
    """The fast copies' runs (of side traces only: kind "side")."""
    return sum(
        t["fast_runs"]
        for tree in jit_module.stats(jitted)["trees"]
        for t in tree["traces"]
        if kind is None or t["kind"] == kind
    )


def compiled(name, warm, state=None):
    """plain and jitted name, warmed up on the arguments warm() makes (its side traces compiled), under
    np.errstate(**state): its traces ignore the events that state ignores (jit.numpy_errstate), and guard it."""
    plain = define(SOURCE, name, {"np": np})
    f = jit(threshold=2, side_exit_threshold=2)(plain)
    with np.errstate(**(state or {})):
        for _ in range(3):
            f(*warm())
    assert runs(f) > 0
    return plain, f


def outcome(f, make, state):
    args = make()
    result = numpy_outcome(f, args, state, CATCH)
    return (*result, [(x.dtype.str, x.tobytes()) for x in args if isinstance(x, np.ndarray)])


HISTOGRAM_CASES = {
    "none": [],
    "nan_first": [(0, np.nan)],
    "nan_run_edge": [(255, np.nan)],
    "nan_after_edge": [(256, np.nan)],
    "nan_middle": [(613, np.nan)],
    "nan_last": [(N - 1, np.nan)],
    "inf": [(400, np.inf)],
    "minus_inf": [(401, -np.inf)],
    "past_64_bits": [(300, 1e300), (301, -1e300)],  # (int() makes big ints, out of range: skipped)
    "overflow": [(500, 1e308)],  # ((x - lo) * scale is inf: NumPy's overflow, then int(inf))
    "underflow": [(200, 1e-310)],  # (a denormal product: NumPy's underflow, ignored by default)
    "minus_zero": [(10, -0.0), (11, 0.0), (12, -1e-300)],
    "all_out_of_range": [(i, 20.0 + i) for i in range(N)],
}


@pytest.mark.parametrize("case", sorted(HISTOGRAM_CASES))
@pytest.mark.parametrize("state", STATES, ids=STATE_IDS)
def test_a_histogram(case, state):
    plain, f = compiled("histogram", lambda: (data(), np.zeros(64, dtype=np.int64), 0.0, 10.0), state)

    def make():
        values = data()
        for index, value in HISTOGRAM_CASES[case]:
            values[index] = value
        return values, np.zeros(64, dtype=np.int64), 0.0, 10.0

    before = runs(f, "side")
    assert outcome(f, make, state) == outcome(plain, make, state)
    stats = jit_module.stats(f)
    assert stats["native_entries"] >= 2 and not stats["aborts"]
    if case == "none":
        assert runs(f, "side") > before  # (the joined fast copy: both ways in one run)


def test_the_histograms_loop_runs_in_the_joined_fast_copy():
    """Once in the side trace's function (the first value out of range), a call stays there: one parent exit, one
    exit to the interpreter (the loop's end), the runs in the joined function's fast copy; the fast copies read the
    status flags and convert with the processor's truncation instead of checking each operation."""
    plain, f = compiled("histogram", lambda: (data(), np.zeros(64, dtype=np.int64), 0.0, 10.0))
    big = np.concatenate([data()] * 50)
    counts, expected = np.zeros(64, dtype=np.int64), np.zeros(64, dtype=np.int64)
    exits = jit_module.stats(f)["exits_to_interpreter"]
    before = runs(f, "side")
    assert f(big, counts, 0.0, 10.0) == plain(big, expected, 0.0, 10.0)
    assert counts.tobytes() == expected.tobytes()
    assert jit_module.stats(f)["exits_to_interpreter"] - exits == 1
    assert runs(f, "side") - before >= len(big) // 256 - 2  # (runs of at most 256 iterations: the log's size)
    sides = [t for tree in jit_module.stats(f)["trees"] for t in tree["traces"] if t["kind"] == "side"]
    assert sides and all(t["joined"] for t in sides)
    if platform.machine() in ("x86_64", "AMD64"):
        fast = [text for text in jit_module.dump(f, "ir").split("define ")[1:] if '_fast"' in text.split("\n")[0]]
        assert fast and all("llvm.x86.sse2.cvttsd2si64" in text for text in fast)
        assert all("llvm.x86.sse.stmxcsr" in text for text in fast)


def test_counts_that_wrap_around():
    """counts[k] += 1 past 2**63 - 1: NumPy's int64 wraps around and warns (raises under errstate), an exit of
    the fast copy with no float event before it: exact, the stores of the run so far kept."""
    plain, f = compiled("histogram", lambda: (data(), np.zeros(64, dtype=np.int64), 0.0, 10.0))

    def make():
        counts = np.zeros(64, dtype=np.int64)
        counts[7] = counts[9] = 2**63 - 1
        return data(), counts, 0.0, 10.0

    for state in STATES:
        assert outcome(f, make, state) == outcome(plain, make, state)


def test_counts_too_short_and_bins_past_them():
    """bins > len(counts) is no condition the fast copy can prove: the checked copy, NumPy's IndexError."""
    plain, f = compiled("histogram", lambda: (data(), np.zeros(64, dtype=np.int64), 0.0, 10.0))
    for length in (64, 40, 1):
        assert outcome(f, lambda: (data(), np.zeros(length, dtype=np.int64), 0.0, 10.0), {}) == outcome(
            plain, lambda: (data(), np.zeros(length, dtype=np.int64), 0.0, 10.0), {}
        )


def test_float_counts_in_the_data_itself():
    """counts is data (float64): each iteration reads an element that another stored, the stores logged and
    undone in place where a run had an event."""
    plain, f = compiled("histogram", lambda: (data(), np.zeros(64), 0.0, 10.0))
    for events in ([], [(500, np.nan)], [(255, np.inf)], [(700, 1e308)]):

        def make():
            values = data()
            for index, value in events:
                values[index] = value
            return values, values, 0.0, 10.0

        for state in STATES:
            assert outcome(f, make, state) == outcome(plain, make, state)


ABOVE_CASES = {
    "none": [],
    "overflow_stored": [(300, 1e308)],  # (inf > t: stored)
    "overflow_run_edge": [(256, 1e308)],
    "nan": [(511, np.nan)],  # (no event: NaN > t is False)
    "underflow": [(100, 1e-320)],
}


@pytest.mark.parametrize("case", sorted(ABOVE_CASES))
@pytest.mark.parametrize("state", STATES, ids=STATE_IDS)
def test_a_store_on_one_way_of_a_branch(case, state):
    """A store that only one way of the branch makes: the run's log holds the stores that ran (a compact log)."""
    plain, f = compiled("above", lambda: (np.linspace(-1.0, 1.0, N), np.zeros(N), 0.5))

    def make():
        a = np.linspace(-1.0, 1.0, N)
        for index, value in ABOVE_CASES[case]:
            a[index] = value
        return a, np.full(N, 7.0), 0.5

    assert outcome(f, make, state) == outcome(plain, make, state)
    assert not jit_module.stats(f)["aborts"]


def test_a_guard_exit_of_a_run_without_events():
    """int() past 64 bits on the loop's own way (k < t with a huge negative k): the conversion's exit, taken where
    the run so far had no event, is exact; a big int the interpreter makes, as CPython does."""
    plain, f = compiled("indexed", lambda: (np.linspace(0.0, 9.0, N), 20))
    for events in ([], [(600, -1e30)], [(0, -1e300), (999, -1e200)], [(42, np.nan)], [(43, -np.inf)]):

        def make():
            a = np.linspace(0.0, 9.0, N)
            for index, value in events:
                a[index] = value
            return a, 20

        for state in STATES:
            assert outcome(f, make, state) == outcome(plain, make, state)


def test_reference_counts_are_kept():
    plain, f = compiled("histogram", lambda: (data(), np.zeros(64, dtype=np.int64), 0.0, 10.0))
    values, counts = data(), np.zeros(64, dtype=np.int64)
    before = (sys.getrefcount(values), sys.getrefcount(counts))
    for _ in range(3):
        f(values, counts, 0.0, 10.0)
    values[5] = np.nan
    with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
        f(values, counts, 0.0, 10.0)
    assert (sys.getrefcount(values), sys.getrefcount(counts)) == before
