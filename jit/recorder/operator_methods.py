"""Special methods of Python classes inlined where an instruction calls them: `a + b` (`__add__`), `c[k]`
(`__getitem__`) and `obj.name` of a property (its getter), each a plain Python function.

Classes of small values (vectors, points, money, intervals) define their operators in Python, and loops over
them spend their time there. Through the generic path each operator is a C-API call (``PyNumber_Add``), which
calls the function with no frame of the trace's; inlined, as a method call `a.add(b)` is
(``Recorder.inline_call``), its arithmetic is native and the instance it returns is made natively too. The
receiver's class and its version are guarded (replacing the method on it changes that); the exits of the inlined
body leave at the instruction, its operands on the stack, where the interpreter makes it again; the tier-1
interpreter, recording, takes the dry run's result from a stand-in in the receiver's place (``OperatorResult``,
``ItemResult``, ``AttributeResult``), so the method runs once (``inline_special``).

Exactly what CPython does for `a + b` first: it calls `type(a).__add__(a, b)`, unless b's class is a proper
subclass of a's (whose reflected `__radd__` would come first: not inlined). So b's class is guarded too where b
is an object (int, float and the other kinds name their exact class). `a += b` takes the same path where a's
class defines no `__iadd__`. What CPython does next depends on the result being `NotImplemented` (b's reflected
method, a sequence's repetition, a TypeError): so the inlined result must be one that cannot be (a number, a
str, a container, an instance the body made), and the body may change nothing (``InlinedCall.pure``: a store or
any other change stops the recording before it is made); else the operator is recorded as a generic one, and the
interpreter makes it for real, the dry run having changed nothing. `c[k]` is `type(c).__getitem__(c, k)`, and
a property, a data descriptor, no instance attribute can hide: their bodies may have the effects an inlined
method's may have."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from jit import inline, instances
from jit.aborts import Abort, Reason
from jit.frontend import instructions as I
from jit.frontend.operators import BinOp
from jit.kinds import EXACT_TYPES, Kind
from jit.recorder import generic
from jit.recorder.recorder import _HANDLERS, Recorder
from jit.trace import Value
from runtime.frame import Frame

#: the method name of each operator (`__add__` for ADD): ** is left out (its third argument, the modulus)
_METHODS = {
    "ADD": "add",
    "SUBTRACT": "sub",
    "MULTIPLY": "mul",
    "TRUE_DIVIDE": "truediv",
    "FLOOR_DIVIDE": "floordiv",
    "REMAINDER": "mod",
    "LSHIFT": "lshift",
    "RSHIFT": "rshift",
    "AND": "and",
    "OR": "or",
    "XOR": "xor",
    "MATRIX_MULTIPLY": "matmul",
}

#: the kinds whose values are of an exact builtin class (never a subclass of a Python class)
_EXACT_KINDS = frozenset(EXACT_TYPES)

#: the kinds of results that cannot be NotImplemented
_NEVER_NOT_IMPLEMENTED = _EXACT_KINDS | {Kind.INT_OBJECT, Kind.WIDE_INT}


class OperatorResult:
    """Stands in for the left operand on the caller's stack once the dry run of its operator method computed
    `a <op> b` (done: its ``Returns`` or ``Raises``): the caller's BINARY_OP applies the operator to it and gets
    that result (or the exception)."""

    __slots__ = ("done",)

    def __init__(self, done: inline.Returns | inline.Raises) -> None:
        self.done = done

    def _result(self, right: Any) -> Any:
        return self.done()


for _name in _METHODS.values():
    setattr(OperatorResult, f"__{_name}__", OperatorResult._result)


class ItemResult:
    """Stands in for the container on the caller's stack once the dry run of its `__getitem__` computed
    `container[key]`: the caller's BINARY_SUBSCR subscripts it and gets that result (or the exception)."""

    __slots__ = ("done",)

    def __init__(self, done: inline.Returns | inline.Raises) -> None:
        self.done = done

    def __getitem__(self, key: Any) -> Any:
        return self.done()


