"""Moving list items as they are (`a[i], a[j] = a[j], a[i]`): a number read out of a list and stored back
unchanged is stored as the very object read (as CPython does), with a reference the trace takes where it reads
it (_NEW_REF, owned: codegen.ownership), since the first store may drop the list's reference to the second.
Differential against CPython, native through jit.stats, reference counts exact."""

from __future__ import annotations

import sys
import tracemalloc

import pytest
from helpers import check

import jit


def reverse(a):
    i = 0
    j = len(a) - 1
    while i < j:
        a[i], a[j] = a[j], a[i]
        i += 1
        j -= 1
    return a[0]


def rotate3(a, times):
    n = len(a)
    for t in range(times):
        for i in range(n - 2):
            a[i], a[i + 1], a[i + 2] = a[i + 1], a[i + 2], a[i]
    return a[-1]


def self_swap(a):
    for i in range(len(a)):
        a[i], a[i] = a[i], a[i]
    return len(a)


def between(a, b):
    for i in range(min(len(a), len(b))):
        a[i], b[i] = b[i], a[i]
    return len(a)


def copy_back(a, k):
    for i in range(len(a)):
        x = a[i]
        a[i] = k
        a[(i + 1) % len(a)] = x
    return a[0]


def uops_of(f):
    return jit.dump(f, "uops")


BIG = [10**12 + k for k in range(40)]


@pytest.mark.parametrize(
    "items",
    [list(range(60)), [float(k) / 3 for k in range(61)], [True, False, 3, 2.5] * 10, BIG, [-0.0, float("nan")] * 30],
)
def test_reverse_in_place(items):
    f = check(reverse, (items,), native=True)
    # the swap moves the list's pointers (jit.optimizer.moves): no type guard, reference or unboxing is left
    listing = uops_of(f)
    assert "_MOVE_LIST_ITEMS " in listing
    assert not any(name in listing for name in ("_STORE_SUBSCR_LIST", "_NEW_REF", "_GUARD_TYPE", "_UNBOX"))


def test_rotations_of_three():
    check(rotate3, (list(range(30)), 5), (BIG[:20], 3), native=True)


def test_an_item_swapped_with_itself():
    check(self_swap, (list(BIG),), native=True)


def test_the_same_list_passed_twice():
    """Aliasing: both names are one list, so every store is seen by the next read."""
    check(between, (list(BIG), list(range(40))), native=True)
    f = jit.jit(threshold=2)(between)
    same, expected = list(BIG), list(BIG)
    assert f(same, same) == between(expected, expected) and same == expected
    assert jit.stats(f)["native_entries"] > 0


def test_a_value_kept_across_the_store_that_dropped_it():
    """x = a[i]; a[i] = k drops the list's reference to x's object; x is stored after: it must still be that
    object."""
    items = [10**15 + k for k in range(50)]
    check(copy_back, (items, 7), native=True)


def test_reference_counts_of_moved_objects_stay_exact():
    items = [10**14 + k for k in range(64)]
    counts = [sys.getrefcount(x) for x in items]
    f = jit.jit(threshold=2, side_exit_threshold=2)(reverse)
    work = list(items)
    for _ in range(200):
        f(work)
    assert sorted(work) == items
    del work
    assert [sys.getrefcount(x) for x in items] == counts
    assert jit.stats(f)["native_entries"] > 0


def test_no_leak_over_many_iterations():
    f = jit.jit(threshold=2, side_exit_threshold=2)(reverse)
    work = [10**13 + k for k in range(1000)]
    f(work)
    tracemalloc.start()
    try:
        for _ in range(100):
            f(work)
        first = tracemalloc.get_traced_memory()[0]
        for _ in range(100):
            f(work)
        second = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert second - first < 10_000
    assert jit.stats(f)["native_entries"] > 0


def store_twice(a, b):
    for i in range(len(a)):
        a[i], b[i] = b[i], b[i]
    return len(a)


