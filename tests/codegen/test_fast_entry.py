"""A range loop whose fast copy is vectorized goes there at its entry (``codegen.function._enter_fast``), without
the checked copy's warm-up: an inner loop's tree runs its fast copy from the first iteration of each call, where
enough trips are left, the fast copy did not hand the entry back, the periodic check is not due, and its slots
assigned late hold words of their kinds. Results stay CPython's where the conditions fail at the entry, where
the inner loop's variable holds something else before the loop, and where the sum leaves 64 bits."""

import re

import pytest
from helpers import TEST_OPTIONS, check

from jit import jit

from .nests import inner_traces, two_level

INT64_MAX = 2**63 - 1


def j_before(start, n, m, before):
    total = start
    j = before
    for i in range(n):
        for j in range(m):
            total += (i ^ j) & 7
        total += len(str(j))  # (j after the inner loop: the value it had before where the loop ran no trip)
    return total


def test_the_entry_of_a_vectorized_loop_goes_to_its_fast_copy():
    f = jit(**TEST_OPTIONS)(two_level)
    assert f(0, 100, 200) == two_level(0, 100, 200)
    ir_text = jit.dump(f, "ir")
    # the root's entry block branches to enter_fast, whose only instruction is the tail call of the fast copy
    found = re.search(r'^"?enter_fast"?:\n\s*%"?[\w.]+"? = musttail call i64 @"(\w+)_fast"', ir_text, re.M)
    assert found is not None, ir_text


def test_an_outer_trace_calls_the_inner_tree_by_its_call_entry():
    # the outer trace calls the inner root's tree call entry, which makes the entry's choice from the buffer
    # alone and tail-calls the fast copy or the root's function; where the fast copy's loop only computes values,
    # that entry is its single-run entry, which runs the loop itself (codegen.function._build_run)
    f = jit(**TEST_OPTIONS)(two_level)
    for _ in range(2):
        assert f(0, 100, 64) == two_level(0, 100, 64)
    (inner,) = inner_traces(f)
    ir_text = jit.dump(f, "ir")
    symbol = inner["symbol"]
    assert re.search(rf'call i64 @"{symbol}_call"\(', ir_text), ir_text
    entry = re.search(rf'define i64 @"{symbol}_call"\(.*?\n}}', ir_text, re.S)
    assert entry is not None, ir_text
    tail_calls = re.findall(r"musttail call i64 @\"(\w+)\"", entry.group(0))
    assert sorted(set(tail_calls)) == sorted([symbol, f"{symbol}_fast"]), entry.group(0)
    assert "loop_run" in entry.group(0)
    assert inner["fast_runs"] >= 2 * 90


def test_an_inner_loop_runs_its_fast_copy_from_its_first_iteration():
    # 36 trips: the checked copy's warm-up (WARM_UP to WARM_UP + EVENT_EVERY iterations) left fewer than the
    # CHEAP_TRIPS (32) its switch to the fast copy asks for, so the inner loop never ran there before
    f = jit(**TEST_OPTIONS)(two_level)
    for _ in range(3):
        assert f(0, 200, 36) == two_level(0, 200, 36)
    (inner,) = inner_traces(f)
    assert inner["vectorized"]
    assert inner["fast_runs"] >= 3 * 190  # (the first call of each: j unbound, the checked copy starts)


@pytest.mark.parametrize("m", [31, 32, 33, 36, 64, 100])
def test_inner_trip_counts_around_the_threshold(m):
    check(two_level, (0, 200, 100), (0, 200, m), (-(2**62), 50, m), native=True)


@pytest.mark.parametrize(
    "start",
    [
        INT64_MAX - 7 * 40 * 64,  # (reaches the limit at the last trip: the conditions hold)
        INT64_MAX - 7 * 40 * 64 + 40,  # the sum passes 2**63 in a later call: conditions fail at that entry
        INT64_MAX - 100,  # they fail at the first entry; the checked copy overflows into a Python int
        INT64_MAX + 10,  # an int past 64 bits from the start
    ],
)
def test_a_sum_near_the_limit_at_the_entry(start):
    check(two_level, (0, 40, 64), (start, 40, 64), native=True)


@pytest.mark.parametrize("before", [None, "text", 2**70, 5, -1.5])
def test_the_inner_variable_holds_something_else_before_the_loop(before):
    # j (assigned late in the inner loop) holds another kind, or the inner loop runs no trip and j keeps it
    check(j_before, (0, 40, 64, 0), (0, 40, 64, before), (0, 40, 0, before), native=True)
