"""Nested trees with several exits (issue 8 item 1): an inner loop's tree may leave by its loop's end, a `break`,
a `return` or a guard in the middle of an iteration, and the outer trace follows whichever it took; a side
trace that leaves its loop (a `break`) or returns ends there instead of aborting. A warm call of each nest
enters native code once and leaves it at most twice (counted through jit.stats, never timed), and every
result is CPython's."""

from __future__ import annotations

import pytest
from helpers import check

import jit as jit_module
from jit import jit


def inner_breaks(n):
    found = 0
    for i in range(n):
        for j in range(100):
            if j * j > i + 50:
                found += j
                break
    return found


def half_breaks(n):
    found = 0
    for i in range(n):
        for j in range(40):
            if i % 2 == 0 and j == 20:
                found += 1000
                break
            found += j
    return found


def search(rows, x):
    for i in range(len(rows)):
        row = rows[i]
        for j in range(len(row)):
            if row[j] == x:
                return i * 1000 + j
    return -1


def trial_division(n):
    count = 0
    for k in range(2, n):
        d = 2
        while d * d <= k:
            if k % d == 0:
                break
            d += 1
        else:
            count += 1
    return count


def mid_iteration_exit(n):
    total = 0
    for i in range(n):
        for j in range(40):
            if j == i % 40:
                total += 1000
            else:
                total += j
    return total


def three_levels(n):
    total = 0
    for a in range(n):
        for b in range(20):
            if (a + b) % 7 == 3:
                break
            for c in range(30):
                if c * b > 100:
                    break
                total += a ^ b ^ c
    return total


def deep_return(n, target):
    for a in range(n):
        for b in range(n):
            for c in range(n):
                if a * 10000 + b * 100 + c == target:
                    return (a, b, c)
    return None


def for_else(n):
    hits = 0
    misses = 0
    for i in range(n):
        for j in range(2, 30):
            if i % j == 0 and i != j:
                hits += j
                break
        else:
            misses += 1
    return hits * 100000 + misses


def escape_time(width, height, limit):
    inside = 0
    for y in range(height):
        for x in range(width):
            cr = -2.0 + 2.5 * x / width
            ci = -1.25 + 2.5 * y / height
            zr = zi = 0.0
            k = 0
            while k < limit:
                zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
                if zr * zr + zi * zi > 4.0:
                    break
                k += 1
            if k == limit:
                inside += 1
    return inside


def breaks_then_returns(n, stop):
    total = 0
    for i in range(n):
        for j in range(50):
            if j > i % 13:
                break
            if i * 50 + j == stop:
                return total
            total += j
    return -total


ROWS = [[k * 100 + j for j in range(60)] for k in range(60)]

CASES = [
    (inner_breaks, (300,)),
    (half_breaks, (300,)),
    (search, (ROWS, 5049)),
    (trial_division, (3000,)),
    (mid_iteration_exit, (300,)),
    (three_levels, (60,)),
    (deep_return, (30, 292929)),
    (for_else, (400,)),
    (escape_time, (40, 30, 50)),
    (breaks_then_returns, (400, 19000)),
]


def warm_call(f, args):
    before = jit_module.stats(f)
    result = f(*args)
    after = jit_module.stats(f)
    return (
        result,
        after["native_entries"] - before["native_entries"],
        after["exits_to_interpreter"] - before["exits_to_interpreter"],
    )


@pytest.mark.parametrize("func, args", CASES, ids=[func.__name__ for func, _ in CASES])
def test_a_warm_call_enters_native_code_once(func, args):
    f = jit(func)
    for _ in range(6):
        assert f(*args) == func(*args)
    result, entries, exits = warm_call(f, args)
    assert result == func(*args)
    assert entries == 1 and exits <= 2, jit_module.explain(f)
    aborts = jit_module.stats(f)["aborts_by_code"]
    assert "INNER_EXIT" not in aborts, aborts  # (INNER_FIRST may happen in warm-up: inner loops first)


@pytest.mark.parametrize("func, args", CASES, ids=[func.__name__ for func, _ in CASES])
def test_same_results_as_cpython(func, args):
    """Through both baselines, with loops compiling after a couple of iterations (so recordings meet the
    inner trees' exits in every order)."""
    check(func, args, args, native=True)


@pytest.mark.parametrize("n", [0, 1, 2, 5, 17, 64])
def test_searches_that_find_or_not(n):
    rows = [[(k * 31 + j * 17) % 97 for j in range(n)] for k in range(n)]
    check(search, *[(rows, x) for x in (0, 5, 96, 1000, 44, 0)])


def test_a_return_ends_a_side_trace():
    """The exit that returns grows a side trace that ends with the return value (no abort), and the loop
    keeps running natively."""

    def find(values, x):
        for i in range(len(values)):
            if values[i] == x:
                return i * 2
        return -1

    f = jit(threshold=2, side_exit_threshold=2)(find)
    values = list(range(50))
    for x in (10, 20, 30, 40, 45, 49, 99):
        assert f(values, x) == find(values, x)
    stats = jit_module.stats(f)
    assert "RETURN_IN_LOOP" not in stats["aborts_by_code"]
    sides = [trace for tree in stats["trees"] for trace in tree["traces"] if trace["kind"] == "side"]
    assert sides and all(trace["ends_with"] == "exit" for trace in sides), stats["trees"]


def test_a_break_ends_a_side_trace_at_the_loop_exit():
    def first_square_over(n, limit):
        out = 0
        for i in range(n):
            for j in range(100):
                if j * j > limit + i:
                    out += j
                    break
        return out

    f = check(first_square_over, (50, 30), (50, 60), native=True)
    stats = jit_module.stats(f)
    assert "LEFT_LOOP" not in stats["aborts_by_code"]
    inner = [tree for tree in stats["trees"] if tree["loop_line"] == first_square_over.__code__.co_firstlineno + 3]
    assert inner and inner[0]["side_traces"] >= 1, stats["trees"]


PEER_TREES = """
LIMIT = 9223372036854775807


def f(a, b, x, y, data):
    n = LIMIT - b
    s = 0.1
    t = 2.5
    for i in range(-9223372036854775765, -9223372036854775761, 2):
        if not ((data[b % len(data)] < y) or (t != s)):
            b -= len(data)
        else:
            w0 = 0
            while True:
                w0 += 1
                if w0 > 3:
                    break
                for k in range(-5, -5, 1):
                    y **= 0
                b, n, i = n, i, b
    return (a, b, n, x, y, s, t)
"""


def test_an_exit_of_a_peer_tree_the_inner_tree_jumped_into_is_followed():
    """(Found by the program generator.) The inner loop has two trees, for two type maps; the one called
    tail-jumps into the other, whose exit comes back from the call: the outer recording goes on from it."""
    from helpers import TEST_OPTIONS, define

    func = define(PEER_TREES, "f")
    nan = float("nan")
    calls = [
        (-1, -(2**63), nan, 1e16, [4.7e16, -3.7e16, -5.3e16, 2.9e87, 9.2e18]),
        (-7, -84986779, 9.1e-205, -1.3e-218, [-2, 4611686018427387871, 2**64, 9]),
    ]
    check(func, *calls)
    f = jit(**TEST_OPTIONS)(define(PEER_TREES, "f"))
    for args in calls:
        for _ in range(2):
            f(*args)
    stats = jit_module.stats(f)
    assert "INNER_EXIT" not in stats["aborts_by_code"], stats["aborts"]
    assert stats["native_entries"] > 0 and stats["traces_compiled"] > 0, stats
