"""Tiered compilation (``@jit(tier_up_threshold=N)``, ``jit.tiering``): traces compile at level 0 first, hot trees
compile again at opt_level with the trees they reach and are swapped in. The results are CPython's whichever code
runs (before, during and after a swap), with every exit kind, nested trees, peer trees, side traces (joined or
not), in the background, with the code cache; jit.stats says which level each trace's code runs at."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import TEST_OPTIONS, check, define

from jit import background, jit
from jit.api import state_of
from jit.options import Options
from jit.tiering import FIRST_LEVEL

ROOT = Path(__file__).resolve().parents[2]
TIERED = {"tier_up_threshold": 1}


def nested3(n):
    """Three nested loops (tree calls two deep) and a branch in each (side traces)."""
    total = 0
    acc = 0.5
    for i in range(n):
        for j in range(i % 9):
            for k in range(j):
                if (i + k) % 3 == 0:
                    total += k
                else:
                    total -= 1
            if j & 1:
                acc += j * 0.25
        if i % 4 == 0:
            acc -= 1.0
    return total, acc


def branchy(n):
    """A histogram: side traces that jump back to the loop (joined with it: codegen.joined)."""
    counts = [0, 0, 0, 0]
    for i in range(n):
        r = (i * 7) % 10
        if r < 3:
            counts[0] += 1
        elif r < 6:
            counts[1] += i
        elif r < 8:
            counts[2] -= 1
        else:
            counts[3] ^= i
    return counts


def exits(n, data, divisor):
    """Exit kinds: a break, a return inside the loop, an exception raised in it, an int past 64 bits, a value
    of another type in a list (a guard), a float overflow to inf."""
    total = 0
    big = 1
    x = 1.5
    for i in range(n):
        v = data[i % len(data)]
        total += v
        if total > 10**6:
            break
        if i == n - 3 and divisor == 0:
            return total // divisor
        big = big * 3 if i < 50 else big
        x = x * x if i < 12 else x
        if v == -99:
            return ("early", total, i)
    return total, big, x


def peers(n, start):
    """A variable that changes type inside the loop (int, then float): two trees of the loop, jumping into
    each other (peer trees)."""
    x = start
    total = 0.0
    for i in range(n):
        if i == n // 2:
            x = float(x)
        x = x + 1
        total += x
    return x, total


def strings_and_lists(n, words):
    """Objects whose references the code holds and hands back (reference counts must be exact)."""
    out = []
    seen = {}
    for i in range(n):
        w = words[i % len(words)]
        seen[w] = seen.get(w, 0) + 1
        if i % 3 == 0:
            out.append(w)
        else:
            out.append((w, i))
    return out, seen


def levels(f):
    """The optimization levels the code of f's live trees' traces runs at."""
    return sorted({t["opt_level"] for tree in jit.stats(f)["trees"] for t in tree["traces"]})


def assert_tiered_up(f, cached=False):
    """f's code all runs at level 2 after at least one tier-up (cached: whose code came from the code cache:
    linked, not compiled)."""
    stats = jit.stats(f)
    assert stats["first_opt_level"] == FIRST_LEVEL
    assert stats["native_entries"] > 0 and stats["traces_compiled"] > 0, stats
    assert stats["tier_ups"] >= 1 and stats["tier_up_ms"] > 0, stats
    assert len(stats["tier_up_ms_per_trace"]) >= 1 and "link" in stats["tier_up_phases_ms"]
    assert ("codegen" in stats["tier_up_phases_ms"]) is not cached, stats["tier_up_phases_ms"]
    assert levels(f) == [2], stats["trees"]


@pytest.mark.parametrize(
    ("func", "calls"),
    [
        (nested3, [30, 45, 12]),
        (branchy, [200, 333]),
        (exits, [(100, [1, 2, 3], 1), (100, [1, 2, 3], 0), (200, [5, 2**40, 7], 1), (90, [1, 2, -99, 4], 1)]),
        (exits, [(60, [1, 2.5, 3], 1), (80, [True, 2, 3], 1), (40, [10**5, 10**5], 1)]),
        (peers, [(40, 1), (41, 7), (40, 2**62)]),
        (strings_and_lists, [(50, ["a", "bb", "ccc"]), (77, ["x", "y"])]),
    ],
    ids=["nested3", "branchy", "exits", "exits-types", "peers", "objects"],
)
def test_results_match_cpython_with_a_tier_up_at_the_first_hot_entry(func, calls):
    jitted = check(func, *calls, options=TIERED, native=True)
    for f in (jitted, jitted.cpython_baseline):
        assert_tiered_up(f)


@pytest.mark.parametrize("func", [nested3, branchy, peers])
def test_code_below_the_threshold_stays_at_level_0(func):
    arg = (40, 3) if func is peers else (40,)
    f = jit(**TEST_OPTIONS, tier_up_threshold=10**12)(func)
    for _ in range(3):
        assert f(*arg) == func(*arg)
    stats = jit.stats(f)
    assert stats["first_opt_level"] == 0 and levels(f) == [0]
    assert stats["tier_ups"] == 0 and stats["tier_up_ms"] == 0 and stats["tier_up_ms_per_trace"] == []


def test_off_by_default_and_with_opt_level_0():
    assert Options().tier_up_threshold == 0
    for options in ({}, {"opt_level": 0, "tier_up_threshold": 1}, {"opt_level": 1}):
        f = jit(**TEST_OPTIONS, **options)(nested3)
        assert f(30) == nested3(30)
        stats = jit.stats(f)
        level = options.get("opt_level", 2)
        assert stats["first_opt_level"] == level and levels(f) == [level], options
        assert stats["tier_ups"] == 0 and state_of(f).monitor.tiering is None


def test_the_threshold_counts_native_iterations_entered_from_python():
    def loop(n):
        total = 0
        for i in range(n):
            total += i ^ 3
        return total

    f = jit(**TEST_OPTIONS, tier_up_threshold=1000)(loop)
    assert f(300) == loop(300)
    assert levels(f) == [0] and jit.stats(f)["tier_ups"] == 0
    before = []  # (the native iterations before each call)
    while jit.stats(f)["tier_ups"] == 0:
        before.append(jit.stats(f)["native_iterations"])
        assert f(300) == loop(300)
        assert len(before) <= 6  # (about 300 native iterations a call)
    # (asked before each entry: the first entry after the 1000th iteration compiled it again)
    assert before[-1] >= 1000 and before[-2] < 1000
    assert levels(f) == [2] and f(300) == loop(300)


def test_a_side_trace_of_a_tree_at_the_top_level_compiles_there_directly():
    def f(n, flip):
        total = 0
        for i in range(n):
            if flip and i % 2:
                total -= i
            else:
                total += i
        return total

    jitted = jit(**TEST_OPTIONS, **TIERED)(f)
    for _ in range(2):
        assert jitted(60, False) == f(60, False)
    assert levels(jitted) == [2] and jit.stats(jitted)["side_traces"] == 0
    ups = jit.stats(jitted)["tier_up_ms_per_trace"]
    for _ in range(3):
        assert jitted(60, True) == f(60, True)
    stats = jit.stats(jitted)
    assert stats["side_traces"] >= 1 and levels(jitted) == [2]
    assert stats["tier_up_ms_per_trace"] == ups  # (compiled at level 2 once, not compiled again)
    side = [t for tree in stats["trees"] for t in tree["traces"] if t["kind"] == "side"]
    assert all(t["tier_up_ms"] == 0 and t["opt_level"] == 2 for t in side)


def test_a_side_trace_at_level_0_on_a_tree_at_the_top_is_compiled_again_alone():
    """A side trace installed at level 0 in a tree swapped meanwhile (forced here: the monitor asked for level 0)
    makes the tree's level 0 again; its next hot entry compiles only that side trace again."""

    def f(n, flip):
        total = 0
        for i in range(n):
            if flip and i % 2:
                total -= i
            else:
                total += i
        return total

    jitted = jit(**TEST_OPTIONS, **TIERED)(f)
    for _ in range(2):
        assert jitted(60, False) == f(60, False)
    tiering = state_of(jitted).monitor.tiering
    tiering.level_for = lambda trace: FIRST_LEVEL
    ups = len(jit.stats(jitted)["tier_up_ms_per_trace"])
    assert jitted(60, True) == f(60, True)  # (records the side trace, at level 0: the tree is at 0 again)
    for _ in range(3):
        assert jitted(60, True) == f(60, True)
    stats = jit.stats(jitted)
    assert stats["side_traces"] >= 1 and levels(jitted) == [2]
    assert len(stats["tier_up_ms_per_trace"]) == ups + stats["side_traces"]


