"""Statements outside every loop that the front end cannot compile (``try``, ``with``, a nested ``def`` or a
``lambda`` reading a variable that changes, ``import``) are left to CPython, and the function's loops are still compiled
(``compile_function(..., partial=True)``, ``T1Code.cpython_only``): CPython runs everything outside hot loops
anyway. The whole function stays plain where that would not be sound or not wanted: the construct inside a loop,
variables captured by a nested function (cells), ``strict=True``, ``interpreter=True``.

Differential against CPython (value and type, exception type and message, the arguments' mutations), with
``jit.stats`` showing the loops ran natively."""

from __future__ import annotations

import inspect

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


def captured_by_comprehensions(data, k):
    scaled = [x * k for x in data]
    total = 0.0
    try:
        for x in scaled:
            total += x * x
    except TypeError:
        total = -1.0
    k = 2
    return total, [x + k for x in data][:3], {x: k for x in data[:2]}


def captured_never_rebound(n):
    k = 3

    class Box:  # (its body reads k: a cell of the function)
        size = k

    total = 0
    for i in range(n):
        total += i % k
    return total + Box.size


def captured(n):
    k = 3

    class Box:  # (its method reads k, which the loop rebinds: a cell only CPython's code would hold)
        def get(self):
            return k

    total = 0
    for i in range(n):
        k = i % 5 + 1
        total += Box().get()
    return total


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
    "imported": [Args(400)],
    "with_block": [Args(300, [])],
    "ratio_after": [Args(500), Args(4), Args(0)],
    "returns_early": [Args(-3), Args(300)],
    "raises_in_loop": [Args(50, "20"), Args(50, None), Args(10, 30)],
    # (on Python 3.11 a comprehension is a nested function: k and x are cells of the function; comprehensions
    # run to their end where they are made, so partial code is sound: _cells_may_outlive_their_statement)
    "captured_by_comprehensions": [Args([1.5] * 300, 3), Args([1, 2, "x"] * 100, 2), Args([], 1)],
    # (the class body's k is a cell no loop rebinds: the loop's own copy of it never goes stale)
    "captured_never_rebound": [Args(300), Args(0)],
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
    for line, _, _ in state.code.cpython_only:
        assert f"line {line}: left to CPython (outside every loop)" in report, report


@pytest.mark.parametrize(
    "name, construct", [("captured", "class definition"), ("inside_the_loop", "try/except/finally")]
)
def test_the_whole_function_stays_plain_where_partial_code_is_unsound(name, construct):
    """captured: a loop rebinds what a method of a class the function defines captures; inside_the_loop: its every loop holds the construct
    (nothing left to hand over). jit.explain names the construct."""
    func = functions(name)
    jitted = jit(**OPTIONS)(func)
    for n in (0, 7, 300):
        assert_same_outcome(outcome(func, Args(n)), outcome(jitted, Args(n)), f"{name}({n})")
    assert state_of(jitted).mode == "plain"
    report = jit_module.explain(jitted)
    assert "runs as plain CPython" in report and construct in report, report


def test_strict_and_the_interpreter_baseline_refuse_the_whole_function():
    func = functions("validated")
    with pytest.raises(jit_module.UnsupportedFunctionError):
        jit(strict=True)(func)("3", 10)
    interpreted = jit(interpreter=True, **OPTIONS)(func)
    assert interpreted("3", 50) == func("3", 50)
    assert state_of(interpreted).mode == "plain"


# --- builtins that show the frame's locals keep the function plain --------------------------------------------

FRAME_SOURCE = """
def locals_after_a_try(n):
    total = 0
    for i in range(n):
        total += i
    try:
        x = 1
    except ValueError:
        x = 2
    return total, sorted(locals())


def locals_in_a_loop(n):
    total = 0
    snap = None
    for i in range(n):
        total += i
        for k in range(3):
            total += k
        if i == n - 1:
            snap = sorted(locals())
    return total, snap


def vars_in_a_with(n, log):
    s = 0
    with Ctx(log):
        for i in range(n):
            s += i
        names = sorted(vars())
    return s, names, dir()


def eval_after(n):
    total = 0
    for i in range(n):
        total += i % 7
    return eval("total + n"), eval("sorted(locals())")


def dir_is_a_local(n, dir):
    try:
        dir = dir * 2
    except TypeError:
        dir = 0
    total = 0
    for i in range(n):
        total += i * dir
    return total


def builtins_given_what_to_look_at(n, obj):
    try:
        names = sorted(vars(obj)) + [x for x in dir(obj) if not x.startswith("_")]
    except TypeError:
        names = []
    total = 0
    for i in range(n):
        total += i % 5
    return total, names, eval("x * 2", {"x": total})


def locals_in_a_nested_function(n):
    try:
        scale = 2
    except ValueError:
        scale = 1

    def names():
        return sorted(locals())

    total = 0
    for i in range(n):
        total += i * scale
    return total, names()
"""


