"""Trace trees: nested loops call inner trees instead of leaving native code, side traces link into their
tree, and the limits keep recording and compiling bounded. Everything through jit.stats and jit.dump."""

import math

import pytest
from helpers import Args, check

import jit as jit_module
from jit import jit
from jit.api import state_of
from runtime.loop_driver import FIRST_BACKOFF

OPTS = {"threshold": 8, "side_exit_threshold": 4, "unroll_max_trips": 4}  # (short inner loops: trees)


def exits_of_one_call(f, *args):
    before = jit_module.stats(f)["exits_to_interpreter"]
    f(*args)
    return jit_module.stats(f)["exits_to_interpreter"] - before


def foo():
    for _ in range(32):
        for _ in range(64):
            pass


def three_levels(n):
    s = 0
    for a in range(n):
        for b in range(n):
            for c in range(n):
                s += (a * b + c) & 15
    return s


def nested_kernel(n):
    total = 0
    for i in range(n):
        for j in range(n):
            total += (i ^ j) & 7
    return total


@pytest.mark.parametrize(
    "func, args, outer_iterations",
    [(foo, (), 32), (three_levels, (12,), 12), (nested_kernel, (60,), 60)],
    ids=["foo", "three_levels", "nested_kernel"],
)
def test_nested_loops_stay_native(func, args, outer_iterations):
    f = jit(**OPTS)(func)
    assert f(*args) == func(*args)  # the warm-up call
    assert exits_of_one_call(f, *args) <= 2
    assert f(*args) == func(*args)
    stats = jit_module.stats(f)
    assert any(tree["nested_calls"] for tree in stats["trees"]), stats["trees"]

    off = jit(nesting=False, **OPTS)(func)
    off(*args)
    assert exits_of_one_call(off, *args) >= outer_iterations
    assert not any(tree["nested_calls"] for tree in jit_module.stats(off)["trees"])


def test_three_levels_make_a_tree_of_depth_three():
    f = jit(**OPTS)(three_levels)
    f(12)
    f(12)
    depths = sorted(tree["depth"] for tree in jit_module.stats(f)["trees"])
    assert depths == [1, 2, 3]


def inner_body_marker(n):
    total = 0
    for i in range(n):
        for j in range(n):
            total ^= j * 77
    return total


def test_outer_ir_calls_the_inner_tree_and_does_not_inline_it():
    f = jit(**OPTS)(inner_body_marker)
    f(40)
    f(40)
    monitor = state_of(f).monitor
    trees = {t.loop.line: t for t in monitor.live_trees()}
    outer, inner = trees[min(trees)], trees[max(trees)]
    assert outer.calls == [inner]
    outer_ir = outer.root.ir
    # (the inner root itself, or its tree call entry: codegen.function._build_call_entry)
    assert inner.call_symbol in (inner.symbol, f"{inner.symbol}_call")
    assert f"call i64 @{inner.call_symbol}(" in outer_ir or f'call i64 @"{inner.call_symbol}"(' in outer_ir
    assert "mul" in inner.root.ir and "mul" not in outer_ir  # the inner body (j * 77) is not in the outer
    assert "noinline" in outer_ir


def branch_half(n):
    s = 0
    for i in range(n):
        if i % 2 == 0:
            s += i
        else:
            s -= 1
    return s


def test_half_and_half_branch_runs_without_exits_after_warm_up():
    f = jit(**OPTS)(branch_half)
    f(2000)
    assert exits_of_one_call(f, 2000) == 1  # only the loop's end
    stats = jit_module.stats(f)
    assert stats["side_traces"] >= 1
    side = [t for tree in stats["trees"] for t in tree["traces"] if t["kind"] == "side"]
    assert side and side[0]["links_to"] == stats["trees"][0]["symbol"]
    monitor = state_of(f).monitor
    side_ir = [t for t in monitor.traces if t.trace.kind == "side"][0].ir
    assert "musttail call i64" in side_ir
    assert "side trace" in jit_module.dump(f, "trees")


