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

import dataclasses
import functools
from collections.abc import Callable, Container

from llvmlite import ir

from codegen import abi, float_status, python_epoch
from codegen.capi import I1, I32, I64
from codegen.context import LowerContext, llvm_type
from codegen.lower import DEFERRING, LOWERINGS, flushes_deferred
from codegen.lower.numpy_values import element_address
from codegen.ownership import ENTRY
from codegen.text import module_text
from codegen.versions import conditions_hold, trips_left
from jit.kinds import DIRTY, Kind
from jit.resume import assigned_late
from jit.trace import Trace, TraceEnd, TraceKind, Uop, Value
from jit.uops import Guard, Lowering


def build(
    ctx: LowerContext,
    fast_copy: bool = True,
    enter: tuple[ir.Function, ir.GlobalVariable, dict[int, Kind]] | None = None,
    warm: tuple[ir.Function, ir.GlobalVariable] | None = None,
) -> None:
    """Lower ctx's trace into ctx's function, from the builder's block on; fast_copy: a versioned loop gets its
    fast copy (not a copy of the loop joined with side traces: ``codegen.joined``); enter: (such a copy) the
    function of a vectorized fast copy of the loop, its ``refused`` and the kinds of the slots it reads that
    the loop does not, entered from the loop's entry (``_enter_fast``); warm: (such a copy) the function of a
    fast copy of the loop built already, with the side traces joined in it too, and its ``refused``: the
    checked loop goes on there after its warm-up, as a root's goes on in its own fast copy."""
    trace = ctx.trace
    b = ctx.builder
    ctx.load_fuel()
    for slot, value in trace.entry_slots.items():
        ctx.values[value.id] = ctx.load_slot(slot, value.kind)
    for slot, value in ctx.ownership.entry_slots.items():  # (codegen.ownership)
        if slot in ctx.ownership.taken:
            ctx.take_over(ctx.values[value.id], ctx.tag_address(ctx.layout.slot_tag(slot)))
        else:  # (the buffer keeps its own reference)
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
        assert ctx.deferred is None, "a trace ends with a uop that is not pure"
        return

    entry_end = b.block
    assert trace.end_snapshot is not None
    end = trace.end_snapshot.outer.slots
    # the loop-carried state where the loop starts: the slots' values, the flags of slots assigned late
    # (jit.resume.Hold.PREVIOUS: not assigned yet), the fuel
    top = _Top(
        {slot: ctx.values[value.id] for slot, value in trace.entry_slots.items() if end.get(slot) is not value},
        {
            slot: (ir.Constant(I1, 0), ir.Constant(llvm_type(value.kind), ir.Undefined))
            for slot, value in assigned_late(trace).items()
        },
        ctx.fuel,  # type: ignore[arg-type]
        quiet=ctx.fuel if ctx.back_to_root is not None else None,
    )
    warm_up = None
    if fast_copy and trace.versioning is not None and any(uop.fast is not None for uop in trace.uops):
        assert ctx.fuel is not None
        fast, refused = _build_fast(ctx, checked_before=python_epoch.ENTRY_CHECKED)
        # (nothing computed here: an entry that leaves after an iteration or two, as a loop whose side trace
        # jumps back at every other iteration does, pays nothing for the fast copy; but a fast copy with no guard,
        # vectorized or checked once per run, is entered at once where enough trips are left: an inner loop's
        # tree entered at every outer iteration, a matrix product's, skips its checked warm-up)
        warm_up = (ctx.fuel, fast, refused)
        if ctx.vectorized is not None or _guard_free(trace):
            _enter_fast(ctx, fast, refused)
            entry_end = b.block
            _build_call_entry(ctx, fast, refused)
    elif warm is not None:
        assert ctx.fuel is not None
        warm_up = (ctx.fuel, *warm)
    if enter is not None:
        # (its fast copy hands an entry back to the root's function, which comes here again after an iteration
        # or two where the loop takes both ways: not again for a while)
        fast, refused, kinds = enter
        _enter_fast(ctx, fast, refused, recently=QUIET, kinds=kinds)
        entry_end = b.block
    loop = ctx.function.append_basic_block("loop")
    b.branch(loop)
    here = _loop(ctx, loop, top, fast=False, dispatch=None, warm_up=warm_up)
    here.add_incoming(top, entry_end)
    hoist_invariants(ctx.function, entry_end, loop)


def _enter_fast(
    ctx: LowerContext,
    fast: ir.Function,
    refused: ir.GlobalVariable,
    recently: int = 0,
    kinds: dict[int, Kind] | None = None,
    fewest: int = 0,
) -> None:
    """(A range loop whose fast copy has no guard in its body, vectorized or checked once per run: ``_guard_free``;
    once there an entry leaves only where the range ends or the conditions fail) go there at the entry, before
    any checked iteration, where
    CHEAP_TRIPS are left and the fast copy did not hand this entry back: the checked copy's warm-up (WARM_UP
    to WARM_UP + EVENT_EVERY iterations, each with its overflow checks) is what an inner loop's tree paid at
    every call of its outer trace (issue 9: nested-call cost, nested3). The state at the loop's top is the
    buffer's as the entry found it, which the fast copy loads; it takes a slot assigned late (the inner loop's
    variable) as assigned, and may write it back before an iteration assigns it (its conditions failing), so
    the entry goes there only where such a slot holds a word of its kind already (tagged as the fast copy
    writes it: after the first call of an inner tree, its exit wrote it so), else the checked copy starts.
    recently: an entry within that many iterations after the fuel the fast copy handed back counts as handed
    back too; kinds: slots the fast copy reads that the loop does not, and the kinds it reads them as; fewest:
    the trips to be left instead of CHEAP_TRIPS (the single-run entry: ``_build_run``)."""
    b = ctx.builder
    go_on = _fast_entry_holds(ctx, refused, recently, kinds, fewest)
    go = ctx.function.append_basic_block("enter_fast")
    stay = ctx.function.append_basic_block("enter_checked")
    b.cbranch(go_on, go, stay)
    b.position_at_end(go)
    b.ret(b.call(fast, [ctx.buf], tail="musttail"))
    b.position_at_end(stay)


def _fast_entry_holds(
    ctx: LowerContext,
    refused: ir.GlobalVariable,
    recently: int = 0,
    kinds: dict[int, Kind] | None = None,
    fewest: int = 0,
) -> ir.Value:
    """Does an entry go into the fast copy (``_enter_fast``, whose arguments these are)?"""
    b = ctx.builder
    trace = ctx.trace
    counter = trace.range_counter()
    assert counter is not None and ctx.fuel is not None
    cur, stop, step = (ctx.value(v) for v in counter[1:])
    ahead = b.select(b.icmp_signed(">", step, ir.Constant(I64, 0)), b.sub(stop, cur), b.sub(cur, stop))
    handed_back = b.icmp_unsigned("<=", b.sub(b.load(refused), ctx.fuel), ir.Constant(I64, recently))
    # (a guess, wrapping: the conditions decide)
    go_on = b.icmp_signed(">=", ahead, ir.Constant(I64, fewest or CHEAP_TRIPS))
    # (where the periodic check falls due within the first iteration, the fast copy's run would have no room:
    # it would hand the entry straight back without refusing it, and this function would send it there again,
    # forever; the checked copy runs that check. An iteration that visits unrolled inner loops' headers uses
    # more than one of the fuel: ``fuel_per_iteration``, as the fast copy sizes its runs)
    due = b.and_(b.sub(ctx.fuel, ir.Constant(I64, 1)), ir.Constant(I64, abi.PERIOD - 1))
    go_on = b.and_(go_on, b.icmp_unsigned(">=", due, ir.Constant(I64, fuel_per_iteration(trace))))
    go_on = b.and_(go_on, b.not_(handed_back))
    for slot, value in assigned_late(trace).items():
        tag = b.load(ctx.tag_address(ctx.layout.slot_tag(slot)))
        go_on = b.and_(go_on, b.icmp_unsigned("==", tag, ir.Constant(tag.type, int(value.kind) | DIRTY)))
    for slot, kind in (kinds or {}).items():
        go_on = b.and_(go_on, ctx.slot_kind_matches(slot, kind))
    return go_on


def call_entry_symbol(symbol: str) -> str:
    """The name of the tree call entry of the root trace named symbol (``_build_call_entry``), where it has one."""
    return f"{symbol}_call"


def proven_entry_symbol(symbol: str) -> str:
    """The name of the tree call entry of the root trace named symbol that skips the guards of
    ``python_epoch.ENTRY_CHECKED`` (``_build_call_entry``), where it has one."""
    return f"{symbol}_call_proven"


