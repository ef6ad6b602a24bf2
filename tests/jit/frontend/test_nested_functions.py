"""Lambdas and nested defs (``jit.frontend.nested_code``): CPython's code object, made into a function where the
expression or statement is, its closure real cells holding the values of the function's variables it reads (each
bound for good by then). Checked against CPython: results, exceptions and tracebacks through the nested
function's frame, what a user can see of the function made (name, qualified name, defaults, annotations,
docstring, closure), and through jit.stats that the loop ran natively. One reading a variable that may change is
refused, and jit.explain says which."""

from __future__ import annotations

import gc
import sys
import traceback
import weakref

import pytest
from helpers import check, define

import jit as jit_module
from jit import jit

SOURCE = """
def by_second(rows):
    out = []
    for row in rows:
        out.append(sorted(row, key=lambda t: t[1]))
    return out


def best_keys(d, n):
    best = []
    for i in range(n):
        best.append(max(d, key=lambda k: d[k]) + str(i % 3))
    return best[-5:]


def helper_at_the_top(points, scale):
    origin_x, origin_y = 0.5, -0.25

    def dist(x, y):
        "The distance to the origin, scaled."
        dx = x - origin_x
        dy = y - origin_y
        return (dx * dx + dy * dy) ** 0.5 * scale

    total = 0.0
    for x, y in points:
        total += dist(x, y)
    return total


def local_lambda_called(n):
    k = 3
    sq = lambda x: x * x + k  # noqa: E731
    total = 0
    for i in range(n):
        total += sq(i) % 11
    return total


def kept_lambdas(n):
    made = []
    for i in range(n):
        made.append(lambda x, i=i, *, by=2: (x + i) * by)
    return [f(1) for f in made[-4:]], [f(1, by=3) for f in made[:2]]


def closures_of_numbers(n, scale, big):
    k = n // 3
    total = 0.0
    kept = []
    for i in range(n):
        f = lambda x: x * scale + k + big  # noqa: E731
        total += f(i % 7)
        kept.append(f)
    return total, [f(1) for f in kept[-2:]], [c.cell_contents for c in kept[0].__closure__]


def made_in_a_comprehension(n):
    total = 0
    for i in range(n):
        total += sum([f(i) for f in [lambda x, j=j: x * j for j in range(3)]])
        names = [f.__qualname__ for f in [lambda: 0 for _ in range(1)]]
    return total, names


def decorated(n):
    log = []

    def tag(name):
        log.append(name)

        def wrap(func):
            log.append(func.__name__)
            return func

        return wrap

    total = 0
    for i in range(n):

        @tag("a" + str(i % 2))
        @tag("b")
        def step(x, y=i):
            return x + y

        total += step(1)
    return total, log[-8:]


def evaluation_order(n):
    log = []

    def note(x):
        log.append(getattr(x, "__name__", x))
        return x

    total = 0
    for i in range(n):

        @note
        def g(p: note("p"), /, a: note("a") = note(1), *va: note("va"), kw: note("kw") = note(2), **kwa: note("kwa")) -> note("ret"):
            return p

        total += g(i)
    return total, log[-10:], list(g.__annotations__)


def calls_itself(n):
    def fact(m):
        return 1 if m <= 1 else m * fact(m - 1)

    total = 0
    for i in range(n):
        total += fact(i % 12)
    return total, fact.__closure__[0].cell_contents is fact


def divides(rows):
    total = 0.0
    for row in rows:
        total += max(row, key=lambda x: 1 / x)
    return total


def helper_raises(values):
    def inverse(x):
        return 1 / x

    total = 0.0
    for v in values:
        total += inverse(v)
    return total


def default_raises(values):
    total = 0
    for v in values:
        f = lambda x, d=10 // v: x + d  # noqa: E731
        total += f(1)
    return total


def returns_its_function(a, b):
    k = a * 2

    def helper(x: int, /, y: "str" = b, *rest: float, z: list = None, **more: dict) -> tuple:
        "Its docstring."
        return x, y, k, rest, z, more

    total = 0
    for i in range(50):
        total += i
    return helper, lambda q, r=a: q + r + k


def reads_a_loop_variable(rows):
    total = 0
    for k, row in enumerate(rows):
        total += max(row, key=lambda x: x * k)
    return total


def reads_a_rebound_variable(rows):
    scale = 1
    scale = scale * 2

    def scaled(x):
        return x * scale

    total = 0
    for row in rows:
        total += scaled(len(row))
    return total


def recursive_in_a_loop(n):
    total = 0
    for i in range(n):

        def count(m):
            return 0 if m == 0 else 1 + count(m - 1)

        total += count(i % 5)
    return total


def mutually_recursive(n):
    def even(m):
        return True if m == 0 else odd(m - 1)

    def odd(m):
        return False if m == 0 else even(m - 1)

    total = 0
    for i in range(n):
        total += even(i % 9)
    return total


def fib_lambda(n):
    fib = lambda m: m if m < 2 else fib(m - 1) + fib(m - 2)  # noqa: E731
    total = 0
    for i in range(n):
        total += fib(i % 10)
    return total, fib.__closure__[0].cell_contents is fib


def fib_lambda_in_a_loop(n):
    total = 0
    for i in range(n):
        fib = lambda m: m if m < 2 else fib(m - 1) + fib(m - 2)  # noqa: E731
        total += fib(i % 10)
    return total


def factory(c):
    def inner(rows):
        total = 0
        for row in rows:
            total += max(row, key=lambda x: x * c)
        return total

    return inner


class Box:
    def __init__(self, rows):
        self.__rows = rows

    def weights(self, n):
        total = 0
        for i in range(n):
            total += sum(map(lambda row: len(row) * self.__scale(), self.__rows))
        return total

    def __scale(self):
        return 2
"""

