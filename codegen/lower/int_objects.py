"""Ints past 64 bits as int objects the trace owns (codegen.ownership releases them)."""

from __future__ import annotations

from llvmlite import ir

from codegen import abi
from codegen.capi import DOUBLE, PTR
from codegen.context import LowerContext
from codegen.lower.table import (
    _args,
    lowers,
)
from jit.trace import Uop

_NUMBER_FUNCTION = {
    "ADD": "PyNumber_Add",
    "SUBTRACT": "PyNumber_Subtract",
    "MULTIPLY": "PyNumber_Multiply",
    "FLOOR_DIVIDE": "PyNumber_FloorDivide",
    "REMAINDER": "PyNumber_Remainder",
    "LSHIFT": "PyNumber_Lshift",
    "RSHIFT": "PyNumber_Rshift",
    "AND": "PyNumber_And",
    "OR": "PyNumber_Or",
    "XOR": "PyNumber_Xor",
    "POWER": "PyNumber_Power",
}


def _guard_made(ctx: LowerContext, uop: Uop, obj: ir.Value) -> None:
    """Leave if a C-API call failed (NULL), clearing its exception: the interpreter does the instruction again
    and raises it (exact: these operations on ints run no Python code and change nothing)."""
    ok = ctx.builder.icmp_unsigned("!=", obj, ir.Constant(PTR, None))
    ctx.guard(ok, uop, before_exit=lambda: _clear(ctx))


def _clear(ctx: LowerContext) -> None:
    ctx.capi("PyErr_Clear")


# Py_LT, Py_LE, Py_EQ, Py_NE, Py_GT, Py_GE
_RICH_COMPARE = {"<": 0, "<=": 1, "==": 2, "!=": 3, ">": 4, ">=": 5}


@lowers("_COMPARE_OP_INT_OBJECT")
def _compare_op_int_object(ctx: LowerContext, uop: Uop) -> ir.Value:
    """PyObject_RichCompareBool of two exact ints: 0 or 1 (ints never fail to compare)."""
    opid = ir.Constant(ir.IntType(32), _RICH_COMPARE[uop.operand.symbol])
    result = ctx.capi("PyObject_RichCompareBool", *_args(ctx, uop), opid)
    return ctx.builder.icmp_signed(">", result, ir.Constant(ir.IntType(32), 0))


@lowers("_UNARY_OP_INT_OBJECT")
def _unary_op_int_object(ctx: LowerContext, uop: Uop) -> ir.Value:
    name = "PyNumber_Negative" if uop.operand.symbol == "-" else "PyNumber_Invert"
    obj = ctx.capi(name, ctx.value(uop.args[0]))
    _guard_made(ctx, uop, obj)
    return obj


@lowers("_BOX_INT")
def _box_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    obj = ctx.capi("PyLong_FromLongLong", ctx.value(uop.args[0]))
    _guard_made(ctx, uop, obj)
    return obj


@lowers("_BINARY_OP_INT_OBJECT")
def _binary_op_int_object(ctx: LowerContext, uop: Uop) -> ir.Value:
    name = _NUMBER_FUNCTION[uop.operand.uop_name]
    if name == "PyNumber_Power":  # (its third argument: no modulus)
        obj = ctx.capi(name, *_args(ctx, uop), ctx.pointer(None))
        _guard_made(ctx, uop, obj)
        # a negative exponent gives a float: leave, and the interpreter computes it
        b = ctx.builder
        tp = b.load(b.bitcast(b.gep(obj, [ir.Constant(ir.IntType(64), abi.OB_TYPE)], inbounds=True), PTR.as_pointer()))
        is_int = b.icmp_unsigned("==", tp, ctx.pointer(int))
        ctx.guard(is_int, uop, before_exit=lambda: ctx.capi("Py_DecRef", obj))
        return obj
    obj = ctx.capi(name, *_args(ctx, uop))
    _guard_made(ctx, uop, obj)
    return obj


# --- ints past 64 bits meeting floats, true division, conversions ------------------------------------------


def _double_of(ctx: LowerContext, obj: ir.Value) -> ir.Value:
    """ob_fval of a float object."""
    b = ctx.builder
    address = b.gep(obj, [ir.Constant(ir.IntType(64), abi.FLOAT_VALUE)], inbounds=True)
    return b.load(b.bitcast(address, DOUBLE.as_pointer()))


