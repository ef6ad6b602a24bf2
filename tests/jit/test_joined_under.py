"""Side traces joined under another joined side trace (``codegen.joined``: ``JoinedSide.under``). A loop whose
``if``/``elif``/``else`` went the first way when its root trace was recorded has its second way as a side trace
of the root and its third as a side trace of that one: the third is joined in the second's body, where its guard
fails, so that every way of the loop runs in one function (before, the third way left the joined loop at every
iteration that took it, into a function of its own and back through the root's). Results are CPython's (also
where a nested way raises, overflows or meets a value of another kind), and ``jit.stats`` shows which side traces
were joined and how often the loop left its functions."""

from __future__ import annotations

import pytest
from helpers import Args, check

from jit import jit

from .joins import leaves_of_one_call, side_traces

OPTS = {"threshold": 8, "side_exit_threshold": 4}


def classify(xs):
    a = b = c = 0
    for x in xs:
        if x < 10:
            a += 1
        elif x < 20:
            b += x
        else:
            c -= x
    return a, b, c


def four_ways(xs):
    a = b = c = d = 0
    for x in xs:
        if x < 10:
            a += 1
        elif x < 20:
            b += x
        elif x < 30:
            c -= x
        else:
            d ^= x
    return a, b, c, d


def first_way_first(n, ways=3):
    """Values whose first 40 take the first way (so the root trace is recorded there), then every way in turn."""
    return [5] * 40 + [(i * 7919) % (10 * ways) for i in range(n)]


def test_the_third_way_is_joined_under_the_second():
    data = first_way_first(3000)
    f = check(classify, data, data[:50], list(range(30)) * 50, options=OPTS, native=True).cpython_baseline
    sides = side_traces(f)
    assert len(sides) == 2
    assert sorted(len(t["joined"]) for t in sides) == [1, 2], sides  # the last holds both ways
    to_interpreter, parents = leaves_of_one_call(f, data)
    assert to_interpreter == 1  # the loop's end
    assert (
        sum(parents.values()) <= 2
    )  # into the second way's function, once into the third's; then every way stays there

    apart = jit(join_side_traces=False, **OPTS)(classify)
    apart(data)
    _, parents = leaves_of_one_call(apart, data)
    assert sum(parents.values()) > 1000  # compiled apart: a parent exit at every value that leaves the first way


def test_four_ways_are_joined_three_deep():
    data = first_way_first(4000, ways=4)
    f = check(four_ways, data, list(range(40)) * 30, options=OPTS, native=True).cpython_baseline
    sides = side_traces(f)
    assert sorted(len(t["joined"]) for t in sides) == [1, 2, 3], sides
    to_interpreter, parents = leaves_of_one_call(f, data)
    assert to_interpreter == 1
    assert sum(parents.values()) <= 3


def divide_on_the_third_way(xs, d):
    s = 0
    for x in xs:
        if x < 10:
            s += x  # (not s += 1: a counter of the root's, whose proof a division's addition would break)
        elif x < 20:
            s -= x
        else:
            s += 1000 // (x - d)  # ZeroDivisionError at x == d, inside the nested body
    return s


def test_zero_division_on_the_third_way():
    data = first_way_first(600)
    f = check(
        divide_on_the_third_way, Args(data, -1), Args(data, 25), Args(data, 5), options=OPTS, native=True
    ).cpython_baseline
    assert any(len(t["joined"]) == 2 for t in side_traces(f))


def overflow_on_the_third_way(xs, step):
    s = 0
    for x in xs:
        if x < 10:
            s -= x
        elif x < 20:
            s += x
        else:
            s += step  # past 2**63 on this way only: an exit inside the nested body
    return s


def test_int_overflow_on_the_third_way_goes_on_in_python_ints():
    data = first_way_first(600)
    f = check(
        overflow_on_the_third_way, Args(data, 3), Args(data, 2**61), Args(data, -(2**61)), options=OPTS, native=True
    ).cpython_baseline
    assert any(len(t["joined"]) == 2 for t in side_traces(f))


def kinds_on_the_third_way(xs):
    total = 0
    for x in xs:
        if x < 10:
            total += x
        elif x < 20:
            total -= 2
        else:
            total += x  # a float here, where the nested side trace expects an int
    return total


def test_a_value_of_another_kind_on_the_third_way():
    ints = first_way_first(600)
    mixed = [*ints[:400], 25.5, *ints[401:]]
    check(kinds_on_the_third_way, ints, mixed, ints, options=OPTS, native=True)


def late_on_every_way(xs):
    s = 0
    last = -1
    for x in xs:
        if x < 10:
            s += last
        elif x < 20:
            s -= 1
        else:
            s += 2 * last
        last = x  # assigned late: the ways before read the previous iteration's
    return s, last


def test_a_slot_assigned_late_read_on_the_third_way():
    data = first_way_first(600)
    f = check(late_on_every_way, data, data[:41], data[:45], options=OPTS, native=True).cpython_baseline
    assert any(len(t["joined"]) == 2 for t in side_traces(f))


def counted(xs, n):
    i = 0
    a = b = c = 0
    while i < n:
        x = xs[i]
        if x < 10:
            a += 1
        elif x < 20:
            b += x
        else:
            c -= x
        i += 1
    return a, b, c, i


def counted_twice_on_the_second_way(xs, n):
    i = 0
    a = b = c = 0
    while i < n:
        x = xs[i]
        if x < 10:
            a += 1
        elif x < 20:
            b += x
            i += 1  # (a second step on this way: past n - 1, it stops at n + 1)
        else:
            c -= x
        i += 1
    return a, b, c, i


# (the values after the first 40 go 0, 29, 28, ...: the third way is the root's side trace, the second way its)
@pytest.mark.parametrize("func, joined", [(counted, [1, 2]), (counted_twice_on_the_second_way, [1])])
def test_a_while_loops_counter_on_a_nested_way(func, joined):
    """i (and a) are the while loop's counters (``jit.optimizer.counters``: their additions unchecked, the room for
    them checked once per periodic check): a way joins only where the whole iteration adds no more to each than its
    step; else it is compiled apart (and comes back through the root's entry, which checks the room)."""
    data = first_way_first(2000)
    f = check(func, Args(data, len(data)), Args(data, 45), Args(data, 1), options=OPTS, native=True)
    assert sorted(len(t["joined"]) for t in side_traces(f.cpython_baseline) if t["joined"]) == joined


def assigned_before_the_third(xs):
    a = b = c = 0
    for x in xs:
        if x < 10:
            a += 1
        else:
            t = x * 2  # assigned on the second way only, before the third way's guard: not the loop's
            if t < 40:
                b += t
            else:
                c -= t
    return a, b, c


def test_a_slot_the_second_way_assigns_before_the_thirds_guard_keeps_it_apart():
    # (compiled apart, the second way's exit writes t to the buffer; joined, nothing would: not joined)
    data = first_way_first(600)
    f = check(assigned_before_the_third, data, options=OPTS, native=True).cpython_baseline
    assert sorted(len(t["joined"]) for t in side_traces(f)) == [0, 1]