def test_exit_counters_carry_over_a_swap():
    jitted = jit(**TEST_OPTIONS, tier_up_threshold=10**12)(branchy)
    for _ in range(2):
        assert jitted(300) == branchy(300)

    def taken():
        return {
            (t["symbol"], e["id"]): e["taken"]
            for tree in jit.stats(jitted)["trees"]
            for t in tree["traces"]
            for e in t["exits"]
        }

    before = taken()
    assert sum(before.values()) > 0 and levels(jitted) == [0]
    state_of(jitted).monitor.tiering.threshold = 1
    assert jitted(300) == branchy(300)
    after = taken()
    assert levels(jitted) == [2]
    assert all(after[key] >= count for key, count in before.items())


def test_reference_counts_are_those_of_cpython():
    words = [f"w{i}" * 3 for i in range(4)]  # (not interned: their counts are ours alone)
    before = [sys.getrefcount(w) for w in words]
    plain = strings_and_lists(500, words)
    plain_counts = [sys.getrefcount(w) for w in words]
    del plain
    f = jit(**TEST_OPTIONS, **TIERED)(strings_and_lists)
    for _ in range(4):  # (level 0, the swap, level 2)
        result = f(500, words)
        assert [sys.getrefcount(w) for w in words] == plain_counts
        del result
    assert levels(f) == [2]
    assert [sys.getrefcount(w) for w in words] == before


