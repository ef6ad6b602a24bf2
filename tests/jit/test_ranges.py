"""Overflow and bounds checks the range analysis removes (jit.optimizer.ranges) and the loop's fast copy they
are removed in (codegen.function): results exactly CPython's on the edges, where a sum reaches 2**63 in the
last iteration, steps are negative, ranges empty, bounds near 2**63, lists shrunk between entries, globals
rebound. Every test demands native code (jit.stats); ``fast_runs`` tells whether the fast copy ran."""

import pytest
from helpers import check

import jit as jit_module
from jit import jit

INT64_MAX = 2**63 - 1
N = 1000  # iterations: enough for the fast copy (after its warm-up, with iterations left to make it pay)


def fast_runs(jitted) -> int:
    stats = jit_module.stats(jitted)
    return sum(trace["fast_runs"] for tree in stats["trees"] for trace in tree["traces"])


def both(jitted):
    """The interpreter's jitted function and the CPython baseline's (``check`` returns the first)."""
    return jitted, jitted.cpython_baseline


def accumulate(start, n, step):
    total = start
    for _ in range(n):
        total += step
    return total


def masked_sum(start, n):
    total = start
    for i in range(n):
        total += i & 7
    return total


def test_a_sum_that_fits_runs_in_the_fast_copy():
    jitted = check(masked_sum, (0, N), (12345, N), native=True)
    assert all(fast_runs(f) > 0 for f in both(jitted))


@pytest.mark.parametrize("slack", [0, 1, 6, 7, 8, 100])
def test_a_sum_that_reaches_the_limit_in_its_last_iteration(slack):
    # the terms add 7 * N in all: the sum ends at INT64_MAX + 1 - slack (past 64 bits for slack 0); the fast
    # copy's condition is exact: it holds from slack 1 on, and not for 0
    jitted = check(accumulate, (INT64_MAX + 1 - slack - 7 * N, N, 7), native=True)
    assert all((fast_runs(f) > 0) == (slack > 0) for f in both(jitted))


@pytest.mark.parametrize("slack", [0, 1, 7, 100])
def test_a_difference_that_reaches_the_limit_in_its_last_iteration(slack):
    jitted = check(accumulate, (-(2**63) - 1 + slack + 7 * N, N, -7), native=True)
    assert all((fast_runs(f) > 0) == (slack > 0) for f in both(jitted))


def test_a_sum_past_64_bits_on_the_way_matches_cpython():
    # the fast copy's condition fails at the entry: the checked copy leaves where the sum leaves 64 bits
    jitted = check(masked_sum, (INT64_MAX - 3000, N), (INT64_MAX - 10, 5 * N), native=True)
    assert jitted(0, N) == masked_sum(0, N)


def stepped(start, stop, step):
    total = 0
    for i in range(start, stop, step):
        total += (i ^ 5) & 15
        total -= i & 3
    return total


@pytest.mark.parametrize(
    "start, stop, step",
    [
        (N, -N, -3),
        (0, N, 7),
        (N, 0, -1),
        (0, 0, 1),
        (5, 5, -1),
        (N, 0, 1),  # empty: the wrong way
        (0, N, N),
        (-N, N, 2 * N + 1),
    ],
)
def test_steps_positive_negative_and_empty_ranges(start, stop, step):
    check(stepped, (start, stop, step), native=True if len(range(start, stop, step)) > 8 else None)


def test_a_descending_range_runs_in_the_fast_copy():
    jitted = check(stepped, (N, -N, -1), native=True)
    assert all(fast_runs(f) > 0 for f in both(jitted))


def big_counter(start, stop, step):
    total = 0
    for i in range(start, stop, step):
        total += i & 7
    return total


@pytest.mark.parametrize(
    "start, stop, step",
    [
        (INT64_MAX - N, INT64_MAX, 1),  # the counter's last value is INT64_MAX - 1
        (INT64_MAX - 3 * N, INT64_MAX, 3),  # its next value after the last leaves 64 bits
        (INT64_MAX - 3 * N, INT64_MAX - 1, 3),
        (-(2**63) + N, -(2**63), -1),
        (-(2**63) + 3 * N, -(2**63) + 1, -3),
        (INT64_MAX - N, INT64_MAX + 5, 1),  # the stop itself past 64 bits
    ],
)
def test_bounds_near_the_limit(start, stop, step):
    check(big_counter, (start, stop, step), native=None)


def sum_of_counter(start, n):
    total = 0
    for i in range(start, start + n):
        total += i
    return total


