"""A while loop's counters: the overflow check of ``steps += 1`` replaced by one guard per periodic check.

A slot whose next value is ``s + c`` (a constant 0 < c <= MAX_STEP) grows by c per iteration. The periodic
check (``_CHECK_PERIODIC``, first in the iteration) comes at least once every ``codegen.abi.PERIOD`` iterations
where the loop's fuel is counted down by one per iteration and by nothing else: so where s has room for PERIOD
more steps (``s + c * PERIOD`` fits i64) at the loop's entry and at each periodic check, no addition to it before
the next check can overflow. That guard, ``_GUARD_COUNTER_ROOM``, is hoisted to the entry (``trace.hoisted``),
which the periodic check checks again (``codegen.function._periodic``), with the values of the loop's top; the
additions become ``_BINARY_OP_ADD_INT_IN_RANGE``. Failing, it leaves where the iteration starts, before anything
ran, exactly as the interpreter expects (a counter entering within c * PERIOD of 2**63 is counted by the
interpreter and the side trace grown there, each of their additions checked).

What the proof needs, and where it is kept:

* every way round the loop adds at most c: in the root trace, the slot's only assignment is that addition of
  s's value at the top (a slot assigned twice, or anything else, is left alone); a side trace joined with the
  loop (``codegen.joined``), which runs in the loop without passing its entry, must add at most c too over the
  whole iteration (``joined_additions``: else it is not joined, and comes back through the root's entry, which
  checks the guard); a side trace compiled apart comes back through that entry too;
* nothing else counts the fuel down: no inner tree's call (its iterations count the same fuel, so the loop's own
  check could be skipped over), no unrolled loop's header, in the root or in a joined side trace;
* no range counter: a ``for`` loop's accumulators are the range analysis's (``jit.optimizer.ranges``), and its
  fast copy runs counted, without the periodic check. A while loop's fast copy (``codegen.function._build_fast``)
  checks the hoisted guards where it is entered and in its own periodic check, as the trace's function does; the
  fuel goes with the state from one function of the loop to the other.
"""

from __future__ import annotations

from collections.abc import Sequence

from jit.kinds import Kind
from jit.resume import Hold, entry_snapshot, slots_at
from jit.trace import ExitPoint, Trace, TraceEnd, TraceKind, Uop, Value, hoisted_when_hot
from jit.uops import UOPS

#: the largest step counted (c * PERIOD stays far below 2**63)
MAX_STEP = 1 << 20
_ADD, _ADD_IN_RANGE = "_BINARY_OP_ADD_INT", "_BINARY_OP_ADD_INT_IN_RANGE"
#: uops that count the fuel down within an iteration
_FUEL_USERS = frozenset({"_CALL_TREE", "_UNROLLED_HEADER"})


def run(trace: Trace) -> None:
    if not _eligible(trace):
        return
    assert trace.end_snapshot is not None
    end = trace.end_snapshot.outer.slots
    producer = {uop.out.id: uop for uop in trace.uops if uop.out is not None}
    room = UOPS["_GUARD_COUNTER_ROOM"]
    for slot, value in trace.entry_slots.items():
        following = end.get(slot)
        if value.kind != Kind.INT or following is None or following is value:
            continue
        addition = producer.get(following.id)
        step = _step_of(addition, value) if addition is not None else None
        if addition is None or step is None or addition.name != _ADD:
            continue
        guard = Uop(room, (value, trace.new_value(Kind.INT, step)), None, None, trace.start_pc, addition.line)
        guard.exit = ExitPoint(entry_snapshot(trace), addition.line, when_hot=hoisted_when_hot(room))
        trace.hoisted.append(guard)
        addition.op = UOPS[_ADD_IN_RANGE]
        addition.exit = addition.fast = None
        trace.counters[slot] = step
    if trace.counters and not any(uop.fast is not None for uop in trace.uops):
        trace.versioning = None  # (its fast copy had only the counters' additions to leave unchecked)


def _eligible(trace: Trace) -> bool:
    return (
        trace.kind is TraceKind.ROOT
        and trace.end is TraceEnd.LOOP
        and trace.end_snapshot is not None
        and bool(trace.uops)
        and trace.uops[0].name == "_CHECK_PERIODIC"
        and trace.range_counter() is None
        and not any(uop.name in _FUEL_USERS for uop in trace.uops)
    )


def _added(uop: Uop, value: Value) -> int | None:
    """c where uop computes value + c (c an int constant, either order), else None."""
    if uop.name not in (_ADD, _ADD_IN_RANGE):
        return None
    a, b = uop.args
    other = b if a is value else a if b is value else None
    if other is None or not other.is_const or type(other.const) is not int:
        return None
    return other.const


def _step_of(uop: Uop, value: Value) -> int | None:
    """c where uop computes value + c (a constant 0 < c <= MAX_STEP, either order), else None."""
    step = _added(uop, value)
    return step if step is not None and 0 < step <= MAX_STEP else None


def joined_additions(
    root: Trace, side: Trace, point: ExitPoint, above: Sequence[tuple[Trace, ExitPoint]] = ()
) -> frozenset[int] | None:
    """Where root counts (``root.counters``) and side hangs from root's exit point: None if side, joined with
    the loop, could break the proof (see the module's docstring); else the ids of side's additions to a counter
    that cannot overflow in the joined loop (an iteration that takes side's way adds at most the counter's step
    in all), which the joined copy lowers unchecked. above: (side under other joined side traces) each of those,
    from the one hanging from point down, with the exit point of it the next one (the last: side) hangs from:
    what each added before that exit counts too."""
    if not root.counters:
        return frozenset()
    if any(uop.name in _FUEL_USERS for trace in (side, *(t for t, _ in above)) for uop in trace.uops):
        return None
    assert root.end_snapshot is not None and side.end_snapshot is not None
    holds = slots_at(root, point.snapshot)
    # (each side trace above: its state at the exit the next hangs from, and what computes its values)
    aboves = [
        (trace, slots_at(trace, at.snapshot), {uop.out.id: uop for uop in trace.uops if uop.out is not None})
        for trace, at in above
    ]
    root_end = root.end_snapshot.outer.slots
    side_end = side.end_snapshot.outer.slots
    producer = {uop.out.id: uop for uop in side.uops if uop.out is not None}
    unchecked: set[int] = set()
    for slot, step in root.counters.items():
        # what the iteration added to the counter before the exit: nothing, or its step
        state = holds.get(slot)
        if state is None or (state.hold is Hold.VALUE and state.value is root.entry_slots[slot]):
            before = 0
        elif state.hold is Hold.VALUE and state.value is root_end[slot]:
            before = step
        else:
            return None
        for trace, states, made in aboves:  # (and what each side trace above added before its exit)
            start = trace.entry_slots.get(slot)
            state = states.get(slot)
            if state is None or state.hold is not Hold.VALUE or state.value is start:  # (not assigned before it)
                continue
            addition = made.get(state.value.id) if state.value is not None else None
            added = _added(addition, start) if addition is not None and start is not None else None
            if added is None:
                return None
            before += added
        start = side.entry_slots.get(slot)
        following = side_end.get(slot)
        if slot not in side.written or (following is not None and following is start):
            added = 0
        else:
            addition = producer.get(following.id) if following is not None and start is not None else None
            added = _added(addition, start) if addition is not None and start is not None else None
            if added is None:
                return None
            if added >= 0:
                unchecked.add(id(addition))
        if before + added > step:
            return None
    return frozenset(unchecked)
