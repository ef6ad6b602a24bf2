"""Int arithmetic on int64 with CPython's semantics (overflow leaves, floor division, shifts)."""

from __future__ import annotations

from llvmlite import ir

from codegen.capi import DOUBLE, I1, I64
from codegen.context import LowerContext
from codegen.lower.table import (
    _ICMP,
    _OVERFLOW_RESULT,
    INT_MAX,
    INT_MIN,
    LOWERINGS,
    TWO_53,
    Lowering,
    _args,
    _const_arg,
    _floors,
    _guard_non_negative,
    _i64,
    lowers,
)
from jit.trace import Uop


def _with_overflow(name: str) -> Lowering:
    def lower(ctx: LowerContext, uop: Uop) -> ir.Value:
        b = ctx.builder
        result = ctx.intrinsic(f"llvm.{name}.with.overflow.i64", _OVERFLOW_RESULT, *_args(ctx, uop))
        value = b.extract_value(result, 0)  # (before the guard: a loop's last guard can then be its back-edge)
        ctx.guard(b.not_(b.extract_value(result, 1)), uop)
        return value

    return lower


LOWERINGS["_BINARY_OP_ADD_INT"] = _with_overflow("sadd")
LOWERINGS["_BINARY_OP_SUBTRACT_INT"] = _with_overflow("ssub")
_multiply_checked = _with_overflow("smul")


