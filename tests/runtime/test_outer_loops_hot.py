"""Outer loops get hot in time (issue 8 item 4): once a loop nested in a loop that CPython is counting ran native
code, the outer loop is handed to the JIT at its next iteration, so a nest runs as one native call from its
second call on (counted through jit.stats, never timed)."""

from __future__ import annotations

import pytest
from helpers import check

import jit as jit_module
from jit import jit


def seed_foo():
    total = 0
    for i in range(32):
        for j in range(64):
            total += i * j
    return total


def nest3(n):
    total = 0
    for a in range(n):
        for b in range(16):
            for c in range(16):
                total += a ^ b ^ c
    return total


def while_outer(n):
    total = 0
    i = 0
    while i < n:
        for j in range(64):
            total += (i + j) % 7
        i += 1
    return total


def inner_not_compiled(n):
    out = 0
    for i in range(n):
        for j in range(40):
            out += len(str(i * j))  # a call the recorder does not compile
    return out


def inner_breaks(n):
    found = 0
    for i in range(n):
        for j in range(100):
            if j * j > i + 50:
                found += j
                break
    return found


def per_call(f, *args):
    before = jit_module.stats(f)
    result = f(*args)
    after = jit_module.stats(f)
    return result, after["native_entries"] - before["native_entries"]


def test_the_seed_nest_is_one_native_call_from_its_second_call():
    f = jit(seed_foo)
    first, first_entries = per_call(f)
    assert first == seed_foo()
    assert first_entries < 31  # (it used to leave native code at every outer iteration of the first calls)
    for _ in range(3):
        result, entries = per_call(f)
        assert result == seed_foo() and entries == 1
    stats = jit_module.stats(f)
    assert stats["traces_compiled"] == 2 and any(tree["nested_calls"] for tree in stats["trees"])


def test_a_three_level_nest_is_one_native_call_from_its_second_call():
    f = jit(nest3)
    assert f(16) == nest3(16)
    for _ in range(3):
        result, entries = per_call(f, 16)
        assert result == nest3(16) and entries == 1


def test_a_while_outer_loop_too():
    f = jit(while_outer)
    assert f(40) == while_outer(40)
    for _ in range(2):
        result, entries = per_call(f, 40)
        assert result == while_outer(40) and entries == 1


@pytest.mark.parametrize("func, arg", [(inner_not_compiled, 30), (inner_breaks, 60), (seed_foo, None)])
def test_same_results_as_cpython(func, arg):
    check(func, *([arg] * 3 if arg is not None else [()] * 3))


def test_the_boost_is_spent_once():
    """The outer loop gets one early hand-off per inner native run, not a hand-off at every iteration."""
    from jit.api import state_of

    f = jit(seed_foo)
    f()
    runtime = state_of(f).loop_runtime
    assert runtime.boost == [0, 0]  # spent by the outer loop's counted copy, or never needed again