class Ctx:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("enter")

    def __exit__(self, *exc):
        self.log.append("exit")
        return False


@pytest.mark.parametrize(
    "name, args, builtin",
    [
        ("locals_after_a_try", (300,), "locals"),
        ("locals_in_a_loop", (300,), "locals"),
        ("vars_in_a_with", (300, []), "vars"),
        ("eval_after", (300,), "eval"),
    ],
)
def test_a_builtin_showing_the_frames_locals_keeps_the_function_plain(name, args, builtin):
    """Partial code would leave the statement to CPython, in an instrumented copy of the function whose frame holds
    tracejit's hidden locals too: locals(), vars(), dir() and eval would show them (jit.frontend.statements.
    _frame_builtin). The function runs as its own code, exactly; jit.explain names the builtin."""
    func = define(FRAME_SOURCE, name, {"Ctx": Ctx})
    jitted = jit(**OPTIONS)(func)
    for attempt in range(3):
        assert_same_outcome(outcome(func, Args(*args)), outcome(jitted, Args(*args)), f"{name} (run {attempt + 1})")
    assert state_of(jitted).mode == "plain"
    report = jit_module.explain(jitted)
    assert f"{builtin}() (looks at the calling frame)" in report, report


FRAME_FREE_CALLS = {
    "dir_is_a_local": [(300, 3), (300, "x"), (0, 1)],
    "locals_in_a_nested_function": [(300,), (0,)],
    "builtins_given_what_to_look_at": [(300, Ctx([])), (300, 5)],
}


@pytest.mark.parametrize("name", sorted(FRAME_FREE_CALLS))
def test_a_local_of_that_name_or_a_nested_functions_locals_keep_partial_code(name):
    # (a local named dir is no builtin; locals() in a nested function shows that function's frame; vars(obj),
    # dir(obj) and eval(text, namespace) look at no frame)
    func = define(FRAME_SOURCE, name, {"Ctx": Ctx})
    jitted = jit(**OPTIONS)(func)
    for args in FRAME_FREE_CALLS[name]:
        for attempt in range(2):
            assert_same_outcome(outcome(func, Args(*args)), outcome(jitted, Args(*args)), f"{name}{args}")
    state = state_of(jitted)
    assert state.mode == "tier1" and state.code is not None and state.code.cpython_only, jit_module.explain(jitted)
    assert jit_module.stats(jitted)["native_entries"] > 0


# --- loops left to CPython: a loop holding a construct the front end refuses runs plain, its nested loops compile -

PLAIN_LOOPS_SOURCE = """
def parse_rows(rows):
    total = 0.0
    bad = 0
    for row in rows:
        try:
            weight = float(row[0])
        except ValueError:
            bad += 1
            continue
        for k in range(1, len(row)):
            total += row[k] * weight
    count = 0
    for i in range(len(rows) * 40):
        count += i % 7
    return total, bad, count


class Log:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("in")
        return len(self.log)

    def __exit__(self, *exc):
        self.log.append("out" if exc[0] is None else exc[0].__name__)
        return False


def with_in_loop(n, log):
    total = 0
    for i in range(n):
        with Log(log) as depth:
            total += depth
        if i % 2:
            for j in range(30):
                total += (i * j) % 5
        else:
            while total % 3:
                total += 1
    return total


def returns_inside(rows, wanted):
    seen = 0
    for row in rows:
        try:
            seen += len(row)
        finally:
            seen += 1
        for x in row:
            if x == wanted:
                return ("found", x, seen)
    return ("missing", seen)


def else_clauses(rows):
    out = 0
    for row in rows:
        try:
            out += row[0]
        except IndexError:
            out -= 1
        for x in row:
            if x < 0:
                break
            out += x
        else:
            continue
        out *= 2
        if out > 10**6:
            break
    else:
        out += 7
    return out


def raises_inside(rows, d):
    total = 0
    for row in rows:
        try:
            d = int(d)
        except TypeError:
            d = 1
        for x in row:
            total += 1000 // (x - d)
    return total


def three_levels(n):
    total = 0
    for i in range(n):
        class Scale:  # (a class definition: the loop is left to CPython)
            factor = 3

        for j in range(20):
            for k in range(8):
                total += ((i ^ j) + k) * Scale.factor % 11
    return total


"""

