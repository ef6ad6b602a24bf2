"""Lowerings of attribute loads and stores of plain instances (``jit.recorder.attributes``), where the running
CPython keeps them (``jit.instances``): a guard on the class's version tag, and a load from, or a store into, the
instance's values or its ``__slots__`` member, leaving where there is none (the interpreter then looks the
attribute up, or adds it, itself)."""

from __future__ import annotations

import sys

from llvmlite import ir

from codegen.capi import I8, I32, I64, PTR
from codegen.context import LowerContext
from codegen.lower.objects import _load_at, _same_object, _store_boxed, _store_number, _type_is
from codegen.lower.strs_dicts import _lookup
from codegen.lower.table import _i64, lowers
from jit import instances
from jit.trace import Uop

_NULL = ir.Constant(PTR, None)


@lowers("_NEW_INSTANCE")
def _new_instance(ctx: LowerContext, uop: Uop) -> ir.Value:
    """The class's tp_new (object's: ``jit.instances.find_constructor``, its version guarded) on no arguments, as
    CPython's type call makes the instance before its __init__; leave where that fails (the interpreter makes
    the call again, and raises its MemoryError)."""
    b = ctx.builder
    klass = ctx.pointer(uop.operand.klass)
    tp_new = _load_at(ctx, klass, instances.TYPE_NEW, PTR)
    signature = ir.FunctionType(PTR, [PTR, PTR, PTR])
    made = b.call(b.bitcast(tp_new, signature.as_pointer()), [klass, ctx.pointer(()), _NULL])
    ctx.guard(b.icmp_unsigned("!=", made, _NULL), uop, before_exit=lambda: ctx.capi("PyErr_Clear"))
    return made


@lowers("_STORE_ATTR_FRESH")
def _store_attr_fresh(ctx: LowerContext, uop: Uop) -> None:
    """obj.name = value on an instance the inlined call made (``jit.recorder.attributes``), through
    PyObject_SetAttr, which runs no Python code there (``jit.instances.stores_plainly``, the class's version
    guarded); leave where boxing or storing fails (the interpreter makes the call again)."""
    value, obj = uop.args
    instance, name = ctx.value(obj), ctx.pointer(sys.intern(uop.operand))
    _store_boxed(ctx, uop, value, ctx.value(value), lambda new: ctx.capi("PyObject_SetAttr", instance, name, new))


