"""Differential tests of `global` declarations: stores, augmented assignments, deletes, loop targets and
assignment expressions on module globals, from loops that CPython hands to the JIT (and in tier 1 whole);
the loops that only read globals keep running natively."""

import sys

import pytest
from helpers import Args, define
from tier1_check import check_t1 as check

import jit as jit_module
from jit import jit

MODULE = """
total = 0
scale = 2
counter = 0


def accumulate(n):
    global total
    for i in range(n):
        total += i * scale
    return total


def reset_and_count(n):
    global total, counter
    total = 0
    counter = 0
    i = 0
    while i < n:
        counter = counter + 1
        i += 1
    return total, counter


def rebinding_mid_loop(n):
    global scale
    out = 0
    for i in range(n):
        out += scale
        if i == n // 2:
            scale = scale + 1
    result = (out, scale)
    scale = 2
    return result


def loop_target(n):
    global last
    for last in range(n):
        pass
    return last


def walrus(n):
    global seen
    s = 0
    for i in range(n):
        s += (seen := i % 3)
    return s, seen


def delete(flag):
    global temp
    temp = 5
    if flag:
        del temp
    return flag


def delete_missing():
    global never_defined
    del never_defined


def read_after_delete():
    global temp2
    temp2 = 1
    del temp2
    return temp2


def declared_inside_the_loop(n):
    s = 0
    for i in range(n):
        global inner
        inner = i
        s += inner
    return s, inner
"""


def module_functions():
    namespace: dict = {}
    define(MODULE, "accumulate", namespace)
    return namespace


@pytest.mark.parametrize(
    "name, calls",
    [
        ("reset_and_count", [0, 5, 300]),
        ("rebinding_mid_loop", [1, 10, 400]),
        ("loop_target", [1, 5, 200]),
        ("walrus", [1, 7, 300]),
        ("delete", [False, True]),
        ("delete_missing", [()]),
        ("read_after_delete", [()]),
        ("declared_inside_the_loop", [1, 4, 300]),
    ],
)
def test_same_as_cpython(name, calls):
    # (check runs the plain and jitted functions in turn on one module: these functions reset what they read)
    func = module_functions()[name]
    check(func, *[Args(*c) if isinstance(c, tuple) else Args(c) for c in calls])


def test_accumulate_updates_module_state_like_cpython():
    plain_ns, jit_ns = module_functions(), module_functions()
    jitted = jit(threshold=2)(jit_ns["accumulate"])
    for n in (0, 3, 200, 500):
        assert jitted(n) == plain_ns["accumulate"](n)
        assert jit_ns["total"] == plain_ns["total"]
    jit_ns["scale"] = plain_ns["scale"] = 7  # rebound between calls
    assert jitted(100) == plain_ns["accumulate"](100)
    assert "global statement" not in jit_module.explain(jitted)
    assert "runs as plain CPython" not in jit_module.explain(jitted)


def test_a_store_to_a_global_is_not_compiled_yet_and_says_so():
    ns = module_functions()
    jitted = jit(threshold=2)(ns["accumulate"])
    jitted(300)
    stats = jit_module.stats(jitted)
    assert stats["aborts_by_code"].get("NOT_COMPILED", 0) >= 1
    assert any("STORE_GLOBAL" in reason for reason in stats["aborts"])


def test_a_loop_that_only_reads_a_global_the_function_declares_still_runs_natively():
    source = """
limit = 5


def f(n):
    global limit
    s = 0
    for i in range(n):
        s += i % limit
    limit = limit + 1
    return s
"""
    ns: dict = {}
    f = define(source, "f", ns)
    plain_ns: dict = {}
    g = define(source, "f", plain_ns)
    jitted = jit(threshold=2)(f)
    for n in (10, 300, 300):
        assert jitted(n) == g(n)
    assert ns["limit"] == plain_ns["limit"]
    assert jit_module.stats(jitted)["native_entries"] >= 1


def test_unbound_global_read_gives_cpythons_error():
    ns = module_functions()
    jitted = jit(ns["read_after_delete"])
    with pytest.raises(NameError, match="name 'temp2' is not defined"):
        jitted()
    with pytest.raises(NameError, match="name 'never_defined' is not defined"):
        jit(ns["delete_missing"])()
    assert sys.exc_info() == (None, None, None)
