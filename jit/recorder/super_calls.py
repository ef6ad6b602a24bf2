"""`super().name` in an inlined method (``LOAD_SUPER_ATTR``), and the call `super().name(...)`.

CPython's zero-argument super() is super(C, obj), C the method's class (its ``__class__`` cell), obj its first
argument; an attribute of it is looked up along type(obj)'s MRO, starting after C, in the classes' own dicts
(never in obj's: no instance attribute hides it). Where that finds a plain Python function and a call follows
(`super().__init__(x)`, `super().area() * 2`), the recorder binds nothing: the call inlines that function with obj
as its first argument (``call``), under guards that keep the lookup's answer: the cell still holds C, obj is
exactly of its class, whose version tag (which changes when any class on its MRO changes) is as recorded;
``object.__init__`` found so and called with nothing (a base class's cooperative `super().__init__()`) is no call
at all. Any other attribute (a property, a classmethod, another slot wrapper), and any lookup from a classmethod's
class, is CPython's: the super object is made and the attribute read through the generic path, as the
interpreter does.
"""

from __future__ import annotations

import types
from typing import Any

from jit import instances
from jit.aborts import Abort, Reason
from jit.frontend import instructions as I
from jit.kinds import Kind
from jit.recorder import generic
from jit.recorder.recorder import Recorder, _handles
from jit.trace import Value
from jit.uops import Callee
from runtime.frame import Frame


@_handles(I.LOAD_SUPER_ATTR)
def _load_super_attr(r: Recorder, frame: Frame, arg: tuple[int, str]) -> None:
    index, name = arg
    actual_first = frame.stack[-1]
    first = r.pop(objects=True)
    callable_ = r.pop()
    if not callable_.is_const or callable_.const is not super:  # (a `super` of the module's own)
        raise Abort(Reason.CALL, name=f"super() rebound to {type(frame.stack[-2]).__name__}")
    try:
        klass = frame.function.closure[index].cell_contents
    except ValueError:  # (the interpreter raises CPython's RuntimeError)
        raise Abort(Reason.RAISES, what="super()", exception="RuntimeError") from None
    # (as super's own check: a class that is klass or its subclass starts the lookup from itself, a classmethod's
    # `cls`; else the object's class must be one)
    if not isinstance(klass, type):  # (the interpreter raises CPython's RuntimeError)
        raise Abort(Reason.RAISES, what="super()", exception="RuntimeError")
    of_class = isinstance(actual_first, type) and issubclass(actual_first, klass)
    if not of_class and not issubclass(type(actual_first), klass):  # (the interpreter raises CPython's TypeError)
        raise Abort(Reason.RAISES, what="super()", exception="TypeError")
    cell = r.emit("_LOAD_FREE", (r.closure_owner(frame),), operand=index)
    r.emit("_GUARD_CALLEE_VALUE", (cell,), operand=Callee(klass, None, None))
    found = None if of_class else _method_after(type(actual_first), klass, name)
    if found is not None and first.kind == Kind.OBJECT and generic.may_pend(r):
        owner = type(actual_first)
        r.guard_class(first, owner, instances.ClassAttr(owner, instances.version_of(owner), name))
        r.push(generic.pend(r, first, name, actual_first, function=found))  # (the CALL inlines found, or calls it)
        return
    made = generic.call(r, r.const(super), [cell, first])
    r.push(generic.load_attr(r, made, name, super(klass, actual_first)))


#: `object.__init__`, which does nothing when given no argument (a base class's cooperative `super().__init__()`)
_OBJECT_INIT = object.__dict__["__init__"]


def _method_after(owner: type, klass: type, name: str) -> Any:
    """The plain Python function super(klass, obj).name binds (obj of class owner), or ``object.__init__``, if that
    is what the lookup finds and owner has a version tag to guard; else None."""
    instances.lookup_in_class(owner, name)  # (a lookup gives the class its version tag, if it has none yet)
    if not instances.version_of(owner):
        return None
    mro = owner.__mro__
    for base in mro[mro.index(klass) + 1 :]:
        found = base.__dict__.get(name, _MISSING)
        if found is not _MISSING:
            return found if type(found) is types.FunctionType or found is _OBJECT_INIT else None
    return None


_MISSING = object()


def call(r: Recorder, frame: Frame, method: Value, args: list[Value], keywords: tuple[str, ...]) -> Value:
    """The call of `super().name` found as a plain function: its body inlined with the object first, else that
    function called through the generic path (the guards of ``_load_super_attr`` keep it the one the lookup
    finds; its exit, raising, leaves at the LOAD_SUPER_ATTR with the exception, as the pending method's)."""
    pending = r.pending_methods[method.id]
    function = pending.function
    del r.pending_methods[method.id]
    if function is _OBJECT_INIT and not args:  # (C code that checks only that it is given nothing)
        return r.const(None)
    if function is not _OBJECT_INIT:
        mark = generic.rolled_back(r)
        try:
            return r.inline_call(frame, function, [pending.obj, *args], len(args), method=pending, keywords=keywords)
        except Abort as exc:
            generic.roll_back(r, mark)
            r.trace.generic_calls.setdefault(function.__qualname__, f"line {r.line}: {exc}")
    inputs = (r.const(function), pending.obj, *(generic.argument(r, v, "a call") for v in args))
    return generic.barrier(r, "_CALL_GENERIC", inputs, operand=keywords or (), resume=pending.snapshot)