def _build_call_entry(main: LowerContext, fast: ir.Function, refused: ir.GlobalVariable) -> None:
    """The entry an outer trace calls the tree by (``_CALL_TREE``) where the root's function would go on in its
    fast copy at once (``_enter_fast``): the same choice, made from the buffer alone, then a tail call of the fast
    copy or of the root's function. It saves what the root's function does before choosing, at every call of an
    inner loop's tree (issue 9: nested-call cost): its prologue, which saves the registers its loop uses, and
    its loads and hoisted guards (the fast copy checks those again, but for the arrays' headers, which this
    entry checks first: ``_build_fast_checks``). Only where the choice needs nothing the hoisted uops compute
    (the range's bounds are slots or constants) and the entry takes no reference. A second entry, the proven
    one, skips the arrays' headers too: an outer trace calls it where it knows they hold (codegen.python_epoch,
    codegen.lower.structure). Where the fast copy's loop only computes values, or stores them into arrays, its
    single-run entry (``_build_run``), which makes the same choice first, is the call entry itself, or the
    proven one."""
    trace = main.trace
    counter = trace.range_counter()
    entry_ids = {value.id for value in trace.entry_slots.values()}
    if counter is None or not all(v.is_const or v.id in entry_ids for v in counter[1:]):
        return
    if trace.kind is not TraceKind.ROOT or main.ownership.entry_slots or trace.entry_stack:
        return
    skipped = [uop for uop in trace.hoisted if uop.name in python_epoch.ENTRY_CHECKED]
    # (the fast copy leaves those guards to its callers: this entry checks them first, in _fast_checks; the proven
    # entry, called where the caller knows they hold, goes straight to the fast copy, or its single-run entry)
    proven = bool(skipped) and not abi.FREE_THREADED  # (free-threaded: another thread may change an array at any time)
    if not skipped:
        run_name = call_entry_symbol(main.symbol)
    else:
        run_name = proven_entry_symbol(main.symbol) if proven else run_entry_symbol(main.symbol)
    run = _build_run(main, fast, refused, run_name)
    if run is not None and not skipped:  # (the call entry itself)
        return
    target = run if run is not None else fast
    entries = [(call_entry_symbol(main.symbol), _build_fast_checks(main, target, skipped) if skipped else target)]
    if proven and run is None:
        entries.append((proven_entry_symbol(main.symbol), target))
    for name, target in entries:
        ctx = LowerContext(trace, main.layout, name, "", "", sibling_of=main)
        ctx.function.linkage = ""  # (called by name from the modules of the trees that call this one)
        ctx.load_fuel()
        for slot, value in trace.entry_slots.items():  # (LLVM drops those the choice does not read)
            ctx.values[value.id] = ctx.load_slot(slot, value.kind)
        # (the single-run entry pays for itself from the first trip on: no checked warm-up to save)
        _enter_fast(ctx, target, refused, fewest=1 if run is not None else 0)
        ctx.builder.ret(ctx.builder.call(main.function, [ctx.buf], tail="musttail"))


def run_entry_symbol(symbol: str) -> str:
    """The name of the single-run entry of the root trace named symbol (``_build_run``), where it has one."""
    return f"{symbol}_run"


def _build_run(main: LowerContext, fast: ir.Function, refused: ir.GlobalVariable, name: str) -> ir.Function | None:
    """The way the tree call entries go into the fast copy where its loop only computes values (no guard, no
    store, no owned value: ``_effect_free``) or also stores them into arrays (``_undoable_stores``): one run of
    all the iterations the range has left, then out by the range guard's exit, where the run fits before the
    periodic check falls due (and, storing, in the log's UNDO_RUN iterations) and the conditions hold; else a
    tail call of the fast copy, which decides as before. An inner loop's tree is called at every iteration of
    its outer trace and its loop ends there every time: the fast copy's dispatch, built for a loop that runs on
    through periodic checks (the run's size computed and its state carried from one run to the next), cost most
    of such a call (issue 9: nested-call cost; the nest at m = 64 went from 12.2 to 7.9 ns per outer iteration
    when this way was tried by hand). Nothing reaches the buffer before the run ends, so a run whose deferred
    floating-point checks found an event is simply not taken: the elements it stored are put back from its log
    (as the fast copy's rollback does), and the fast copy does it again, and rolls it back as it does its own.
    For a loop that stores, the entry saves less (a stencil's row: within 5% either way, measured in one
    process), but it takes the loop from one trip on, where the call entry sent fewer than CHEAP_TRIPS to the
    checked copy (a stencil of 16 columns: 1.55x faster, 8 columns 1.24x). It makes the tree call entry's choice
    first (``_enter_fast``: else the root's function), so that it is that entry itself (name), or the proven one,
    which the call entry enters after the arrays' headers' checks. Returns None where the loop is not of that kind."""
    trace = main.trace
    if not _counted(trace) or trace.versioning is None:
        return None
    effect_free = _effect_free(trace)
    stores = None if effect_free else _undoable_stores(trace)
    if not effect_free and stores is None:
        return None
    counter = trace.range_counter()
    assert counter is not None and trace.end_snapshot is not None
    ctx = LowerContext(trace, main.layout, name, "", "", sibling_of=main)
    ctx.globals, ctx.builtins = main.globals, main.builtins
    ctx.function.linkage = ""  # (called by name from the modules of the trees that call this one)
    if main.vectorized is not None:  # (in the vectorized copy's module, which declares every function of this one)
        main.vectorized_too.append(ctx.function)
    b = ctx.builder
    if any(uop.name in DEFERRING for uop in trace.uops) and float_status.available(ctx.module):
        ctx.status_covered = float_status.covered(trace, DEFERRING)
        ctx.status_word = b.alloca(I32, name="mxcsr")
        ctx.status_ignored = float_status.ignorable(trace, ctx.ignored_events, conversions=False)
    ctx.load_fuel()
    assert ctx.fuel is not None
    fuel = ctx.fuel
    for slot, value in trace.entry_slots.items():
        ctx.values[value.id] = ctx.load_slot(slot, value.kind)
    # (the tree call entry's choice: the checked copy, or on here; from one trip on, no checked warm-up to save)
    enter = ctx.function.append_basic_block("enter_fast")
    checked = ctx.function.append_basic_block("enter_checked")
    b.cbranch(_fast_entry_holds(ctx, refused, fewest=1), enter, checked).set_weights([1000, 1])
    b.position_at_end(checked)
    b.ret(b.call(main.function, [ctx.buf], tail="musttail"))
    b.position_at_end(enter)
    other = ctx.function.append_basic_block("to_fast_copy")
    step = counter[3]
    if not step.is_const:
        # (the run is a copy for a step of 1, consecutive elements, which the vectorizer takes: another step goes
        # on in the fast copy before anything is computed with it)
        unit = ctx.function.append_basic_block("unit_step")
        b.cbranch(b.icmp_signed("==", ctx.value(step), ir.Constant(I64, 1)), unit, other)
        b.position_at_end(unit)
        ctx.values[step.id] = ir.Constant(I64, 1)
    for uop in trace.hoisted:  # (as the fast copy: the arrays' headers checked by whoever enters it)
        if uop.name not in python_epoch.ENTRY_CHECKED:
            _lower(ctx, uop)
    top = _fast_top(ctx)
    ok, trips = trips_left(ctx, *(ctx.value(v) for v in counter[1:]))
    # (the periodic check is due at the iteration whose decremented fuel is a multiple of abi.PERIOD: the whole
    # run, and the range guard's iteration after it, come before, as _leave_if_exhausted requires)
    due = b.and_(b.sub(fuel, ir.Constant(I64, 1)), ir.Constant(I64, abi.PERIOD - 1))
    fits = b.icmp_unsigned("<", trips, due)  # (small: the product below cannot overflow)
    per = fuel_per_iteration(trace)
    if per != 1:
        fits = b.and_(fits, b.icmp_unsigned("<", b.mul(trips, ir.Constant(I64, per)), due))
    if stores:  # (the run's log has room for UNDO_RUN iterations)
        fits = b.and_(fits, b.icmp_unsigned("<=", trips, ir.Constant(I64, UNDO_RUN)))
    holds = b.and_(ok, b.icmp_signed(">", trips, ir.Constant(I64, 0)))
    holds = b.and_(holds, b.and_(fits, conditions_hold(ctx, trace.versioning)))
    go = ctx.function.append_basic_block("run")
    b.cbranch(holds, go, other).set_weights([1000, 1])
    b.position_at_end(other)
    b.ret(b.call(fast, [ctx.buf], tail="musttail"))
    # (an event in the run: nothing written to the buffer, the elements it stored put back from its log, as the
    # fast copy's rollback does; the fast copy runs it again)
    events = ctx.function.append_basic_block("run_events")
    b.position_at_end(events)
    undo = None
    if stores:
        undo = _undo_log(ctx, stores)
        at, old, affine = undo
        start = top.values[_slot_of(trace, counter[1])]
        _restore(ctx, at, old, trips, _first_addresses(ctx, stores, affine, counter, start))
    b.ret(b.call(fast, [ctx.buf], tail="musttail"))
    done = ctx.function.append_basic_block("run_done")
    b.position_at_end(done)
    finish = _Top.phis(ctx, top, assigned=True)
    b.position_at_end(go)
    runs = ctx.module.globals[f"{main.symbol}_fast_runs"]  # (a run of the fast copy's loop: jit.stats counts it)
    b.store(b.add(b.load(runs), ir.Constant(I64, 1)), runs)
    body = ctx.function.append_basic_block("loop_run")
    b.branch(body)
    here = _loop(ctx, body, top, fast=True, dispatch=(finish, done), counted=True, rollback=events, undo=undo)
    here.add_incoming(dataclasses.replace(top, left=trips), go)
    assert here.mark is not None
    here.mark.add_incoming(ir.Constant(I64, 0), go)  # type: ignore[attr-defined]
    # the range has no iterations left: out by its guard's exit, as _leave_if_exhausted would
    b.position_at_end(done)
    for slot, phi in finish.values.items():
        ctx.values[trace.entry_slots[slot].id] = phi
    ctx.state_writers.clear()
    _range_exit(ctx, finish, ir.Constant(I1, 0))
    b.unreachable()
    hoist_invariants(ctx.function, go, body)
    return ctx.function


def _build_fast_checks(main: LowerContext, fast: ir.Function, skipped: list[Uop]) -> ir.Function:
    """The way into the fast copy from the tree call entry: the hoisted guards the fast copy leaves to whoever
    enters it (skipped: those of ``python_epoch.ENTRY_CHECKED``), each leaving by its exit as the fast copy did,
    then a tail call of the fast copy."""
    ctx = LowerContext(main.trace, main.layout, f"{main.symbol}_fast_checks", "", "", sibling_of=main)
    if main.vectorized is not None:  # (the vectorized copy's module declares every function of this one)
        ctx.function.linkage = ""
    ctx.load_fuel()
    for slot, value in main.trace.entry_slots.items():
        ctx.values[value.id] = ctx.load_slot(slot, value.kind)
    for uop in skipped:
        _lower(ctx, uop)
    ctx.builder.ret(ctx.builder.call(fast, [ctx.buf], tail="musttail"))
    return ctx.function


