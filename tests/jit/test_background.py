"""Compiling in the background (``jit.background``, ``@jit(sync_compile=False)``): the same results as CPython
whenever the code arrives, LLVM on the background thread, installed code entered, and processes that fork or
exit while a trace compiles neither deadlock nor crash."""

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from helpers import TEST_OPTIONS, check

from jit import background, jit
from jit import monitor as monitor_module
from jit.api import state_of

ROOT = Path(__file__).resolve().parents[2]
BACKGROUND = {**TEST_OPTIONS, "sync_compile": False}


def nested(n):
    total = 0
    for i in range(n):
        for j in range(i % 7):
            total += (i ^ j) & 5
    return total


def branchy(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            total += i
        elif i % 3 == 1:
            total -= 1
        else:
            total ^= i
    return total


def floats(n):
    s = 0.0
    for i in range(n):
        s += i * 0.5
    return s


@pytest.mark.parametrize("func", [nested, branchy, floats])
def test_background_compilation_gives_cpythons_results(func):
    check(func, 0, 1, 10, 200, 50, 1000, options=BACKGROUND)
    background.compiler().drain()


def _threads_of(monkeypatch, name):
    """Record the name of the thread each call of jit.monitor's `name` runs on."""
    threads = []
    original = getattr(monitor_module, name)

    def wrapper(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return original(*args, **kwargs)

    monkeypatch.setattr(monitor_module, name, wrapper)
    return threads


def test_llvm_runs_in_the_background_and_the_code_is_entered(monkeypatch):
    lowering = _threads_of(monkeypatch, "lower_trace")
    compiling = _threads_of(monkeypatch, "compile_lowered")
    f = jit(**BACKGROUND)(floats)
    assert f(100) == floats(100)
    assert background.compiler().drain()
    stats = jit.stats(f)
    assert stats["compiles_pending"] == 0 and stats["traces_compiled"] >= 1
    assert set(lowering) == {threading.current_thread().name}  # optimizing and lowering: the recording thread
    assert set(compiling) == {"tracejit-compiler"}
    entries = stats["native_entries"]
    assert f(100) == floats(100)
    assert jit.stats(f)["native_entries"] > entries


def test_sync_compile_is_the_default_and_compiles_on_the_recording_thread(monkeypatch):
    compiling = _threads_of(monkeypatch, "compile_lowered")
    f = jit(**TEST_OPTIONS)(floats)
    assert f(100) == floats(100)
    assert jit.stats(f)["traces_compiled"] >= 1 and jit.stats(f)["compiles_pending"] == 0
    assert set(compiling) == {threading.current_thread().name}


def test_an_outer_loop_waits_for_its_inner_loops_tree():
    # while the inner loop's tree compiles, the outer loop is not recorded inlining the inner loop: once the
    # background compiler is done, the outer tree calls the inner one
    f = jit(**BACKGROUND)(nested)
    for _ in range(20):
        assert f(300) == nested(300)
        background.compiler().drain()
    depths = [tree["depth"] for tree in jit.stats(f)["trees"]]
    assert max(depths) == 2, jit.stats(f)["trees"]


def test_jobs_run_in_order_and_drain_waits_for_them():
    compiler = background.BackgroundCompiler()
    done = []
    gate = threading.Event()
    compiler.submit(gate.wait)
    for k in range(5):
        compiler.submit(lambda k=k: done.append(k))
    assert compiler.unfinished == 6
    gate.set()
    assert compiler.drain(timeout=30)
    assert done == [0, 1, 2, 3, 4] and compiler.unfinished == 0


def test_a_closed_compiler_drops_queued_jobs_and_refuses_new_ones():
    compiler = background.BackgroundCompiler()
    gate = threading.Event()
    started = threading.Event()
    done = []

    def first():
        started.set()
        gate.wait()
        done.append("first")

    compiler.submit(first)
    compiler.submit(lambda: done.append("queued"))
    assert started.wait(timeout=30)
    threading.Timer(0.05, gate.set).start()
    compiler.close(timeout=30)  # waits for the job under way, drops the queued one
    assert done == ["first"]
    assert not compiler.submit(lambda: done.append("late"))


def _run(tmp_path: Path, script: str) -> subprocess.CompletedProcess:
    path = tmp_path / "script.py"  # (a file: jit needs the source)
    path.write_text(textwrap.dedent(script))
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=120)


SLOW_COMPILES = """
    import os, sys, threading, time
    from jit import jit, background
    from jit import monitor as monitor_module

    original = monitor_module.compile_lowered
    started = threading.Event()

    def slow(*args, **kwargs):
        started.set()
        time.sleep(0.3)  # a compilation under way when the process forks or exits
        native = original(*args, **kwargs)
        print("compiled", flush=True)
        return native

    monitor_module.compile_lowered = slow

    def kernel(n):
        total = 0
        for i in range(n):
            total += i * 3
        return total

    f = jit(threshold=2, sync_compile=False)(kernel)
    assert f(100) == kernel(100)
    assert jit.stats(f)["compiles_pending"] == 1
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_fork_while_a_trace_compiles_does_not_deadlock(tmp_path):
    proc = _run(
        tmp_path,
        SLOW_COMPILES
        + """
    pid = os.fork()  # waits for the background compilation, holds LLVM's lock across the fork
    if pid == 0:
        g = jit(threshold=2, sync_compile=False)(kernel)
        ok = g(500) == kernel(500) and background.compiler().drain(timeout=60)
        ok = ok and jit.stats(g)["traces_compiled"] == 1 and g(500) == kernel(500)
        ok = ok and jit.stats(g)["native_entries"] >= 1
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    print("child", os.waitstatus_to_exitcode(status))
    print("parent", jit.stats(f)["compiles_pending"], f(100) == kernel(100), jit.stats(f)["native_entries"] >= 1)
    """,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split()
    assert "child 0" in proc.stdout and "parent 0 True True" in proc.stdout, proc.stdout + proc.stderr
    assert lines.count("compiled") == 2  # the parent's (before the fork), the child's


def test_exit_while_a_trace_compiles_waits_for_it(tmp_path):
    proc = _run(tmp_path, SLOW_COMPILES + "\n    assert started.wait(60)\n    sys.exit(0)\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["compiled"], proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "Fatal" not in proc.stderr


def two_loops(n):
    total = 0
    for i in range(n):
        for j in range(5):
            total += i * j
    return total


def test_a_trace_built_against_an_invalidated_tree_is_stale():
    # what the background compiler checks before installing: the trees a trace calls must still be valid
    f = jit(**TEST_OPTIONS, unroll_max_trips=4)(two_loops)  # (its inner loop of 5 trips calls its tree)
    assert f(50) == two_loops(50) and f(50) == two_loops(50)
    registry = state_of(f).monitor.registry
    trees = {tree.loop.line: tree for tree in registry.live_trees()}
    outer, inner = trees[min(trees)], trees[max(trees)]
    assert outer.calls == [inner]
    assert not registry.stale(outer.root) and not registry.stale(inner.root)
    registry.invalidate(inner)  # (and outer, which calls it)
    assert registry.stale(outer.root)
    assert f(50) == two_loops(50)


def test_invalidated_code_is_not_freed_while_a_trace_compiles():
    f = jit(**TEST_OPTIONS, unroll_max_trips=4)(two_loops)  # (its inner loop of 5 trips calls its tree)
    assert f(50) == two_loops(50) and f(50) == two_loops(50)
    registry = state_of(f).monitor.registry
    (inner,) = [tree for tree in registry.live_trees() if not tree.calls]
    held = len(registry.traces)
    registry.compiling += 1  # a trace compiling: it may link against the invalidated code
    registry.invalidate(inner)
    registry.free_graveyard()
    assert registry.graveyard and len(registry.traces) == held
    registry.compiling -= 1
    registry.free_graveyard()
    assert not registry.graveyard and len(registry.traces) < held
    assert f(50) == two_loops(50)


def test_jobs_submitted_later_run_after_the_others():
    compiler = background.BackgroundCompiler()
    gate = threading.Event()
    order = []
    assert compiler.submit(lambda: (gate.wait(10), order.append("first")))
    assert compiler.submit(lambda: order.append("tier-up"), later=True)
    assert compiler.submit(lambda: order.append("trace"))
    assert compiler.unfinished == 3
    gate.set()
    assert compiler.drain(timeout=10)
    assert order == ["first", "trace", "tier-up"]
    compiler.close()


def two_ways(n):
    total = 0
    for i in range(n):
        k = i % 7
        if k == 0:
            total += 3
        elif k == 1:
            total -= 1
        else:
            total += k
    return total


def _joined(f):
    """How many traces each side trace's function joins with its tree's loop (codegen.joined), sorted."""
    traces = [trace for tree in jit.stats(f)["trees"] for trace in tree["traces"]]
    return sorted(len(trace["joined"]) for trace in traces if trace["kind"] == "side")


def test_a_side_trace_waits_for_its_siblings_to_be_joined_with_them():
    # the root's two failing guards grow side traces that both come back to the loop: compiled synchronously, the
    # second one's function holds both ways of the loop (codegen.joined). In the background, the second exit gets
    # hot while the first side trace compiles: recorded then, it would be joined with itself only, and the loop
    # would run in two functions jumping into each other (histogram: 2.3 times as slow). It waits for the first
    sync = jit(**TEST_OPTIONS)(two_ways)
    for _ in range(3):
        assert sync(200) == two_ways(200)
    assert _joined(sync) == [1, 2]
    f = jit(**BACKGROUND)(two_ways)
    compiler = background.compiler()
    gate = threading.Event()
    compiler.submit(gate.wait)  # (holds the compiler: what is queued behind it stays on its way)
    assert f(200) == two_ways(200)  # records the root
    gate.set()
    assert compiler.drain()
    assert _joined(f) == []
    gate.clear()
    compiler.submit(gate.wait)
    assert f(200) == two_ways(200)  # the root runs; both exits get hot while the first side trace is on its way
    assert jit.stats(f)["side_traces"] == 0 and jit.stats(f)["compiles_pending"] == 1
    assert jit.stats(f)["sides_postponed"] >= 1
    gate.set()
    assert compiler.drain()
    for _ in range(3):
        assert f(200) == two_ways(200)
        assert compiler.drain()
    assert _joined(f) == [1, 2]
    assert jit.stats(sync)["sides_postponed"] == 0


def rows_sum(rows):
    total = 0
    for row in rows:
        for x in row:
            total += x * 3
    return total


def test_an_outer_loop_of_few_iterations_gets_hot_while_its_inner_tree_compiles():
    # compiled synchronously, the inner loop's tree runs in the hand-off that recorded it, which makes the outer
    # loop hot at its next iteration (jit.frontend.instrument's boost). In the background that hand-off runs no
    # native code; the outer loop must get hot all the same, else CPython counts its starts of three iterations
    # meanwhile and the loop driver judges them too short to record (runtime.loop_driver.starts_too_short)
    rows = [list(range(k, k + 100)) for k in range(3)]
    expected = rows_sum(rows)
    compiler = background.compiler()
    results = {}
    for name, options in (("sync", {}), ("bg", {"sync_compile": False})):
        f = jit(**options)(rows_sum)
        gate = threading.Event()
        compiler.submit(gate.wait)  # (a compilation that takes 30 calls)
        for _ in range(30):
            assert f(rows) == expected
        gate.set()
        assert compiler.drain()
        for _ in range(5):
            assert f(rows) == expected
            assert compiler.drain()
        stats = jit.stats(f)
        results[name] = (sorted(tree["depth"] for tree in stats["trees"]), stats["not_paying_loops"])
    assert results["bg"] == results["sync"] == ([1, 2], []), results


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_child_forked_while_traces_compile_goes_on_compiling_the_same_function(tmp_path):
    # the fork waits for every queued compilation, so the child inherits no trace on its way that would never
    # arrive there (compiles_pending 0): the function's outer loop, which waited for its inner loop's tree,
    # records in the child and calls that tree
    proc = _run(
        tmp_path,
        SLOW_COMPILES
        + """
    def nest(n):
        total = 0
        for i in range(n):
            for j in range(i % 9):
                total += i ^ j
        return total

    g = jit(sync_compile=False)(nest)
    assert g(300) == nest(300)
    assert jit.stats(g)["compiles_pending"] >= 1
    pid = os.fork()
    if pid == 0:
        ok = jit.stats(g)["compiles_pending"] == 0 and jit.stats(f)["compiles_pending"] == 0
        for _ in range(10):
            ok = ok and g(300) == nest(300) and background.compiler().drain(timeout=60)
        ok = ok and max(tree["depth"] for tree in jit.stats(g)["trees"]) == 2
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    print("child", os.waitstatus_to_exitcode(status))
    """,
    )
    assert proc.returncode == 0, proc.stderr
    assert "child 0" in proc.stdout, proc.stdout + proc.stderr


def three_level(n):
    total = 0.0
    for i in range(n):
        for j in range(n):
            s = 0.0
            for k in range(3):
                t = (i - j + k) * 0.5
                s += t * t
            total += s
    return total


def test_a_loop_does_not_record_while_the_tree_that_runs_it_compiles():
    # the middle loop's trace unrolls the loop of 3 trips. Compiled synchronously, its tree runs that loop from
    # then on; in the background, the interpreter met the short loop's header all the while the tree compiled,
    # and recorded a tree for it that nothing entered
    compiler = background.compiler()
    shapes = {}
    for name, options in (("sync", {}), ("bg", {"sync_compile": False})):
        f = jit(**options)(three_level)
        gate = threading.Event()
        compiler.submit(gate.wait)  # (compilations that take three calls)
        for _ in range(3):
            assert f(60) == three_level(60)
        gate.set()
        assert compiler.drain()
        for _ in range(3):
            assert f(60) == three_level(60)
            assert compiler.drain()
        shapes[name] = sorted((tree["loop_line"], tree["depth"]) for tree in jit.stats(f)["trees"])
    line = three_level.__code__.co_firstlineno
    assert shapes["bg"] == shapes["sync"] == [(line + 2, 2), (line + 3, 1)], shapes


def test_an_exit_has_its_side_trace_before_it_may_record_again(monkeypatch):
    # the background compiler installs while the user's thread runs: an exit idle again before its side trace is
    # hung from it would grow a second side trace from the same exit (seen: type_dispatch, two per exit)
    from runtime.registry import TreeRegistry

    phases = []
    original = TreeRegistry.install_side

    def install_side(self, compiled):
        phases.append(compiled.trace.parent_exit.life.phase.value)
        return original(self, compiled)

    monkeypatch.setattr(TreeRegistry, "install_side", install_side)
    f = jit(**BACKGROUND)(two_ways)
    for _ in range(4):
        assert f(200) == two_ways(200)
        assert background.compiler().drain()
    assert phases == ["compiling", "compiling"]


def test_a_side_exit_that_got_its_side_trace_meanwhile_does_not_record():
    # the user's thread saw the exit without a side trace, then the background compiler hung one and let the exit
    # be idle: the start that wins must not record a second side trace from it
    f = jit(**TEST_OPTIONS)(two_ways)
    for _ in range(3):
        assert f(200) == two_ways(200)
    monitor = state_of(f).monitor
    exits = [e for t in monitor.traces for e in t.exits if e.side is not None]
    assert exits
    recordings = monitor.recordings
    monitor.maybe_record_side(None, exits[0])  # (as Monitor.exited does once it saw no side trace)
    assert monitor.recordings == recordings and exits[0].life.phase.value == "idle"
