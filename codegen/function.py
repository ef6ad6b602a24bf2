"""A trace as one LLVM function ``i64 trace(i8* buffer)``: the calling convention of every compiled trace.

A root trace that loops::

    entry:   fuel and live-in slots loaded from the buffer; hoisted guards
    loop:    one phi per loop-carried slot (values stay in registers), _CHECK_PERIODIC, the body
    latch:   _JUMP_TO_TOP: the slots' new values flow into the phis

A side trace, or a root trace that does not close its loop, runs straight from entry to a tail-jump into a
tree (``musttail``, same signature) or an exit. The function returns the number of the exit it left by (the
state is then in the buffer); calls of inner trees and tail-jumps go through the same buffer.

A slot a looping trace assigns but does not read first keeps, in two phis, whether it has been assigned yet and
its value from the previous iteration, so an exit early in an iteration still gives the interpreter the
slot's current value.
"""

from __future__ import annotations

from collections.abc import Container

from llvmlite import ir

from codegen import abi
from codegen.capi import I1, I64
from codegen.context import LowerContext, llvm_type
from codegen.lower import LOWERINGS
from codegen.ownership import ENTRY
from jit.kinds import Kind
from jit.resume import assigned_late
from jit.trace import Trace, TraceEnd, Uop
from jit.uops import Lowering


def build(ctx: LowerContext) -> None:
    trace = ctx.trace
    b = ctx.builder
    ctx.load_fuel()
    for slot, value in trace.entry_slots.items():
        ctx.values[value.id] = ctx.load_slot(slot, value.kind)
    for value in ctx.ownership.entry_slots.values():  # (the buffer keeps its own reference: codegen.ownership)
        ctx.incref(ctx.values[value.id])
    for index, value in trace.entry_stack.items():
        ctx.values[value.id] = ctx.load_stack(index, value.kind)
    for uop in trace.hoisted:
        _lower(ctx, uop)
    # owned values the trace starts with (a side trace's stack) and never needs: released now, as any other
    # owned value after its last use (the hoisted guards above hand them over with the entry's state)
    ctx.release(ctx.ownership.released.get(ENTRY, []))
    if trace.end is not TraceEnd.LOOP:
        for position, uop in enumerate(trace.uops):
            _lower(ctx, uop, position)
        return

    entry_end = b.block
    loop = ctx.function.append_basic_block("loop")
    b.branch(loop)
    b.position_at_end(loop)
    phis: dict[int, ir.PhiInstr] = {}
    assert trace.end_snapshot is not None
    end = trace.end_snapshot.outer.slots
    for slot, value in trace.entry_slots.items():
        if end.get(slot) is value:
            continue  # the same value at every iteration: the entry's load, loop-invariant
        phi = b.phi(llvm_type(value.kind), name=f"slot{slot}")
        phi.add_incoming(ctx.values[value.id], entry_end)
        ctx.values[value.id] = phi
        phis[slot] = phi
    flags: dict[int, tuple[ir.PhiInstr, ir.PhiInstr]] = {}
    for slot, value in assigned_late(trace).items():  # exits before their assignment: jit.resume.Hold.PREVIOUS
        kind = value.kind
        written = b.phi(I1, name=f"assigned{slot}")
        written.add_incoming(ir.Constant(I1, 0), entry_end)
        previous = b.phi(llvm_type(kind), name=f"previous{slot}")
        previous.add_incoming(ir.Constant(llvm_type(kind), ir.Undefined), entry_end)
        flags[slot] = (written, previous)
        ctx.valid[slot] = (written, previous)
        ctx.valid_kinds[slot] = kind
    fuel = b.phi(I64, name="fuel")
    fuel.add_incoming(ctx.fuel, entry_end)
    ctx.fuel = fuel
    ctx.state_writers.clear()  # (in the loop, a snapshot's values are the phis, not the entry's loads)

    for position, uop in enumerate(trace.uops):
        if uop.name == "_JUMP_TO_TOP":
            ctx.flush_guards()
            # each slot phi of an owned kind starts the next iteration with a reference of its own
            for value, count in ctx.ownership.latch_references():
                for _ in range(count):
                    ctx.incref(ctx.value(value))
            latch = b.block
            for slot, phi in phis.items():
                phi.add_incoming(ctx.value(end[slot]), latch)
            for slot, (written, previous) in flags.items():
                written.add_incoming(ir.Constant(I1, 1), latch)
                previous.add_incoming(ctx.value(end[slot]), latch)
            fuel.add_incoming(ctx.fuel, latch)
            b.branch(loop)
        else:
            _lower(ctx, uop, position)
    hoist_invariants(ctx.function, entry_end, loop)


#: instructions that compute a value from their operands alone and never trap (poison at worst): where their
#: operands are loop-invariant, computing them once before the loop is exact
_SPECULATABLE = frozenset(
    "add sub mul and or xor shl lshr ashr fadd fsub fmul fdiv fneg icmp fcmp select extractvalue insertvalue "
    "getelementptr bitcast inttoptr ptrtoint zext sext trunc sitofp uitofp fptosi fptoui fpext fptrunc".split()
)
#: intrinsics that are speculatable too (llvm.sadd.with.overflow.i64, ...)
_SPECULATABLE_CALLS = ("llvm.sadd.with.overflow.", "llvm.ssub.with.overflow.", "llvm.smul.with.overflow.")