PLAIN_LOOPS_CASES = {
    "parse_rows": [Args([["2", *range(40)], ["x", 1, 2], ["0.5", *range(60)]] * 20), Args([])],
    "with_in_loop": [Args(40, []), Args(0, [])],
    "returns_inside": [Args([list(range(40))] * 30 + [[1, 77, 3]], 77), Args([list(range(40))] * 20, 99)],
    "else_clauses": [
        Args([list(range(30))] * 20),
        Args([list(range(30))] * 20 + [[3, -1, 5]] + [list(range(30))] * 5),
        Args([[]] * 3 + [list(range(50))] * 30),
    ],
    "raises_inside": [Args([list(range(2, 40))] * 10, "1"), Args([list(range(5, 40))] * 10 + [[9, 1]], None)],
    "three_levels": [Args(30), Args(0)],
}


def compiled_like_cpython(source, name, calls):
    """Function `name` of source under @jit: every call's outcome as CPython's, three times; its state (partial
    tier-1 code) and jit.explain's report, after checking that loops ran natively."""
    func = define(source, name, {})
    jitted = jit(**OPTIONS)(func)
    for call in calls:
        plain = outcome(func, call)
        for attempt in range(3):
            assert_same_outcome(plain, outcome(jitted, call), f"{name}{call!r} (run {attempt + 1})")
    state = state_of(jitted)
    report = jit_module.explain(jitted)
    assert state.mode == "tier1" and state.code is not None, report
    stats = jit_module.stats(jitted)
    assert stats["native_entries"] > 0 and stats["native_iterations"] > 0, (stats["aborts"], report)
    return state, report


@pytest.mark.parametrize("name", sorted(PLAIN_LOOPS_CASES))
def test_a_loop_left_to_cpython_keeps_its_nested_loops_compiled(name):
    state, report = compiled_like_cpython(PLAIN_LOOPS_SOURCE, name, PLAIN_LOOPS_CASES[name])
    plain_loops = [entry for entry in state.code.cpython_only if entry[2] != "outside every loop"]
    assert plain_loops, report
    for line, reason, how in plain_loops:
        assert f"line {line}: left to CPython ({how}): {reason}" in report, report
        assert how.startswith("the loop at line ")
    assert state.monitor is not None and not any(s is not None and s.blacklisted for s in state.monitor.loops)


def test_the_loops_left_to_cpython_are_the_ones_holding_the_construct():
    """parse_rows: the loop holding the try runs plain; its nested loop and the loop after it are tier-1 loops,
    each handed over on its own (no parent)."""
    func = define(PLAIN_LOOPS_SOURCE, "parse_rows", {})
    jitted = jit(**OPTIONS)(func)
    jitted([])
    code = state_of(jitted).code
    first = func.__code__.co_firstlineno
    assert [(loop.line - first, loop.parent) for loop in code.loops if loop.statement] == [(9, None), (12, None)]
    left = [(line - first, reason, how) for line, reason, how in code.cpython_only]
    assert left == [(4, "try/except/finally", f"the loop at line {first + 3} runs as plain CPython")]


def test_an_exception_from_a_nested_loop_shows_its_line_through_the_loop_left_to_cpython():
    import traceback

    func = define(PLAIN_LOOPS_SOURCE, "raises_inside", {})
    jitted = jit(**OPTIONS)(func)
    rows = [list(range(5, 40))] * 10 + [[9, 1]]
    for f in (func, jitted, jitted):
        with pytest.raises(ZeroDivisionError) as info:
            f(rows, None)
        frames = traceback.extract_tb(info.value.__traceback__)
        assert (frames[-1].name, frames[-1].lineno - func.__code__.co_firstlineno) == ("raises_inside", 8)
    assert jit_module.stats(jitted)["native_entries"] > 0


# --- loops inside a try or a with: the statement left to CPython, its loops compiled -------------------------

