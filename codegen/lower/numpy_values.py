"""NumPy arrays and scalars (jit.arrays: the header's layout; jit.specialize_numpy: what the uops mean)."""

from __future__ import annotations

from llvmlite import ir

from codegen.capi import DOUBLE, I1, I32, I64, I128, PTR
from codegen.context import FLOAT32, LowerContext, llvm_type
from codegen.lower.ints import _with_overflow
from codegen.lower.objects import _load_at, _type_is
from codegen.lower.table import (
    _ICMP,
    DBL_MIN,
    INT_MIN,
    LOWERINGS,
    TWO_63,
    Lowering,
    _args,
    _entry_alloca,
    _f64,
    _i64,
    lowers,
)
from jit import arrays, numpy_errstate
from jit.frontend.operators import CompareOp
from jit.kinds import NUMPY_INT_RANGES, Kind
from jit.trace import Uop, Value

_STORAGE = {
    "float64": DOUBLE,
    "float32": ir.FloatType(),
    "int64": I64,
    "int32": I32,
    "uint8": ir.IntType(8),
    "bool": ir.IntType(8),
}


def _array_field(ctx: LowerContext, array: ir.Value, offset: int, ty: ir.Type) -> ir.Value:
    return _load_at(ctx, array, offset, ty)


def _array_vector(ctx: LowerContext, array: ir.Value, offset: int, axis: int) -> ir.Value:
    """dimensions[axis] or strides[axis] (offset: arrays.ARRAY_DIMENSIONS or arrays.ARRAY_STRIDES)."""
    b = ctx.builder
    vector = b.bitcast(_array_field(ctx, array, offset, PTR), I64.as_pointer())
    return b.load(b.gep(vector, [_i64(axis)], inbounds=True))


@lowers("_GUARD_ARRAY")
def _guard_array(ctx: LowerContext, uop: Uop) -> None:
    """Exactly numpy.ndarray, its dtype's scalar type in native byte order, ndim, aligned (and C-contiguous)."""
    b = ctx.builder
    spec = uop.operand
    np = arrays.numpy_module()
    array = ctx.value(uop.args[0])
    ok = _type_is(ctx, array, np.ndarray)
    descr = _array_field(ctx, array, arrays.ARRAY_DESCR, PTR)
    typeobj = _load_at(ctx, descr, arrays.DESCR_TYPEOBJ, PTR)
    ok = b.and_(ok, b.icmp_unsigned("==", typeobj, ctx.pointer(np.dtype(spec.dtype).type)))
    byteorder = _load_at(ctx, descr, arrays.DESCR_BYTEORDER, ir.IntType(8))
    ok = b.and_(ok, b.icmp_unsigned("!=", byteorder, ir.Constant(ir.IntType(8), ord(">"))))
    nd = _array_field(ctx, array, arrays.ARRAY_ND, I32)
    ok = b.and_(ok, b.icmp_signed("==", nd, ir.Constant(I32, spec.ndim)))
    mask = arrays.ALIGNED | (arrays.C_CONTIGUOUS if spec.contiguous else 0)
    flags = _array_field(ctx, array, arrays.ARRAY_FLAGS, I32)
    ok = b.and_(ok, b.icmp_unsigned("==", b.and_(flags, ir.Constant(I32, mask)), ir.Constant(I32, mask)))
    ctx.guard(ok, uop)


@lowers("_GUARD_NP_ERRSTATE")
def _guard_np_errstate(ctx: LowerContext, uop: Uop) -> None:
    """NumPy's error state, as this thread's ContextVar holds it (a capsule of npy_extobj, errmask first), still
    ignores the events of the operand (their modes are 0). Not where NumPy's state cannot be read: the recorder
    emits none then."""
    b = ctx.builder
    contextvar = numpy_errstate.access()
    assert contextvar is not None, "the recorder guards the error state only where it can be read"
    holder = _entry_alloca(ctx, PTR)
    b.store(ir.Constant(PTR, None), holder)
    status = ctx.capi("PyContextVar_Get", ctx.pointer(contextvar), ir.Constant(PTR, None), holder)
    capsule = b.load(holder)
    read_ok = b.icmp_signed("==", status, ir.Constant(I32, 0))
    with b.if_then(b.not_(read_ok), likely=False):
        ctx.capi("PyErr_Clear")  # (never seen: NumPy's ContextVar is one; the guard fails and leaves, as a guard does)
    got = b.and_(read_ok, b.icmp_unsigned("!=", capsule, ir.Constant(PTR, None)))
    here = b.block
    with b.if_then(got, likely=True):
        extobj = _load_at(ctx, capsule, numpy_errstate.CAPSULE_POINTER, PTR)
        errmask = b.load(b.bitcast(extobj, I32.as_pointer()))
        ctx.capi("Py_DecRef", capsule)  # (a new reference; the context holds another)
        read = b.block
    mask = b.phi(I32)
    mask.add_incoming(ir.Constant(I32, -1), here)
    mask.add_incoming(errmask, read)
    quiet = b.icmp_unsigned("==", b.and_(mask, ir.Constant(I32, uop.operand.mask)), ir.Constant(I32, 0))
    ctx.guard(quiet, uop)


