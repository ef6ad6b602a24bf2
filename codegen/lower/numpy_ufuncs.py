"""NumPy's math ufuncs on scalars (jit.ufuncs; jit.specialize_ufunc: the result types)."""

from __future__ import annotations

from llvmlite import ir

from codegen.capi import DOUBLE, I32, I64, PTR
from codegen.context import FLOAT32, LowerContext
from codegen.lower.table import (
    _args,
    _entry_alloca,
    _i64,
    lowers,
)
from jit import numpy_errstate, ufuncs
from jit.kinds import Kind
from jit.trace import Uop


def _suffix(ty: ir.Type) -> str:
    return "f32" if ty == FLOAT32 else "f64"


@lowers("_NP_SQRT")
def _np_sqrt(ctx: LowerContext, uop: Uop) -> ir.Value:
    """Correctly rounded, as NumPy's loops compute it; below zero (-inf too) NumPy reports invalid: leave
    (a NaN gives NaN, no event; -0.0 gives -0.0), checked with the next operations' (a deferred check:
    LowerContext.check_deferred), or by the processor's flags in a run checked at its end (codegen.float_status:
    the square root of a negative number raises its invalid flag)."""
    b = ctx.builder
    x = ctx.value(uop.args[0])
    result = ctx.intrinsic(f"llvm.sqrt.{_suffix(x.type)}", x.type, x)
    if "invalid" in ctx.ignored_events:  # (NumPy's error state ignores it: jit.numpy_errstate)
        return result

    def mark() -> ir.Value:
        below = b.fcmp_ordered("<", x, ir.Constant(x.type, 0.0))
        return b.select(below, ir.Constant(DOUBLE, float("nan")), ir.Constant(DOUBLE, 0.0))

    if ctx.status_covers(uop):
        ctx.note_covered(mark)
        return result
    ctx.check_deferred(mark(), uop)
    return result


@lowers("_NP_UFUNC_EXACT")
def _np_ufunc_exact(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    x = ctx.value(uop.args[0])
    name = uop.operand
    if x.type != I64:
        intrinsic = {"absolute": "fabs", "floor": "floor", "ceil": "ceil"}[name]
        return ctx.intrinsic(f"llvm.{intrinsic}.{_suffix(x.type)}", x.type, x)
    assert name == "absolute", name
    magnitude = b.select(b.icmp_signed("<", x, _i64(0)), b.sub(_i64(0), x), x)  # (wraps at -2**63, as NumPy)
    if uop.out.kind == Kind.NP_INT32:  # type: ignore[union-attr]
        return b.sext(b.trunc(magnitude, I32), I64)  # (abs(-2**31) wraps to -2**31, as NumPy's int32 loop)
    return magnitude


@lowers("_NP_MINMAX")
def _np_minmax(ctx: LowerContext, uop: Uop) -> ir.Value:
    """NumPy's minimum/maximum loops: the first operand if it is strictly smaller (larger) or a NaN, else the
    second (so a NaN on either side wins, and of equal values, -0.0 and 0.0 too, the second is the result)."""
    b = ctx.builder
    x, y = _args(ctx, uop)
    wanted = "<" if uop.operand == "minimum" else ">"
    if x.type == I64:
        return b.select(b.icmp_signed(wanted, x, y), x, y)
    first = b.or_(b.fcmp_ordered(wanted, x, y), b.fcmp_unordered("uno", x, x))
    return b.select(first, x, y)


@lowers("_NP_UFUNC_LOOP")
def _np_ufunc_loop(ctx: LowerContext, uop: Uop) -> ir.Value:
    """Call NumPy's inner loop of the ufunc on one element (args = {&in, &out}, dimensions = {1}, steps =
    {size, size}), the floating-point status flags cleared before and tested after, as NumPy does; leave if
    one of NumPy's events is flagged (the interpreter calls the ufunc again, which reports it), but those its
    error state ignores (``LowerContext.ignored_events``: np.exp's underflow, by default). The flags are cleared
    only where one of them is set: feclearexcept rewrites the x87 environment and MXCSR, and was most of the
    call's cost (a Gaussian sum of np.exp terms: 94 ns a term, 37 ns testing first); fetestexcept only reads them."""
    b = ctx.builder
    x = ctx.value(uop.args[0])
    char = "f" if x.type == FLOAT32 else "d"
    loop = ufuncs.inner_loop(uop.operand, char)
    bits, fenv = ufuncs.fe_bits(), ufuncs.fenv_functions()
    assert loop is not None and bits is not None and fenv is not None, "checked by the recorder"
    cell = _entry_alloca(ctx, ir.ArrayType(x.type, 2))
    zero = ir.Constant(I32, 0)
    into, out = (b.gep(cell, [zero, ir.Constant(I32, k)], inbounds=True) for k in (0, 1))
    args = _entry_alloca(ctx, ir.ArrayType(PTR, 2))
    for k, address in enumerate((into, out)):
        b.store(b.bitcast(address, PTR), b.gep(args, [zero, ir.Constant(I32, k)], inbounds=True))
    sizes = _entry_alloca(ctx, ir.ArrayType(I64, 3))  # dimensions[0], steps[0], steps[1]
    size = 4 if char == "f" else 8
    for k, value in enumerate((1, size, size)):
        b.store(_i64(value), b.gep(sizes, [zero, ir.Constant(I32, k)], inbounds=True))
    b.store(x, into)
    fenv_type = ir.FunctionType(I32, [I32])
    clear, test = (
        b.bitcast(ctx.symbols.address(name, address), fenv_type.as_pointer())
        for name, address in zip(("feclearexcept", "fetestexcept"), fenv)
    )
    # (the events NumPy reports, but those its error state ignores)
    ignored = {numpy_errstate.FENV_NAME[event] for event in ctx.ignored_events}
    events = sum(bit for name, bit in bits.items() if name not in ignored)
    mask = ir.Constant(I32, events)
    if events:
        with b.if_then(b.icmp_signed("!=", b.call(test, [mask]), ir.Constant(I32, 0)), likely=False):
            b.call(clear, [mask])
    loop_type = ir.FunctionType(ir.VoidType(), [PTR.as_pointer(), I64.as_pointer(), I64.as_pointer(), PTR])
    where = f"np_{uop.operand}_{char}"  # (symbols, not addresses: codegen.symbols)
    function = b.bitcast(ctx.symbols.address(where, loop.function), loop_type.as_pointer())
    dimensions = b.gep(sizes, [zero, zero], inbounds=True)
    steps = b.gep(sizes, [zero, ir.Constant(I32, 1)], inbounds=True)
    data = ctx.symbols.address(f"{where}_data", loop.data) if loop.data else ir.Constant(PTR, None)
    b.call(function, [b.bitcast(args, PTR.as_pointer()), dimensions, steps, data])
    result = b.load(out)
    if events:  # (else NumPy's state ignores every event: nothing to test)
        flagged = b.call(test, [mask])
        ctx.guard(b.icmp_signed("==", flagged, ir.Constant(I32, 0)), uop)
    return result
