"""Ints past 64 bits kept in variables: a local that holds an int object (Kind.INT_OBJECT) across iterations,
exits, side traces' tail-jumps into a tree, and `del`, with the references native code owns given up exactly
(codegen.ownership). Differential against CPython, native through jit.stats, references counted with
sys.getrefcount and memory with tracemalloc."""

from __future__ import annotations

import sys
import traceback
import tracemalloc

import pytest
from helpers import check, no_binding_waits

import jit


def grows(n):
    x = 1
    for i in range(n):
        x = x * 3 + i  # past 2**63 after about 40 iterations
    return x


def grows_negative(n):
    x = -1
    for i in range(n):
        x = x * 3 - i
    return x


def factorial(n):
    f = 1
    for i in range(1, n + 1):
        f *= i
    return f


def polynomial_hash(codes):
    h = 0
    for c in codes:
        h = h * 31 + c  # no modulo: the hash keeps growing
    return h


def up_and_down(n, k):
    x = 1
    for i in range(n):
        if i % 20 < 10:
            x = x * k
        else:
            x = x // k  # back below 2**63, and back to 1
    return x


def swaps(n):
    a = 2**70
    b = -(2**65)
    for i in range(n):
        a, b = b, a * 3 + i
    return a, b


def copies(n):
    x = 2**64
    y = 0
    for i in range(n):
        x = x * 5 + i
        y = x  # one int object in two slots at the back-edge
    return x, y


def invariant(n, big, m):
    acc = 0
    for i in range(n):
        acc = (acc * 7 + big + i) % m  # big: read every iteration, never assigned
    return acc


def bounded(n):
    x = 2**80
    for i in range(n):
        x = (x * 1_000_003 + i) % ((1 << 100) + 7)
    return x


def deletes(n):
    total = 0
    for i in range(n):
        x = (i + 1) << 70
        total = (total * 3 + x) % 1_000_000_007
        del x
    return total


def remainder_by(n, d):
    x = 3**50
    r = 0
    for i in range(n):
        x = x * 7 + i
        r = x % (d - i)  # ZeroDivisionError where i == d
    return r


def moves_it(n, big):
    kept = 0
    for i in range(n):
        kept = big
    return kept


@pytest.mark.parametrize("n", [0, 1, 30, 45, 300])
def test_an_int_growing_past_64_bits_in_a_variable(n):
    check(grows, (n,), native=True if n >= 30 else None)


@pytest.mark.parametrize("n", [30, 45, 300])
def test_negative_overflow(n):
    check(grows_negative, (n,), native=True)


def test_factorial():
    check(factorial, (10,), (25,), (200,), native=True)


def test_polynomial_hash_without_modulo():
    check(polynomial_hash, ([ord(c) for c in "tracejit " * 30],), ([],), ([7] * 5,), native=True)


@pytest.mark.parametrize("k", [3, 2**20, 2**40, -(2**33)])
def test_fitting_and_not_fitting_by_turns(k):
    check(up_and_down, (200, k), native=True)


def test_swapped_int_objects():
    check(swaps, (0,), (1,), (50,), native=True)


def test_one_int_object_in_two_variables():
    check(copies, (0,), (1,), (60,), native=True)


def test_a_loop_invariant_int_object():
    check(invariant, (200, 2**90, 1_000_000_007), (200, -(2**70), 97), (200, 5, 97), native=True)


def test_del_of_an_int_object():
    check(deletes, (0,), (3,), (100,), native=True)


def test_division_by_zero_from_an_int_object_in_a_variable():
    """ZeroDivisionError from CPython's remainder of an int object a variable holds: native code leaves with
    its state exact, and the interpreter raises at the user's line."""
    f = check(remainder_by, (100, 1000), (100, 50), (100, -3), native=True)

    def failure(func):
        with pytest.raises(ZeroDivisionError) as info:
            func(100, 50)
        entry = traceback.extract_tb(info.value.__traceback__)[-1]
        return str(info.value), entry.lineno, entry.line

    assert failure(f) == failure(remainder_by)
    assert failure(f.cpython_baseline) == failure(remainder_by)


def warmed(func, *args, **options):
    f = jit.jit(threshold=2, side_exit_threshold=2, min_native_iterations=0, **options)(func)
    for _ in range(6):
        assert f(*args) == func(*args)
    return f


def test_one_exit_per_call_once_warm():
    """The tree recorded where x fits exits where it leaves 64 bits; its side trace tail-jumps into the tree
    recorded where x is an int object: one exit per call."""
    f = warmed(grows, 300)
    before = jit.stats(f)
    for _ in range(3):
        assert f(300) == grows(300)
    after = jit.stats(f)
    assert after["exits_to_interpreter"] - before["exits_to_interpreter"] == 3
    assert after["native_entries"] - before["native_entries"] == 3
    assert after["root_traces"] == 2 and after["side_traces"] >= 1
    assert not after["aborts"]


@pytest.mark.parametrize("func,args", [(grows, (300,)), (swaps, (300,)), (copies, (300,)), (up_and_down, (310, 2**20))])
def test_the_result_has_only_the_callers_reference(func, args):
    f = warmed(func, *args)
    entries = jit.stats(f)["native_entries"]
    result = f(*args)
    assert result == func(*args)
    assert jit.stats(f)["native_entries"] > entries
    if isinstance(result, tuple):
        # the tuple's reference, the comprehension's variable and getrefcount's argument (copies: x and y are
        # one object, twice in the tuple)
        assert [sys.getrefcount(item) for item in result] == [3 + (func is copies)] * 2
    else:
        assert sys.getrefcount(result) == 2


