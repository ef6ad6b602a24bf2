"""Ints past 64 bits as int objects the trace owns (codegen.ownership releases them)."""

from __future__ import annotations

from llvmlite import ir

from codegen import abi
from codegen.capi import PTR
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
