"""Comprehensions outside every loop statement, handed over whole: CPython's instrumented code counts a list, set
or dict comprehension's iterations (its counted copy) and, once it is hot, hands the whole comprehension to the JIT
at its header (``jit.frontend.instrument``, ``LoopRuntime.loop`` with whole True), which returns what it built.

Differential tests against CPython (results, exceptions, arguments afterwards), each demanding through jit.stats
that the comprehension ran natively once hot; the order of effects around a comprehension; user iterators and
generators (no ``next`` twice or skipped); a comprehension given back to CPython part way; tracebacks; iterators
released; comprehensions whose starts are too short to pay.
"""

import gc
import traceback
import weakref

import pytest
from helpers import check, define

import jit as jit_module
from jit import jit
from jit.api import state_of
from runtime.loop_driver import CodeHooks, LoopRuntime

SOURCE = """
SCALE = 3

def top_list(xs):
    return [x * 2 for x in xs if x % 3]

def top_set(xs):
    return {x % 7 for x in xs}

def top_dict(pairs):
    d = {k: v * 2 for k, v in pairs}
    return d

def dict_later_keys_win(xs):
    return {x % 5: x for x in xs}

def assigned_then_used(xs, k):
    offset = k * 2
    ys = [x * k + offset for x in xs if x > offset]
    return sum(ys), ys

def reads_globals(xs):
    return [x * SCALE for x in xs]

def nested_comprehension(n):
    return [[i * j for j in range(i)] for i in range(n)]

def two_loops(n):
    return [(i, j) for i in range(n) for j in range(3) if (i + j) % 2]

def sum_of_squares(xs):
    total = sum([x * x for x in xs])
    return total

def normalized(xs):
    lo = min(xs)
    span = max(xs) - lo
    return [(x - lo) / span for x in xs]

def augmented(xs):
    out = [0]
    out += [x + 1 for x in xs]
    return out

def two_in_one_statement(xs):
    return [x + 1 for x in xs], {x: -x for x in xs}, len([x for x in xs if x > 10])

def over_range(n):
    return [i * i for i in range(n)]

def over_string(s):
    return [c.upper() for c in s if c != "a"]

def possibly_unbound(xs, flag):
    if flag:
        k = 5
    return [x + k for x in xs]

def deleted_then_read(xs):
    k = 1
    del k
    return [x + k for x in xs]
"""

LONG = list(range(40))


@pytest.mark.parametrize(
    "name, calls",
    [
        ("top_list", [LONG, LONG[:7], [], LONG]),
        ("top_set", [LONG, [], LONG]),
        ("top_dict", [[(i, i * i) for i in range(30)], [], [(1, 2), (1, 3)] * 20]),
        ("dict_later_keys_win", [LONG, LONG]),
        ("assigned_then_used", [(LONG, 3), ([], 1), (LONG, -2)]),
        ("reads_globals", [LONG, LONG]),
        ("nested_comprehension", [12, 20, 20, 0]),
        ("two_loops", [20, 30, 30]),
        ("sum_of_squares", [LONG, [0.5] * 30, LONG]),
        ("normalized", [[float(i) for i in range(1, 40)], [3.0, 1.0, 2.0] * 10]),
        ("augmented", [LONG, LONG]),
        ("two_in_one_statement", [LONG, LONG, [1, 2]]),
        ("over_range", [30, 30, 0, 5]),
        ("over_string", ["abracadabra" * 5, "abracadabra" * 5]),
        ("possibly_unbound", [(LONG, True), (LONG, True), (LONG, True)]),
    ],
)
def test_comprehensions_run_natively(name, calls):
    check(define(SOURCE, name), *calls, native=True)


@pytest.mark.parametrize(
    "name, calls",
    [
        ("possibly_unbound", [(LONG, True), (LONG, True), (LONG, False), ([], False)]),
        ("deleted_then_read", [LONG, LONG, [], LONG]),
    ],
)
def test_unbound_locals_read_inside(name, calls):
    check(define(SOURCE, name), *calls)


def hand_offs(jitted):
    """The hand-offs CPython made and the native entries (jit.stats of the CPython baseline)."""
    stats = jit_module.stats(jitted)
    return stats["handoffs"], stats["native_entries"]


