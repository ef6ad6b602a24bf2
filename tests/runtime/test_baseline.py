"""CPython as the baseline tier: the instrumented code hands hot loops to the loop driver and takes them back.

Differential tests of every loop shape entered from CPython at the header or the body start, and left by its
end, break, return, an exception, or given back to CPython (CONTINUE) mid-loop, with the iterator where tier 1
left it; tracebacks as CPython prints them; recursion, warnings' locations, iterators released, cold functions
that never reach the tier-1 interpreter, Ctrl-C in CPython code and in the interpreter, threads.
"""

import gc
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import traceback
import warnings
from collections import Counter

import pytest
from helpers import Args, check, default_sigint, define

import jit as jit_module
from jit import jit
from jit.api import state_of
from jit.frontend.instrument import BREAK, CONTINUE, EXHAUSTED, NEVER, RETURN
from runtime import interpreter
from runtime.loop_driver import CodeHooks, LoopRuntime

HOW = {CONTINUE: "continue", EXHAUSTED: "exhausted", BREAK: "break", RETURN: "return"}


@pytest.fixture
def handoffs(monkeypatch):
    """Every hand-off's (loop index, where it entered, how it came back: a name, or the exception type)."""
    seen = []
    original = LoopRuntime.loop

    def spy(self, index, at_body, it, iterable, values, whole=False):
        if whole:  # (a comprehension handed over whole: not a loop statement's hand-off)
            return original(self, index, at_body, it, iterable, values, whole)
        where = "body" if at_body else "header"
        try:
            result = original(self, index, at_body, it, iterable, values)
        except BaseException as exc:
            seen.append((index, where, type(exc).__name__))
            raise
        seen.append((index, where, HOW[result[0]]))
        return result

    monkeypatch.setattr(LoopRuntime, "loop", spy)
    return seen


def kinds(seen):
    return Counter(how for _, _, how in seen)


# --- loop shapes, each way out ----------------------------------------------------------------------------

SHAPES = """
def helper(x, *rest):  # (*rest: never inlined, so recordings give up)
    return x

def range_loop(n, stop):
    total = 0
    for i in range(n):
        if i == stop:
            break
        if i == stop + 1000:
            return -i
        total += i * 3
    else:
        total = -total
    return total

def range_negative_step(n, stop):
    seen = []
    for i in range(n, -n - 7, -3):
        if i == stop:
            break
        seen.append(i)
    return seen

def range_big(n, stop):
    total = 0
    for i in range(2**70, 2**70 + 5 * n, 5):
        if i - 2**70 == 5 * stop:
            return total
        total += (i - 2**70) // 5
    return total

def list_loop(n, stop):
    data = list(range(n))
    total = 0
    for x in data:
        if x == stop:
            raise ValueError(x)
        total = total * 3 % 1000003 + x
    return total

def tuple_loop(n, stop):
    total = 0.0
    for x in tuple([float(i) for i in range(n)]):
        if x == stop:
            break
        total += x * 0.5
    return total

def squares(n):
    for i in range(n):
        yield i * i

def generator_loop(n, stop):
    total = 0
    for x in squares(n):
        if x == stop * stop:
            break
        total += x
    return total

def while_loop(n, stop):
    i = 0
    total = 0
    while i < n:
        i += 1
        if i == stop:
            return total
        total += i
    else:
        total += 1000
    return total

def while_true(n, stop):
    i = 0
    while True:
        i += 1
        if i == stop or i >= n:
            break
    return i

def nested(n, stop):
    total = 0
    for i in range(n):
        for j in range(i % 7):
            if i * j == stop:
                break
            total += i ^ j
        else:
            for k in range(2):
                total += k
        while total > 1000:
            total -= 997
    return total

def tuple_targets(n, stop):
    pairs = [(i, (i + 1, i * 2)) for i in range(n)]
    total = 0
    for a, (b, c) in pairs:
        if a == stop:
            break
        total += a + b * c
    return total

def deleted_before_the_loop(n, stop):
    gone = n
    del gone
    total = 0
    for i in range(n):
        total += i
        if i == stop:
            gone = i
    return total, gone if stop < n else -1

def unbound_both_ways(n, stop):
    total = 0
    for i in range(n):
        if i == stop:
            late = i
        if i == stop + 3:
            del late
        total += i
    try_late = 0
    return total, i
"""

