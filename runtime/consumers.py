"""The builtins consuming a generator expression that CPython hands over whole (``jit.frontend.consumers``,
``jit.frontend.instrument``): the instrumented code checks the callee is the builtin, then makes the call's result
of what the expression's loop built (``LoopInfo.builds``), or, where the runtime gave the loop back part way, has the
builtin consume the rest after what tier 1 consumed."""

from __future__ import annotations

import builtins
import types
from typing import Any


def consumer_is(kind: str, callee: Any) -> bool:
    """Is callee the builtin named kind (for "join": ``str.join`` bound to an exact str)? Runs no user code (only
    the attributes of a builtin method are read)."""
    if kind == "join":
        return type(callee) is types.BuiltinMethodType and type(callee.__self__) is str and callee.__name__ == "join"
    return callee is getattr(builtins, kind)


def consumed(kind: str, callee: Any, built: Any) -> Any:
    """The result of the builtin callee (named kind) where the loop consumed every element (or any/all decided):
    built is whether an element decided (any, all), the sum, or the list or set of the elements."""
    if kind == "all":
        return not built
    if kind in ("any", "sum", "list", "set"):
        return built
    return callee(built)  # (tuple, frozenset, sorted, str.join of the list or set, as the builtin makes it first)


def consume_rest(kind: str, callee: Any, built: Any, rest: Any) -> Any:
    """The result of the builtin callee (named kind) where the loop was given back part way: built is what it
    consumed so far (any/all: undecided), rest the generator of the rest."""
    if kind in ("any", "all"):
        return callee(rest)
    if kind == "sum":
        return callee(rest, built)  # (a left fold from what was summed)
    if type(built) is list:
        built.extend(rest)
    else:
        built.update(rest)
    return built if kind in ("list", "set") else callee(built)
