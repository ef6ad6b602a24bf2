"""Calls of functions held in variables (jit.inline, ``_GUARD_CALLEE_VALUE``): a helper defined inside the jitted
function, or a function passed to it as an argument, called from a hot loop, is inlined like a global one,
guarded on its code and globals (a ``def`` run again makes a new function object with the same code); a builtin
function held in a variable gets its own uops, guarded on its identity. Every result, exception and reference
count is CPython's."""

from __future__ import annotations

import math
import sys
import traceback

import pytest
from helpers import assert_native, check, define

import jit as jit_module
from jit import jit

SOURCE = """
import math

def integrate(n):
    def f(x):
        return math.sin(x) * math.exp(-x / 3)

    total = 0.0
    h = 10.0 / n
    for k in range(n):
        total += f(k * h + h / 2) * h
    return total

def apply_sum(g, n):
    total = 0
    for i in range(n):
        total += g(i)
    return total

def square(v):
    return v * v

def shifted(v):
    return v + 1000

def alternating(n):
    def up(v):
        return v + 1
    def down(v):
        return v - 2
    fs = (up, down)
    total = 0
    for i in range(n):
        f = fs[i % 3 == 0]
        total += f(i)
    return total

def with_default(n, k):
    def scale(v, factor=k):
        return v * factor
    total = 0
    for i in range(n):
        total += scale(i) + scale(i, 2)
    return total

def closure(n, k):
    def add_k(v):
        return v + k
    total = 0
    for i in range(n):
        total += add_k(i)
    return total

def make_adder(k):
    def add_k(v):
        return v + k
    def set_k(value):
        nonlocal k
        k = value
    def drop_k():
        nonlocal k
        del k
    return add_k, set_k, drop_k

def apply_and_poke(g, poke, n, when):
    total = 0
    for i in range(n):
        total += g(i)
        if i % when == 0:
            poke(i)
    return total

def table_reader(n):
    table = [i * 0.5 for i in range(16)]
    def get(i):
        return table[i & 15]
    total = 0.0
    for i in range(n):
        total += get(i)
    return total

def dict_reader(n):
    weights = {0: 1, 1: 3}
    def get(i):
        return weights[i & 1]
    total = 0
    for i in range(n):
        total += get(i)
    return total

def inverses(values):
    def inverse(x):
        return 1 / x
    total = 0.0
    for v in values:
        total += inverse(v)
    return total

def nested_code():
    def helper():
        return 1
    total = 0
    for i in range(3):
        total += i
    return helper.__code__

def lambdas(n):
    sq = lambda v: v * v  # noqa: E731
    total = 0
    for i in range(n):
        total += sq(i)
    return total

def make_scaler(k):
    return lambda v: v * k

TRIPLE = make_scaler(3)

def global_closure(n):
    total = 0
    for i in range(n):
        total += TRIPLE(i)
    return total

def twin_lambdas():
    return (lambda v: v + 1, lambda v: v - 1)

def with_default_lambda(n):
    scale = lambda v, k=2: v * k  # noqa: E731
    total = 0
    for i in range(n):
        total += scale(i) + scale(i, 3)
    return total

class Counter:
    def __init__(self, start):
        self.total = start

    def add(self, v):
        self.total += v
        return self.total

class Doubler(Counter):
    def add(self, v):
        self.total += 2 * v
        return self.total

def bound_calls(c, n):
    add = c.add
    s = 0
    for i in range(n):
        s += add(i)
    return s

def builtin_sum(g, values):
    total = 0.0
    for v in values:
        total += g(v)
    return total
"""


def program(name: str, namespace: dict | None = None):
    return define(SOURCE, name, namespace)


def _uops(f) -> str:
    return jit_module.dump(f, "uops")


def check_baseline(plain, *calls):
    """check, demanding native execution of the CPython baseline alone (a ``def`` inside the function is left to
    CPython: the tier-1 interpreter runs no such function); returns the baseline."""
    baseline = check(plain, *calls).cpython_baseline
    assert_native(baseline)
    return baseline


def test_a_helper_defined_in_the_function_is_inlined():
    baseline = check_baseline(program("integrate"), (2000,), (300,))
    uops = _uops(baseline)
    assert "_GUARD_CALLEE_VALUE" in uops and "_CALL_GENERIC" not in uops, uops
    assert "with the calls of integrate.<locals>.f inlined" in jit_module.explain(baseline)


def test_a_function_passed_as_an_argument_is_inlined_and_guarded():
    namespace: dict = {}
    plain = program("apply_sum", namespace)
    square, shifted = namespace["square"], namespace["shifted"]
    jitted = check(plain, (square, 500), (shifted, 500), (square, 300), (abs, 400), native=True)
    uops = _uops(jitted)
    assert "_GUARD_CALLEE_VALUE" in uops, uops


def test_a_variable_switching_between_functions_in_the_loop():
    check_baseline(program("alternating"), (600,), (7,))


