"""`a + b` where a is an instance of a Python class whose `__add__` is a plain Python function: its body inlined.

Classes of small values (vectors, points, money, intervals) define their operators in Python, and loops over
them spend their time there. Through the generic path each operator is a C-API call (``PyNumber_Add``), which
calls the function with no frame of the trace's; inlined, as a method call `a.add(b)` is
(``Recorder.inline_call``), its arithmetic is native and the instance it returns is made natively too.

Exactly what CPython does for `a + b` first: it calls `type(a).__add__(a, b)`, unless b's class is a proper
subclass of a's (whose reflected `__radd__` would come first: not inlined). So a's class is guarded, with its
version (replacing `__add__` on it changes that), and b's class where b is an object (int, float and the other
kinds name their exact class). `a += b` takes the same path where a's class defines no `__iadd__`. What CPython
does next depends on the result being `NotImplemented` (b's reflected method, a sequence's repetition, a
TypeError): so the inlined result must be one that cannot be (a number, a str, a container, an instance the body
made), and the body may change nothing (``InlinedCall.pure``: a store or any other change stops the recording
before it is made); else the operator is recorded as a generic one, and the interpreter makes it for real, the
dry run having changed nothing. The exits of the inlined body leave at the BINARY_OP, both operands on the stack,
where the interpreter makes the operation again; the tier-1 interpreter, recording, takes the dry run's result
from a stand-in (``OperatorResult``) in a's place, so the method runs once."""

from __future__ import annotations

import types
from typing import Any

from jit import inline, instances
from jit.aborts import Abort, Reason
from jit.frontend import instructions as I
from jit.frontend.operators import BinOp
from jit.kinds import Kind
from jit.recorder import generic
from jit.recorder.recorder import _HANDLERS, Recorder
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
_EXACT_KINDS = frozenset({Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.NONE, Kind.STR, Kind.LIST, Kind.TUPLE, Kind.DICT})

#: the kinds of results that cannot be NotImplemented
_NEVER_NOT_IMPLEMENTED = _EXACT_KINDS | {Kind.INT_OBJECT, Kind.WIDE_INT}


class OperatorResult:
    """Stands in for the left operand on the caller's stack once the dry run of its operator method computed
    `a <op> b` (done: its ``Returns`` or ``Raises``): the caller's BINARY_OP applies the operator to it and gets
    that result (or the exception), so the method runs once."""

    __slots__ = ("done",)

    def __init__(self, done: inline.Returns | inline.Raises) -> None:
        self.done = done

    def _result(self, right: Any) -> Any:
        return self.done()


for _name in _METHODS.values():
    setattr(OperatorResult, f"__{_name}__", OperatorResult._result)


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
    False, with nothing recorded, where it is not such an operator or cannot be inlined (the dry run then
    stays the interpreter's result: ``OperatorResult``)."""
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
    site = generic.PendingMethod(left_value, method.__name__, r.snapshots.take(), r.pc, left)
    mark = generic.rolled_back(r)
    try:
        r.guard_class(left_value, where.klass, where)
        if right_value.kind == Kind.OBJECT:
            r.guard_class(right_value, right_class)
        r.abstract.pop()
        r.abstract.pop()
        # (pure: a change in its body stops the recording before it is made, so a dry run not taken as the
        # result changed nothing, and the interpreter makes the operation itself: CPython's steps after a
        # NotImplemented, exactly)
        result = r.inline_call(frame, method, [left_value, right_value], 1, method=site, pure=True)
        fresh = any(u.name == "_NEW_INSTANCE" and u.out is result for u in r.trace.uops)
        if result.kind not in _NEVER_NOT_IMPLEMENTED and not fresh:
            raise Abort(Reason.NOT_INLINED, name=method.__qualname__, why="its result may be NotImplemented")
    except Abort as exc:
        frame.stack[-2] = left  # (the dry run, if it ran, changed nothing: the operation is made for real)
        generic.roll_back(r, mark)
        r.abstract.push(left_value)
        r.abstract.push(right_value)
        r.trace.generic_calls.setdefault(method.__qualname__, f"line {r.line}: {exc}")  # (for jit.explain)
        return False
    frame.stack[-2] = OperatorResult(frame.stack[-2])  # (BINARY_OP takes the dry run's result)
    r.push(result)
    return True


class ItemResult:
    """Stands in for the container on the caller's stack once the dry run of its `__getitem__` computed
    `container[key]` (done: its ``Returns`` or ``Raises``): the caller's BINARY_SUBSCR subscripts it and gets that
    result (or the exception), so the method runs once."""

    __slots__ = ("done",)

    def __init__(self, done: inline.Returns | inline.Raises) -> None:
        self.done = done

    def __getitem__(self, key: Any) -> Any:
        return self.done()


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
    site = generic.PendingMethod(container_value, method.__name__, r.snapshots.take(), r.pc, container)
    mark = generic.rolled_back(r)
    try:
        r.guard_class(container_value, where.klass, where)
        r.abstract.pop()
        r.abstract.pop()
        try:
            result = r.inline_call(frame, method, [container_value, key_value], 1, method=site)
        finally:
            done = frame.stack[-2]
            if isinstance(done, (inline.Returns, inline.Raises)):  # (the method ran: BINARY_SUBSCR takes its result)
                frame.stack[-2] = ItemResult(done)
    except Abort as exc:
        if isinstance(frame.stack[-2], ItemResult):
            raise  # (after its effect: the method ran, once)
        generic.roll_back(r, mark)
        r.abstract.push(container_value)
        r.abstract.push(key_value)
        r.trace.generic_calls.setdefault(method.__qualname__, f"line {r.line}: {exc}")  # (for jit.explain)
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


__all__ = ["ItemResult", "OperatorResult", "inline_binary", "inline_getitem"]