NAMES = [
    "range_loop",
    "range_negative_step",
    "range_big",
    "list_loop",
    "tuple_loop",
    "generator_loop",
    "while_loop",
    "while_true",
    "nested",
    "tuple_targets",
    "deleted_before_the_loop",
    "unbound_both_ways",
]

# stop: never, early (before the loop is hot), late (once it runs in tier 1 or natively)
CALLS = [(0, -1), (1, -1), (40, -1), (40, 1), (40, 25), (200, 150), (200, -1)]


@pytest.mark.parametrize("name", NAMES)
def test_loop_shapes_leave_every_way(name, handoffs):
    func = define(SHAPES, name)
    check(func, *CALLS, options={"threshold": 3})
    assert handoffs, "no loop was handed to the JIT"


@pytest.mark.parametrize("name", NAMES)
def test_loop_shapes_given_back_to_cpython(name, handoffs):
    # the loop tests the identity of two unboxed ints: its recording gives up, the driver gives the loop back to
    # CPython (CONTINUE), which goes on from where tier 1 left it, until the loop is blacklisted and runs plain
    nothing = "(n is stop) * 0"
    source = SHAPES.replace("total += ", f"total += {nothing} + ").replace("i += 1", f"i += {nothing} + 1")
    source = source.replace("seen.append(i)", f"seen.append({nothing} + i)")
    source = source.replace("total * 3", f"({nothing} + total) * 3")
    func = define(source, name)
    check(func, *CALLS, options={"threshold": 2, "max_aborts": 3})
    if name not in ("while_true", "unbound_both_ways"):
        assert kinds(handoffs)["continue"] > 0, handoffs


def test_every_way_back_from_the_driver(handoffs):
    func = define(SHAPES, "range_loop")
    jitted = jit(threshold=2)(func)
    for stop in (-1, 30, -970):  # exhausted, break, return (at i == stop + 1000)
        assert jitted(60, stop) == func(60, stop)
    listing = define(SHAPES, "list_loop")
    jitted_list = jit(threshold=2)(listing)
    with pytest.raises(ValueError):
        jitted_list(60, 30)
    assert {"exhausted", "break", "return"} <= set(kinds(handoffs))
    assert jit.stats(jitted)["native_entries"] > 0


def test_counter_persists_however_the_loop_is_left(handoffs):
    # a loop left early many times still gets hot: its count carries over from one execution to the next
    func = define(SHAPES, "range_loop")
    jitted = jit(threshold=10)(func)
    for _ in range(4):
        assert jitted(40, 3) == func(40, 3)  # three iterations, then break
    assert handoffs, "the counted copy forgot its count when the loop was left by break"
    listing = define(SHAPES, "list_loop")
    jitted_list = jit(threshold=10)(listing)
    for _ in range(4):
        with pytest.raises(ValueError):
            jitted_list(40, 3)
    assert any(how == "ValueError" for _, _, how in handoffs)


# --- the iterator after CPython takes the loop back ----------------------------------------------------

POSITIONS = """
def helper(x, *rest):  # (*rest: never inlined, so recordings give up)
    return x

def walk(iterable, log):
    for x in iterable:
        log.append((len(log) is len(log), x)[1])  # (identity of two unboxed ints: the recording gives up)
    return log
"""


def gen(n):
    yield from range(n)


@pytest.mark.parametrize(
    "make",
    [
        lambda: range(100),
        lambda: range(300, -300, -7),
        lambda: range(2**80, 2**80 - 10**6, -(10**4)),
        lambda: list(range(100)),
        lambda: tuple(range(0, 300, 3)),
        lambda: gen(100),
        lambda: iter(list(range(100))),
        lambda: "abcdefghij" * 10,
    ],
    ids=["range", "negative-step", "big-ints", "list", "tuple", "generator", "user-iterator", "str"],
)
def test_iterator_resumes_where_tier1_left_it(make, handoffs):
    func = define(POSITIONS, "walk")
    jitted = jit(threshold=2, max_aborts=8)(func)
    assert jitted(make(), []) == func(make(), [])
    assert kinds(handoffs)["continue"] >= 2


