"""The public API: ``@jit`` forms and options, what the result looks like (name, signature, pickling, methods),
argument binding, ``JIT_DISABLE``, threads and tracebacks."""

import inspect
import os
import pickle
import re
import subprocess
import sys
import textwrap
import threading
import traceback
from pathlib import Path

import pytest
from helpers import Args, check, define

from jit import jit
from jit.api import state_of
from jit.options import Options

ROOT = Path(__file__).resolve().parents[2]


def kernel(n, scale=2, *, offset=0):
    """Sum of scaled squares."""
    total = 0
    for i in range(n):
        total += i * i * scale
    return total + offset


kernel.custom_attribute = "kept"

jitted_kernel = jit(kernel)


@jit
def module_level_jitted(n):
    return n * 3


@jit(threshold=5, opt_level=1)
def module_level_with_options(n):
    t = 0
    for i in range(n):
        t += i
    return t


@jit
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


@jit
def mutual_even(n):
    return True if n == 0 else mutual_odd(n - 1)


@jit
def mutual_odd(n):
    return False if n == 0 else mutual_even(n - 1)


# --- decorator forms and options ----------------------------------------------------------------------------


def test_bare_decorator():
    assert module_level_jitted(4) == 12
    assert state_of(module_level_jitted).options == Options()


def test_decorator_with_options():
    assert module_level_with_options(12) == 66
    opts = state_of(module_level_with_options).options
    assert opts.threshold == 5 and opts.opt_level == 1
    assert opts.side_exit_threshold == Options().side_exit_threshold


def test_empty_parentheses():
    f = jit()(kernel)
    assert f(3) == kernel(3)
    assert state_of(f).options == Options()


def test_function_and_options_together():
    f = jit(kernel, threshold=0)
    assert f(12) == kernel(12)
    assert state_of(f).options.threshold == 0


@pytest.mark.parametrize(
    "options, error, words",
    [
        ({"threshhold": 3}, TypeError, ["unknown jit option", "'threshhold'", "threshold"]),
        ({"a": 1, "b": 2}, TypeError, ["'a'", "'b'"]),
        ({"threshold": -1}, ValueError, ["threshold", ">= 0", "-1"]),
        ({"threshold": 1.5}, TypeError, ["threshold", "int", "float"]),
        ({"threshold": "3"}, TypeError, ["threshold", "int", "str"]),
        ({"threshold": True}, TypeError, ["threshold", "int", "bool"]),
        ({"nesting": 1}, TypeError, ["nesting", "bool", "int"]),
        ({"opt_level": 4}, ValueError, ["opt_level", "0 and 3", "4"]),
        ({"max_trace_length": 3}, ValueError, ["max_trace_length", "8"]),
        ({"side_exit_threshold": None}, TypeError, ["side_exit_threshold", "NoneType"]),
    ],
)
def test_bad_options(options, error, words):
    with pytest.raises(error) as info:
        jit(**options)
    message = str(info.value)
    for word in words:
        assert word in message, message
    # the same error with the function given directly
    with pytest.raises(error):
        jit(kernel, **options)


@pytest.mark.parametrize(
    "misuse, given",
    [
        (lambda: jit(threshold=1)(kernel, 2), "(<function kernel at"),
        (lambda: jit(threshold=1)(), "()"),
        (lambda: jit(threshold=1)(func=kernel), "(func=<function kernel at"),
    ],
    ids=["two-arguments", "no-argument", "keyword"],
)
def test_decorator_misuse_names_jit(misuse, given):
    with pytest.raises(TypeError) as info:
        misuse()
    message = str(info.value)
    assert message.startswith("jit(threshold=1) is a decorator: apply it to one function, not to " + given), message
    assert "lambda" not in message and "<locals>" not in message


def test_option_strict_is_a_bool():
    assert Options().strict is False
    assert state_of(jit(strict=True)(kernel)).options.strict is True
    with pytest.raises(TypeError, match="strict"):
        jit(strict=1)


class CallableObject:
    def __call__(self):
        return 1


@pytest.mark.parametrize(
    "value, words",
    [
        (42, ["jit() expects a Python function", "'int'"]),
        ("f", ["'str'"]),
        (None.__class__, ["'type'"]),
        (print, ["'builtin_function_or_method'", "builtins"]),
        (len, ["'builtin_function_or_method'"]),
        (int, ["'type'", "classes"]),
        (CallableObject(), ["'CallableObject'"]),
        (pickle.dumps, ["builtin"]),
    ],
    ids=repr,
)
def test_jit_rejects_non_functions(value, words):
    with pytest.raises(TypeError) as info:
        jit(value)
    for word in words:
        assert word in str(info.value), str(info.value)


