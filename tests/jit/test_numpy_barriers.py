"""Arrays changed by Python code that a trace runs through the generic object path (a barrier): made read-only
(`setflags` in a helper), given another dtype (`setattr(a, "dtype", ...)`). What the trace knew of the array
before the call (its dtype and layout, that it is writeable) is checked again at its next use, so the loop does
what CPython does: NumPy's ValueError on the write into a read-only array, the elements read as the new dtype.
For an array the loop was given (its checks were hoisted to the trace's entry: the barrier checks them again)
and for one it made itself (np.zeros: known without a check, until Python code ran)."""

from __future__ import annotations

import pytest
from helpers import check, define

np = pytest.importorskip("numpy")

SOURCE = """
import numpy as np


def freeze(a, writeable):
    a.setflags(write=writeable)


def frozen_given(a, n, stop):
    total = 0.0
    for i in range(n):
        freeze(a, i < stop)
        a[i % 4] = i * 0.5
        total += a[(i + 1) % 4]
    a.setflags(write=True)
    return total


def frozen_made(n, stop):
    total = 0.0
    for i in range(n):
        a = np.zeros(4)
        freeze(a, i < stop)
        a[i % 4] += 1.0 + i
        total += a[i % 4]
    return total


def retyped_made(n, when):
    total = 0.0
    for i in range(n):
        a = np.ones(4)
        setattr(a, "dtype", np.float64 if i < when else np.int64)
        total += a[i % 4]
    return total
"""

NAMES = ("frozen_given", "frozen_made", "retyped_made")


@pytest.fixture(scope="module")
def funcs():
    return {name: define(SOURCE, name) for name in NAMES}


def test_a_given_array_made_read_only_by_a_call_in_the_loop_raises_numpys_error(funcs):
    check(funcs["frozen_given"], (np.zeros(4), 300, 1000), (np.zeros(4), 300, 200), native=True)


def test_an_array_the_loop_made_then_made_read_only_by_a_call_raises_numpys_error(funcs):
    check(funcs["frozen_made"], (300, 1000), (300, 200), native=True)


def test_an_array_the_loop_made_then_given_another_dtype_by_a_call_is_read_as_that_dtype(funcs):
    check(funcs["retyped_made"], (300, 1000), (300, 200), native=True)