MUTATING = """
def helper(x, *rest):  # (*rest: never inlined, so recordings give up)
    return x

def walk_mutating(n):
    data = list(range(n))
    seen = []
    for x in data:
        seen.append((len(data) is n) * 0 + x)  # (identity of two unboxed ints: the recording gives up)
        if x % 3 == 0 and len(data) < 2 * n:
            data.append(x + 1000)
        if x % 5 == 4:
            del data[0]
    return seen, data
"""


def test_list_mutated_during_the_loop(handoffs):
    check(define(MUTATING, "walk_mutating"), 10, 60, 200, options={"threshold": 2, "max_aborts": 8})
    assert kinds(handoffs)["continue"] >= 2


def test_range_rebound_to_a_function():
    source = """
def range(n):
    return [n, n + 1, n + 2] * 20

def f(n):
    total = 0
    for i in range(n):
        total += i
    return total
"""
    check(define(source, "f"), 0, 5, options={"threshold": 2})


# --- tracebacks ---------------------------------------------------------------------------------------------

FAILING = """
def helper(x):
    if x == 7:
        raise ValueError("seven")
    return x

def fails(n, d):
    total = 0
    for i in range(n):
        total += i * 2
        if i == d:
            total += helper(7)
        total += 10 // (d - i + 3)
    return total

def fails_in_list(n):
    data = [1, 2, 3, "x", 5] * n
    total = 0
    for x in data:
        total = total + x
    return total

def fails_in_while(n):
    i = 0
    while i < n:
        i += 1
        y = [1][i // 50]
    return i

def not_iterable(n, what):
    total = 0
    for i in range(n):
        total += i
    for x in (
        what
    ):
        total += x
    return total

def not_iterable_one_line(n, what):
    total = 0
    for i in range(n):
        total += i
    for x in what: total += x
    return total

def fails_in_nested(n):
    total = 0
    for i in range(n):
        for j in range(10):
            total += (
                j // (i - 40)
            )
    return total
"""


def formatted(func, *args):
    try:
        func(*args)
    except Exception as exc:
        return "".join(traceback.format_exception(exc))
    raise AssertionError("no exception")


@pytest.mark.parametrize(
    "name, args",
    [("fails", (100, 50)), ("fails", (100, 60)), ("fails_in_list", (20,)), ("fails_in_while", (200,))]
    + [("fails_in_nested", (100,)), ("not_iterable", (10, 5)), ("not_iterable_one_line", (10, 5))],
    ids=repr,
)
@pytest.mark.parametrize("threshold", [2, 10, 1000])
def test_traceback_is_cpythons(name, args, threshold, monkeypatch):
    fixed = []
    original = CodeHooks.unwound  # (what a hand-off that raised calls: the locals, then the traceback fixed)
    monkeypatch.setattr(CodeHooks, "unwound", staticmethod(lambda exc: fixed.append(exc) or original(exc)))
    func = define(FAILING, name)
    jitted = jit(threshold=threshold)(func)
    for _ in range(3):  # counted, handed over, native
        assert formatted(jitted, *args) == formatted(func, *args)
    if threshold == 2 and name.startswith("fails") and name != "fails_in_while":  # (others fail in CPython)
        assert fixed, "no exception left a hand-off"


def test_exception_from_a_handoff_frees_the_iterator():
    source = """
CLOSED = []

def closing(n):
    try:
        yield from range(n)
    finally:
        CLOSED.append("closed")

def leaves_by_exception(n):
    for x in closing(n):
        if x == 40:
            raise ValueError(x)
"""
    func = define(source, "leaves_by_exception")
    jitted = jit(threshold=2)(func)
    closed = func.__globals__["CLOSED"]
    for f in (func, jitted):
        closed.clear()
        try:
            f(100)
        except ValueError:
            assert closed == ["closed"]  # closed while unwinding, before the handler runs
    assert jit.stats(jitted)["handoffs"] > 0


