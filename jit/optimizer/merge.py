"""A loop's two ways in one iteration: a root trace and a side trace that comes back to its loop, as one looping
trace that computes both ways and chooses the loop-carried values with ``_SELECT`` (if-conversion).

A loop whose branch goes one way at every other iteration (``if (i + j) & 1:``) runs, joined with its side trace
(``codegen.joined``), as one loop of two paths in one function; but each path keeps its overflow checks, and the
branch its guard, so LLVM's loop vectorizer cannot take it, where Numba's vectorizes (issue 9: nested2_branchy,
6x slower). The merged trace is the root's iteration with the guard the side trace hangs from taken out: both
ways run (the root's rest, then the side trace's body, its values renamed into the root's), and each slot the
two ways leave differently gets a ``_SELECT`` on the guard's input. The range analysis (``jit.optimizer.ranges``:
an accumulator whose next value is chosen by a ``_SELECT``) then proves what it can; where every check of the
body has its ``fast`` form and nothing else could leave, the merged trace's counted fast copy, vectorized, is the
joined function's fast copy (``codegen.joined``). Computing the way not taken is exact there: a fast copy runs
only while its conditions hold, and those bound every value either way computes (an interval holds at every
iteration, whichever way it takes); no uop of the body has an effect or a way out (``codegen.function.
vectorizable``), so the unused way's values go unused. Nothing of the merged trace is ever lowered with a check:
it has no checked copy (the joined function's loop is that), so its exits are the root's, numbered as the
root's (``MergedLoop.exits``), and the side trace's exit points stay unused.

What is merged: one side trace hanging from a branch guard (``_GUARD_IS_TRUE_POP``/``_GUARD_IS_FALSE_POP``) of a
counted root loop (its first uops the periodic check and the range's guard), no hoisted uop of its own, that
starts by guarding the same truth again (dropped), assigns only slots the root's loop carries, and reads slots the
root's loop holds at the exit or, holding no reference, never touches (``MergedLoop.extra_slots``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from jit.kinds import Kind
from jit.optimizer import ranges
from jit.resume import Hold, assigned_late, exit_resume
from jit.trace import ExitPoint, FrameSnapshot, Snapshot, Trace, TraceEnd, TraceKind, Uop, Value
from jit.uops import UOPS


@dataclasses.dataclass(eq=False)
class MergedLoop(Trace):
    """A merged trace: its exits are its root's, with the root's numbers (the side trace's are never taken)."""

    root_exits: list[ExitPoint] = dataclasses.field(default_factory=list)
    # slots the side trace reads that the root's loop neither reads nor assigns: read at the entry (the same
    # throughout), whose kinds the entry checks (codegen.function._enter_fast) instead of the side's guards
    extra_slots: dict[int, Kind] = dataclasses.field(default_factory=dict)

    def exits(self) -> list[ExitPoint]:
        return list(self.root_exits)


def merged(root: Trace, side: Trace, point: ExitPoint) -> MergedLoop | None:
    """root's loop with side (hanging from root's exit point) merged in, its range analysis run; None where
    they do not merge (see the module's docstring)."""
    if root.kind is not TraceKind.ROOT or root.end is not TraceEnd.LOOP or root.end_snapshot is None:
        return None
    if side.end_snapshot is None or side.hoisted or not side.uops or side.uops[-1].name != "_JUMP_TO_TREE":
        return None
    counter = root.range_counter()
    if counter is None or counter[0] != 1 or root.uops[0].name != "_CHECK_PERIODIC":
        return None
    if any(uop.name == "_CALL_TREE" for uop in root.uops):
        return None
    at = next((p for p, uop in enumerate(root.uops) if uop.exit is point), None)
    if at is None or at < 2:
        return None
    guard = root.uops[at]
    if guard.op.condition is None or not guard.args or guard.args[0].is_const:
        return None
    test = guard.args[0]
    side_truth = not guard.op.condition  # (the side trace's way: the guard failed)
    end = root.end_snapshot.outer.slots
    carried = {slot for slot, v in root.entry_slots.items() if end.get(slot) is not v}
    late = set(assigned_late(root))
    if not side.written <= carried:
        return None

    merged_loop = MergedLoop(
        kind=root.kind,
        loop=root.loop,
        start_pc=root.start_pc,
        entry_slots=dict(root.entry_slots),
        carried_only=root.carried_only,
        written=root.written,
        end=root.end,
        hoisted=root.hoisted,
        next_value=root.next_value,
        root_exits=root.exits(),
    )
    uops = [_copy(uop, uop.args) for position, uop in enumerate(root.uops[:-1]) if position != at]

    # the side trace's values, as the root's: its entry's (the root's at the exit), then its own, renamed
    (frame,) = exit_resume(root, point.snapshot)
    holds = {state.slot: state for state in frame.slots}
    renamed: dict[int, Value] = {}

    def at_exit(slot: int) -> Value | None:
        """The value slot holds at the exit, in the root's values (None: not a value of the loop)."""
        state = holds.get(slot)
        if state is not None:
            return state.value if state.hold is Hold.VALUE else None
        return root.entry_slots.get(slot)

    for slot, value in side.entry_slots.items():
        found = at_exit(slot)
        if found is None and slot not in holds and slot not in root.written and not value.kind.is_pointer:
            found = merged_loop.new_value(value.kind)
            merged_loop.entry_slots[slot] = found
            merged_loop.extra_slots[slot] = value.kind
        if found is None or found.kind != value.kind:
            return None
        renamed[value.id] = found
    for index, value in side.entry_stack.items():
        if index >= len(frame.stack) or frame.stack[index].kind != value.kind:
            return None
        renamed[value.id] = frame.stack[index]

    def rename(value: Value) -> Value:
        if value.is_const and value.id not in renamed:  # (ids are per trace: a constant of its own here)
            renamed[value.id] = merged_loop.new_value(value.kind, value.const)
        return renamed[value.id]

    seen: dict[tuple[Any, ...], Value] = {}
    for uop in uops:  # (the root's pure values: the side trace's first test is the root's guard's input)
        if uop.out is not None and uop.op.pure and not uop.op.is_guard and uop.exit is None:
            seen.setdefault(_key(uop.name, uop.operand, uop.args), uop.out)
    for uop in side.uops[:-1]:
        if any(not v.is_const and v.id not in renamed for v in uop.args):
            return None
        args = tuple(rename(v) for v in uop.args)
        if uop.op.is_guard and uop.op.condition is not None:
            if args and args[0] is test and uop.op.condition == side_truth:
                continue  # (the side trace's way is where this holds)
            return None
        if uop.name == "_GUARD_SLOT_KIND" and merged_loop.extra_slots.get(uop.operand.slot) == uop.operand.kind:
            continue  # (checked at the entry)
        if uop.out is not None and uop.op.pure and not uop.op.is_guard and uop.exit is None:
            earlier = seen.get(_key(uop.name, uop.operand, args))
            if earlier is not None and earlier.kind == uop.out.kind:
                renamed[uop.out.id] = earlier
                continue
        out = None
        if uop.out is not None:
            out = merged_loop.new_value(uop.out.kind, uop.out.const)
            renamed[uop.out.id] = out
        copy = _copy(uop, args, out)
        uops.append(copy)
        if out is not None and uop.op.pure and not uop.op.is_guard and uop.exit is None:
            seen.setdefault(_key(uop.name, uop.operand, args), out)

    # each slot the two ways leave differently: a choice on the guard's input
    side_end = side.end_snapshot.outer.slots
    slots = dict(end)
    slots.update({slot: merged_loop.entry_slots[slot] for slot in merged_loop.extra_slots})  # (the same throughout)
    last = root.uops[-1]
    for slot in sorted(carried | late):
        if slot in side.written:
            if side_end[slot].id not in renamed and not side_end[slot].is_const:
                return None
            on_side: Value | None = rename(side_end[slot])
        else:
            on_side = at_exit(slot)
        on_root = end[slot]
        if on_side is None or on_side.kind != on_root.kind:
            return None
        if on_side is on_root:
            continue
        chosen = merged_loop.new_value(on_root.kind)
        args = (test, on_side, on_root) if side_truth else (test, on_root, on_side)
        uops.append(Uop(UOPS["_SELECT"], args, chosen, None, last.pc, last.line))
        slots[slot] = chosen
    uops.append(_copy(last, last.args))
    merged_loop.uops = uops
    outer = root.end_snapshot.outer
    merged_loop.end_snapshot = Snapshot(
        [FrameSnapshot(outer.pc, slots, outer.stack, outer.assigned), *root.end_snapshot.frames[1:]]
    )
    ranges.run(merged_loop)
    return merged_loop if merged_loop.versioning is not None else None


def _copy(uop: Uop, args: tuple[Value, ...], out: Value | None = None) -> Uop:
    """A copy of uop (the range analysis sets its forms: the root's and the side trace's stay as they are)."""
    copy = Uop(uop.op, args, uop.out if out is None else out, uop.operand, uop.pc, uop.line, uop.exit)
    copy.alternatives = uop.alternatives  # (no fast form yet: the merged trace's analysis gives its own)
    return copy


def _key(name: str, operand: Any, args: tuple[Value, ...]) -> tuple[Any, ...]:
    try:
        hash(operand)
    except TypeError:
        operand = id(operand)
    return (name, operand, *(("const", v.kind, type(v.const), v.const) if v.is_const else v.id for v in args))


__all__ = ["MergedLoop", "merged"]