AROUND_SOURCE = """
class Ctx:
    def __init__(self, log, swallow=False):
        self.log = log
        self.swallow = swallow

    def __enter__(self):
        self.log.append("in")
        return 3

    def __exit__(self, *exc):
        self.log.append("out" if exc[0] is None else exc[0].__name__)
        return self.swallow


def guarded(n, k):
    total = 0
    i = -1
    try:
        for i in range(n):
            total += 100 // (k - i)
    except ZeroDivisionError:
        total = -total
    finally:
        total += 1
    return total, i


def within(n, log, swallow):
    total = 0
    with Ctx(log, swallow) as c:
        for i in range(n):
            total += (i * c) % 7
        for i in range(n):
            total += 1000 // (n // 2 - i)
    return total, i


def stopped(n, stop):
    best = 0
    try:
        for i in range(n):
            best = max(best, (i * 7919) % 1009)
            if i == stop:
                raise KeyboardInterrupt
    except KeyboardInterrupt:
        return ("stopped", best, i)
    return best


def handler_loops(rows):
    total = 0
    for row in rows:
        try:
            total += 1000 // row[0]
        except ZeroDivisionError:
            for x in row:
                total -= x
        else:
            for x in row:
                total += x * x
        finally:
            for j in range(3):
                total ^= j
    return total


def unbound_after(n, k):
    try:
        for i in range(n):
            late = i * 2
            if i == k:
                del late
                total = late + 1
            total = i
    except UnboundLocalError:
        pass
    # (each local as the handler's frame has it, unbound ones named so; not with locals(), which keeps the
    # function plain: _frame_builtin)
    seen = []
    try:
        seen.append(i)
    except UnboundLocalError:
        seen.append("i unbound")
    try:
        seen.append(late)
    except UnboundLocalError:
        seen.append("late unbound")
    try:
        seen.append(total)
    except UnboundLocalError:
        seen.append("total unbound")
    return seen
"""

AROUND_CASES = {
    "guarded": [Args(300, 1000), Args(300, 150), Args(300, 2), Args(0, 5)],
    "within": [Args(300, [], False), Args(300, [], True), Args(0, [], True)],
    "stopped": [Args(500, 10**6), Args(500, 400), Args(3, 1)],
    "handler_loops": [Args([[3, *range(30)], [0, *range(40)], [7, 1, 2]] * 20)],
    "unbound_after": [Args(300, 1000), Args(300, 150), Args(300, 0), Args(300, 299)],
}


@pytest.mark.parametrize("name", sorted(AROUND_CASES))
def test_loops_inside_a_try_or_a_with_compile(name):
    """The try (or with) runs in CPython; its loops (in its body, handlers, else and finally blocks) are handed
    over. An exception a handed-over loop raises reaches the user's handler (or __exit__) with the function's
    locals as CPython would have them where it was raised: the hand-off writes them back before re-raising,
    unbound ones deleted (``unbound_after``: `del late` in the loop, then the UnboundLocalError of reading it)."""
    state, report = compiled_like_cpython(AROUND_SOURCE, name, AROUND_CASES[name])
    assert any(reason in ("try/except/finally", "with statement") for _, reason, _ in state.code.cpython_only), report


# --- generator functions: the loops that do not yield compile, the ones that do run as plain CPython ------------

GENERATOR_SOURCE = """
def primes_upto(n):
    sieve = [True] * (n + 1)
    for i in range(2, n + 1):
        if sieve[i]:
            for k in range(i * i, n + 1, i):
                sieve[k] = False
    for i in range(2, n + 1):
        if sieve[i]:
            yield i
    return "sieved"


def totals(rows, fail):
    for row in rows:
        acc = 0
        for k in range(len(row)):
            acc += 1000 // (fail - row[k])
        got = yield acc
        if got is not None:
            return got


def early_return(n, limit):
    t = 0
    for i in range(n):
        t += i
        if t > limit:
            return t
    yield t
"""


def drain(gen, sends=()):
    """Everything gen gives: its values (sending sends in turn after the first), then its return value or the
    exception it raised (type and message)."""
    out = []
    sends = list(sends)
    try:
        out.append(next(gen))
        while True:
            out.append(gen.send(sends.pop(0)) if sends else next(gen))
    except StopIteration as stop:
        out.append(("returned", stop.value))
    except Exception as exc:  # noqa: BLE001 (the outcome compared)
        out.append((type(exc).__name__, str(exc)))
    return out


GENERATOR_CASES = {
    "primes_upto": [((3000,), ()), ((1,), ())],
    "totals": [
        (([list(range(40))] * 30, 1000), ()),
        (([list(range(40))] * 30, 20), ()),
        (([[1, 2]] * 5, 9), (None, 7)),
    ],
    "early_return": [((300, 10**9), ()), ((300, 5000), ()), ((0, 1), ())],
}


