"""Side traces joined with their tree's loop (``codegen.joined``): a side trace that jumps back to its own tree is
compiled in one function with a copy of the loop, so a loop whose branch alternates leaves the root's function
once per entry and then runs both ways without an exit. Results are compared with CPython (``helpers.check``);
``jit.stats`` shows that the code ran natively, which side traces were joined, and how often each exit was taken:
the parent exit once per entry when joined, at every other iteration when not."""

import sys

import pytest
from helpers import Args, check, define

import jit as jit_module
from jit import jit

from .joins import leaves_of_one_call, side_traces

OPTS = {"threshold": 8, "side_exit_threshold": 4}


def alternate(n):
    s = 0
    for i in range(n):
        if i & 1:
            s += i * 3
        else:
            s -= i
    return s


def three_ways(xs, lo, hi):
    """A histogram's shape: two guards, each growing a side trace back to the loop (values out of range)."""
    inside = 0
    below = 0
    above = 0
    for x in xs:
        if x < lo:
            below += 1
        elif x >= hi:
            above += 1
        else:
            inside += x
    return inside, below, above


def collatz_steps(n):
    total = 0
    for start in range(1, n + 1):
        m = start
        while m != 1:
            if m % 2 == 0:
                m //= 2
            else:
                m = 3 * m + 1
            total += 1
    return total


def nested_branchy(n):
    total = 0
    for i in range(n):
        for j in range(n):
            if (i + j) & 1:
                total += i * j & 255
            else:
                total -= (i + j) & 15
    return total


def test_alternating_branch_leaves_the_root_once_per_call():
    f = check(alternate, 3000, 5, 0, options=OPTS, native=True).cpython_baseline
    assert [t["joined"] for t in side_traces(f)] == [[side_traces(f)[0]["symbol"]]]
    to_interpreter, parents = leaves_of_one_call(f, 3000)
    assert to_interpreter == 1  # the loop's end
    assert list(parents.values()) == [1]  # into the joined function once; then both ways stay there
    assert f(3000) == alternate(3000)

    apart = jit(join_side_traces=False, **OPTS)(alternate)
    apart(3000)
    assert all(not t["joined"] for t in side_traces(apart))
    to_interpreter, parents = leaves_of_one_call(apart, 3000)
    assert to_interpreter == 1
    assert list(parents.values()) == [1500]  # the parent exit at every other iteration


def test_two_side_traces_are_joined_in_the_second_ones_function():
    data = [(i * 37) % 101 - 10 for i in range(2000)]
    f = check(three_ways, Args(data, 0, 80), Args(data[:7], 0, 80), options=OPTS, native=True).cpython_baseline
    sides = side_traces(f)
    assert len(sides) == 2
    assert sorted(len(t["joined"]) for t in sides) == [1, 2]  # the second holds both ways out of range
    to_interpreter, parents = leaves_of_one_call(f, data, 0, 80)
    assert to_interpreter == 1
    # (the root's function goes into one side trace's function at the first value out of range, which may go
    # once into the other's, where everything stays)
    assert sum(parents.values()) <= 2, parents


def test_nested_loops_with_joined_inner_side_trace():
    f = check(nested_branchy, 60, 7, 1, options=OPTS, native=True).cpython_baseline
    sides = side_traces(f)
    assert sides and all(t["joined"] for t in sides)
    to_interpreter, parents = leaves_of_one_call(f, 60)
    assert to_interpreter <= 2
    assert sum(parents.values()) <= 60  # at most once per entry of the inner loop (60 outer iterations)
    assert "joined with its tree's loop" in jit_module.dump(f, "trees")


def test_collatz_inner_while_loop():
    f = check(collatz_steps, 300, 30, options=OPTS, native=True).cpython_baseline
    assert any(t["joined"] for t in side_traces(f))
    to_interpreter, parents = leaves_of_one_call(f, 300)
    assert to_interpreter <= 2
    assert sum(parents.values()) <= 300  # at most once per entry of the inner loop