def _build_fast(
    main: LowerContext,
    join: Callable[[LowerContext], None] | None = None,
    sides: tuple[Trace, ...] = (),
    checked_before: frozenset[str] = frozenset(),
) -> tuple[ir.Function, ir.GlobalVariable]:
    """A versioned loop's fast copy (jit.versions), in a function of its own: the trace's function goes on in
    it (a tail call, the state at the loop's top in the buffer) after WARM_UP iterations of an entry, if
    CHEAP_TRIPS are left (a guess), so that the trace's function keeps the registers of the loop as recorded.
    It checks the conditions there, and again after each periodic check: the fast copy runs while they hold;
    else it goes back to the trace's function (a tail call again), storing the fuel in the returned global
    so that this entry goes on there (it would fail again). A range loop's fast copy is counted: it runs the
    iterations left, at most until the next periodic check is due, with neither the range's guard nor the
    periodic check (its first two uops), then the conditions are checked again (where the periodic check
    is due, the trace's function runs it). join: (a loop joined with side traces: ``codegen.joined``) puts them
    into the fast copy's context, each lowered where its guard fails, in the fast copy's iteration; sides: their
    traces.

    A counted copy whose iteration has NumPy float operations and guards that only check (a branch, an overflow,
    a conversion: ``_checks_only``), with or without logged stores, is checked once per run too: where a guard
    fails, ``_exit_check`` first looks at the run so far (its marks, the status flags, and the marks of the
    iteration's covered operations, computed there): nothing happened, the guard's exit is exact and taken (the
    stores so far stand); an event, the run is rolled back (every store it made so far: its log is compact, an
    entry per store that ran, ``_logger``) and the checked copy redoes it, leaving where the event is.

    checked_before: the hoisted guards (by name) the fast copy does not check again, left to whoever enters it
    (the trace's function, at its own entry; the tree call entries: ``_build_call_entry``)."""
    trace = main.trace
    ctx = LowerContext(trace, main.layout, f"{main.symbol}_fast", "", "", sibling_of=main)
    ctx.globals, ctx.builtins = main.globals, main.builtins
    if join is not None:
        join(ctx)
    refused = ir.GlobalVariable(ctx.module, I64, f"{main.symbol}_refused")
    refused.linkage = "internal"
    refused.initializer = ir.Constant(I64, 1)  # (never a fuel the trace's function enters with)
    # how often the fast copy was entered (jit.stats: fast_runs)
    runs = ir.GlobalVariable(ctx.module, I64, f"{main.symbol}_fast_runs")
    runs.initializer = ir.Constant(I64, 0)
    b = ctx.builder
    counter = trace.range_counter()
    counted = _counted(trace)
    # (a counted copy that only computes values, or also stores them into arrays: the checks of floating-point
    # events of a whole run are one flag, tested at its end; stores are logged, to be undone where it is set)
    # (guards that only check: where the iteration has NumPy float operations, whose marks a run's flag saves)
    guarded = counted and _guarded_run(trace, sides)
    stores = _undoable_stores(trace, guarded) if counted else None
    run_checked = counted and (_effect_free(trace, guarded) or stores is not None)
    if run_checked and any(uop.name in DEFERRING for uop in trace.uops) and float_status.available(ctx.module):
        # (a run checked at its end: the processor's flags check the NumPy float operations every iteration surely
        # computes; read where each run ends, cleared only where a run is rolled back (_rollback), not here: a
        # flag left set before the call sends the first run there, which clears it and runs again
        # (codegen.float_status); a loop with none reads nothing: an inner loop entered at every outer iteration
        # would pay for it, nested3 4%)
        ctx.status_covered = float_status.covered(trace, DEFERRING | (float_status.CONVERSIONS if guarded else set()))
        ctx.status_word = b.alloca(I32, name="mxcsr")
        ctx.status_ignored = float_status.ignorable(trace, ctx.ignored_events, conversions=guarded)
    ctx.load_fuel()
    for slot, value in trace.entry_slots.items():
        ctx.values[value.id] = ctx.load_slot(slot, value.kind)
    for uop in trace.hoisted:  # (the values read at the entry are needed; the guards checked again, but those
        if uop.name not in checked_before:  # left to whoever enters: checked_before)
            _lower(ctx, uop)
    assert trace.end_snapshot is not None and trace.versioning is not None
    # (the trace's function comes here after whole iterations: the slots assigned late are assigned)
    top = _fast_top(ctx)
    entry_end = b.block
    dispatch_block = ctx.function.append_basic_block("dispatch")
    fast = ctx.function.append_basic_block("loop_fast")
    back = ctx.function.append_basic_block("dispatch_back")
    b.branch(dispatch_block)
    b.position_at_end(dispatch_block)
    dispatch = _Top.phis(ctx, top, assigned=True)
    dispatch.add_incoming(top, entry_end)
    for slot, phi in dispatch.values.items():
        ctx.values[trace.entry_slots[slot].id] = phi
    left = None
    due_now = ir.Constant(I1, 0)
    if counted:
        assert counter is not None
        ok, trips = trips_left(ctx, *(ctx.value(v) for v in counter[1:]))
        # the periodic check is due at the iteration whose decremented fuel is a multiple of abi.PERIOD
        due = b.and_(b.sub(dispatch.fuel, ir.Constant(I64, 1)), ir.Constant(I64, abi.PERIOD - 1))
        # first: a run that ended with the range (an inner loop called by its outer trace, at every call) leaves
        # before the conditions are computed, which only the way on needs (issue 9: nested-call cost)
        _leave_if_exhausted(ctx, dispatch, ok, trips, due)
    holds = conditions_hold(ctx, trace.versioning)
    if counted:
        # (an iteration that visits the headers of unrolled inner loops counts each visit in the fuel too: the
        # run stops before the fuel reaches the multiple of abi.PERIOD where the check is due)
        per = fuel_per_iteration(trace)
        room = due if per == 1 else b.udiv(due, ir.Constant(I64, per))
        left = b.select(b.icmp_signed("<", trips, room), trips, room)
        if stores:  # (the run's log has room for UNDO_RUN iterations)
            left = b.select(b.icmp_signed("<", left, ir.Constant(I64, UNDO_RUN)), left, ir.Constant(I64, UNDO_RUN))
        holds = b.and_(holds, ok)
        due_now = b.and_(holds, b.icmp_signed(">", trips, ir.Constant(I64, 0)))
        holds = b.and_(holds, b.icmp_signed(">", left, ir.Constant(I64, 0)))
    if counted and vectorizable(trace, stores is not None):
        # its own module, optimized with the vectorizing pipeline (codegen.engine): both functions and the
        # globals they share are then linked across modules (module_texts)
        ctx.function.linkage = ""
        refused.linkage = ""
        main.vectorized = ctx.function
    b.cbranch(holds, fast, back)
    b.position_at_end(back)
    _store_top(ctx, dispatch)  # the state at the loop's top, where the trace's function goes on
    ctx.fuel = dispatch.fuel
    ctx.store_fuel()
    # (where only the periodic check is due, the trace's function runs it and comes back after WARM_UP)
    with b.if_then(b.not_(due_now)):
        b.store(dispatch.fuel, refused)
    b.ret(b.call(main.function, [ctx.buf], tail="musttail"))
    rollback = None
    undo = None
    affine: list[bool] = []
    if stores:
        at, old, affine = _undo_log(ctx, stores, compact=guarded)
        undo = (at, old)
    if run_checked:
        # the events of a whole run of the fast copy are checked at its end: where one happened, back to the
        # trace's function at the run's start (nothing has changed but the loop-carried values, which are the
        # dispatch's phis there, and the elements the run stored, whose old values its log restores), which
        # redoes the run checking each iteration, for this entry (refused)
        assert left is not None
        rollback = _rollback(ctx, main, dispatch, refused, left, "rollback", stores, undo, affine, guarded)
        if guarded:
            # (a guard failing after an event in the run: what the run stored so far undone; made where the first
            # guard needs it)
            made: list[ir.Block] = []

            def within() -> ir.Block:
                if not made:
                    fuel = ctx.fuel
                    made.append(
                        _rollback(ctx, main, dispatch, refused, left, "rollback_within", stores, undo, affine, True)
                    )
                    ctx.fuel = fuel
                return made[0]

            ctx.exit_check = functools.partial(_exit_check, ctx, within)
    b.position_at_end(fast)
    b.store(b.add(b.load(runs), ir.Constant(I64, 1)), runs)
    steps: list[ir.Value | None] = [None]
    if main.vectorized is ctx.function and counter is not None and not counter[3].is_const:
        # a copy for a step of 1 (a constant: consecutive elements, which the vectorizer loads as vectors rather
        # than gathers or, where the loop stores, gives up on), then one for any other step
        steps = [ir.Constant(I64, 1), None]
    for step in steps:
        body = ctx.function.append_basic_block("loop_fast_body")
        if step is not None:
            assert counter is not None
            other = ctx.function.append_basic_block("loop_fast_step")
            b.cbranch(b.icmp_signed("==", ctx.value(counter[3]), step), body, other)
            ctx.values[counter[3].id], general = step, ctx.value(counter[3])
        else:
            b.branch(body)
        entered = b.block
        unchecked = _loop(
            ctx,
            body,
            top,
            fast=True,
            dispatch=(dispatch, dispatch_block),
            counted=counted,
            rollback=rollback,
            undo=None if undo is None else (*undo, affine),
            compact=guarded,
        )
        unchecked.add_incoming(dataclasses.replace(dispatch, left=left), entered)
        for phi in (unchecked.mark, unchecked.logged):
            if phi is not None:
                phi.add_incoming(ir.Constant(I64, 0), entered)  # type: ignore[attr-defined]
        if step is not None:
            assert counter is not None
            ctx.values[counter[3].id] = general
            b.position_at_end(other)
    ctx.exit_check = None
    hoist_invariants(ctx.function, entry_end, dispatch_block)
    return ctx.function, refused