class AttributeResult:
    """Stands in for the object on the caller's stack once the dry run of a property's getter computed `obj.name`:
    the caller's LOAD_ATTR reads the attribute of it and gets that result (or the exception)."""

    __slots__ = ("_done",)

    def __init__(self, done: inline.Returns | inline.Raises) -> None:
        object.__setattr__(self, "_done", done)

    def __getattribute__(self, name: str) -> Any:
        return object.__getattribute__(self, "_done")()


def inline_special(
    r: Recorder,
    frame: Frame,
    method: types.FunctionType,
    where: instances.ClassAttr,
    operands: list[Value],
    stand_in: type,
    *,
    also_guard: tuple[tuple[Value, type], ...] = (),
    pure: bool = False,
    refuses: Callable[[Value], str | None] | None = None,
) -> Value | None:
    """Record the instruction at hand, whose operands (the receiver first, deepest on the stack) are on the stack,
    as method's body inlined on them, method being a special method of the receiver's class (where); the body's
    result, or None, with nothing recorded and the operands back on the abstract stack, where it cannot be inlined
    (then the caller records the instruction otherwise; ``jit.explain`` says why). The receiver's class and version
    are guarded, and also_guard's (value, class) pairs. The dry run's result goes to the interpreter's instruction
    through stand_in, in the receiver's place. pure: the body may change nothing (``inline.InlinedCall.pure``), so
    that where it is not inlined the dry run changed nothing and the interpreter makes the instruction for real;
    else, once the dry run ran, a recording that gives up stops (the method ran, once). refuses: why the result
    cannot be taken (or None)."""
    receiver, *args = operands
    depth = len(operands)
    actual = frame.stack[-depth]
    site = generic.PendingMethod(receiver, method.__name__, r.snapshots.take(), r.pc, actual)
    mark = generic.rolled_back(r)
    try:
        r.guard_class(receiver, where.klass, where)
        for value, klass in also_guard:
            r.guard_class(value, klass)
        for _ in operands:
            r.abstract.pop()
        try:
            result = r.inline_call(frame, method, operands, len(args), method=site, pure=pure)
        finally:
            done = frame.stack[-depth]
            if type(done) in (inline.Returns, inline.Raises):  # (the method ran: the instruction takes its result)
                frame.stack[-depth] = stand_in(done)
        why = refuses(result) if refuses is not None else None
        if why is not None:
            raise Abort(Reason.NOT_INLINED, name=method.__qualname__, why=why)
    except Abort as exc:
        if pure:
            frame.stack[-depth] = actual  # (the dry run, if it ran, changed nothing: the instruction is made for real)
        elif type(frame.stack[-depth]) is stand_in:
            raise  # (after its effect: the method ran, once)
        generic.roll_back(r, mark)
        for value in operands:
            r.abstract.push(value)
        r.trace.generic_calls.setdefault(method.__qualname__, f"line {r.line}: {exc}")  # (for jit.explain)
        return None
    return result


def _operator_method(left: Any, op: BinOp) -> tuple[instances.ClassAttr, types.FunctionType] | None:
    """The plain Python function `a <op> b` calls first on left's class, with where it is (for its version
    guard); None where it is not one (or `a op= b` of a class with an in-place method)."""
    klass = type(left)
    name = _METHODS.get(op.uop_name)
    if name is None:
        return None
    if op.inplace and instances.lookup_in_class(klass, f"__i{name}__") is not None:
        return None
    return instances.find_operator(klass, f"__{name}__")


