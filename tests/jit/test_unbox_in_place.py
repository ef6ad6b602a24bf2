"""Ints read out of lists are unboxed in place (one 30-bit digit and the sign in ob_size, CPython 3.11's layout:
``codegen.abi.SMALL_INTS_OK``) and through the C-API otherwise; either way an int past 64 bits leaves to the
interpreter, which goes on with Python ints. Differential against CPython, native through jit.stats."""

from __future__ import annotations

import sys

import pytest
from helpers import check

import jit
from codegen import abi

EDGES = [0, 1, -1, 7, -7, 2**30 - 1, -(2**30 - 1), 2**30, -(2**30), 2**31, 2**60 - 1, -(2**60), 2**62, 2**63 - 1]
EDGES += [-(2**63), True, False]


def total(items):
    s = 0
    for x in items:
        s += x
    return s


def indexed(items):
    s = 0
    k = 0
    for i in range(len(items)):
        k = items[i] - items[-1 - i]  # negative indices too
        s ^= k & 0xFFFF
    return s, k


def test_ints_are_read_in_place_on_3_11():
    """(On other versions the C-API reads them: these tests then cover that path.)"""
    if sys.version_info[:2] == (3, 11) and not abi.FREE_THREADED:
        assert abi.SMALL_INTS_OK


@pytest.mark.parametrize("value", EDGES)
def test_every_size_of_int_reads_exactly(value):
    items = [value] * 20 + [value // 3, -value] * 10
    check(total, (items,), native=True)
    check(indexed, (items,), native=True)


def test_an_int_past_64_bits_mid_loop_leaves_and_the_sum_goes_on():
    for big in (2**63, -(2**63) - 1, 2**100, -(2**64)):
        items = [5] * 30 + [big] + [-3] * 30
        check(total, (items,), native=True)
        check(indexed, (items,), native=True)


def test_a_sum_past_2_63_from_small_items():
    check(total, ([2**62 - 1] * 10,), native=True)


def test_a_float_among_the_ints():
    check(total, ([3] * 30 + [0.5] + [2] * 30,), native=True)


def test_small_items_run_without_exits_once_warm():
    f = jit.jit(threshold=2, side_exit_threshold=2)(total)
    items = [k - 500 for k in range(1000)] + [2**40, -(2**45)]
    assert f(items) == total(items)
    before = jit.stats(f)["exits_to_interpreter"]
    assert f(items) == total(items)
    assert jit.stats(f)["exits_to_interpreter"] - before == 1  # the loop's end
