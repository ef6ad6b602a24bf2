"""Slices of exact lists and tuples with int (or None) bounds (``_LIST_SLICE``, ``_TUPLE_SLICE``): C code that runs no
Python code, so no barrier (they went through the generic subscript before). Each function checked against CPython
(values, types, the items' identity, a slice of a list changed in the loop), and through the uop listing that the
slice is the native uop, not the generic subscript."""

from __future__ import annotations

import operator
import sys

from helpers import check

import jit as jit_module
from jit import jit

N = 300


def chunk_sums(data, width):
    sums = []
    for start in range(0, len(data), width):
        chunk = data[start : start + width]
        sums.append(sum(chunk))
    return sums


def edges(data, k):
    out = []
    for i in range(len(data)):
        out.append(len(data[-k:]) + len(data[: i - k]) + len(data[i:]) + len(data[::-2]) + len(data[i:-k:2]))
    return out


def tuple_windows(t, n):
    total = 0
    for i in range(n):
        w = t[i % 7 : i % 7 + 3]
        total += w[0] + len(w)
    return total, type(w).__name__


def growing(n):
    xs = [0]
    seen = 0
    for i in range(n):
        head = xs[:3]
        xs.append(i)
        seen += len(head) + head[-1]
    return seen, xs[-3:]


def same_items(items):
    out = []
    for i in range(len(items)):
        out.append(items[i : i + 2])
    return all(a[0] is items[i] for i, a in enumerate(out)), len(out)


class Index:
    def __init__(self, i):
        self.i = i

    def __index__(self):  # (Python code: a slice of it is the generic subscript, a barrier)
        return self.i


def by_object(data, start):
    total = 0
    for i in range(N):
        total += len(data[start:])
    return total


def _listing(jitted):
    return jit_module.dump(jitted.cpython_baseline, "uops") + jit_module.dump(jitted, "uops")


def test_list_slices_are_native():
    data = list(range(1000))
    jitted = check(chunk_sums, (data, 16), (data, 7), (data[:5], 16), ([], 3), native=True)
    listing = _listing(jitted)
    assert "_LIST_SLICE" in listing and "_BINARY_SUBSCR_GENERIC" not in listing, listing


def test_bounds_negative_none_steps_and_out_of_range():
    jitted = check(edges, (list(range(40)), 3), (list(range(40)), 100), (list(range(3)), 0), native=True)
    assert "_BINARY_SUBSCR_GENERIC" not in _listing(jitted)


def test_tuple_slices_are_native():
    jitted = check(tuple_windows, (tuple(range(20)), N), (tuple(float(i) for i in range(20)), N), native=True)
    assert "_TUPLE_SLICE" in _listing(jitted)


def test_a_slice_of_a_list_the_loop_changes():
    check(growing, 0, 5, N, native=True)


def test_a_slice_holds_the_very_items():
    items = [10**6 + i for i in range(N)]  # (ints no cache holds: identity is the item's own)
    assert check(same_items, (items,), native=True)(items) == (True, N)
    before = [sys.getrefcount(x) for x in items]
    f = jit(threshold=2)(same_items)
    for _ in range(3):
        f(items)
    assert [sys.getrefcount(x) for x in items] == before


def test_a_bound_with_index_is_the_generic_subscript():
    jitted = check(by_object, (list(range(50)), Index(3)), native=True)
    assert "_BINARY_SUBSCR_GENERIC" in _listing(jitted)


def appended_results(values):
    out = []
    for v in values:
        out.append(operator.index(v))  # (a generic call returning that very int)
    return all(a is b for a, b in zip(out, values)), sum(out)


def test_a_number_a_generic_call_returns_is_appended_as_that_object():
    """The int a generic call returns, unboxed, is appended as that object (as CPython appends it), not a new one."""
    values = [10**6 + i for i in range(N)]
    jitted = check(appended_results, (values,), native=True)
    assert jitted(values) == appended_results(values) == (True, sum(values))
