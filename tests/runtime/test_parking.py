"""Parking (runtime.parking): a loop whose back-off has been at its longest leaves the code new calls run, and
comes back after a number of garbage collections that doubles each time. Collections are counted, never time:
the tests disable automatic collection and make them with gc.collect."""

from __future__ import annotations

import ast
import gc
import traceback

import pytest

import jit
from jit.api import state_of
from runtime import parking
from runtime.loop_driver import FIRST_BACKOFF, MAX_BACKOFF, MAX_PAY_BACKOFF, PAY_WINDOW


@pytest.fixture(autouse=True)
def no_automatic_collections():
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def short_sum(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


def calls_python(n):
    s = 0
    for i in range(n):
        s += i % 10 + (i is n) * 0  # (identity of two unboxed ints: not compiled)
    return s


def outer_unsupported(n, m):
    s = 0
    for i in range(n):
        s += i % 10 + (i is n) * 0  # (identity of two unboxed ints: not compiled)
        for j in range(m):
            s += (i ^ j) & 7
    return s


def inner_fails(n, m, bad):
    s = 0
    for i in range(n):
        s += i % 10 + (i is n) * 0  # (identity of two unboxed ints: not compiled)
        for j in range(m):
            s += 100 // (j - bad)
    return s


LOOP_LINE = short_sum.__code__.co_firstlineno + 2


def collect(times):
    for _ in range(times):
        gc.collect(0)


def run_until_parked(f, args, limit=20_000):
    runtime = state_of(f).loop_runtime if state_of(f).loop_runtime is not None else None
    for calls in range(1, limit + 1):
        assert f(*args) == f.py_func(*args)
        runtime = state_of(f).loop_runtime
        if runtime is not None and runtime.parked:
            return calls
    raise AssertionError(f"no loop was parked: {jit.stats(f)}")


def test_the_pay_back_off_doubles_then_the_loop_is_parked():
    f = jit.jit(threshold=2, side_exit_threshold=2)(short_sum)
    runtime = None
    waits = []
    for _ in range(200):
        assert f(4) == short_sum(4)
        runtime = state_of(f).loop_runtime
        if jit.stats(f)["not_paying_loops"]:
            break
    while not runtime.parked:
        waits.append(-runtime.counters[0])
        entries = jit.stats(f)["native_entries"]
        starts = 0
        while jit.stats(f)["native_entries"] == entries:  # plain until the back-off ends and a window begins
            assert f(4) == short_sum(4)
            starts += 1
            assert starts <= MAX_PAY_BACKOFF + 1
        for _ in range(PAY_WINDOW - 1):  # the rest of the window
            assert f(4) == short_sum(4)
    assert waits == [FIRST_BACKOFF * 2**k for k in range(len(waits))]
    assert waits[-1] == MAX_PAY_BACKOFF
    s = jit.stats(f)
    assert s["parked_loops"] == [LOOP_LINE] and s["not_paying_loops"] == [LOOP_LINE]
    assert f.__code__ is short_sum.__code__  # its only loop is parked: the user's own code runs
    assert (
        f"parked: new calls run it as plain CPython, with no counter, for {parking.FIRST_PARK} more garbage "
        "collection(s): its native code ran 5.0 iterations per entry"
    ) in jit.explain(f)
    handoffs = s["handoffs"]
    for _ in range(3 * MAX_PAY_BACKOFF):
        assert f(4) == short_sum(4)
    assert jit.stats(f)["handoffs"] == handoffs

    collect(parking.FIRST_PARK - 1)
    assert jit.stats(f)["parked_loops"] == [LOOP_LINE]
    collect(1)  # it wakes: back in the code, handed over at its next start but one
    assert jit.stats(f)["parked_loops"] == [] and f.__code__ is not short_sum.__code__
    for _ in range(2 + PAY_WINDOW):
        assert f(4) == short_sum(4)
    # still not paying: parked again, twice as long
    assert jit.stats(f)["parked_loops"] == [LOOP_LINE]
    assert parking.collections_left(runtime, 0) == 2 * parking.FIRST_PARK
    assert jit.stats(f)["handoffs"] == handoffs + PAY_WINDOW


def test_a_woken_loop_that_pays_now_stays():
    f = jit.jit(threshold=2, side_exit_threshold=2)(short_sum)
    run_until_parked(f, (4,))
    collect(parking.FIRST_PARK)
    for _ in range(2 + PAY_WINDOW):
        assert f(2000) == short_sum(2000)
    s = jit.stats(f)
    assert s["parked_loops"] == [] and s["not_paying_loops"] == []
    entries = s["native_entries"]
    for _ in range(5):
        assert f(2000) == short_sum(2000)
    assert jit.stats(f)["native_entries"] == entries + 5


def two_loops(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    for j in range(n):
        s -= j % 3
    return s


def test_a_collection_inside_an_ast_parse_parses_nothing():
    """The parking clock runs inside any collection, also one that an ``ast.parse`` allocating its tree sets off
    (the user's, or tracejit's own while it parks another loop): there it swaps in only versions of the code made
    beforehand, and parses nothing (on CPython 3.11 a parse there made the interrupted one raise ``SystemError: AST
    constructor recursion depth mismatch``). A loop whose version is not made stays parked until it is."""
    f = jit.jit(threshold=2, side_exit_threshold=2)(short_sum)
    run_until_parked(f, (4,))
    runtime = state_of(f).loop_runtime
    function = state_of(f)
    assert frozenset() in function.versions  # (made for its wake)
    function.versions.pop(frozenset())  # (as if it were not)
    collect(parking.collections_left(runtime, 0) - 1)
    threshold = gc.get_threshold()
    source = open(__file__).read()
    gc.set_threshold(1)  # (a collection at nearly every allocation)
    gc.enable()
    try:
        for _ in range(3):
            ast.parse(source)
    finally:
        gc.disable()
        gc.set_threshold(*threshold)
    assert runtime.parked == {0} and parking.collections_left(runtime, 0) is not None
    assert f.__code__ is short_sum.__code__
    assert frozenset() not in function.versions
    function.make_version(frozenset())
    collect(1)
    assert runtime.parked == set() and f.__code__ is not short_sum.__code__
    for n in (4, 2000, 7):
        assert f(n) == short_sum(n)


def test_parking_makes_the_version_each_wake_runs():
    """Two loops parked: the versions of the code with either one woken are made where the second is parked."""
    f = jit.jit(threshold=2, side_exit_threshold=2)(two_loops)
    for calls in range(20_000):
        assert f(4) == two_loops(4)
        runtime = state_of(f).loop_runtime
        if runtime is not None and runtime.parked == {0, 1}:
            break
    else:
        raise AssertionError(f"the loops were not both parked: {jit.stats(f)}")
    versions = state_of(f).versions
    assert {frozenset({0, 1}), frozenset({0}), frozenset({1})} <= set(versions)
    collect(max(parking.collections_left(runtime, 0), parking.collections_left(runtime, 1)))
    assert runtime.parked == set()
    for n in (4, 50, 0):
        assert f(n) == two_loops(n)


def test_a_blacklisted_loop_is_parked_then_reprobed():
    f = jit.jit(threshold=2, max_aborts=3)(calls_python)
    calls = run_until_parked(f, (50,))
    assert calls > MAX_BACKOFF  # (its back-offs, counted in loop starts, came first)
    s = jit.stats(f)
    assert s["blacklisted_loops"] == s["parked_loops"] == [calls_python.__code__.co_firstlineno + 2]
    assert f.__code__ is calls_python.__code__
    aborts = s["aborts_total"]
    collect(parking.FIRST_PARK)
    for _ in range(3):
        assert f(50) == calls_python(50)
    s = jit.stats(f)
    assert s["aborts_total"] == aborts + 1  # recorded once more, failed again: parked again
    assert s["parked_loops"] == [calls_python.__code__.co_firstlineno + 2]


def test_an_inner_loop_of_a_parked_loop_still_runs_natively():
    f = jit.jit(threshold=2, max_aborts=2)(outer_unsupported)
    run_until_parked(f, (2, 300))
    runtime = state_of(f).loop_runtime
    assert runtime.parked == {0}
    assert f.__code__ is not outer_unsupported.__code__  # the inner loop keeps its counter
    entries = jit.stats(f)["native_entries"]
    for n in (2, 3, 5):
        assert f(n, 300) == outer_unsupported(n, 300)
    assert jit.stats(f)["native_entries"] == entries + 2 + 3 + 5


def test_a_parked_version_shows_the_failing_line_in_tracebacks():
    f = jit.jit(threshold=2, max_aborts=2)(inner_fails)
    run_until_parked(f, (2, 300, -1))
    assert state_of(f).loop_runtime.parked == {0}

    def failure(func):
        with pytest.raises(ZeroDivisionError) as info:
            func(3, 300, 150)
        return [(entry.name, entry.lineno, entry.line) for entry in traceback.extract_tb(info.value.__traceback__)][-1]

    assert failure(f) == failure(inner_fails)
