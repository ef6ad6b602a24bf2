"""The function object ``@jit`` returns.

It is a real Python function with exactly the decorated function's signature, generated from its code object,
so CPython itself binds the arguments (defaults, keywords, positional-only, error messages), the result binds
as a method, and it pickles by reference like the original. Its body forwards the bound arguments, positional
parameters positionally and keyword-only ones by keyword, to a replaceable target: the original function
(plain CPython) or the tracejit interpreter.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable
from typing import Any

from runtime.errors import clean_traceback, internal

_TARGET = "__tracejit_target"
_CLEAN = "__tracejit_clean"
_BASE = "__tracejit_base"  # BaseException, by a name no parameter can shadow
_RECURSION = "__tracejit_recursion"  # RecursionError, likewise


def make_binder(func: types.FunctionType, target: Callable[..., Any]) -> types.FunctionType:
    code = func.__code__
    npos = code.co_argcount
    nposonly = code.co_posonlyargcount
    nkw = code.co_kwonlyargcount
    names = code.co_varnames[: npos + nkw]
    # *args and **kwargs (such functions run as plain CPython, but must keep their signature)
    star = code.co_varnames[npos + nkw] if code.co_flags & inspect.CO_VARARGS else None
    starstar = code.co_varnames[npos + nkw + (star is not None)] if code.co_flags & inspect.CO_VARKEYWORDS else None
    if {_TARGET, _CLEAN, _BASE, _RECURSION} & {*names, star, starstar}:
        raise TypeError(f"cannot jit a function with a parameter named {_TARGET}, {_CLEAN}, {_BASE} or {_RECURSION}")
    params = list(names[:npos])
    if nposonly:
        params.insert(nposonly, "/")
    if star is not None:
        params.append(f"*{star}")
    elif nkw:
        params.append("*")
    params.extend(names[npos:])
    if starstar is not None:
        params.append(f"**{starstar}")
    forward = list(names[:npos]) + ([f"*{star}"] if star is not None else [])
    forward += [f"{n}={n}" for n in names[npos:]] + ([f"**{starstar}"] if starstar is not None else [])
    # the except clause drops tracejit's own frames (this one included) from the traceback the caller sees,
    # unless the stack is too deep to call anything more (the exception then leaves as it is, and an outer call
    # cleans it: no exception of tracejit's own gets chained to it); the function gets its real name afterwards
    # (co_name may not be an identifier: "<lambda>")
    source = (
        f"def make({_TARGET}, {_CLEAN}, {_BASE}, {_RECURSION}):\n"
        f"    def binder({', '.join(params)}):\n"
        f"        try:\n"
        f"            return {_TARGET}({', '.join(forward)})\n"
        f"        except {_BASE} as exc:\n"
        f"            try:\n"
        f"                {_CLEAN}(exc)\n"
        f"            except {_RECURSION}:\n"
        f"                pass\n"
        f"            raise\n"
        f"    return binder\n"
    )
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<tracejit {func.__qualname__}>", "exec"), namespace)
    binder = namespace["make"](target, clean_traceback, BaseException, RecursionError)
    binder.__code__ = binder.__code__.replace(co_name=code.co_name, co_qualname=func.__qualname__)
    internal(binder)
    binder.__defaults__ = func.__defaults__
    binder.__kwdefaults__ = func.__kwdefaults__
    functools.update_wrapper(binder, func)
    return binder


def set_target(binder: types.FunctionType, target: Callable[..., Any]) -> None:
    """Point binder at a new target (its closure cells are the only state it has)."""
    assert binder.__closure__ is not None
    cell = binder.__closure__[binder.__code__.co_freevars.index(_TARGET)]
    cell.cell_contents = target
