"""Lowerings of the trace's structure: slots, stack, constants, tree calls, exits."""

from __future__ import annotations

from collections import Counter

from llvmlite import ir

from codegen import python_epoch
from codegen.capi import I8, I64
from codegen.context import LowerContext
from codegen.lower.objects import _type_is, unboxed_np_scalar
from codegen.lower.table import (
    _entry_alloca,
    _i64,
    lowers,
)
from jit.kinds import NUMPY_SCALARS, Kind
from jit.trace import Trace, TraceKind, Uop, Value

# the uops declared Lowering.SKELETON are lowered by the trace's skeleton (codegen.function)


@lowers("_LOAD_CONST_INLINE")
def _load_const(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.constant(uop.out.kind, uop.operand)  # type: ignore[union-attr]


@lowers("_GUARD_SLOT_KIND")
def _guard_slot_kind(ctx: LowerContext, uop: Uop) -> None:
    slot, kind = uop.operand.slot, uop.operand.kind
    # (the side trace's first read of a slot, jit.recorder: not the check of what an inner tree wrote there)
    first_read = uop.exit is not None and not uop.exit.propagate
    scalar = kind.is_numpy_scalar and first_read
    if scalar:
        _unbox_scalar_slot(ctx, slot, kind)
    ctx.guard(ctx.slot_kind_matches(slot, kind), uop)
    value = ctx.trace.entry_slots.get(slot)
    if scalar and value is not None and value.kind == kind:  # (loaded where the trace starts: its value now)
        ctx.values[value.id] = ctx.load_slot(slot, kind)


def _unbox_scalar_slot(ctx: LowerContext, slot: int, kind: Kind) -> None:
    """Where slot holds a NumPy scalar of kind as an object no native code wrote (a tree's entry stub classifies
    the NumPy scalars outside its entry type map as objects: ``codegen.entry``), hold its value instead, as the
    buffer's Python path and the stub's own NumPy slots do (the frame keeps the object: a slot not written is not
    boxed again). Without it, a side trace reading a NumPy scalar its root never read failed its guard of the
    slot's kind at every iteration, and so did each side trace grown from it."""
    b = ctx.builder
    address = ctx.tag_address(ctx.layout.slot_tag(slot))
    with b.if_then(b.icmp_unsigned("==", b.load(address), ir.Constant(I8, int(Kind.OBJECT)))):
        obj = ctx.load_slot(slot, Kind.OBJECT)
        with b.if_then(_type_is(ctx, obj, NUMPY_SCALARS[kind])):
            ctx.store_word(ctx.layout.slot_word(slot), kind, unboxed_np_scalar(ctx, obj, kind))
            b.store(ir.Constant(I8, int(kind)), address)


@lowers("_CALL_TREE")
def _call_tree(ctx: LowerContext, uop: Uop) -> None:
    ctx.call_handed = ctx.ownership.slot_state(ctx.trace, uop.operand.snapshot)  # (taken back after the call)
    ctx.materialize(uop.operand.snapshot, pin=False)  # (what the state depends on lives across the call)
    for value_id in ctx.call_handed:  # the trace keeps a reference of its own: the inner tree may drop the buffer's
        ctx.incref(ctx.value(ctx.ownership.values[value_id]))
    ctx.store_fuel()
    tree = uop.operand.tree
    callee = ctx.tree_function(tree.call_symbol)
    proven = getattr(tree, "proven_call_symbol", None)
    kept = None
    # (a root's loop: a side trace calls once per entry, and one joined into its loop's function (codegen.joined)
    # takes as its entry values the loop's, which change from one iteration to the next)
    if proven is not None and ctx.trace.kind is TraceKind.ROOT:
        kept = _same_objects(ctx.trace, uop.operand.snapshot.outer.slots, tree.root.trace)
    if kept is None:
        ctx.call_result = ctx.builder.call(callee, [ctx.buf])
    else:
        ctx.call_result = _call_proven(ctx, callee, ctx.tree_function(proven), kept)  # type: ignore[arg-type]
    ctx.load_fuel()


def _call_proven(
    ctx: LowerContext, callee: ir.Function, proven: ir.Function, kept: list[tuple[int, Value]]
) -> ir.Value:
    """Call the tree at its proven entry (no check of the arrays' headers: codegen.python_epoch) where the epoch is
    the one this call site read before its last call, which checked them on the same objects, and the slots the
    call leaves as they are (kept: slot, and the value the outer trace entered with there) hold those still; else
    at its entry."""
    b = ctx.builder
    seen = _entry_alloca(ctx, I64)  # (this call site's epoch, -1 where the function starts: a first call checks)
    with b.goto_block(ctx.function.entry_basic_block):
        b.store(ir.Constant(I64, python_epoch.UNSEEN), seen)
    epoch = python_epoch.read(b, ctx.module)
    same = b.icmp_signed("==", epoch, b.load(seen))
    for slot, value in kept:  # (an inner tree's exit may have written another object there)
        same = b.and_(same, b.icmp_unsigned("==", ctx.load_slot(slot, value.kind), ctx.value(value)))
    with b.if_else(same) as (same, other):
        with same:
            known = b.call(proven, [ctx.buf])
            known_block = b.block
        with other:
            checked = b.call(callee, [ctx.buf])
            checked_block = b.block
    result = b.phi(I64)
    result.add_incoming(known, known_block)
    result.add_incoming(checked, checked_block)
    b.store(epoch, seen)  # (the call checked the guards, or they held: so they do while the epoch stays)
    return result


def _same_objects(caller: Trace, state: dict[int, Value], callee: Trace) -> list[tuple[int, Value]] | None:
    """Does every guard the callee's proven entry skips (python_epoch.ENTRY_CHECKED: on an array, hoisted to
    its entry) check an object the caller passes unchanged at every call? One the call writes to the buffer
    (state: those slots) must be a constant or the value of a slot the caller reads at its entry and never
    assigns; one it leaves there must be in a slot the caller reads at its entry and never assigns, and is
    compared with that value at each call (returned: slot and value; an inner tree's exit may have written
    another object there). None where some guard checks something else."""
    unchanged = {value.id for slot, value in caller.entry_slots.items() if slot not in caller.written}
    slot_of = {value.id: slot for slot, value in callee.entry_slots.items()}
    kept: list[tuple[int, Value]] = []
    for uop in callee.hoisted:
        if uop.name not in python_epoch.ENTRY_CHECKED:
            continue
        for arg in uop.args:
            if arg.is_const:
                continue
            slot = slot_of.get(arg.id)
            if slot is None:
                return None
            passed = state.get(slot)
            if passed is not None and not (passed.is_const or passed.id in unchanged):
                return None
            if passed is None:
                entered = caller.entry_slots.get(slot)
                if entered is None or entered.id not in unchanged:
                    return None
                kept.append((slot, entered))
    return kept


@lowers("_GUARD_TREE_EXIT")
def _guard_tree_exit(ctx: LowerContext, uop: Uop) -> None:
    """The inner tree left its loop the recorded way: go on. It left another normal way: that exit of the
    outer trace (the state is in the buffer already; it may grow a side trace). Anything else: hand the
    inner tree's exit to the interpreter as it is."""
    exit_id = uop.operand.exit
    b = ctx.builder
    result = ctx.call_result

    def dispatch() -> None:
        for point in uop.alternatives:
            taken = ctx.function.append_basic_block("inner_loop_exit")
            other = ctx.function.append_basic_block()
            b.cbranch(b.icmp_signed("==", result, _i64(point.prewritten.inner_exit)), taken, other)
            b.position_at_end(taken)
            ctx.exit_stub(point)
            b.position_at_end(other)

    ctx.guard(b.icmp_signed("==", result, _i64(exit_id)), uop, before_exit=dispatch)
    call = ctx.trace.uops[ctx.position - 1]
    assert call.name == "_CALL_TREE"
    ctx.call_snapshot = call.operand.snapshot
    if ctx.call_handed:  # (jit.recorder emits it where the trace may own what the call handed over)
        assert any(later.name == "_TAKE_BACK" for later in ctx.trace.uops[ctx.position :]), "no _TAKE_BACK"


@lowers("_TAKE_BACK")
def _take_back(ctx: LowerContext, uop: Uop) -> None:
    """The buffer's references to what the last call handed over, in the slots the inner tree did not assign
    meanwhile (codegen.context.LowerContext.take_back): from here on, the trace's own references stand alone.
    The slots the inner tree's exit wrote are the ones read back since the call (``_RELOAD_SLOT``...)."""
    if ctx.call_handed:
        reloaded: set[int] = set()
        for earlier in reversed(ctx.trace.uops[: ctx.position]):
            if earlier.name == "_CALL_TREE":
                break
            if earlier.name in ("_RELOAD_SLOT", "_RELOAD_SLOT_OWNED"):
                reloaded.add(earlier.operand)
        ctx.take_back(ctx.call_handed, ctx.call_snapshot, reloaded)
        ctx.call_handed = Counter()


@lowers("_RELOAD_SLOT")
def _reload_slot(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.load_slot(uop.operand, uop.out.kind)  # type: ignore[union-attr]


@lowers("_RELOAD_SLOT_OWNED")
def _reload_slot_owned(ctx: LowerContext, uop: Uop) -> ir.Value:
    """What the inner tree wrote in the slot, with a reference of the trace's own: the buffer's, if it holds one
    (tag OWNED: the trace takes it over), else a new one."""
    obj = ctx.load_slot(uop.operand, uop.out.kind)  # type: ignore[union-attr]
    return ctx.take_over(obj, ctx.tag_address(ctx.layout.slot_tag(uop.operand)))


@lowers("_RELOAD_STACK")
def _reload_stack(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.load_stack(uop.operand, uop.out.kind)  # type: ignore[union-attr]


@lowers("_JUMP_TO_TREE")
def _jump_to_tree(ctx: LowerContext, uop: Uop) -> None:
    if ctx.rejoin is not None:  # (back into its tree's loop in the same function: codegen.joined)
        ctx.rejoin(uop)
        return
    assert ctx.trace.end_snapshot is not None
    ctx.hand_over_end(ctx.trace.end_snapshot)
    ctx.store_fuel()
    callee = ctx.tree_function(uop.operand.symbol)
    ctx.builder.ret(ctx.builder.call(callee, [ctx.buf], tail="musttail"))


@lowers("_EXIT_TRACE")
def _exit_trace(ctx: LowerContext, uop: Uop) -> None:
    assert uop.exit is not None
    ctx.exit_stub(uop.exit)