# --- exits from inside a joined side trace's body: exact state ------------------------------------------------


def overflow_on_the_side(n, step):
    s = 0
    for i in range(n):
        if i % 2:
            s += step  # past 2**63 on this way only: the side trace's exit, inside the joined function
        else:
            s -= 1
    return s


def test_int_overflow_in_a_joined_side_trace_goes_on_in_python_ints():
    f = check(
        overflow_on_the_side, Args(400, 5), Args(400, 2**61), Args(400, -(2**61)), options=OPTS, native=True
    ).cpython_baseline
    assert any(t["joined"] for t in side_traces(f))
    assert f(400, 2**61) == overflow_on_the_side(400, 2**61)


def type_change_on_the_side(xs):
    total = 0
    for x in xs:
        if x & 1:
            total += x
        else:
            total -= 1
    return total


def test_a_value_of_another_kind_on_the_side_path():
    ints = list(range(500))
    mixed = [*range(300), 301.5, *range(302, 500)]  # a float where the side trace expects an int (odd)
    check(type_change_on_the_side, ints, mixed, ints, options=OPTS, native=True)


def divide_on_the_side(xs, d):
    s = 0
    for x in xs:
        if x % 2:
            s += 1000 // (x - d)  # ZeroDivisionError at x == d, in the side trace's body
        else:
            s += x
    return s


def test_zero_division_inside_a_joined_side_trace():
    xs = list(range(1, 600))
    f = check(divide_on_the_side, Args(xs, -1), Args(xs, 301), Args(xs, 302), options=OPTS, native=True)
    assert any(t["joined"] for t in side_traces(f.cpython_baseline))


G = 5


def global_on_the_side(n):
    s = 0
    for i in range(n):
        if i & 1:
            s += G  # a global only the side trace reads (its guard, hoisted to the side trace's entry)
        else:
            s -= 1
    return s


def test_a_global_read_only_on_the_side_path_rebound_between_calls():
    global G
    f = jit(**OPTS)(global_on_the_side)
    try:
        for value in (5, 7, 2**62, 1.5, 5):
            G = value
            assert f(1000) == global_on_the_side(1000)
            assert f(1000) == global_on_the_side(1000)
    finally:
        G = 5
    assert jit_module.stats(f)["native_entries"] > 0


def floats_by_sign(xs):
    pos = 0.0
    neg = 0.0
    for x in xs:
        if x > 0.0:
            pos += x
        else:
            neg -= x
    return pos, neg


def test_list_items_read_on_both_ways_keep_their_reference_counts():
    xs = [((i * 7919) % 200 - 100) / 8 for i in range(3000)]
    xs[11] = -0.0
    xs[12] = float("nan")
    f = check(floats_by_sign, xs, xs[:5], options=OPTS, native=True).cpython_baseline
    assert any(t["joined"] for t in side_traces(f))
    before = [sys.getrefcount(x) for x in xs[:50]]
    for _ in range(3):
        f(xs)
    assert [sys.getrefcount(x) for x in xs[:50]] == before


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 1000])
def test_trip_counts(n):
    check(alternate, n, 1000, n, options=OPTS, native=None)


def once_in_a_while(xs, every):
    total = 0
    for i in range(len(xs)):
        if i % every == 3:
            total -= xs[i]
        else:
            total += xs[i] & 7
    return total


def test_a_way_taken_once_in_a_while_runs_in_the_joined_fast_copy():
    """The root's loop has a fast copy (no overflow nor bounds checks: range analysis), and so has the joined copy
    (``codegen.joined._joined_fast``: the side trace's body where its guard fails): once in the joined function,
    a call stays there, in its fast copy, whichever way each iteration takes (the root's function went back to,
    20 times a call, before: an exit each time the way out was taken)."""
    xs = list(range(20000))
    f = check(once_in_a_while, Args(xs, 1000), Args(xs, 2), Args(xs[:50], 7), options=OPTS, native=True)
    f = f.cpython_baseline
    f(xs, 1000)
    assert any(t["joined"] for t in side_traces(f))
    (side,) = side_traces(f)
    before = side["fast_runs"]
    to_interpreter, parents = leaves_of_one_call(f, xs, 1000)
    (side,) = side_traces(f)
    assert side["fast_runs"] - before >= 1
    assert to_interpreter == 1  # the loop's end
    assert sum(parents.values()) == 1  # into the joined function once


