"""An inlined helper may store globals of the jitted function's module (`global count; count += 1`): each store is
checked where it is (``_CHECK_STORE_GLOBAL``: the name unbound or bound to a number or None) and made at the
outermost inlined call's return (``_STORE_GLOBAL_CHECKED``), after its last exit, so that an exit before it makes
the call again with nothing changed (``jit.inline``). Every trace of the function reads such a global at each use
from then on (``volatile_globals``); a trace that pinned it by a guard before is recorded again. A helper of
another module storing its own globals stays a generic call. Every result, exception and global is CPython's."""

from __future__ import annotations

import types

from helpers import assert_native, check, define

import jit as jit_module
from jit.aborts import Reason

SOURCE = """
COUNTER = 0
HITS = 0
LIMIT = 3
NAME = "unset"
TOTAL = 0.0

def bump(k):
    global COUNTER
    COUNTER += k

def hit():
    global HITS
    HITS += 1
    return HITS

def reset():
    global COUNTER, HITS, LIMIT, NAME, TOTAL
    COUNTER, HITS, LIMIT, NAME, TOTAL = 0, 0, 3, "unset", 0.0

def counter_both_ways(n):
    global COUNTER
    COUNTER = 0
    for i in range(n):
        if i & 1:
            COUNTER += 1
        else:
            bump(2)
    return COUNTER

def helper_only(n):
    reset()
    t = 0
    for i in range(n):
        t += hit() & 3
    return t, HITS

def read_then_stored(n):
    reset()
    t = 0
    for i in range(n):
        t += HITS
        hit()
    return t, HITS

def set_limit(v):
    global LIMIT
    LIMIT = v

def limit_changed_late(n):
    reset()
    t = 0
    for i in range(n):
        t += LIMIT
        if i > n - 20:
            set_limit(i)
    return t, LIMIT

def name_it(v):
    global NAME
    NAME = v
    return v

def over_a_str(n):
    reset()
    t = 0
    for i in range(n):
        t += name_it(i % 5)
    return t, NAME

def add_total(x):
    global TOTAL, COUNTER
    TOTAL += x
    COUNTER = None if x < 0 else COUNTER
    return TOTAL

def floats_and_none(n):
    reset()
    s = 0.0
    for i in range(n):
        s += add_total(i * 0.5 - 3.0)
    return s, TOTAL, COUNTER

def grow(k):
    global COUNTER
    COUNTER = COUNTER * k + 1

def big_ints(n):
    reset()
    for i in range(n):
        grow(3)
    return COUNTER

def store_then_divide(k):
    global COUNTER
    COUNTER = k
    return 100 // k

def raises_after_store(n, at):
    reset()
    t = 0
    for i in range(n):
        t += store_then_divide(i - at)
    return t, COUNTER
"""


def program(name: str, namespace: dict | None = None):
    return define(SOURCE, name, {} if namespace is None else namespace)


def _calls_inlined(f, name: str) -> bool:
    return f"with the calls of {name} inlined" in jit_module.explain(f)


def test_a_helper_updating_a_global_the_loop_stores_too_is_inlined():
    jitted = check(program("counter_both_ways"), (3000,), (7,), (0,), native=True)
    assert _calls_inlined(jitted, "bump"), jit_module.explain(jitted)
    uops = jit_module.dump(jitted, "uops")
    assert "_STORE_GLOBAL_CHECKED" in uops and "_CALL_GENERIC" not in uops, uops


def test_a_global_only_the_helper_names_is_read_at_each_use():
    jitted = check(program("helper_only"), (3000,), (5,), native=True)
    assert _calls_inlined(jitted, "hit"), jit_module.explain(jitted)
    assert "_CALL_GENERIC" not in jit_module.dump(jitted, "uops")
    assert "HITS" in jit_module.api.state_of(jitted).monitor.volatile_globals


def test_a_global_the_trace_pinned_before_the_call_is_recorded_again():
    jitted = check(program("read_then_stored"), (3000,), (2000,), native=True)
    stats = jit_module.stats(jitted)
    assert stats["aborts_by_code"].get(Reason.INLINED_STORES_PINNED_GLOBAL.code, 0) >= 1, stats["aborts"]
    assert _calls_inlined(jitted, "hit"), jit_module.explain(jitted)
    assert stats["native_iterations"] > 2000


def test_a_side_trace_storing_a_global_the_root_pinned():
    # (the root reads LIMIT as a constant; the side trace that stores it is not joined with the root's loop: it
    # jumps into the root's function, whose hoisted guard fails there)
    check(program("limit_changed_late"), (3000,), (400,), (3000,), native=True)


def test_a_store_over_a_value_whose_freeing_could_run_code_leaves_first():
    # (NAME holds a str at each call's start: the check fails, the interpreter makes the first call; then an int)
    jitted = check(program("over_a_str"), (3000,), (3,), native=True)
    assert _calls_inlined(jitted, "name_it"), jit_module.explain(jitted)


def test_floats_none_and_big_ints_stored():
    check(program("floats_and_none"), (3000,), (4,), native=True)
    check(program("big_ints"), (200,), (50,), (3,))


def test_an_exit_after_the_store_makes_the_call_again_once():
    # (the division's check comes after the store, which is deferred: the interpreter makes the call, which
    # stores and raises ZeroDivisionError, as CPython does)
    check(program("raises_after_store"), (3000, 2500), (3000, 4000), (100, 50), native=True)


def test_a_helper_of_another_module_storing_its_globals_stays_generic():
    other = types.ModuleType("other_module")
    helper = program("bump", other.__dict__)
    namespace = {"bump": helper}
    caller = define(
        "def calls_other(n):\n    t = 0\n    for i in range(n):\n        bump(1)\n        t += i\n    return t\n",
        "calls_other",
        namespace,
    )
    other.COUNTER = 0
    jitted = check(caller, (3000,), native=True)
    assert "bump" in jit_module.explain(jitted) and not _calls_inlined(jitted, "bump")
    assert other.COUNTER == 3000 * 5  # (check runs it plain once, and twice on each of the two jitted functions)
    assert_native(jitted)