def test_defaults_of_a_helper_made_at_each_call_are_guarded():
    """`def scale(v, factor=k)` makes a new defaults tuple at each call: a call that takes the default reads
    the one of this call, never the one recorded."""
    check_baseline(program("with_default"), (400, 3), (400, 5), (300, 3.5))


def test_a_closure_reading_its_enclosing_functions_variable_is_inlined():
    uops = _uops(check_baseline(program("closure"), (400, 3), (400, -7), (300, 2**62)))
    assert "_LOAD_FREE" in uops and "_CALL_GENERIC" not in uops, uops


def test_a_closures_variable_assigned_between_and_during_calls_is_read_at_every_call():
    """set_k (nonlocal: inlined, its store made at the call's return) changes k: add_k, inlined, reads its cell at
    every call."""
    namespace: dict = {}
    plain = program("apply_and_poke", namespace)
    add_k, set_k, _ = namespace["make_adder"](3)
    f = jit(threshold=2, side_exit_threshold=2)(plain)
    for when, value in ((1000, 5), (1000, -4), (10, 7), (3, 2**62)):
        set_k(value)
        expected = plain(add_k, set_k, 400, when)
        set_k(value)
        assert f(add_k, set_k, 400, when) == expected
    assert "_LOAD_FREE" in _uops(f), _uops(f)
    assert jit_module.stats(f)["native_entries"] > 0


def test_a_closures_variable_deleted_mid_loop_raises_cpythons_name_error():
    namespace: dict = {}
    plain = program("apply_and_poke", namespace)
    f = jit(threshold=2, side_exit_threshold=2)(plain)
    add_k, _, drop_k = namespace["make_adder"](3)
    assert f(add_k, abs, 300, 1000) == plain(add_k, abs, 300, 1000)
    outcomes = []
    for variant in (plain, f):
        add_k, _, drop_k = namespace["make_adder"](3)
        with pytest.raises(NameError) as info:
            variant(add_k, lambda i: drop_k() if i == 150 else None, 300, 1)
        outcomes.append((str(info.value), traceback.extract_tb(info.value.__traceback__)[-1].line))
    assert outcomes[0] == outcomes[1], outcomes
    assert "cannot access free variable 'k'" in outcomes[0][0]
    assert "_LOAD_FREE" in _uops(f)


def test_a_closure_over_a_list_is_inlined_and_one_over_a_dict_called():
    assert "_LOAD_FREE" in _uops(check_baseline(program("table_reader"), (500,)))
    assert "_CALL_GENERIC" in _uops(check_baseline(program("dict_reader"), (500,)))


def test_code_of_a_held_function_reassigned_between_calls():
    namespace: dict = {}
    plain = program("apply_sum", namespace)
    f = jit(threshold=2, side_exit_threshold=2)(plain)
    helper = define("def helper(v):\n    return v * 3\n", "helper")
    assert f(helper, 300) == plain(helper, 300)
    helper.__code__ = namespace["shifted"].__code__
    assert f(helper, 300) == plain(helper, 300) == sum(i + 1000 for i in range(300))
    assert jit_module.stats(f)["native_entries"] > 0


def test_an_exception_in_an_inlined_held_callee_is_cpythons():
    """The guard before the division leaves at the caller's CALL, which makes the call for real: the traceback
    goes through the nested helper's own line."""
    plain = program("inverses")
    values = [1.0, 2.0, 4.0] * 30 + [0.0]
    check_baseline(plain, (values,), ([0.5] * 50,))
    f = jit(threshold=2, side_exit_threshold=2)(program("inverses"))
    f([0.5] * 50)
    with pytest.raises(ZeroDivisionError) as info:
        f(values)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert frames[-1].name == "inverse" and frames[-1].line == "return 1 / x"
    assert frames[-2].name == "inverses" and frames[-2].line == "total += inverse(v)"


def test_a_nested_function_made_by_the_jitted_function_has_the_users_code():
    plain = program("nested_code")
    f = jit(threshold=1)(plain)
    for _ in range(3):
        assert f() is plain()


def test_a_lambda_held_in_a_variable_is_inlined():
    uops = _uops(check_baseline(program("lambdas"), (500,), (3,)))
    assert "_GUARD_CALLEE_VALUE" in uops and "_CALL_GENERIC" not in uops, uops
    uops = _uops(check_baseline(program("with_default_lambda"), (500,)))
    assert "_CALL_GENERIC" not in uops, uops


def test_a_lambda_closure_passed_as_an_argument_is_inlined():
    namespace: dict = {}
    plain = program("apply_sum", namespace)
    scale3, scale_big = namespace["make_scaler"](3), namespace["make_scaler"](2**61)
    jitted = check(plain, (scale3, 500), (scale_big, 300), (scale3, 400), native=True)
    uops = _uops(jitted)
    assert "_LOAD_FREE" in uops and "_CALL_GENERIC" not in uops, uops


