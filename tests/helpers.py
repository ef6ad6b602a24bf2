"""Differential testing: run a function as plain CPython and under @jit, and demand the same outcome.

``check(func, *calls)`` compares, for every call: the return value (type and value, floats by repr, containers
element by element), or the exception (type and message), and the arguments afterwards (mutations).
Each run gets its own deep copy of the arguments.
"""

from __future__ import annotations

import copy
import itertools
import linecache
import math
import signal
import types
from collections.abc import Callable
from typing import Any

import jit as jit_module
from jit import jit, monitor

# loops compile after a couple of iterations, so short test loops exercise the JIT
TEST_OPTIONS: dict[str, Any] = {"threshold": 2, "side_exit_threshold": 2}


class Args:
    """Arguments of one call: ``Args(1, 2, key=3)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args
        self.kwargs = kwargs

    def __repr__(self) -> str:
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"({', '.join(parts)})"


def _as_args(call: Any) -> Args:
    if isinstance(call, Args):
        return call
    if isinstance(call, tuple):
        return Args(*call)
    return Args(call)


def same(a: Any, b: Any) -> bool:
    """Equal in type and value; floats (and complex) compared by repr, so -0.0 and nan count."""
    if type(a) is not type(b):
        return False
    if type(a).__name__ == "ndarray" and type(a).__module__ == "numpy":  # same dtype, shape, bytes, flags
        return (
            a.dtype == b.dtype
            and a.shape == b.shape
            and a.tobytes() == b.tobytes()
            and a.flags.writeable == b.flags.writeable
        )
    if isinstance(a, (float, complex)) or type(a).__name__ in ("float32", "float16", "longdouble"):
        return repr(a) == repr(b)  # (NumPy's floats that are not Python floats: by repr too)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a.keys()) == list(b.keys()) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (set, frozenset)):
        return a == b
    if isinstance(a, BaseException):
        return str(a) == str(b)
    if hasattr(a, "__dict__") and not callable(a) and type(a).__eq__ is object.__eq__:
        return same(vars(a), vars(b))
    try:
        return bool(a == b)
    except Exception:
        return a is b


def outcome(func: Callable[..., Any], call: Args) -> tuple[str, Any, Args]:
    """('return', value, args after) or ('raise', exception, args after) of one call on copied args. A
    generator's value is what draining it gives: ('generator', its items, its return value)."""
    args = copy.deepcopy(call)
    try:
        value = func(*args.args, **args.kwargs)
        if isinstance(value, types.GeneratorType):
            value = drained(value)
        return ("return", value, args)
    except Exception as exc:
        return ("raise", exc, args)


def drained(generator: types.GeneratorType) -> tuple[str, tuple[Any, ...], Any]:
    """('generator', the items generator gives, its return value); an exception it raises propagates."""
    items = []
    while True:
        try:
            items.append(next(generator))
        except StopIteration as stop:
            return ("generator", tuple(items), stop.value)


def assert_same_outcome(plain: tuple[str, Any, Args], jitted: tuple[str, Any, Args], what: str) -> None:
    kind_p, value_p, args_p = plain
    kind_j, value_j, args_j = jitted
    if kind_p != kind_j:
        raise AssertionError(f"{what}: plain CPython {kind_p}s {value_p!r} but @jit {kind_j}s {value_j!r}")
    if kind_p == "raise":
        if type(value_p) is not type(value_j) or str(value_p) != str(value_j):
            raise AssertionError(
                f"{what}: plain raises {type(value_p).__name__}({value_p}) but @jit raises "
                f"{type(value_j).__name__}({value_j})"
            )
    elif not same(value_p, value_j):
        raise AssertionError(f"{what}: plain returns {value_p!r} but @jit returns {value_j!r}")
    if not same(list(args_p.args), list(args_j.args)) or not same(args_p.kwargs, args_j.kwargs):
        raise AssertionError(f"{what}: arguments differ afterwards: plain {args_p!r}, @jit {args_j!r}")


def check(
    func: Callable[..., Any], *calls: Any, options: dict[str, Any] | None = None, native: bool | None = None
) -> Any:
    """Differentially test func on each call (an Args, a tuple of positional arguments, or one argument).

    func is jitted twice: as CPython runs it (the default: CPython runs the function and hands hot loops to
    the JIT) and in tracejit's tier-1 interpreter (``interpreter=True``, the reference semantics). Every call
    is made twice on each (the second run may find compiled code from the first).
    native=True: also demand (through jit.stats) that compiled code ran in both; native=False: that none did.
    (The CPython baseline hands loop statements to the JIT, and comprehensions outside them whose statement is a
    simple one: a function whose only loops are other comprehensions runs natively only in the interpreter.)
    Returns the interpreter's jitted function, for further assertions through jit.stats; the CPython one is
    its attribute ``cpython_baseline``."""
    options = {**TEST_OPTIONS, **(options or {})}
    baseline = jit(**{**options, "interpreter": False})(func)
    jitted = jit(**{**options, "interpreter": True})(func)
    for call in calls:
        call = _as_args(call)
        plain = outcome(func, call)
        for which, variant in (("", jitted), (", CPython baseline", baseline)):
            for attempt in range(2):
                what = f"{func.__name__}{call!r} (run {attempt + 1}{which})"
                assert_same_outcome(plain, outcome(variant, call), what)
    if native is not None:
        assert_native(jitted, native)
        assert_native(baseline, native and has_loop_statement(baseline))
    jitted.cpython_baseline = baseline
    return jitted


