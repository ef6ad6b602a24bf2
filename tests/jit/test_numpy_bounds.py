"""Merged array bounds checks (jit.optimizer.bounds) against CPython: indices base + c of several offsets and
arrays, in range, out of range at the last iteration (NumPy's IndexError, the same message), negative (NumPy
counts them from the end) where the loop was recorded on non-negative ones, an outer loop's index that is
negative for one run of the inner loop (the hoisted guard fails at the entry), and a broadcast view whose
dimension is 2**62 (the guard's arithmetic is in i128). Each runs natively (jit.stats)."""

from __future__ import annotations

import pytest
from helpers import check, define

import jit as jit_module
from jit import jit

np = pytest.importorskip("numpy")

SOURCE = """
def neighbours(a, start, stop):
    s = 0.0
    for j in range(start, stop):
        s += a[j - 1] * 2.0 + a[j + 1] - a[j] + a[1 + j]
    return s


def behind(a, start, stop):
    s = 0.0
    for j in range(start, stop):
        s += a[j - 2] - a[j]
    return s


def rows_above(g, first_row):
    s = 0.0
    for i in range(first_row, g.shape[0]):
        for j in range(1, g.shape[1] - 1):
            s += g[i - 1, j] + g[i, j - 1] - g[i, j + 1]
    return s


def shifted_sums(a, out, start, stop):
    for j in range(start, stop):
        out[j] = a[j - 1] + a[j + 1]
    return out[start]


def inner_runs(a, n, step):
    total = 0.0
    last = -1
    for i in range(n):
        start, stop = (0, a.shape[0]) if step > 0 else (a.shape[0] - 1, -1)
        for k in range(start, stop, step):
            total += a[k] * 0.5 + i
        last = k
    return total, last


def products(a, b, n):
    s = 0.0
    for i in range(n):
        for k in range(a.shape[1]):
            s += a[i, k] * b[k, i]
    return s
"""


def fn(name):
    return define(SOURCE, name, {})


def floats(n=40):
    return np.arange(n, dtype=np.float64) * 0.5 - 3.0


def test_neighbours_share_one_guard():
    jitted = check(fn("neighbours"), (floats(), 1, 39), (floats(), 1, 20), (floats(), 5, 39), native=True)
    listing = jit_module.dump(jitted, "uops")
    assert "_GUARD_INDEX_RANGE" in listing and "_BINARY_OP_ADD_INT_IN_RANGE" in listing
    assert "_ARRAY_INDEX_IN_RANGE" not in listing


def test_out_of_range_at_the_last_iteration_raises_numpys_index_error():
    check(fn("neighbours"), (floats(), 1, 39), (floats(), 1, 40), (floats(), 1, 39), native=True)
    f = jit(threshold=2)(fn("neighbours"))
    f(floats(), 1, 39)
    with pytest.raises(IndexError, match="index 40 is out of bounds for axis 0 with size 40"):
        f(floats(), 1, 40)


def test_negative_offsets_count_from_the_end_where_recorded_on_non_negative_ones():
    check(fn("behind"), (floats(), 10, 40), (floats(), 0, 40), (floats(), 0, 5), (floats(), 10, 40), native=True)
    f = jit(threshold=2)(fn("behind"))
    for start in (10, 0, 1, 0):
        assert repr(f(floats(), start, 40)) == repr(fn("behind")(floats(), start, 40))
    assert jit_module.stats(f)["native_entries"] >= 4


def test_an_outer_index_negative_for_one_run_of_the_inner_loop():
    grid = np.arange(12 * 30, dtype=np.float64).reshape(12, 30) % 7
    check(fn("rows_above"), (grid, 1), (grid, 0), (grid, 1), (grid, 0), native=True)


def test_one_index_against_two_arrays_dimensions():
    a = np.arange(6 * 8, dtype=np.float64).reshape(6, 8)
    b_short = np.ones((7, 6))
    check(fn("products"), (a, a.T.copy(), 6), (a, b_short, 6), (a, a.T.copy(), 6), native=True)


def test_a_broadcast_view_with_a_dimension_of_2_to_the_62():
    """(Not through check: it deep-copies its arguments.)"""
    big = np.broadcast_to(np.uint8(3), (2**62,))
    base = 2**62 - 200
    plain = fn("neighbours")
    f = jit(threshold=2)(plain)
    for start, stop in ((base, base + 150), (base, base + 199), (base + 100, base + 199)):
        assert repr(f(big, start, stop)) == repr(plain(big, start, stop))
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 4611686018427387904"):
        f(big, base, base + 200)
    assert jit_module.stats(f)["native_entries"] >= 3