def test_one_object_stored_into_two_lists():
    """The reference the trace took is the second store's to keep; the first store takes one of its own."""
    items = [10**14 + k for k in range(64)]
    counts = [sys.getrefcount(x) for x in items]
    f = jit.jit(threshold=2, side_exit_threshold=2)(store_twice)
    for _ in range(50):
        a, b = [0] * 64, list(items)
        assert f(a, b) == 64 and a == items and b == items
    del a, b
    assert [sys.getrefcount(x) for x in items] == counts
    assert jit.stats(f)["native_entries"] > 0
    check(store_twice, ([0] * 40, list(BIG)), native=True)


def test_a_store_that_leaves_before_storing_keeps_its_reference_exact():
    """copy_back stores x over an item it never read: where that item is no number the store's guard leaves,
    with x's reference still the trace's (released or handed to the interpreter, not to the list)."""
    marker = "not a number"
    items = [10**15 + k for k in range(50)]
    counts = [sys.getrefcount(x) for x in items]
    marker_count = sys.getrefcount(marker)
    f = jit.jit(threshold=2, side_exit_threshold=2)(copy_back)
    for _ in range(30):
        work = list(items)
        work[37] = marker
        expected = list(work)
        assert f(work, 7) == copy_back(expected, 7) and work == expected
    del work, expected
    assert [sys.getrefcount(x) for x in items] == counts
    assert sys.getrefcount(marker) == marker_count
    assert jit.stats(f)["native_entries"] > 0


# --- moves of any items (jit.optimizer.moves: a swap moves the list's pointers, whatever the items are) -------


def swap_at(a, p, q):
    """Swaps at indices read from lists: some equal (i == j), some negative, maybe one out of range. (Written
    `a[p[k]], a[q[k]] = ...` the stores would read q[k] again after the first store, which may have changed
    q if it is a: those stay plain stores.)"""
    for k in range(len(p)):
        x = p[k]
        y = q[k]
        a[x], a[y] = a[y], a[x]
    return len(a)


def test_swaps_at_equal_negative_and_out_of_range_indices():
    items = [10**14 + k for k in range(30)]
    p = [k % 30 for k in range(0, 300, 7)]
    q = [(-k) % 30 - (30 if k % 2 else 0) for k in range(0, 300, 11)][: len(p)]
    assert any(x == y for x, y in zip(p, q)) and any(y < 0 for y in q)
    f = check(swap_at, (list(items), p, q), (list(range(30)), p, q), native=True)
    assert "_MOVE_LIST_ITEMS " in uops_of(f)
    bad = list(q)
    bad[20] = 30  # IndexError at the 21st swap: the 20 before it done, as CPython leaves the list
    check(swap_at, (list(items), p, bad), (list(items), p, [-31] * len(p)))


MIXED = [k if k % 3 else (f"s{k}" if k % 2 else (k, None)) for k in range(90)] + [None, 2.5, True, [1], {"k": 1}]


def test_items_of_any_type_are_moved_natively():
    """Recorded over ints, the trace moves strs, None, tuples, lists and dicts too, without leaving."""
    f = jit.jit(threshold=2, side_exit_threshold=2)(reverse)
    for _ in range(3):
        f(list(range(200)))
    before = jit.stats(f)
    work, expected = list(MIXED), list(MIXED)
    assert f(work) == reverse(expected) and work == expected
    after = jit.stats(f)
    assert after["native_entries"] > before["native_entries"]
    assert after["traces_compiled"] == before["traces_compiled"]  # (no side trace was needed)
    assert after["native_iterations"] - before["native_iterations"] >= len(MIXED) // 2 - 1


def test_items_changing_type_mid_loop():
    """The list is mixed from the start, the trace is recorded where the two items are numbers."""
    check(reverse, (list(MIXED),), (MIXED[::-1],), native=True)
    check(swap_at, (list(MIXED), list(range(0, 90, 3)), list(range(89, 0, -3))), native=True)