def test_jit_twice_wraps_the_original():
    once = jit(kernel)
    twice = jit(once)
    assert twice.py_func is kernel
    assert twice.__wrapped__ is kernel
    assert twice(5) == kernel(5)


# --- what the result looks like -----------------------------------------------------------------------------


def test_metadata_kept():
    f = jitted_kernel
    assert f.__name__ == "kernel"
    assert f.__qualname__ == "kernel"
    assert f.__module__ == __name__
    assert f.__doc__ == "Sum of scaled squares."
    assert f.__wrapped__ is kernel
    assert f.py_func is kernel
    assert f.__defaults__ == (2,)
    assert f.__kwdefaults__ == {"offset": 0}
    assert f.custom_attribute == "kept"
    assert f.__code__.co_name == "kernel"
    assert f is not kernel


def test_qualname_of_nested_and_method():
    assert jit(Point.moved).__qualname__ == "Point.moved"
    assert jit(Point.moved).__code__.co_qualname == "Point.moved"


def sig_plain(a, b):
    return a, b


def sig_defaults(a, b=1, c=None):
    return a, b, c


def sig_posonly(a, b=2, /, c=3, *, d, e=5):
    return a, b, c, d, e


def sig_kwonly(*, x, y=10):
    return x * y


def sig_annotated(a: int, b: "list[int]" = None) -> float:  # noqa: RUF013
    return float(a)


def sig_varargs(a, *rest, k=1, **named):
    return a, rest, k, sorted(named.items())


def sig_only_kwargs(**named):
    return sorted(named)


def sig_no_params():
    return 7


def sig_reserved_looking_names(exc, binder, make, target, BaseException=None):  # noqa: N803
    return exc, binder, make, target, BaseException


SIGNATURE_FUNCS = [
    sig_plain,
    sig_defaults,
    sig_posonly,
    sig_kwonly,
    sig_annotated,
    sig_varargs,
    sig_only_kwargs,
    sig_no_params,
    sig_reserved_looking_names,
    kernel,
]


@pytest.mark.parametrize("func", SIGNATURE_FUNCS, ids=lambda f: f.__name__)
def test_signature(func):
    f = jit(func)
    assert inspect.signature(f) == inspect.signature(func)
    # also without following __wrapped__: the generated function itself has the signature
    assert inspect.signature(f, follow_wrapped=False) == inspect.signature(func)