def branchy_inner(n):
    s = 0
    for i in range(n):
        for j in range(n):
            if (i + j) % 3 == 0:
                s += j
            else:
                s ^= i
    return s


def test_branchy_inner_loop_in_a_nest():
    f = jit(**OPTS)(branchy_inner)
    f(50)
    assert exits_of_one_call(f, 50) <= 2
    assert f(50) == branchy_inner(50)


# --- shapes of inner loops: all must give CPython's results and run natively ----------------------------


def varying_trip_counts(n):
    s = 0
    for i in range(n):
        for j in range(i % 5):  # 0..4 iterations, zero included
            s += i * j
    return s


def inner_breaks_early(n):
    s = 0
    for i in range(n):
        for j in range(n):
            if j > i % 7:
                break
            s += j
    return s


def inner_changes_type(n):
    s = 0
    for i in range(n):
        x = 0.5 if i % 10 == 9 else 1
        for j in range(n):
            x = x + j
        s += x
    return s


def early_return_from_inner(n, stop):
    s = 0
    for i in range(n):
        for j in range(n):
            s += i ^ j
            if s > stop:
                return s, i, j
    return s, -1, -1


def inner_while(n):
    count = 0
    for i in range(n):
        k = i
        while k > 1 and count < 10**9:
            k = k // 2 if k % 2 == 0 else 3 * k + 1
            count += 1
    return count


def float_nest(n):
    acc = 0.0
    for i in range(n):
        for j in range(n):
            acc += math.sqrt(i * j + 1.0) / (j + 1)
    return acc


