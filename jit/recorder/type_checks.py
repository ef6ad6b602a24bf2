"""`isinstance(x, C)` and `type(x)` where the trace knows x's class: a constant, with no call.

Ordinary code dispatches on types in its loops (`if isinstance(v, int): ... elif isinstance(v, str): ...`).
Called through the C-API, each test is a generic call and a barrier, and its object operand a reference the trace
must keep (``_KEEP_ALIVE``), which also kept such a loop's side traces from linking back to their tree. But the
trace already knows x's class: a value's kind names its exact type (an int, a float, a str...), and an object's
class is guarded where it is specialized. So the answer is known when the trace is recorded, exactly as CPython
computes it (``PyObject_IsInstance``): for a class whose metaclass is exactly `type` (no `__instancecheck__` of
its own: not an ABC), x is an instance when its class is a subclass; where it is not, CPython also looks up
`x.__class__`, which can differ only where a class on x's MRO defines `__class__` itself (a proxy or a mock):
such a class, and any other case (a tuple holding something other than plain classes, a class held in a
variable), is left to the generic call.
"""

from __future__ import annotations

import builtins
from typing import Any

from jit.kinds import EXACT_TYPES, Kind
from jit.recorder.recorder import Recorder
from jit.trace import Value
from runtime.frame import Frame

#: the kinds that name their value's exact class (an int held as an object, or in 128 bits, is an int)
_EXACT_CLASS = {**EXACT_TYPES, Kind.INT_OBJECT: int, Kind.WIDE_INT: int}


def _plain_classes(spec: Any) -> bool:
    """Is spec a class whose metaclass is exactly `type`, or a tuple (nested) of such?"""
    if type(spec) is tuple:
        return all(_plain_classes(item) for item in spec)
    return type(spec) is type


def _constant_classes(r: Recorder, spec: Value) -> Any:
    """What spec is, where the trace knows it: a constant, or a tuple built of constants (`(int, float)`, whose
    names are globals the trace guards); else None."""
    if spec.is_const:
        return spec.const
    built = r.trace.made_by(spec)
    if built is None or built.name != "_BUILD_TUPLE" or not all(a.is_const for a in built.args):
        return None
    return tuple(a.const for a in built.args)


def _known_class(r: Recorder, value: Value, actual: Any) -> tuple[type | None, bool]:
    """value's exact class, if the trace can know it, and whether a class guard must make it known (an object of
    a class the site may specialize on); (None, False) where the trace cannot know it."""
    klass = _EXACT_CLASS.get(value.kind)
    if klass is not None:
        return (klass if type(actual) is klass else None), False
    if value.kind != Kind.OBJECT or type(type(actual)) is not type or not r.may_specialize(type(actual)):
        return None, False
    return type(actual), True


def _defines_class_attribute(klass: type) -> bool:
    """Does a class on klass's MRO, other than object, define `__class__` (which CPython's isinstance reads)?"""
    return any("__class__" in vars(base) for base in klass.__mro__ if base is not object)


def fold(r: Recorder, frame: Frame, fn: Any, n: int) -> bool:
    """Record the call of fn with n arguments on the stack as a constant, if it is `isinstance(x, C)` or
    `type(x)` of an x whose class the trace knows (then the callee and its arguments are popped and the answer
    pushed); False, recording nothing, otherwise."""
    stack = frame.stack
    if fn is builtins.isinstance and n == 2:
        classes, value, actual = _constant_classes(r, r.abstract.peek(1)), r.abstract.peek(2), stack[-2]
        if classes is None or not _plain_classes(classes):
            return False
    elif fn is builtins.type and n == 1:
        classes, value, actual = None, r.abstract.peek(1), stack[-1]
    else:
        return False
    if value.id in r.pending_methods:
        return False
    klass, guarded = _known_class(r, value, actual)
    if klass is None:
        return False
    if classes is None:
        result = r.const(klass, Kind.OBJECT)
    else:
        # (its class's subclass test first: where that fails, CPython reads x.__class__, which only a class
        # defining it could make run code)
        answer = issubclass(klass, classes)
        if not answer and _defines_class_attribute(klass):
            return False
        result = r.const(isinstance(actual, classes))
        assert result.const == answer
    if guarded:
        r.guard_class(value, klass)
    for _ in range(n + 1):
        r.abstract.pop()
    r.push(result)
    return True
