"""Methods of str that run no Python code: `w.upper()`, `line.split(",")`, `s.startswith("x")`, ...

Called on an exact str with arguments whose kinds are exact builtin objects (strs, ints, None, ...), such a method
descriptor is C code from start to end: it reads its arguments as they are (no ``__index__``, ``__eq__`` nor
``__iter__`` of a user's class), makes a new object, and changes nothing anyone can see. So its call needs none of
a barrier's precautions (``jit.recorder.generic.barrier``): no reference taken to every borrowed pointer, no check
of the hoisted guards after it, and, above all, a method bound just before it and called just after it stays one
method call (``jit.recorder.generic.PendingMethod``): in `idx.setdefault(w.upper(), []).append(pos)`, CPython's
LOAD_METHOD binds nothing, and a barrier between the load of `.setdefault` and its call made the recorder bind it
apart (a bound method made and called at every iteration: 0.93x plain CPython's speed).

Its uop, ``_CALL_METHOD_PURE``, leaves where the call fails (an exception: `s.index("x")` not found, memory) with
the exception cleared, at the outermost method binding still waiting for its call, else at the LOAD_ATTR of the
method itself: nothing visible happened since, and the interpreter makes the calls again, raising exactly what
CPython raises, from the line and position CPython's traceback shows.
"""

from __future__ import annotations

from typing import Any

from jit.kinds import Kind
from jit.recorder.recorder import Recorder
from jit.trace import Snapshot, Value, WhenHot

_S, _L, _T, _B, _I = Kind.STR, Kind.LIST, Kind.TUPLE, Kind.BOOL, Kind.INT

#: str's method descriptors that run no Python code on arguments of _PLAIN kinds, and the kind of what they return
#: (always exactly of that type: a str method returns an exact str, even where it returns its receiver unchanged).
#: Not here: `format` and `format_map` (a value's `__format__`), `encode` (a codec may be Python code), `translate`
#: (the table's `__getitem__`), `join` and `startswith`/`endswith` unless their argument is a list or tuple
#: (``_CONTAINERS``: any other iterable may be a generator)
STR_METHODS: dict[str, Kind] = {
    **dict.fromkeys(
        "upper lower casefold capitalize title swapcase strip lstrip rstrip replace center ljust rjust zfill "
        "expandtabs removeprefix removesuffix join".split(),
        _S,
    ),
    **dict.fromkeys("split rsplit splitlines".split(), _L),
    **dict.fromkeys("partition rpartition".split(), _T),
    **dict.fromkeys(
        "startswith endswith isalnum isalpha isascii isdecimal isdigit isidentifier islower isnumeric "
        "isprintable isspace istitle isupper".split(),
        _B,
    ),
    **dict.fromkeys("find rfind index rindex count".split(), _I),
}
#: argument kinds every method above reads in C: exact objects of builtin types with no Python-level hooks (an
#: int's `__index__` is C, a float is refused in C with a TypeError)
_PLAIN = frozenset({Kind.STR, Kind.INT, Kind.INT_OBJECT, Kind.BOOL, Kind.NONE, Kind.FLOAT})
#: methods that take a container as well: its items are read with PyUnicode_Check in C (a list or a tuple of
#: strs; anything else in it is refused with a TypeError, no Python code run)
_CONTAINERS = {"join": frozenset({Kind.LIST, Kind.TUPLE}), "startswith": frozenset({Kind.TUPLE})}
_CONTAINERS["endswith"] = _CONTAINERS["startswith"]
_UNBOXED = {_B: "_UNBOX_BOOL", _I: "_UNBOX_INT"}


def call(
    r: Recorder, descriptor: Any, obj: Value, args: list[Value], kwnames: tuple[str, ...], own: Snapshot
) -> Value | None:
    """`obj.name(*args)` for a method descriptor of str that runs no Python code on these arguments: its result
    (typed as STR_METHODS says), or None where it is not one (then it is a barrier). own: the state before the
    method's LOAD_ATTR, where the call's exits resume unless another method binding waits around it."""
    if obj.kind != Kind.STR or getattr(descriptor, "__objclass__", None) is not str:
        return None
    result = STR_METHODS.get(descriptor.__name__)
    if result is None or r.pending_subscript() is not None:
        return None
    allowed = _PLAIN | _CONTAINERS.get(descriptor.__name__, frozenset())
    if any(a.kind not in allowed for a in args):
        return None
    outer = r.method_resume()
    r.resume_override = outer if outer is not None else own  # (its exits: before every binding it is part of)
    try:
        pointer = result in (_S, _L, _T)
        out = r.emit(
            "_CALL_METHOD_PURE", (obj, *args), kind=result if pointer else Kind.OBJECT, operand=(descriptor, *kwnames)
        )
        r.trace.uops[-1].exit.when_hot = WhenHot.NEVER  # type: ignore[union-attr]  # (it leaves where it raises)
        if not pointer:  # (a bool or an int, of a length or an index: unboxed, never past 64 bits)
            checked = r.emit("_GUARD_TYPE", (out,), operand=result, kind=Kind.OBJECT)
            out = r.emit(_UNBOXED[result], (checked,))
    finally:
        r.resume_override = None
    return out
