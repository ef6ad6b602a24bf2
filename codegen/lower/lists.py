"""Lowerings on lists and tuples: length, subscripts, stores, appends, unpacking."""

from __future__ import annotations

from llvmlite import ir

from codegen import abi
from codegen.capi import I32, I64, PTR
from codegen.context import LowerContext
from codegen.lower.loops import _item, _store_at
from codegen.lower.objects import _box, _load_at, _on_failure, _same_object, _store_number
from codegen.lower.table import (
    _args,
    _i64,
    lowers,
)
from jit.trace import Uop


def _checked_index(ctx: LowerContext, uop: Uop, sequence: ir.Value, index: ir.Value) -> ir.Value:
    b = ctx.builder
    size = _load_at(ctx, sequence, abi.OB_SIZE, I64)
    index = b.select(b.icmp_signed("<", index, _i64(0)), b.add(index, size), index)
    ctx.guard(b.icmp_unsigned("<", index, size), uop)  # unsigned: a negative index is out of range too
    return index


@lowers("_BINARY_SUBSCR_LIST_INT", "_BINARY_SUBSCR_TUPLE_INT")
def _subscr(ctx: LowerContext, uop: Uop) -> ir.Value:
    sequence, index = _args(ctx, uop)
    index = _checked_index(ctx, uop, sequence, index)
    return _item(ctx, sequence, index, uop.name == "_BINARY_SUBSCR_LIST_INT")


@lowers("_BINARY_SUBSCR_LIST_INT_IN_BOUNDS", "_BINARY_SUBSCR_TUPLE_INT_IN_BOUNDS")
def _subscr_in_bounds(ctx: LowerContext, uop: Uop) -> ir.Value:
    sequence, index = _args(ctx, uop)
    return _item(ctx, sequence, index, uop.name == "_BINARY_SUBSCR_LIST_INT_IN_BOUNDS")


@lowers("_LEN_LIST", "_LEN_TUPLE")
def _len(ctx: LowerContext, uop: Uop) -> ir.Value:
    return _load_at(ctx, ctx.value(uop.args[0]), abi.OB_SIZE, I64)


@lowers("_NEW_REF", "_NEW_INT_OBJECT_REF")
def _new_ref(ctx: LowerContext, uop: Uop) -> ir.Value:
    obj = ctx.value(uop.args[0])
    ctx.incref(obj)
    return obj


@lowers(
    "_STORE_SUBSCR_LIST_INT",
    "_STORE_SUBSCR_LIST_OBJECT",
    "_STORE_SUBSCR_LIST_INT_IN_BOUNDS",
    "_STORE_SUBSCR_LIST_OBJECT_IN_BOUNDS",
)
def _store_subscr(ctx: LowerContext, uop: Uop) -> None:
    b = ctx.builder
    value, sequence, index = _args(ctx, uop)
    if not uop.name.endswith("_IN_BOUNDS"):  # (else the range analysis proved 0 <= index < len)
        index = _checked_index(ctx, uop, sequence, index)
    items = b.bitcast(_load_at(ctx, sequence, abi.LIST_ITEMS, PTR), PTR.as_pointer())
    slot = b.gep(items, [index], inbounds=True)
    old = b.load(slot)
    # the element dropped must free without running Python code (no __del__): a float, int or bool
    old_type = _load_at(ctx, old, abi.OB_TYPE, PTR)
    plain = b.or_(
        b.icmp_unsigned("==", old_type, ctx.pointer(float)),
        b.or_(b.icmp_unsigned("==", old_type, ctx.pointer(int)), b.icmp_unsigned("==", old_type, ctx.pointer(bool))),
    )
    ctx.guard(plain, uop)
    new = value if uop.name.startswith("_STORE_SUBSCR_LIST_OBJECT") else _same_object(ctx, uop.args[0])
    if new is not None:
        if ctx.ownership.stolen.get(ctx.position) != uop.args[0].id:  # (else the list gets the trace's reference)
            ctx.incref(new)
        b.store(new, slot)
        ctx.decref(old)
        return
    _store_number(ctx, uop, slot, old, uop.args[0].kind, value)


@lowers(
    "_MOVE_LIST_ITEMS",
    "_MOVE_LIST_ITEMS_DISTINCT",
    "_MOVE_LIST_ITEMS_IN_BOUNDS",
    "_MOVE_LIST_ITEMS_DISTINCT_IN_BOUNDS",
)
def _move_items(ctx: LowerContext, uop: Uop) -> None:
    """Store items the trace read out of this list back into it at the indices they were read from, permuted
    (jit.optimizer.moves): the list's references move with its pointers, so no count changes and nothing is
    freed. The reads checked every index against the list's length, which nothing changed since; a negative
    index counts from the end, as the reads counted it. More than two items may only move where the indices
    name distinct items (else leave before storing: the list would lose a reference and gain another). The
    _IN_BOUNDS forms: the range analysis proved every index within the list (none negative)."""
    b = ctx.builder
    sequence, *rest = _args(ctx, uop)
    count = len(rest) // 2
    indices, items = rest[:count], rest[count:]
    if not uop.name.endswith("_IN_BOUNDS"):
        size = _load_at(ctx, sequence, abi.OB_SIZE, I64)
        indices = [b.select(b.icmp_signed("<", index, _i64(0)), b.add(index, size), index) for index in indices]
    if uop.name.startswith("_MOVE_LIST_ITEMS_DISTINCT"):
        distinct = b.icmp_unsigned("!=", indices[0], indices[1])
        for first in range(count):
            for second in range(first + 1, count):
                if (first, second) != (0, 1):
                    distinct = b.and_(distinct, b.icmp_unsigned("!=", indices[first], indices[second]))
        ctx.guard(distinct, uop)
    slots = b.bitcast(_load_at(ctx, sequence, abi.LIST_ITEMS, PTR), PTR.as_pointer())
    for index, item in zip(indices, items, strict=True):
        b.store(item, b.gep(slots, [index], inbounds=True))


