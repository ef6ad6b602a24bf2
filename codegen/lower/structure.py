"""Lowerings of the trace's structure: slots, stack, constants, tree calls, exits."""

from __future__ import annotations

from collections import Counter

from llvmlite import ir

from codegen.context import LowerContext
from codegen.lower.table import (
    _i64,
    lowers,
)
from jit.trace import Uop

# the uops declared Lowering.SKELETON are lowered by the trace's skeleton (codegen.function)


@lowers("_LOAD_CONST_INLINE")
def _load_const(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.constant(uop.out.kind, uop.operand)  # type: ignore[union-attr]


@lowers("_GUARD_SLOT_KIND")
def _guard_slot_kind(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(ctx.slot_kind_matches(uop.operand.slot, uop.operand.kind), uop)


@lowers("_CALL_TREE")
def _call_tree(ctx: LowerContext, uop: Uop) -> None:
    ctx.call_handed = ctx.ownership.slot_state(ctx.trace, uop.operand.snapshot)  # (taken back after the call)
    ctx.materialize(uop.operand.snapshot, pin=False)  # (what the state depends on lives across the call)
    for value_id in ctx.call_handed:  # the trace keeps a reference of its own: the inner tree may drop the buffer's
        ctx.incref(ctx.value(ctx.ownership.values[value_id]))
    ctx.store_fuel()
    callee = ctx.tree_function(uop.operand.tree.call_symbol)
    ctx.call_result = ctx.builder.call(callee, [ctx.buf])
    ctx.load_fuel()


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
