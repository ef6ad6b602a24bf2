"""Generator expressions consumed by a builtin outside every loop statement (``jit.frontend.consumers``), handed
over whole as comprehensions are (``jit.frontend.instrument``, ``runtime.consumers``): once hot, the instrumented
code checks the callee is the builtin, hands the expression's loop to the JIT and makes the builtin's result of what
it built. Differential tests against CPython, each demanding through jit.stats that the loop ran natively; user
iterators (what any/all pull); a callee that is not the builtin; the loop given back part way; tracebacks and
PEP 479."""

import traceback

import pytest
from helpers import check, define

import jit as jit_module
from jit import jit
from runtime.loop_driver import CodeHooks

LONG = list(range(40))

SOURCE = """
def squares(xs):
    return sum(x * x for x in xs)

def floats(xs):
    total = sum(x / 3 for x in xs)
    return total

def decided(xs, t):
    return any(x > t for x in xs), all(x < t for x in xs)

def containers(xs):
    a = list(x + 1 for x in xs)
    b = tuple(x for x in xs if x % 2)
    c = set(x % 5 for x in xs)
    d = frozenset(x % 3 for x in xs)
    e = sorted(-x for x in xs)
    f = ",".join(str(x) for x in xs)
    return a, b, c, d, e, f

def two_clauses(n):
    return sum(i * j for i in range(n) for j in range(3) if (i + j) % 2)

def pulled(xs, t):
    it = Counted(xs)
    found = any(x > t for x in it)
    return found, it.calls, it.items
"""


class Counted:
    def __init__(self, items):
        self.items = list(items)
        self.calls = 0

    def __iter__(self):
        return self

    def __next__(self):
        self.calls += 1
        if not self.items:
            raise StopIteration
        return self.items.pop(0)


@pytest.mark.parametrize(
    "name, calls",
    [
        ("squares", [LONG, LONG, [], LONG, [2**62] * 40]),
        ("floats", [LONG, LONG, [0.1] * 40]),
        ("decided", [(LONG, 100), (LONG, 100), (LONG, 30), (LONG, -1), ([], 0)]),
        ("containers", [LONG, LONG, []]),
        ("two_clauses", [30, 30, 0]),
        ("pulled", [(LONG, 100), (LONG, 100), (LONG, 20), (LONG, 0)]),
    ],
)
def test_consumed_outside_loops_runs_natively(name, calls):
    check(define(SOURCE, name, {"Counted": Counted}), *calls, native=True)


def test_a_global_shadowing_the_builtin_gets_the_generator():
    namespace = {"sum": lambda gen: ("mine", list(gen))}
    check(define(SOURCE, "squares", namespace), LONG, LONG, LONG)


def test_given_back_part_way(monkeypatch):
    # `(x is k) * 0`: an identity test of two unboxed ints makes every recording give up; once the loop is
    # blacklisted, the driver gives it back to CPython (ended False) at its header, part way, and the builtin consumes
    # the rest from where tier 1 left the iterator
    rests = []
    original = CodeHooks.consume_rest
    monkeypatch.setattr(
        CodeHooks,
        "consume_rest",
        staticmethod(lambda kind, callee, built, rest: rests.append(kind) or original(kind, callee, built, rest)),
    )
    source = (
        "def f(xs, k):\n"
        "    a = sum((x is k) * 0 + x * 2 for x in xs)\n"
        "    b = any((x is k) * 0 + x > 100 for x in iter(xs))\n"
        "    c = tuple((x is k) * 0 + x for x in xs)\n"
        "    return a, b, c\n"
    )
    check(define(source, "f"), *[(LONG, -1)] * 8, options={"threshold": 2, "max_aborts": 2})
    assert {"sum", "any", "tuple"} <= set(rests), rests


FAILING = """
def in_element(xs, d):
    total = sum(
        10 // (x - d)
        for x in xs
    )
    return total

def in_condition(xs, d):
    return list(x for x in xs if 10 // (x - d))

def stops(xs, d):
    it = iter(xs[:d])
    return tuple(next(it) for x in xs)
"""


def frames_of(func, *args):
    try:
        func(*args)
    except Exception as exc:
        cause = exc.__cause__
        entries = [(frame.name, frame.lineno, frame.line) for frame in traceback.extract_tb(exc.__traceback__)]
        caused = None
        if cause is not None:
            caused = type(cause), [(frame.name, frame.lineno) for frame in traceback.extract_tb(cause.__traceback__)]
        return type(exc), str(exc), entries[1:], caused  # (not this function's)
    raise AssertionError("no exception")


@pytest.mark.parametrize("name", ["in_element", "in_condition", "stops"])
def test_exception_inside(name):
    func = define(FAILING, name)
    jitted = jit(threshold=2)(func)
    for _ in range(3):  # counted, handed over (recorded), native
        assert jitted(LONG, 100 if name == "stops" else -1) is not None
    for d in (5, 39, 0):
        assert frames_of(jitted, LONG, d) == frames_of(func, LONG, d)
    stats = jit_module.stats(jitted)
    assert stats["handoffs"] >= 3 and stats["native_entries"] > 0


def test_explain_names_the_expression_handed_over():
    jitted = jit(threshold=2)(define(SOURCE, "squares"))
    for _ in range(3):  # counted, handed over (recorded), native
        jitted(LONG)
    report = jit_module.explain(jitted)
    assert "no for or while statement" not in report
    assert "loop 0 (iter) at line 3: native: 1 tree(s)" in report, report