def _rollback(
    ctx: LowerContext,
    main: LowerContext,
    dispatch: _Top,
    refused: ir.GlobalVariable,
    left: ir.Value,
    name: str,
    stores: list[Uop] | None,
    undo: tuple[ir.Value, ir.Value] | None,
    affine: list[bool],
    compact: bool,
) -> ir.Block:
    """(A counted fast copy checked once per run: _build_fast) the block that undoes a run and goes back to the
    trace's function at its start, for this entry (refused): the elements its log holds put back, the state at
    the loop's top the dispatch's. left: the run's iterations, each of which logged its stores; compact: (a run
    with guards) the block starts with a phi of the number of entries its log holds (``_logger``), which the
    ways into it fill in."""
    b = ctx.builder
    trace = ctx.trace
    here = b.block
    rollback = ctx.function.append_basic_block(name)
    b.position_at_end(rollback)
    entries = b.phi(I64, name="undo_entries") if compact else None
    if undo is not None and entries is not None:
        _restore_compact(ctx, *undo, entries)
    elif undo is not None:
        counter = trace.range_counter()
        assert stores is not None and counter is not None
        start = dispatch.values[_slot_of(trace, counter[1])]
        _restore(ctx, *undo, left, _first_addresses(ctx, stores, affine, counter, start))
    _store_top(ctx, dispatch)
    ctx.fuel = dispatch.fuel
    ctx.store_fuel()
    if ctx.status_word is not None:
        # (the flags are read where runs end, never cleared where the fast copy starts: a flag left set before the
        # entry, by Python code or an outer trace, sends its first run here too. They are cleared here, the one
        # place they are written, and the run is done again once, by the fast copy entered anew (its hoisted
        # operations computed again: their events count); the flags set again at its end, the event was the
        # run's own: the checked copy redoes it, and its marks find the event)
        float_status.clear(b, ctx.module, ctx.status_word)
        again = ctx.function.append_basic_block(f"{name}_again")
        checked = ctx.function.append_basic_block(f"{name}_checked")
        retried = _retried(ctx)
        run = b.load(ctx.module.globals[f"{main.symbol}_fast_runs"])  # (this run's number: runs are counted)
        b.cbranch(b.icmp_unsigned("!=", b.load(retried), run), again, checked)
        b.position_at_end(again)
        b.store(b.add(run, ir.Constant(I64, 1)), retried)
        b.ret(b.call(ctx.function, [ctx.buf], tail="musttail"))
        b.position_at_end(checked)
    b.store(dispatch.fuel, refused)
    b.ret(b.call(main.function, [ctx.buf], tail="musttail"))
    b.position_at_end(here)
    return rollback


def _retried(ctx: LowerContext) -> ir.GlobalVariable:
    """(A fast copy whose runs the status flags check: _rollback) the number (``fast_runs``) of the run that did
    the last run rolled back again: that run rolled back too goes to the checked copy. (Not the fuel: every call
    may start its first run with the same.)"""
    name = f"{ctx.function.name}_retried"
    retried = ctx.module.globals.get(name)
    if retried is None:
        retried = ir.GlobalVariable(ctx.module, I64, name)
        # (internal, but where the fast copy is vectorized: its module declares what the trace's module defines)
        retried.linkage = ctx.function.linkage
        retried.initializer = ir.Constant(I64, 0)  # (no run has that number: the first is 1)
    return retried


def _exit_check(ctx: LowerContext, rollback: Callable[[], ir.Block]) -> None:
    """LowerContext.exit_check of a counted fast copy whose run is checked at its end and whose body has guards
    (_build_fast): at a failing guard, before its exit, did the run so far have a floating-point event? Its marks
    so far (the iterations before, and this one's deferred), the status flags (every covered operation of the
    iterations before ran), and the marks of this iteration's covered operations, computed here (the flags
    cannot say whether they ran yet). If so, the run is rolled back (rollback: makes, once, the block that undoes
    what its compact log holds, the stores so far); else on to the exit, exact: nothing before it had an event."""
    b = ctx.builder
    assert ctx.loop_top is not None
    here = ctx.loop_top[0]
    assert here.mark is not None
    events = here.mark
    if ctx.deferred is not None:
        events = b.or_(events, b.bitcast(ctx.deferred[0], I64))
    happened = b.icmp_unsigned("!=", b.and_(events, ir.Constant(I64, _EXPONENT)), ir.Constant(I64, 0))
    marks = [mark() for mark in ctx.covered_marks or []]
    if marks:
        total = functools.reduce(b.fadd, marks)
        happened = b.or_(happened, b.fcmp_unordered("!=", total, ir.Constant(total.type, 0.0)))
    if ctx.status_word is not None:
        happened = b.or_(happened, float_status.raised(b, ctx.module, ctx.status_word, ctx.status_ignored))
    exact = ctx.function.append_basic_block("exit_exact")
    block = b.block
    target = rollback()
    target.instructions[0].add_incoming(ctx.log_position, block)  # type: ignore[attr-defined]
    b.cbranch(happened, target, exact)
    b.position_at_end(exact)


#: the exponent's bits of a double: all set in a NaN, none in a zero of either sign
_EXPONENT = 0x7FF0000000000000


#: uops a counted fast copy lowers as plain work: the loop's end, and an unrolled loop's header (the fuel alone)
_COUNTED_PURE = frozenset({"_JUMP_TO_TOP", "_UNROLLED_HEADER"})
#: the most iterations of a run of a counted fast copy that stores into arrays (its log's size: 4 KiB per store)
UNDO_RUN = 256
#: the most stores per iteration such a copy logs (more: it checks each iteration before its stores)
MAX_UNDO_STORES = 4


def _checks_only(uop: Uop) -> bool:
    """Is uop (as a fast copy lowers it) a guard that only checks, computing numbers from numbers: a branch, an
    overflow check, a conversion that may leave (no effect, nothing owned, no call that may run Python code or
    that sets or clears the floating-point status flags itself: ``float_status.OWN_FLAGS``)?"""
    op = uop.fast if uop.fast is not None else uop.op
    if op.guard is not Guard.DEOPT or op.mutates or op.owns or op.barrier or op.drops or uop.name in _NOT_CHECKS:
        return False
    if op.lowering is not Lowering.TABLE or uop.name in float_status.OWN_FLAGS:
        return False
    return all(_plain_number(v.kind) for v in uop.args) and (uop.out is None or _plain_number(uop.out.kind))


#: guards that are no check of a value: the end of a trace, an inner tree's exit
_NOT_CHECKS = frozenset({"_EXIT_TRACE", "_GUARD_TREE_EXIT"})


def _guarded_run(trace: Trace, sides: tuple[Trace, ...] = ()) -> bool:
    """May a counted fast copy with guards in its iteration be checked once per run (_build_fast): it has NumPy
    float operations (whose marks the run's flag saves), guards that only check (_checks_only), and side traces
    joined in it (sides) whose bodies have no effect either (only the root's stores are logged)?"""
    body = [uop for uop in trace.uops[2:] if uop.name not in _COUNTED_PURE]
    guards = [uop for uop in body if uop.name not in DEFERRING and _checks_only(uop)]
    if not guards or not any(uop.name in DEFERRING for uop in body):
        return False
    for side in sides:
        for uop in (*side.hoisted, *side.uops):
            op = uop.op
            if uop.name in DEFERRING or uop.name == "_JUMP_TO_TREE" or (op.pure and not op.owns):
                continue
            if not _checks_only(uop):
                return False
    return True


def _undoable_stores(trace: Trace, guards: bool = False) -> list[Uop] | None:
    """The stores of a counted fast copy's iteration (as _effect_free, but for element stores) whose run can be
    undone: each stores a float into a float64 array or an int into an int64 array (a conversion that never
    leaves), and nothing else has an effect, a guard (guards: but those that only check, ``_guarded_run``) or an
    owned value; None if there are none or others. Such a
    run logs the old value of each element before storing it (``_loop``: undo) and tests the floating-point
    events of the whole run at its end; where there was one, ``_restore`` puts every logged value back, last
    first, and the checked copy redoes the run from its start (so that NumPy's error state decides, and no
    element is stored that NumPy would not have stored before raising). Exact whatever the arrays alias: the
    run did what the checked copy would have done, in its order, and the log undoes it in the reverse order."""
    stores = []
    for uop in trace.uops[2:]:
        op = uop.fast if uop.fast is not None else uop.op
        if uop.name in _COUNTED_PURE or uop.name in DEFERRING or (op.pure and not op.owns):
            continue
        if guards and _checks_only(uop):  # (_guarded_run)
            continue
        if uop.name != "_ARRAY_STORE":
            return None
        dtype, kind = uop.operand.dtype, uop.args[0].kind
        if not ((dtype == "float64" and kind.is_double) or (dtype == "int64" and kind in (Kind.INT, Kind.NP_INT64))):
            return None
        stores.append(uop)
    return stores if 0 < len(stores) <= MAX_UNDO_STORES else None


def _undo_log(ctx: LowerContext, stores: list[Uop], compact: bool = False) -> tuple[ir.Value, ir.Value, list[bool]]:
    """The log of a run that stores (``_logger``): per store, its address (where the rollback cannot compute it)
    and the bits it overwrote (both 8 bytes wide: float64 and int64 elements), two arrays in the function's entry
    block (a fixed frame slot, which LLVM knows no array aliases); and per store whether its address is affine in
    the range's counter (``_affine``; compact: a run with guards, where a store may not run at every iteration,
    logs every address)."""
    b = ctx.builder
    counter = ctx.trace.range_counter()
    assert counter is not None
    size = UNDO_RUN * len(stores)
    here = b.block
    b.position_at_start(ctx.function.entry_basic_block)
    at, old = b.alloca(ir.ArrayType(I64, size), name="undo_at"), b.alloca(ir.ArrayType(I64, size), name="undo_old")
    b.position_at_end(here)
    invariant = ctx.trace.same_throughout()
    return at, old, [not compact and _affine(uop, counter[1], invariant) for uop in stores]


def _affine(store: Uop, cur: Value, invariant: set[int]) -> bool:
    """Is a logged store's element address affine in the range's counter cur: its every other input (the data
    address, other indices, dimensions or strides) a constant or the same throughout the loop (invariant:
    ``Trace.same_throughout``)? Then, as an iteration's counter is the run's first plus its number times the
    step, so is the address, and the rollback computes it (``_first_addresses``) instead of the run logging
    it: `out[i, j] = ...` over j, a vector store less per vector of elements."""
    inputs = store.args[1:]
    return any(v is cur for v in inputs) and all(v is cur or v.is_const or v.id in invariant for v in inputs)


