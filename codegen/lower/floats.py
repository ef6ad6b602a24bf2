"""Float arithmetic and comparisons with CPython's semantics (-0.0, nan, inf, exact int/float compares)."""

from __future__ import annotations

import os

from llvmlite import ir

from codegen.capi import DOUBLE, I64
from codegen.context import LowerContext
from codegen.lower.table import (
    _ICMP,
    DBL_MIN,
    LOWERINGS,
    TWO_63,
    Lowering,
    _args,
    _const_arg,
    _f64,
    _i64,
    _libm_call,
    lowers,
)
from codegen.lower.wide_ints import _phi_if
from jit.frontend.operators import CompareOp
from jit.trace import Uop


def _float_op(op: str) -> Lowering:
    def lower(ctx: LowerContext, uop: Uop) -> ir.Value:
        x, y = _args(ctx, uop)
        return getattr(ctx.builder, op)(x, y)

    return lower


LOWERINGS["_BINARY_OP_ADD_FLOAT"] = _float_op("fadd")
LOWERINGS["_BINARY_OP_SUBTRACT_FLOAT"] = _float_op("fsub")
LOWERINGS["_BINARY_OP_MULTIPLY_FLOAT"] = _float_op("fmul")


def _nonzero_divisor(ctx: LowerContext, uop: Uop) -> tuple[ir.Value, ir.Value]:
    x, y = _args(ctx, uop)
    if not _const_arg(uop, 1):  # 0.0 and -0.0: ZeroDivisionError
        ctx.guard(ctx.builder.fcmp_unordered("!=", y, _f64(0.0)), uop)
    return x, y


@lowers("_BINARY_OP_TRUE_DIVIDE_FLOAT")
def _truediv_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    x, y = _nonzero_divisor(ctx, uop)
    return ctx.builder.fdiv(x, y)


def _float_mod(ctx: LowerContext, x: ir.Value, y: ir.Value) -> tuple[ir.Value, ir.Value]:
    """CPython's float modulo: fmod, then the remainder takes the divisor's sign. Returns (mod, adjusted)."""
    b = ctx.builder
    mod = b.frem(x, y)
    nonzero = b.fcmp_unordered("!=", mod, _f64(0.0))
    signs_differ = b.xor(b.fcmp_ordered("<", y, _f64(0.0)), b.fcmp_ordered("<", mod, _f64(0.0)))
    adjust = b.and_(nonzero, signs_differ)
    signed_zero = ctx.intrinsic("llvm.copysign.f64", DOUBLE, _f64(0.0), y)
    adjusted = b.select(adjust, b.fadd(mod, y), mod)
    return b.select(nonzero, adjusted, signed_zero), adjust


@lowers("_BINARY_OP_REMAINDER_FLOAT")
def _mod_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    x, y = _nonzero_divisor(ctx, uop)
    return _float_mod(ctx, x, y)[0]


@lowers("_BINARY_OP_FLOOR_DIVIDE_FLOAT")
def _floordiv_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    """CPython's _float_div_mod, step by step."""
    b = ctx.builder
    x, y = _nonzero_divisor(ctx, uop)
    raw_mod = b.frem(x, y)
    div = b.fdiv(b.fsub(x, raw_mod), y)
    _, adjust = _float_mod(ctx, x, y)
    div = b.select(adjust, b.fsub(div, _f64(1.0)), div)
    floor = ctx.intrinsic("llvm.floor.f64", DOUBLE, div)
    floor = b.select(b.fcmp_ordered(">", b.fsub(div, floor), _f64(0.5)), b.fadd(floor, _f64(1.0)), floor)
    zero = ctx.intrinsic("llvm.copysign.f64", DOUBLE, _f64(0.0), b.fdiv(x, y))
    return b.select(b.fcmp_unordered("!=", div, _f64(0.0)), floor, zero)


@lowers("_BINARY_OP_POWER_FLOAT")
def _pow_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    """CPython's float_pow for finite operands; nan, inf, 0 ** negative, negative ** fraction (a complex
    result), overflow and underflow all leave to the interpreter."""
    b = ctx.builder
    x, y = _args(ctx, uop)
    inf = _f64(float("inf"))
    fabs_x = ctx.intrinsic("llvm.fabs.f64", DOUBLE, x)
    fabs_y = ctx.intrinsic("llvm.fabs.f64", DOUBLE, y)
    finite = b.and_(b.fcmp_ordered("<", fabs_x, inf), b.fcmp_ordered("<", fabs_y, inf))
    y_integral = b.fcmp_ordered("==", ctx.intrinsic("llvm.floor.f64", DOUBLE, y), y)
    y_odd = b.fcmp_ordered("==", b.frem(fabs_y, _f64(2.0)), _f64(1.0))
    x_zero = b.fcmp_ordered("==", x, _f64(0.0))
    x_negative = b.fcmp_ordered("<", x, _f64(0.0))
    y_zero = b.fcmp_ordered("==", y, _f64(0.0))
    bad = b.or_(b.and_(x_zero, b.fcmp_ordered("<", y, _f64(0.0))), b.and_(x_negative, b.not_(y_integral)))
    ok = b.or_(y_zero, b.and_(finite, b.not_(bad)))
    ctx.guard(ok, uop)
    if _const_arg(uop, 1) == 0.5 and GLIBC_POW:
        magnitude = _square_root_as_pow(ctx, fabs_x)
    else:
        magnitude = _libm_call(ctx, "pow", fabs_x, y)
    magnitude = b.select(b.fcmp_ordered("==", fabs_x, _f64(1.0)), _f64(1.0), magnitude)
    general = b.select(b.and_(x_negative, y_odd), b.fneg(magnitude), magnitude)
    general_ok = b.and_(
        b.fcmp_ordered(">=", ctx.intrinsic("llvm.fabs.f64", DOUBLE, general), _f64(DBL_MIN)),
        b.fcmp_ordered("<", ctx.intrinsic("llvm.fabs.f64", DOUBLE, general), inf),
    )
    needs_general = b.and_(b.not_(y_zero), b.not_(x_zero))
    ctx.guard(b.or_(b.not_(needs_general), general_ok), uop)  # overflow (OverflowError) or underflow
    zero_case = b.select(y_odd, x, _f64(0.0))  # 0.0 ** odd keeps the zero's sign
    return b.select(y_zero, _f64(1.0), b.select(x_zero, zero_case, general))