@lowers("_GUARD_CLASS_VERSION")
def _guard_class_version(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(_same_version(ctx, uop.operand), uop)


def _same_version(ctx: LowerContext, where: instances.ClassAttr) -> ir.Value:
    tag = _load_at(ctx, ctx.pointer(where.klass), instances.TYPE_VERSION_TAG, I32)
    return ctx.builder.icmp_unsigned("==", tag, ir.Constant(I32, where.version))


def _values(ctx: LowerContext, uop: Uop, obj: ir.Value, index: int, checked: bool = False) -> ir.Value:
    """The instance's values array, leaving where it has none (a real dict holds its attributes); checked: an
    earlier uop left there already, and nothing since could give the instance a dict."""
    b = ctx.builder
    if instances.VALUES == "pointer":
        values = _load_at(ctx, obj, instances.VALUES_POINTER, PTR)
        if not checked:
            ctx.guard(b.icmp_unsigned("!=", values, _NULL), uop)
        return values
    if instances.VALUES == "tagged":
        word = _load_at(ctx, obj, instances.DICT_OR_VALUES, I64)
        if not checked:
            ctx.guard(b.trunc(word, ir.IntType(1)), uop)
        return b.inttoptr(b.add(word, _i64(1)), PTR)
    assert instances.VALUES == "inline"
    header = b.gep(obj, [_i64(uop.operand.klass.__basicsize__)], inbounds=True)
    if not checked:
        valid = _load_at(ctx, header, instances.INLINE_VALID, I8)
        capacity = _load_at(ctx, header, 0, I8)
        ok = b.and_(
            b.icmp_unsigned("!=", valid, ir.Constant(I8, 0)),
            b.icmp_unsigned(">", capacity, ir.Constant(I8, index)),
        )
        ctx.guard(ok, uop)
    return b.gep(header, [_i64(instances.INLINE_ITEMS)], inbounds=True)


def _attribute_slot(ctx: LowerContext, uop: Uop, obj: ir.Value, checked: bool = False) -> ir.Value:
    """The address of the pointer to obj's attribute where (uop's operand): in its values or a member."""
    b = ctx.builder
    where: instances.ClassAttr = uop.operand
    if where.index >= 0:
        base = _values(ctx, uop, obj, where.index, checked)
        offset = instances.WORD * where.index
    else:
        base, offset = obj, where.offset
    return b.bitcast(b.gep(base, [_i64(offset)], inbounds=True), PTR.as_pointer())


@lowers("_LOAD_ATTR_INSTANCE")
def _load_attr_instance(ctx: LowerContext, uop: Uop) -> ir.Value:
    where: instances.ClassAttr = uop.operand
    obj = ctx.value(uop.args[0])
    # (the version again, though hoisted: an inner tree called before may have run Python code that changed
    # the class, and nothing checks the hoisted guards after a tree call; a load of a constant word)
    ctx.guard(_same_version(ctx, where), uop)
    if where.in_dict:  # (the instance's real dict, the word 3 before it: jit.instances.find_in_dict)
        b = ctx.builder
        word = _load_at(ctx, obj, instances.DICT_OR_VALUES, I64)
        is_dict = b.and_(b.icmp_unsigned("!=", word, _i64(0)), b.icmp_unsigned("==", b.and_(word, _i64(1)), _i64(0)))
        ctx.guard(is_dict, uop)
        value = _lookup(ctx, b.inttoptr(word, PTR), ctx.pointer(sys.intern(where.name)))
    elif where.index >= 0:
        value = _load_at(ctx, _values(ctx, uop, obj, where.index), instances.WORD * where.index, PTR)
    else:
        value = _load_at(ctx, obj, where.offset, PTR)
    ctx.guard(ctx.builder.icmp_unsigned("!=", value, _NULL), uop)  # (unset: CPython looks further, or raises)
    ctx.incref(value)
    return value


@lowers("_GUARD_NO_INSTANCE_ATTR")
def _guard_no_instance_attr(ctx: LowerContext, uop: Uop) -> None:
    where: instances.ClassAttr = uop.operand
    if not where.keys:
        return  # (instances of the class have no dict at all: nothing can hide the method)
    b = ctx.builder
    assert instances.CACHED_KEYS is not None
    _values(ctx, uop, ctx.value(uop.args[0]), 0)  # (a real dict could hold anything)
    keys = _load_at(ctx, ctx.pointer(where.klass), instances.CACHED_KEYS, PTR)
    # (the keys' address, a constant of this process: codegen.cache never stores a module holding one)
    ctx.guard(b.icmp_unsigned("==", keys, ir.Constant(I64, where.keys).inttoptr(PTR)), uop)
    nentries = _load_at(ctx, keys, instances.KEYS_NENTRIES, I64)
    ctx.guard(b.icmp_unsigned("==", nentries, _i64(where.nentries)), uop)


@lowers("_STORE_ATTR_INSTANCE")
def _store_attr_instance(ctx: LowerContext, uop: Uop) -> None:
    """As CPython's STORE_ATTR_INSTANCE_VALUE (or a member descriptor's set) where the attribute is set: the new
    value in place of the old, which is released. Every check comes before the store, so a guard leaves with
    nothing done and the interpreter makes the store itself: the class changed, the attribute is unset (adding
    one is CPython's work), or freeing the old value could run Python code (a finalizer, or the release of what
    it holds: only an int, float, bool, str or None, or an object something else still holds, is dropped here, so
    the store is no barrier)."""
    b = ctx.builder
    where: instances.ClassAttr = uop.operand
    obj = ctx.value(uop.args[1])
    ctx.guard(_same_version(ctx, where), uop)  # (again, as for a load: a tree called before may have run Python code)
    slot = _attribute_slot(ctx, uop, obj)
    old = b.load(slot)
    ctx.guard(b.icmp_unsigned("!=", old, _NULL), uop)
    held = b.icmp_signed(">", b.load(b.bitcast(old, I64.as_pointer())), _i64(1))
    ctx.guard(b.or_(held, _freed_plainly(ctx, old)), uop)
    _replace_attribute(ctx, uop, slot, old)


def _freed_plainly(ctx: LowerContext, obj: ir.Value) -> ir.Value:
    """Is obj of a type whose freeing runs no Python code (``jit.instances.FREED_PLAINLY``)?"""
    plain = ir.Constant(ir.IntType(1), 0)
    for klass in instances.FREED_PLAINLY:
        plain = ctx.builder.or_(plain, _type_is(ctx, obj, klass))
    return plain


def _replace_attribute(ctx: LowerContext, uop: Uop, slot: ir.Value, old: ir.Value, raising: bool = False) -> None:
    """Store uop's value (its first input) at slot in place of old (a reference the slot held), releasing old;
    raising: where boxing a number fails, leave with the MemoryError (else the interpreter makes the store)."""
    b = ctx.builder
    value, kind = ctx.value(uop.args[0]), uop.args[0].kind
    new = value if kind.is_pointer else _same_object(ctx, uop.args[0])
    if new is not None:
        ctx.incref(new)
        b.store(new, slot)
        ctx.decref(old)
        return
    _store_number(ctx, uop, slot, old, kind, value, raising)


@lowers("_CHECK_STORE_ATTR_INSTANCE")
def _check_store_attr_instance(ctx: LowerContext, uop: Uop) -> None:
    """The checks of an inlined call's store (``jit.inline``), where it is: the store itself is made at the call's
    return (_STORE_ATTR_INSTANCE_CHECKED), with nothing that runs Python code in between, so what is checked
    here still holds there: the class, the instance's values, the attribute set, and its value of a type freed
    plainly (several stores of the call may replace one object: freeing it runs no Python code either)."""
    b = ctx.builder
    ctx.guard(_same_version(ctx, uop.operand), uop)
    old = b.load(_attribute_slot(ctx, uop, ctx.value(uop.args[0])))
    ctx.guard(b.icmp_unsigned("!=", old, _NULL), uop)
    ctx.guard(_freed_plainly(ctx, old), uop)


@lowers("_STORE_ATTR_INSTANCE_CHECKED")
def _store_attr_instance_checked(ctx: LowerContext, uop: Uop) -> None:
    slot = _attribute_slot(ctx, uop, ctx.value(uop.args[1]), checked=True)
    _replace_attribute(ctx, uop, slot, ctx.builder.load(slot), raising=True)
