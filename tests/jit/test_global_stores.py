"""Loops that store module globals (`global n; n += ...`), beyond tests/jit/frontend/test_global_statement.py:
every name the function stores is read from the dict (never pinned by a hoisted identity guard, which the
stores of a loop around would fail at every call), a read after a store uses the stored value, a name that is
a builtin until stored, a table global rebuilt per call, rebinding between calls, what still aborts, and
reference counts. Differential against CPython through both baselines (``check``); each function resets
the globals it stores, so that every run starts alike."""

import sys

import pytest
from helpers import check, comprehension_lines, define

import jit as jit_module
from jit import jit

MODULE = """
import math

count = 0
total = 0.0
flag = False
big = 0
seen = 0
LIMIT = 7


def ints(n):
    global count
    count = 0
    for i in range(n):
        count += i % LIMIT
    return count






def table_per_call(n):
    global table, count
    table = [i * 0.5 for i in range(8)]
    count = 0
    s = 0.0
    for i in range(n):
        for j in range(len(table)):
            s += table[j] * i
            count += 1
    return s, count


def read_back(n):
    global seen
    s = 0
    for i in range(n):
        seen = i * 3
        s += seen - i
    return s, seen


def helper():
    return count


def read_by_a_helper(n):
    global count
    count = 0
    s = 0
    for i in range(n):
        count += 2
        s += helper()
    return s, count




def outer_stores_inner_reads(n, m):
    global count, total
    count = 0
    total = 0.0
    for i in range(n):
        count += 1
        for j in range(m):
            total += count * 0.25
    return count, total




def three_levels(n):
    global count, total
    count = 0
    total = 0.0
    for i in range(n):
        total += count * 0.5
        for j in range(4):
            count += 1
            for k in range(5):
                count += i ^ (j * k)
    return count, total


def best_so_far(xs):
    global best
    best = None
    for x in xs:
        if best is None or x < best:
            best = x
    return best


def float_to_int(n):
    global total
    total = 1.5
    for i in range(n):
        if i == n // 3:
            total = i
        else:
            total += 1
    return total




def overflow_and_back(n):
    global big
    big = 1
    for i in range(n):
        big = big * 1000 + i
        if big > 4611686018427387904:
            big = big % 1000003
    return big


def builtin_then_global(n):
    global abs
    t = 0
    for i in range(n):
        if i == n - 2:
            abs = 100
        if i < n - 2:
            t += abs(-i)
        else:
            t += abs
    del abs
    return t


def store_a_list(n, values):
    global seen
    for i in range(n):
        seen = values
    result = seen
    seen = 0
    return result


def bump():
    global count
    count += 1
    return count


def reset_seen(k):
    global seen
    seen = [k]


def calls_a_function_that_stores_a_list(n):
    global seen
    t = 0
    for i in range(n):
        reset_seen(i)
        t += len(seen)
    result = seen
    seen = 0
    return t, result


def calls_a_function_that_stores(n):
    global count
    count = 0
    s = 0
    for i in range(n):
        s += bump()
    return s, count


def delete_in_loop(n):
    global seen
    s = 0
    for i in range(n):
        seen = i
        s += seen
        del seen
    seen = 0
    return s
"""


def module():
    namespace: dict = {}
    define(MODULE, "ints", namespace)
    return namespace


def native_iterations(jitted) -> int:
    return (
        jit_module.stats(jitted)["native_iterations"] + jit_module.stats(jitted.cpython_baseline)["native_iterations"]
    )


@pytest.mark.parametrize(
    "name, calls",
    [
        ("ints", [0, 5, 500]),
        ("read_back", [1, 200]),
        ("read_by_a_helper", [4, 300]),
        ("outer_stores_inner_reads", [(3, 4), (20, 30)]),
        ("table_per_call", [3, 40]),
        ("three_levels", [2, 30]),
    ],
)
def test_stores_run_natively_like_cpython(name, calls):
    jitted = check(module()[name], *calls, native=True)
    for variant in (jitted, jitted.cpython_baseline):
        stats = jit_module.stats(variant)
        assert set(stats["aborts_by_code"]) <= {"LOOP_ENDED"}, stats["aborts"]  # (a retry: nothing given up)
        assert stats["native_iterations"] > 100


@pytest.mark.parametrize(
    "name, calls",
    [
        ("float_to_int", [4, 200]),
        ("overflow_and_back", [5, 300]),
        ("builtin_then_global", [3, 100]),
    ],
)
def test_a_global_changing_type_leaves_native_code_cleanly(name, calls):
    jitted = check(module()[name], *calls)
    assert native_iterations(jitted) > 0


