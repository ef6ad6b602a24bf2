"""Unsupported constructs: the function runs as plain CPython with the same results, and ``jit.explain`` names the
construct and its line.

Each case is a source text; the line holding ``#<`` is the line explain must report. Functions are defined from
source (``helpers.define``) so the line numbers are known.
"""

import asyncio
import re
import types

import pytest
from helpers import Args, check, define

from jit import jit
from jit.api import state_of


class Case:
    def __init__(self, id, source, name, calls, reason, factory=False, result=None):
        self.id = id
        self.source = source
        self.name = name  # the function to jit (or, factory=True, a function returning it)
        self.calls = calls
        self.reason = reason  # a regular expression the explain report must match
        self.factory = factory
        self.result = result  # how to compare outcomes: None (helpers.check), "list" or "coroutine"

    def function(self):
        import math

        self.namespace = {"math": math}
        func = define(self.source, self.name, self.namespace)
        if callable(self.calls):  # calls that need objects of the case's own source
            self.calls = self.calls(self.namespace)
        return func() if self.factory else func

    def line(self):
        lines = self.source.splitlines()
        marked = [i + 1 for i, text in enumerate(lines) if "#<" in text]
        assert len(marked) == 1, self.id
        return marked[0]


CASES = [
    Case(
        "generator",
        """
def gen(n):
    for i in range(n):
        yield i * 2  #<
""",
        "gen",
        [0, 12],
        r"generator",
        result="list",
    ),
    Case(
        "yield_from",
        """
def gen(n):
    x = 1
    yield from range(n)  #<
""",
        "gen",
        [12],
        r"generator",
        result="list",
    ),
    Case(
        "async_def",
        """
async def coro(n):  #<
    total = 0
    for i in range(n):
        total += i
    return total
""",
        "coro",
        [0, 12],
        r"async",
        result="coroutine",
    ),
    Case(
        "try_except",
        """
def f(x):
    total = 0
    try:  #<
        total = 10 // x
    except ZeroDivisionError:
        total = -1
    return total
""",
        "f",
        [0, 3],
        r"try",
    ),
    Case(
        "try_finally",
        """
def f(log):
    try:  #<
        log.append(1)
    finally:
        log.append(2)
    return log
""",
        "f",
        [Args([])],
        r"try",
    ),
    Case(
        "with",
        """
class Ctx:
    def __init__(self, log):
        self.log = log
    def __enter__(self):
        self.log.append("in")
        return 5
    def __exit__(self, *exc):
        self.log.append("out")

def f(log):
    x = 0
    with Ctx(log) as v:  #<
        x = v * 2
    return x, log
""",
        "f",
        [Args([])],
        r"with",
    ),
    Case(
        "nested_def_reading_a_loop_variable",
        """
def f(n):
    total = 0
    for i in range(n):
        def helper(k):  #<
            return k * i
        total += helper(i)
    return total
""",
        "f",
        [12],
        r"nested function helper reading a variable of the function that may change \(i\)",
    ),
    Case(
        "lambda_reading_a_rebound_variable",
        """
def f(items):
    sign = 1
    sign = -sign
    return sorted(items, key=lambda v: sign * v)  #<
""",
        "f",
        [[3, 1, 2]],
        r"lambda reading a variable of the function that may change \(sign\)",
    ),
    Case(
        "nested_async_def",
        """
def f(n):
    async def helper(k):  #<
        return k * 2
    return n
""",
        "f",
        [12],
        r"nested async function definition",
    ),
    Case(
        "lambda_itself",
        """
g = lambda x, y=2: x * y  #<
""",
        "g",
        [1, (3, 4)],
        r"lambda",
    ),
    Case(
        "nonlocal",
        """
def outer():
    count = 0
    def inner(n):
        nonlocal count  #<
        count = n
        return count * 2
    return inner
""",
        "outer",
        [5, 7],
        r"nonlocal.*count",
        factory=True,
    ),
    Case(
        "super",
        """
class Base:
    def f(self, n):
        return n + 1

class Child(Base):
    def f(self, n):
        parent = super()  #<
        return parent.f(n) * 2

def make():
    return Child.f
""",
        "make",
        lambda namespace: [Args(namespace["Child"](), 5)],
        r"super",
        factory=True,
    ),
    Case(
        "class_body",
        """
def f(n):
    class Local:  #<
        value = n
    return Local.value * 2
""",
        "f",
        [4],
        r"class",
    ),
    Case(
        "import",
        """
def f(n):
    import math  #<
    return math.factorial(n)
""",
        "f",
        [5],
        r"import",
    ),
    Case(
        "import_from",
        """
def f(n):
    from math import factorial  #<
    return factorial(n)
""",
        "f",
        [5],
        r"import",
    ),
    Case(
        "match",
        """
def f(x):
    match x:  #<
        case 0:
            return "zero"
        case [a, b]:
            return a + b
        case _:
            return "other"
""",
        "f",
        [0, [1, 2], "z"],
        r"match",
    ),
    Case(
        "star_args",
        """
def f(*args):  #<
    return sum(args)
""",
        "f",
        [(), (1, 2, 3)],
        r"\*args",
    ),
    Case(
        "kwargs",
        """
def f(a, **kwargs):  #<
    return a, sorted(kwargs.items())
""",
        "f",
        [Args(1, b=2, c=3), Args(1)],
        r"\*\*kwargs",
    ),
    Case(
        "star_in_call",
        """
def f(items):
    n = len(items)
    return max(*items)  #<
""",
        "f",
        [[1, 5, 2]],
        r"star",
    ),
    Case(
        "double_star_in_call",
        """
def f(d):
    return dict(**d)  #<
""",
        "f",
        [{"a": 1}],
        r"star",
    ),
    Case(
        "starred_target",
        """
def f(items):
    first, *rest = items  #<
    return first, rest
""",
        "f",
        [[1, 2, 3], [1]],
        r"starred",
    ),
    Case(
        "starred_display",
        """
def f(items):
    return [0, *items]  #<
""",
        "f",
        [[1, 2]],
        r"starred",
    ),
    Case(
        "generator_expression",
        """
def f(n):
    k = 3
    k += 1
    return math.fsum(i * k for i in range(n))  #<
""",
        "f",
        [0, 12],
        r"generator expression reading a variable of the function that may change \(k\)",
    ),
    Case(
        "bare_raise",
        """
def f(x):
    if x:
        raise  #<
    return 1
""",
        "f",
        [0, 1],
        r"bare raise",
    ),
    Case(
        "globals_call",
        """
def f(n):
    return sorted(globals())[:1], n  #<
""",
        "f",
        [1],
        r"globals\(\)",
    ),
    Case(
        "locals_call",
        """
def f(n):
    m = n * 2
    return locals()  #<
""",
        "f",
        [1],
        r"locals\(\)",
    ),
    Case(
        "eval_call",
        """
def f(n):
    return eval("n + 1")  #<
""",
        "f",
        [1],
        r"eval\(\)",
    ),
    Case(
        "unsupported_after_supported_code",
        """
def f(n):
    total = 0
    for i in range(n):
        total += i
    while total > 0:
        total -= 7
        try:  #<
            pass
        finally:
            pass
    return total
""",
        "f",
        [0, 12],
        r"try",
    ),
]


