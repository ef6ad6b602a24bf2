"""The exits of a nested loop's tree that go back to the outer trace calling it, once per outer iteration (issue 9
item 1: the nested-call cost): the buffer's old reference in a slot the exit writes is released only where
there is one (one NULL test, not a call: ``codegen.context.LowerContext.materialize``), and a counted fast copy
whose run ended with the range leaves before computing its conditions (``codegen.function._build_fast``).

Each case is differential against CPython, asserted native and nested (``_CALL_TREE``), or, where the inner loop
is short enough to be unrolled into the outer trace (``unroll_max_trips``), asserted to call no tree; memory
(tracemalloc) shows a reference the exit must release and did not."""

import gc
import tracemalloc

import pytest
from helpers import check

import jit as jit_module
from jit import jit

INT64_MAX = 2**63 - 1


def list_then_inner_loop(n, m):
    """The outer trace builds a list in j and hands it over (tag OWNED) to the inner tree, whose loop assigns j:
    its exit releases the list (when m > 0), or leaves it there (m == 0)."""
    total = 0
    j = None
    for i in range(n):
        j = [i, i + 1]
        for j in range(m):
            total += (i ^ j) & 7
        total += j if type(j) is int else len(j)
    return total


def big_int_then_inner_loop(n, m, big):
    """The same with an int past 64 bits the outer trace computes (an owned int object)."""
    total = 0
    j = 0
    for i in range(n):
        j = big + i
        for j in range(m):
            total += j
        total += j % 1000
    return total


def two_level(start, n, m, step):
    total = start
    for i in range(n):
        for j in range(0, m * step, step):
            total += (i ^ j) & 7
    return total


def _calls_a_tree(f) -> bool:
    return any(trace["calls"] for tree in jit_module.stats(f)["trees"] for trace in tree["traces"])


def _tree_called(m: int, unroll: int) -> bool:
    """Is the inner loop of m trips called as a tree (not unrolled into the outer trace, unroll_max_trips)?
    (An inner loop that never runs has no tree.)"""
    return m > unroll


@pytest.mark.parametrize("unroll", [0, 4])
@pytest.mark.parametrize("m", [0, 1, 2, 5, 40])
def test_a_list_the_outer_trace_handed_over_is_released_at_the_inner_exit(m, unroll):
    options = {"unroll_max_trips": unroll}
    jitted = check(list_then_inner_loop, (30, m), (300, m), options=options, native=True)
    assert _calls_a_tree(jitted.cpython_baseline) == _tree_called(m, unroll)


@pytest.mark.parametrize("unroll", [0, 4])
@pytest.mark.parametrize("m", [0, 1, 3, 40])
def test_an_int_object_the_outer_trace_handed_over_is_released_at_the_inner_exit(m, unroll):
    options = {"unroll_max_trips": unroll}
    jitted = check(big_int_then_inner_loop, (30, m, 2**70), (300, m, 2**70), options=options, native=True)
    assert _calls_a_tree(jitted.cpython_baseline) == _tree_called(m, unroll)


@pytest.mark.parametrize("unroll", [0, 4])
@pytest.mark.parametrize("func, args", [(list_then_inner_loop, (2000, 3)), (big_int_then_inner_loop, (2000, 3, 2**70))])
def test_the_inner_exit_leaks_nothing(func, args, unroll):
    """(unroll 4: the inner loop recorded through, the owned value the outer trace made in j replaced by an int
    in the same trace: released there)"""
    f = jit(threshold=2, side_exit_threshold=2, unroll_max_trips=unroll)(func)
    for _ in range(4):
        assert f(*args) == func(*args)
    assert _calls_a_tree(f) == _tree_called(args[1], unroll)
    gc.collect()
    tracemalloc.start()
    try:
        f(*args)
        first = tracemalloc.get_traced_memory()[0]
        for _ in range(5):
            f(*args)
        grown = tracemalloc.get_traced_memory()[0] - first
    finally:
        tracemalloc.stop()
    # (a leaked list or int object per outer iteration: 5 * 2000 * 56 bytes or more)
    assert grown < 20_000, grown
    assert jit_module.stats(f)["native_iterations"] >= 2000


@pytest.mark.parametrize(
    "args",
    [
        (0, 50, 64, 1),
        (0, 50, 200, 3),
        (0, 50, 100, -1),
        (0, 50, 0, 1),
        (0, 50, 33, 1),
        # the sum crosses 2**63 inside an inner run: the fast copy's conditions fail, the checked copy overflows
        (INT64_MAX - 7 * 50 * 64 + 40, 50, 64, 1),
    ],
)
def test_an_inner_fast_copy_ends_its_run_with_the_range_exactly(args):
    jitted = check(two_level, args, native=True)
    assert _calls_a_tree(jitted.cpython_baseline) == (args[2] > 0)


def test_the_inner_fast_copy_runs_at_each_call():
    """(What the second case is about: each call of the inner tree runs its fast copy and leaves it at the range's
    end.)"""
    f = jit(threshold=2, side_exit_threshold=2)(two_level)
    for _ in range(3):
        assert f(0, 200, 100, 1) == two_level(0, 200, 100, 1)
    trees = jit_module.stats(f)["trees"]
    called = {symbol for tree in trees for trace in tree["traces"] for symbol in trace["calls"]}
    inner = [trace for tree in trees if tree["symbol"] in called for trace in tree["traces"]]
    assert inner and sum(trace["fast_runs"] for trace in inner) >= 200