def test_in_the_background():
    options = {**TEST_OPTIONS, **TIERED, "sync_compile": False}
    jitted = jit(**options)(nested3)
    for n in (40, 41, 42):
        assert jitted(n) == nested3(n)
        assert background.compiler().drain(timeout=60)
    for _ in range(3):
        assert jitted(43) == nested3(43)
        assert background.compiler().drain(timeout=60)
    assert_tiered_up(jitted)
    assert jit.stats(jitted)["compiles_pending"] == 0


def test_the_code_cache_keeps_each_level(tmp_path, monkeypatch):
    from codegen import cache as cache_module

    monkeypatch.setenv(cache_module.ENVIRONMENT_VARIABLE, str(tmp_path))
    options = {**TIERED, "cache": True}
    first = check(nested3, 30, 40, options=options, native=True)
    stats = jit.stats(first)
    assert stats["cache"]["stores"] > stats["traces_compiled"]  # (both levels: entries for each)
    assert_tiered_up(first)
    again = check(nested3, 30, 40, options=options, native=True)
    for f in (again, again.cpython_baseline):
        stats = jit.stats(f)
        assert stats["llvm_compiles"] == 0 and stats["cache"]["misses"] == 0, stats["cache"]
        assert stats["cache"]["hits"] >= stats["traces_compiled"] + len(stats["tier_up_ms_per_trace"])
        assert_tiered_up(f, cached=True)