def hoist_invariants(function: ir.Function, preheader: ir.Block, loop: ir.Block) -> None:
    """Move the loop's speculatable instructions whose operands are all defined before the loop (arithmetic on
    loop-invariant values, with its overflow flag: ``a * b`` in an inner loop) to the end of preheader, the
    block that enters the loop. Only the computation moves: a guard on its result stays where it was, and
    branches on a value known before the loop. (What LLVM's LICM did in the O2 pipeline, which traces do not
    run: ``codegen.engine``.) Exit blocks are left alone: their code runs once, when the exit is taken."""
    blocks = function.blocks
    start = blocks.index(loop)
    outside = {id(block) for block in blocks[:start]}
    terminator = preheader.instructions.pop()
    for block in blocks[start:]:
        if block.name.startswith("exit"):
            continue
        kept = []
        for instr in block.instructions:
            if _speculatable(instr) and all(_defined_in(op, outside) for op in instr.operands):
                instr.parent = preheader
                preheader.instructions.append(instr)
            else:
                kept.append(instr)
        block.instructions[:] = kept
    preheader.instructions.append(terminator)


def _speculatable(instr: ir.Instruction) -> bool:
    if instr.opname == "call":
        return isinstance(instr.callee, ir.Function) and instr.callee.name.startswith(_SPECULATABLE_CALLS)
    return instr.opname in _SPECULATABLE


def _defined_in(value: ir.Value, blocks: set[int]) -> bool:
    """Is value available before the loop: a constant, an argument or global, or computed in one of blocks?"""
    if isinstance(value, ir.Instruction):
        return id(value.parent) in blocks
    return True


def _lower(ctx: LowerContext, uop: Uop, position: int | None = None) -> None:
    """Lower one uop; position: its index in trace.uops (None for a hoisted guard), after which the owned
    values it last needs are released (codegen.ownership)."""
    if not uop.op.pure:
        ctx.flush_guards()  # (before the position moves on: the deferred guards leave from the earlier one)
    if position is not None:
        ctx.position = position
    if uop.name == "_CHECK_PERIODIC":
        _check_periodic(ctx, uop)
        return
    assert uop.op.lowering is Lowering.TABLE, f"{uop.name} is lowered by {uop.op.lowering.value}"
    out = LOWERINGS[uop.name](ctx, uop)
    if uop.out is not None:
        assert out is not None, uop.name
        ctx.values[uop.out.id] = out
    if position is not None:
        released = ctx.ownership.released.get(position)
        if released and not ctx.builder.block.is_terminated:
            ctx.release(released)


def _check_periodic(ctx: LowerContext, uop: Uop) -> None:
    """Count down the fuel; every ``abi.PERIOD`` iterations: let CPython run pending signal handlers (leaving
    with their exception, e.g. KeyboardInterrupt), then re-check the hoisted guards, which a handler may have
    invalidated, and the values read at the entry (arrays' headers), leaving if one changed. (The fuel is never reset, so what an entry used is the number of iterations it ran.)"""
    b = ctx.builder
    assert ctx.fuel is not None
    fuel = b.sub(ctx.fuel, ir.Constant(I64, 1))
    ctx.fuel = fuel
    slow = ctx.function.append_basic_block("periodic")
    cont = ctx.function.append_basic_block("periodic_done")
    due = b.icmp_unsigned("==", b.and_(fuel, ir.Constant(I64, abi.PERIOD - 1)), ir.Constant(I64, 0))
    branch = b.cbranch(due, slow, cont)
    branch.set_weights([1, abi.PERIOD])
    b.position_at_end(slow)
    pending = ctx.capi("PyErr_CheckSignals")
    ctx.guard(b.icmp_signed("==", pending, ir.Constant(pending.type, 0)), uop)
    for hoisted in ctx.trace.hoisted:
        if hoisted.op.is_guard:
            entry_value = ctx.values.get(hoisted.out.id) if hoisted.out is not None else None
            _lower(ctx, hoisted)
            if entry_value is not None:  # (an index guard's output: the same value, computed at the entry)
                ctx.values[hoisted.out.id] = entry_value  # type: ignore[union-attr]
        else:  # a value read at the entry (an array's header): leave if a handler changed it
            again = LOWERINGS[hoisted.name](ctx, hoisted)
            ctx.guard(b.icmp_unsigned("==", again, ctx.values[hoisted.out.id]), uop)  # type: ignore[union-attr]
    if _holds_borrowed_objects(ctx.trace, ctx.ownership.defined):
        # a handler might have dropped the last reference to an object a slot points to: leave
        ctx.exit_stub(uop.exit)  # type: ignore[arg-type]
    else:
        b.branch(cont)
    b.position_at_end(cont)


def _holds_borrowed_objects(trace: Trace, owned: Container[int]) -> bool:
    """Does a loop-carried slot hold an object the trace found inside another (a list's element)? (Not one
    it owns: an int object, a list it built.)"""
    assert trace.end_snapshot is not None
    for slot in trace.written:
        value = trace.end_snapshot.outer.slots.get(slot)
        if value is not None and value.kind.is_pointer and trace.entry_slots.get(slot) is not value:
            if not value.is_const and value.id not in owned:
                return True
    return False


__all__ = ["Kind", "build"]