def test_a_closure_bound_to_a_global_reads_its_cell():
    uops = _uops(check(program("global_closure"), (500,), (3,), native=True))
    assert "_GUARD_CALLEE " in uops and "_LOAD_FREE" in uops and "_CALL_GENERIC" not in uops, uops


def test_two_lambdas_on_one_line_are_called_with_cpythons_results():
    """Their code objects differ only in their columns: neither is inlined (a generic call), and each gives its
    own result."""
    namespace: dict = {}
    plain = program("apply_sum", namespace)
    up, down = namespace["twin_lambdas"]()
    jitted = check(plain, (up, 400), (down, 400), native=True)
    assert "_CALL_GENERIC" in _uops(jitted)


def test_a_builtin_function_held_in_a_variable_gets_its_uops():
    values = [0.25 * k for k in range(200)]
    jitted = check(program("builtin_sum"), (math.sqrt, values), (math.cos, values), (abs, values), native=True)
    uops = _uops(jitted)
    assert "_GUARD_CALLEE_VALUE" in uops and "_CALL_MATH_UNARY" in uops, uops


def test_held_functions_keep_their_reference_counts():
    namespace: dict = {}
    plain = program("apply_sum", namespace)
    square = namespace["square"]
    f = jit(threshold=2, min_native_iterations=0)(plain)
    for _ in range(50):  # (until every trace is compiled: their constants hold references of their own)
        f(square, 100)
        f(math.sqrt, 100)
    before = sys.getrefcount(square), sys.getrefcount(math.sqrt)
    for _ in range(1000):
        f(square, 100)
        f(math.sqrt, 100)
    after = sys.getrefcount(square), sys.getrefcount(math.sqrt)  # (outside the assert)
    assert after == before
    assert jit_module.stats(f)["native_iterations"] >= 100_000


def test_a_second_function_passed_to_the_loop_gets_a_peer_tree():
    """`apply_sum(square, n)`, then `apply_sum(shifted, n)`: the hoisted guard of the first tree fails at its
    entry, and a peer root tree specialized on the second function takes over there (WhenHot.PEER): each call
    runs all its iterations natively, in one entry."""
    namespace: dict = {}
    plain = program("apply_sum", namespace)
    square, shifted = namespace["square"], namespace["shifted"]
    f = jit(threshold=2, side_exit_threshold=2)(plain)
    for _ in range(6):
        for g in (square, shifted):
            assert f(g, 300) == plain(g, 300)
    trees = jit_module.dump(f, "trees")
    assert "2 tree(s)" in trees and "jumps to" in trees, trees
    for g in (square, shifted):
        before = jit_module.stats(f)
        assert f(g, 1000) == plain(g, 1000)
        after = jit_module.stats(f)
        assert after["native_entries"] - before["native_entries"] == 1
        assert after["native_iterations"] - before["native_iterations"] >= 1000


def test_many_functions_passed_to_one_loop():
    """Peers take half of max_trees_per_loop; beyond them, a side trace of the last peer's entry does each
    iteration (checking for signals itself); a function that makes the sum a float gets a tree of its own entry
    type map. Nothing is blacklisted, every result is CPython's."""
    namespace: dict = {}
    plain = program("apply_sum", namespace)
    callees = [
        namespace["square"],
        namespace["shifted"],
        abs,
        namespace["make_scaler"](3),
        namespace["make_scaler"](5),
        math.sqrt,
        namespace["make_adder"](7)[0],
    ]
    jitted = check(plain, *[(g, 300) for g in callees * 3], native=True)
    for variant in (jitted, jitted.cpython_baseline):
        assert "blacklisted" not in jit_module.explain(variant), jit_module.explain(variant)
        assert not jit_module.stats(variant)["limits_hit"], jit_module.stats(variant)["limits_hit"]


def test_a_bound_method_held_in_a_variable_is_inlined():
    """`add = c.add`, then `add(i)` in the loop: guarded to be a bound method whose function has add's code, its
    receiver guarded by class and handed to the inlined body as self (attribute stores made as CPython's). (Fresh
    receivers, not check's deep copies: a copied instance keeps its attributes in a dict of its own, whose store
    is a generic one, which an inlined body may not make.)"""
    namespace: dict = {}
    plain = program("bound_calls", namespace)
    counter, doubler = namespace["Counter"], namespace["Doubler"]
    f = jit(threshold=2, side_exit_threshold=2)(plain)
    for _ in range(3):
        for make, start in ((counter, 0), (counter, 2**62), (doubler, 5), (counter, 1.5)):
            mine, theirs = make(start), make(start)
            result = f(mine, 300)
            expected = plain(theirs, 300)
            assert type(result) is type(expected) and result == expected
            assert type(mine.total) is type(theirs.total) and mine.total == theirs.total
    uops = _uops(f)
    assert "_METHOD_SELF" in uops and "_GUARD_CALLEE_VALUE" in uops, uops
    assert jit_module.stats(f)["native_entries"] > 0
