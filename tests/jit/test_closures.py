"""A closure as the jitted function (``@jit`` on a function defined inside another, reading its variables): its
tier-1 code reads the cells (``LOAD_FREE``, ``_LOAD_FREE`` on the function itself), its instrumented code and
forwarders take the same free variables (``jit.frontend.instrument``, ``jit.wrapper.forwarder``), so its loops
run natively as any function's; it ran as plain CPython before. Every result and exception is CPython's."""

from __future__ import annotations

import pytest
from helpers import assert_native, check, define

import jit as jit_module
from jit import jit

SOURCE = """
def scaled_sum(k):
    def inner(n):
        s = 0
        for i in range(n):
            s += i * k
        return s
    return inner

def with_helper(k):
    scale = 0.5
    def helper(x):
        return x * k + 1
    def inner(n):
        s = 0.0
        for i in range(n):
            s += helper(i) * scale
        return s
    return inner

def rebound_in_the_loop():
    k = 1
    def bump():
        nonlocal k
        k += 1
    def reset():
        nonlocal k
        k = 1
    def inner(n):
        reset()
        s = 0
        for i in range(n):
            s += k
            if i % 100 == 99:
                bump()  # (the cell changes under the loop: each read reads it again)
        return s
    return inner

def a_dict_in_a_cell():
    table = {0: 2, 1: 3}
    def inner(n):
        s = 0
        for i in range(n):
            s += table[i & 1]
        return s
    return inner

def objects_in_cells():
    seen = {}
    word = "abc"
    class Box:
        def __init__(self, v):
            self.v = v
    box = Box(3)
    def swap():
        nonlocal seen, box
        seen = dict(seen)
        box = Box(box.v + 1)
    def reset():
        nonlocal seen, box
        seen = {}
        box = Box(3)
    def inner(n):
        reset()
        s = 0
        for i in range(n):
            seen[i % 7] = i
            s += len(word) + box.v + len(seen)
            if i % 500 == 499:
                swap()  # (both cells rebound under the loop: each read reads them again)
        return s, sorted(seen.items()), box.v
    return inner

def unbound_until_later():
    def inner(n):
        s = 0
        for i in range(n):
            s += later
        return s
    inner_before = inner
    later = 5
    return inner_before

def never_bound():
    def inner(n):
        s = 0
        for i in range(n):
            s += i
            if i == n - 1:
                s += missing
        return s
    return inner
    missing = 1

def nested_loops(rows):
    def inner(n):
        total = 0
        for i in range(n):
            for r in rows:
                total += r * i
        return total
    return inner
"""


def closure(factory: str, *args):
    return define(SOURCE, factory, {})(*args)


def test_a_closures_loop_runs_natively():
    f = closure("scaled_sum", 7)
    check(f, 3000, 0, 1, native=True)
    jitted = jit(f)
    assert jitted(3000) == f(3000) and jitted.__code__.co_freevars == f.__code__.co_freevars
    assert "runs as plain CPython" not in jit_module.explain(jitted)


def test_a_helper_of_the_enclosing_function_is_inlined():
    jitted = check(closure("with_helper", 3), 3000, native=True)
    text = jit_module.explain(jitted.cpython_baseline)
    assert "with_helper.<locals>.helper inlined" in text, text


def test_a_cell_rebound_under_the_loop_is_read_again():
    check(closure("rebound_in_the_loop"), 3000, 50, native=True)


def test_a_cell_holding_another_object_is_read_natively():
    """A dict, a str, an instance in a cell (FREE_VARIABLE stopped the recording: only numbers, None, lists,
    tuples and functions were read): guarded by class as a list's item is, read again at each use."""
    jitted = check(closure("a_dict_in_a_cell"), 3000, native=True)
    assert "FREE_VARIABLE" not in jit_module.stats(jitted.cpython_baseline)["aborts_by_code"]
    jitted = check(closure("objects_in_cells"), 3000, 700, native=True)
    assert "FREE_VARIABLE" not in jit_module.stats(jitted.cpython_baseline)["aborts_by_code"]


@pytest.mark.parametrize("factory", ["unbound_until_later", "never_bound"])
def test_unbound_free_variables_raise_cpythons_name_error(factory):
    check(closure(factory), 300, 1)


def test_nested_loops_in_a_closure():
    check(closure("nested_loops", [1, 2, 3]), 2000, 3, native=True)


def test_a_method_with_super_and_a_closure_stays_plain():
    source = """
def make(k):
    class A:
        def total(self, n):
            return n
    class B(A):
        def total(self, n):
            s = 0
            for i in range(n):
                s += super().total(i) * k
            return s
    return B
"""
    B = define(source, "make", {})(3)
    jitted = jit(B.total)
    assert jitted(B(), 100) == B().total(100)
    assert "runs as plain CPython" in jit_module.explain(jitted)


def test_native_assertion_through_stats():
    jitted = jit(closure("scaled_sum", 2))
    for _ in range(3):
        jitted(5000)
    assert_native(jitted)