def fast_runs(jitted):
    return sum(trace["fast_runs"] for tree in jit_module.stats(jitted)["trees"] for trace in tree["traces"])


def test_a_loop_counters_index_guard_is_a_condition_of_the_fast_copy():
    """The guard on the counter j (1 <= j < 199 for a[j - 1], a[j + 1] and out[j]) goes from the fast copy's
    iterations: the range analysis proves it from the range where the copy is entered. Past the end of the
    arrays the conditions fail, and the checked copy raises NumPy's IndexError after the writes before it."""
    calls = [
        (floats(200), np.zeros(200), 1, 199),
        (floats(200), np.zeros(200), 1, 200),
        (floats(200), np.zeros(200), 0, 150),
    ]
    jitted = check(fn("shifted_sums"), *calls, calls[0], native=True)
    assert "fast=_INDEX_RANGE_PROVEN" in jit_module.dump(jitted, "uops")
    assert fast_runs(jitted) > 0
    f = jit(threshold=2)(fn("shifted_sums"))
    f(floats(200), np.zeros(200), 1, 199)
    out = np.zeros(200)
    with pytest.raises(IndexError, match="index 200 is out of bounds for axis 0 with size 200"):
        f(floats(200), out, 1, 200)
    expected = np.zeros(200)
    with pytest.raises(IndexError):
        fn("shifted_sums")(floats(200), expected, 1, 200)
    assert out.tobytes() == expected.tobytes() and fast_runs(f) > 0


@pytest.mark.parametrize("step", [1, -1, 3])
def test_an_inner_loops_fast_copy_leaves_where_its_range_ends(step):
    """The fast copy of an inner range loop leaves from its dispatch where no iteration is left (the range
    guard's exit, with the loop's state there: the counter's last value in k), not through the loop's
    checked copy; the outer loop goes on with it."""
    jitted = check(
        fn("inner_runs"), (floats(100), 30, step), (floats(37), 5, step), (floats(100), 30, step), native=True
    )
    assert fast_runs(jitted) > 0


HISTOGRAM = """
def histogram(data, counts, lo, hi, bins):
    scale = bins / (hi - lo)
    for x in data:
        k = int((x - lo) * scale)
        if 0 <= k < bins:
            counts[k] += 1
    return counts.sum()
"""


@pytest.mark.parametrize(
    "case", ["in_range", "counts_too_short", "nan", "inf", "negative_bins_index", "more_bins_than_counts_unused"]
)
def test_a_histogram_over_an_array_whose_bounds_the_fast_copy_proves(case):
    """`for x in data` (the index proven within data) and `counts[k]` with 0 <= k < bins (proven within counts
    where bins <= len(counts)): where the conditions fail (counts shorter than bins) the checked copy runs and
    NumPy raises its IndexError at the same element; int() of a NaN or an infinity raises as in CPython."""
    plain = define(HISTOGRAM, "histogram", {})
    f = jit(threshold=2)(plain)
    data = (np.arange(3000, dtype=np.float64) * 0.6180339887498949) % 1.0 * 12.0 - 1.0
    for _ in range(3):
        f(data, np.zeros(64, dtype=np.int64), 0.0, 10.0, 64)
    counts_len, bins = 64, 64
    data2 = data.copy()
    if case == "counts_too_short":
        counts_len = 40
    elif case == "nan":
        data2[1700] = np.nan
    elif case == "inf":
        data2[2999] = np.inf
    elif case == "negative_bins_index":
        data2[10] = -5.0
    elif case == "more_bins_than_counts_unused":
        counts_len, bins = 64, 70
        data2 = np.clip(data2, 0.0, 9.0)  # (k stays below 64: every access is in range, but nothing proves it)

    def run(g):
        counts = np.zeros(counts_len, dtype=np.int64)
        try:
            result = repr(g(data2, counts, 0.0, 10.0, bins))
        except (IndexError, ValueError, OverflowError) as exc:
            result = f"{type(exc).__name__}: {exc}"
        return result, counts.tobytes()

    assert run(f) == run(plain)
    assert jit_module.stats(f)["native_iterations"] > 0
