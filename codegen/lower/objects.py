"""Lowerings of type guards, unboxing and boxing of objects."""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from codegen import abi
from codegen.capi import DOUBLE, I32, I64, PTR
from codegen.context import LowerContext
from codegen.lower.table import (
    _entry_alloca,
    _i64,
    lowers,
)
from codegen.lower.wide_ints import _phi_if
from jit import arrays
from jit.kinds import EXACT_TYPES, NUMPY_SCALARS, Kind
from jit.trace import Uop, Value


def _load_at(ctx: LowerContext, pointer: ir.Value, offset: int, ty: ir.Type) -> ir.Value:
    b = ctx.builder
    address = b.gep(pointer, [_i64(offset)], inbounds=True)
    return b.load(b.bitcast(address, ty.as_pointer()))


def _type_is(ctx: LowerContext, obj: ir.Value, pytype: type) -> ir.Value:
    return ctx.builder.icmp_unsigned("==", _load_at(ctx, obj, abi.OB_TYPE, PTR), ctx.pointer(pytype))


@lowers("_GUARD_TYPE")
def _guard_type(ctx: LowerContext, uop: Uop) -> ir.Value:
    obj = ctx.value(uop.args[0])
    ctx.guard(_type_is(ctx, obj, EXACT_TYPES[uop.operand]), uop)
    return obj


@lowers("_UNBOX_INT", "_NARROW_INT_OBJECT")
def _unbox_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    value, fits = _int_value(ctx, ctx.value(uop.args[0]))
    ctx.guard(fits, uop)
    return value


def _int_value(ctx: LowerContext, obj: ir.Value) -> tuple[ir.Value, ir.Value]:
    """An int object's value, and whether it fits in i64. Where ints keep one 30-bit digit and their sign
    in ob_size (``abi.SMALL_INTS_OK``), an int of at most one digit is read in place; a larger one, through the
    C-API (a call per element read was most of a loop over a list of ints)."""
    b = ctx.builder
    overflow = _entry_alloca(ctx, I32)
    if not abi.SMALL_INTS_OK:
        value = ctx.capi("PyLong_AsLongLongAndOverflow", obj, overflow)
        return value, b.icmp_signed("==", b.load(overflow), ir.Constant(I32, 0))
    size = _load_at(ctx, obj, abi.OB_SIZE, I64)
    small = b.icmp_unsigned("<=", b.add(size, _i64(1)), _i64(2))  # -1, 0 or 1 digit
    with b.if_else(small, likely=True) as (read, call):
        with read:
            digit = b.zext(_load_at(ctx, obj, abi.LONG_DIGITS, I32), I64)
            small_value = b.mul(size, digit)  # (size is the sign; zero has a digit 0 allocated)
            read_block = b.block
        with call:
            big_value = ctx.capi("PyLong_AsLongLongAndOverflow", obj, overflow)
            fits = b.icmp_signed("==", b.load(overflow), ir.Constant(I32, 0))
            call_block = b.block
    value = b.phi(I64)
    value.add_incoming(small_value, read_block)
    value.add_incoming(big_value, call_block)
    ok = b.phi(ir.IntType(1))
    ok.add_incoming(ir.Constant(ir.IntType(1), 1), read_block)
    ok.add_incoming(fits, call_block)
    return value, ok


@lowers("_UNBOX_INT_OR_DEFAULT", "_UNBOX_FLOAT_OR_DEFAULT")
def _unbox_or_default(ctx: LowerContext, uop: Uop) -> ir.Value:
    """A lookup's number, of exactly the default's type (else leave: the interpreter redoes the lookup, which
    has no effect), or the default where the lookup found nothing."""
    b = ctx.builder
    obj, default = ctx.value(uop.args[0]), ctx.value(uop.args[1])
    is_int = uop.name == "_UNBOX_INT_OR_DEFAULT"
    bit = ir.IntType(1)
    with b.if_else(b.icmp_unsigned("!=", obj, ir.Constant(PTR, None)), likely=True) as (found, missing):
        with found:
            with b.if_else(_type_is(ctx, obj, int if is_int else float), likely=True) as (read, other):
                with read:
                    if is_int:
                        read_value, fits = _int_value(ctx, obj)
                    else:
                        read_value, fits = _load_at(ctx, obj, abi.FLOAT_VALUE, DOUBLE), ir.Constant(bit, 1)
                    read_block = b.block
                with other:
                    other_block = b.block
            found_value = b.phi(default.type)
            found_value.add_incoming(read_value, read_block)
            found_value.add_incoming(ir.Constant(default.type, 0), other_block)
            found_ok = b.phi(bit)
            found_ok.add_incoming(fits, read_block)
            found_ok.add_incoming(ir.Constant(bit, 0), other_block)
            found_block = b.block
        with missing:
            missing_block = b.block
    value = b.phi(default.type)
    value.add_incoming(found_value, found_block)
    value.add_incoming(default, missing_block)
    ok = b.phi(bit)
    ok.add_incoming(found_ok, found_block)
    ok.add_incoming(ir.Constant(bit, 1), missing_block)
    ctx.guard(ok, uop)
    return value