def _first_addresses(
    ctx: LowerContext, stores: list[Uop], affine: list[bool], counter: tuple, start: ir.Value
) -> list[tuple[ir.Value, ir.Value] | None]:
    """(A run's rollback) per logged store whose address is affine in the counter: the address at the run's
    first iteration (the counter at start) and its step from one iteration to the next (the address with the
    counter one step on, less it); None for a store whose log holds its addresses."""
    b = ctx.builder
    step = ctx.value(counter[3])
    out: list[tuple[ir.Value, ir.Value] | None] = []
    for uop, computed in zip(stores, affine):
        if not computed:
            out.append(None)
            continue
        at: list[ir.Value] = []
        for cur in (start, b.add(start, step)):
            inputs = [cur if v is counter[1] else ctx.value(v) for v in uop.args[1:]]
            at.append(b.ptrtoint(element_address(ctx, uop.operand, inputs), I64))
        out.append((at[0], b.sub(at[1], at[0])))
    return out


def _restore(
    ctx: LowerContext,
    at: ir.Value,
    old: ir.Value,
    iterations: ir.Value,
    firsts: list[tuple[ir.Value, ir.Value] | None],
) -> None:
    """(A run's rollback) store back the values its log holds for the run's iterations, in the reverse of the
    order they were logged (``_logger`` fills the log's last entries upwards: the restore goes down from its
    top), each at its logged address or, for a store whose address is affine in the counter (firsts: its first
    address and step), at the one computed for that iteration."""
    b = ctx.builder
    per = len(firsts)
    zero = ir.Constant(I64, 0)
    last = b.sub(iterations, ir.Constant(I64, 1))
    before = b.block
    restore = ctx.function.append_basic_block("undo")
    done = ctx.function.append_basic_block("undone")
    b.cbranch(b.icmp_signed(">=", last, zero), restore, done)
    b.position_at_end(restore)
    t = b.phi(I64, name="undo_t")  # (the iteration's number in the run, from its last down to 0)
    t.add_incoming(last, before)
    base = b.mul(b.add(b.sub(ir.Constant(I64, UNDO_RUN), iterations), t), ir.Constant(I64, per))
    for s in reversed(range(per)):
        entry = b.add(base, ir.Constant(I64, s))
        first = firsts[s]
        if first is None:
            address = b.load(b.gep(at, [zero, entry]))
        else:
            address = b.add(first[0], b.mul(t, first[1]))
        b.store(b.load(b.gep(old, [zero, entry])), b.inttoptr(address, I64.as_pointer()), align=8)
    following = b.sub(t, ir.Constant(I64, 1))
    t.add_incoming(following, b.block)
    b.cbranch(b.icmp_signed(">=", following, zero), restore, done)
    b.position_at_end(done)


def _restore_compact(ctx: LowerContext, at: ir.Value, old: ir.Value, entries: ir.Value) -> None:
    """(A rollback of a run with guards) store back the values its compact log holds (``_logger``: entries of
    them, one per store that ran, in order), the last first."""
    b = ctx.builder
    zero = ir.Constant(I64, 0)
    before = b.block
    restore = ctx.function.append_basic_block("undo")
    done = ctx.function.append_basic_block("undone")
    b.cbranch(b.icmp_signed(">", entries, zero), restore, done)
    b.position_at_end(restore)
    e = b.phi(I64, name="undo_e")
    e.add_incoming(entries, before)
    entry = b.sub(e, ir.Constant(I64, 1))
    address = b.load(b.gep(at, [zero, entry]))
    b.store(b.load(b.gep(old, [zero, entry])), b.inttoptr(address, I64.as_pointer()), align=8)
    e.add_incoming(entry, b.block)
    b.cbranch(b.icmp_signed(">", entry, zero), restore, done)
    b.position_at_end(done)


def _counted(trace: Trace) -> bool:
    """Is a range loop's fast copy counted (``_build_fast``): its range's guard right after the periodic check?"""
    counter = trace.range_counter()
    return counter is not None and counter[0] == 1 and trace.uops[0].name == "_CHECK_PERIODIC"


def _guard_free(trace: Trace) -> bool:
    """Is a range loop's fast copy counted and checked once per run (``_build_fast``): no guard in its body, so
    that an entry there leaves only where the range ends (or the conditions fail)?"""
    return _counted(trace) and (_effect_free(trace) or bool(_undoable_stores(trace)))


def _effect_free(trace: Trace, guards: bool = False) -> bool:
    """Does a counted fast copy's iteration (the uops after the periodic check and the range's guard, each in
    its fast form) do nothing but compute values: no effect, no guard (guards: but those that only check,
    ``_guarded_run``), no owned value, but the deferred checks of NumPy float operations (a loop that only reads
    arrays: a dot product, a sum)?"""
    for uop in trace.uops[2:]:
        op = uop.fast if uop.fast is not None else uop.op
        if uop.name in _COUNTED_PURE or uop.name in DEFERRING or (op.pure and not op.owns):
            continue
        if guards and _checks_only(uop):  # (_guarded_run)
            continue
        return False
    return True


def _leave_if_exhausted(ctx: LowerContext, dispatch: _Top, ok: ir.Value, trips: ir.Value, due: ir.Value) -> None:
    """(A counted fast copy's dispatch) where the range has no iterations left and no periodic check is due,
    leave through the range guard's exit, as the trace's function would at its next iteration's top (its
    periodic check counts the fuel down first), instead of going back to it to find that out: an inner loop's
    run ends here (the state at the loop's top: the dispatch's phis)."""
    b = ctx.builder
    exhausted = b.and_(ok, b.icmp_signed("==", trips, ir.Constant(I64, 0)))
    # (due: the iterations until the periodic check is due, less one; 0 where it is due at the next one)
    leave = b.and_(exhausted, b.icmp_signed("!=", due, ir.Constant(I64, 0)))
    _range_exit(ctx, dispatch, b.not_(leave))


def _range_exit(ctx: LowerContext, top: _Top, stay: ir.Value) -> None:
    """(A counted fast copy, after whole iterations: top, the state at the loop's top) unless stay, leave
    through the range guard's exit, as the trace's function would at its next iteration's top (its periodic
    check counts the fuel down first)."""
    trace = ctx.trace
    for slot, value in assigned_late(trace).items():  # (assigned: this comes after whole iterations)
        ctx.valid[slot] = top.flags[slot]
        ctx.valid_kinds[slot] = value.kind
    ctx.position = 1
    fuel = ctx.fuel
    ctx.fuel = ctx.builder.sub(top.fuel, ir.Constant(I64, 1))
    ctx.guard(stay, trace.uops[1])
    ctx.fuel = fuel


def _fast_top(ctx: LowerContext) -> _Top:
    """The state at the loop's top where a fast copy (or its single-run entry) starts: the values of the slots the
    loop carries (ctx.values of the entry's), the slots assigned late as assigned, with the buffer's words
    (whoever enters goes there only where those hold words of their kinds: ``_enter_fast``), ctx's fuel."""
    trace = ctx.trace
    assert trace.end_snapshot is not None
    end = trace.end_snapshot.outer.slots
    return _Top(
        {slot: ctx.values[value.id] for slot, value in trace.entry_slots.items() if end.get(slot) is not value},
        {slot: (ir.Constant(I1, 1), ctx.load_slot(slot, value.kind)) for slot, value in assigned_late(trace).items()},
        ctx.fuel,  # type: ignore[arg-type]
    )


def vectorizable(trace: Trace, run_checked: bool = False) -> bool:
    """Is a counted fast copy's loop (``_build_fast``) one LLVM's loop vectorizer may take: its body (the uops
    after the periodic check and the range's guard, each as its fast form) computes numbers (ints, floats,
    bools, NumPy scalars) from numbers alone, with neither a guard (an iteration has no way out but its end) nor
    an effect; run_checked: (a copy that stores: ``_undoable_stores``) its floating-point checks are one flag
    per run (``_build_fast``), so NumPy float operations are plain arithmetic there, and the element stores it
    logs are allowed (a loop that only reads arrays and checks its run the same way is left out: a float sum
    is a chain the vectorizer cannot take, and the trace pipeline unrolls it instead). Then
    its iterations differ only by the counter, and what the vectorizer does is exact: int arithmetic the range
    analysis proved never overflows (wrapping and exact agree), float operations it never reorders (no
    fast-math flag is ever emitted: a float sum is a chain, not a reduction it may reassociate), the flag an or
    of bits, and stores in their order where arrays overlap (its run-time checks of addresses)."""
    assert trace.end_snapshot is not None
    for uop in trace.uops[2:]:
        if uop.name == "_JUMP_TO_TOP":
            break
        op = uop.fast if uop.fast is not None else uop.op
        if (run_checked and (uop.name in DEFERRING or uop.name == "_ARRAY_STORE")) or uop.name == "_UNROLLED_HEADER":
            pass
        elif op.is_guard or not op.pure or op.owns or op.lowering is not Lowering.TABLE:
            return False
        elif uop.out is not None and not _plain_number(uop.out.kind):  # (no output: a check proven, nothing)
            return False
        if not all(_plain_number(value.kind) for value in uop.args):
            return False
    end = trace.end_snapshot.outer.slots
    return all(_plain_number(value.kind) for slot, value in trace.entry_slots.items() if end.get(slot) is not value)


def _plain_number(kind: Kind) -> bool:
    return kind.is_number or kind.is_numpy_scalar


