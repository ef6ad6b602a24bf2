"""The public API: ``@jit``, ``jit.explain``."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, TypeVar, overload

from jit import errors
from jit.dumps import KINDS, dump_trace, trees_text
from jit.environment import jit_disabled
from jit.function import JitFunction
from jit.options import make_options
from jit.report import explain_report
from jit.statistics import stats_of

F = TypeVar("F", bound=Callable[..., Any])

_STATE = "__tracejit__"


@overload
def jit(func: F, /) -> F: ...
@overload
def jit(func: None = None, /, **options: Any) -> Callable[[F], F]: ...


def jit(func: Any = None, /, **options: Any) -> Any:
    """Compile a numeric function's hot loops to native code.

    Use as ``@jit`` or ``@jit(threshold=..., nesting=..., ...)`` (see ``jit.options.Options``). The result is a
    function with the same signature, name, docstring and ``__wrapped__``; ``.py_func`` is the original.
    It returns exactly what the plain function returns. Functions using constructs tracejit does not support
    run as plain CPython; ``jit.explain(f)`` says why, and ``@jit(strict=True)`` makes their calls raise
    ``jit.UnsupportedFunctionError`` instead. ``JIT_DISABLE=1`` in the environment makes every ``@jit``
    function run as plain CPython (``jit.environment`` lists the variables tracejit reads).
    """
    opts = make_options(options)
    if func is None:

        def decorator(*args: Any, **kwargs: Any) -> Any:
            if len(args) != 1 or kwargs:
                given = ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
                spelled = ", ".join(f"{k}={v!r}" for k, v in options.items())
                raise TypeError(f"jit({spelled}) is a decorator: apply it to one function, not to ({given})")
            return _decorate(args[0], opts)

        return decorator
    return _decorate(func, opts)


def _decorate(func: Any, opts: Any) -> Any:
    if isinstance(func, (staticmethod, classmethod)):
        return type(func)(_decorate(func.__func__, opts))
    if not callable(func):
        raise TypeError(f"jit() expects a Python function, got {type(func).__name__!r}")
    if not isinstance(func, types.FunctionType):
        raise TypeError(
            f"jit() expects a Python function (def), got {type(func).__name__!r}; "
            "builtins, classes and other callables cannot be compiled"
        )
    if isinstance(getattr(func, _STATE, None), JitFunction):
        func = func.py_func  # type: ignore[attr-defined]  # jitting twice: wrap the original again
    state = JitFunction(func, opts, disabled=jit_disabled())
    wrapper = state.wrapper
    wrapper.py_func = func  # type: ignore[attr-defined]
    setattr(wrapper, _STATE, state)
    return wrapper


def state_of(f: Any) -> JitFunction:
    state = getattr(f, _STATE, None)
    if not isinstance(state, JitFunction):
        raise TypeError(f"expected a function decorated with @jit, got {f!r}")
    return state


def explain(f: Any) -> str:
    """A readable report of how a jitted function runs and why parts of it do not compile."""
    return explain_report(state_of(f))


def stats(f: Any) -> dict[str, Any]:
    """Counters of what the JIT did for f (cumulative): traces compiled, native entries, exits to the
    interpreter, aborts with reasons, compile times, per-tree details (every key: ``jit.statistics.stats_of``;
    the README's "Seeing what the JIT did")."""
    return stats_of(state_of(f))


def dump(f: Any, kind: str = "uops") -> str:
    """The text of every trace compiled for f: kind is "uops", "ir", "opt-ir", "asm" or "trees"."""
    if kind not in KINDS:
        raise ValueError(f"unknown dump kind {kind!r}; choose from {', '.join(KINDS)}")
    state = state_of(f)
    monitor = state.monitor
    if monitor is None:
        return ""
    if kind == "trees":
        return trees_text(monitor)
    return "\n".join(dump_trace(monitor, compiled, [kind]) for compiled in monitor.traces)


jit.explain = explain  # type: ignore[attr-defined]
jit.stats = stats  # type: ignore[attr-defined]
jit.dump = dump  # type: ignore[attr-defined]
# the error and warning classes too, for code that only imported the decorator (`jit.TracejitWarning`)
for _name in errors.__all__:
    setattr(jit, _name, getattr(errors, _name))
