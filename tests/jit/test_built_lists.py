"""Lists built in a loop (`[]`, `[a, b]`): a new list the trace owns (codegen.ownership), kept in a variable
across iterations, exits and an inner loop's tree call, appended to and handed to another list, freed where
the variable is assigned again. Differential against CPython, native through jit.stats, references counted
with sys.getrefcount and memory with tracemalloc."""

from __future__ import annotations

import sys
import tracemalloc

import pytest
from helpers import check, no_binding_waits

import jit


def list_of_lists(n):
    rows = []
    for i in range(n):
        row = []
        for j in range(n):
            row.append(i * j % 7)
        rows.append(row)
    return rows


def chunks(n, k):
    out = []
    row = []
    for i in range(n):
        row.append(i * i)
        if len(row) == k:
            out.append(row)
            row = []
    return out, row


def pairs(n):
    out = []
    for i in range(n):
        pair = [i, i * 0.5, None, i > 3, "s"]
        out.append(pair)
    return out


def discarded(n):
    total = 0
    for i in range(n):
        tmp = [i, i + 1, i * 2]
        total += len(tmp) + i
    return total


def big_items(n):
    out = []
    for i in range(n):
        out.append([i << 70, i])
    return out


def inner_rebinds(n):
    rows = []
    for i in range(n):
        row = []
        for j in range(3):
            row = [j, i]
        rows.append(row)
    return rows


@pytest.mark.parametrize("n", [0, 1, 5, 40])
def test_a_list_of_lists(n):
    check(list_of_lists, (n,), native=True if n >= 5 else None)


def test_chunks_kept_in_a_variable_across_iterations():
    check(chunks, (0, 3), (10, 3), (200, 7), (200, 1), native=True)


def test_lists_of_every_item_kind():
    check(pairs, (0,), (3,), (60,), native=True)
    check(big_items, (0,), (40,), native=True)


def test_a_list_freed_at_every_iteration():
    check(discarded, (0,), (100,), native=True)


def test_an_inner_loop_assigning_the_variable(monkeypatch):
    """The outer trace hands the list it built over with the buffer, keeping a reference of its own; the inner
    tree releases the buffer's where it assigns the variable, and the outer trace takes the new list's over
    (_RELOAD_SLOT_OWNED): the loop nest runs natively, with one exit per call once warm."""
    f = check(inner_rebinds, (0,), (1,), (30,), native=True)
    no_binding_waits(monkeypatch)
    assert set(jit.stats(f)["aborts_by_code"]) <= {"LOOP_ENDED", "INNER_FIRST"}
    g = warmed(inner_rebinds, 30)
    before = jit.stats(g)
    rows = g(30)
    assert rows == inner_rebinds(30)
    assert jit.stats(g)["exits_to_interpreter"] - before["exits_to_interpreter"] == 1
    plain = inner_rebinds(30)
    assert [sys.getrefcount(row) for row in rows] == [sys.getrefcount(row) for row in plain]


def warmed(func, *args):
    f = jit.jit(threshold=2, side_exit_threshold=2, min_native_iterations=0)(func)
    for _ in range(6):
        assert f(*args) == func(*args)
    return f


def test_list_of_lists_leaves_native_code_once_per_call(monkeypatch):
    no_binding_waits(monkeypatch)
    f = warmed(list_of_lists, 30)
    before = jit.stats(f)
    assert f(30) == list_of_lists(30)
    after = jit.stats(f)
    assert after["native_entries"] - before["native_entries"] == 1
    assert after["exits_to_interpreter"] - before["exits_to_interpreter"] == 1
    assert set(after["aborts_by_code"]) <= {"LOOP_ENDED"}


