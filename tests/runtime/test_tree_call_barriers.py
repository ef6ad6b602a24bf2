"""Guards an outer trace hoisted to its entry (a global's binding, a class's version) are checked again after a
call of an inner tree that may run Python code (``Tree.runs_python``: a barrier, the generic object path, in one
of its traces or in a tree it reaches), as after a barrier of the outer trace's own; and a side trace that makes
an inner tree run Python code later invalidates the trees that call it (``runtime.registry.install_side``).

Before, an outer loop reading a global that a helper called in its inner loop rebound kept using the old value:
a wrong result. The helpers hold a ``try`` so that the front end leaves them to CPython and the inner loop calls
them through the generic path (a barrier) instead of inlining them. Every function is run on fresh module state
by plain CPython and by both baselines, twice each, and compared; native execution is asserted through
``jit.stats``."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import define

import jit as jit_module
from jit import jit

MODULE = """
G = 1


class Box:
    def __init__(self, v):
        self.v = v


def rebind_at(i, j, when):
    global G
    try:
        if j == 3 and (when is None or i == when):
            G = G + 1
    except KeyError:
        pass
    return j


def property_at(i, j, when):
    try:
        if j == 3 and i == when:
            Box.v = property(lambda self: 42)
    except KeyError:
        pass
    return j


def grow_at(lst, i, j, when):
    try:
        if j == 3 and i == when:
            lst.append(len(lst))
    except KeyError:
        pass
    return j


def global_rebound_once(n, m):
    total = 0
    for i in range(n):
        for j in range(m):
            total += rebind_at(i, j, 100)
        total += G * 1000
    return total


def global_rebound_every_time(n, m):
    total = 0
    for i in range(n):
        for j in range(m):
            total += rebind_at(i, j, None)
        total += G * 1000
    return total


def global_rebound_three_levels(n, m):
    total = 0
    for i in range(n):
        for k in range(3):
            for j in range(m):
                total += rebind_at(i * 3 + k, j, 200)
            total += G
        total += G * 1000
    return total


def class_changed(n, m):
    b = Box(5)
    total = 0
    for i in range(n):
        for j in range(m):
            total += property_at(i, j, 100)
        total += b.v * 1000
    return total


def list_grown(n, m):
    lst = [0, 1, 2]
    total = 0
    for i in range(n):
        for j in range(m):
            total += grow_at(lst, i, j, 100)
        total += len(lst) * 1000 + lst[-1]
    return total, lst


def side_trace_later(n, m):
    total = 0
    for i in range(n):
        for j in range(m):
            if i >= 150 and j == 3:
                rebind_at(i, j, 250)
            total += j
        total += G * 1000
    return total
"""

ARGS = (300, 8)


def fresh(name: str) -> tuple[Any, dict[str, Any]]:
    """The function `name` of a new copy of MODULE, and that copy's globals."""
    namespace: dict[str, Any] = {}
    return define(MODULE, name, namespace), namespace


def run(name: str, **options: Any) -> tuple[Any, Any]:
    """CPython's result of name(*ARGS) on fresh module state, and tracejit's (checked equal through both
    baselines, twice each, the module state reset before every call); returns the CPython baseline's function."""
    func, namespace = fresh(name)
    start = dict(namespace)
    expected = func(*ARGS)
    result_type = type(expected)
    last = None
    for interpreter in (False, True):
        namespace.update(start)
        f = jit(interpreter=interpreter, **{"unroll_max_trips": 4, **options})(func)  # (inner loops: trees)
        for attempt in range(2):
            namespace["G"] = 1
            if "v" in namespace["Box"].__dict__:
                delattr(namespace["Box"], "v")
            got = f(*ARGS)
            assert type(got) is result_type and got == expected, (name, interpreter, attempt, got, expected)
        if not interpreter:
            last = f
    return expected, last


@pytest.mark.parametrize(
    "name",
    ["global_rebound_once", "global_rebound_every_time", "global_rebound_three_levels", "class_changed", "list_grown"],
)
def test_an_outer_loop_sees_what_its_inner_loops_python_code_changed(name):
    expected, f = run(name)
    stats = jit_module.stats(f)
    assert stats["native_entries"] > 0 and stats["native_iterations"] > 0, stats["aborts"]


def test_the_outer_loop_stays_native_when_a_global_is_rebound_once():
    """The outer trace calls the inner tree and checks its hoisted guard on G after the call: leaving there once
    (G rebound), then native again."""
    expected, f = run("global_rebound_once")
    stats = jit_module.stats(f)
    outer_line = min(tree["loop_line"] for tree in stats["trees"])
    outer = [tree for tree in stats["trees"] if tree["loop_line"] == outer_line]
    assert any(tree["nested_calls"] for tree in outer), stats["trees"]
    assert stats["blacklisted_loops"] == [], stats["aborts"]


def test_a_side_trace_running_python_code_invalidates_the_callers_of_its_tree():
    """The inner tree runs no Python code when the outer trace is compiled; a side trace that calls the helper
    grows later (i >= 150): the outer trace, which did not check its guards after the call, is invalidated and
    recorded again (before: G rebound at i = 250 went unseen)."""
    expected, f = run("side_trace_later")
    stats = jit_module.stats(f)
    assert stats["invalidated_trees"] >= 1, stats
    assert stats["native_entries"] > 0


def test_a_pure_inner_tree_adds_no_check_after_its_call():
    """An inner tree that runs no Python code: no _CHECK_BARRIER after its call in the outer trace."""
    source = """
SCALE = 3


def pure(n, m):
    total = 0
    for i in range(n):
        for j in range(m):
            total += (i ^ j) & 7
        total += SCALE
    return total
"""
    func = define(source, "pure")
    f = jit(unroll_max_trips=4)(func)  # (its inner loop of 8 trips calls its tree)
    for _ in range(3):
        assert f(300, 8) == func(300, 8)
    uops = jit_module.dump(f, "uops")
    assert "_CALL_TREE" in uops
    assert "_CHECK_BARRIER" not in uops


def test_a_call_of_an_inner_tree_with_a_barrier_is_followed_by_a_check():
    func, namespace = fresh("global_rebound_once")
    f = jit(unroll_max_trips=4)(func)  # (its inner loop of 8 trips calls its tree)
    for _ in range(2):
        namespace["G"] = 1
        f(*ARGS)
    uops = jit_module.dump(f, "uops")
    outer = [chunk for chunk in uops.split("\n\n") if "_CALL_TREE" in chunk]
    assert outer, uops
    assert any(
        chunk.index("_CHECK_BARRIER") > chunk.index("_CALL_TREE") for chunk in outer if "_CHECK_BARRIER" in chunk
    )
