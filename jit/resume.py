"""Snapshots and resume: the one place that knows what the interpreter's state is where a trace can leave.

Two halves, after LuaJIT's ``lj_snap.c`` and PyPy's ``resume.py``:

Taking snapshots (while recording). The recorder keeps its abstract copy of the frame, slot -> trace value and
the operand stack, in a `FrameState`, changed only through its methods. Before an instruction runs the recorder
calls `Snapshots.begin`; when the instruction emits something that can leave the trace (a guard, an inner
tree's call), it asks `Snapshots.take` for the state at the instruction's start. Nothing is copied for
instructions that never ask. A snapshot shares its slot map and its stack with the previous snapshot when
neither changed since, and otherwise hands over the frame's own maps (copy-on-write: the frame copies a map
only when it next changes it); the changes an instruction made before it asked are undone on a copy.

Resuming (after optimization, for every exit and every point where the buffer must hold the interpreter's
state). `frame_resume` answers "what does slot s hold here" for every slot the trace assigns, once, for its
three readers: the lowering writes the buffer from it (``codegen.context.LowerContext.materialize``), the
runtime describes the exit from it (``runtime.exits.describe``: where to resume, the kinds it knows), and a
tree tells its callers which slots it wrote at a loop exit (``runtime.trees.Tree.writes_at``).
`prewritten` makes the outer exits whose state an inner tree's call already wrote to the buffer.

A snapshot is a list of frames, outermost first: calls traced through will add inlined frames. Today a trace
spans one frame, and the lowering and the runtime handle exactly one.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from jit.kinds import MAY_BE_OWNED, Kind
from jit.trace import FrameSnapshot, Prewritten, Snapshot, Trace, TraceEnd, TraceKind, Value

__all__ = [
    "FrameResume",
    "FrameState",
    "Hold",
    "assigned_late",
    "taken_over",
    "SlotResume",
    "Snapshots",
    "entry_snapshot",
    "exit_resume",
    "frame_resume",
    "needed_values",
    "prewritten",
    "prewritten_known",
    "substitute",
]

_MISSING: Any = object()


# --- taking snapshots ------------------------------------------------------------------------------------------


class FrameState:
    """The recorder's abstract copy of one interpreter frame: slot -> the trace value it holds (every slot the
    trace has read or assigned), and the operand stack. Changed only through its methods, which keep what the
    current instruction changed (to rebuild the state it started with) and copy a map a snapshot holds before
    changing it."""

    def __init__(self, pc: int, stack: Iterable[Value] = ()) -> None:
        self.pc = pc  # the current instruction (an outer frame: its call)
        self._slots: dict[int, Value] = {}
        self._stack: list[Value] = list(stack)
        self._slots_shared = False  # a snapshot holds self._slots: copy before changing it
        self._stack_shared = False
        self.slots_version = 0  # bumped by every change
        self.stack_version = 0
        # the changes of the current instruction: slot -> its value before (or _MISSING); stack undo entries
        self._slot_undo: dict[int, Any] = {}
        self._stack_undo: list[tuple[Any, ...]] = []
        self.copies = 0  # maps copied (copy-on-write, or to undo an instruction's changes)

    # --- reading ---------------------------------------------------------------------------------------------
    def get(self, slot: int) -> Value | None:
        """The value slot holds, if the trace has read or assigned it."""
        return self._slots.get(slot)

    def slots(self) -> Mapping[int, Value]:
        """Slot -> value, read-only."""
        return self._slots

    def peek(self, n: int = 1) -> Value:
        """The n-th value from the top of the stack (1 is the top)."""
        return self._stack[-n]

    def stack(self) -> tuple[Value, ...]:
        """The operand stack, bottom first."""
        return tuple(self._stack)

    # --- changing ----------------------------------------------------------------------------------------------
    def set(self, slot: int, value: Value) -> None:
        """slot now holds value (assigned, or read for the first time)."""
        if self._slots_shared:
            self._slots = dict(self._slots)
            self._slots_shared = False
            self.copies += 1
        if slot not in self._slot_undo:
            self._slot_undo[slot] = self._slots.get(slot, _MISSING)
        self._slots[slot] = value
        self.slots_version += 1

    def push(self, value: Value) -> None:
        """Push value on the operand stack."""
        self._own_stack()
        self._stack.append(value)
        self._stack_undo.append(("push",))

    def pop(self) -> Value:
        """Pop the top of the operand stack."""
        self._own_stack()
        value = self._stack.pop()
        self._stack_undo.append(("pop", value))
        return value

    def swap(self, n: int) -> None:
        """Exchange the top of the stack with the n-th value from the top."""
        self._own_stack()
        stack = self._stack
        top, other = len(stack) - 1, len(stack) - n
        self._stack_undo.append(("set", top, stack[top]))
        self._stack_undo.append(("set", other, stack[other]))
        stack[top], stack[other] = stack[other], stack[top]

    def replace_stack(self, values: Iterable[Value]) -> None:
        """The whole stack is now values (what an inner tree left)."""
        self._stack_undo.append(("all", self._stack))
        self._stack = list(values)
        self._stack_shared = False
        self.stack_version += 1

    def _own_stack(self) -> None:
        if self._stack_shared:
            self._stack = list(self._stack)
            self._stack_shared = False
            self.copies += 1
        self.stack_version += 1

    # --- the state at the instruction's start ---------------------------------------------------------------------
    def begin(self) -> None:
        """A new instruction starts: forget the previous one's changes."""
        self._slot_undo.clear()
        self._stack_undo.clear()

    def slots_at_start(self) -> dict[int, Value]:
        """The slot map as the current instruction found it; the frame's own map (then shared) if unchanged."""
        if not self._slot_undo:
            self._slots_shared = True
            return self._slots
        slots = dict(self._slots)
        self.copies += 1
        for slot, old in self._slot_undo.items():
            if old is _MISSING:
                del slots[slot]
            else:
                slots[slot] = old
        return slots

    def stack_at_start(self) -> list[Value]:
        """The stack as the current instruction found it; the frame's own list (then shared) if unchanged."""
        if not self._stack_undo:
            self._stack_shared = True
            return self._stack
        stack = list(self._stack)
        self.copies += 1
        for entry in reversed(self._stack_undo):
            if entry[0] == "push":
                stack.pop()
            elif entry[0] == "pop":
                stack.append(entry[1])
            elif entry[0] == "set":
                stack[entry[1]] = entry[2]
            else:
                stack = list(entry[1])
        return stack