def factor_bounds(c: int) -> tuple[int, int] | None:
    """The interval of the ints x for which x * c fits i64 (exact), for a constant c other than 0 and -1 (None
    for those: every x fits, or all but one)."""
    if c > 0:
        return -(INT_MIN // -c), INT_MAX // c  # (ceiling and floor of the two quotients)
    if c < -1:
        return -(-INT_MAX // c), INT_MIN // c
    return None


@lowers("_BINARY_OP_MULTIPLY_INT")
def _multiply_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    """x * c by a constant c checks x against the bounds where the product fits, and multiplies without the
    overflow flag: the check is off the chain of the values, and LLVM turns the product into shifts and adds
    (3 * m + 1 into one lea, where the flag needs an imul of three cycles; collatz 13% faster)."""
    b = ctx.builder
    for index in (1, 0):
        c = _const_arg(uop, index)
        bounds = factor_bounds(c) if type(c) is int and INT_MIN <= c <= INT_MAX else None
        if bounds is not None:
            x = ctx.value(uop.args[1 - index])
            lo, hi = bounds
            product = b.mul(x, _i64(c), flags=["nsw"])  # type: ignore[arg-type]
            ctx.guard(b.and_(b.icmp_signed(">=", x, _i64(lo)), b.icmp_signed("<=", x, _i64(hi))), uop)
            return product
    return _multiply_checked(ctx, uop)


def _no_overflow(name: str) -> Lowering:
    """An operation the range analysis proved fits i64: no check (``nsw``: LLVM may rely on it)."""

    def lower(ctx: LowerContext, uop: Uop) -> ir.Value:
        return getattr(ctx.builder, name)(*_args(ctx, uop), flags=["nsw"])

    return lower


LOWERINGS["_BINARY_OP_MULTIPLY_INT_IN_RANGE"] = _no_overflow("mul")  # (+ and -: _add_in_range, _subtract_in_range)


@lowers("_GUARD_INT_RANGE")
def _guard_int_range(ctx: LowerContext, uop: Uop) -> None:
    """(jit.optimizer.affine) x within [lo, hi]: LLVM makes it one unsigned compare of x - lo."""
    b = ctx.builder
    x = ctx.value(uop.args[0])
    lo, hi = _const_arg(uop, 1), _const_arg(uop, 2)
    ctx.guard(b.and_(b.icmp_signed(">=", x, _i64(lo)), b.icmp_signed("<=", x, _i64(hi))), uop)  # type: ignore[arg-type]


@lowers("_INT_RANGE_PROVEN")
def _int_range_proven(ctx: LowerContext, uop: Uop) -> None:
    return None


@lowers("_BINARY_OP_FLOOR_DIVIDE_INT")
def _floordiv_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    x, y = _args(ctx, uop)
    if _const_arg(uop, 1) in (None, 0, -1):
        min_by_minus_one = b.and_(b.icmp_signed("==", x, _i64(INT_MIN)), b.icmp_signed("==", y, _i64(-1)))
        ctx.guard(b.and_(b.icmp_signed("!=", y, _i64(0)), b.not_(min_by_minus_one)), uop)
    quotient = b.sdiv(x, y)
    remainder = b.srem(x, y)
    return b.sub(quotient, b.zext(_floors(b, remainder, y), I64))


@lowers("_BINARY_OP_REMAINDER_INT")
def _mod_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    x, y = _args(ctx, uop)
    if _const_arg(uop, 1) in (None, 0):
        ctx.guard(b.icmp_signed("!=", y, _i64(0)), uop)
    safe_y = b.select(b.icmp_signed("==", y, _i64(-1)), _i64(1), y)  # INT_MIN % -1 overflows srem; the answer is 0
    remainder = b.srem(x, safe_y)
    return b.add(remainder, b.select(_floors(b, remainder, y), y, _i64(0)))


@lowers("_BINARY_OP_POWER_INT")
def _pow_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    """Square-and-multiply, leaving on a negative exponent (a float result) or on overflow."""
    b = ctx.builder
    base0, exp0 = _args(ctx, uop)
    _guard_non_negative(ctx, uop, 1)
    before = b.block
    head = ctx.function.append_basic_block("ipow_head")
    body = ctx.function.append_basic_block("ipow_body")
    done = ctx.function.append_basic_block("ipow_done")
    b.branch(head)
    b.position_at_end(head)
    result = b.phi(I64)
    base = b.phi(I64)
    exp = b.phi(I64)
    overflow = b.phi(I1)
    result.add_incoming(_i64(1), before)
    base.add_incoming(base0, before)
    exp.add_incoming(exp0, before)
    overflow.add_incoming(ir.Constant(I1, 0), before)
    b.cbranch(b.icmp_signed("==", exp, _i64(0)), done, body)
    b.position_at_end(body)
    bit = b.trunc(exp, I1)
    product = ctx.intrinsic("llvm.smul.with.overflow.i64", _OVERFLOW_RESULT, result, base)
    next_result = b.select(bit, b.extract_value(product, 0), result)
    next_exp = b.ashr(exp, _i64(1))
    square = ctx.intrinsic("llvm.smul.with.overflow.i64", _OVERFLOW_RESULT, base, base)
    square_matters = b.icmp_signed("!=", next_exp, _i64(0))
    next_overflow = b.or_(
        overflow, b.or_(b.and_(bit, b.extract_value(product, 1)), b.and_(square_matters, b.extract_value(square, 1)))
    )
    result.add_incoming(next_result, body)
    base.add_incoming(b.extract_value(square, 0), body)
    exp.add_incoming(next_exp, body)
    overflow.add_incoming(next_overflow, body)
    b.branch(head)
    b.position_at_end(done)
    ctx.guard(b.not_(overflow), uop)
    return result


@lowers("_BINARY_OP_LSHIFT_INT")
def _lshift_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    x, n = _args(ctx, uop)
    in_range = b.icmp_signed("<", n, _i64(64))
    amount = b.select(in_range, n, _i64(0))
    shifted = b.shl(x, amount)
    fits = b.and_(in_range, b.icmp_signed("==", b.ashr(shifted, amount), x))
    is_zero = b.icmp_signed("==", x, _i64(0))
    ctx.guard(b.and_(b.icmp_signed(">=", n, _i64(0)), b.or_(fits, is_zero)), uop)  # n < 0: ValueError
    return b.select(fits, shifted, _i64(0))


@lowers("_BINARY_OP_RSHIFT_INT")
def _rshift_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    x, n = _args(ctx, uop)
    _guard_non_negative(ctx, uop, 1)
    return b.ashr(x, b.select(b.icmp_signed("<", n, _i64(64)), n, _i64(63)))


def _bitwise(op: str) -> Lowering:
    def lower(ctx: LowerContext, uop: Uop) -> ir.Value:
        x, y = _args(ctx, uop)
        return getattr(ctx.builder, op)(x, y)

    return lower


for _kind in ("INT", "BOOL"):
    LOWERINGS[f"_BINARY_OP_AND_{_kind}"] = _bitwise("and_")
    LOWERINGS[f"_BINARY_OP_OR_{_kind}"] = _bitwise("or_")
    LOWERINGS[f"_BINARY_OP_XOR_{_kind}"] = _bitwise("xor")


@lowers("_BINARY_OP_TRUE_DIVIDE_INT")
def _truediv_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    x, y = _args(ctx, uop)

    def exact(v: ir.Value) -> ir.Value:
        return b.and_(b.icmp_signed(">=", v, _i64(-TWO_53)), b.icmp_signed("<=", v, _i64(TWO_53)))

    # both convert to double exactly, so one IEEE division is the correctly rounded quotient, as in CPython
    ctx.guard(b.and_(b.icmp_signed("!=", y, _i64(0)), b.and_(exact(x), exact(y))), uop)
    return b.fdiv(b.sitofp(x, DOUBLE), b.sitofp(y, DOUBLE))


@lowers("_UNARY_NEGATIVE_INT")
def _neg_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    (x,) = _args(ctx, uop)
    ctx.guard(b.icmp_signed("!=", x, _i64(INT_MIN)), uop)
    return b.neg(x)


@lowers("_UNARY_NEGATIVE_INT_IN_RANGE")
def _neg_int_unchecked(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.sub(_i64(0), ctx.value(uop.args[0]), flags=["nsw"])


@lowers("_UNARY_INVERT_INT")
def _invert_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.not_(ctx.value(uop.args[0]))


@lowers("_COMPARE_OP_INT")
def _compare_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    x, y = _args(ctx, uop)
    return ctx.builder.icmp_signed(_ICMP[uop.operand], x, y)
