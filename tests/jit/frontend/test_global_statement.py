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


def test_a_loop_storing_a_global_runs_natively():
    ns = module_functions()
    jitted = jit(threshold=2)(ns["accumulate"])
    jitted(300)
    stats = jit_module.stats(jitted)
    assert stats["native_iterations"] > 250 and not stats["aborts_by_code"], stats
    assert "_STORE_GLOBAL" in jit_module.dump(jitted, "uops")


STORES = """
COUNT = 0
TOTAL = 0.0
FLAG = False
VALUE = 1


def bump(n):
    global COUNT, TOTAL, FLAG
    for i in range(n):
        COUNT += 1
        TOTAL += i * 0.5
        FLAG = i % 2 == 0
    return COUNT, TOTAL, FLAG


def nested(n):
    global COUNT
    s = 0
    for i in range(n):
        for j in range(20):
            COUNT += j
        s += COUNT
    return s, COUNT


def changes_type(n, when):
    global VALUE
    VALUE = 1
    for i in range(n):
        if i == when:
            VALUE = 0.5  # int to float mid-loop
        VALUE = VALUE * 3
        if VALUE > 1000:
            VALUE = VALUE - 999
    return VALUE


def overflows(n):
    global VALUE
    VALUE = 3
    for i in range(n):
        VALUE = VALUE * 7  # past 2**63 after 23 iterations
    out = VALUE
    VALUE = 1
    return out


def replaces_an_object(n):
    global VALUE
    VALUE = [1, 2, 3]  # a list: dropping it natively could run Python code
    total = 0
    for i in range(n):
        VALUE = i
        total += VALUE
    return total


def deletes(n):
    global VALUE
    for i in range(n):
        VALUE = i
        if i == n - 1:
            del VALUE
    VALUE = 1
    return n
"""


def stores():
    namespace: dict = {}
    define(STORES, "bump", namespace)
    return namespace


@pytest.mark.parametrize(
    "name, calls",
    [
        ("bump", [(0,), (5,), (300,), (300,)]),
        ("nested", [(0,), (3,), (100,), (100,)]),
        ("changes_type", [(10, 3), (300, 150), (300, -1), (300, 0)]),
        ("overflows", [(10,), (30,), (200,)]),
        ("replaces_an_object", [(5,), (300,)]),
        ("deletes", [(5,), (300,)]),
    ],
)
def test_stores_to_globals_like_cpython(name, calls):
    """Module state after each call, and results, match CPython's (each side has its own module)."""
    plain_ns, jit_ns = stores(), stores()
    jitted = jit(threshold=2, side_exit_threshold=2)(jit_ns[name])
    for args in calls:
        expected = plain_ns[name](*args)
        got = jitted(*args)
        assert type(got) is type(expected) and repr(got) == repr(expected), (args, got, expected)
        for key in ("COUNT", "TOTAL", "FLAG", "VALUE"):
            assert repr(jit_ns.get(key)) == repr(plain_ns.get(key)), (key, args)
    stats = jit_module.stats(jitted)
    assert stats["native_iterations"] > 0, stats  # (`del` of a global holding a number too)
    assert stats["aborts_by_code"].get("GLOBAL_DELETED", 0) == 0, stats["aborts"]


def test_storing_globals_keeps_reference_counts():
    import tracemalloc

    ns = stores()
    jitted = jit(threshold=2, min_native_iterations=0)(ns["bump"])
    jitted(1000)
    tracemalloc.start()
    jitted(100_000)
    current, _ = tracemalloc.get_traced_memory()
    jitted(100_000)
    after, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert after - current < 10_000  # no growth from 100,000 more stores of new ints, floats and bools
    assert jit_module.stats(jitted)["native_iterations"] >= 200_000

    # one object stored over and over (a constant the trace holds): its count comes back where it was
    ns = stores()
    exec(
        "HALF = float('0.5')\ndef same_object(n):\n    global TOTAL\n    for i in range(n):\n        TOTAL = HALF\n", ns
    )
    ns["same_object"] = define(
        "def same_object(n):\n    global TOTAL\n    for i in range(n):\n        TOTAL = HALF\n", "same_object", ns
    )
    jitted = jit(threshold=2, min_native_iterations=0)(ns["same_object"])
    jitted(1000)
    before = sys.getrefcount(ns["HALF"])
    jitted(100_000)
    after = sys.getrefcount(ns["HALF"])  # (not inside the assert: pytest's rewriting holds references)
    assert after == before
    assert ns["TOTAL"] is ns["HALF"]
    assert jit_module.stats(jitted)["native_iterations"] >= 100_000


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