def test_recursion_error_is_short_and_unchained():
    source = """
def deep(n):
    total = 0
    for i in range(3):
        total += i
        if i == 1:
            total += deep(n + 1)
    return total
"""
    func = define(source, "deep")
    plain = formatted(func, 0)
    jitted = jit(threshold=2)(func)
    func.__globals__["deep"] = jitted
    for _ in range(2):
        try:
            jitted(0)
        except RecursionError as exc:
            assert exc.__context__ is None and exc.__cause__ is None
            text = "".join(traceback.format_exception(exc))
            assert text.count("\n") < 2 * plain.count("\n")  # CPython prints ~1000 frames as a few lines
            # (where the limit is hit may differ: a hand-off takes a few frames of its own)
            assert text.splitlines()[-1].startswith("RecursionError: maximum recursion depth exceeded")
        else:
            raise AssertionError("no RecursionError")


def test_recursion_depth_like_cpython():
    source = """
def countdown(n):
    s = 0
    for i in range(2):
        s += i
    if n == 0:
        return 0
    return 1 + countdown(n - 1)
"""
    func = define(source, "countdown")
    deepest = _deepest(func)
    jitted = jit(threshold=2)(func)
    func.__globals__["countdown"] = jitted
    # one frame per call, as under plain CPython; a hand-off (each call's loop) needs a few more on top
    assert jitted(deepest - 20) == deepest - 20


def _deepest(func):
    """The largest n for which func(n) recurses without RecursionError (plain CPython, here)."""
    low, high = 0, sys.getrecursionlimit()
    while low < high:
        middle = (low + high + 1) // 2
        try:
            func(middle)
        except RecursionError:
            high = middle - 1
        else:
            low = middle
    return low


# --- what the callee sees ------------------------------------------------------------------------------------

WARNS = """
import warnings

def careful(x):
    warnings.warn("careful", stacklevel=2)
    return x

def warns(n):
    total = 0
    for i in range(n):
        if i == n - 1:
            total += careful(i)
    return total
"""


def _warning_location(func, n):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        func(n)
    return [(w.filename, w.lineno) for w in caught]


def test_warning_location_from_a_cold_loop():
    func = define(WARNS, "warns")
    jitted = jit(threshold=1000)(func)
    assert _warning_location(jitted, 5) == _warning_location(func, 5)
    assert jit.stats(jitted)["handoffs"] == 0


def test_caller_frame_from_a_cold_loop():
    source = """
import sys

def caller_name():
    return sys._getframe(1).f_code.co_name, sys._getframe(1).f_lineno

def f(n):
    out = []
    for i in range(n):
        out.append(caller_name())
    return out
"""
    func = define(source, "f")
    assert jit(threshold=1000)(func)(3) == func(3)


# --- cold functions never reach the tier-1 interpreter -------------------------------------------------------


def test_cold_function_never_enters_the_interpreter(monkeypatch):
    entered = []
    original = interpreter.run
    monkeypatch.setattr(interpreter, "run", lambda *args: entered.append(args) or original(*args))
    source = """
def cold(xs):
    total = 0
    for x in xs:
        total += x
    i = 0
    while i < len(xs):
        i += 1
    return total, i
"""
    func = define(source, "cold")
    jitted = jit(threshold=64)(func)
    for _ in range(10):
        assert jitted([1, 2, 3]) == func([1, 2, 3])
    assert entered == []
    stats = jit.stats(jitted)
    assert stats["handoffs"] == 0 and stats["calls"] == 0 and stats["mode"] == "tier1"
    assert state_of(jitted).monitor is None  # the JIT never even started


def test_function_without_loop_statements_keeps_its_code():
    # (a generator expression no builtin tracejit inlines consumes is a frame of its own: never handed over, unlike
    # a list comprehension, or one that sum consumes: tests/runtime/test_consumer_handoff.py)
    func = define("def f(n):\n    return math.fsum(i * i for i in range(n))\n", "f")
    jitted = jit(threshold=2)(func)
    for _ in range(3):
        assert jitted(50) == func(50)
    assert jitted.__code__ is func.__code__
    assert "no for or while statement, comprehension nor generator expression" in jit.explain(jitted)


def test_threshold_zero_runs_the_functions_own_code():
    func = define(SHAPES, "range_loop")
    jitted = jit(threshold=0)(func)
    assert jitted(100, -1) == func(100, -1)
    assert jitted.__code__ is func.__code__