FORK_SCRIPT = """
import os, sys, time
sys.path.insert(0, {root!r})
from jit import background, jit, tiering

original = tiering.compile_lowered

def slow(*args, **kwargs):
    time.sleep(0.3)  # a tier-up under way when the process forks
    native = original(*args, **kwargs)
    print("compiled", flush=True)
    return native

tiering.compile_lowered = slow

def kernel(n):
    total = 0
    for i in range(n):
        total += (i * 3) ^ 5
    return total

f = jit(threshold=2, tier_up_threshold=1, sync_compile=False)(kernel)
assert f(100) == kernel(100) and background.compiler().drain(timeout=60)
assert f(100) == kernel(100) and jit.stats(f)["native_iterations"] > 0
assert f(100) == kernel(100)  # (its first entry compiles it again: in the background, slowly)
pid = os.fork()  # waits for the background compiler, holds LLVM's lock across the fork
if pid == 0:
    ok = f(300) == kernel(300) and jit.stats(f)["tier_ups"] == 1
    g = jit(threshold=2, tier_up_threshold=1, sync_compile=False)(kernel)
    for _ in range(3):
        ok = ok and g(300) == kernel(300) and background.compiler().drain(timeout=60)
    ok = ok and jit.stats(g)["tier_ups"] == 1 and g(300) == kernel(300)
    os._exit(0 if ok else 1)
_, status = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(status))
print("parent", jit.stats(f)["tier_ups"], f(100) == kernel(100))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_fork_while_a_tree_compiles_again(tmp_path):
    script = tmp_path / "fork.py"
    script.write_text(textwrap.dedent(FORK_SCRIPT.format(root=str(ROOT))))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "child 0" in proc.stdout and "parent 1 True" in proc.stdout, proc.stdout + proc.stderr
    assert proc.stdout.split().count("compiled") == 2  # the parent's tier-up (before the fork), the child's


def test_generated_program_with_peer_trees_and_nested_loops():
    """The program generator's peer trees (an inner loop with two trees, one tail-jumping into the other)."""
    from tests.runtime.test_nested_exits import PEER_TREES

    func = define(PEER_TREES, "f")
    nan = float("nan")
    calls = [
        (-1, -(2**63), nan, 1e16, [4.7e16, -3.7e16, -5.3e16, 2.9e87, 9.2e18]),
        (-7, -84986779, 9.1e-205, -1.3e-218, [-2, 4611686018427387871, 2**64, 9]),
    ]
    check(func, *calls, options=TIERED)


def assert_links_point_at_current_code(f):
    """Every link pointer of every live trace of f points at its target's code as it is now (a side trace, or a
    root tree its exit jumps into): a swap patched those of the traces it swapped and of those linked to them."""
    import ctypes

    linked = 0
    for tree in state_of(f).monitor.live_trees():
        for compiled in tree.traces():
            for exit in compiled.exits:
                target = exit.side if exit.side is not None else None
                if target is None and exit.linked_tree is not None:
                    target = exit.linked_tree.root
                if target is not None:
                    pointer = ctypes.c_void_p.from_address(compiled.links_address + 8 * exit.index).value
                    assert pointer == target.address, (compiled.symbol, exit.id)
                    linked += 1
    return linked


def test_exits_linked_to_root_trees_follow_the_swap():
    """A side trace's end that jumps into a root tree recorded for its state (a link pointer set at run time,
    ``TreeRegistry.link_to_tree``), before and after the trees are swapped."""
    from tests.jit.test_kind_maps import BIG, OPTIONS, _jumps, inner_on_some_iterations

    f = jit(**OPTIONS, tier_up_threshold=10**12)(inner_on_some_iterations)
    for _ in range(6):
        assert f(200, 10, BIG) == inner_on_some_iterations(200, 10, BIG)
    assert _jumps(f) and levels(f) == [0]
    assert assert_links_point_at_current_code(f) > 0
    state_of(f).monitor.tiering.threshold = 1
    for args in ((200, 10, BIG), (200, 10, -BIG), (200, 10, 5), (200, 10, BIG)):
        assert f(*args) == inner_on_some_iterations(*args)
    assert _jumps(f) and levels(f) == [2] and jit.stats(f)["tier_ups"] >= 1
    assert assert_links_point_at_current_code(f) > 0
    check(inner_on_some_iterations, (200, 10, BIG), (200, 10, -BIG), (40, 10, 2**63 - 1), options=TIERED, native=True)


