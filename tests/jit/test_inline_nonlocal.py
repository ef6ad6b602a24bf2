"""A nested function assigning its enclosing function's variable (`nonlocal count; count += 1`), called in a
compiled loop, is inlined (``jit.inline``): its store into the cell is checked where it is
(``_CHECK_STORE_CELL``) and made at the call's return (``_STORE_CELL_CHECKED``), so an exit in its body makes
the call again with nothing changed; reads of the cell in the call get the value stored. Each function runs plain
and under @jit (both baselines): the same results and exceptions, and native code ran."""

from __future__ import annotations

import pytest
from helpers import TEST_OPTIONS, check, define

import jit as jit_module
from jit import jit

SOURCE = """
def counter(n):
    count = 0
    def bump():
        nonlocal count
        count += 1
    for i in range(n):
        bump()
    return count

def tally(n):
    count = 0
    odd = 0.0
    def bump(i):
        nonlocal count, odd
        count += 1
        if i & 1:
            odd += 0.5
        return count * 2  # (the value stored, before the return makes the store)
    total = 0
    for i in range(n):
        total += bump(i) + count
    return total, count, odd

def raises_after_the_store(n):
    count = 0
    def bump(i):
        nonlocal count
        count += 1
        return 100 // (count - 200)  # (leaves after the check: the call made again stores once, and raises)
    total = 0
    for i in range(n):
        total += bump(i)
    return total, count

def exits_after_the_store(n, data):
    count = 0
    def bump(i):
        nonlocal count
        count += 1
        return data[i % len(data)] * 2  # (a float, then an int: the guard on its kind leaves)
    total = 0
    for i in range(n):
        total += bump(i)
    return total, count

def type_changes(n):
    value = 0
    def step(i):
        nonlocal value
        if i == n // 2:
            value = "s"  # (a str: stores of a str into it are no longer inlined)
        elif isinstance(value, str):
            value = value[:3] + "x"
        else:
            value += i
    for i in range(n):
        step(i)
    return value

def two_closures_one_cell(n):
    count = 0
    def inc():
        nonlocal count
        count += 1
        return get()  # (another closure over the same cell: read after the store, not inlined)
    def get():
        return count
    total = 0
    for i in range(n):
        total += inc() + get()
    return total, count

def setter_and_reader(n):
    k = 1
    def set_k(v):
        nonlocal k
        k = v
    def add_k(v):
        return v + k
    total = 0
    for i in range(n):
        total += add_k(i)
        if i % 5 == 0:
            set_k(i % 7)
    return total, k
"""


def ns():
    namespace: dict = {}
    define(SOURCE, "counter", namespace)
    return namespace


NS = ns()


def _inlined(jitted) -> bool:
    return "not inlined" not in jit_module.explain(jitted)


@pytest.mark.parametrize(
    "name, calls",
    [
        ("counter", [3000, 0]),
        ("tally", [3000, 1]),
        ("raises_after_the_store", [300, 150]),
        ("type_changes", [300, 2]),
        ("two_closures_one_cell", [300, 0]),
        ("setter_and_reader", [300, 1]),
    ],
)
def test_cpythons_results(name, calls):
    check(NS[name], *calls, native=True)


def test_exits_after_the_store_make_the_call_again():
    check(NS["exits_after_the_store"], (300, [1.5, 2.5]), (300, [1.5, 2, 3.5, 4]), (300, [1, 2]), native=True)


@pytest.mark.parametrize("name", ["counter", "tally", "setter_and_reader"])
def test_the_assigning_call_is_inlined(name):
    jitted = jit(**TEST_OPTIONS)(NS[name])
    for _ in range(3):
        assert jitted(300) == NS[name](300)
    assert _inlined(jitted), jit_module.explain(jitted)
    assert jit_module.stats(jitted)["native_entries"] > 0
