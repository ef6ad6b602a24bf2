"""Truth tests, identity and branches."""

from __future__ import annotations

from llvmlite import ir

from codegen import abi
from codegen.capi import I64
from codegen.context import LowerContext
from codegen.lower.objects import _load_at
from codegen.lower.table import (
    INT_MAX,
    _args,
    _const_arg,
    _f64,
    _i64,
    _true,
    lowers,
)
from jit.trace import Uop


@lowers("_TO_BOOL_INT")
def _to_bool_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.icmp_signed("!=", ctx.value(uop.args[0]), _i64(0))


@lowers("_TO_BOOL_FLOAT")
def _to_bool_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.fcmp_unordered("!=", ctx.value(uop.args[0]), _f64(0.0))


@lowers("_TO_BOOL_LIST", "_TO_BOOL_TUPLE")
def _to_bool_sized(ctx: LowerContext, uop: Uop) -> ir.Value:
    size = _load_at(ctx, ctx.value(uop.args[0]), abi.OB_SIZE, I64)
    return ctx.builder.icmp_signed("!=", size, _i64(0))


@lowers("_UNARY_NOT")
def _not(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.xor(ctx.value(uop.args[0]), _true())


@lowers("_IS_OP")
def _is_op(ctx: LowerContext, uop: Uop) -> ir.Value:
    x, y = _args(ctx, uop)
    return ctx.builder.icmp_unsigned("!=" if uop.operand else "==", x, y)


@lowers("_SELECT")
def _select(ctx: LowerContext, uop: Uop) -> ir.Value:
    condition, x, y = _args(ctx, uop)
    return ctx.builder.select(condition, x, y)


@lowers("_GUARD_IS_TRUE_POP")
def _guard_true(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(ctx.value(uop.args[0]), uop)


@lowers("_GUARD_IS_FALSE_POP")
def _guard_false(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(ctx.builder.not_(ctx.value(uop.args[0])), uop)


@lowers("_GUARD_UNIT_STEP")
def _guard_unit_step(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(ctx.builder.icmp_signed("==", ctx.value(uop.args[0]), _i64(1)), uop)


@lowers("_GUARD_COUNTER_ROOM")
def _guard_counter_room(ctx: LowerContext, uop: Uop) -> None:
    """(jit.optimizer.counters) the counter may grow by its step at each of the next abi.PERIOD iterations: as
    many as run until the next periodic check, which checks this again."""
    step = _const_arg(uop, 1)
    assert type(step) is int and 0 < step, step
    limit = INT_MAX - step * abi.PERIOD
    ctx.guard(ctx.builder.icmp_signed("<=", ctx.value(uop.args[0]), _i64(limit)), uop)


@lowers("_GUARD_NONZERO_INT")
def _guard_nonzero(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(ctx.builder.icmp_signed("!=", ctx.value(uop.args[0]), _i64(0)), uop)