class Snapshots:
    """Takes the snapshots of one recording, sharing what did not change.

    `begin(pc)` before each instruction; `take()` gives the state at the start of the current instruction (the
    same snapshot however often an instruction asks); `take(empty_stack=True)` the state with an empty stack
    (where the trace ends at a loop header)."""

    def __init__(self, frames: list[FrameState]) -> None:
        assert len(frames) == 1, "a trace spans one frame (calls are not traced through yet)"
        self.frames = frames
        self._current: Snapshot | None = None
        # the versions each frame's maps had at the instruction's start, and at the last snapshot taken
        self._start: list[tuple[int, int]] = [(f.slots_version, f.stack_version) for f in frames]
        self._last: Snapshot | None = None
        self._last_versions: list[tuple[int, int]] = []
        self.taken = 0  # snapshots made
        self.shared_slots = 0  # ... whose slot map is the previous snapshot's
        self.shared_stacks = 0  # ... whose stack is the previous snapshot's

    def begin(self, pc: int) -> None:
        """The instruction at pc (of the innermost frame) is about to be recorded."""
        self.frames[-1].pc = pc
        self._current = None
        for frame in self.frames:
            frame.begin()
        self._start = [(f.slots_version, f.stack_version) for f in self.frames]

    def take(self, empty_stack: bool = False) -> Snapshot:
        """The state at the start of the current instruction (with an empty stack if empty_stack)."""
        if self._current is not None and not empty_stack:
            return self._current
        frames = []
        last = self._last
        for index, frame in enumerate(self.frames):
            start_slots, start_stack = self._start[index]
            before = last.frames[index] if last is not None else None
            last_slots, last_stack = self._last_versions[index] if last is not None else (-1, -1)
            if before is not None and start_slots == last_slots:
                slots = before.slots
                self.shared_slots += 1
            else:
                slots = frame.slots_at_start()
            if empty_stack:
                stack: list[Value] = []
            elif before is not None and start_stack == last_stack:
                stack = before.stack
                self.shared_stacks += 1
            else:
                stack = frame.stack_at_start()
            frames.append(FrameSnapshot(frame.pc, slots, stack))
        snapshot = Snapshot(frames)
        self.taken += 1
        if not empty_stack:
            self._current = snapshot
            self._last = snapshot
            self._last_versions = list(self._start)
        return snapshot

    def counts(self) -> dict[str, int]:
        """Snapshots made, maps shared with the previous snapshot, maps copied."""
        return {
            "snapshots": self.taken,
            "shared_slot_maps": self.shared_slots,
            "shared_stacks": self.shared_stacks,
            "copies": sum(frame.copies for frame in self.frames),
        }


def entry_snapshot(trace: Trace) -> Snapshot:
    """The state where the trace starts (nothing has run yet): for guards hoisted to the trace's entry."""
    return Snapshot([FrameSnapshot(trace.start_pc, dict(trace.entry_slots), list(trace.start_stack))])


