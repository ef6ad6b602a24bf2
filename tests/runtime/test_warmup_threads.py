"""Warm-up of loop nests: an inner loop without a tree yet is recorded first and the outer loop after it, which is
bad timing, not a failure (``Reason.INNER_FIRST``); an inner loop another thread records or compiles makes the
outer loop wait for it, not retry on every iteration nor count towards blacklisting (``Reason.INNER_BUSY``). So a
loop nest first called from 2 or 4 threads at once reaches the steady state of a single-thread warm-up (issue 8,
items 5 and 6). Every result is compared with CPython's; no test measures time.
"""

import gc
import sys
import threading

import pytest

from jit import jit
from jit.aborts import Reason
from jit.api import state_of

JOIN_TIMEOUT = 120.0
RETRIED = {reason.code for reason in Reason if reason.retry}  # the aborts that only delay a recording


def two_level(n, m):
    total = 0
    for i in range(n):
        for j in range(m):
            total += (i * j) % 7
    return total


def three_level(n, m):
    total = 0
    for i in range(n):
        for j in range(m):
            for k in range(4):
                total += (i + j) ^ k
    return total


def breaking(n, m):
    """The inner loop breaks on some outer iterations and runs to its end on others."""
    found = 0
    for i in range(n):
        for j in range(m):
            if j * j > i * 3:
                found += j
                break
        else:
            found -= 1
    return found


def short_inner(n, flag):
    """Inner loops of one or two iterations never get hot by themselves: they record first when the outer loop
    meets them (a float accumulator: a second type map at the same headers when flag is a float)."""
    total = flag * 0
    for i in range(n):
        w = 0
        while w < 2:
            w += 1
            total += i % 5 + flag
        for k in range(i, i + 1):
            total -= k % 3
    return total


CASES = [(two_level, (200, 64)), (three_level, (60, 20)), (breaking, (300, 40))]


@pytest.fixture(autouse=True)
def fast_switching():
    """Switch threads often, so they interleave inside the interpreter and the recorder as much as possible."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


def warm_up(func, args, threads, calls, **options):
    """A new @jit function called `calls` times from each of `threads` threads started together (a barrier);
    every result, and the function."""
    f = jit(**options)(func)
    barrier = threading.Barrier(threads)
    results, errors = [], []

    def work():
        try:
            barrier.wait(timeout=JOIN_TIMEOUT)
            for _ in range(calls):
                results.append(f(*args))
        except BaseException as exc:
            errors.append(exc)

    workers = [threading.Thread(target=work, daemon=True) for _ in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join(JOIN_TIMEOUT)
    assert not any(t.is_alive() for t in workers), "a thread hung"
    if errors:
        raise errors[0]
    return f, results


def tree_entries(f):
    """Native entries of each of f's trees, by symbol."""
    return {tree["symbol"]: tree["native_entries"] for tree in jit.stats(f)["trees"]}


def steady_call(f, args):
    """One more call after the warm-up: its result and how often it entered and left native code."""
    before = jit.stats(f)
    result = f(*args)
    after = jit.stats(f)
    return result, (
        after["native_entries"] - before["native_entries"],
        after["exits_to_interpreter"] - before["exits_to_interpreter"],
    )


@pytest.fixture
def no_collections():
    """No garbage collection during the test: a collection is the parking clock (runtime.parking), which in a
    long test session could wake a tree parked here at any point of the steady call (a woken tree is another
    steady state, not the one compared). (Failures of [three_level-2-4] about once in a hundred warm-ups had
    another cause: see test_hand_offs_while_another_thread_records_the_loop_are_not_judged.)"""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.parametrize("unroll", [0, 4])
@pytest.mark.parametrize("threads", [2, 4])
@pytest.mark.parametrize("func, args", CASES, ids=[func.__name__ for func, _ in CASES])
def test_warm_up_from_threads_reaches_the_single_thread_steady_state(func, args, threads, unroll, no_collections):
    """unroll 4 (the default: three_level's innermost loop, 4 trips, is unrolled into the middle loop's trace):
    while one thread records the middle loop, another runs it in CPython, where the innermost loop gets hot by
    itself and is recorded as a tree of its own, which never pays and is parked (a compile wasted; the steady
    state is the same). Known, not fixed yet: such a tree is the only difference allowed."""
    expected = func(*args)
    single, results = warm_up(func, args, threads=1, calls=3, unroll_max_trips=unroll)
    assert results == [expected] * 3
    single_result, single_steady = steady_call(single, args)
    assert single_result == expected

    multi, results = warm_up(func, args, threads=threads, calls=3, unroll_max_trips=unroll)
    assert results == [expected] * (3 * threads)
    entries_before = tree_entries(multi)
    multi_result, multi_steady = steady_call(multi, args)
    assert multi_result == expected
    entries_after = tree_entries(multi)

    s, m = jit.stats(single), jit.stats(multi)
    for stats in (s, m):
        assert stats["blacklisted_loops"] == [] and stats["gave_up"] is None, stats
        assert set(stats["aborts_by_code"]) <= RETRIED, stats["aborts"]  # nothing but bad timing
    assert multi_steady == single_steady  # the same native entries and exits per warm call
    assert multi_steady[0] == 1  # (the nest runs in one native entry)
    lines = {tree["loop_line"] for tree in s["trees"]}
    extra = [tree["loop_line"] for tree in m["trees"] if tree["loop_line"] not in lines]
    if unroll:
        # the extra tree is the innermost loop's; the steady call does not enter it (parked, or, if the garbage
        # collector's clock has woken it already, reached only inside the middle loop's trace, which unrolls it)
        innermost = max(lines)
        assert set(extra) <= {innermost + 1}, (extra, lines)
        unused = [
            tree["symbol"]
            for tree in m["trees"]
            if tree["loop_line"] in extra and entries_after[tree["symbol"]] == entries_before.get(tree["symbol"])
        ]
        assert len(unused) == len(extra), (extra, entries_before, entries_after, m["parked_loops"])
        assert len(m["trees"]) - len(extra) == len(s["trees"])
    else:
        assert len(m["trees"]) == len(s["trees"])
    assert m["native_iterations"] > 0


