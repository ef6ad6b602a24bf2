"""Ints past 64 bits as int objects the trace owns (codegen.ownership releases them)."""

from __future__ import annotations

from llvmlite import ir

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
}


def _guard_made(ctx: LowerContext, uop: Uop, obj: ir.Value) -> None:
    """Leave if a C-API call failed (NULL), clearing its exception: the interpreter does the instruction again
    and raises it (exact: these operations on ints run no Python code and change nothing)."""
    ok = ctx.builder.icmp_unsigned("!=", obj, ir.Constant(PTR, None))
    ctx.guard(ok, uop, before_exit=lambda: _clear(ctx))


def _clear(ctx: LowerContext) -> None:
    ctx.capi("PyErr_Clear")


@lowers("_BOX_INT")
def _box_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    obj = ctx.capi("PyLong_FromLongLong", ctx.value(uop.args[0]))
    _guard_made(ctx, uop, obj)
    return obj


@lowers("_BINARY_OP_INT_OBJECT")
def _binary_op_int_object(ctx: LowerContext, uop: Uop) -> ir.Value:
    obj = ctx.capi(_NUMBER_FUNCTION[uop.operand.uop_name], *_args(ctx, uop))
    _guard_made(ctx, uop, obj)
    return obj