# --- what the optimizer must keep --------------------------------------------------------------------------------


def _maps(snapshots: Iterable[Snapshot]) -> Iterator[list[Value] | dict[int, Value]]:
    """The stacks and slot maps of snapshots, each once (snapshots share them)."""
    seen: set[int] = set()
    for snapshot in snapshots:
        for frame in snapshot.frames:
            for shared in (frame.stack, frame.slots):
                if id(shared) not in seen:
                    seen.add(id(shared))
                    yield shared


def needed_values(trace: Trace, snapshots: Iterable[Snapshot]) -> Iterator[Value]:
    """The values resuming at any of snapshots may write: their stacks, and the slots the trace assigns."""
    written = trace.written
    for shared in _maps(snapshots):
        if isinstance(shared, list):
            yield from shared
        else:
            yield from (value for slot, value in shared.items() if slot in written)


def substitute(snapshots: Iterable[Snapshot], sub: Callable[[Value], Value]) -> None:
    """Replace every value v in snapshots by sub(v), in place (the optimizer found them the same)."""
    for shared in _maps(snapshots):
        if isinstance(shared, list):
            shared[:] = [sub(value) for value in shared]
        else:
            for slot, value in shared.items():
                shared[slot] = sub(value)


# --- resuming ---------------------------------------------------------------------------------------------------


class Hold(enum.Enum):
    """What a slot the trace assigns holds at a point the interpreter may resume from."""

    VALUE = "value"  # a trace value, which the buffer must be given
    BUFFER = "buffer"  # what the buffer holds already (a side trace's slot it has not assigned yet)
    PREVIOUS = "previous"  # a looping root trace assigns it later in the iteration: the previous iteration's
    #                         value once there was one (the lowering keeps a flag), else the buffer's


@dataclasses.dataclass(frozen=True)
class SlotResume:
    slot: int
    hold: Hold
    value: Value | None  # Hold.VALUE: the value
    kind: Kind | None  # the kind the slot then has, when the trace knows it

    @property
    def write(self) -> bool:
        """Must the buffer be given the value (tagged dirty, so the interpreter re-boxes it)?"""
        return self.hold is Hold.VALUE

    @property
    def certain(self) -> bool:
        """Is the slot's kind the same whichever iteration leaves here?"""
        return self.kind is not None


@dataclasses.dataclass(frozen=True)
class FrameResume:
    """What the interpreter's frame holds at a point the trace can leave from."""

    pc: int
    slots: tuple[SlotResume, ...]  # one per slot the trace assigns, by slot number
    stack: tuple[Value, ...]
    known_kinds: dict[int, Kind]  # slot -> kind, for every slot whose buffer value the trace knows

    @property
    def stack_kinds(self) -> list[Kind]:
        return [value.kind for value in self.stack]

    @property
    def stack_consts(self) -> dict[int, Any]:
        """Stack index -> the constant there (a builtin about to be called, ...)."""
        return {index: value.const for index, value in enumerate(self.stack) if value.is_const}

    def writes(self) -> dict[int, tuple[Kind | None, bool]]:
        """Slot -> (kind, certain) for every slot the trace assigns: what a tree tells its callers it may
        have changed when it leaves here."""
        return {s.slot: (s.kind, s.certain) for s in self.slots}


def frame_resume(trace: Trace, frame: FrameSnapshot) -> FrameResume:
    """The state at frame (a snapshot of trace's own frame), worked out for every slot the trace assigns."""
    root = trace.kind is TraceKind.ROOT
    known = dict(trace.known_kinds)
    if root:  # (a root's entry kinds are checked where it is entered; a side trace guards each slot it reads
        #        that its parent did not know where it reads it, so an exit before that read must not claim it)
        known.update({slot: value.kind for slot, value in trace.entry_slots.items()})
    slots = []
    taken = taken_over(trace)
    for slot in sorted(trace.written | frame.assigned):
        value = frame.slots.get(slot)
        if value is None and root:
            value = trace.entry_slots.get(slot)  # not assigned yet in this iteration: the value it came with
        if value is None:
            if root:
                state = SlotResume(slot, Hold.PREVIOUS, None, None)
                known.pop(slot, None)  # which value it holds depends on the iteration
            else:
                state = SlotResume(slot, Hold.BUFFER, None, known.get(slot))
        elif (not root and trace.entry_slots.get(slot) is value and slot not in taken) or value.kind == Kind.RANGE:
            # still what the buffer holds (a range is virtual: the recorder never lets one into a slot)
            state = SlotResume(slot, Hold.BUFFER, None, value.kind)
            known[slot] = value.kind
        else:
            state = SlotResume(slot, Hold.VALUE, value, value.kind)
            known[slot] = value.kind
        slots.append(state)
    return FrameResume(frame.pc, tuple(slots), tuple(frame.stack), known)