def module_texts(ctx: LowerContext) -> tuple[str, str]:
    """The text of ctx's module, and, where its fast copy is vectorizable (``ctx.vectorized``), that of a
    second module holding that function and its single-run entry (``ctx.vectorized_too``) alone (the first
    declares them instead): ``codegen.engine`` runs the vectorizing pipeline on the second only, then links the
    two. The second declares what it shares with the first (the trace's function, its globals: exit counters,
    links, ``refused``), defined in the first."""
    fast = ctx.vectorized
    if fast is None:
        return module_text(ctx.module), ""
    moved = [fast, *ctx.vectorized_too]
    functions = [f for f in ctx.module.functions if f.blocks]
    variables = [g for g in ctx.module.global_values if isinstance(g, ir.GlobalVariable) and g.initializer]
    saved_blocks = {id(f): f.blocks for f in functions}
    saved = [(g, g.initializer, g.linkage) for g in variables]
    changed = [*functions, *variables]

    def forget() -> None:  # (llvmlite caches a global's text)
        for value in changed:
            getattr(value, "_clear_string_cache", lambda: None)()

    try:
        for function in moved:
            function.blocks = []
        forget()
        main_text = module_text(ctx.module)
        for function in functions:
            function.blocks = saved_blocks[id(function)] if function in moved else []
        for variable in variables:
            variable.initializer, variable.linkage = None, ""
        forget()
        fast_text = module_text(ctx.module)
    finally:
        for function in functions:
            function.blocks = saved_blocks[id(function)]
        for variable, initializer, linkage in saved:
            variable.initializer, variable.linkage = initializer, linkage
        forget()
    return main_text, fast_text


#: a versioned loop's iterations in its checked copy, at each entry, before the fast copy's conditions are
#: checked: an entry that leaves the loop (or the trace, to a side trace) before pays nothing for them (the
#: check costs a few nanoseconds: about what the fast copy saves in ten iterations)
WARM_UP = 4
#: the iterations a range loop must have left then for the check to be worth it
CHEAP_TRIPS = 32
#: a copy of a root's loop joined with side traces whose root has a fast copy goes back to the root's function
#: after QUIET iterations without any of the joined side traces (looking every QUIET_EVERY iterations, a power of
#: two dividing abi.PERIOD): a way taken at every few iterations stays joined (an exit and a new entry cost more
#: than the fast copy saves in that many), one taken once in a while costs an exit each time, as apart
QUIET = 64
QUIET_EVERY = 32
#: the checked copy of a versioned loop looks at its fuel's low bits at each iteration, and every EVENT_EVERY
#: iterations (a power of two dividing abi.PERIOD) checks whether the periodic check is due or the warm-up
#: over: an entry's first time in the fast copy comes after WARM_UP to WARM_UP + EVENT_EVERY iterations
EVENT_EVERY = 8


def _slot_of(trace: Trace, value: Value) -> int:
    return next(slot for slot, v in trace.entry_slots.items() if v is value)


@dataclasses.dataclass
class _Top:
    """The loop-carried state at the loop's top: per slot, its value, and per slot assigned late, whether it
    was assigned yet and its previous value, and the fuel; left: (a counted fast copy) the iterations it has
    left to run."""

    values: dict[int, ir.Value]
    flags: dict[int, tuple[ir.Value, ir.Value]]
    fuel: ir.Value
    left: ir.Value | None = None
    # (a counted fast copy with a rollback) the or of the bits of its run's marks so far: exponent bits set where
    # a floating-point event happened
    mark: ir.Value | None = None
    # (a counted fast copy with guards that logs its stores) the entries of its run's compact log so far
    logged: ir.Value | None = None
    # (a loop joined with side traces that may go back to the root's function: codegen.joined) the fuel when a
    # joined side trace last ran (or the loop was entered)
    quiet: ir.Value | None = None

    @staticmethod
    def phis(ctx: LowerContext, like: _Top, left: bool = False, assigned: bool = False) -> _Top:
        """Phis (no incoming values yet) at the builder's block, of the types of like's values; assigned: the
        slots assigned late are known to be assigned (their flags are true, not phis)."""
        b = ctx.builder
        values = {slot: b.phi(value.type, name=f"slot{slot}") for slot, value in like.values.items()}
        flags = {
            slot: (
                ir.Constant(I1, 1) if assigned else b.phi(I1, name=f"assigned{slot}"),
                b.phi(previous.type, name=f"previous{slot}"),
            )
            for slot, (_, previous) in like.flags.items()
        }
        fuel = b.phi(I64, name="fuel")
        return _Top(
            values,  # type: ignore[arg-type]
            flags,  # type: ignore[arg-type]
            fuel,
            b.phi(I64, name="left") if left else None,
            quiet=b.phi(I64, name="quiet") if like.quiet is not None else None,
        )

    def add_incoming(self, values: _Top, block: ir.Block) -> None:
        """values flow into these phis from block."""
        for slot, phi in self.values.items():
            phi.add_incoming(values.values[slot], block)  # type: ignore[attr-defined]
        for slot, (written, previous) in self.flags.items():
            if isinstance(written, ir.PhiInstr):
                written.add_incoming(values.flags[slot][0], block)
            previous.add_incoming(values.flags[slot][1], block)  # type: ignore[attr-defined]
        self.fuel.add_incoming(values.fuel, block)  # type: ignore[attr-defined]
        if self.left is not None:
            assert values.left is not None
            self.left.add_incoming(values.left, block)  # type: ignore[attr-defined]
        if self.quiet is not None:
            assert values.quiet is not None
            self.quiet.add_incoming(values.quiet, block)  # type: ignore[attr-defined]


def _loop(
    ctx: LowerContext,
    loop: ir.Block,
    like: _Top,
    *,
    fast: bool,
    dispatch: tuple[_Top, ir.Block] | None,
    warm_up: tuple[ir.Value, ir.Function, ir.GlobalVariable] | None = None,
    counted: bool = False,
    rollback: ir.Block | None = None,
    undo: tuple[ir.Value, ir.Value, list[bool]] | None = None,
    compact: bool = False,
) -> _Top:
    """One copy of the loop at block loop (its phis, of like's types, are returned for the caller to fill in).
    fast: each uop with a fast form lowered as that form. dispatch: the phis and block where a versioned loop
    checks its conditions, which the periodic check goes to before the iteration goes on (None: a loop of one
    copy goes straight on); warm_up: the fuel this function was entered with, the function of the fast copy
    (``_build_fast``: this copy goes on there after a warm-up, by a tail call, the loop's state in the buffer)
    and its global ``refused``; counted: this
    (fast) copy runs the number of iterations its phi `left` starts with, then goes there (its first two uops,
    the periodic check and the range's guard, are not lowered: the count stands for both); rollback: (a
    counted copy of an effect-free loop) the deferred checks of floating-point events of the whole run are one
    flag (a phi, ``mark``, of the returned phis), tested once at its end: set, it goes to rollback instead of
    the dispatch; undo: (such a copy that stores into arrays: ``_undoable_stores``) its log (the addresses, the
    old values) and, per store of an iteration, whether its address is affine in the counter (not logged: the
    rollback computes it): each store logs the element's old value first; compact: (a run with guards) the log is
    compact (``_logger``), its entries so far a phi the loop carries (``_Top.logged``), which the rollback takes."""
    trace = ctx.trace
    b = ctx.builder
    b.position_at_end(loop)
    assert trace.end_snapshot is not None
    end = trace.end_snapshot.outer.slots
    here = _Top.phis(ctx, like, left=counted)
    ctx.loop_top = (here, loop)  # (side traces joined with the loop come back here: codegen.joined)
    if rollback is not None:
        here.mark = b.phi(I64, name="events")
    ctx.log_position = ir.Constant(I64, 0)
    if compact and undo is not None:  # (the entries of its compact log so far: _logger)
        here.logged = b.phi(I64, name="logged")
        ctx.log_position = here.logged
    for slot, phi in here.values.items():
        ctx.values[trace.entry_slots[slot].id] = phi
    ctx.valid.clear()
    for slot, value in assigned_late(trace).items():  # exits before their assignment: jit.resume.Hold.PREVIOUS
        ctx.valid[slot] = here.flags[slot]
        ctx.valid_kinds[slot] = value.kind
    ctx.fuel = b.sub(here.fuel, ir.Constant(I64, 1)) if counted else here.fuel
    ctx.state_writers.clear()  # (in the loop, a snapshot's values are the phis, not the entry's loads)
    if undo is not None:
        assert here.left is not None
        ctx.undo = _logger(ctx, here.left, *undo, compact=compact)
    ctx.covered_marks = [] if ctx.exit_check is not None else None

    def back_to_dispatch(cont: ir.Block) -> None:
        """(after the periodic check) to the conditions, once the slots assigned late are assigned (every way
        into the dispatch comes after a whole iteration, so that there they are: the checked copy's first
        iteration is peeled as the trace's loop is), else straight on."""
        assert dispatch is not None
        if here.flags:
            assigned = functools.reduce(b.and_, [written for written, _ in here.flags.values()])
            go = ctx.function.append_basic_block("to_dispatch")
            b.cbranch(assigned, go, cont)
            b.position_at_end(go)
        dispatch[0].add_incoming(dataclasses.replace(here, fuel=ctx.fuel, left=None), b.block)
        b.branch(dispatch[1])

    def next_iteration(after: _Top) -> None:
        """The iteration's end, from the builder's block, the next one's state in after: on at the loop's top,
        or (a counted copy) at the run's end to the dispatch. The loop's own end, and that of each side trace
        joined with it (codegen.joined: ``LowerContext.loop_latch``)."""
        latch = b.block
        if counted and dispatch is not None and rollback is not None:
            assert here.left is not None and here.mark is not None
            # (the iteration's marks, summed, as a flag: an or of their bits per iteration carried, not a
            # sum of doubles, whose additions would chain the iterations)
            events = here.mark
            if ctx.deferred is not None:  # (+0, -0 or NaN: its exponent's bits are 0 where there was no event)
                events = b.or_(events, b.bitcast(ctx.deferred[0], I64))
                ctx.deferred = None
            latch = b.block
            left = b.sub(here.left, ir.Constant(I64, 1))
            here.add_incoming(dataclasses.replace(after, left=left), latch)
            here.mark.add_incoming(events, latch)  # type: ignore[attr-defined]
            if here.logged is not None:
                here.logged.add_incoming(ctx.log_position, latch)  # type: ignore[attr-defined]
            end = ctx.function.append_basic_block("run_end")
            b.cbranch(b.icmp_signed(">", left, ir.Constant(I64, 0)), loop, end)
            b.position_at_end(end)
            dispatch[0].add_incoming(after, end)
            happened = b.icmp_unsigned("!=", b.and_(events, ir.Constant(I64, _EXPONENT)), ir.Constant(I64, 0))
            if ctx.status_word is not None:
                happened = b.or_(happened, float_status.raised(b, ctx.module, ctx.status_word, ctx.status_ignored))
            if compact:  # (the entries its log holds: _rollback's phi)
                rollback.instructions[0].add_incoming(ctx.log_position, end)  # type: ignore[attr-defined]
            b.cbranch(happened, rollback, dispatch[1]).set_weights([1, 1000])
        elif counted and dispatch is not None:
            assert here.left is not None
            left = b.sub(here.left, ir.Constant(I64, 1))
            here.add_incoming(dataclasses.replace(after, left=left), latch)
            dispatch[0].add_incoming(after, latch)
            b.cbranch(b.icmp_signed(">", left, ir.Constant(I64, 0)), loop, dispatch[1])
        else:
            here.add_incoming(after, latch)
            b.branch(loop)

    ctx.loop_latch = next_iteration
    for position, uop in enumerate(trace.uops):
        # (the deferred checks: before the iteration ends, and anything that may leave; not before a check this
        # copy lowers as its proven form, nor the fuel an unrolled loop's header counts in a counted copy)
        proven = fast and uop.fast is not None and uop.fast.pure and not uop.fast.owns
        counts = counted and uop.name == "_UNROLLED_HEADER"
        if flushes_deferred(uop) and rollback is None and not proven and not counts:
            ctx.flush_deferred()
        if uop.name == "_JUMP_TO_TOP":
            # each slot phi of an owned kind starts the next iteration with a reference of its own
            for value, count in ctx.ownership.latch_references():
                for _ in range(count):
                    ctx.incref(ctx.value(value))
            carried = {slot: ctx.value(end[slot]) for slot in here.values}
            flags = {slot: (ir.Constant(I1, 1), ctx.value(end[slot])) for slot in here.flags}
            # (ctx.loop_latch: next_iteration, or what a loop computing both ways of a branch puts before it)
            ctx.loop_latch(_Top(carried, flags, ctx.fuel, quiet=here.quiet))  # type: ignore[arg-type]
        elif counted and position < 2:
            continue
        elif counted and uop.name == "_UNROLLED_HEADER":  # (the run is sized so that no check falls due in it)
            ctx.position = position
            ctx.fuel = b.sub(ctx.fuel, ir.Constant(I64, 1))
            _release_after(ctx, position)
        elif uop.name == "_CHECK_PERIODIC" and warm_up is not None:
            ctx.position = position
            _check_events(ctx, uop, here, *warm_up)
        elif uop.name == "_CHECK_PERIODIC" and here.quiet is not None:
            ctx.position = position
            _check_quiet(ctx, uop, here)
        elif uop.name == "_CHECK_PERIODIC":
            ctx.position = position
            _check_periodic(ctx, uop, back_to_dispatch if dispatch is not None else None)
        elif fast and uop.fast is not None:
            form = Uop(
                uop.fast, uop.args, uop.out, uop.operand, uop.pc, uop.line, uop.exit if uop.fast.is_guard else None
            )
            _lower(ctx, form, position)
        else:
            _lower(ctx, uop, position)
    ctx.undo = None
    ctx.covered_marks = None
    return here


