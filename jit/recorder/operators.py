"""Handlers of operators: binary, comparison and unary operators, specialized by jit.specialize."""

from __future__ import annotations

from typing import Any

from jit import specialize, specialize_numpy
from jit.aborts import Abort
from jit.frontend import instructions as I
from jit.frontend.operators import CompareOp, UnaryOp
from jit.recorder import generic, operator_methods
from jit.recorder.recorder import Recorder, _handles
from runtime.frame import Frame


@_handles(I.BINARY_OP)
def _binary_op(r: Recorder, frame: Frame, op: Any) -> None:
    if operator_methods.inline_binary(r, frame, op):  # (a Python class's `__add__`, inlined)
        return
    b = r.pop(objects=True)
    a = r.pop(objects=True)
    # (a NumPy scalar operand: NumPy's rules; operators native code has not for it, `//`, `%`, `**`, are NumPy's
    # own, through the generic path, like operators on objects)
    specialized = specialize_numpy.binary if a.kind.is_numpy_scalar or b.kind.is_numpy_scalar else specialize.binary
    mark = generic.rolled_back(r)
    try:
        r.push(specialized(r, op, a, b, frame.stack[-2], frame.stack[-1]))
    except Abort as exc:
        if exc.reason not in generic.OPERATOR_FALLBACK:
            raise
        generic.roll_back(r, mark)  # (no uop for these operands: the C-API's operator, on objects)
        r.push(generic.binary(r, op, a, b))


@_handles(I.COMPARE_OP)
def _compare_op(r: Recorder, frame: Frame, op: Any) -> None:
    if specialize.compares_int_objects(op, r.abstract.peek(2), r.abstract.peek(1)):
        b = r.pop(objects=True)
        a = r.pop(objects=True)
        r.push(specialize.compare_int_objects(r, op, a, b))
        return
    if op in (CompareOp.IS, CompareOp.IS_NOT):  # (`x is y` of int objects: the very objects, never narrowed)
        b = r.pop(objects=True)
        a = r.pop(objects=True)
        r.push(specialize.compare(r, op, a, b))
        return
    if op in (CompareOp.IN, CompareOp.NOT_IN) and r.abstract.peek(2).kind in specialize.BEYOND_64_BITS:
        # (`big in container`: the containment test of the int object, which narrowing to 64 bits would not fit)
        b = r.pop()
        r.push(generic.compare(r, op, r.pop(objects=True), b, frame.stack[-1]))
        return
    b = r.pop()
    a = r.pop()
    numpy = (a.kind.is_numpy_scalar or b.kind.is_numpy_scalar) and op not in (CompareOp.IS, CompareOp.IS_NOT)
    mark = generic.rolled_back(r)
    try:
        r.push(specialize_numpy.compare(r, op, a, b) if numpy else specialize.compare(r, op, a, b))
    except Abort as exc:
        if exc.reason not in generic.OPERATOR_FALLBACK:
            raise
        generic.roll_back(r, mark)
        r.push(generic.compare(r, op, a, b, frame.stack[-1]))


@_handles(I.UNARY_OP)
def _unary_op(r: Recorder, frame: Frame, op: Any) -> None:
    v = r.pop(objects=True)  # (an int past 64 bits: specialize.unary keeps it one)
    if op == UnaryOp.NOT:  # (the truth of an object: C code, or its Python __bool__ as a barrier)
        r.push(r.emit("_UNARY_NOT", (generic.truth_of(r, v, frame.stack[-1]),)))
        return
    if v.kind.is_numpy_scalar:
        r.push(specialize_numpy.unary(r, op, v, frame.stack[-1]))
        return
    mark = generic.rolled_back(r)
    try:
        r.push(specialize.unary(r, op, v, frame.stack[-1]))
    except Abort as exc:
        if exc.reason not in generic.UNARY_FALLBACK:
            raise
        generic.roll_back(r, mark)  # (an object's __neg__, ~ of a bool: the C-API's operator, on objects)
        r.push(generic.unary(r, op, v))
