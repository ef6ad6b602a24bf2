"""Ints past 64 bits in i128: the recorder bounds their magnitudes below 2**127, so no overflow checks."""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from codegen import capi
from codegen.capi import I32, I64, I128, PTR
from codegen.context import LowerContext
from codegen.lower.int_objects import _clear, _guard_made
from codegen.lower.table import (
    LOWERINGS,
    _args,
    _const_arg,
    _entry_alloca,
    _floors,
    _i64,
    lowers,
)
from jit.trace import Uop


def _i128(value: int) -> ir.Constant:
    return ir.Constant(I128, value)


@lowers("_WIDEN_INT")
def _widen_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.sext(ctx.value(uop.args[0]), I128)


LOWERINGS["_BINARY_OP_ADD_WIDE"] = lambda ctx, uop: ctx.builder.add(*_args(ctx, uop))
LOWERINGS["_BINARY_OP_SUBTRACT_WIDE"] = lambda ctx, uop: ctx.builder.sub(*_args(ctx, uop))
LOWERINGS["_BINARY_OP_MULTIPLY_WIDE"] = lambda ctx, uop: ctx.builder.mul(*_args(ctx, uop))


@lowers("_NARROW_WIDE")
def _narrow_wide(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    wide = ctx.value(uop.args[0])
    narrow = b.trunc(wide, I64)
    ctx.guard(b.icmp_signed("==", b.sext(narrow, I128), wide), uop)
    return narrow


def _box_wide(ctx: LowerContext, wide: ir.Value) -> ir.Value:
    """A new int object for an i128 (NULL if allocation failed): high * 2**64 + low, through CPython's ints."""
    b = ctx.builder
    high = ctx.capi("PyLong_FromLongLong", b.trunc(b.ashr(wide, _i128(64)), I64))
    low = ctx.capi("PyLong_FromUnsignedLongLong", b.trunc(wide, I64))
    null = ir.Constant(PTR, None)
    result = _phi_if(
        ctx,
        b.and_(b.icmp_unsigned("!=", high, null), b.icmp_unsigned("!=", low, null)),
        lambda: _shift_add(ctx, high, low),
        null,
    )
    for temporary in (high, low):
        with b.if_then(b.icmp_unsigned("!=", temporary, null)):
            ctx.decref(temporary)
    return result


def _shift_add(ctx: LowerContext, high: ir.Value, low: ir.Value) -> ir.Value:
    b = ctx.builder
    shifted = ctx.capi("PyNumber_Lshift", high, ctx.pointer(64))
    null = ir.Constant(PTR, None)
    total = _phi_if(ctx, b.icmp_unsigned("!=", shifted, null), lambda: ctx.capi("PyNumber_Add", shifted, low), null)
    with b.if_then(b.icmp_unsigned("!=", shifted, null)):
        ctx.decref(shifted)
    return total


def _phi_if(ctx: LowerContext, condition: ir.Value, then: Callable[[], ir.Value], otherwise: ir.Value) -> ir.Value:
    """then() where condition holds, else otherwise."""
    b = ctx.builder
    before = b.block
    with b.if_then(condition):
        value = then()
        inside = b.block
    phi = b.phi(value.type)
    phi.add_incoming(value, inside)
    phi.add_incoming(otherwise, before)
    return phi


@lowers("_BOX_WIDE")
def _box_wide_uop(ctx: LowerContext, uop: Uop) -> ir.Value:
    obj = _box_wide(ctx, ctx.value(uop.args[0]))
    _guard_made(ctx, uop, obj)
    return obj


@lowers("_BINARY_OP_REMAINDER_WIDE")
def _mod_wide(ctx: LowerContext, uop: Uop) -> ir.Value:
    """Python's % of an i128 by an int (the result has the divisor's sign, and fits in 64 bits)."""
    b = ctx.builder
    x, y = _args(ctx, uop)
    if _const_arg(uop, 1) in (None, 0):
        ctx.guard(b.icmp_signed("!=", y, _i64(0)), uop)
    if not capi.WIDE_DIVISION_ADDRESSES:
        return _mod_wide_through_ints(ctx, uop, x, y)
    # (|x| < 2**127, so x % -1 cannot overflow)
    remainder = b.trunc(b.srem(x, b.sext(y, I128)), I64)
    return b.add(remainder, b.select(_floors(b, remainder, y), y, _i64(0)))


def _mod_wide_through_ints(ctx: LowerContext, uop: Uop, x: ir.Value, y: ir.Value) -> ir.Value:
    """_BINARY_OP_REMAINDER_WIDE where LLVM's i128 division has no runtime to call: CPython's int %."""
    b = ctx.builder
    null = ir.Constant(PTR, None)
    dividend = _box_wide(ctx, x)
    _guard_made(ctx, uop, dividend)
    divisor = ctx.capi("PyLong_FromLongLong", y)
    ctx.guard(b.icmp_unsigned("!=", divisor, null), uop, before_exit=lambda: (ctx.decref(dividend), _clear(ctx)))
    remainder = ctx.capi("PyNumber_Remainder", dividend, divisor)
    ctx.decref(dividend)
    ctx.decref(divisor)
    _guard_made(ctx, uop, remainder)
    overflow = _entry_alloca(ctx, I32)
    value = ctx.capi("PyLong_AsLongLongAndOverflow", remainder, overflow)
    ctx.decref(remainder)
    return value