@lowers("_GUARD_ARRAY_WRITEABLE")
def _guard_array_writeable(ctx: LowerContext, uop: Uop) -> None:
    b = ctx.builder
    flags = _array_field(ctx, ctx.value(uop.args[0]), arrays.ARRAY_FLAGS, I32)
    writeable = ir.Constant(I32, arrays.WRITEABLE)
    ctx.guard(b.icmp_unsigned("!=", b.and_(flags, writeable), ir.Constant(I32, 0)), uop)


@lowers("_ARRAY_DATA")
def _array_data(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.ptrtoint(_array_field(ctx, ctx.value(uop.args[0]), arrays.ARRAY_DATA, PTR), I64)


@lowers("_ARRAY_DIM")
def _array_dim(ctx: LowerContext, uop: Uop) -> ir.Value:
    return _array_vector(ctx, ctx.value(uop.args[0]), arrays.ARRAY_DIMENSIONS, uop.operand)


@lowers("_ARRAY_STRIDE")
def _array_stride(ctx: LowerContext, uop: Uop) -> ir.Value:
    return _array_vector(ctx, ctx.value(uop.args[0]), arrays.ARRAY_STRIDES, uop.operand)


@lowers("_ARRAY_SIZE")
def _array_size(ctx: LowerContext, uop: Uop) -> ir.Value:
    array = ctx.value(uop.args[0])
    size: ir.Value = _i64(1)
    for axis in range(uop.operand.ndim):
        size = ctx.builder.mul(size, _array_vector(ctx, array, arrays.ARRAY_DIMENSIONS, axis))
    return size


@lowers("_ARRAY_INDEX")
def _array_index(ctx: LowerContext, uop: Uop) -> ir.Value:
    """NumPy's index check: negative indices count from the end; out of range leaves (IndexError)."""
    b = ctx.builder
    dim, index = _args(ctx, uop)
    index = b.select(b.icmp_signed("<", index, _i64(0)), b.add(index, dim), index)
    ctx.guard(b.icmp_unsigned("<", index, dim), uop)  # unsigned: still negative is out of range too
    return index


@lowers("_ARRAY_INDEX_FROM_END")
def _array_index_from_end(ctx: LowerContext, uop: Uop) -> ir.Value:
    dim, index = _args(ctx, uop)
    return ctx.builder.add(index, dim, flags=["nsw"])


@lowers("_ARRAY_INDEX_IN_RANGE")
def _array_index_in_range(ctx: LowerContext, uop: Uop) -> ir.Value:
    dim, index = _args(ctx, uop)
    ctx.guard(ctx.builder.icmp_unsigned("<", index, dim), uop)  # (unsigned: a negative index leaves too)
    return index


@lowers("_GUARD_INDEX_RANGE")
def _guard_index_range(ctx: LowerContext, uop: Uop) -> None:
    """low <= base < dimension - high for each dimension (in i128: a broadcast view's dimension may be near
    2**63)."""
    b = ctx.builder
    base, low, *pairs = _args(ctx, uop)
    ok = b.icmp_signed(">=", base, low)
    for dim, high in zip(pairs[::2], pairs[1::2]):
        limit = b.sub(b.sext(dim, I128), b.sext(high, I128))
        ok = b.and_(ok, b.icmp_signed("<", b.sext(base, I128), limit))
    ctx.guard(ok, uop)


@lowers("_INDEX_RANGE_PROVEN")
def _index_range_proven(ctx: LowerContext, uop: Uop) -> None:
    return None


@lowers("_BINARY_OP_ADD_INT_IN_RANGE")
def _add_in_range(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.add(*_args(ctx, uop), flags=["nsw"])


@lowers("_BINARY_OP_SUBTRACT_INT_IN_RANGE")
def _subtract_in_range(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.sub(*_args(ctx, uop), flags=["nsw"])


def element_address(ctx: LowerContext, spec: arrays.ArraySpec, inputs: list[ir.Value]) -> ir.Value:
    """The address of an element from _ARRAY_LOAD's inputs (data, checked indices, then the dimensions after
    the first or the strides): row-major from the shape for a C-contiguous array, else from its strides."""
    b = ctx.builder
    data, indices, rest = inputs[0], inputs[1 : 1 + spec.ndim], inputs[1 + spec.ndim :]
    if spec.contiguous:
        linear = indices[0]
        for axis in range(1, spec.ndim):
            linear = b.add(b.mul(linear, rest[axis - 1], flags=["nsw"]), indices[axis], flags=["nsw"])
        offset = b.mul(linear, _i64(spec.item.itemsize), flags=["nsw"])
    else:
        offset = b.mul(indices[0], rest[0], flags=["nsw"])
        for axis in range(1, spec.ndim):
            offset = b.add(offset, b.mul(indices[axis], rest[axis], flags=["nsw"]), flags=["nsw"])
    # (an offset from the data pointer, not an integer address: LLVM's loop vectorizer sees consecutive elements
    # as such only through a pointer's arithmetic; in bounds: every element of an array, views included, is in
    # the one allocation its data points into)
    base = b.inttoptr(data, ir.IntType(8).as_pointer())
    return b.bitcast(b.gep(base, [offset], inbounds=True), _STORAGE[spec.dtype].as_pointer())


@lowers("_ARRAY_LOAD")
def _array_load(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    spec = uop.operand
    loaded = b.load(element_address(ctx, spec, _args(ctx, uop)), align=spec.item.itemsize)
    kind = uop.out.kind  # type: ignore[union-attr]
    if kind == Kind.NP_BOOL:
        return b.icmp_unsigned("!=", loaded, ir.Constant(loaded.type, 0))
    if kind == Kind.NP_INT32:
        return b.sext(loaded, I64)
    if kind == Kind.NP_UINT8:
        return b.zext(loaded, I64)
    return loaded


def _in_range(ctx: LowerContext, value: ir.Value, kind: Kind) -> ir.Value:
    """Does an i64 hold a value of NumPy int kind's range?"""
    b = ctx.builder
    low, high = NUMPY_INT_RANGES[kind]
    return b.and_(b.icmp_signed(">=", value, _i64(low)), b.icmp_signed("<=", value, _i64(high)))


def _store_conversion(ctx: LowerContext, uop: Uop, value: Value, dtype: str) -> ir.Value:
    """value as an element of dtype, as NumPy converts it; leaves where NumPy raises or warns."""
    b = ctx.builder
    native = ctx.value(value)
    storage = _STORAGE[dtype]
    if dtype in ("int32", "uint8"):  # (from a Python int in its range, a bool, or a NumPy int that fits)
        if native.type == I1:
            return b.zext(native, storage)
        if value.kind == Kind.INT:
            ctx.guard(_in_range(ctx, native, Kind.NP_INT32 if dtype == "int32" else Kind.NP_UINT8), uop)
        return b.trunc(native, storage)
    if native.type == FLOAT32:  # (exactly as a double)
        native = b.fpext(native, DOUBLE)
    is_double = native.type == DOUBLE
    if dtype == "float32":
        if value.kind == Kind.NP_FLOAT32:
            return ctx.value(value)
        if is_double:  # rounded; overflow (NumPy warns: "overflow encountered in cast") and underflow leave
            result = b.fptrunc(native, FLOAT32)
            ctx.guard(_event_free(ctx, result, True, b.fcmp_ordered("==", native, _f64(0.0))), uop)
            return result
        return b.sitofp(native, FLOAT32) if native.type == I64 else b.uitofp(native, FLOAT32)
    if dtype == "bool":
        if is_double:
            truth = b.fcmp_unordered("!=", native, _f64(0.0))  # nan is true
        elif native.type == I1:
            truth = native
        else:
            truth = b.icmp_signed("!=", native, _i64(0))
        return b.zext(truth, storage)
    if native.type == I1:
        native = b.zext(native, I64)
    if dtype == "float64":
        return native if is_double else b.sitofp(native, DOUBLE)
    assert dtype == "int64", dtype
    if not is_double:
        return native
    # truncation toward zero, as a C cast; NaN and values outside int64 leave (ValueError, OverflowError)
    in_range = b.and_(b.fcmp_ordered(">=", native, _f64(-TWO_63)), b.fcmp_ordered("<", native, _f64(TWO_63)))
    ctx.guard(in_range, uop)
    return b.fptosi(native, I64)


@lowers("_ARRAY_STORE")
def _array_store(ctx: LowerContext, uop: Uop) -> None:
    b = ctx.builder
    value, *inputs = uop.args
    spec = uop.operand
    converted = _store_conversion(ctx, uop, value, spec.dtype)
    address = element_address(ctx, spec, [ctx.value(v) for v in inputs])
    if ctx.undo is not None:  # (the old value, for a rollback of the run)
        ctx.undo(address, _loaded_before(ctx, uop))
    b.store(converted, address, align=spec.item.itemsize)


def _loaded_before(ctx: LowerContext, store: Uop) -> ir.Value | None:
    """(A logged store: its old value) the element's bits as a read of the same element earlier in the
    iteration loaded them (``a[k] += 1``), with nothing stored since: the log takes them rather than a second
    load of the element, which LLVM, its store to the log between, would not see is the same (the trace
    pipeline has no value numbering across memory)."""
    position = ctx.position
    uops = ctx.trace.uops
    if position is None or not 0 <= position < len(uops) or uops[position] is not store:
        return None
    for uop in reversed(uops[:position]):
        if uop.op.mutates or uop.name == "_JUMP_TO_TOP":
            return None
        same = len(uop.args) == len(store.args) - 1 and all(a is b for a, b in zip(uop.args, store.args[1:]))
        if uop.name == "_ARRAY_LOAD" and uop.operand == store.operand and same:
            loaded = ctx.values.get(uop.out.id) if uop.out is not None else None
            if loaded is None or loaded.type not in (I64, DOUBLE):
                return None
            return loaded if loaded.type == I64 else ctx.builder.bitcast(loaded, I64)
    return None


@lowers("_NP_CAST")
def _np_cast(ctx: LowerContext, uop: Uop) -> ir.Value:
    """Between numeric kinds of the same value, exactly or rounded as NumPy casts: ints (and bools) to a
    double or a float, a float to a double, NumPy scalars to the Python numbers of the same width."""
    b = ctx.builder
    value = ctx.value(uop.args[0])
    target = llvm_type(uop.out.kind)  # type: ignore[union-attr]
    if value.type == target:
        return value
    if target in (DOUBLE, FLOAT32):
        if value.type == FLOAT32:
            return b.fpext(value, DOUBLE)
        return b.sitofp(value, target) if value.type == I64 else b.uitofp(value, target)
    assert value.type == I1 and target == I64
    return b.zext(value, I64)


FLT_MIN = 1.1754943508222875e-38


def _event_free(ctx: LowerContext, result: ir.Value, tiny_matters: bool, zero_ok: ir.Value) -> ir.Value:
    """No floating-point event NumPy would report (a double or a float result): the result is finite, and
    (for * and /) not tiny unless it is an exact zero (zero_ok: an operand made it zero). A nan or inf
    operand leaves too (conservative: the interpreter redoes it)."""
    b = ctx.builder
    ty = result.type
    smallest, suffix = (DBL_MIN, "f64") if ty == DOUBLE else (FLT_MIN, "f32")
    magnitude = ctx.intrinsic(f"llvm.fabs.{suffix}", ty, result)
    ok = b.fcmp_ordered("<", magnitude, ir.Constant(ty, float("inf")))
    if tiny_matters:
        normal = b.fcmp_ordered(">=", magnitude, ir.Constant(ty, smallest))
        zero = b.and_(b.fcmp_ordered("==", result, ir.Constant(ty, 0.0)), zero_ok)
        ok = b.and_(ok, b.or_(normal, zero))
    return ok


#: NumPy float operations whose result is not finite wherever an operand is not (inf + -inf, inf * 0: NaN)
_ABSORBING = frozenset(
    f"_NP_BINARY_OP_{name}_{width}" for name in ("ADD", "SUBTRACT", "MULTIPLY") for width in ("FLOAT64", "FLOAT32")
)


def _finite_checked_later(ctx: LowerContext, uop: Uop) -> bool:
    """Is a NumPy float operation's result, if not finite, sure to make a later mark of the same deferred check
    NaN: one of + - * (_ABSORBING) takes it before the next uop that is not pure (where the deferred marks are
    tested, LowerContext.flush_deferred; or a run's flag summed, codegen.function)? Then its own test of the
    result (``result * 0``) is redundant: that later mark covers it, and the deferred check still leaves
    through the exit of the first operation (the interpreter redoes them all and reports the event where
    NumPy would). Only where the check is deferred: an immediate one (owned values live) leaves at once."""
    position = ctx.position
    trace = ctx.trace
    if (
        uop.out is None
        or position is None
        or not 0 <= position < len(trace.uops)
        or trace.uops[position].out is not uop.out
    ):
        return False
    if ctx.deferred is None and ctx.ownership.live_at(position):
        return False
    if ctx.ignored_events & numpy_errstate.NON_FINITE_DIVISION:  # (a later mark may not test its finiteness)
        return False
    for later in trace.uops[position + 1 :]:
        if not (later.op.pure and not later.op.owns) and later.name not in DEFERRING:
            return False  # (the deferred marks are tested here: the result's own must be among them)
        if later.name in _ABSORBING and any(arg is uop.out for arg in later.args):
            return True
    return False


def _event_mark(
    ctx: LowerContext, op: str, x: ir.Value, y: ir.Value, result: ir.Value, finite: bool = True
) -> ir.Value:
    """A double that is +0 or -0 where the operation had no floating-point event NumPy would report, else NaN (as
    _event_free: a result that is not finite, a tiny result of * or / from operands that are not zero, a
    division by zero). Marks add up to a NaN where any is one, so checks of many operations are one compare of
    their sum (LowerContext.check_deferred), or an or of its bits (codegen.function: a run's flag); computed in
    the floating-point unit, without branches. finite=False: the result's finiteness is left to a later mark
    (_finite_checked_later). The events NumPy's error state ignores (``LowerContext.ignored_events``) are not
    tested: a tiny result where it ignores underflow; a result that is not finite where it ignores overflow
    and invalid results (and, for /, division by zero); a division by zero where it ignores that."""
    b = ctx.builder
    ty = result.type
    zero = ir.Constant(ty, 0.0)
    ignored = ctx.ignored_events
    if ignored >= (numpy_errstate.NON_FINITE_DIVISION if op == "fdiv" else numpy_errstate.NON_FINITE):
        finite = False
    # (a multiplication: the adds of a loop's arithmetic are on other ports of the floating-point unit)
    # 0 (or -0) where the result is finite, NaN where it is not; -0 adds nothing to a sum (folded away)
    mark = b.fmul(result, zero) if finite else ir.Constant(ty, -0.0)
    tiny_matters = op in ("fmul", "fdiv") and "under" not in ignored
    by_zero = op == "fdiv" and "divide" not in ignored  # (division by zero: NumPy's warning)
    if tiny_matters or by_zero:
        bad = ir.Constant(I1, 0)
        if tiny_matters:
            smallest, suffix = (DBL_MIN, "f64") if ty == DOUBLE else (FLT_MIN, "f32")
            tiny = b.fcmp_ordered("<", ctx.intrinsic(f"llvm.fabs.{suffix}", ty, result), ir.Constant(ty, smallest))
            # (x and y not zero: a result that small is a denormal or a zero from an underflow)
            bad = b.and_(tiny, b.fcmp_unordered("!=", x, zero))
            if op == "fmul":
                bad = b.and_(bad, b.fcmp_unordered("!=", y, zero))
        if by_zero:
            bad = b.or_(bad, b.fcmp_ordered("==", y, zero))
        bad_mark = b.select(bad, ir.Constant(ty, float("nan")), zero)
        mark = b.fadd(mark, bad_mark) if finite else bad_mark
    return mark if ty == DOUBLE else b.fpext(mark, DOUBLE)


def _np_float_op(op: str) -> Lowering:
    """numpy.float64 or numpy.float32 arithmetic (by the inputs' type), leaving on every floating-point event
    (checked with the next operations' in one guard: LowerContext.check_deferred)."""

    def lower(ctx: LowerContext, uop: Uop) -> ir.Value:
        x, y = _args(ctx, uop)
        result = getattr(ctx.builder, op)(x, y)
        if ctx.status_covers(uop):
            ctx.note_covered(lambda: _event_mark(ctx, op, x, y, result))
            return result
        # (the operation has no other effect: its check may wait, with the next ones', for one guard)
        finite = not _finite_checked_later(ctx, uop)
        ctx.check_deferred(_event_mark(ctx, op, x, y, result, finite), uop)
        return result

    return lower


#: the uops whose check waits for the next that is not pure (LowerContext.check_deferred): pure but for it
#: (NumPy's float arithmetic, and np.sqrt: codegen.lower.numpy_ufuncs)
DEFERRING = frozenset(
    f"_NP_BINARY_OP_{name}_{width}"
    for name in ("ADD", "SUBTRACT", "MULTIPLY", "TRUE_DIVIDE")
    for width in ("FLOAT64", "FLOAT32")
) | {"_NP_SQRT"}
for _width in ("FLOAT64", "FLOAT32"):
    LOWERINGS[f"_NP_BINARY_OP_ADD_{_width}"] = _np_float_op("fadd")
    LOWERINGS[f"_NP_BINARY_OP_SUBTRACT_{_width}"] = _np_float_op("fsub")
    LOWERINGS[f"_NP_BINARY_OP_MULTIPLY_{_width}"] = _np_float_op("fmul")
    LOWERINGS[f"_NP_BINARY_OP_TRUE_DIVIDE_{_width}"] = _np_float_op("fdiv")


@lowers("_NP_TO_FLOAT32")
def _np_to_float32(ctx: LowerContext, uop: Uop) -> ir.Value:
    """A double rounded to float32 (NumPy's cast of a Python float); leaves where the cast overflows or
    underflows (NumPy reports those), and for nan and infinities (conservative)."""
    b = ctx.builder
    x = ctx.value(uop.args[0])
    result = b.fptrunc(x, FLOAT32)
    ctx.guard(_event_free(ctx, result, True, b.fcmp_ordered("==", x, _f64(0.0))), uop)
    return result


@lowers("_NP_UNARY_NEGATIVE_FLOAT32")
def _np_neg_float32(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.fneg(ctx.value(uop.args[0]))


@lowers("_NP_ABS_FLOAT32")
def _np_abs_float32(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.intrinsic("llvm.fabs.f32", FLOAT32, ctx.value(uop.args[0]))


LOWERINGS["_NP_BINARY_OP_ADD_INT64"] = _with_overflow("sadd")
LOWERINGS["_NP_BINARY_OP_SUBTRACT_INT64"] = _with_overflow("ssub")
LOWERINGS["_NP_BINARY_OP_MULTIPLY_INT64"] = _with_overflow("smul")


@lowers("_NP_COMPARE_OP_FLOAT64", "_NP_COMPARE_OP_FLOAT32")
def _np_compare_float64(ctx: LowerContext, uop: Uop) -> ir.Value:
    x, y = _args(ctx, uop)
    if uop.operand == CompareOp.NE:
        return ctx.builder.fcmp_unordered("!=", x, y)
    return ctx.builder.fcmp_ordered(_ICMP[uop.operand], x, y)


@lowers("_NP_COMPARE_OP_INT64")
def _np_compare_int64(ctx: LowerContext, uop: Uop) -> ir.Value:
    x, y = _args(ctx, uop)
    return ctx.builder.icmp_signed(_ICMP[uop.operand], x, y)


@lowers("_NP_UNARY_NEGATIVE_FLOAT64")
def _np_neg_float64(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.fneg(ctx.value(uop.args[0]))


@lowers("_NP_ABS_FLOAT64")
def _np_abs_float64(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.intrinsic("llvm.fabs.f64", DOUBLE, ctx.value(uop.args[0]))


def _not_int64_min(ctx: LowerContext, uop: Uop) -> ir.Value:
    """The input, after leaving if it is -2**63 (its negation and absolute value overflow: NumPy warns)."""
    value = ctx.value(uop.args[0])
    ctx.guard(ctx.builder.icmp_signed("!=", value, _i64(INT_MIN)), uop)
    return value


@lowers("_NP_UNARY_NEGATIVE_INT64")
def _np_neg_int64(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.neg(_not_int64_min(ctx, uop))


@lowers("_NP_ABS_INT64")
def _np_abs_int64(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    value = _not_int64_min(ctx, uop)
    return b.select(b.icmp_signed("<", value, _i64(0)), b.neg(value), value)


def _np_small_int_op(op: str) -> Lowering:
    """numpy.int32 or numpy.uint8 arithmetic on i64 operands within 32 bits (exact in i64), leaving where the
    result is outside the output kind's range (NumPy warns: overflow)."""

    def lower(ctx: LowerContext, uop: Uop) -> ir.Value:
        x, y = _args(ctx, uop)
        result = getattr(ctx.builder, op)(x, y)
        ctx.guard(_in_range(ctx, result, uop.out.kind), uop)  # type: ignore[union-attr]
        return result

    return lower


LOWERINGS["_NP_BINARY_OP_ADD_SMALL_INT"] = _np_small_int_op("add")
LOWERINGS["_NP_BINARY_OP_SUBTRACT_SMALL_INT"] = _np_small_int_op("sub")
LOWERINGS["_NP_BINARY_OP_MULTIPLY_SMALL_INT"] = _np_small_int_op("mul")


@lowers("_NP_CHECK_RANGE")
def _np_check_range(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(_in_range(ctx, ctx.value(uop.args[0]), uop.operand), uop)


_MADE_BY = {"_ARRAY_EMPTY": arrays.API_EMPTY, "_ARRAY_ZEROS": arrays.API_ZEROS, "_ARRAY_ONES": arrays.API_EMPTY}


@lowers("_ARRAY_EMPTY", "_ARRAY_ZEROS", "_ARRAY_ONES")
def _array_new(ctx: LowerContext, uop: Uop) -> ir.Value:
    """numpy.empty/zeros/ones(shape, dtype): NumPy's PyArray_Empty or PyArray_Zeros (which steals a reference
    to the dtype), then for ones PyArray_FillWithScalar with the int 1. A negative dimension leaves first (NumPy
    raises ValueError; the interpreter calls it again); a failed allocation leaves with the error cleared."""
    b = ctx.builder
    spec = uop.operand
    dims = [ctx.value(v) for v in uop.args]
    ok = ir.Constant(I1, 1)
    for dim in dims:
        ok = b.and_(ok, b.icmp_signed(">=", dim, _i64(0)))
    ctx.guard(ok, uop)
    cell = _entry_alloca(ctx, ir.ArrayType(I64, len(dims)))
    zero = ir.Constant(I32, 0)
    for axis, dim in enumerate(dims):
        b.store(dim, b.gep(cell, [zero, ir.Constant(I32, axis)], inbounds=True))
    descr = ctx.symbols.pointer(arrays.numpy_module().dtype(spec.dtype))
    ctx.incref(descr)
    index = _MADE_BY[uop.name]
    address = arrays.api_function(index)
    assert address is not None, "checked by the recorder"
    make_type = ir.FunctionType(PTR, [I32, I64.as_pointer(), PTR, I32])
    make = b.bitcast(ctx.symbols.address(f"np_api_{index}", address), make_type.as_pointer())
    made = b.call(make, [ir.Constant(I32, len(dims)), b.gep(cell, [zero, zero], inbounds=True), descr, zero])
    ctx.guard(b.icmp_unsigned("!=", made, ir.Constant(PTR, None)), uop, before_exit=lambda: ctx.capi("PyErr_Clear"))
    if uop.name == "_ARRAY_ONES":
        fill_address = arrays.api_function(arrays.API_FILL_WITH_SCALAR)
        assert fill_address is not None
        fill_type = ir.FunctionType(I32, [PTR, PTR])
        fill = b.bitcast(
            ctx.symbols.address(f"np_api_{arrays.API_FILL_WITH_SCALAR}", fill_address), fill_type.as_pointer()
        )
        status = b.call(fill, [made, ctx.symbols.pointer(1)])

        def release() -> None:
            ctx.capi("Py_DecRef", made)
            ctx.capi("PyErr_Clear")

        ctx.guard(b.icmp_signed("==", status, zero), uop, before_exit=release)
    return made