@lowers("_CONVERT_INT_OBJECT_TO_FLOAT")
def _convert_int_object_to_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    """PyLong_AsDouble, as CPython converts an int for float arithmetic, float() and the math module: -1.0 with
    an error set (OverflowError: too large for a float) leaves, and the interpreter raises it."""
    b = ctx.builder
    x = ctx.capi("PyLong_AsDouble", ctx.value(uop.args[0]))
    before = b.block
    with b.if_then(b.fcmp_ordered("==", x, ir.Constant(DOUBLE, -1.0)), likely=False):
        raised = b.icmp_unsigned("!=", ctx.capi("PyErr_Occurred"), ir.Constant(PTR, None))
        inside = b.block
    failed = b.phi(ir.IntType(1))
    failed.add_incoming(raised, inside)
    failed.add_incoming(ir.Constant(ir.IntType(1), 0), before)
    ctx.guard(b.not_(failed), uop, before_exit=lambda: _clear(ctx))
    return x


@lowers("_COMPARE_OP_INT_OBJECT_FLOAT")
def _compare_op_int_object_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    """CPython's exact comparison of an int with a float (float_richcompare), on the float boxed for it."""
    b = ctx.builder
    obj, x = _args(ctx, uop)
    boxed = ctx.capi("PyFloat_FromDouble", x)
    _guard_made(ctx, uop, boxed)
    opid = ir.Constant(ir.IntType(32), _RICH_COMPARE[uop.operand.symbol])
    result = ctx.capi("PyObject_RichCompareBool", obj, boxed, opid)  # (never fails for an int and a float)
    ctx.decref(boxed)
    return b.icmp_signed(">", result, ir.Constant(ir.IntType(32), 0))


@lowers("_BINARY_OP_TRUEDIV_INT_OBJECT")
def _truediv_int_object(ctx: LowerContext, uop: Uop) -> ir.Value:
    """CPython's int / int (correctly rounded); ZeroDivisionError or OverflowError leaves, and the interpreter
    raises it."""
    quotient = ctx.capi("PyNumber_TrueDivide", *_args(ctx, uop))
    _guard_made(ctx, uop, quotient)
    value = _double_of(ctx, quotient)  # (an int divided by an int is an exact float)
    ctx.decref(quotient)
    return value


@lowers("_CALL_FLOAT_TO_INT_OBJECT")
def _float_to_int_object(ctx: LowerContext, uop: Uop) -> ir.Value:
    """int(), math.trunc/floor/ceil(), round() of a float past 64 bits: the float rounded by the operand's
    intrinsic, as an int object (PyLong_FromDouble, as CPython makes it); nan and inf leave, and the
    interpreter raises ValueError or OverflowError."""
    rounded = ctx.intrinsic(uop.operand, DOUBLE, ctx.value(uop.args[0]))
    obj = ctx.capi("PyLong_FromDouble", rounded)
    _guard_made(ctx, uop, obj)
    return obj


@lowers("_CALL_ABS_INT_OBJECT")
def _abs_int_object(ctx: LowerContext, uop: Uop) -> ir.Value:
    obj = ctx.capi("PyNumber_Absolute", ctx.value(uop.args[0]))
    _guard_made(ctx, uop, obj)
    return obj


@lowers("_SELECT_INT_OBJECT")
def _select_int_object(ctx: LowerContext, uop: Uop) -> ir.Value:
    """The int object chosen, with a reference of the trace's own (each input is released after its last use,
    which may be this uop)."""
    condition, x, y = _args(ctx, uop)
    chosen = ctx.builder.select(condition, x, y)
    ctx.incref(chosen)
    return chosen


@lowers("_RELOAD_STACK_OWNED")
def _reload_stack_owned(ctx: LowerContext, uop: Uop) -> ir.Value:
    """An int object an inner tree's exit left on the stack, with a reference of the trace's own: the buffer's,
    if its tag says it holds one (OWNED: the trace takes it over), else a new one."""
    obj = ctx.load_stack(uop.operand, uop.out.kind)  # type: ignore[union-attr]
    return ctx.take_over(obj, ctx.tag_address(ctx.layout.stack_tag(uop.operand)))