@lowers("_BIND_APPEND")
def _bind_append(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.value(uop.args[0])


@lowers("_CALL_LIST_APPEND")
def _list_append(ctx: LowerContext, uop: Uop) -> None:
    _append(ctx, uop)


@lowers("_CALL_LIST_APPEND_CHECKED")
def _list_append_checked(ctx: LowerContext, uop: Uop) -> None:
    """An inlined call's append, made at its return (jit.inline): where memory runs out, the trace leaves with
    the MemoryError, raised at the call."""
    _append(ctx, uop, raising=True)


def _append(ctx: LowerContext, uop: Uop, raising: bool = False) -> None:
    """Append uop's item to its list; where memory runs out (boxing the item, growing the list), leave with the
    MemoryError if raising, else without it (nothing was appended: the interpreter appends and raises)."""
    clear = _on_failure(ctx, raising)
    b = ctx.builder
    target, item = _args(ctx, uop)
    kind = uop.args[1].kind
    obj = item if kind.is_pointer else _same_object(ctx, uop.args[1], uop)
    boxed_here = obj is None
    if obj is None:
        obj = _box(ctx, kind, item)
        ctx.guard(b.icmp_unsigned("!=", obj, ir.Constant(PTR, None)), uop, before_exit=clear)
    if not abi.LIST_APPEND_OK:
        status = ctx.capi("PyList_Append", target, obj)
        if boxed_here:
            ctx.decref(obj)  # the list holds its own reference now
    else:
        # as list.append does: in place while the list has room (the list takes the reference boxing made, or
        # one of its own), else through PyList_Append (which resizes)
        size_at = b.bitcast(b.gep(target, [_i64(abi.OB_SIZE)], inbounds=True), I64.as_pointer())
        size = b.load(size_at)
        room = b.icmp_signed("<", size, _load_at(ctx, target, abi.LIST_ALLOCATED, I64))
        with b.if_else(room, likely=True) as (in_place, resize):
            with in_place:
                if not boxed_here:
                    ctx.incref(obj)
                items = b.bitcast(_load_at(ctx, target, abi.LIST_ITEMS, PTR), PTR.as_pointer())
                b.store(obj, b.gep(items, [size], inbounds=True))
                b.store(b.add(size, _i64(1)), size_at)
                in_place_block = b.block
            with resize:
                called = ctx.capi("PyList_Append", target, obj)
                if boxed_here:
                    ctx.decref(obj)
                resize_block = b.block
        status = b.phi(I32)
        status.add_incoming(ir.Constant(I32, 0), in_place_block)
        status.add_incoming(called, resize_block)
    # on failure (no memory) nothing was appended
    ctx.guard(b.icmp_signed("==", status, ir.Constant(I32, 0)), uop, before_exit=clear)


@lowers("_BUILD_LIST", "_BUILD_TUPLE")
def _build_list(ctx: LowerContext, uop: Uop) -> ir.Value:
    """PyList_New (PyTuple_New) and a new reference to each item, given to the list (a number boxed, or the
    very object it was read as); if an allocation failed, everything made is released and the trace leaves
    (the interpreter builds it again)."""
    is_list = uop.name == "_BUILD_LIST"
    b = ctx.builder
    null = ir.Constant(PTR, None)
    references = []
    for value in uop.args:
        obj = ctx.value(value) if value.kind.is_pointer else _same_object(ctx, value)
        if obj is None:
            obj = _box(ctx, value.kind, ctx.value(value))
        else:
            ctx.capi("Py_IncRef", obj)
        references.append(obj)
    made = ctx.capi("PyList_New" if is_list else "PyTuple_New", _i64(len(references)))
    ok = b.icmp_unsigned("!=", made, null)
    for obj in references:
        ok = b.and_(ok, b.icmp_unsigned("!=", obj, null))

    def release() -> None:
        for obj in [*references, made]:
            ctx.capi("Py_DecRef", obj)  # (NULL-safe)
        ctx.capi("PyErr_Clear")

    ctx.guard(ok, uop, before_exit=release)
    if references:
        if is_list:
            items = b.bitcast(_load_at(ctx, made, abi.LIST_ITEMS, PTR), PTR.as_pointer())
        else:
            items = b.bitcast(b.gep(made, [_i64(abi.TUPLE_ITEMS)], inbounds=True), PTR.as_pointer())
        for index, obj in enumerate(references):
            b.store(obj, b.gep(items, [_i64(index)], inbounds=True))
    return made


@lowers("_LIST_POP")
def _list_pop(ctx: LowerContext, uop: Uop) -> ir.Value:
    """list.pop(): leave where the list is empty (the interpreter raises IndexError), else its last item, whose
    reference the list gives up with its length one less. Its allocation stays (CPython's pop shrinks it below
    half full: the same items either way, only the memory held differs)."""
    b = ctx.builder
    sequence = ctx.value(uop.args[0])
    size = _load_at(ctx, sequence, abi.OB_SIZE, I64)
    ctx.guard(b.icmp_signed(">", size, _i64(0)), uop)
    last = b.sub(size, _i64(1))
    item = _item(ctx, sequence, last, True)
    _store_at(ctx, sequence, abi.OB_SIZE, last)
    return item