def test_an_int_object_passed_in_keeps_its_count():
    big = 2**70 + 12345
    for func, args in ((invariant, (300, big, 97)), (moves_it, (300, big))):
        f = warmed(func, *args)
        before = sys.getrefcount(big)
        for _ in range(20):
            assert f(*args) == func(*args)
        assert sys.getrefcount(big) == before
        assert jit.stats(f)["native_entries"] > 0
        assert jit.stats(f)["traces_compiled"] > 0


@pytest.mark.parametrize("func,args", [(bounded, ()), (deletes, ()), (up_and_down, (2**20,)), (swaps, ())])
def test_no_memory_is_leaked_over_100_000_iterations(func, args):
    if func is swaps:
        func = _bounded_swaps
    f = warmed(func, 1000, *args)
    tracemalloc.start()
    try:
        f(100_000, *args)
        first = tracemalloc.get_traced_memory()[0]
        f(100_000, *args)
        second = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert second - first < 10_000
    assert jit.stats(f)["native_iterations"] >= 200_000


def _bounded_swaps(n):
    a = 2**70
    b = -(2**65)
    for i in range(n):
        a, b = b, (a * 3 + i) % (1 << 90)
    return a, b


def outer_inner(n):
    x = 2**70
    total = 0
    for i in range(n):
        x = x * 3 + i
        for j in range(4):
            total += j
    return x, total


def inner_uses_it(n):
    x = 2**70
    total = 0
    for i in range(n):
        x = x * 3 + i
        for j in range(4):
            total += j
            y = x
    return y, total


def test_an_int_object_in_a_variable_across_an_inner_loops_call():
    """The call hands the reference over with the buffer and takes it back (the inner tree does not assign
    the variable): one native entry and exit per call once warm."""
    f = check(outer_inner, (0,), (1,), (50,), native=True)
    assert set(jit.stats(f)["aborts_by_code"]) <= {"LOOP_ENDED"}
    g = warmed(outer_inner, 50)
    before = jit.stats(g)
    result = g(50)
    assert result == outer_inner(50)
    assert jit.stats(g)["exits_to_interpreter"] - before["exits_to_interpreter"] == 1
    assert [sys.getrefcount(item) for item in result][0] == 3


def test_an_inner_loop_using_an_int_object(monkeypatch):
    """The inner tree's entry type map holds the int object; the outer trace hands it over and keeps its own
    reference across the call: one exit per call once warm, and no reference left behind."""
    f = check(inner_uses_it, (0,), (1,), (50,), native=True)
    assert set(jit.stats(f)["aborts_by_code"]) <= {"LOOP_ENDED", "INNER_FIRST"}
    no_binding_waits(monkeypatch)
    g = warmed(inner_uses_it, 50)
    before = jit.stats(g)
    result = g(50)
    assert result == inner_uses_it(50)
    assert jit.stats(g)["exits_to_interpreter"] - before["exits_to_interpreter"] == 1
    assert sys.getrefcount(result[0]) == 3  # (the tuple's, the name's, getrefcount's argument)


def last_items(n, data):
    count = 0
    for i in range(n):
        for item in data:
            count += 1
    return count, item


def test_an_int_object_an_inner_loop_read_from_a_list():
    """The inner tree leaves with an item of the list in a variable, an int past 64 bits it borrowed from the
    list: the outer trace takes a reference of its own when it reads it back (it once failed to compile)."""
    big = 2**70 + 3
    data = [1, 2, big]
    f = check(last_items, (0, data), (1, data), (40, data), native=True)
    assert not any("internal error" in message for message in jit.stats(f)["aborts"])
    g = warmed(last_items, 40, data)
    before = sys.getrefcount(big)
    for _ in range(20):
        assert g(40, data) == last_items(40, data)
    assert sys.getrefcount(big) == before
    assert jit.stats(g)["native_entries"] > 0
    assert not any("internal error" in message for message in jit.stats(g)["aborts"])


def inner_overwrites(n, big):
    count = 0
    for i in range(n):
        x = big * (i + 2)
        count += x % 7
        for j in range(3):
            x = j  # the inner tree assigns x without reading it: the int object handed to it is released there
        count += x
    return count


@pytest.mark.parametrize("unroll", [0, 4])
def test_an_int_object_an_inner_tree_overwrites_is_released(unroll):
    """(unroll 4: the inner loop is unrolled into the outer trace, which assigns over the int object after the
    first visit of its header: released there, its exit's state the last to need it)"""
    big = 2**70 + 3
    check(inner_overwrites, (0, big), (1, big), (40, big), options={"unroll_max_trips": unroll}, native=True)
    f = warmed(inner_overwrites, 40, big, unroll_max_trips=unroll)
    calls = [trace["calls"] for tree in jit.stats(f)["trees"] for trace in tree["traces"] if trace["kind"] == "root"]
    assert any(calls) == (unroll == 0)
    tracemalloc.start()
    try:
        f(20_000, big)
        first = tracemalloc.get_traced_memory()[0]
        f(20_000, big)
        second = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert second - first < 10_000
    assert jit.stats(f)["native_iterations"] >= 40_000
