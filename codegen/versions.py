"""The fast copy's conditions (``jit.versions``) as IR: one i1, true where every condition holds and no step of
evaluating them overflowed i64."""

from __future__ import annotations

from llvmlite import ir

from codegen import abi
from codegen.capi import I1, I64
from codegen.context import LowerContext
from jit.versions import Expr, Versioning

_OVERFLOW_RESULT = ir.LiteralStructType([I64, I1])
_CHECKED = {"add": "sadd", "sub": "ssub", "mul": "smul"}


def conditions_hold(ctx: LowerContext, versioning: Versioning) -> ir.Value:
    """Evaluate the conditions at the builder's position (each expression once)."""
    b = ctx.builder
    memo: dict[Expr, ir.Value] = {}
    ok: ir.Value = ir.Constant(I1, 1)

    def evaluate(expr: Expr) -> ir.Value:
        nonlocal ok
        known = memo.get(expr)
        if known is not None:
            return known
        if expr.op == "const":
            result: ir.Value = ir.Constant(I64, expr.const)
        elif expr.op == "value":
            result = ctx.value(expr.args[0])
        elif expr.op == "len":
            sequence = ctx.value(expr.args[0])
            size = b.gep(sequence, [ir.Constant(I64, abi.OB_SIZE)], inbounds=True)
            result = b.load(b.bitcast(size, I64.as_pointer()))
        else:
            a, c = evaluate(expr.args[0]), evaluate(expr.args[1])
            if expr.op in _CHECKED:
                pair = ctx.intrinsic(f"llvm.{_CHECKED[expr.op]}.with.overflow.i64", _OVERFLOW_RESULT, a, c)
                ok = b.and_(ok, b.not_(b.extract_value(pair, 1)))
                result = b.extract_value(pair, 0)
            else:
                smaller = b.icmp_signed("<", a, c)
                result = b.select(smaller, a, c) if expr.op == "min" else b.select(smaller, c, a)
        memo[expr] = result
        return result

    for condition in versioning.conditions:
        lhs, rhs = evaluate(condition.lhs), evaluate(condition.rhs)
        ok = b.and_(ok, b.icmp_signed("<=", lhs, rhs))
    return ok


def trips_left(ctx: LowerContext, cur: ir.Value, stop: ir.Value, step: ir.Value) -> tuple[ir.Value, ir.Value]:
    """The number of iterations a range loop at cur has left (exactly: those whose guard passes), and whether
    computing it overflowed nothing (else the number means nothing)."""
    b = ctx.builder
    zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)
    up = b.icmp_signed(">", step, zero)
    ahead = ctx.intrinsic("llvm.ssub.with.overflow.i64", _OVERFLOW_RESULT, stop, cur)
    behind = ctx.intrinsic("llvm.ssub.with.overflow.i64", _OVERFLOW_RESULT, cur, stop)
    distance = b.select(up, b.extract_value(ahead, 0), b.extract_value(behind, 0))
    overflowed = b.select(up, b.extract_value(ahead, 1), b.extract_value(behind, 1))
    size = b.select(up, step, b.sub(zero, step))  # (step is never 0; -2**63 is refused below)
    ok = b.and_(b.not_(overflowed), b.icmp_signed(">", size, zero))
    some = b.icmp_signed(">", distance, zero)
    # ceil(distance / size) for distance > 0, as (distance - 1) // size + 1; a step of 1 needs no division
    # (which takes tens of cycles: the check runs at every entry that gets past its first iteration)
    unit = b.icmp_signed("==", size, one)
    here = b.block
    divide = ctx.function.append_basic_block("trips_divide")
    done = ctx.function.append_basic_block("trips")
    b.cbranch(b.or_(unit, b.not_(b.and_(ok, some))), done, divide)
    b.position_at_end(divide)
    divided = b.add(b.udiv(b.sub(distance, one), size), one)
    b.branch(done)
    b.position_at_end(done)
    trips = b.phi(I64, name="trips")
    trips.add_incoming(distance, here)
    trips.add_incoming(divided, divide)
    return ok, b.select(some, trips, zero)