def inline_binary(r: Recorder, frame: Frame, op: BinOp) -> bool:
    """Record `a <op> b` (both on the stack) as the inlined body of a's operator method, pushing its result;
    False, with nothing recorded, where it is not such an operator or cannot be inlined (then the generic
    operator, and the interpreter makes it for real)."""
    left_value, right_value = r.abstract.peek(2), r.abstract.peek(1)
    if left_value.kind != Kind.OBJECT or r.pending_subscript() is not None:
        return False
    if left_value.id in r.pending_methods or right_value.id in r.pending_methods:
        return False
    left, right = frame.stack[-2], frame.stack[-1]
    found = _operator_method(left, op)
    if found is None:
        return False
    where, method = found
    right_class = type(right)
    if right_class is not where.klass and issubclass(right_class, where.klass):
        return False  # (its reflected method may come first)
    if right_value.kind == Kind.OBJECT:
        if type(right_class) is not type or not r.may_specialize(right_class):
            return False
    elif right_value.kind not in _EXACT_KINDS:
        return False
    if not r.may_specialize(where.klass):
        return False
    also = ((right_value, right_class),) if right_value.kind == Kind.OBJECT else ()
    result = inline_special(
        r,
        frame,
        method,
        where,
        [left_value, right_value],
        OperatorResult,
        also_guard=also,
        pure=True,
        refuses=lambda result: None if _never_not_implemented(r, result) else "its result may be NotImplemented",
    )
    if result is None:
        return False
    r.push(result)
    return True


def _never_not_implemented(r: Recorder, result: Value) -> bool:
    """Can result not be NotImplemented: a kind of a builtin class, or an instance the inlined body made?"""
    made = r.trace.made_by(result)
    return result.kind in _NEVER_NOT_IMPLEMENTED or (made is not None and made.name == "_NEW_INSTANCE")


def inline_getitem(r: Recorder, frame: Frame) -> bool:
    """Record `container[key]` (both on the stack) of an instance of a Python class whose `__getitem__` is a plain
    Python function (CPython calls `type(container).__getitem__(container, key)`) as its inlined body, as a
    method call `container.get(key)` is (its effects as an inlined method's may have); False, with nothing
    recorded, where it is not one or cannot be inlined (then the specialized or generic subscript)."""
    container_value, key_value = r.abstract.peek(2), r.abstract.peek(1)
    if container_value.kind != Kind.OBJECT or r.pending_subscript() is not None:
        return False
    if container_value.id in r.pending_methods or key_value.id in r.pending_methods:
        return False
    container = frame.stack[-2]
    found = instances.find_operator(type(container), "__getitem__")
    if found is None or not r.may_specialize(found[0].klass):
        return False
    where, method = found
    result = inline_special(r, frame, method, where, [container_value, key_value], ItemResult)
    if result is None:
        return False
    r.push(result)
    return True


def load_property(r: Recorder, frame: Frame, name: str) -> bool:
    """`obj.name` of a property whose getter is a plain Python function (``jit.instances.find_property``): the
    getter's body inlined on obj, its result pushed; False, with nothing recorded, where it is no such property or
    the getter cannot be inlined (then the attribute's other paths)."""
    obj = r.abstract.peek(1)
    if obj.kind != Kind.OBJECT or obj.id in r.pending_methods or r.pending_subscript() is not None:
        return False
    found = instances.find_property(frame.stack[-1], name)
    if found is None or not r.may_specialize(found[0].klass):
        return False
    where, getter = found
    result = inline_special(r, frame, getter, where, [obj], AttributeResult)
    if result is None:
        return False
    r.push(result)
    return True


def _with_getitem_inlined() -> None:
    """BINARY_SUBSCR's handler (specialized, with the generic fallback: jit.recorder.generic) tries
    ``inline_getitem`` first."""
    subscript = _HANDLERS[I.BINARY_SUBSCR]

    def handler(r: Recorder, frame: Frame, arg: Any) -> None:
        if not inline_getitem(r, frame):
            subscript(r, frame, arg)

    _HANDLERS[I.BINARY_SUBSCR] = handler


_with_getitem_inlined()


__all__ = [
    "AttributeResult",
    "ItemResult",
    "OperatorResult",
    "inline_binary",
    "inline_getitem",
    "inline_special",
    "load_property",
]