@pytest.mark.parametrize(
    "func, calls",
    [
        (sig_plain, [(1, 2), Args(b=1, a=2), Args(1), Args(), (1, 2, 3), Args(1, 2, c=3), Args(1, a=1)]),
        (sig_defaults, [Args(1), Args(1, c=3), Args(c=1), Args(1, 2, 3, 4)]),
        (
            sig_posonly,
            [Args(1, d=4), Args(1, 2, 3, d=4, e=6), Args(a=1, d=4), Args(1, b=2, d=4), Args(1), Args(1, 2, 3, 4)],
        ),
        (sig_kwonly, [Args(x=2), Args(x=2, y=3), Args(2), Args(), Args(x=1, z=1)]),
        (sig_varargs, [Args(1), Args(1, 2, 3, k=4, z=5), Args(), Args(a=1, k=2), Args(1, a=2)]),
        (sig_only_kwargs, [Args(), Args(a=1, b=2), Args(1)]),
        (sig_no_params, [Args(), Args(1), Args(x=1)]),
        (
            sig_reserved_looking_names,
            [(1, 2, 3, 4), (1, 2, 3, 4, 5), Args(1, 2, 3, target=4, BaseException=ValueError)],
        ),
        (kernel, [Args(3), Args(3, 4, offset=1), Args(n=3, scale=1), Args(3, offset=1, other=2), Args(1, 2, 3)]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_argument_binding_matches_cpython(func, calls):
    # outcomes, including TypeError messages of bad calls, must be CPython's exactly
    check(func, *calls)


def params_shadowing_wrapper_names(BaseException, exc=None, binder=0, make=0):  # noqa: N803
    return 1 // binder


@pytest.mark.parametrize("call", [Args(None), Args(1, exc=2, binder=1), Args(ValueError, make=1)], ids=repr)
def test_parameters_named_like_wrapper_internals(call):
    # the generated wrapper must not depend on names a parameter can shadow (here: an exception passes through)
    check(params_shadowing_wrapper_names, call)


def test_any_parameter_name_works():
    # the generated code refers to tracejit's objects as constants, never by a name a parameter could take
    func = define("def f(__tracejit_target, _tj_it0, RT, iter):\n    return __tracejit_target + _tj_it0\n", "f")
    check(func, (1, 2, 3, 4))


class Point:
    def __init__(self, x):
        self.x = x

    def moved(self, dx, *, times=1):
        for _ in range(times):
            self.x += dx
        return self.x


class Shapes:
    factor = 3

    @jit
    def area(self, w, h):
        return w * h * self.factor

    @staticmethod
    @jit
    def static_inner(a, b=1):
        return a - b

    @jit
    @staticmethod
    def static_outer(a, b=1):
        return a - b * 2

    @classmethod
    @jit
    def class_inner(cls, n):
        return cls.factor * n

    @jit
    @classmethod
    def class_outer(cls, n):
        return cls.factor + n

    @jit
    def __private(self, n):
        t = 0
        for i in range(n):
            t += i * self.factor
        return t

    def call_private(self, n):
        return self.__private(n)


class MoreShapes(Shapes):
    factor = 10


def test_methods():
    s = Shapes()
    assert s.area(2, 5) == 30
    assert Shapes.area(s, 2, 5) == 30
    assert s.static_inner(5) == Shapes.static_inner(5, 1) == 4
    assert s.static_outer(5) == 3 and Shapes.static_outer(5, b=2) == 1
    assert s.class_inner(2) == 6 and MoreShapes.class_inner(2) == 20
    assert s.class_outer(2) == 5 and MoreShapes().class_outer(2) == 12
    assert s.call_private(12) == 3 * 66
    state = state_of(Shapes.__dict__["area"])
    state.ensure_prepared()  # (no loop: CPython runs it, and the front end runs only when asked)
    assert state.mode == "tier1"


class JitCountdown:
    @jit
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return self

    @jit
    def __next__(self):
        if self.n <= 0:
            raise StopIteration
        self.n -= 1
        return self.n

    @jit
    def __getitem__(self, key):
        return [key, self.n][key]

    @jit
    def __eq__(self, other):
        return isinstance(other, JitCountdown) and other.n == self.n

    __hash__ = None


def test_dunder_methods():
    assert list(JitCountdown(12)) == list(range(11, -1, -1))
    c = JitCountdown(3)
    assert c[0] == 0 and c[1] == 3
    with pytest.raises(IndexError, match="list index out of range"):
        c[2]
    assert c == JitCountdown(3) and c != JitCountdown(4) and c != 3
    assert [x for x in JitCountdown(2)] == [1, 0]


def test_method_binding_errors():
    s = Shapes()
    with pytest.raises(TypeError) as jitted:
        s.area(1)
    with pytest.raises(TypeError) as plain:
        Shapes.area.py_func(s, 1)
    assert str(jitted.value) == str(plain.value)
    assert "Shapes.area()" in str(jitted.value)


def test_method_jitted_after_class_creation():
    m = jit(Point.moved)
    p = Point(1)
    assert m(p, 2, times=12) == 25
    assert p.x == 25
    with pytest.raises(TypeError) as jitted:
        m(p, 1, 2)
    with pytest.raises(TypeError) as plain:
        Point.moved(p, 1, 2)
    assert str(jitted.value) == str(plain.value)


def test_recursion():
    assert fib(15) == 610
    state_of(fib).ensure_prepared()
    assert state_of(fib).mode == "tier1"
    assert mutual_even(30) is True and mutual_odd(31) is True


def test_deep_recursion_raises_recursion_error():
    @jit
    def down(n):
        return 0 if n == 0 else 1 + down(n - 1)

    assert down(50) == 50
    with pytest.raises(RecursionError):
        down(10**6)


@jit
def count_subsets(items, start, target):
    # recursion from inside a loop: every call has its own loop state
    count = 0
    for j in range(start, len(items)):
        if items[j] == target:
            count += 1
        count += count_subsets(items, j + 1, target - items[j])
    return count


def count_subsets_plain(items, start, target):
    count = 0
    for j in range(start, len(items)):
        if items[j] == target:
            count += 1
        count += count_subsets_plain(items, j + 1, target - items[j])
    return count


@pytest.mark.parametrize("target", [0, 5, 10, 15])
def test_recursion_from_inside_loops(target):
    items = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    assert count_subsets(items, 0, target) == count_subsets_plain(items, 0, target)


@jit
def countdown_recursive(n):
    return 0 if n == 0 else 1 + countdown_recursive(n - 1)


def test_recursion_depth_like_cpython():
    assert countdown_recursive(sys.getrecursionlimit() // 2) == sys.getrecursionlimit() // 2


def countdown_plain(n):
    return 0 if n == 0 else 1 + countdown_plain(n - 1)


def test_recursion_depth_of_plain_cpython():
    # the depth the test above asks of the jitted function is fine for plain CPython
    assert countdown_plain(sys.getrecursionlimit() // 2) == sys.getrecursionlimit() // 2


# --- pickling -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("obj", [module_level_jitted, module_level_with_options, fib])
def test_pickles_by_reference(obj):
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        data = pickle.dumps(obj, protocol)
        assert obj.__name__.encode() in data
        assert len(data) < 200  # a reference, not the code
        assert pickle.loads(data) is obj


def test_pickle_like_plain_function_when_not_the_module_attribute():
    # jit(kernel) stored under another name: like any function, it cannot be found by its qualified name
    with pytest.raises(pickle.PicklingError):
        pickle.dumps(jitted_kernel)


def test_pickle_method():
    s = Shapes()
    bound = pickle.loads(pickle.dumps(s.area))
    assert bound(1, 2) == 6
    assert pickle.loads(pickle.dumps(Shapes.static_inner)) is Shapes.static_inner


# --- JIT_DISABLE ---------------------------------------------------------------------------------------------

DISABLE_SCRIPT = """
import sys
from jit import jit
from jit.api import state_of


@jit
def f(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


@jit
def g(x):
    return [x] * 2 + [10 // x]


results = [f(0), f(12), g(3)]
try:
    g(0)
except ZeroDivisionError as exc:
    results.append(str(exc))
print(repr(results))
print(state_of(f).mode)
print(jit.explain(f))
"""


def _run_script(tmp_path, source, env_extra):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(source))
    env = {k: v for k, v in os.environ.items() if k != "JIT_DISABLE"}
    env.update(env_extra)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_jit_disable_environment(tmp_path):
    disabled = _run_script(tmp_path, DISABLE_SCRIPT, {"JIT_DISABLE": "1"})
    enabled = _run_script(tmp_path, DISABLE_SCRIPT, {})
    expected = repr([0, 506, [3, 3, 3], "integer division or modulo by zero"])
    assert disabled[0] == enabled[0] == expected
    assert disabled[1] == "disabled"
    assert enabled[1] == "tier1"
    assert "JIT_DISABLE" in "\n".join(disabled[2:])
    assert "JIT_DISABLE" not in "\n".join(enabled[2:])


# --- threads -------------------------------------------------------------------------------------------------


def threaded_work(seed, n):
    acc = seed
    out = []
    for i in range(n):
        acc = (acc * 31 + i) % 1000003
        if acc % 7 == 0:
            out.append(acc)
    return acc, len(out)


def test_threads_share_a_jitted_function():
    f = jit(threaded_work)
    seeds = list(range(16))
    expected = {s: threaded_work(s, 2000) for s in seeds}
    results = {}
    errors = []
    barrier = threading.Barrier(8)

    def worker(my_seeds):
        try:
            barrier.wait()
            for s in my_seeds:
                results[s] = f(s, 2000)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(seeds[i::8],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results == expected
    assert state_of(f).mode == "tier1"


def test_threads_first_call_race():
    # many threads make the very first call at once: the front end runs once, and every call is right
    f = jit(threaded_work)
    barrier = threading.Barrier(8)
    results = []

    def worker(seed):
        barrier.wait()
        results.append((seed, f(seed, 300)))

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [(s, threaded_work(s, 300)) for s in range(8)]


# --- tracebacks ----------------------------------------------------------------------------------------------


def fails_in_body(n):
    total = 0
    for i in range(n):
        total += 10 // (5 - i)
    return total


def calls_failing_helper(x):
    y = x + 1
    return helper_that_fails(y)


def helper_that_fails(y):
    return {}[y]


def fails_on_raise(kind):
    if kind:
        raise ValueError(f"kind {kind}")
    return kind


def fails_in_comprehension(n):
    return [10 // (3 - i) for i in range(n)]


def fails_binding(a, b):
    return a + b


def _frames(func, *args):
    with pytest.raises(Exception) as info:
        func(*args)
    return traceback.extract_tb(info.value.__traceback__), info.value


def _user_frames(frames):
    """Frames of real files or test sources (not the generated wrapper, whose file name is <tracejit ...>)."""
    return [(f.filename, f.name, f.lineno, f.line) for f in frames if not f.filename.startswith("<tracejit ")]


@pytest.mark.parametrize(
    "func, args",
    [
        (fails_in_body, (12,)),
        (calls_failing_helper, (1,)),
        (fails_on_raise, (3,)),
        (fails_on_raise, ("x",)),
        (fails_binding, (1, "s")),
    ],
    ids=lambda v: getattr(v, "__name__", repr(v)),
)
def test_traceback_shows_user_frames(func, args):
    plain_frames, plain_exc = _frames(func, *args)
    jit_frames, jit_exc = _frames(jit(func), *args)
    assert type(jit_exc) is type(plain_exc) and str(jit_exc) == str(plain_exc)
    # the frames from the failing function down are CPython's: same file, function name, line and source text
    assert _user_frames(jit_frames) == _user_frames(plain_frames)
    innermost = jit_frames[-1]
    assert innermost.filename == plain_frames[-1].filename
    assert innermost.lineno == plain_frames[-1].lineno
    for frame in jit_frames:
        assert "runtime" not in Path(frame.filename).parts, frame
        assert not frame.filename.endswith(("interpreter.py", "function.py", "errors.py")), frame


def test_traceback_points_into_the_function():
    frames, _ = _frames(jit(fails_in_body), 12)
    last = frames[-1]
    assert last.filename == __file__
    assert last.name == "fails_in_body"
    assert last.line == "total += 10 // (5 - i)"
    assert last.lineno == fails_in_body.__code__.co_firstlineno + 3


def test_traceback_of_comprehension_error_points_at_its_line():
    frames, _ = _frames(jit(fails_in_comprehension, interpreter=True), 5)
    # (the function's frame, then the comprehension's where CPython makes one: 3.11; as CPython's)
    expected, _ = _frames(fails_in_comprehension, 5)
    assert [(f.name, f.lineno) for f in frames[-len(expected) + 1 :]] == [(f.name, f.lineno) for f in expected[1:]]
    last = frames[-1]
    assert last.filename == __file__ and last.name == expected[-1].name
    assert last.lineno == fails_in_comprehension.__code__.co_firstlineno + 1
    assert all("runtime" not in Path(f.filename).parts for f in frames)


def test_traceback_format_has_source_line():
    with pytest.raises(ZeroDivisionError) as info:
        jit(fails_in_body)(12)
    text = "".join(traceback.format_exception(info.value))
    assert f'File "{__file__}", line {fails_in_body.__code__.co_firstlineno + 3}, in fails_in_body' in text
    assert "total += 10 // (5 - i)" in text
    assert "interpreter.py" not in text


# --- deep recursion: a traceback as short as CPython's ----------------------------------------------------------

RECURSION_SCRIPT = """
import sys

from jit import jit


def countdown(n):
    return 0 if n == 0 else countdown(n - 1) + 1


def with_loop(n):
    total = 0
    for i in range(3):
        total += i
    return total if n == 0 else with_loop(n - 1) + total


def with_try(n):  # runs as plain CPython under @jit (try/finally)
    try:
        pass
    finally:
        pass
    return 0 if n == 0 else with_try(n - 1) + 1


which, jitted = sys.argv[1], sys.argv[2] == "jit"
if jitted:
    globals()[which] = jit(threshold=2)(globals()[which])
    globals()[which](5)  # compile its loop, if any
globals()[which](10**6)
"""


@pytest.mark.parametrize("which", ["countdown", "with_loop", "with_try"])
def test_recursion_error_traceback_is_as_short_as_cpythons(tmp_path, which):
    script = tmp_path / "recursion.py"
    script.write_text(textwrap.dedent(RECURSION_SCRIPT))
    env = {k: v for k, v in os.environ.items() if k not in ("JIT_DISABLE", "JIT_DUMP", "TRACEJIT_DEBUG")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    outputs = {}
    for mode in ("plain", "jit"):
        proc = subprocess.run(
            [sys.executable, str(script), which, mode], capture_output=True, text=True, env=env, timeout=120
        )
        assert proc.returncode == 1
        last = proc.stderr.rstrip().splitlines()[-1]
        assert last.startswith("RecursionError: maximum recursion depth exceeded"), proc.stderr[-2000:]
        outputs[mode] = proc.stderr
    plain, jitted = outputs["plain"], outputs["jit"]
    assert "During handling" not in jitted, jitted[:3000]
    assert len(jitted.splitlines()) <= len(plain.splitlines()) + 4, jitted
    for part in ("jit", "runtime", "codegen"):
        assert str(ROOT / part) not in jitted, jitted
    assert "<tracejit" not in jitted
    # the user's line, repeated as CPython shows it
    assert re.search(r'File ".*recursion.py", line \d+, in ' + which + r"\n", jitted), jitted
    assert re.search(r"\[Previous line repeated \d+ more times\]", jitted), jitted