NAMES = (
    "by_second",
    "best_keys",
    "helper_at_the_top",
    "local_lambda_called",
    "kept_lambdas",
    "made_in_a_comprehension",
    "closures_of_numbers",
    "decorated",
    "calls_itself",
    "evaluation_order",
    "divides",
    "default_raises",
    "helper_raises",
    "returns_its_function",
    "reads_a_loop_variable",
    "reads_a_rebound_variable",
    "recursive_in_a_loop",
    "mutually_recursive",
    "fib_lambda",
    "fib_lambda_in_a_loop",
    "factory",
    "Box",
)
NS: dict = {}
for _name in NAMES:
    NS[_name] = define(SOURCE, _name, NS, dont_inherit=True)  # (annotations evaluated, as without the future import)


def not_inlined(jitted) -> str:
    """jit.explain's list of calls of jitted's loops made through the C-API ('' if none)."""
    text = jit_module.explain(jitted)
    return text.split("not inlined:")[1] if "not inlined:" in text else ""


def test_a_lambda_key_of_sorted_in_a_loop_is_native():
    rows = [[(j, (i * 7 + j * 3) % 5) for j in range(4)] for i in range(200)]
    check(NS["by_second"], (rows,), ([[]],), native=True)


def test_a_lambda_reading_a_parameter():
    check(NS["best_keys"], ({"a": 1, "b": 3, "c": 2}, 300), ({}, 3), native=True)


def test_a_helper_def_at_the_top_is_inlined_into_the_loop():
    points = [(i * 0.25, (i % 7) * 0.5) for i in range(300)]
    jitted = check(NS["helper_at_the_top"], (points, 2.0), (points, 3), native=True)
    for variant in (jitted, jitted.cpython_baseline):
        assert "helper_at_the_top.<locals>.dist" not in not_inlined(variant), jit_module.explain(variant)


def test_a_local_lambda_called_in_the_loop_is_inlined():
    jitted = check(NS["local_lambda_called"], 300, native=True)
    assert "<lambda>" not in not_inlined(jitted), jit_module.explain(jitted)


def test_lambdas_made_in_the_loop_keep_their_defaults():
    jitted = check(NS["kept_lambdas"], 300, native=True)
    for variant in (jitted, jitted.cpython_baseline):  # (made by native code: no call of tracejit's maker)
        assert "_MAKE_FUNCTION" in jit_module.dump(variant, "uops")


def test_closures_of_numbers_the_trace_holds_unboxed():
    check(NS["closures_of_numbers"], (300, 0.5, 7), (300, 2, 2**70), (300, 1.5, -(2**63)), native=True)


def test_functions_made_natively_hold_exact_references():
    """The function, its cells and what they hold are freed as under CPython: no reference too many or too few
    (made in the loop, kept in a list, each reading a parameter and taking a default)."""
    source = (
        "def f(n, payload):\n"
        "    made = []\n"
        "    for i in range(n):\n"
        "        made.append(lambda x, d=[i]: (x, d, payload))\n"
        "    return made\n"
    )
    func = define(source, "f", {})
    jitted = jit(threshold=2)(func)
    payload = object()
    before = sys.getrefcount(payload)
    made = jitted(500, payload)
    assert jit_module.stats(jitted)["native_iterations"] > 0
    assert "_MAKE_FUNCTION" in jit_module.dump(jitted, "uops")
    assert sys.getrefcount(payload) == before + 500  # (one cell each)
    assert made[-1](7) == (7, [499], payload) and made[3].__closure__[0].cell_contents is payload
    kept = weakref.ref(made[-1])
    defaults = made[-1].__defaults__
    assert sys.getrefcount(defaults) == 3  # (the function's, the local's, getrefcount's argument)
    del made, defaults
    gc.collect()
    assert kept() is None and sys.getrefcount(payload) == before


def test_lambdas_made_in_a_comprehension():
    check(NS["made_in_a_comprehension"], 300, native=True)


def test_decorators_are_evaluated_and_applied_in_cpythons_order():
    check(NS["decorated"], 300, native=True)


def test_defaults_annotations_and_decorators_are_evaluated_in_cpythons_order():
    check(NS["evaluation_order"], 300, native=True)


def test_a_def_calling_itself_gets_a_cell_holding_it():
    jitted = check(NS["calls_itself"], 300, native=True)
    assert jitted(300)[1] is True