def taken_over(trace: Trace) -> frozenset[int]:
    """The slots whose str a side trace builds onto (`s += x`: its value at the entry, the left operand of
    ``_BINARY_OP_ADD_STR``) and assigns: the trace takes the buffer's reference to that str over at its entry
    (``codegen.ownership``), so that the str can grow in place where nothing else holds it (a loop building a
    str whose side trace appends too copied the whole str at each of its runs: quadratic), and writes such a
    slot at every exit, which hands the reference back."""
    if trace.kind is TraceKind.ROOT:
        return frozenset()
    strs = {
        value.id: slot for slot, value in trace.entry_slots.items() if value.kind == Kind.STR and slot in trace.written
    }
    if not strs:
        return frozenset()
    return frozenset(strs[u.args[0].id] for u in trace.uops if u.name == "_BINARY_OP_ADD_STR" and u.args[0].id in strs)


def written_with_reference(trace: Trace, slot: int, value: Value) -> bool:
    """Does a state of trace that writes value into slot give the buffer a reference of its own to it, though the
    trace may hold none (``codegen.ownership``)? An object that is not what slot held at the trace's entry (or, in
    a looping root, is not the slot's phi, which holds what an iteration before stored unless the loop never
    assigns the slot): native code may go on from that state (a side trace linked to the exit, the tree a side
    trace jumps into, an inner tree) and release what kept it alive before the interpreter takes the state (`last
    = s` in a side trace, then `s = [i]` in the tree). An outer trace that reads such a slot back after an inner
    tree's call leaves that reference to the slot (``codegen.context.LowerContext.take_back``)."""
    if value.kind not in MAY_BE_OWNED or value.is_const:
        return False
    if trace.entry_slots.get(slot) is not value:
        return True
    end = trace.end_snapshot if trace.end is TraceEnd.LOOP else None
    return end is not None and end.outer.slots.get(slot) is not value


def assigned_late(trace: Trace) -> dict[int, Value]:
    """The slots a looping root trace assigns without reading them first, by slot number: an exit before the
    assignment finds the previous iteration's value there (`Hold.PREVIOUS`), so the lowering carries, per
    slot, whether it was assigned yet and its last value, which is the one given here (the iteration's end)."""
    assert trace.end_snapshot is not None
    end = trace.end_snapshot.outer.slots
    return {slot: end[slot] for slot in sorted(trace.written - set(trace.entry_slots))}


def exit_resume(trace: Trace, snapshot: Snapshot) -> list[FrameResume]:
    """The state at snapshot, frame by frame (outermost first)."""
    assert len(snapshot.frames) == 1, "a trace spans one frame (calls are not traced through yet)"
    return [frame_resume(trace, frame) for frame in snapshot.frames]


def slots_at(trace: Trace, snapshot: Snapshot) -> dict[int, SlotResume]:
    """The state of each slot at snapshot (``exit_resume``'s one frame), by slot."""
    (frame,) = exit_resume(trace, snapshot)
    return {state.slot: state for state in frame.slots}


def prewritten(
    snapshot: Snapshot,
    inner_exit: int,
    pc: int,
    stack_kinds: Iterable[Kind],
    inner_writes: Mapping[int, tuple[Kind | None, bool]],
    owned_stack: frozenset[int] = frozenset(),
    borrowed_slots: frozenset[int] = frozenset(),
) -> Prewritten:
    """An outer exit taken when an inner tree, called at snapshot, left its loop by its exit inner_exit
    (resuming at pc with a stack of stack_kinds) after writing inner_writes (its `FrameResume.writes` there,
    with the slots its side traces assign): the state is in the buffer already."""
    borrowed = borrowed_slots - set(inner_writes)
    return Prewritten(inner_exit, pc, list(stack_kinds), dict(inner_writes), owned_stack, borrowed)


def prewritten_known(trace: Trace, snapshot: Snapshot, state: Prewritten) -> dict[int, Kind]:
    """The kinds of the slots the buffer holds at a prewritten exit of trace (taken at snapshot): what the trace
    knows there, updated by what the inner tree writes. Worked out once the trace is recorded, as for its other
    exits: a root learns the kind of an entry slot where it first reads it, which may come after the call (its
    entry checks every entry slot, so an exit before that read knows the kind as well)."""
    known = frame_resume(trace, snapshot.outer).known_kinds
    for slot, (kind, certain) in state.inner_writes.items():
        if certain:
            assert kind is not None
            known[slot] = kind
        else:
            known.pop(slot, None)
    return known
