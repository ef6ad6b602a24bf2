"""Lowerings of builtin functions and the math module."""

from __future__ import annotations

from llvmlite import ir

from codegen import abi
from codegen.capi import DOUBLE, I32, I64, PTR
from codegen.context import LowerContext
from codegen.lower.objects import _box, _load_at, _type_is
from codegen.lower.table import (
    INT_MIN,
    LOWERINGS,
    TWO_63,
    Lowering,
    _args,
    _entry_alloca,
    _f64,
    _i64,
    _libm_call,
    _true,
    lowers,
)
from jit.trace import Uop


@lowers("_CALL_ABS_INT")
def _abs_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    (x,) = _args(ctx, uop)
    ctx.guard(b.icmp_signed("!=", x, _i64(INT_MIN)), uop)
    return b.select(b.icmp_signed("<", x, _i64(0)), b.neg(x), x)


@lowers("_CALL_ABS_FLOAT")
def _abs_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.intrinsic("llvm.fabs.f64", DOUBLE, ctx.value(uop.args[0]))


def _fits(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """Is the double x's truncation an i64 (not nan, inf, nor past 64 bits)?"""
    return b.and_(b.fcmp_ordered(">=", x, _f64(-TWO_63)), b.fcmp_ordered("<", x, _f64(TWO_63)))


def _to_int(ctx: LowerContext, uop: Uop, rounded: ir.Value) -> ir.Value:
    """An integral double to i64, leaving for nan, inf and values past 64 bits (CPython makes a big int)."""
    ctx.guard(_fits(ctx.builder, rounded), uop)
    return ctx.builder.fptosi(rounded, I64)


def _rounding(intrinsic: str) -> Lowering:
    def lower(ctx: LowerContext, uop: Uop) -> ir.Value:
        return _to_int(ctx, uop, ctx.intrinsic(intrinsic, DOUBLE, ctx.value(uop.args[0])))

    return lower


@lowers("_CALL_FLOAT_TO_INT")
def _float_to_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    """int(x): fptosi truncates toward zero itself, and a double is within [-2**63, 2**63) exactly where its
    truncation is (no double lies strictly between -2**63 - 1 and -2**63): no rounding instruction on the way
    to the index it often is (``counts[int(x * scale)]``). Where the processor's status flags check the run
    (``codegen.float_status``: CONVERSIONS), no check either: x86-64's truncating conversion raises the invalid
    operation flag exactly where the check would fail (giving the "integer indefinite", INT64_MIN: an
    iteration that goes on with it is rolled back at its run's end, or where a guard fails after it)."""
    x = ctx.value(uop.args[0])
    if ctx.status_covers(uop):
        b = ctx.builder
        ctx.note_covered(lambda: b.select(_fits(b, x), _f64(0.0), _f64(float("nan"))))
        vector = b.insert_element(ir.Constant(ir.VectorType(DOUBLE, 2), ir.Undefined), x, ir.Constant(I32, 0))
        return ctx.intrinsic("llvm.x86.sse2.cvttsd2si64", I64, vector)
    return _to_int(ctx, uop, x)


LOWERINGS["_CALL_ROUND_FLOAT"] = _rounding("llvm.roundeven.f64")  # round(): half to even
LOWERINGS["_CALL_MATH_FLOOR"] = _rounding("llvm.floor.f64")
LOWERINGS["_CALL_MATH_CEIL"] = _rounding("llvm.ceil.f64")

_INTRINSIC_MATH = {"sqrt": "llvm.sqrt.f64", "fabs": "llvm.fabs.f64"}


@lowers("_CALL_MATH_UNARY")
def _math_unary(ctx: LowerContext, uop: Uop) -> ir.Value:
    """A libm function as CPython's math module calls it: a nan from a non-nan argument is a domain error,
    an inf from a finite one a range error; both leave, and the interpreter raises."""
    b = ctx.builder
    (x,) = _args(ctx, uop)
    name = uop.operand
    if name in _INTRINSIC_MATH:
        result = ctx.intrinsic(_INTRINSIC_MATH[name], DOUBLE, x)
    else:
        result = _libm_call(ctx, name, x)
    inf = _f64(float("inf"))
    domain = b.and_(b.fcmp_unordered("uno", result, result), b.fcmp_ordered("ord", x, x))
    finite_x = b.fcmp_ordered("<", ctx.intrinsic("llvm.fabs.f64", DOUBLE, x), inf)
    infinite_result = b.fcmp_ordered("==", ctx.intrinsic("llvm.fabs.f64", DOUBLE, result), inf)
    ctx.guard(b.not_(b.or_(domain, b.and_(finite_x, infinite_result))), uop)
    return result


@lowers("_CALL_MATH_PREDICATE")
def _math_predicate(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    (x,) = _args(ctx, uop)
    magnitude = ctx.intrinsic("llvm.fabs.f64", DOUBLE, x)
    inf = _f64(float("inf"))
    if uop.operand == "isnan":
        return b.fcmp_unordered("uno", x, x)
    if uop.operand == "isinf":
        return b.fcmp_ordered("==", magnitude, inf)
    return b.fcmp_ordered("<", magnitude, inf)


@lowers("_CALL_BUILTIN_FLOAT")
def _call_builtin_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    """Call a pure builtin through the C-API with boxed arguments; its float result is CPython's own."""
    b = ctx.builder
    boxed = [_box(ctx, v.kind, ctx.value(v)) for v in uop.args]

    def release_arguments() -> None:
        for obj in boxed:
            ctx.capi("Py_DecRef", obj)

    def clear_error() -> None:
        ctx.capi("PyErr_Clear")

    all_boxed = _true()
    for obj in boxed:
        all_boxed = b.and_(all_boxed, b.icmp_unsigned("!=", obj, ir.Constant(PTR, None)))
    ctx.guard(all_boxed, uop, before_exit=lambda: (release_arguments(), clear_error()))
    array = _entry_alloca(ctx, ir.ArrayType(PTR, max(len(boxed), 1)))
    for i, obj in enumerate(boxed):
        b.store(obj, b.gep(array, [ir.Constant(I32, 0), ir.Constant(I32, i)], inbounds=True))
    first = b.bitcast(array, PTR.as_pointer())
    result = ctx.capi("PyObject_Vectorcall", ctx.pointer(uop.operand), first, _i64(len(boxed)), ir.Constant(PTR, None))
    release_arguments()
    ctx.guard(b.icmp_unsigned("!=", result, ir.Constant(PTR, None)), uop, before_exit=clear_error)
    ctx.guard(_type_is(ctx, result, float), uop, before_exit=lambda: ctx.capi("Py_DecRef", result))
    value = _load_at(ctx, result, abi.FLOAT_VALUE, DOUBLE)
    ctx.capi("Py_DecRef", result)
    return value