@lowers("_UNBOX_FLOAT", "_UNBOX_NP_FLOAT64")
def _unbox_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    return _load_at(ctx, ctx.value(uop.args[0]), abi.FLOAT_VALUE, DOUBLE)


#: how a NumPy scalar's value is stored in its object (after its header: jit.arrays.SCALAR_VALUE)
_SCALAR_STORAGE = {
    Kind.NP_INT64: I64,
    Kind.NP_INT32: I32,
    Kind.NP_UINT8: ir.IntType(8),
    Kind.NP_BOOL: ir.IntType(8),
    Kind.NP_FLOAT32: ir.FloatType(),
}


@lowers("_UNBOX_NP_SCALAR")
def _unbox_np_scalar(ctx: LowerContext, uop: Uop) -> ir.Value:
    return unboxed_np_scalar(ctx, ctx.value(uop.args[0]), uop.operand)


def unboxed_np_scalar(ctx: LowerContext, obj: ir.Value, kind: Kind) -> ir.Value:
    """The value of obj, a NumPy scalar of kind, as native code holds it (a numpy.float64's: a double)."""
    if kind == Kind.NP_FLOAT64:
        return _load_at(ctx, obj, abi.FLOAT_VALUE, DOUBLE)
    b = ctx.builder
    stored = _load_at(ctx, obj, arrays.SCALAR_VALUE, _SCALAR_STORAGE[kind])
    if kind == Kind.NP_BOOL:
        return b.icmp_unsigned("!=", stored, ir.Constant(stored.type, 0))
    if kind == Kind.NP_INT32:
        return b.sext(stored, I64)
    if kind == Kind.NP_UINT8:
        return b.zext(stored, I64)
    return stored


