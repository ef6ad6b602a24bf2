"""Differential tests of generator expressions consumed at once by a builtin (``jit.frontend.consumers``): every
consumer, in hot loops (native) and on empty iterables; the order of effects (what any/all pull from a user's
iterator); sum's types; a callee that is not the builtin (rebound mid-loop, a global shadowing it, a str subclass's
join); PEP 479; nesting, scoping and reference counts."""

from __future__ import annotations

import sys
import weakref

import pytest
from helpers import Args, check, define

import jit as jit_module
from jit import jit
from jit.frontend.consumers import SUM_IS_LEFT_FOLD

ROWS = [[1, 5, 2], [], [7, 0, 3], [4, 4, 4], [0, 0, 0]] * 4


def every_consumer(rows, t):
    out = []
    for row in rows:
        out.append(any(x > t for x in row))
        out.append(all(x < t for x in row))
        out.append(sum(x * x for x in row))
        out.append(sum((x for x in row), 100))
        out.append(sum((x for x in row), start=-1))
        out.append(list(x + t for x in row))
        out.append(tuple(x for x in row if x))
        out.append(set(x % 3 for x in row))
        out.append(frozenset(x for x in row))
        out.append(sorted(x for x in row))
        out.append(sorted((x for x in row), key=lambda v: -v))
        out.append(sorted((x for x in row), reverse=True))
        out.append("-".join(str(x) for x in row))
        out.append(", ".join(f"<{x}>" for x in row if x != t))
    return out


def test_every_consumer_runs_natively():
    check(every_consumer, (ROWS, 3), (ROWS, 10), ([], 0), native=True)


def over_ranges_and_tuples(n):
    total = 0
    for i in range(n):
        total += sum(j for j in range(i)) + sum(k for k in (i, i + 1)) + any(j > 3 for j in range(i))
    return total


def test_ranges_and_tuples():
    check(over_ranges_and_tuples, 30, 0, native=True)


class Counted:
    """An iterator over items that counts its next() calls."""

    def __init__(self, items):
        self.items = list(items)
        self.calls = 0

    def __iter__(self):
        return self

    def __next__(self):
        self.calls += 1
        if not self.items:
            raise StopIteration
        return self.items.pop(0)


def early_exit(rows):
    out = []
    for row in rows:
        first = Counted(row)
        out.append((any(x > 2 for x in first), first.calls, first.items))
        second = Counted(row)
        out.append((all(x < 2 for x in second), second.calls, second.items))
        third = Counted(row)
        out.append((any(y for x in third for y in range(x) if y > 1), third.calls, third.items))
    return out


def test_any_and_all_stop_pulling_where_cpython_does():
    check(early_exit, ([[1, 3, 5, 0], [0, 1], [], [5]] * 5,), native=True)


def sums(rows):
    out = []
    for row in rows:
        out.append(sum(x for x in row))
    return out


def test_sum_overflowing_64_bits():
    big = 2**62
    check(sums, ([[big, big, big], [-big, -big, -big, -big], [2**63 - 1, 1]] * 5,), native=True)


def test_sum_of_floats_and_mixed():
    check(
        sums,
        ([[0.1] * 10, [1e16, 1.0, -1e16], [1, 0.5, 2**60], [-0.0], [float("nan"), 1]] * 5,),
        native=True,
    )


def test_sum_of_strings_raises_cpythons_type_error():
    check(sums, ([[1, 2]] * 5 + [["a", "b"]],), ([["a"]],))


def sum_with_start(rows, start):
    out = []
    for row in rows:
        out.append(sum((x for x in row), start))
    return out


@pytest.mark.parametrize("start", ["", b"", bytearray(), [], 0.5])
def test_sum_start_of_every_kind(start):
    rows = [[[1], [2]]] * 5 if start == [] else [[1, 2]] * 5
    check(sum_with_start, (rows, start))


@pytest.mark.skipif(SUM_IS_LEFT_FOLD, reason="3.12 on only")
def test_sum_is_not_inlined_where_cpython_compensates():
    def f(rows):
        return [sum(x for x in row) for row in rows]

    check(f, ([[0.1] * 10] * 5,))


SHADOWS = """
def rebinding(rows):
    global any
    out = []
    for i, row in enumerate(rows):
        t = i % 3
        if i == 6:
            any = lambda gen: ("mine", list(gen))
        out.append(any(x > t for x in row))
    del any
    return out


def shadowed(rows):
    out = []
    for row in rows:
        out.append(any(x > 1 for x in row))
        out.append(sum(x for x in row))
    return out


def joined(seps):
    out = []
    for sep in seps:
        out.append(sep.join(str(d) for d in range(4)))
    return out
"""


def test_a_callee_rebound_mid_loop_gets_the_generator():
    f = define(SHADOWS, "rebinding")
    check(f, (ROWS,), native=True)


def test_a_global_shadowing_the_builtin_gets_the_generator():
    namespace = {"any": lambda gen: ("shadow", tuple(gen)), "sum": lambda gen: len(list(gen))}
    f = define(SHADOWS, "shadowed", namespace)
    check(f, (ROWS,), native=True)


class Sep(str):
    def join(self, items):
        return "sub:" + str.join(self, items)


def test_join_of_a_str_subclass_calls_its_join():
    f = define(SHADOWS, "joined")
    check(f, ([",", Sep("+"), ";"] * 5,), native=True)