def test_each_start_once_hot_is_handed_over():
    func = define(SOURCE, "top_list")
    jitted = jit(threshold=8)(func)
    for _ in range(3):  # counted (40 iterations: hot), handed over (recorded), counted again, ...
        assert jitted(LONG) == func(LONG)
    before = hand_offs(jitted)
    assert before[0] > 0
    for k in range(1, 6):  # ... from then on, every start
        assert jitted(LONG) == func(LONG)
        handoffs, entries = hand_offs(jitted)
        assert handoffs == before[0] + k and entries >= before[1] + k
    # (each into native code in one call: tj_handoff puts the empty list into the comprehension's accumulator slot)
    assert jit_module.stats(jitted)["handoff_entries"] >= 5
    runtime = state_of(jitted).loop_runtime
    assert runtime.comprehensions == frozenset({0}) and runtime.counters == [0]
    assert "handed to the JIT at its start" in jit_module.explain(jitted)


# --- order of effects, iterators ----------------------------------------------------------------------------

EFFECTS = """
def combine(*parts):
    return parts

def note(log, what):
    log.append(what)
    return what

class Counting:
    def __init__(self, log, n):
        self.log = log
        self.n = n
        self.i = 0

    def __iter__(self):
        self.log.append("iter")
        return self

    def __next__(self):
        self.log.append(("next", self.i))
        if self.i >= self.n:
            raise StopIteration
        self.i += 1
        return self.i

def gen(log, n):
    for i in range(n):
        log.append(("gen", i))
        yield i

def pending_operands(log, n):
    out = combine(note(log, "before"), [note(log, x) for x in note(log, list(range(n)))], note(log, "after"))
    return out, log

def user_iterator(log, n):
    return [x * 2 for x in Counting(log, n)], log

def generator(log, n):
    return {x: x * x for x in gen(log, n) if x % 2}, log

def shared_iterator(xs):
    it = iter(xs)
    first = next(it)
    middle = [x * 10 for x in it if x < 30]
    return first, middle, list(it)

def exhausted_iterator(xs):
    it = iter(xs)
    whole = [x for x in it]
    again = [x + 1 for x in it]
    return whole, again
"""


@pytest.mark.parametrize(
    "name, calls",
    [
        ("pending_operands", [([], 30), ([], 30), ([], 0), ([], 30)]),
        ("user_iterator", [([], 30), ([], 30), ([], 0), ([], 30)]),
        ("generator", [([], 30), ([], 30), ([], 0), ([], 30)]),
        ("shared_iterator", [LONG, LONG, [1], LONG]),
    ],
)
def test_effects_and_iterators(name, calls):
    check(define(EFFECTS, name), *calls, native=True)


def test_exhausted_and_empty():
    jitted = check(define(EFFECTS, "exhausted_iterator"), LONG, LONG, [], LONG)
    assert jit_module.stats(jitted.cpython_baseline)["handoffs"] > 0


def test_given_back_part_way(monkeypatch):
    # `(x is k) * 0`: an identity test of two unboxed ints makes every recording give up; once the loop is
    # blacklisted, the driver gives it back to CPython (ended False) at its header, part way, and CPython builds the
    # rest from where tier 1 left the iterator
    extended = []
    original = CodeHooks.extend
    monkeypatch.setattr(
        CodeHooks, "extend", staticmethod(lambda built, rest: extended.append(len(built)) or original(built, rest))
    )
    source = "def f(xs, k):\n    return [(x is k) * 0 + x * 2 for x in xs], {x: (x is k) * 0 + x for x in iter(xs)}\n"
    check(define(source, "f"), *[(LONG, -1)] * 8, options={"threshold": 2, "max_aborts": 2})
    assert any(length > 0 for length in extended), extended


# --- exceptions ---------------------------------------------------------------------------------------------

FAILING = """
def in_element(xs, d):
    ys = [
        10 // (x - d)
        for x in xs
    ]
    return ys

def in_element_one_line(xs, d):
    return [10 // (x - d) for x in xs]

def in_condition(xs, d):
    return {x for x in xs if 10 // (x - d)}

def in_dict_key(xs, d):
    return {
        [x][(x == d) * 5]: x
        for x in xs
    }

def not_iterable(xs, d):
    return [x for x in d]

def unhashable(xs, d):
    return {x if x != d else [x] for x in xs}

def helper(x, d):
    if x == d:
        raise ValueError(f"{x} is d")
    return x

def in_called_function(xs, d):
    return [helper(x, d) + 1 for x in xs]
"""