def swap_both(a, b):
    """Two lists, maybe one: each swap moves one list's items (a and b the same list swap twice)."""
    i = 0
    j = len(a) - 1
    while i < j:
        a[i], a[j] = a[j], a[i]
        b[i], b[j] = b[j], b[i]
        i += 1
        j -= 1
    return len(b)


def test_two_lists_that_may_be_one():
    f = check(swap_both, (list(BIG), list(range(40))), native=True)
    assert uops_of(f).count("_MOVE_LIST_ITEMS ") >= 2
    g = jit.jit(threshold=2, side_exit_threshold=2)(swap_both)
    for _ in range(4):
        same, expected = list(BIG) + ["x", None], list(BIG) + ["x", None]
        assert g(same, same) == swap_both(expected, expected) and same == expected == list(BIG) + ["x", None]
    assert jit.stats(g)["native_entries"] > 0


class Tracked:
    """An item whose freeing would run Python code: moving it must never free it, nor count it wrong."""

    freed = 0

    def __del__(self):
        Tracked.freed += 1


def test_moved_objects_keep_exact_reference_counts_and_are_never_freed():
    items = [Tracked() for _ in range(33)] + [10**15 + k for k in range(33)] + [f"s{k}" for k in range(33)]
    counts = [sys.getrefcount(x) for x in items]
    f = jit.jit(threshold=2, side_exit_threshold=2)(reverse)
    f(list(range(100)))
    work = list(items)
    for _ in range(101):
        f(work)
    assert work == items[::-1]
    del work
    assert [sys.getrefcount(x) for x in items] == counts and Tracked.freed == 0
    assert jit.stats(f)["native_entries"] > 0
    del items
    assert Tracked.freed == 33


def test_no_leak_moving_objects_of_any_type():
    f = jit.jit(threshold=2, side_exit_threshold=2)(swap_at)
    work = [str(k) for k in range(500)] + [float(k) for k in range(500)]
    p, q = list(range(0, 1000, 2)), list(range(999, 0, -2))
    f(work, p, q)
    tracemalloc.start()
    try:
        for _ in range(100):
            f(work, p, q)
        first = tracemalloc.get_traced_memory()[0]
        for _ in range(100):
            f(work, p, q)
        second = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert second - first < 10_000
    assert jit.stats(f)["native_entries"] > 0


def rotate_at(a, ks):
    for k in ks:
        a[k], a[k + 1], a[k + 2] = a[k + 1], a[k + 2], a[k]
    return len(a)


def test_rotations_where_two_indices_name_one_item():
    """k = -1 on a list of two: a[-1], a[0], a[1] name items 1, 0, 1; CPython stores a[0]'s object twice and
    drops a[1]'s. The move of three items leaves before storing (_MOVE_LIST_ITEMS_DISTINCT) and the interpreter
    does that statement."""
    items = [10**14 + k for k in range(40)]
    f = check(rotate_at, (list(items), list(range(30)) * 3), native=True)
    assert "_MOVE_LIST_ITEMS_DISTINCT" in uops_of(f)
    g = jit.jit(threshold=2, side_exit_threshold=2)(rotate_at)
    g(list(items), list(range(30)) * 3)
    counts = [sys.getrefcount(x) for x in items]
    for work, ks in ((items[:2], [-1, -2] * 10), (items[:3], [0, -1, -3, -2] * 10), (list(items), [5, -3, 7] * 10)):
        work, expected = list(work), list(work)
        assert g(work, ks) == rotate_at(expected, ks) and work == expected
    del work, expected
    assert [sys.getrefcount(x) for x in items] == counts
    assert jit.stats(g)["native_entries"] > 0
    check(rotate_at, (items[:2], [-1, -2, -1] * 10), (list(items), [0, 5, -3, 3, -4] * 8), native=True)