def join_non_str(rows):
    out = []
    for row in rows:
        out.append(",".join(x for x in row))
    return out


def test_join_of_a_non_str_item_raises_cpythons_type_error():
    check(join_non_str, ([["a", "b"]] * 5 + [["a", 3]],))


def stop_in_body(rows):
    out = []
    for row in rows:
        it = iter(row)
        out.append(list(next(it) for _ in range(2)))
    return out


def test_stop_iteration_in_the_body_becomes_runtime_error():
    check(stop_in_body, ([[1, 2, 3]] * 10 + [[1]],), ([[]],))
    f = jit(threshold=2, side_exit_threshold=2)(stop_in_body)
    f([[1, 2]] * 10)
    assert jit_module.stats(f)["native_entries"] > 0
    with pytest.raises(RuntimeError, match="generator raised StopIteration") as info:
        f([[1, 2]] * 10 + [[1]])
    assert type(info.value.__cause__) is StopIteration
    assert info.value.__context__ is info.value.__cause__
    assert info.value.__suppress_context__


def exhaustion_is_no_error(rows):
    # (a StopIteration subclass from an iterator the expression loops over ends it, as a loop's)
    out = []
    for row in rows:
        out.append(sum(x for x in Ending(row)))
    return out


class Ending:
    def __init__(self, items):
        self.items = list(items)

    def __iter__(self):
        return self

    def __next__(self):
        if not self.items:
            raise Ended
        return self.items.pop()


class Ended(StopIteration):
    pass


def test_the_end_of_an_iterator_is_no_error():
    check(exhaustion_is_no_error, (ROWS,), native=True)


def nested_and_scoped(rows, x):
    out = []
    for row in rows:
        t = len(row)
        out.append(sum(sum(a * b for a in row) for b in row if b != t))
        out.append(any(any(a > b + t for a in row) for b in row))
        out.append(list(x for x in row))
        out.append([sum(v for v in range(r)) for r in row])
    return out, x


def reads_unbound(rows, bind):
    out = []
    for row in rows:
        if bind:
            k = 2
        out.append(sum(x * k for x in row))
        out.append(any(x > k for x in row))
    return out


def test_reading_an_unbound_local_raises_cpythons_name_error():
    check(reads_unbound, (ROWS, True), (ROWS, False), ([], False))


def test_nested_expressions_reading_loop_variables_and_no_leak():
    check(nested_and_scoped, (ROWS, "outer"), native=True)


class Tracked:
    def __init__(self, value):
        self.value = value


def test_reference_counts_over_many_iterations():
    def f(items, n):
        total = 0
        for _ in range(n):
            total += sum(item.value for item in items)
            total += any(item.value > 100 for item in items)
            total += len(tuple(item for item in items))
        return total

    items = [Tracked(i) for i in range(5)]
    jitted = jit(threshold=2, side_exit_threshold=2)(f)
    before = [sys.getrefcount(item) for item in items]
    assert jitted(items, 1000) == f(items, 1000)
    assert jit_module.stats(jitted)["native_entries"] > 0
    assert [sys.getrefcount(item) for item in items] == before


class Sized:
    def __len__(self):
        return 1


def test_the_last_element_is_released_with_the_expression():
    def f(rows):
        out = []
        for row in rows:
            out.append(sum(len(x) for x in row))
        return out

    jitted = jit(threshold=2, side_exit_threshold=2)(f)
    jitted([[Sized()]] * 10)
    assert jit_module.stats(jitted)["native_entries"] > 0
    item = Sized()
    probe = weakref.ref(item)
    rows = [[Sized()] for _ in range(10)] + [[item]]
    del item
    assert jitted(rows) == [1] * 11
    del rows
    assert probe() is None


def test_args_with_keywords():
    check(every_consumer, Args(ROWS, t=2))


def minimum_and_maximum(rows, t):
    out = []
    for row in rows:
        out.append(min((x for x in row), default=None))
        out.append(max((x * t for x in row if x != t), default=-1))
        out.append(min((x for x in row), key=lambda v: abs(v - t), default=0))
        out.append(max((x for x in row), key=None, default="none"))
        out.append(max(str(x) for x in row) if row else "")
    return out


def test_min_and_max():
    check(minimum_and_maximum, (ROWS, 3), (ROWS, 0), ([], 1), native=True)


def min_of_nothing(rows):
    out = []
    for row in rows:
        out.append(min(x for x in row))
        out.append(max((x for x in row), key=lambda v: -v))
    return out


class Ordered:
    """Compared by `<` and `>`, each comparison counted: min and max compare in CPython's order."""

    log = []

    def __init__(self, v):
        self.v = v

    def __lt__(self, other):
        Ordered.log.append(("<", self.v, other.v))
        return self.v < other.v

    def __gt__(self, other):
        Ordered.log.append((">", self.v, other.v))
        return self.v > other.v


def min_max_order(rows):
    Ordered.log.clear()
    out = []
    for row in rows:
        out.append(min(Ordered(x) for x in row).v)
        out.append(max(Ordered(x) for x in row).v)
    return out, list(Ordered.log)


def test_min_and_max_of_nothing_and_their_order_of_comparisons():
    check(min_of_nothing, ([[1, 2]] * 5 + [[]],), ([[3, 1, 2]] * 5,), native=True)
    check(min_max_order, ([[3, 1, 2, 1, 5, 5]] * 6,), native=True)