def _logger(
    ctx: LowerContext, left: ir.Value, at: ir.Value, old: ir.Value, affine: list[bool], compact: bool = False
) -> Callable[..., None]:
    """LowerContext.undo for one iteration of a logged run (left: the iterations the run has left, this one
    included, at most UNDO_RUN): the s-th store of the iteration logs its address and old bits at
    (UNDO_RUN - left) * per + s, so that the run fills its log upwards, in the order of its stores (a
    vectorized loop stores its log's vectors as they are, not reversed), and going down from the top undoes
    them last first (``_restore``); the address only of a store not affine in the counter (affine: per store).
    compact: (a run with guards, whose stores may not all run at every iteration) each store that runs logs its
    address and old bits at the next entry, ``ctx.log_position``, a value the loop carries (``_Top.logged``), and
    a rollback undoes that many entries (``_restore_compact``); known: the element's old bits, loaded already."""
    b = ctx.builder
    per = len(affine)
    base = b.mul(b.sub(ir.Constant(I64, UNDO_RUN), left), ir.Constant(I64, per))
    count = [0]

    def log(address: ir.Value, known: ir.Value | None = None) -> None:
        assert count[0] < per
        entry = ctx.log_position if compact else b.add(base, ir.Constant(I64, count[0]))
        computed = affine[count[0]]
        count[0] += 1
        zero = ir.Constant(I64, 0)
        if compact or not computed:
            b.store(b.ptrtoint(address, I64), b.gep(at, [zero, entry]))
        # (known: the bits a read of the element loaded earlier in the iteration)
        bits = known if known is not None else b.load(b.bitcast(address, I64.as_pointer()), align=8)
        b.store(bits, b.gep(old, [zero, entry]))
        if compact:
            ctx.log_position = b.add(entry, ir.Constant(I64, 1))

    return log


#: instructions that compute a value from their operands alone and never trap (poison at worst): where their
#: operands are loop-invariant, computing them once before the loop is exact
_SPECULATABLE = frozenset(
    "add sub mul and or xor shl lshr ashr fadd fsub fmul fdiv fneg icmp fcmp select extractvalue insertvalue "
    "getelementptr bitcast inttoptr ptrtoint zext sext trunc sitofp uitofp fptosi fptoui fpext fptrunc".split()
)
#: intrinsics that are speculatable too (llvm.sadd.with.overflow.i64, ...)
_SPECULATABLE_CALLS = ("llvm.sadd.with.overflow.", "llvm.ssub.with.overflow.", "llvm.smul.with.overflow.")


#: the blocks hoist_invariants leaves alone: exits, and a versioned loop's check of its conditions (which runs
#: once per entry at most, and whose values would only take registers from the loop if computed before it)
_NOT_HOISTED = ("exit", "dispatch", "trips", "warmed_up", "quiet")


def hoist_invariants(function: ir.Function, preheader: ir.Block, loop: ir.Block) -> None:
    """Move the loop's speculatable instructions whose operands are all defined before the loop (arithmetic on
    loop-invariant values, with its overflow flag: ``a * b`` in an inner loop) to the end of preheader, the
    block that enters the loop. Only the computation moves: a guard on its result stays where it was, and
    branches on a value known before the loop. (What LLVM's LICM did in the O2 pipeline, which traces do not
    run: ``codegen.engine``.) Exit blocks are left alone (their code runs once, when the exit is taken), and
    so are the blocks of a versioned loop's check (``_NOT_HOISTED``)."""
    blocks = function.blocks
    start = blocks.index(loop)
    outside = {id(block) for block in blocks[:start]}
    terminator = preheader.instructions.pop()
    for block in blocks[start:]:
        if block.name.startswith(_NOT_HOISTED):
            continue
        kept = []
        for instr in block.instructions:
            # (each operand available before the loop: a constant, an argument or global, or computed in a block
            # before it; tested inline, without a call per operand, as it runs for each instruction of the loop)
            if _speculatable(instr) and all(
                not isinstance(op, ir.Instruction) or id(op.parent) in outside for op in instr.operands
            ):
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


def _lower(ctx: LowerContext, uop: Uop, position: int | None = None) -> None:
    """Lower one uop; position: its index in trace.uops (None for a hoisted guard), after which the owned
    values it last needs are released (codegen.ownership)."""
    # (before an effect, a guard or an owned value: the deferred checks; but a logged store waits for its run's end)
    if flushes_deferred(uop) and not (ctx.undo is not None and uop.name == "_ARRAY_STORE"):
        ctx.flush_deferred()
    if position is not None:
        ctx.position = position
    if uop.name == "_CHECK_PERIODIC":
        _check_periodic(ctx, uop)
        return
    if uop.name == "_UNROLLED_HEADER":
        _check_periodic(ctx, uop)
    else:
        assert uop.op.lowering is Lowering.TABLE, f"{uop.name} is lowered by {uop.op.lowering.value}"
        out = LOWERINGS[uop.name](ctx, uop)
        if uop.out is not None:
            assert out is not None, uop.name
            ctx.values[uop.out.id] = out
    _release_after(ctx, position)


def _release_after(ctx: LowerContext, position: int | None) -> None:
    """The owned values the uop at position is the last to need (its exit's state, for an unrolled loop's
    header: an int object the unrolled loop then assigns over) are released after it (codegen.ownership)."""
    if position is not None:
        released = ctx.ownership.released.get(position)
        if released and not ctx.builder.block.is_terminated:
            ctx.release(released)


def _check_periodic(ctx: LowerContext, uop: Uop, resume: Callable[[ir.Block], None] | None = None) -> None:
    """Count down the fuel; every ``abi.PERIOD`` iterations: let CPython run pending signal handlers (leaving
    with their exception, e.g. KeyboardInterrupt), then re-check the hoisted guards, which a handler may have
    invalidated, and the values read at the entry (arrays' headers), leaving if one changed; then go on (resume:
    to where a versioned loop checks its conditions again, before the iteration). (The fuel is never reset, so
    what an entry used is the number of iterations it ran.)"""
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
    _periodic(ctx, uop)
    if _holds_borrowed_objects(ctx.trace, ctx.ownership.defined):
        # a handler might have dropped the last reference to an object a slot points to: leave
        ctx.exit_stub(uop.exit)  # type: ignore[arg-type]
    elif resume is not None:
        resume(cont)
    else:
        b.branch(cont)
    b.position_at_end(cont)


