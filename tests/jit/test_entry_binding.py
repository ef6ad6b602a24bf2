"""Loops whose body assigns locals before reading them: a later call enters the loop with those locals unbound
where the first call's tree was recorded with them bound (the previous iteration's values, carried across the
back-edge: jit.recorder puts a slot holding an owned reference into the entry type map). The header lets one
iteration run where the function runs (CPython or the interpreter), which binds them, and enters the tree then,
instead of recording and compiling a second root tree for the same loop (``jit.monitor``). Each function is
checked against CPython, with jit.stats asserting native runs and how many root traces were compiled."""

import math

import pytest
from helpers import check

import jit as jit_module
from jit import jit
from jit.monitor import WAIT_MS


def words_loop(n):
    sentence = "  the quick brown fox jumps over the lazy dog  "
    out = ""
    for i in range(n):
        words = sentence.strip().split()  # (a list the trace builds: an owned reference, carried)
        word = words[i % len(words)]
        out = word.capitalize() if len(out) > 50 else out + word[0].upper()
    return out


def pairs_loop(n, text):
    seen = set()
    count = 0
    for i in range(n):
        pair = (text[i % len(text)], text[(i + 1) % len(text)])  # (a tuple the trace builds)
        if pair not in seen:
            seen.add(pair)
            count += 1
    return count, len(seen)


def used_after_the_loop(n):
    for i in range(n):
        parts = [i, i + 1]  # (live after the loop: the last iteration's list, or unbound if n == 0)
    return parts


def deleted_in_the_loop(n):
    total = 0
    for i in range(n):
        items = [i, i * 2]
        total += items[1]
        del items
    return total


def read_before_written(n):
    total = 0
    for i in range(n):
        if i:
            total += len(prev)  # noqa: F821 (read before it is written: stays in the entry type map)
        prev = [i] * (i % 3)  # noqa: F841 (read in the next iteration)
    return total


def unbound_read_raises(n, k, m):
    total = 0
    for i in range(n):
        if i == k:
            total += len(later)  # noqa: F821 (UnboundLocalError unless an iteration before bound it: m < k)
        if i >= m:
            later = [i] * (i % 4)  # noqa: F841 (read in a later iteration)
    return total


def rows_nest(n):
    rows = []
    for i in range(n):
        row = []  # (a list the outer trace builds, which the inner tree appends to)
        for j in range(n):
            row.append(i * j % 7)
        rows.append(row)
    return rows


def _roots(f):
    return jit_module.stats(f)["root_traces"]


@pytest.mark.parametrize("interpreter", [False, True], ids=["cpython", "interpreter"])
@pytest.mark.parametrize(
    "func, args",
    [(words_loop, (300,)), (pairs_loop, (300, "abracadabra")), (deleted_in_the_loop, (300,)), (rows_nest, (40,))],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_a_second_call_enters_the_first_calls_tree(func, args, interpreter):
    f = jit(threshold=8, sync_compile=True, interpreter=interpreter, min_native_iterations=0)(func)
    assert f(*args) == func(*args)
    first = jit_module.stats(f)
    assert first["root_traces"] == (2 if func is rows_nest else 1) and first["native_entries"] >= 1
    for _ in range(3):
        assert f(*args) == func(*args)
    after = jit_module.stats(f)
    assert after["root_traces"] == first["root_traces"], [t["entry_kinds"] for t in after["trees"]]
    assert after["native_entries"] >= first["native_entries"] + 3  # (each later call ran natively)
    assert after["limits_hit"].get("max_trees_per_loop", 0) == 0


@pytest.mark.parametrize(
    "func, calls",
    [
        (words_loop, [(300,), (0,), (1,), (40,)]),
        (pairs_loop, [(300, "abracadabra"), (3, "ab"), (100, "xy")]),
        (used_after_the_loop, [(300,), (0,), (1,), (100,)]),
        (deleted_in_the_loop, [(300,), (0,), (50,)]),
        (rows_nest, [(40,), (0,), (1,), (2,), (30,)]),
        (read_before_written, [(300,), (1,), (0,), (50,)]),
        (
            unbound_read_raises,
            [(300, 100, 10), (300, 100, 200), (300, 0, 0), (300, 250, 260), (300, 400, 0), (20, 3, 1)],
        ),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_unbound_and_bound_locals_at_entry_are_cpythons(func, calls):
    check(func, *calls, options={"threshold": 8}, native=True)


def test_a_slot_read_before_written_stays_in_the_entry_type_map():
    f = jit(threshold=8, sync_compile=True, min_native_iterations=0)(read_before_written)
    assert f(300) == read_before_written(300)
    (tree,) = jit_module.stats(f)["trees"]
    assert tree["entry_kinds"]["prev"] == "list"


def test_unbound_local_error_is_cpythons():
    f = jit(threshold=8, sync_compile=True, min_native_iterations=0)(unbound_read_raises)
    assert f(300, 200, 20) == unbound_read_raises(300, 200, 20)
    for k in (5, 100, 250):  # (`later` unbound where it is read, at i == k: bound only from i >= k + 1)
        with pytest.raises(UnboundLocalError) as plain:
            unbound_read_raises(300, k, k + 1)
        with pytest.raises(UnboundLocalError) as jitted:
            f(300, k, k + 1)
        assert str(jitted.value) == str(plain.value)
    assert jit_module.stats(f)["native_entries"] >= 1


def test_a_loop_entered_often_with_them_unbound_gets_a_tree_for_it():
    # (each wait costs a round trip through the hand-off: once the waits cost what compiling the tree did, the
    # entry gets a tree of its own)
    f = jit(threshold=8, sync_compile=True, min_native_iterations=0)(words_loop)
    assert f(100) == words_loop(100)
    (tree,) = jit_module.stats(f)["trees"]
    waits = math.ceil(tree["traces"][0]["compile_ms"] / WAIT_MS)
    calls = 0
    while _roots(f) == 1 and calls <= waits + 2:
        assert f(3) == words_loop(3)
        calls += 1
    assert abs(calls - (waits + 1)) <= 1, (calls, waits)  # (compile_ms is rounded in jit.stats)
    kinds = [t["entry_kinds"]["words"] for t in jit_module.stats(f)["trees"]]
    assert sorted(kinds) == ["list", "unbound"]