def _glibc_pow() -> bool:
    """Is the C library's pow glibc's? Its documented worst-case error is 0.54 ULP (sysdeps/ieee754/dbl-64/
    e_pow.c since glibc 2.28; correctly rounded before): _square_root_as_pow relies on that bound."""
    try:
        return os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc ")  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return False


GLIBC_POW = _glibc_pow()
#: sqrt(x) stands for pow(x, 0.5) where it lies within this many ULPs of the exact square root: a pow within
#: 0.54 ULP of it then returns that very double (the next ones are more than 0.59 ULP away)
_SAFE_ULPS = 0.4


def _square_root_as_pow(ctx: LowerContext, x: ir.Value) -> ir.Value:
    """pow(x, 0.5) for a finite x > 0, as the C library's pow gives it, mostly without calling it: r =
    sqrt(x) is the double nearest the exact root s, and |r - s| = |r*r - x| / (r + s) (the residual exact with
    fma); where that is below _SAFE_ULPS of the spacing of doubles just below r (the smaller of r's two
    spacings), pow, off s by at most 0.54 ULP, returns r too. The others (~1 in 5; and tiny x, whose residual
    could underflow) call pow."""
    b = ctx.builder
    root = ctx.intrinsic("llvm.sqrt.f64", DOUBLE, x)
    residual = ctx.intrinsic("llvm.fma.f64", DOUBLE, root, root, b.fneg(x))
    below = b.bitcast(b.sub(b.bitcast(root, I64), _i64(1)), DOUBLE)
    spacing = b.fsub(root, below)  # (exact: r is a normal double)
    bound = b.fmul(b.fmul(root, spacing), _f64(2 * _SAFE_ULPS))  # (r + s >= 2r - spacing / 2: 1 + 2**-54 at most)
    near = b.fcmp_ordered("<", ctx.intrinsic("llvm.fabs.f64", DOUBLE, residual), bound)
    easy = b.and_(near, b.fcmp_ordered(">=", x, _f64(2.0**-900)))
    return _phi_if(ctx, b.not_(easy), lambda: _libm_call(ctx, "pow", x, _f64(0.5)), root)


@lowers("_UNARY_NEGATIVE_FLOAT")
def _neg_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.fneg(ctx.value(uop.args[0]))


@lowers("_COMPARE_OP_FLOAT")
def _compare_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    x, y = _args(ctx, uop)
    if uop.operand == CompareOp.NE:
        return ctx.builder.fcmp_unordered("!=", x, y)  # nan != anything
    return ctx.builder.fcmp_ordered(_ICMP[uop.operand], x, y)


@lowers("_COMPARE_OP_INT_FLOAT")
def _compare_int_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    """Exact comparison of an i64 with a double, as CPython compares int and float (no rounding of the int)."""
    b = ctx.builder
    x, y = _args(ctx, uop)
    is_nan = b.fcmp_unordered("uno", y, y)
    big = b.fcmp_ordered(">=", y, _f64(TWO_63))
    small = b.fcmp_ordered("<", y, _f64(-TWO_63))
    in_range = b.not_(b.or_(is_nan, b.or_(big, small)))
    safe_y = b.select(in_range, y, _f64(0.0))
    whole = b.fptosi(safe_y, I64)
    fraction = b.fsub(safe_y, b.sitofp(whole, DOUBLE))
    # order: -1, 0, 1 for x <, ==, > y
    by_whole = b.select(
        b.icmp_signed("<", x, whole),
        _i64(-1),
        b.select(b.icmp_signed(">", x, whole), _i64(1), _i64(0)),
    )
    by_fraction = b.select(
        b.fcmp_ordered(">", fraction, _f64(0.0)),
        _i64(-1),
        b.select(b.fcmp_ordered("<", fraction, _f64(0.0)), _i64(1), _i64(0)),
    )
    order = b.select(b.icmp_signed("!=", by_whole, _i64(0)), by_whole, by_fraction)
    order = b.select(big, _i64(-1), b.select(small, _i64(1), order))
    if uop.operand == CompareOp.NE:
        return b.or_(is_nan, b.icmp_signed("!=", order, _i64(0)))
    return b.and_(b.not_(is_nan), b.icmp_signed(_ICMP[uop.operand], order, _i64(0)))
