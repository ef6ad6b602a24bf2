"""Statements outside every loop that the front end cannot compile (``try``, ``with``, a nested ``def``, a
``lambda``, ``import``) are left to CPython, and the function's loops are still compiled
(``compile_function(..., partial=True)``, ``T1Code.cpython_only``): CPython runs everything outside hot loops
anyway. The whole function stays plain where that would not be sound or not wanted: the construct inside a loop,
variables captured by a nested function (cells), ``strict=True``, ``interpreter=True``.

Differential against CPython (value and type, exception type and message, the arguments' mutations), with
``jit.stats`` showing the loops ran natively."""

from __future__ import annotations

import pytest
from helpers import Args, assert_same_outcome, define, outcome

import jit as jit_module
from jit import jit
from jit.api import state_of

SOURCE = """
import math


def validated(text, n):
    try:
        scale = int(text)
    except ValueError:
        scale = -1
    total = 0
    for i in range(n):
        for j in range(20):
            total += (i * j * scale) % 7
    return total


def sorted_after(rows, n):
    acc = 0.0
    for i in range(n):
        acc += rows[i % len(rows)][1] * 0.5
    rows.sort(key=lambda r: (r[1], r[0]))
    return acc


def helper_defined(n):
    def sq(x):
        return x * x

    total = 0
    for i in range(n):
        total += sq(i) % 11
    return total


def imported(n):
    import math as m

    s = 0.0
    for i in range(n):
        s += m.sqrt(i)
    return s


class Ctx:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("enter")
        return 2

    def __exit__(self, *exc):
        self.log.append("exit")
        return False


def with_block(n, log):
    with Ctx(log) as k:
        log.append(k)
    total = 0
    for i in range(n):
        total += i * k
    return total


def ratio_after(n):
    total = 0
    for i in range(n):
        total += i % 5 - 2
    try:
        r = 100 // total
    except ZeroDivisionError:
        r = None
    return total, r


def returns_early(n):
    try:
        if n < 0:
            return "negative"
    finally:
        pass
    total = 0
    for i in range(n):
        total += i
    return total


def raises_in_loop(n, d):
    try:
        d = int(d)
    except TypeError:
        d = 1
    total = 0
    for i in range(n):
        total += 1000 // (d - i)
    return total


def captured(n):
    k = 3
    f = lambda x: x * k  # noqa: E731
    total = 0
    for i in range(n):
        total += i % k
    return total + f(2)


def inside_the_loop(n):
    total = 0
    for i in range(n):
        try:
            total += 10 // (i % 3)
        except ZeroDivisionError:
            total -= 1
    return total
"""

OPTIONS = {"threshold": 2, "side_exit_threshold": 2}

CASES = {
    "validated": [Args("3", 300), Args("x", 300), Args("-7", 0)],
    "sorted_after": [Args([(i, (i * 7919) % 101 * 0.25) for i in range(50)], 400)],
    "helper_defined": [Args(500), Args(0)],
    "imported": [Args(400)],
    "with_block": [Args(300, [])],
    "ratio_after": [Args(500), Args(4), Args(0)],
    "returns_early": [Args(-3), Args(300)],
    "raises_in_loop": [Args(50, "20"), Args(50, None), Args(10, 30)],
}


def functions(name: str):
    namespace: dict = {}
    return define(SOURCE, name, namespace)


@pytest.mark.parametrize("name", sorted(CASES))
def test_loops_compile_with_the_statement_left_to_cpython(name):
    func = functions(name)
    jitted = jit(**OPTIONS)(func)
    for call in CASES[name]:
        plain = outcome(func, call)
        for attempt in range(2):
            assert_same_outcome(plain, outcome(jitted, call), f"{name}{call!r} (run {attempt + 1})")
    state = state_of(jitted)
    assert state.mode == "tier1" and state.code is not None and state.code.cpython_only, jit_module.explain(jitted)
    stats = jit_module.stats(jitted)
    assert stats["native_entries"] > 0 and stats["native_iterations"] > 0, stats["aborts"]
    report = jit_module.explain(jitted)
    for line, _ in state.code.cpython_only:
        assert f"line {line}: left to CPython (outside every loop)" in report, report


@pytest.mark.parametrize("name", ["captured", "inside_the_loop"])
def test_the_whole_function_stays_plain_where_partial_code_is_unsound(name):
    func = functions(name)
    jitted = jit(**OPTIONS)(func)
    for n in (0, 7, 300):
        assert_same_outcome(outcome(func, Args(n)), outcome(jitted, Args(n)), f"{name}({n})")
    assert state_of(jitted).mode == "plain"
    assert "runs as plain CPython" in jit_module.explain(jitted)


def test_strict_and_the_interpreter_baseline_refuse_the_whole_function():
    func = functions("validated")
    with pytest.raises(jit_module.UnsupportedFunctionError):
        jit(strict=True)(func)("3", 10)
    interpreted = jit(interpreter=True, **OPTIONS)(func)
    assert interpreted("3", 50) == func("3", 50)
    assert state_of(interpreted).mode == "plain"