@pytest.mark.parametrize(
    "func, calls",
    [
        (varying_trip_counts, [(60,), (3,), (0,)]),
        (inner_breaks_early, [(40,), (5,)]),
        (inner_changes_type, [(30,)]),
        (early_return_from_inner, [Args(30, 500), Args(30, 10**9), Args(30, 5)]),
        (inner_while, [(60,)]),
        (float_nest, [(30,)]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_inner_loop_shapes(func, calls):
    check(func, *calls, options=OPTS, native=True)


# --- limits --------------------------------------------------------------------------------------------------


def many_branches(n):
    s = 0
    for i in range(n):
        k = i % 8
        if k == 0:
            s += 1
        elif k == 1:
            s += 2
        elif k == 2:
            s += 3
        elif k == 3:
            s += 4
        elif k == 4:
            s += 5
        elif k == 5:
            s += 6
        elif k == 6:
            s += 7
        else:
            s += 8
    return s


def test_max_side_traces_is_respected_and_reported():
    f = jit(threshold=4, side_exit_threshold=2, max_side_traces=2)(many_branches)
    for _ in range(4):
        assert f(800) == many_branches(800)
    stats = jit_module.stats(f)
    assert all(tree["side_traces"] <= 2 for tree in stats["trees"])
    assert stats["limits_hit"].get("max_side_traces", 0) >= 1


def type_churn(x):
    s = x
    for i in range(30):
        s = s + x
    return s


def test_trees_per_loop_are_bounded_when_type_maps_keep_changing():
    f = jit(threshold=2, max_trees_per_loop=2)(type_churn)
    for value in [1, 1.5, True, 2, 2.5, 10**30, 3, 0.25] * 3:
        assert repr(f(value)) == repr(type_churn(value))
    stats = jit_module.stats(f)
    assert all(len(s.trees) <= 2 for s in state_of(f).monitor.loops if s is not None)
    assert stats["traces_compiled"] <= 4
    assert stats["code_bytes"] <= stats["code_bytes_compiled"]


def calls_python(n):
    s = 0
    for i in range(n):
        s += i + (i is n)  # (identity of two unboxed ints: not compiled)
    return s


def test_failing_loop_is_blacklisted_with_back_off():
    f = jit(threshold=2, max_aborts=3)(calls_python)
    for _ in range(20):
        assert f(200) == calls_python(200)
        if jit_module.stats(f)["blacklisted_loops"]:
            break
    stats = jit_module.stats(f)
    assert stats["aborts_total"] == 3  # backed off, then blacklisted
    assert "identity (is) of int values" in "".join(stats["aborts"])
    assert "blacklisted" in jit_module.explain(f)
    # CPython runs it plain for a back-off of loop starts that doubles, then the loop may try once more
    for backoff in (FIRST_BACKOFF, 2 * FIRST_BACKOFF):
        aborts = jit_module.stats(f)["aborts_total"]
        for _ in range(backoff):
            assert f(200) == calls_python(200)
        assert jit_module.stats(f)["aborts_total"] == aborts
        assert f(200) == calls_python(200)
        assert jit_module.stats(f)["aborts_total"] == aborts + 1
        assert jit_module.stats(f)["blacklisted_loops"]


def test_a_blacklisted_loop_compiles_once_what_failed_is_gone():
    """No decision not to compile is for good: a loop blacklisted on a call whose data the recorder cannot
    handle compiles on later calls whose data it can, after the back-off."""

    def total(data):
        global _LAST_SEEN
        s = 0.0
        for x in data:
            if x:
                s += x * 2.5
            _LAST_SEEN = x
            del _LAST_SEEN  # (a global holding an object deleted: not compiled; holding a float: compiled)
        return s

    class Number:
        def __init__(self, v):
            self.v = v

        def __bool__(self):
            return self.v != 0

        def __rmul__(self, other):
            return self.v * other

        def __mul__(self, other):
            return self.v * other

        def __radd__(self, other):
            return other + self.v

    def odd():
        return [Number(k % 3) for k in range(50)]

    f = jit(threshold=2, max_aborts=2)(total)
    for _ in range(50):
        if jit_module.stats(f)["blacklisted_loops"]:
            break
        assert f(odd()) == total(odd())
    assert jit_module.stats(f)["blacklisted_loops"], jit_module.stats(f)["aborts"]
    assert jit_module.stats(f)["gave_up"] is not None
    floats = [1.5] * 50
    for _ in range(FIRST_BACKOFF + 2):
        assert f(floats) == total(floats)
    stats = jit_module.stats(f)
    assert stats["blacklisted_loops"] == [] and stats["traces_compiled"] == 1
    assert stats["native_entries"] >= 1 and stats["gave_up"] is None


def deep(n):
    s = 0
    for a in range(n):
        for b in range(n):
            for c in range(n):
                for d in range(n):
                    s += a ^ b ^ c ^ d
    return s


def test_max_nesting_depth():
    f = jit(threshold=3, max_nesting_depth=2, unroll_max_trips=4)(deep)
    for _ in range(3):
        assert f(6) == deep(6)
    stats = jit_module.stats(f)
    assert max(tree["depth"] for tree in stats["trees"]) <= 2
    assert any("max_nesting_depth" in reason for reason in stats["aborts"])


def long_body(n):
    s = 0
    for i in range(n):
        s += i
        s ^= 3
        s += i * 2
        s ^= 5
        s += i * 3
        s ^= 7
    return s


def test_max_trace_length():
    f = jit(threshold=2, max_trace_length=8)(long_body)
    assert f(100) == long_body(100)
    assert any("max_trace_length" in reason for reason in jit_module.stats(f)["aborts"])


# --- invalidation --------------------------------------------------------------------------------------------

SCALE = 3


def uses_global_in_inner(n):
    s = 0
    for i in range(n):
        for j in range(n):
            s += j * SCALE
    return s


def test_rebinding_a_global_invalidates_inner_and_outer_trees():
    global SCALE
    f = jit(threshold=4, side_exit_threshold=4)(uses_global_in_inner)
    try:
        for scale in (3, 5, 7, 11, 13):
            SCALE = scale
            for _ in range(6):
                assert f(20) == uses_global_in_inner(20)
        stats = jit_module.stats(f)
        assert stats["invalidated_trees"] >= 2
        assert stats["native_entries"] > 0
        for tree in state_of(f).monitor.live_trees():
            for callee in tree.calls:
                assert callee.valid  # no live tree calls dead code
    finally:
        SCALE = 3