def _check_events(
    ctx: LowerContext, uop: Uop, here: _Top, entered: ir.Value, fast: ir.Function, refused: ir.GlobalVariable
) -> None:
    """_check_periodic for the checked loop of a versioned trace's function: every EVENT_EVERY iterations (a
    test of the fuel's low bits per iteration, as the periodic check alone; a multiple of abi.PERIOD is one of
    EVENT_EVERY), the periodic check if due, then, if more than WARM_UP iterations of this entry (entered: its
    fuel) have run and the fast copy's function did not hand this entry back (``refused`` holds its fuel), on
    in fast, the fast copy's function, if CHEAP_TRIPS are left (a guess, for a range loop)."""
    b = ctx.builder
    trace = ctx.trace
    assert ctx.fuel is not None
    fuel = b.sub(ctx.fuel, ir.Constant(I64, 1))
    ctx.fuel = fuel
    event = ctx.function.append_basic_block("event")
    cont = ctx.function.append_basic_block("event_done")
    due = _every(ctx, fuel, EVENT_EVERY)
    branch = b.cbranch(due, event, cont)
    branch.set_weights([1, EVENT_EVERY])
    b.position_at_end(event)
    periodic = ctx.function.append_basic_block("periodic")
    after = ctx.function.append_basic_block("periodic_done")
    to_periodic = b.cbranch(
        b.icmp_unsigned("==", b.and_(fuel, ir.Constant(I64, abi.PERIOD - 1)), ir.Constant(I64, 0)), periodic, after
    )
    to_periodic.set_weights([1, abi.PERIOD // EVENT_EVERY])  # (else its spills go to the entry)
    b.position_at_end(periodic)
    _periodic(ctx, uop)
    if _holds_borrowed_objects(trace, ctx.ownership.defined):
        ctx.exit_stub(uop.exit)  # type: ignore[arg-type]
    else:
        # (straight on: the fast copy waits for the next event, so that what its check needs is not kept
        # across the call of the periodic check, in registers spilled at every entry)
        b.branch(cont)
    b.position_at_end(after)
    if not any(u.name == "_CALL_TREE" for u in trace.uops):
        # (the buffer's fuel is the entry's until an exit, or a call of an inner tree: read again here, it keeps
        # a register free in the loop; an atomic load, a plain one on every target, which LLVM leaves where it is
        # instead of forwarding the entry's value and keeping that live, or an iteration count, in the loop)
        entered = b.load_atomic(ctx.word(abi.FUEL), "monotonic", 8)
    warmed_up = b.icmp_unsigned("<", fuel, b.sub(entered, ir.Constant(I64, WARM_UP)))  # (fuel < entered)
    handed_back = b.icmp_unsigned("==", entered, b.load(refused))
    ready = b.and_(warmed_up, b.not_(handed_back))
    # (the fast copy takes the slots assigned late as assigned, from the buffer: after whole iterations of the
    # trace's own loop they are, but a side trace joined with the loop may go round it without assigning one, and
    # an entry whose iterations all went its way has nothing of that slot's kind in the buffer to hand over)
    for written, _ in here.flags.values():
        ready = b.and_(ready, written)
    go = ctx.function.append_basic_block("warmed_up")
    b.cbranch(ready, go, cont)
    b.position_at_end(go)
    counter = trace.range_counter()
    if counter is not None:  # (a guess, wrapping: the conditions decide)
        cur, stop, step = (here.values[_slot_of(trace, counter[1])], *map(ctx.value, counter[2:]))
        ahead = b.select(b.icmp_signed(">", step, ir.Constant(I64, 0)), b.sub(stop, cur), b.sub(cur, stop))
        on = ctx.function.append_basic_block("to_fast")
        b.cbranch(b.icmp_signed(">=", ahead, ir.Constant(I64, CHEAP_TRIPS)), on, cont)
        b.position_at_end(on)
    # the state at the loop's top (flags: assigned, tested above; loop-carried objects with a
    # reference of the buffer's own, as at an exit: the fast copy's exits release it where they write the slot)
    _store_top(ctx, here)
    b.store(here.fuel, ctx.word(abi.FUEL))  # (this iteration's is the fast copy's)
    b.ret(b.call(fast, [ctx.buf], tail="musttail"))
    b.position_at_end(cont)


def _check_quiet(ctx: LowerContext, uop: Uop, here: _Top) -> None:
    """_check_periodic for a copy of a root's loop joined with side traces (``codegen.joined``) whose root has a
    fast copy: every QUIET_EVERY iterations (a test of the fuel's low bits), the periodic check if due, then, if
    no joined side trace ran in the last QUIET iterations, back to the root's function (a tail call, the state at
    the loop's top in the buffer), whose fast copy this copy does not have: a way out taken once in a while
    costs that loop no more than an exit each time."""
    b = ctx.builder
    trace = ctx.trace
    assert ctx.fuel is not None and here.quiet is not None and ctx.back_to_root is not None
    fuel = b.sub(ctx.fuel, ir.Constant(I64, 1))
    ctx.fuel = fuel
    event = ctx.function.append_basic_block("quiet_event")
    cont = ctx.function.append_basic_block("quiet_done")
    due = _every(ctx, fuel, QUIET_EVERY)
    b.cbranch(due, event, cont).set_weights([1, QUIET_EVERY])
    b.position_at_end(event)
    periodic = ctx.function.append_basic_block("periodic")
    after = ctx.function.append_basic_block("periodic_done")
    at_period = b.icmp_unsigned("==", b.and_(fuel, ir.Constant(I64, abi.PERIOD - 1)), ir.Constant(I64, 0))
    b.cbranch(at_period, periodic, after).set_weights([1, abi.PERIOD // QUIET_EVERY])
    b.position_at_end(periodic)
    _periodic(ctx, uop)
    if _holds_borrowed_objects(trace, ctx.ownership.defined):
        ctx.exit_stub(uop.exit)  # type: ignore[arg-type]
    else:
        b.branch(after)
    b.position_at_end(after)
    back = ctx.function.append_basic_block("quiet_back")
    quiet = b.icmp_unsigned(">=", b.sub(here.quiet, fuel), ir.Constant(I64, QUIET))
    b.cbranch(quiet, back, cont)
    b.position_at_end(back)
    _store_top(ctx, here, assigned=False)  # the state at the loop's top
    b.store(here.fuel, ctx.word(abi.FUEL))  # (this iteration is the root function's)
    b.ret(b.call(ctx.tree_function(ctx.back_to_root), [ctx.buf], tail="musttail"))
    b.position_at_end(cont)


def _store_top(ctx: LowerContext, top: _Top, assigned: bool = True) -> None:
    """Write the loop's state at its top (top's values, and the slots assigned late: all assigned where assigned
    says whole iterations have run, else as their flags say) for another of the trace's functions to go on from."""
    trace = ctx.trace
    late = assigned_late(trace)
    yes = ir.Constant(I1, 1)
    carried = {slot: (trace.entry_slots[slot].kind, value) for slot, value in top.values.items()}
    ctx.store_loop_state(
        carried,
        {
            slot: (late[slot].kind, yes if assigned else written, previous)
            for slot, (written, previous) in top.flags.items()
        },
    )


def fuel_per_iteration(trace: Trace) -> int:
    """How much of the fuel one iteration of trace's loop uses: one, and one per visit of an unrolled inner
    loop's header (``_UNROLLED_HEADER``, as that loop's tree would count it)."""
    return 1 + sum(1 for uop in trace.uops if uop.name == "_UNROLLED_HEADER")


def _every(ctx: LowerContext, fuel: ir.Value, every: int) -> ir.Value:
    """(At the loop's top, the fuel just counted down) is an event of every `every` iterations due: the fuel a
    multiple of it; where an iteration uses more than one (``fuel_per_iteration``: the fuel at the top then
    steps by that much, which may never land on a multiple), its low bits below that step, once per window."""
    b = ctx.builder
    low = b.and_(fuel, ir.Constant(I64, every - 1))
    per = fuel_per_iteration(ctx.trace)
    if per == 1:
        return b.icmp_unsigned("==", low, ir.Constant(I64, 0))
    return b.icmp_unsigned("<", low, ir.Constant(I64, min(per, every)))


def _periodic(ctx: LowerContext, uop: Uop) -> None:
    """A periodic check that is due: let CPython run pending signal handlers (leaving with their exception),
    then re-check the hoisted guards and the values read at the entry."""
    b = ctx.builder
    pending = ctx.capi("PyErr_CheckSignals")
    ctx.guard(b.icmp_signed("==", pending, ir.Constant(pending.type, 0)), uop)
    python_epoch.advance(b, ctx.module)  # (a handler may have run: trees called later check their guards again)
    for hoisted in ctx.trace.hoisted:
        if hoisted.op.is_guard:
            _lower(ctx, hoisted)
        else:  # a value read at the entry (an array's header): leave if a handler changed it
            again = LOWERINGS[hoisted.name](ctx, hoisted)
            ctx.guard(b.icmp_unsigned("==", again, ctx.values[hoisted.out.id]), uop)  # type: ignore[union-attr]


def _holds_borrowed_objects(trace: Trace, owned: Container[int]) -> bool:
    """Does a loop-carried slot hold an object the trace found inside another (a list's element)? (Not one
    it owns: an int object, a list it built; nor a character of a str it iterates, one of CPython's cached
    one-character strs, which live as long as the interpreter.)"""
    assert trace.end_snapshot is not None
    characters = _cached_characters(trace)
    for slot in trace.written:
        value = trace.end_snapshot.outer.slots.get(slot)
        if value is not None and value.kind.is_pointer and trace.entry_slots.get(slot) is not value:
            if not value.is_const and value.id not in owned and value.id not in characters:
                return True
    return False


def _cached_characters(trace: Trace) -> set[int]:
    """The values that are the items of a str iterator native code takes (over characters below U+0100:
    _GUARD_BUILTIN_ITERATOR checks it), as their type guard gives them."""
    items = {
        uop.out.id
        for uop in trace.uops
        if uop.name == "_ITER_NEXT_BUILTIN" and uop.out is not None and uop.operand in _STR_ITERATORS
    }
    return {
        uop.out.id
        for uop in trace.uops
        if uop.name == "_GUARD_TYPE" and uop.out is not None and uop.args and uop.args[0].id in items
    }


_STR_ITERATORS = frozenset({type(iter("")), type(iter("é"))})


__all__ = ["Kind", "build"]