def hot_two_level():
    """A new @jit two_level whose outer and inner loops are both hot, neither recorded yet: the function, its
    monitor, and the outer and inner loops' indices."""
    f = jit(threshold=2, side_exit_threshold=2, unroll_max_trips=4)(two_level)
    assert f(2, 1) == two_level(2, 1)  # (the outer loop gets hot: the monitor exists, no tree yet)
    monitor = state_of(f).monitor
    outer, inner = (loop.index for loop in sorted(monitor.code.loops, key=lambda loop: loop.line))
    monitor.loop_is_hot(inner)
    monitor.loop_is_hot(outer)
    return f, monitor, outer, inner


def test_waiting_for_an_inner_loop_another_thread_records_is_not_a_failure():
    """The inner loop is being recorded by another thread (simulated: its recording started and never ends
    while this thread runs): the outer loop's recording meets it once, then waits for it, without recording
    again on every iteration and without counting failures; once the other recording is over, both compile."""
    f, monitor, outer, inner = hot_two_level()
    outer_state, inner_state = monitor.loops[outer], monitor.loops[inner]
    assert not inner_state.trees
    assert inner_state.start()  # "another thread" records the inner loop now
    assert f(300, 10) == two_level(300, 10)
    stats = jit.stats(f)
    assert stats["aborts_by_code"].get("INNER_BUSY") == 1, stats["aborts"]  # met once, then waited
    assert outer_state.aborts == 0 and not outer_state.blacklisted
    assert stats["traces_compiled"] == 0
    inner_state.aborted()  # the other thread's recording ends (without a tree)
    assert f(300, 10) == two_level(300, 10)
    assert f(300, 10) == two_level(300, 10)
    stats = jit.stats(f)
    assert set(stats["aborts_by_code"]) <= RETRIED, stats["aborts"]
    assert stats["blacklisted_loops"] == []
    assert len(stats["trees"]) == 2  # the inner loop's tree, and the outer loop's, which calls it
    assert steady_call(f, (300, 10)) == (two_level(300, 10), (1, 1))


@pytest.mark.parametrize("flag", [3, 0.5, -2])
def test_inner_loops_too_short_to_get_hot_record_first(flag):
    f = jit(threshold=2, side_exit_threshold=2)(short_inner)
    for n in (50, 80, 120):
        result = f(n, flag)
        expected = short_inner(n, flag)
        assert type(result) is type(expected) and repr(result) == repr(expected)
    stats = jit.stats(f)
    assert stats["blacklisted_loops"] == [], stats["aborts"]
    assert set(stats["aborts_by_code"]) <= RETRIED, stats["aborts"]
    assert "INNER_NOT_COMPILED" not in stats["aborts_by_code"]
    result, (entries, exits) = steady_call(f, (200, flag))
    assert repr(result) == repr(short_inner(200, flag))
    assert entries == 1 and exits <= 2, (entries, exits)


def test_int_and_float_calls_of_a_nest_with_short_inner_loops():
    """Both type maps at the same headers: the inner loops record a tree for each, then the outer loop."""
    f = jit(threshold=2, side_exit_threshold=2)(short_inner)
    for flag in (3, 0.5, 3, 0.5, 7, 1.25):
        result = f(100, flag)
        assert repr(result) == repr(short_inner(100, flag))
    stats = jit.stats(f)
    assert stats["blacklisted_loops"] == [], stats["aborts"]
    assert set(stats["aborts_by_code"]) <= RETRIED, stats["aborts"]
    for flag in (4, 2.5):
        result, (entries, exits) = steady_call(f, (100, flag))
        assert repr(result) == repr(short_inner(100, flag))
        assert entries == 1 and exits <= 2, (flag, entries, exits)


def test_hand_offs_while_another_thread_records_the_loop_are_not_judged():
    """The outer loop is being recorded or compiled by another thread (simulated: its recording started and never
    ends while this thread runs): this thread's hand-offs run it in the interpreter, entering the inner loop's tree
    once per outer iteration, short entries that would not pay. They are not evidence against the outer loop,
    whose own tree is on its way: the loop driver does not judge them, so once that tree is there a call enters
    native code once. (Judged, the outer loop ran in CPython for its pay back-off: the steady call of a warm-up
    from 2 threads made no native entry at all, about once in a hundred warm-ups.)"""
    f, monitor, outer, inner = hot_two_level()
    outer_state = monitor.loops[outer]
    assert outer_state.start()  # "another thread" records the outer loop now
    for _ in range(3):
        assert f(300, 10) == two_level(300, 10)
    stats = jit.stats(f)
    assert [tree["loop_line"] for tree in stats["trees"]] == [two_level.__code__.co_firstlineno + 3]  # the inner loop's
    assert stats["trees"][0]["native_entries"] >= 300  # (entered from the interpreter, once per outer iteration)
    assert state_of(f).loop_runtime.not_paying[outer] is None  # not judged
    outer_state.aborted()  # the other thread's recording ends (without a tree)
    for _ in range(2):
        assert f(300, 10) == two_level(300, 10)
    assert len(jit.stats(f)["trees"]) == 2
    assert steady_call(f, (300, 10)) == (two_level(300, 10), (1, 1))