# found by the program generator (tests/test_generated.py, TRACEJIT_FUZZ_EXAMPLES=3000): `k` is assigned late in
# the while loop's root (`k = +(...)`, line "elif"), not on the way its joined side trace takes (`a = ...`)
LATE_ON_ONE_WAY = """
import math
LIMIT = 9223372036854775806
SCALE = -0.0


def f(a, b, x, y, data):
    n = a
    m = a
    s = math.hypot(x, a)
    t = x
    i = j = k = 0
    tup = (x, SCALE, x)
    words = ('a', 'bb', '', 'a b', 'ünï')
    tally = {}
    for vi in data:
        for j in range(-3, 12):
            vi *= 2
            if (data[a % len(data)] + x) < (tup[-1] - (-4611686018427387904)):
                a = int(data[0])
                x = abs(tup[4611686018427387905 % 3])
                for k in range((b + b) % 1):
                    j -= -4611686018427387904
                    vi = min(s / vi, -x)
                    b = int(data[j % len(data)])
            elif y < (t * vi):
                for k in range((b ^ m) % 1):
                    tally[words[4611686018427387905 % 5]] = tally.get(words[4611686018427387905 % 5], 0) + (abs(y) ** 0.5)
                    x = y = data[(~1) % len(data)] = (3 ** 0) % 1.5
                k -= words[255 % 5] not in tally
                if (vi + vi) <= len(data):
                    s %= -2.5
                    break
                else:
                    vi, t = j / (x or 1), (65537 and vi) * 2
                    a += k
                    vi *= 5
            elif not (x <= vi):
                a = (((n // 1000) | (i & LIMIT)) + ((b - j) if (k is None) else (len(data) if (j % 3 == 1) else j))) % 1000003
                tally[words[n % 5]] = y
                x += 4611686018427387905
        else:
            w0 = 13
            while w0 > 0:
                w0 -= 1
                b = (vi > vi > 0.1 != 1e300) % 97
                if (m >= 2147483647) and math.isfinite(vi):
                    tally[words[b % 5]] = tally.get(words[b % 5], 0) + data[w0 % len(data)]
                    data[(9223372036854775807 * m) % len(data)] -= data[0]
                elif not (n % 3 == 0):
                    k = +(math.floor(x) + len(data))
                    t += b
                else:
                    a = (j + a) >> 4
        n >>= 67
    data[(len(data) + LIMIT) % len(data)] //= 4294967296
    s /= 0.5
    k += min(j, i) ** 1
    return (a, b, n, m, i, j, k, x, y, s, t, tally)
"""


@pytest.mark.parametrize("opt_level", [0, 2])
def test_a_slot_assigned_late_on_the_roots_way_only_stays_the_interpreters_until_assigned(opt_level):
    """The joined loop goes on in its fast copy once warmed up, which takes the slots assigned late as assigned
    (read from the buffer). An entry whose iterations all took the side trace's way never assigned `k`: the fast
    copy took the interpreter's object for an int and the loop's exit handed back its address as `k`. It goes on
    there only once every such slot is assigned (``codegen.function._check_periodic``)."""
    func = define(LATE_ON_ONE_WAY, "f")
    calls = [
        Args(-10, 4611686018427387904, -5.891968044396519e16, -5.359397644260844e34, [-150492, 253]),
        Args(-4611686018427387929, 8, 1e-300, -3.29110506371912e197, [36893488147419103232, 9223372036854775822]),
        Args(2, -6, 10.52378288341093, 48.0, [-9223372036854775843, 9]),
    ]
    check(func, *calls, options={"opt_level": opt_level}, native=True)
