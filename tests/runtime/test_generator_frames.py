"""Tracebacks of exceptions raised inside a generator expression that a builtin consumes inline
(``jit.frontend.consumers``), in a handed-over loop (natively, or in the tier-1 interpreter): CPython runs a generator
expression in a frame of its own on every version, so the traceback shows ``<genexpr>`` after the user's frame, at
the line CPython's does (``runtime.errors.own_frame_entries``); a StopIteration raised in the body becomes CPython's
RuntimeError, whose traceback ends at the call, the StopIteration's starting at the expression's frame. What the
builtin does with each element (`+`, a truth test, a hash, min's key) raises in the caller's frame, not the
expression's: a StopIteration there stays one. In the
tier-1 interpreter too (``interpreter=True``: the whole function). Compared with CPython's own tracebacks (function names, qualified names and lines, of the exception and of its cause) after
warm-up calls that compile the loop, and on a first call."""

from __future__ import annotations

import pytest
from helpers import define

import jit as jit_module
from jit import jit

SOURCE = """
def flat(rows):
    t = 0
    for r in rows:
        t += sum(10 // x for x in r)
    return t


def spread(rows):
    t = 0
    for r in rows:
        if any(
            10 // x > 3
            for x in r
            if x is not None
        ):
            t += 1
    return t


def nested(ms):
    t = 0
    for m in ms:
        t += sum(sum(1 // x for x in row) for row in m)
    return t


def in_a_list(ms):
    t = 0
    for m in ms:
        t += len([sum(1 // x for x in row) for row in m])
    return t


def inverse(x):
    return 1 / x


def calling(rows):
    t = []
    for r in rows:
        t.append(tuple(inverse(x) for x in r))
    return t


def iterable_fails(rows):
    t = 0
    for r in rows:
        t += sum(x for x in range(10 // r))
    return t


def stops(rows):
    t = []
    for r in rows:
        it = iter(r)
        t.append(sorted(next(it) for _ in range(2)))
    return t


def stops_in_a_call(rows):
    t = []
    for r in rows:
        it = iter(r)
        t.append(all(next(it) for _ in range(2)))
    return t


class Truth:
    def __init__(self, error):
        self.error = error

    def __bool__(self):
        raise self.error


def adds_strings(rows):
    t = 0
    for r in rows:
        t += sum(x for x in r)
    return t


def tests_truth(rows):
    t = 0
    for r in rows:
        if any(Truth(StopIteration(x)) if x > 5 else x for x in r):
            t += 1
    return t


def hashes(rows):
    t = 0
    for r in rows:
        t += len(set([x] if x > 5 else x for x in r))
    return t


def keys(rows):
    t = 0
    for r in rows:
        t += min((x for x in r), key=lambda v: 10 // v)
    return t


def consumed_in_a_generator(ms):
    t = 0
    for m in ms:
        t += sum(sum(x for x in row) for row in m)
    return t
"""

FAILING = {
    "adds_strings": [[1, 2]] * 300 + [[1, "a"]],
    "tests_truth": [[0, 1]] * 300 + [[0, 7]],
    "hashes": [[1, 2]] * 300 + [[1, 7]],
    "keys": [[1, 2]] * 300 + [[1, 0]],
    "consumed_in_a_generator": [[[1, 2], [3]]] * 300 + [[[1], [2, "a"]]],
    "flat": [[1, 2]] * 300 + [[1, 0]],
    "spread": [[1, None, 2]] * 300 + [[None, 0]],
    "nested": [[[1, 2], [3]]] * 300 + [[[1], [2, 0]]],
    "in_a_list": [[[1, 2], [3]]] * 300 + [[[1], [2, 0]]],
    "calling": [[1.0, 2.0]] * 300 + [[1.0, 0.0]],
    "iterable_fails": [5] * 300 + [0],
    "stops": [[1, 2]] * 300 + [[1]],
    "stops_in_a_call": [[1, 2]] * 300 + [[1]],
}


def _entries(exc):
    entries = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        entries.append((code.co_name, code.co_qualname, tb.tb_lineno))
        tb = tb.tb_next
    return entries


def _frames(fn, arg):
    with pytest.raises(Exception) as info:
        fn(arg)
    exc = info.value
    cause = exc.__cause__
    return (
        type(exc).__name__,
        str(exc),
        _entries(exc)[1:],  # (the test's own frame first)
        None if cause is None else (type(cause).__name__, _entries(cause)),
        exc.__suppress_context__,
        type(exc.__context__).__name__,
    )


@pytest.mark.parametrize("name", sorted(FAILING))
@pytest.mark.parametrize("warm", [True, False], ids=["native", "first-call"])
@pytest.mark.parametrize("interpreter", [False, True], ids=["cpython", "interpreter"])
def test_the_traceback_shows_the_generators_frames_as_cpythons(name, warm, interpreter):
    plain = define(SOURCE, name)
    expected = _frames(plain, FAILING[name])
    f = jit(threshold=2, side_exit_threshold=2, interpreter=interpreter)(define(SOURCE, name))
    if warm:
        healthy = FAILING[name][:-1]
        f(healthy)
        f(healthy)
        assert jit_module.stats(f)["native_entries"] > 0  # (the failing call then enters compiled code)
    assert _frames(f, FAILING[name]) == expected


def test_generator_frames_on_every_version():
    expected = _frames(define(SOURCE, "flat"), FAILING["flat"])
    assert [entry[0] for entry in expected[2]] == ["flat", "<genexpr>"], expected