def has_loop_statement(jitted: Any) -> bool:
    """Whether CPython hands loops of jitted's function to the JIT: the front end found a for/while statement, or
    the instrumented code hands a comprehension over whole (False if the front end refused the function)."""
    state = jit_module.api.state_of(jitted)
    state.ensure_prepared()
    if state.code is None:
        return False
    handed = state.instrumented.comprehensions if state.instrumented is not None else frozenset()
    return bool(handed) or any(loop.statement is not None for loop in state.code.loops)


def comprehension_lines(jitted: Any) -> set[int]:
    """The lines of the loops of jitted's comprehensions that CPython hands over whole (their trees are the
    comprehensions', in jit.stats' "trees" by "loop_line")."""
    state = jit_module.api.state_of(jitted)
    if state.code is None or state.instrumented is None:
        return set()
    return {state.code.loops[index].line for index in state.instrumented.comprehensions}


def assert_native(jitted: Any, expected: bool = True) -> None:
    """Demand that compiled code ran (or did not) for jitted, through jit.stats."""
    stats = jit_module.stats(jitted)
    ran = stats["traces_compiled"] > 0 and stats["native_entries"] > 0
    if ran != expected:
        detail = f"aborts: {stats['aborts']}" if not ran else f"{stats['traces_compiled']} traces compiled"
        raise AssertionError(f"expected {'native' if expected else 'no native'} execution; {detail}")


def warm_call(jitted: Any, *args: Any) -> tuple[Any, int, int]:
    """One call of jitted: its result, the native entries it made and its exits to the interpreter (jit.stats), but
    those of the comprehensions CPython hands over whole (``comprehension_lines``: a function that builds its data
    with one before its loop enters their trees too, each entry leaving by one exit)."""
    before = jit_module.stats(jitted)
    result = jitted(*args)
    after = jit_module.stats(jitted)
    lines = comprehension_lines(jitted)

    def own(stats: dict[str, Any]) -> int:
        return sum(tree["native_entries"] for tree in stats["trees"] if tree["loop_line"] in lines)

    comprehensions = own(after) - own(before)
    entries = after["native_entries"] - before["native_entries"] - comprehensions
    return result, entries, after["exits_to_interpreter"] - before["exits_to_interpreter"] - comprehensions


_counter = itertools.count()


def define(
    source: str, name: str, namespace: dict[str, Any] | None = None, dont_inherit: bool = False
) -> Callable[..., Any]:
    """Define a function from source text so that tracejit can read its source (through linecache).
    dont_inherit: compile it without this module's ``from __future__ import annotations`` (annotations then
    evaluated where a def is)."""
    filename = f"<tracejit-test-{next(_counter)}>"
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    ns: dict[str, Any] = {"math": math} if namespace is None else namespace
    exec(compile(source, filename, "exec", dont_inherit=dont_inherit), ns)
    return ns[name]


def numpy_outcome(
    func: Callable[..., Any],
    args: tuple[Any, ...],
    state: dict[str, str],
    catch: tuple[type, ...] = (FloatingPointError,),
) -> tuple[str, list[str]]:
    """What func(*args) did under ``np.errstate(**state)``: its result's repr, or the exception of catch it raised
    (type and message), and the messages of the warnings it gave, in order (every one: ``always``)."""
    import warnings

    import numpy as np

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with np.errstate(**state):
            try:
                result = repr(func(*args))
            except catch as exc:
                result = f"{type(exc).__name__}: {exc}"
    return result, [str(w.message) for w in seen]


def no_binding_waits(monkeypatch: Any) -> None:
    """End a loop header's waits for locals to be bound at once (``jit.monitor.Monitor.waits_for_binding``): a
    call entering a loop with a local unbound that the loop's tree carries (assigned before it is read) then gets
    a tree of its own at the next call, the steady state a warm-call test pins (native entries per call), which
    the waits otherwise reach only once they have cost what compiling that tree did."""
    monkeypatch.setattr(monitor, "WAIT_MS", 1e9)


def default_sigint() -> None:
    """(subprocess.Popen's preexec_fn) SIGINT at its default in the child, whatever this process inherited: a test
    run started in the background of a shell without job control ignores SIGINT, and a child Python that starts
    with it ignored installs no KeyboardInterrupt handler, so a test sending it Ctrl-C would wait in vain."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