def test_a_lambda_bound_to_a_name_it_calls_gets_a_cell_holding_it():
    jitted = check(NS["fib_lambda"], 300, native=True)
    assert jitted(300)[1] is True


def test_an_exception_in_a_lambda_has_cpythons_traceback():
    rows = [[1.0, 2.0]] * 300 + [[1.0, 0.0]]
    jitted = check(NS["divides"], (rows,), native=True)
    for f in (NS["divides"], jitted, jitted.cpython_baseline):
        with pytest.raises(ZeroDivisionError, match="division by zero") as info:
            f(rows)
        frames = [(frame.name, frame.line) for frame in traceback.extract_tb(info.tb)][-2:]
        assert frames == [
            ("divides", "total += max(row, key=lambda x: 1 / x)"),
            ("<lambda>", "total += max(row, key=lambda x: 1 / x)"),
        ]


def test_an_exception_in_an_inlined_helper_def_has_cpythons_traceback():
    values = [1.0, 2.0] * 200 + [0.0]
    jitted = check(NS["helper_raises"], (values,), native=True)
    for f in (NS["helper_raises"], jitted, jitted.cpython_baseline):
        with pytest.raises(ZeroDivisionError, match="float division by zero") as info:
            f(values)
        frames = [(frame.name, frame.line) for frame in traceback.extract_tb(info.tb)][-2:]
        assert frames == [("helper_raises", "total += inverse(v)"), ("inverse", "return 1 / x")]


def test_a_default_that_raises_raises_where_the_lambda_is_made():
    check(NS["default_raises"], ([1, 2, 5] * 100 + [0, 3],), native=True)


def _looks(func) -> dict:
    """What a user can see of a function."""
    return {
        "name": func.__name__,
        "qualname": func.__qualname__,
        "module": func.__module__,
        "doc": func.__doc__,
        "defaults": func.__defaults__,
        "kwdefaults": func.__kwdefaults__,
        "annotations": list(func.__annotations__.items()),
        "dict": func.__dict__,
        "wrapped": hasattr(func, "__wrapped__"),
        "freevars": func.__code__.co_freevars,
        "cells": [cell.cell_contents for cell in func.__closure__ or ()],
        "repr": repr(func).split(" at 0x")[0],
        "globals": func.__globals__ is NS["returns_its_function"].__globals__,
        "builtins": func.__builtins__ is NS["returns_its_function"].__builtins__,
    }


def test_the_functions_made_look_like_cpythons():
    plain = NS["returns_its_function"]
    interpreted = jit(interpreter=True, threshold=2)(plain)
    expected = plain(3, "s")
    made = interpreted(3, "s")
    assert jit_module.stats(interpreted)["native_entries"] > 0
    for mine, theirs in zip(made, expected):
        assert mine is not theirs
        assert _looks(mine) == _looks(theirs)
        assert mine.__code__ == theirs.__code__  # (CPython's code object, compiled as CPython compiles it)
    assert made[0](1, "t", 2.5, z=[1], w=2) == expected[0](1, "t", 2.5, z=[1], w=2)
    assert made[1](4) == expected[1](4) == 13


def test_annotations_under_future_annotations_are_cpythons_strings():
    source = (
        "from __future__ import annotations\n"
        "def f(n):\n"
        "    def g(a: int, /, b: list[str] = None, *, c: 'x' = 1) -> dict[str, int]:\n"
        "        return a\n"
        "    total = 0\n"
        "    for i in range(n):\n"
        "        total += g(i)\n"
        "    return total, g.__annotations__\n"
    )
    func = define(source, "f", {})
    jitted = check(func, 300, native=True)
    assert jitted(3)[1] == {"a": "int", "b": "list[str]", "c": "'x'", "return": "dict[str, int]"}


def test_private_names_are_mangled_as_in_the_class():
    method = jit(interpreter=True, threshold=2)(NS["Box"].weights)
    box = NS["Box"]([[1, 2], [3]])
    assert method(box, 300) == NS["Box"].weights(box, 300) == 1800
    assert jit_module.stats(method)["native_entries"] > 0, jit_module.explain(method)


@pytest.mark.parametrize(
    "name",
    [
        "reads_a_loop_variable",
        "reads_a_rebound_variable",
        "recursive_in_a_loop",
        "mutually_recursive",
        "fib_lambda_in_a_loop",
    ],
)
def test_one_reading_a_variable_that_may_change_reads_its_cell(name):
    # (a cell variable of the function: the nested function's closure holds that cell, as CPython's does)
    func = NS[name]
    call = ([[1, 2]] * 300,) if name.startswith("reads_") else (300,)
    jitted = check(func, call, native=True)
    report = jit_module.explain(jitted)
    assert "may change" not in report, report


def test_one_reading_a_variable_of_an_enclosing_function_is_refused_and_explained():
    jitted = check(NS["factory"](-1), ([[1, -2, 3]] * 300,))
    report = jit_module.explain(jitted)
    assert "lambda reading a variable of an enclosing scope (c)" in report, report