@lowers("_UNBOX_BOOL")
def _unbox_bool(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.icmp_unsigned("==", ctx.value(uop.args[0]), ctx.pointer(True))


@lowers("_CONVERT_INT_TO_FLOAT")
def _int_to_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.sitofp(ctx.value(uop.args[0]), DOUBLE)


@lowers("_CONVERT_BOOL_TO_INT")
def _bool_to_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.zext(ctx.value(uop.args[0]), I64)


def _same_object(ctx: LowerContext, v: Value, uop: Uop | None = None) -> ir.Value | None:
    """A borrowed pointer to the object CPython would have at hand for v, if v was not computed: a
    constant, or a number just read out of a list or tuple. (Not when the trace also overwrites list items
    or globals, which could have freed the object; where given uop, the store of v that takes a reference of its
    own before it drops what it replaces: not when a uop between the read and uop may free an object.)"""
    if v.kind == Kind.NONE:
        return ctx.pointer(None)
    if v.is_const and v.kind.is_number:
        return ctx.pointer(v.const)
    if v.boxed is not None and (
        not any(u.op.drops for u in ctx.trace.uops) or (uop is not None and _still_alive(ctx, v.boxed, uop))
    ):
        return ctx.value(v.boxed)
    return None


def _still_alive(ctx: LowerContext, boxed: Value, uop: Uop) -> bool:
    """Is the object boxed (a number's object, read out of a container) certainly alive at uop: made by a uop of
    the trace before it, with no uop between that may free an object (``drops``: a barrier, a list store)?"""
    uops = ctx.trace.uops
    end = next((i for i, u in enumerate(uops) if u is uop), None)
    if end is None:
        return False
    start = next((i for i in range(end - 1, -1, -1) if uops[i].out is not None and uops[i].out.id == boxed.id), None)
    return start is not None and not any(u.op.drops for u in uops[start + 1 : end])


def _box(ctx: LowerContext, kind: Kind, value: ir.Value) -> ir.Value:
    """A new reference to a Python object for a native value (NULL if allocation failed)."""
    b = ctx.builder
    if kind == Kind.INT:
        return _box_int(ctx, value)
    if kind == Kind.FLOAT:
        return ctx.capi("PyFloat_FromDouble", value)
    if kind.is_numpy_scalar:
        return _box_numpy_scalar(ctx, kind, value)
    obj = b.select(value, ctx.pointer(True), ctx.pointer(False))
    ctx.capi("Py_IncRef", obj)
    return obj


def _box_int(ctx: LowerContext, value: ir.Value) -> ir.Value:
    """A new reference to an int object: for -5..256, CPython's cached object (as PyLong_FromLongLong gives it,
    found by its place in the cache's array: ``abi.SMALL_INT_STRIDE``), without a call; else PyLong_FromLongLong."""
    b = ctx.builder
    if not abi.SMALL_INT_STRIDE:
        return ctx.capi("PyLong_FromLongLong", value)
    offset = b.sub(value, _i64(abi.SMALL_INT_MIN))
    cached = b.icmp_unsigned("<=", offset, _i64(abi.SMALL_INT_MAX - abi.SMALL_INT_MIN))
    with b.if_else(cached) as (small, big):
        with small:
            obj = b.gep(ctx.pointer(abi.SMALL_INT_MIN), [b.mul(offset, _i64(abi.SMALL_INT_STRIDE))], inbounds=True)
            ctx.incref(obj)
            small_block = b.block
        with big:
            made = ctx.capi("PyLong_FromLongLong", value)
            big_block = b.block
    phi = b.phi(PTR)
    phi.add_incoming(obj, small_block)
    phi.add_incoming(made, big_block)
    return phi


def _reusable(ctx: LowerContext, kind: Kind, value: ir.Value, old: ir.Value) -> ir.Value | None:
    """Where a container's item old is replaced by a new number (value, of kind), can old itself take the
    value? It can where nothing else holds it (reference count 1: the container's) and it is an int or float
    object as CPython would make for value (an int of one digit outside the cache of -5..256, whose objects
    are shared): then no one can tell it from the new object CPython makes (and frees old). None: never (a
    bool, or ints of another layout)."""
    b = ctx.builder
    if kind == Kind.FLOAT:
        return b.and_(_type_is(ctx, old, float), _sole_reference(ctx, old))
    if kind != Kind.INT or not abi.SMALL_INTS_OK or not abi.SMALL_INT_STRIDE:
        return None
    digit = b.select(b.icmp_signed("<", value, _i64(0)), b.neg(value), value)
    one_digit = b.icmp_unsigned("<", digit, _i64(1 << 30))  # (|-2**63| wraps to 2**63: not below)
    uncached = b.icmp_unsigned(">", b.sub(value, _i64(abi.SMALL_INT_MIN)), _i64(abi.SMALL_INT_MAX - abi.SMALL_INT_MIN))
    return b.and_(b.and_(one_digit, uncached), b.and_(_type_is(ctx, old, int), _sole_reference(ctx, old)))


def _store_number(
    ctx: LowerContext, uop: Uop, slot: ir.Value, old: ir.Value, kind: Kind, value: ir.Value, raising: bool = False
) -> None:
    """Store the number value (of kind) at a container's slot, whose object old it replaces: written into old
    where nothing else holds it (``_reusable``), else a new box (``_replace``, which leaves where boxing fails:
    raising, with the MemoryError; else without it, for the interpreter to make the store)."""
    b = ctx.builder
    reusable = _reusable(ctx, kind, value, old)
    if reusable is None:
        _replace(ctx, uop, slot, old, kind, value, raising)
        return
    with b.if_else(reusable) as (in_place, replace):
        with in_place:
            _write_in_place(ctx, kind, value, old)
        with replace:
            _replace(ctx, uop, slot, old, kind, value, raising)


def _replace(
    ctx: LowerContext, uop: Uop, slot: ir.Value, old: ir.Value, kind: Kind, value: ir.Value, raising: bool = False
) -> None:
    """Store a new box of value at slot, releasing the item old it replaces; leave if boxing fails."""
    b = ctx.builder
    new = _box(ctx, kind, value)
    ctx.guard(b.icmp_unsigned("!=", new, ir.Constant(PTR, None)), uop, before_exit=_on_failure(ctx, raising))
    b.store(new, slot)
    ctx.decref(old)


def _on_failure(ctx: LowerContext, raising: bool) -> Callable[[], None] | None:
    """What a store's exit does first where an allocation failed: keep the MemoryError where raising (the trace
    leaves with it, raised at the exit's instruction), else clear it (the interpreter makes the store again)."""
    return None if raising else (lambda: ctx.capi("PyErr_Clear"))


def _store_boxed(
    ctx: LowerContext,
    uop: Uop,
    v: Value,
    native: ir.Value,
    store: Callable[[ir.Value], ir.Value],
    raising: bool = False,
) -> None:
    """store(obj), a C-API store that takes its own reference to obj and returns 0 where it succeeds, of v (native:
    its lowered value), boxed if it is a number; leave where boxing or the store fails (raising: with the
    MemoryError, else without it, for the interpreter to make the store)."""
    b = ctx.builder
    clear = _on_failure(ctx, raising)
    new = native if v.kind.is_pointer else _same_object(ctx, v, uop)  # (the store takes its own reference first)
    boxed_here = new is None
    if new is None:
        new = _box(ctx, v.kind, native)
        ctx.guard(b.icmp_unsigned("!=", new, ir.Constant(PTR, None)), uop, before_exit=clear)
    status = store(new)
    if boxed_here:
        ctx.decref(new)
    ctx.guard(b.icmp_signed("==", status, ir.Constant(I32, 0)), uop, before_exit=clear)


def _sole_reference(ctx: LowerContext, obj: ir.Value) -> ir.Value:
    b = ctx.builder
    return b.icmp_signed("==", b.load(b.bitcast(obj, I64.as_pointer())), _i64(1))


def _write_in_place(ctx: LowerContext, kind: Kind, value: ir.Value, old: ir.Value) -> None:
    """Give old (where _reusable holds) the value: a float's double, or an int's sign (ob_size -1 or 1) and its
    one digit (every int object has room for one)."""
    b = ctx.builder
    if kind == Kind.FLOAT:
        b.store(value, b.bitcast(b.gep(old, [_i64(abi.FLOAT_VALUE)], inbounds=True), DOUBLE.as_pointer()))
        return
    negative = b.icmp_signed("<", value, _i64(0))
    b.store(
        b.select(negative, _i64(-1), _i64(1)),
        b.bitcast(b.gep(old, [_i64(abi.OB_SIZE)], inbounds=True), I64.as_pointer()),
    )
    digit = b.trunc(b.select(negative, b.neg(value), value), I32)
    b.store(digit, b.bitcast(b.gep(old, [_i64(abi.LONG_DIGITS)], inbounds=True), I32.as_pointer()))


def _box_numpy_scalar(ctx: LowerContext, kind: Kind, value: ir.Value) -> ir.Value:
    """A new numpy.bool (one of its two singletons), or a NumPy scalar made by calling its type on the Python
    float or int of the same value (exact), as the interpreter boxes it at an exit (NULL if that failed)."""
    b = ctx.builder
    scalar_type = NUMPY_SCALARS[kind]
    if kind == Kind.NP_BOOL:
        obj = b.select(value, ctx.pointer(scalar_type(True)), ctx.pointer(scalar_type(False)))
        ctx.capi("Py_IncRef", obj)
        return obj
    if kind.is_numpy_int:
        python = ctx.capi("PyLong_FromLongLong", value)
    else:
        python = ctx.capi("PyFloat_FromDouble", value if value.type == DOUBLE else b.fpext(value, DOUBLE))
    null = ir.Constant(PTR, None)
    made = b.icmp_unsigned("!=", python, null)

    def call() -> ir.Value:
        arguments = _entry_alloca(ctx, PTR)
        b.store(python, arguments)
        obj = ctx.capi("PyObject_Vectorcall", ctx.pointer(scalar_type), arguments, _i64(1), null)
        ctx.capi("Py_DecRef", python)
        return obj

    return _phi_if(ctx, made, call, null)