def _run(func, case, call):
    call = call if isinstance(call, Args) else Args(*call) if isinstance(call, tuple) else Args(call)
    try:
        value = func(*call.args, **call.kwargs)
        if case.result == "list":
            value = list(value)
        elif case.result == "coroutine":
            assert isinstance(value, types.CoroutineType)
            value = asyncio.run(value)
        return "return", value
    except Exception as exc:
        return "raise", (type(exc), str(exc))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_falls_back_with_same_results(case):
    func = case.function()
    if case.result is None:
        jitted = check(func, *case.calls)
    else:
        jitted = jit(func)
        for call in case.calls:
            assert _run(jitted, case, call) == _run(func, case, call)
    state = state_of(jitted)
    assert state.mode == "plain"
    assert jitted.py_func is func


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_explain_names_construct_and_line(case):
    func = case.function()
    report = jit.explain(jit(func))
    assert "runs as plain CPython" in report, report
    assert re.search(case.reason, report), report
    assert f"line {case.line()}:" in report, report


def test_explain_before_first_call_does_not_call():
    func = define(
        """
def f(log):
    log.append(1)
    try:
        pass
    finally:
        pass
""",
        "f",
    )
    jitted = jit(func)
    assert "try" in jit.explain(jitted)
    log = []
    jitted(log)
    assert log == [1]


def test_source_unavailable_exec_without_linecache():
    namespace = {}
    source = "def f(n):\n    total = 0\n    for i in range(n):\n        total += i\n    return total\n"
    exec(compile(source, "<no-source-here>", "exec"), namespace)
    func = namespace["f"]
    jitted = check(func, 0, 12)
    assert state_of(jitted).mode == "plain"
    report = jit.explain(jitted)
    assert "source code is not available" in report and "<no-source-here>" in report, report
    assert "line 1" in report, report


def test_source_changed_since_definition():
    import linecache

    func = define("def f(a, b):\n    return a - b\n", "f")
    filename = func.__code__.co_filename
    linecache.cache[filename] = (0, None, ["def f(x, y, z):\n", "    return 0\n"], filename)
    jitted = check(func, (5, 3))
    assert state_of(jitted).mode == "plain"
    assert "changed" in jit.explain(jitted)


def test_supported_function_is_not_plain():
    func = define("def f(n):\n    return [i for i in range(n)]\n", "f")
    jitted = check(func, 12, native=True)
    report = jit.explain(jitted)
    assert state_of(jitted).mode == "tier1"
    assert "runs in the tracejit interpreter" in report and "loop" in report, report