def test_peer_trees_of_a_hoisted_guard_follow_the_swap():
    """One loop called with three functions: a peer tree each for the first two (``Monitor.wants_peer``: the
    hoisted guard's exit at the entry jumps into the other tree), the third through a side trace."""

    def a(v):
        return v + 1

    def b(v):
        return v + 2

    def c(v):
        return v + 3

    def spin(g, n, out):
        total = 0
        for i in range(n):
            total += g(i) & 7
            out[0] = i
        return total

    f = jit(threshold=2, tier_up_threshold=1)(spin)
    for _ in range(40):
        for g in (a, b, c):
            assert f(g, 300, [0]) == spin(g, 300, [0])
    assert len(jit.stats(f)["trees"]) >= 2 and levels(f) == [2]
    assert assert_links_point_at_current_code(f) > 0
    check(spin, (a, 300, [0]), (b, 300, [0]), (c, 300, [0]), (a, 300, [0]), options=TIERED, native=True)


@pytest.mark.parametrize(
    ("func", "calls"), [(nested3, [30, 45]), (branchy, [200, 333]), (peers, [(40, 1), (40, 2**62)])]
)
def test_link_pointers_point_at_the_swapped_code(func, calls):
    f = jit(**TEST_OPTIONS, **TIERED)(func)
    for call in calls:
        call = call if isinstance(call, tuple) else (call,)
        for _ in range(2):
            assert f(*call) == func(*call)
    assert levels(f) == [2]
    assert assert_links_point_at_current_code(f) > 0


def test_a_trace_linked_against_code_swapped_while_it_compiled_is_compiled_again(monkeypatch):
    """A side trace lowered before its tree was swapped and linked after (forced here: the swap happens inside
    its compilation, as the background compiler may do it) jumps by symbol into the old root, whose link pointers
    do not see it: its next entry compiles it again against the new root."""
    from jit import monitor as monitor_module

    def f(n, flip):
        total = 0
        for i in range(n):
            if flip and i % 2:
                total -= i
            else:
                total += i
        return total

    jitted = jit(**TEST_OPTIONS, tier_up_threshold=10**12)(f)
    for _ in range(2):
        assert jitted(60, False) == f(60, False)
    monitor = state_of(jitted).monitor
    tiering = monitor.tiering
    original = monitor_module.compile_lowered

    during_swap = []

    def swapped_meanwhile(lowered, level, cache=None, libraries=None):
        if "_side" in lowered.symbol and tiering.swaps == 0:
            during_swap.append(lowered.symbol)
            tiering.threshold = 1
            (tree,) = monitor.live_trees()
            tiering.before_entry(tree)  # (the root, at level 2 now, in a new library)
            assert tiering.swaps == 1
        return original(lowered, level, cache, libraries)

    monkeypatch.setattr(monitor_module, "compile_lowered", swapped_meanwhile)
    monkeypatch.setattr(tiering, "level_for", lambda trace: tiering.top)
    calls = 0
    while jit.stats(jitted)["side_traces"] == 0:
        assert jitted(60, True) == f(60, True)
        calls += 1
        assert calls < 5
    for _ in range(2):
        assert jitted(60, True) == f(60, True)
    (tree,) = monitor.live_trees()
    (stale,) = [side for side in tree.side_traces if side.symbol in during_swap]
    # (compiled at level 2 against the old root, then again against the new one at the next entry)
    assert stale.opt_level == 2 and stale.tier_up_ms > 0 and not tiering.needs(stale)
    assert stale.libraries == (tree.library,) and stale.lowered.dependencies != [tree.library]
    assert all(side.tier_up_ms == 0 for side in tree.side_traces if side is not stale)  # (compiled after the swap)
    assert not tiering.wanted(tree)
    assert assert_links_point_at_current_code(jitted) > 0
    exits_before = jit.stats(jitted)["exits_to_interpreter"]
    assert jitted(60, True) == f(60, True)
    assert jit.stats(jitted)["exits_to_interpreter"] - exits_before <= 2  # (the loop's end: both ways native)
