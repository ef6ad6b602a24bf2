"""Calls with keyword arguments (``CALL_KW``) of Python functions are inlined like positional ones
(``jit.inline.parameters`` binds each keyword to its parameter): of a global function, a function a variable holds,
a bound method a variable holds and a method `obj.m(k=v)`. A call CPython would refuse (an unknown keyword, one
given twice, a positional-only parameter by keyword, a missing argument) is made generically and raises CPython's
TypeError; a keyword-only parameter left to its default (``__kwdefaults__``, a dict no guard pins) keeps the call
generic. Every result, exception and argument is CPython's."""

from __future__ import annotations

import pytest
from helpers import assert_native, check, define

import jit as jit_module
from jit import inline
from jit.aborts import Abort

SOURCE = """
def scale(x, factor=2.0, offset=0.0):
    return x * factor + offset

def keyword_only(x, *, k):
    return x + k

def keyword_only_default(x, *, k=5):
    return x + k

def positional_only(x, /, y):
    return x - y

def inverse(x, bias=0):
    return 1 / (x + bias)

def global_keywords(n):
    s = 0.0
    for i in range(n):
        s += scale(i, offset=1.0)
        s += scale(x=i, factor=0.5)
        s += scale(offset=-1.0, x=i)
        s += keyword_only(i, k=3)
    return s

def held_keywords(n, g):
    def local(v, w=1):
        return v * w
    s = 0
    for i in range(n):
        s += local(i, w=3) + g(i, factor=3)
    return s

class Body:
    def __init__(self):
        self.t = 0.0

    def step(self, dt, damp=1.0):
        self.t += dt * damp
        return self.t

def method_keywords(n):
    b = Body()
    step = b.step
    s = 0.0
    for i in range(n):
        s += b.step(0.5, damp=0.25)
        s += step(dt=0.125)
    return s, b.t

def unknown_keyword(n, when):
    s = 0
    for i in range(n):
        s += scale(i, bogus=1) if i == when else i
    return s

def twice(n, when):
    s = 0
    for i in range(n):
        s += scale(i, x=i) if i == when else i
    return s

def by_position_only(n):
    s = 0
    for i in range(n):
        s += positional_only(i, y=1)
    return s

def position_only_by_keyword(n, when):
    s = 0
    for i in range(n):
        s += positional_only(x=i, y=1) if i == when else i
    return s

def default_keyword_only(n):
    s = 0
    for i in range(n):
        s += keyword_only_default(i)
    return s

def raising(n, at):
    s = 0.0
    for i in range(n):
        s += inverse(i, bias=-at)
    return s

def defaults_changed(n, when):
    scale.__defaults__ = (2.0, 0.0)
    s = 0.0
    for i in range(n):
        if i == when:
            scale.__defaults__ = (10.0, 0.0)
        s += scale(i, offset=1.0)
    return s
"""


def program(name: str):
    return define(SOURCE, name, {})


def _uops(f) -> str:
    return jit_module.dump(f, "uops")


def test_keywords_of_a_global_function_are_inlined():
    jitted = check(program("global_keywords"), (3000,), (7,), native=True)
    uops = _uops(jitted)
    assert "_CALL_GENERIC" not in uops, uops
    assert "scale" in jit_module.explain(jitted) and "inlined" in jit_module.explain(jitted)


def test_keywords_of_held_functions_are_inlined():
    # (a def inside the function is left to CPython by the tier-1 interpreter: the CPython baseline is native)
    baseline = check(program("held_keywords"), (3000, program("scale"))).cpython_baseline
    assert_native(baseline)
    assert "_CALL_GENERIC" not in _uops(baseline)


def test_keywords_of_methods_are_inlined():
    jitted = check(program("method_keywords"), (3000,), native=True)
    uops = _uops(jitted)
    assert "_CALL_GENERIC" not in uops and "_CALL_METHOD_GENERIC" not in uops, uops


@pytest.mark.parametrize("name", ["unknown_keyword", "twice", "position_only_by_keyword"])
def test_calls_cpython_refuses_raise_its_type_error(name):
    check(program(name), (3000, 2500), (3000, 5), (3000, -1))


def test_positional_only_parameters_given_by_position():
    check(program("by_position_only"), (3000,), native=True)


def test_a_keyword_only_default_keeps_the_call_generic():
    jitted = check(program("default_keyword_only"), (3000,), native=True)
    assert "_CALL_GENERIC" in _uops(jitted)


def test_an_inlined_keyword_call_raising_is_cpythons():
    check(program("raising"), (3000, 2000), (3000, 5000))


def test_defaults_changed_mid_loop():
    check(program("defaults_changed"), (3000, 1500), (3000, 10), (3000, -1))


@pytest.mark.parametrize(
    ("name", "nargs", "keywords", "given"),
    [
        ("scale", 2, ("offset",), (0, None, 1)),
        ("scale", 2, ("offset", "x"), (1, None, 0)),
        ("keyword_only", 2, ("k",), (0, 1)),
        ("positional_only", 2, ("y",), (0, 1)),
    ],
)
def test_parameters_binds_keywords(name, nargs, keywords, given):
    assert inline.parameters(program(name), nargs, keywords) == given


@pytest.mark.parametrize(
    ("name", "nargs", "keywords", "why"),
    [
        ("scale", 2, ("bogus",), "no parameter takes the keyword 'bogus'"),
        ("scale", 2, ("x",), "given twice"),
        ("positional_only", 2, ("x", "y"), "no parameter takes the keyword 'x'"),
        ("scale", 0, (), "wrong number of arguments"),
        ("scale", 4, (), "wrong number of arguments"),
        ("keyword_only_default", 1, (), "keyword-only parameter left to its default"),
    ],
)
def test_parameters_refuses(name, nargs, keywords, why):
    with pytest.raises(Abort, match=why):
        inline.parameters(program(name), nargs, keywords)


def test_native_through_stats():
    jitted = jit_module.jit(program("global_keywords"))
    for _ in range(3):
        jitted(2000)
    assert_native(jitted)
    assert jit_module.stats(jitted)["aborts"] == {}