@pytest.mark.parametrize("func,args", [(list_of_lists, (30,)), (chunks, (200, 7)), (pairs, (60,))])
def test_every_list_has_only_its_holders_references(func, args):
    f = warmed(func, *args)
    entries = jit.stats(f)["native_entries"]
    result = f(*args)
    assert result == func(*args)
    assert jit.stats(f)["native_entries"] > entries
    outer = result[0] if func is chunks else result
    # result or the tuple, outer, getrefcount's argument
    assert sys.getrefcount(outer) == 3
    counts = {sys.getrefcount(row) for row in outer}
    assert counts == {3}  # the outer list's, the comprehension variable's, getrefcount's argument


def test_an_exit_with_a_list_in_a_variable_hands_it_over():
    """chunks leaves native code where the loop ends with row half full: the interpreter gets the list."""
    f = warmed(chunks, 200, 7)
    out, row = f(200, 7)
    assert (out, row) == chunks(200, 7)
    assert sys.getrefcount(row) == 2


@pytest.mark.parametrize("func", [discarded, chunks, pairs])
def test_no_memory_is_leaked_over_100_000_iterations(func):
    args = (7,) if func is chunks else ()
    f = warmed(func, 1000, *args)
    if func is pairs:
        f(100_000)  # (a result of 100,000 lists, freed before the measure)
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


def mixed_items(n):
    total = 0.0
    for i in range(n):
        total += [i, i * 0.5][i % 2]  # (the item's type guard fails at every other iteration)
    return total


def test_a_side_trace_starts_owning_the_list_its_exit_handed_over():
    """The list is on the operand stack where the guard on its item's type fails: the exit hands it over
    owned, and the side trace that grows there owns it (frees it once used)."""
    check(mixed_items, (0,), (1,), (100,), native=True)
    f = warmed(mixed_items, 1000)
    assert jit.stats(f)["side_traces"] >= 1
    before = jit.stats(f)["exits_to_interpreter"]
    tracemalloc.start()
    try:
        f(100_000)
        first = tracemalloc.get_traced_memory()[0]
        f(100_000)
        second = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert second - first < 10_000
    assert jit.stats(f)["exits_to_interpreter"] - before == 2


def rotates(n):
    a = []
    b = []
    for i in range(n):
        a, b = b, [i]  # a list built in one iteration flows through a second variable into the next
    return a, b


def test_a_list_flowing_from_one_variable_into_another():
    check(rotates, (0,), (1,), (2,), (50,), native=True)
    f = warmed(rotates, 50)
    a, b = f(50)
    assert (a, b) == rotates(50)
    assert sys.getrefcount(a) == sys.getrefcount(b) == 2


def tuple_pairs(n):
    out = []
    for i in range(n):
        out.append((i, i * 0.5, "s"))
    return out


def tuple_unpacked(n):
    total = 0
    for i in range(n):
        t = (i, i + 1, i * 2)
        a, b, c = t
        total = (total + a * b + c) % 1_000_000_007
    return total, t


def tuple_swap(n):
    a = 1
    b = 2.5
    for i in range(n):
        a, b = b, a
    return a, b


def test_tuples_built_in_a_loop():
    check(tuple_pairs, (0,), (3,), (60,), native=True)
    check(tuple_unpacked, (1,), (60,), native=True)
    check(tuple_swap, (0,), (7,), (60,), native=True)


def test_every_tuple_has_only_its_holders_references():
    f = warmed(tuple_pairs, 60)
    result = f(60)
    assert result == tuple_pairs(60)
    assert {sys.getrefcount(item) for item in result} == {3}
    g = warmed(tuple_unpacked, 60)
    total, t = g(60)
    assert (total, t) == tuple_unpacked(60)
    assert sys.getrefcount(t) == 2


def test_no_memory_is_leaked_by_tuples_over_100_000_iterations():
    f = warmed(tuple_unpacked, 1000)
    tracemalloc.start()
    try:
        f(100_000)
        first = tracemalloc.get_traced_memory()[0]
        f(100_000)
        second = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert second - first < 10_000
    assert jit.stats(f)["native_iterations"] >= 200_000
