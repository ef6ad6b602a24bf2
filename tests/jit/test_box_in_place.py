"""Ints boxed without a call where CPython caches them (-5..256: its own objects, found in its array of them:
``codegen.abi.SMALL_INT_STRIDE``), and list.append done in place while the list has room (``abi.LIST_APPEND_OK``;
PyList_Append resizes). Differential against CPython (values, identity of the cached ints, reference counts),
native through jit.stats."""

from __future__ import annotations

import sys

import pytest
from helpers import check

import jit
from codegen import abi


def appended(n, offset, step):
    out = []
    for i in range(n):
        out.append(offset + i * step)
    return out


def stored(items, offset, step):
    for i in range(len(items)):
        items[i] = offset + i * step
    return items[-1]


def rows(n):
    table = []
    for i in range(n):
        row = []
        for j in range(n):
            row.append(i * j % 7 - 3)
        table.append(row)
    return table


def test_the_layouts_are_found_on_3_11():
    """(Elsewhere the C-API boxes and appends: these tests then cover that path.)"""
    if sys.version_info[:2] == (3, 11) and not abi.FREE_THREADED:
        assert abi.SMALL_INT_STRIDE > 0 and abi.LIST_APPEND_OK


@pytest.mark.parametrize(
    "offset, step",
    [(-10, 1), (250, 1), (-5, 0), (256, 0), (257, 0), (-6, 0), (0, 3), (2**62, 2**50), (-(2**63) + 300, -1)],
)
def test_ints_around_the_cache_are_boxed_exactly(offset, step):
    check(appended, (300, offset, step), native=True)
    check(stored, ([0.5] * 300, offset, step), native=True)


def test_the_cached_ints_are_cpythons_own_objects():
    f = jit.jit(threshold=2)(appended)
    out = f(600, -5, 1)
    assert jit.stats(f)["native_entries"] > 0
    assert all(x is k - 5 for k, x in enumerate(out[:262]))  # (identity: CPython's cache, as the interpreter gives)
    g = jit.jit(threshold=2)(stored)
    out = [0.5] * 300
    g(out, 256, -1)
    assert jit.stats(g)["native_entries"] > 0
    assert all(out[k] is 256 - k for k in range(262))


def test_past_64_bits_leaves_and_goes_on():
    check(appended, (100, 2**63 - 50, 1), native=True)


def test_appends_across_resizes_and_a_list_of_lists():
    check(appended, (10_000, 3, 1), native=True)
    check(rows, (70,), native=True)


def test_reference_counts_of_cached_and_new_ints_stay_exact():
    """Each call puts every cached int in the list once: a reference too many or too few per box would move its
    count by the number of calls (100); the runtime's own counters move a few of them by a few."""
    f = jit.jit(threshold=2, side_exit_threshold=2)(appended)
    f(50, 0, 1)
    probes = list(range(-5, 257))
    before = [sys.getrefcount(k) for k in probes]
    for _ in range(100):
        out = f(262, -5, 1)
        big = f(100, 10**6, 1)
    assert out == probes and big == list(range(10**6, 10**6 + 100))
    del out
    assert all(abs(sys.getrefcount(k) - count) < 20 for k, count in zip(probes, before))
    plain = appended(100, 10**6, 1)
    assert [sys.getrefcount(x) for x in big] == [sys.getrefcount(x) for x in plain]  # (the list's alone)
    assert jit.stats(f)["native_entries"] > 0


def test_a_list_passed_in_and_appended_to_keeps_its_items():
    def grow(out, n):
        for i in range(n):
            out.append(i - 2)
        return len(out)

    check(grow, ([1.5, "x"], 500), ([], 3), native=True)
