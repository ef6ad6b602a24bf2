"""The table of lowerings (``LOWERINGS``, filled by ``@lowers``) and the helpers every lowering module shares."""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from codegen.capi import DOUBLE, I1, I64
from codegen.context import LowerContext
from jit.frontend.operators import CompareOp
from jit.trace import Uop

Lowering = Callable[[LowerContext, Uop], "ir.Value | None"]
LOWERINGS: dict[str, Lowering] = {}

INT_MIN = -(2**63)
INT_MAX = 2**63 - 1
TWO_53 = 2**53
TWO_63 = 9.223372036854775808e18
DBL_MIN = 2.2250738585072014e-308
_OVERFLOW_RESULT = ir.LiteralStructType([I64, I1])

_ICMP = {
    CompareOp.LT: "<",
    CompareOp.LE: "<=",
    CompareOp.EQ: "==",
    CompareOp.NE: "!=",
    CompareOp.GT: ">",
    CompareOp.GE: ">=",
}


def lowers(*names: str) -> Callable[[Lowering], Lowering]:
    def register(fn: Lowering) -> Lowering:
        for name in names:
            assert name not in LOWERINGS, name
            LOWERINGS[name] = fn
        return fn

    return register


def _args(ctx: LowerContext, uop: Uop) -> list[ir.Value]:
    return [ctx.value(v) for v in uop.args]


def _i64(value: int) -> ir.Constant:
    return ir.Constant(I64, value)


def _f64(value: float) -> ir.Constant:
    return ir.Constant(DOUBLE, value)


def _true() -> ir.Constant:
    return ir.Constant(I1, 1)


def _libm_call(ctx: LowerContext, name: str, *args: ir.Value) -> ir.Value:
    """Call the C library's own function, as CPython does. Declared ``nobuiltin``: LLVM must not rewrite it
    by what it knows of the function (pow(x, 2.0) into x * x, pow(x, -1.0) into 1.0 / x, ...), since those
    rewrites are correctly rounded and libm's results are not always (they would differ from CPython's)."""
    fn = ctx.callees.get(name)
    if fn is None:
        fn = ir.Function(ctx.module, ir.FunctionType(DOUBLE, [DOUBLE] * len(args)), name)
        ctx.callees[name] = fn
    if "nobuiltin" not in fn.attributes:
        fn.attributes.add("nobuiltin")
    return ctx.builder.call(fn, list(args))


def _const_arg(uop: Uop, index: int) -> object | None:
    """The constant value of an argument, if it is one (guards it satisfies need no code)."""
    v = uop.args[index]
    return v.const if v.is_const else None


def _guard_non_negative(ctx: LowerContext, uop: Uop, index: int) -> None:
    """Leave if argument index is negative (a ValueError, or a float result), unless it is a constant >= 0."""
    known = _const_arg(uop, index)
    if known is None or known < 0:  # type: ignore[operator]
        ctx.guard(ctx.builder.icmp_signed(">=", ctx.value(uop.args[index]), _i64(0)), uop)


def _floors(b: ir.IRBuilder, remainder: ir.Value, divisor: ir.Value) -> ir.Value:
    """C truncates toward zero, Python floors: the C remainder needs adjusting when it is nonzero and its sign
    differs from the divisor's."""
    return b.and_(b.icmp_signed("!=", remainder, _i64(0)), b.icmp_signed("<", b.xor(remainder, divisor), _i64(0)))


def _entry_alloca(ctx: LowerContext, ty: ir.Type) -> ir.Value:
    with ctx.builder.goto_block(ctx.function.entry_basic_block):
        return ctx.builder.alloca(ty)
