"""Lowerings of a function's cell variables (``LOAD_DEREF``, ``STORE_DEREF``): what the cell in the variable's slot
holds, read and written in place where the cell's layout is known (``codegen.abi``), else through the C-API."""

from __future__ import annotations

import types

from llvmlite import ir

from codegen import abi
from codegen.capi import PTR
from codegen.context import LowerContext
from codegen.lower.generic import _reference, _references, _release, _succeeds
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


def _guard_plain(ctx: LowerContext, uop: Uop, old: ir.Value, missing: ir.Value) -> None:
    """Leave unless the cell holds nothing (missing), an int, a float, a bool or None: what frees running no
    Python code."""
    b = ctx.builder
    old_type = _load_at(ctx, b.select(missing, ctx.pointer(None), old), abi.OB_TYPE, PTR)
    plain = missing
    for cls in (int, float, bool, type(None)):
        plain = b.or_(plain, b.icmp_unsigned("==", old_type, ctx.pointer(cls)))
    ctx.guard(plain, uop)


@lowers("_STORE_CELL", "_STORE_CELL_CHECKED")
def _store_cell(ctx: LowerContext, uop: Uop) -> None:
    """The value (boxed: a new reference the cell takes) into the cell, where what it holds is nothing, an int, a
    float, a bool or None, whose release runs no Python code; else leave before anything changed (the recorder
    chose this uop where it held one: the interpreter makes the store). _STORE_CELL_CHECKED: an inlined call's
    store, checked where it was (_CHECK_STORE_CELL), made at the call's return: it leaves only where boxing fails,
    with the MemoryError, raised at the call."""
    b = ctx.builder
    raising = uop.name == "_STORE_CELL_CHECKED"
    cell = ctx.value(uop.args[1])
    if not raising:
        ctx.guard(_type_is(ctx, cell, types.CellType), uop)
    old = _contents(ctx, cell)
    missing = b.icmp_unsigned("==", old, _NULL)
    if not raising:
        _guard_plain(ctx, uop, old, missing)
    v = uop.args[0]
    if abi.FUNCTIONS_OK and v.kind in (Kind.INT, Kind.FLOAT) and _same_object(ctx, v, uop) is None:
        # a number computed: written into the object the cell holds where nothing else holds it, as a list's
        # item is (``_store_number``: no allocation for `total += x`), else a new box
        slot = b.bitcast(b.gep(cell, [_i64(abi.CELL_CONTENTS)], inbounds=True), PTR.as_pointer())
        native = ctx.value(v)
        clear = None if raising else (lambda: ctx.capi("PyErr_Clear"))
        with b.if_else(missing) as (empty, full):
            with empty:
                new = _box(ctx, v.kind, native)
                ctx.guard(b.icmp_unsigned("!=", new, _NULL), uop, before_exit=clear)
                b.store(new, slot)
            with full:
                _store_number(ctx, uop, slot, old, v.kind, native, raising)
        return
    if raising:
        new = _reference(ctx, v, uop)
        ctx.guard(b.icmp_unsigned("!=", new, _NULL), uop)  # (a box that could not be made: MemoryError set)
    else:
        (new,) = _references(ctx, uop, uop.args[:1])  # (leaves where boxing fails, before the store)
    if abi.FUNCTIONS_OK:
        slot = b.bitcast(b.gep(cell, [_i64(abi.CELL_CONTENTS)], inbounds=True), PTR.as_pointer())
        b.store(new, slot)  # (the cell takes the reference)
        with b.if_then(b.not_(missing)):
            ctx.decref(old)  # (a number or None: no Python code runs)
        return
    ctx.capi("PyCell_Set", cell, new)  # (takes its own reference, releases the old value)
    _release(ctx, [new])


@lowers("_CHECK_STORE_CELL")
def _check_store_cell(ctx: LowerContext, uop: Uop) -> None:
    """The check of an inlined call's store into a cell (``jit.inline``), where it is: the store is made at the
    call's return (_STORE_CELL_CHECKED), nothing that runs Python code in between."""
    cell = ctx.value(uop.args[0])
    old = _contents(ctx, cell)
    _guard_plain(ctx, uop, old, ctx.builder.icmp_unsigned("==", old, _NULL))


@lowers("_CLOSURE_CELL")
def _closure_cell(ctx: LowerContext, uop: Uop) -> ir.Value:
    """Cell uop.operand of the closure of a function whose code is guarded (so it has that cell), borrowed."""
    function = ctx.value(uop.args[0])
    if abi.FUNCTIONS_OK:
        closure = _load_at(ctx, function, abi.FUNCTION_CLOSURE, PTR)
    else:
        closure = ctx.capi("PyFunction_GetClosure", function)
    return _load_at(ctx, closure, abi.TUPLE_ITEMS + abi.WORD * uop.operand, PTR)


@lowers("_STORE_CELL_GENERIC")
def _store_cell_generic(ctx: LowerContext, uop: Uop) -> None:
    """PyCell_Set: the cell takes its own reference and releases what it held, whose freeing may run a finalizer
    (a barrier: the hoisted guards are checked again after it); leave with the SystemError where the slot held no
    cell (never: a cell by construction)."""
    refs = _references(ctx, uop, uop.args)
    _succeeds(ctx, uop, refs, "PyCell_Set", refs[1], refs[0])