@pytest.mark.parametrize(
    "name, args", [("outer_stores_inner_reads", (20, 30)), ("table_per_call", (40,)), ("three_levels", (30,))]
)
def test_warm_calls_enter_native_code_once_and_invalidate_nothing(name, args):
    # the outer loop stores what the inner loop reads, or the function rebuilds a table global per call: an
    # identity guard of it hoisted to the inner tree's entry would fail at every call
    ns = module()
    plain = ns[name]
    jitted = jit(threshold=2, unroll_max_trips=4)(plain)  # (three_levels' inner loops of 4 and 5 trips: trees)
    for _ in range(3):
        jitted(*args)
    before = jit_module.stats(jitted)
    assert jitted(*args) == plain(*args)
    stats = jit_module.stats(jitted)
    # (table_per_call's table comprehension is handed over whole too: one entry and one exit of its own per call)
    lines = comprehension_lines(jitted)
    own = sum(t["native_entries"] for t in stats["trees"] if t["loop_line"] in lines)
    own -= sum(t["native_entries"] for t in before["trees"] if t["loop_line"] in lines)
    assert stats["native_entries"] - before["native_entries"] == 1 + own
    assert stats["exits_to_interpreter"] - before["exits_to_interpreter"] == 1 + own
    assert stats["invalidated_trees"] == 0
    assert any(tree["nested_calls"] for tree in stats["trees"])


def test_a_global_that_is_none_until_the_loop_stores_it():
    # the trace is recorded with a number in `best`: its hoisted _GUARD_GLOBAL_NUMBER fails at each call's
    # entry (None), which grows a side trace from the entry (that first iteration) instead of invalidating
    xs = [((i * 7919) % 1000) * 0.5 for i in range(300)]
    jitted = check(module()["best_so_far"], (xs,), ([3.5],), native=True)
    stats = jit_module.stats(jitted)
    assert stats["invalidated_trees"] == 0
    before = stats["native_entries"]
    assert jitted(xs) == min(xs)
    assert jit_module.stats(jitted)["native_entries"] - before == 1
    assert "side trace from exit 0" in jit_module.dump(jitted, "uops")


def test_a_read_after_a_store_uses_the_stored_value():
    jitted = jit(threshold=2)(module()["read_back"])
    jitted(100)
    listing = jit_module.dump(jitted, "uops")
    assert "_STORE_GLOBAL" in listing
    assert "_LOAD_GLOBAL_VALUE" not in listing and "seen is" not in listing  # (read neither from the dict nor pinned)
    assert "_GUARD_GLOBAL_NUMBER (target=" in listing  # (stored over a number: no look-up of the value replaced)
    assert "operand=seen (over a number)" in listing


def test_a_stored_name_is_not_pinned_by_a_hoisted_guard():
    jitted = jit(threshold=2)(module()["ints"])
    jitted(100)
    listing = jit_module.dump(jitted, "uops")
    assert "_LOAD_GLOBAL_VALUE (target=" in listing and "operand=count" in listing
    assert "count is" not in listing  # no identity guard of count, hoisted or not
    assert "LIMIT is 7" in listing  # a global only read is still a hoisted constant


def test_globals_rebound_between_calls():
    plain_ns, jit_ns = module(), module()
    source = """
def accumulate(n):
    global total
    for i in range(n):
        total += i * 0.5
    return total
"""
    plain = define(source, "accumulate", plain_ns)
    jitted = jit(threshold=2)(define(source, "accumulate", jit_ns))
    for value in (0.0, 3, 2.5, True, 10**30, 1.0):
        plain_ns["total"] = jit_ns["total"] = value
        assert repr(jitted(50)) == repr(plain(50))
        assert repr(jit_ns["total"]) == repr(plain_ns["total"])
    assert jit_module.stats(jitted)["native_iterations"] > 0


def test_a_list_stored_into_a_global_is_native():
    """(tests/jit/test_global_object_stores.py has the other objects)"""
    jitted = check(module()["store_a_list"], (3, [1]), (100, [2.5]), native=True)
    assert jit_module.stats(jitted)["aborts_by_code"] == {}


def test_an_inlined_call_storing_a_list_into_a_global_is_called_and_says_why():
    # an inlined call's store is made at its return (jit.inline): only numbers and None are deferred so
    jitted = check(module()["calls_a_function_that_stores_a_list"], 3, 100, native=True)
    assert "storing a list into the global seen in an inlined call" in jit_module.explain(jitted)


def test_a_global_stored_and_deleted_in_the_loop_is_native():
    """`del` of a global holding a number (tests/jit/test_global_deletes.py has the other cases)."""
    jitted = check(module()["delete_in_loop"], 3, 100, native=True)
    assert jit_module.stats(jitted)["aborts_by_code"].get("GLOBAL_DELETED", 0) == 0