def test_blacklisted_loop_runs_plain(handoffs):
    source = SHAPES.replace("total += i * 3", "total += ((n is stop) * 0 + i) * 3")  # (not compiled)
    func = define(source, "range_loop")
    jitted = jit(threshold=2, max_aborts=2)(func)
    for _ in range(5):
        assert jitted(100, -1) == func(100, -1)
    runtime = state_of(jitted).loop_runtime
    (counter,) = runtime.counters
    assert counter < 0  # plain, with a back-off before the JIT looks again
    before = len(handoffs)
    for _ in range(3):
        jitted(100, -1)
    assert len(handoffs) == before  # plain loop starts hand nothing over
    assert "runs plain in CPython" in jit.explain(jitted)


def test_plain_for_good_is_not_counted():
    func = define(SHAPES, "range_loop")
    jitted = jit(threshold=2)(func)
    jitted(1, -1)
    runtime = state_of(jitted).loop_runtime
    runtime.counters[0] = NEVER
    for _ in range(3):
        assert jitted(30, -1) == func(30, -1)
    assert runtime.counters[0] == NEVER


# --- threads ---------------------------------------------------------------------------------------------------


def test_threads_share_the_loops_while_one_records(handoffs):
    func = define(SHAPES, "nested")
    jitted = jit(threshold=2)(func)
    errors = []

    def worker(k):
        try:
            for n in range(5 + k, 60, 7):
                assert jitted(n, -1) == func(n, -1)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: mid-recording, mid-hand-off
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
    assert handoffs and jit.stats(jitted)["native_entries"] > 0


# --- Ctrl-C ---------------------------------------------------------------------------------------------------

SPIN = """
import sys
from jit import jit
from jit.api import state_of
from jit.frontend.instrument import NEVER

def helper(x, *rest):  # (*rest: never inlined, so recordings give up)
    return x

@jit(threshold=THRESHOLD, interpreter=INTERPRETER)
def spin(n, out):
    i = 0
    total = 0
    while i < n:
        total += helper(i) & 7
        i += 1
        out[0] = i
    return total

spin(10, [0])
if PLAIN:
    state_of(spin).loop_runtime.counters[0] = NEVER
out = [0]
print("ready", flush=True)
try:
    spin(10**18, out)
except KeyboardInterrupt:
    print("interrupted", out[0], flush=True)
    print("again", spin(100, [0]), flush=True)
    raise
"""


@pytest.mark.parametrize(
    "where, threshold, interpreter, plain",
    [
        ("counted copy", 10**9, False, False),
        ("plain copy", 2, False, True),
        ("tier-1 interpreter", 0, True, False),
    ],
)
def test_ctrl_c(tmp_path, where, threshold, interpreter, plain):
    source = SPIN.replace("THRESHOLD", str(threshold)).replace("INTERPRETER", str(interpreter))
    script = tmp_path / "spin.py"
    script.write_text(textwrap.dedent(source).replace("if PLAIN:", f"if {plain}:"))
    env = {k: v for k, v in os.environ.items() if k not in ("JIT_DISABLE", "JIT_DUMP", "TRACEJIT_DEBUG")}
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=default_sigint,
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode != 0 and proc.returncode != -signal.SIGSEGV, err
    assert err.rstrip().endswith("KeyboardInterrupt"), err
    assert 'spin.py", line' in err and "in spin" in err, err
    assert "runtime" + os.sep not in err and "jit" + os.sep not in err, err  # no tracejit frames
    lines = dict(line.split(" ", 1) for line in out.splitlines())
    assert int(lines["interrupted"]) > 0
    assert int(lines["again"]) == sum(i & 7 for i in range(100))


def test_handoffs_counted_in_stats():
    func = define(SHAPES, "range_loop")
    jitted = jit(threshold=2)(func)
    jitted(100, -1)
    assert jit_module.stats(jitted)["handoffs"] >= 1
    gc.collect()


def test_args_through_the_first_call():
    # the trampoline passes every kind of argument on, once; later calls run the instrumented code directly
    source = """
def f(a, /, b=2, *, c=3):
    total = 0
    for i in range(a):
        total += b * c
    return total
"""
    func = define(source, "f")
    check(func, Args(5), Args(5, 1, c=2), Args(5, b=4), options={"threshold": 2})
