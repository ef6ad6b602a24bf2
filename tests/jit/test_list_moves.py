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
    assert "_STORE_SUBSCR_LIST_OBJECT" in uops_of(f) and "_NEW_REF" in uops_of(f)


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