def test_a_sum_of_counters_near_the_limit_leaves_exactly():
    check(sum_of_counter, (0, N), (2**62 // N, N), (INT64_MAX // N - 3, N), (INT64_MAX - N, N), native=True)


def indexed_sum(data):
    total = 0
    for k in range(len(data)):
        total += data[k]
    return total


def test_a_list_read_within_its_length_runs_in_the_fast_copy():
    jitted = check(indexed_sum, ([i * 3 for i in range(N)],), ([0.5] * N,), native=True)
    assert all(fast_runs(f) > 0 for f in both(jitted))


def stale_length(data, rounds):
    n = len(data)
    total = 0
    for _ in range(rounds):
        for k in range(n):
            total += data[k]
        data.pop()  # the next round's range(n) goes one past the end: IndexError, as CPython raises it
    return total


def test_a_list_shrunk_between_entries_raises_where_cpython_does():
    check(stale_length, ([7] * N, 3), native=True)


def appended_alias(data, n):
    alias = data
    total = 0
    for k in range(n):
        total += data[k]
        alias.append(k)  # the same list: its length changes in the loop (its bounds check stays)
    return total


def test_a_list_grown_through_an_alias_in_the_loop():
    check(appended_alias, ([1, 2, 3], N), native=True)


def shrunk_alias(data, n):
    alias = data
    total = 0
    for k in range(n):
        total += data[k]
        if k % 100 == 99:
            del alias[-50:]  # (not native: the trace leaves; the length at the fast copy's check is new)
    return total


def test_a_list_shrunk_through_an_alias_in_the_loop():
    check(shrunk_alias, (list(range(2 * N)), 2 * N), native=True)


def swapped(data, rounds):
    for _ in range(rounds):
        i = 0
        j = len(data) - 1
        while i < j:
            data[i], data[j] = data[j], data[i]
            i += 1
            j -= 1
    return data[0] * 1000 + data[-1]


def test_list_swaps_run_in_the_fast_copy():
    # i only grows, j only shrinks, and i < j: both stay within [i, j] of the loop's top, inside the list
    jitted = check(swapped, (list(range(N)), 3), native=True)
    assert all(fast_runs(f) > 0 for f in both(jitted))


def swapped_between(data, i, j):
    while i < j:
        data[i], data[j] = data[j], data[i]
        i += 1
        j -= 1
    return data


@pytest.mark.parametrize(
    "i, j",
    [
        (0, N - 1),
        (-N // 2, N // 2),  # negative indices from the end: the checked copy (the fast one needs 0 <= i)
        (0, N),  # one past the end: IndexError
        (N // 2, N + 40),  # past the end from the first iteration
        (-N - 5, N - 1),  # past the start
        (2**62, 2**62 + 100),
    ],
)
def test_swaps_between_bounds_at_the_edges(i, j):
    check(swapped_between, (list(range(N)), i, j), native=True if 0 <= i < j <= N - 1 else None)


OFFSET = 3


def with_global(n):
    total = 0
    for i in range(n):
        total += (i & 7) + OFFSET
    return total


def test_a_global_rebound_between_calls():
    global OFFSET
    f = jit(threshold=2, side_exit_threshold=2)(with_global)
    try:
        for offset in (3, 2**40, INT64_MAX // N, INT64_MAX // (N // 2), -(2**62), 3):
            OFFSET = offset
            assert f(N) == with_global(N), offset
    finally:
        OFFSET = 3
    assert jit_module.stats(f)["native_entries"] > 0


def nested_masked(n, m):
    total = 0
    for i in range(n):
        for j in range(m):
            total += (i ^ j) & 7
    return total


@pytest.mark.parametrize("m", [0, 1, 2, 4, 8, 16, 40, 100])
def test_nested_loops_of_every_inner_trip_count(m):
    check(nested_masked, (max(1, 4000 // max(m, 1)), m), native=True)


def test_a_sum_near_the_limit_across_nested_loops():
    def outer(start, n):
        total = start
        for i in range(n):
            for j in range(n):
                total += (i * j) & 1023
        return total

    check(outer, (0, 200), (INT64_MAX - 1023 * 200 * 150, 200), (INT64_MAX - 1023 * 200 * 250, 200), native=True)


def test_a_fast_copy_from_the_code_cache_runs_and_matches_cpython(tmp_path, monkeypatch):
    from codegen import cache as cache_module

    monkeypatch.setenv(cache_module.ENVIRONMENT_VARIABLE, str(tmp_path))
    first = check(masked_sum, (0, N), options={"cache": True}, native=True)
    assert jit_module.stats(first)["cache"]["stores"] > 0
    again = check(masked_sum, (0, N), options={"cache": True}, native=True)
    for f in both(again):
        stats = jit_module.stats(f)
        assert stats["cache"]["hits"] == stats["traces_compiled"] > 0 and stats["llvm_compiles"] == 0
        assert fast_runs(f) > 0


def alternating_steps(n, lo, hi, k):
    """An inner range whose step changes sign from one outer iteration to the next: one inner tree, entered
    with steps of both signs (the step is a slot of its entry, its sign tested at run time)."""
    total = 0
    for i in range(n):
        step = k if i % 2 == 0 else -k
        start, stop = (lo, hi) if step > 0 else (hi, lo)
        for j in range(start, stop, step):
            total += j & 3
            total ^= i
    return total


@pytest.mark.parametrize(
    "lo, hi, k",
    [
        (0, 9, 1),
        (0, 9, 4),
        (-5, 5, 3),
        (-(2**63), -(2**63) + 7, 1),  # the bounds at int64's ends: the compare must not overflow
        (INT64_MAX - 7, INT64_MAX, 2),
        (-(2**63), -(2**63) + 40, 13),
        (INT64_MAX - 40, INT64_MAX, 13),
        (3, 3, 1),  # empty both ways
    ],
)
def test_an_inner_range_of_either_direction_and_bounds_at_int64s_ends(lo, hi, k):
    check(alternating_steps, (300, lo, hi, k), native=True)