def frames_of(func, *args):
    try:
        func(*args)
    except Exception as exc:
        entries = [(frame.name, frame.lineno, frame.line) for frame in traceback.extract_tb(exc.__traceback__)]
        return type(exc), str(exc), entries[1:]  # (not this function's)
    raise AssertionError("no exception")


@pytest.mark.parametrize(
    "name", ["in_element", "in_element_one_line", "in_condition", "in_dict_key", "unhashable", "in_called_function"]
)
def test_exception_inside(name):
    func = define(FAILING, name)
    jitted = jit(threshold=2)(func)
    for _ in range(3):  # counted, handed over (recorded), native
        assert jitted(LONG, -1) is not None
    for d in (5, 39, 0):
        assert frames_of(jitted, LONG, d) == frames_of(func, LONG, d)
    handoffs, entries = hand_offs(jitted)
    assert handoffs >= 3 and entries > 0


def test_multi_line_traceback_is_cpythons():
    func = define(FAILING, "in_element")
    jitted = jit(threshold=2)(func)
    for _ in range(3):
        jitted(LONG, -1)

    def formatted(f):
        try:
            f(LONG, 20)
        except ZeroDivisionError as exc:
            return "".join(traceback.format_exception(exc))

    assert formatted(jitted) == formatted(func)


def test_not_iterable():
    check(define(FAILING, "not_iterable"), *[(LONG, 5)] * 3, (LONG, LONG), (LONG, LONG), (LONG, 5))
    func = define(FAILING, "not_iterable")
    jitted = jit(threshold=2)(func)
    for _ in range(3):
        jitted(LONG, LONG)
    assert frames_of(jitted, LONG, 5) == frames_of(func, LONG, 5)


def test_iterator_released():
    source = """
CLOSED = []

def closing(n):
    try:
        yield from range(n)
    finally:
        CLOSED.append("closed")

def fails(n):
    return [10 // (x - 20) for x in closing(n)]

def builds(xs):
    return [x + 1 for x in xs]
"""
    func = define(source, "fails")
    jitted = jit(threshold=2)(func)
    closed = func.__globals__["CLOSED"]
    for f in [func] + [jitted] * 5:
        closed.clear()
        try:
            f(40)
        except ZeroDivisionError:
            pass
        assert closed == ["closed"]  # (nothing holds the generator once the exception is gone: no cycle)
    assert hand_offs(jitted)[0] > 0
    builds = jit(threshold=2)(define(source, "builds"))

    class Items(list):
        pass

    for _ in range(4):
        items = Items(LONG)
        gone = weakref.ref(items)
        assert builds(items) == [x + 1 for x in LONG]
        del items
        gc.collect()
        assert gone() is None
    assert hand_offs(builds)[0] > 0


# --- what is handed over, what costs nothing ------------------------------------------------------------------


def test_short_starts_are_not_recorded():
    # a comprehension over 3 items: native entries could not pay, so it is never recorded; CPython runs it, and
    # its counter backs off
    func = define(SOURCE, "top_list")
    jitted = jit(func)  # (the default threshold and min_native_iterations)
    for _ in range(200):
        assert jitted([1, 2, 4]) == func([1, 2, 4])
    stats = jit_module.stats(jitted)
    assert stats["traces_compiled"] == 0 and stats["native_entries"] == 0
    runtime = state_of(jitted).loop_runtime
    assert runtime.not_paying[0] == pytest.approx(3.0, abs=1) and runtime.unrecorded[0]


def test_comprehension_inside_a_loop_is_the_loops(monkeypatch):
    # inside a loop statement a comprehension is an inner loop of the loop's tree: never handed over on its own
    called = []
    original = LoopRuntime.loop

    def loop(self, *args):
        if args[5:] == (True,):  # (a comprehension handed over whole)
            called.append(args)
        return original(self, *args)

    monkeypatch.setattr(LoopRuntime, "loop", loop)
    source = (
        "def f(rows):\n    out = []\n    for row in rows:\n        out.append([x * 2 for x in row])\n    return out\n"
    )
    jitted = check(define(source, "f"), [LONG] * 10, [LONG] * 10, native=True)
    assert called == [] and state_of(jitted.cpython_baseline).loop_runtime.comprehensions == frozenset()