def test_a_callee_that_stores_a_global_is_called_natively():
    """Not inlined (it stores a global): native code calls it (the generic object path), a barrier after which
    the global the loop reads again is what the callee stored."""
    jitted = check(module()["calls_a_function_that_stores"], 3, 100, native=True)
    assert jit_module.stats(jitted)["aborts_by_code"] == {}


def test_a_global_rebound_to_another_type_between_calls_is_released_once():
    # the store's old value is a str, which native code frees too (it runs no Python code): released once
    ns = module()
    jitted = jit(threshold=2)(ns["read_back"])
    assert jitted(50) == (sum(2 * i for i in range(50)), 147)
    text = "".join(["te", "xt"])
    ns["seen"] = text
    before = sys.getrefcount(text)
    assert jitted(50) == (sum(2 * i for i in range(50)), 147)
    assert sys.getrefcount(text) == before - 1
    stats = jit_module.stats(jitted)
    assert stats["native_entries"] >= 2 and stats["aborts_by_code"] == {}


class Namespace(dict):
    pass


def test_globals_that_are_not_a_plain_dict():
    ns = Namespace()
    define(MODULE, "ints", ns)
    jitted = jit(threshold=2)(ns["ints"])
    assert jitted(300) == sum(i % 7 for i in range(300))
    assert ns["count"] == sum(i % 7 for i in range(300))
    assert jit_module.stats(jitted)["aborts_by_code"].get("GLOBALS_NOT_DICT", 0) >= 1


# --- reference counts ----------------------------------------------------------------------------------------

REFCOUNTS = """
marker = 0


def cycle(n, values):
    global marker
    for i in range(n):
        marker = values[i % 3]
    marker = 0
"""


def test_no_reference_leaks_over_100000_iterations():
    ns: dict = {}
    define(REFCOUNTS, "cycle", ns)
    jitted = jit(threshold=2)(ns["cycle"])
    values = [1000001, 1000002, 1000003]  # ints read from a list: stored as those very objects
    jitted(10, values)
    before = [sys.getrefcount(v) for v in values] + [sys.getrefcount(ns), sys.getrefcount(True)]
    jitted(100_000, values)
    after = [sys.getrefcount(v) for v in values] + [sys.getrefcount(ns), sys.getrefcount(True)]
    assert after == before
    assert jit_module.stats(jitted)["native_iterations"] > 99_000


REBOUND_BY_A_HELPER = """
SCALE = 3


def bump():
    global SCALE
    SCALE = SCALE + 1 if SCALE < 5 else 3


def scaled(n):
    total = 0
    for i in range(n):
        for j in range(20):
            total += j * SCALE
        bump()
    return total
"""


def test_a_global_a_helper_rebinds_every_iteration_is_read_from_the_dict():
    """The inner loop reads SCALE, which a helper the outer loop calls rebinds every outer iteration: its hoisted
    identity guard failed at every inner tree call, invalidating the trees again and again until the outer loop
    hit its limit of trees and ran in CPython. Once a global has invalidated trees twice, traces read it from the
    dict at each use (Monitor.volatile_globals), and the nest runs natively, leaving native code at most twice a
    call."""
    plain_ns, jit_ns = {}, {}
    plain = define(REBOUND_BY_A_HELPER, "scaled", plain_ns)
    jitted = jit(threshold=2)(define(REBOUND_BY_A_HELPER, "scaled", jit_ns))
    for n in (5, 40, 40, 40, 40, 40, 200):
        plain_ns["SCALE"] = jit_ns["SCALE"] = 3
        assert jitted(n) == plain(n)
        assert jit_ns["SCALE"] == plain_ns["SCALE"]
    before = jit_module.stats(jitted)
    for _ in range(3):
        jit_ns["SCALE"] = 3
        assert jitted(200) == (plain_ns.update(SCALE=3) or plain(200))
    stats = jit_module.stats(jitted)
    # (the inner loop, unrolled into the outer trace, pins SCALE before bump's inlined store: recorded again once)
    assert stats["limits_hit"] == {} and set(stats["aborts_by_code"]) <= {"INLINED_STORES_PINNED_GLOBAL"}
    assert stats["invalidated_trees"] == before["invalidated_trees"]
    assert stats["exits_to_interpreter"] - before["exits_to_interpreter"] <= 6
    assert stats["native_iterations"] - before["native_iterations"] >= 3 * 200 * 20
    listing = jit_module.dump(jitted, "uops")
    assert "operand=SCALE" in listing and "SCALE is" not in listing  # (read from the dict, not pinned)
