"""Tracebacks of exceptions raised inside a list, set or dict comprehension that runs in a handed-over loop
(natively, or in the tier-1 interpreter): where the running Python gives a comprehension a frame of its own
(3.11: ``<listcomp>``, ``<setcomp>``, ``<dictcomp>``, one per nesting level), the traceback shows it, at the line
CPython's does, after the user's frame, which shows the comprehension's first line (``LoopRuntime.
comprehension_entries``); the functions the comprehension called follow. Compared with CPython's own traceback
(function names, qualified names and lines) after warm-up calls that compile the loop, and on a first call."""

from __future__ import annotations

import sys

import pytest
from helpers import define

import jit as jit_module
from jit import jit

SOURCE = """
def flat(rows):
    t = 0
    for r in rows:
        t += len([1 // x for x in r])
    return t


def spread(rows):
    t = 0
    for r in rows:
        t += len([
            1 // x
            for x in r
            if x is not None
        ])
    return t


def nested(ms):
    t = 0
    for m in ms:
        t += len([[1 // x for x in row] for row in m])
    return t


def kinds(rows):
    t = 0
    for r in rows:
        t += len({10 // k for k in r}) + sum({k: 10 // k for k in r}.values())
    return t


def inverse(x):
    return 1 / x


def calling(rows):
    t = 0.0
    for r in rows:
        t += sum([inverse(x) for x in r])
    return t


def whole(m):
    return [[1 // x for x in row] for row in m]


def iterable_fails(rows):
    t = 0
    for r in rows:
        t += len([x for x in range(10 // r)])
    return t
"""

FAILING = {
    "flat": [[1, 2]] * 300 + [[1, 0]],
    "spread": [[1, None, 2]] * 300 + [[1, 0]],
    "nested": [[[1, 2], [3]]] * 300 + [[[1], [2, 0]]],
    "kinds": [[1, 2]] * 300 + [[3, 0]],
    "calling": [[1.0, 2.0]] * 300 + [[1.0, 0.0]],
    "iterable_fails": [5] * 300 + [0],
}


def test_a_nested_comprehension_handed_over_whole():
    """A comprehension outside every loop, handed over whole once hot (``LoopRuntime.comprehension``): both of
    its levels' frames, as CPython's."""
    plain = define(SOURCE, "whole")
    expected = _frames(plain, [[1], [0]])
    f = jit(threshold=2)(define(SOURCE, "whole"))
    for _ in range(2000):
        f([[1, 2, 3]] * 20)
    assert jit_module.stats(f)["native_entries"] > 0
    assert _frames(f, [[1], [0]]) == expected


def _frames(fn, arg):
    with pytest.raises(ArithmeticError) as info:
        fn(arg)
    entries = []
    tb = info.value.__traceback__.tb_next  # (the test's own frame first)
    while tb is not None:
        code = tb.tb_frame.f_code
        entries.append((code.co_name, code.co_qualname, tb.tb_lineno))
        tb = tb.tb_next
    return entries


@pytest.mark.parametrize("name", sorted(FAILING))
@pytest.mark.parametrize("warm", [True, False], ids=["native", "first-call"])
def test_the_traceback_shows_the_comprehensions_frames_as_cpythons(name, warm):
    plain = define(SOURCE, name)
    expected = _frames(plain, FAILING[name])
    f = jit(threshold=2, side_exit_threshold=2)(define(SOURCE, name))
    if warm:
        healthy = FAILING[name][:-1]
        f(healthy)
        f(healthy)
        assert jit_module.stats(f)["native_entries"] > 0  # (the failing call then enters compiled code)
    assert _frames(f, FAILING[name]) == expected


def test_comprehension_frames_where_cpython_makes_them():
    expected = _frames(define(SOURCE, "nested"), FAILING["nested"])
    names = [entry[0] for entry in expected]
    if sys.version_info < (3, 12):
        assert names == ["nested", "<listcomp>", "<listcomp>"], expected
    else:
        assert names == ["nested"], expected