@pytest.mark.parametrize("name", sorted(GENERATOR_CASES))
def test_a_generator_functions_loops_compile_where_they_do_not_yield(name):
    """The instrumented copy of a generator function is a generator function: CPython runs it, suspends it at
    each yield (in statements and loops left to CPython), and hands over the loops that do not yield, each of
    which runs to its end (or its return, the generator's StopIteration value, or its exception) within one
    resumption. inspect sees a generator function before the first call too (the front end runs when the
    function is decorated: a trampoline would not be a generator's code)."""
    func = define(GENERATOR_SOURCE, name, {})
    jitted = jit(**OPTIONS)(func)
    assert inspect.isgeneratorfunction(jitted)
    for args, sends in GENERATOR_CASES[name]:
        for attempt in range(3):
            assert drain(jitted(*args), sends) == drain(func(*args), sends), f"{name}{args} (run {attempt + 1})"
    state = state_of(jitted)
    assert state.mode == "tier1" and state.code is not None, jit_module.explain(jitted)
    assert jit_module.stats(jitted)["native_entries"] > 0
    report = jit_module.explain(jitted)
    assert "CPython runs it and hands hot loops to the JIT" in report, report
    if name != "early_return":  # (its yield is outside every loop)
        assert "runs as plain CPython): yield" in report, report


def test_a_generators_exception_shows_the_raising_line():
    func = define(GENERATOR_SOURCE, "totals", {})
    jitted = jit(**OPTIONS)(func)
    lines = []
    for f in (func, jitted, jitted, jitted):
        with pytest.raises(ZeroDivisionError) as caught:
            list(f([list(range(40))] * 30, 20))
        lines.append(caught.traceback[-1].lineno)
    assert len(set(lines)) == 1, lines
    assert jit_module.stats(jitted)["native_entries"] > 0  # (the loop raised where it ran natively)


@pytest.mark.parametrize("options", [{"strict": True}, {"interpreter": True}])
def test_a_generator_function_under_strict_or_the_interpreter_stays_refused(options):
    func = define(GENERATOR_SOURCE, "primes_upto", {})
    if options.get("strict"):
        with pytest.raises(jit_module.UnsupportedFunctionError):
            list(jit(**options)(func)(50))
        return
    jitted = jit(**options)(func)
    assert list(jitted(50)) == list(func(50))
    assert state_of(jitted).mode == "plain"
    assert "generator function (yield)" in jit_module.explain(jitted)


# --- methods using super(): the statements using it are left to CPython, which has the class cell -------------

SUPER_SOURCE = """
class Base:
    def __init__(self, scale):
        self.scale = scale

    def weight(self, i):
        return i % 3


class Child(Base):
    def __init__(self, scale, n):
        super().__init__(scale)
        self.table = []
        for i in range(n):
            self.table.append(i * scale % 17)

    def total(self, n):
        t = super().weight(n)
        for i in range(n):
            t += self.table[i % len(self.table)] * i
        return t, __class__.__name__

    def weights(self, n):
        t = 0
        for i in range(n):
            t += super().weight(i)
        return t
"""


def test_a_method_using_super_keeps_its_loops_native():
    """A method whose code uses super() or __class__ has one free variable, the class cell: the front end leaves
    the statements using them to CPython, which runs them in the instrumented copy of the method, compiled inside
    a class of the method's class's name and so with its own class cell, which the method's closure fills (the
    front end runs when the method is decorated: a trampoline's code could not take over a closure). `super().name`
    itself compiles (``LOAD_SUPER_ATTR``): a loop using it is native too."""
    plain = define(SUPER_SOURCE, "Child", {})
    jitted_ns: dict = {}
    define(SUPER_SOURCE, "Child", jitted_ns)
    child = jitted_ns["Child"]
    child.__init__ = jit(**OPTIONS)(child.__init__)
    child.total = jit(**OPTIONS)(child.total)
    child.weights = jit(**OPTIONS)(child.weights)
    for attempt in range(3):
        a, b = plain(3, 300), child(3, 300)
        assert a.table == b.table, attempt
        assert a.total(500) == b.total(500), attempt
        assert a.weights(200) == b.weights(200), attempt
    for method in (child.__init__, child.total):
        assert state_of(method).mode == "tier1", jit_module.explain(method)
        assert jit_module.stats(method)["native_entries"] > 0, jit_module.explain(method)
    assert "left to CPython" not in jit_module.explain(child.__init__)  # (`super().__init__(scale)` compiles)
    assert "left to CPython (outside every loop): super() or __class__" in jit_module.explain(child.total)
    report = jit_module.explain(child.weights)
    assert jit_module.stats(child.weights)["native_entries"] > 0, report
    assert "with the calls of Base.weight inlined" in report, report
