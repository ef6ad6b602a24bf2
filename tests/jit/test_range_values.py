"""A range object kept in a variable or passed as an argument, in a hot loop: `r = range(n)` then `for i in r`,
`for i in r` over an argument, a range passed on or measured. A range used as a value is a real range object
(``_BUILD_RANGE``, no Python code), iterated through its iterator, which native code advances in place
(``_ITER_NEXT_RANGE_ITERATOR``: the item an int in registers), so an iterator someone else holds is where CPython
leaves it. Each case checked against CPython and asserted native through jit.stats, with reference counts."""

import gc
import sys
import tracemalloc

from helpers import check

import jit as jit_module
from jit import jit
from jit.aborts import Reason


def _no_aborts(jitted):
    """Native, and no recording gave up but for bad timing (the loop ended while recorded, an inner loop first)."""
    for f in (jitted, jitted.cpython_baseline):
        stats = jit_module.stats(f)
        assert not [code for code in stats["aborts_by_code"] if not Reason[code].retry], stats["aborts"]
        assert stats["native_entries"] > 0 and stats["native_iterations"] > 0


def range_in_a_variable(n):
    r = range(n)
    t = 0
    for j in range(n):
        for i in r:
            t += i * j
    return t, r


def range_argument(r, n):
    t = 0
    for j in range(n):
        for i in r:
            t += i - j
    return t


def over_the_argument(r):
    t = 0
    last = None
    for i in r:
        t += i * 3
        last = i
    return t, last


def test_a_range_in_a_variable_is_iterated_natively():
    jitted = check(range_in_a_variable, 0, 1, 40, native=True)
    _no_aborts(jitted)


def test_a_range_argument_is_iterated_natively():
    cases = [(range(30), 20), (range(5, 60, 7), 20), (range(50, -20, -3), 20), (range(0), 20), (range(-5, 5), 30)]
    jitted = check(range_argument, *cases, native=True)
    _no_aborts(jitted)
    jitted = check(over_the_argument, range(500), range(400, -400, -3), range(2**62, 2**62 + 300), native=True)
    _no_aborts(jitted)


def test_a_range_past_a_c_long_goes_the_generic_way():
    check(over_the_argument, range(2**63 - 150, 2**63 + 150), range(2**64, 2**64 + 3000, 7))
    check(range_argument, (range(2**63 - 10, 2**63 + 10), 30))


def ranges_made_in_the_loop(n):
    t = 0
    out = []
    for j in range(n):
        r = range(j % 7, j, 3)
        for i in r:
            t += i
        t += len(r) + (j in r) + sum(r)
        if r:
            t += r[0]
        out.append(r)
    return t, out[-3:]


def test_ranges_made_and_used_as_values_in_the_loop():
    jitted = check(ranges_made_in_the_loop, 1, 50, 300, native=True)
    for f in (jitted, jitted.cpython_baseline):
        stats = jit_module.stats(f)
        assert stats["native_iterations"] > 0
        assert not [m for m in stats["aborts"] if "range" in m], stats["aborts"]


def shared_iterator(r, k):
    it = iter(r)
    t = 0
    for i in it:
        t += i
        if i == k:
            break
    return t, list(it)


def test_an_iterator_someone_holds_is_left_where_cpython_leaves_it():
    jitted = check(shared_iterator, (range(300), 250), (range(300), -1), (range(0, 900, 3), 600), native=True)
    _no_aborts(jitted)


def test_no_reference_is_leaked():
    r = range(7)

    def loops(r, n):
        t = 0
        for j in range(n):
            q = range(j % 5)
            for i in r:
                t += i
            for i in q:
                t -= i
        return t

    f = jit(threshold=2, min_native_iterations=0)(loops)
    assert f(r, 1000) == loops(r, 1000)
    gc.collect()
    before = sys.getrefcount(r)
    tracemalloc.start()
    try:
        f(r, 1000)
        gc.collect()
        start, _ = tracemalloc.get_traced_memory()
        assert f(r, 100_000) == loops(r, 100_000)
        gc.collect()
        end, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sys.getrefcount(r) == before
    assert end - start < 100_000  # (100,000 leaked ranges or iterators would be megabytes)
    stats = jit_module.stats(f)
    assert stats["native_iterations"] >= 100_000
    assert not [code for code in stats["aborts_by_code"] if not Reason[code].retry], stats["aborts"]


R = range(3, 40, 4)


def ranges_of_inner_loops_and_globals(n, b):
    t = 0
    for j in range(n):
        w = 5
        while w > 0:
            w -= 1
            rr = range(b, b + w)  # (assigned in the inner loop: its tree writes a range object)
            for k in rr:
                t += k
        for i in R:  # (a global range)
            t += i * j
    return t, rr


def test_a_range_an_inner_tree_assigns_and_a_global_range():
    jitted = check(ranges_of_inner_loops_and_globals, (30, 2), (30, -7), native=True)
    _no_aborts(jitted)
