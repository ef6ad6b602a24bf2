"""Lowerings of a function's cell variables (``LOAD_DEREF``, ``STORE_DEREF``): what the cell in the variable's slot
holds, read and written in place where the cell's layout is known (``codegen.abi``), else through the C-API."""

from __future__ import annotations

import types

from llvmlite import ir

from codegen import abi
from codegen.capi import PTR
from codegen.context import LowerContext
from codegen.lower.generic import _references, _release, _succeeds
from codegen.lower.objects import _box, _load_at, _same_object, _store_number, _type_is
from codegen.lower.table import _i64, lowers
from jit.kinds import Kind
from jit.trace import Uop

_NULL = ir.Constant(PTR, None)


def _contents(ctx: LowerContext, cell: ir.Value) -> ir.Value:
    """What the cell holds, borrowed (NULL where it is empty)."""
    if abi.FUNCTIONS_OK:
        return _load_at(ctx, cell, abi.CELL_CONTENTS, PTR)
    value = ctx.capi("PyCell_Get", cell)  # (a new reference, NULL-safe to give back: the cell keeps its own)
    ctx.capi("Py_DecRef", value)
    return value


@lowers("_LOAD_CELL")
def _load_cell(ctx: LowerContext, uop: Uop) -> ir.Value:
    """What the cell holds, borrowed: the cell keeps it alive until a store into it, which the recorder follows
    with a new read (as it does after a barrier, which may store into it too). The slot holds a cell by
    construction (made at the function's entry, or CPython's own, handed over): checked all the same, since a
    wrong object here would be read as one. Empty: leave (the interpreter raises CPython's UnboundLocalError)."""
    b = ctx.builder
    cell = ctx.value(uop.args[0])
    ctx.guard(_type_is(ctx, cell, types.CellType), uop)
    value = _contents(ctx, cell)
    ctx.guard(b.icmp_unsigned("!=", value, _NULL), uop)
    return value


@lowers("_STORE_CELL")
def _store_cell(ctx: LowerContext, uop: Uop) -> None:
    """The value (boxed: a new reference the cell takes) into the cell, where what it holds is nothing, an int, a
    float, a bool or None, whose release runs no Python code; else leave before anything changed (the recorder
    chose this uop where it held one: the interpreter makes the store)."""
    b = ctx.builder
    cell = ctx.value(uop.args[1])
    ctx.guard(_type_is(ctx, cell, types.CellType), uop)
    old = _contents(ctx, cell)
    missing = b.icmp_unsigned("==", old, _NULL)
    old_type = _load_at(ctx, b.select(missing, ctx.pointer(None), old), abi.OB_TYPE, PTR)
    plain = missing
    for cls in (int, float, bool, type(None)):
        plain = b.or_(plain, b.icmp_unsigned("==", old_type, ctx.pointer(cls)))
    ctx.guard(plain, uop)
    v = uop.args[0]
    if abi.FUNCTIONS_OK and v.kind in (Kind.INT, Kind.FLOAT) and _same_object(ctx, v, uop) is None:
        # a number computed: written into the object the cell holds where nothing else holds it, as a list's
        # item is (``_store_number``: no allocation for `total += x`), else a new box
        slot = b.bitcast(b.gep(cell, [_i64(abi.CELL_CONTENTS)], inbounds=True), PTR.as_pointer())
        native = ctx.value(v)
        with b.if_else(missing) as (empty, full):
            with empty:
                new = _box(ctx, v.kind, native)
                ctx.guard(b.icmp_unsigned("!=", new, _NULL), uop, before_exit=lambda: ctx.capi("PyErr_Clear"))
                b.store(new, slot)
            with full:
                _store_number(ctx, uop, slot, old, v.kind, native)
        return
    (new,) = _references(ctx, uop, uop.args[:1])  # (leaves where boxing fails, before the store)
    if abi.FUNCTIONS_OK:
        slot = b.bitcast(b.gep(cell, [_i64(abi.CELL_CONTENTS)], inbounds=True), PTR.as_pointer())
        b.store(new, slot)  # (the cell takes the reference)
        with b.if_then(b.not_(missing)):
            ctx.decref(old)  # (a number or None: no Python code runs)
        return
    ctx.capi("PyCell_Set", cell, new)  # (takes its own reference, releases the old value)
    _release(ctx, [new])


@lowers("_STORE_CELL_GENERIC")
def _store_cell_generic(ctx: LowerContext, uop: Uop) -> None:
    """PyCell_Set: the cell takes its own reference and releases what it held, whose freeing may run a finalizer
    (a barrier: the hoisted guards are checked again after it); leave with the SystemError where the slot held no
    cell (never: a cell by construction)."""
    refs = _references(ctx, uop, uop.args)
    _succeeds(ctx, uop, refs, "PyCell_Set", refs[1], refs[0])
