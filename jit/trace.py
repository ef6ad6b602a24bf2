"""The history of a recorded trace: SSA values, uop instances, and the snapshots that let a side exit rebuild
the interpreter's exact state."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from typing import Any

from jit.frontend.instructions import LoopInfo
from jit.kinds import Kind
from jit.uops import UOPS, VARIES, UopDef
from jit.versions import Versioning

NO_CONST: Any = object()


class TraceKind(enum.StrEnum):
    """A root trace starts at its loop's header; a side trace starts at a side exit of its tree."""

    ROOT = "root"
    SIDE = "side"


class TraceEnd(enum.StrEnum):
    """How a trace ends: jumping back to its loop's header (``_JUMP_TO_TOP``), tail-jumping into a tree
    (``_JUMP_TO_TREE``), or leaving to the interpreter (``_EXIT_TRACE``)."""

    LOOP = "loop"
    TREE = "tree"
    EXIT = "exit"


class WhenHot(enum.StrEnum):
    """What an exit taken often does: grow a side trace, nothing, or invalidate its tree (a hoisted guard
    that keeps failing means the tree was specialized on a global that changed for good)."""

    SIDE = "side"
    NEVER = "never"
    INVALIDATE = "invalidate"
    # a trace's end at its loop's header that no tree's entry type map takes: record a root tree for that map
    # (one that names the slots Trace.wanted_entry lists), into which the exit then jumps (jit.monitor)
    ROOT = "root"
    # a root's hoisted guard on a value of its entry (UopDef.peer: the function a variable holds) failing at the
    # entry: record another root tree for the loop, a peer specialized on the value now there, into which this
    # exit then jumps (jit.monitor.Monitor.wants_peer): `integrate(f1, ...)`, then `integrate(f2, ...)`
    PEER = "peer"


def hoisted_when_hot(op: UopDef, root: bool = True) -> WhenHot:
    """What a hoisted guard's exit does when taken often: invalidate the tree (it was specialized on a global
    that changed for good), or, for a transient guard (a global holding None until the loop's first store),
    grow a side trace from the entry that does that iteration; in a root trace, a guard on a value of the entry
    (UopDef.peer) asks for a peer root tree instead."""
    if op.peer and root:
        return WhenHot.PEER
    return WhenHot.SIDE if op.transient else WhenHot.INVALIDATE


class Value:
    """An SSA value of the trace, of a fixed kind; `const` is its Python value when known; `boxed` is the
    object a number was unboxed from (moving the number on unchanged moves that very object, as CPython
    does)."""

    __slots__ = ("boxed", "const", "id", "kind")

    def __init__(self, id: int, kind: Kind, const: Any = NO_CONST) -> None:
        self.id = id
        self.kind = kind
        self.const = const
        self.boxed: Value | None = None

    @property
    def is_const(self) -> bool:
        return self.const is not NO_CONST

    def __repr__(self) -> str:
        return f"v{self.id}"


@dataclasses.dataclass(eq=False)
class FrameSnapshot:
    """One frame's tier-1 state at the start of instruction `pc`: the values of the slots the trace has touched
    (read or assigned) and the operand stack. Snapshots taken while nothing changed share these maps, so they
    are never mutated in place except by the optimizer replacing one value by an equal one everywhere."""

    pc: int
    slots: dict[int, Value]
    stack: list[Value]
    # slots this state assigns that the trace does not (``Trace.written``): the hidden slots a generic FOR_ITER
    # empties where its loop ends (jit.recorder.generic), written only by the exit that resumes here
    assigned: frozenset[int] = frozenset()


@dataclasses.dataclass(eq=False)
class Snapshot:
    """The interpreter's state a trace can resume from: one `FrameSnapshot` per frame, outermost (the traced
    loop's frame) first, the frame the interpreter resumes in last. Today a trace spans one frame; calls traced
    through will add the inlined callees' frames. Taken, shared and read only by ``jit.resume``."""

    frames: list[FrameSnapshot]

    @property
    def outer(self) -> FrameSnapshot:
        """The traced loop's own frame (its slots are the frame buffer's)."""
        return self.frames[0]

    @property
    def inner(self) -> FrameSnapshot:
        """The frame the interpreter resumes in."""
        return self.frames[-1]

    @property
    def pc(self) -> int:
        """Where the interpreter resumes."""
        return self.frames[-1].pc


@dataclasses.dataclass(eq=False)
class Prewritten:
    """The state at an exit that an inner tree already wrote to the buffer (it left its loop another way than
    the one recorded): the interpreter resumes where that inner exit does, with what the outer trace knew about
    the slots updated by what the inner tree writes there."""

    inner_exit: int  # the inner tree's exit number (what its call returns)
    pc: int
    stack_kinds: list[Kind]
    # slot -> (kind, certain) for what the inner tree writes there (``runtime.trees.Tree.writes_at``): the kinds
    # the exit knows are worked out from them once the trace is recorded (``jit.resume.prewritten_known``)
    inner_writes: Mapping[int, tuple[Kind | None, bool]]
    owned_stack: frozenset[int] = frozenset()  # the stack entries the inner exit handed over owned
    # the slots whose buffer value is certainly no reference of the buffer's own (see ExitView.borrowed_slots)
    borrowed_slots: frozenset[int] = frozenset()


@dataclasses.dataclass
class ExitPoint:
    """A guard's way out of the trace."""

    snapshot: Snapshot
    line: int
    leaves_loop: bool = False  # failing it means the loop ends: it never grows a side trace
    propagate: bool = False  # after a tree call: leave with the inner tree's own exit and state
    when_hot: WhenHot = WhenHot.SIDE  # what the exit does once it is hot
    # an outer trace calling the exit's tree may go on from it (not the exit of a hoisted guard a tree call's
    # proven entry skips: jit.uops.PROVEN_BY_CALLERS)
    followed: bool = True
    id: int = -1  # the function-wide exit number, given when the trace is compiled
    prewritten: Prewritten | None = None  # the state is in the buffer already (jit.resume.prewritten)


class Uop:
    __slots__ = ("alternatives", "args", "exit", "fast", "line", "op", "operand", "out", "pc")

    def __init__(
        self,
        op: UopDef,
        args: tuple[Value, ...],
        out: Value | None,
        operand: Any,
        pc: int,
        line: int,
        exit: ExitPoint | None = None,
    ) -> None:
        self.op = op
        self.args = args
        self.out = out
        self.operand = operand
        self.pc = pc
        self.line = line
        self.exit = exit
        self.alternatives: tuple[ExitPoint, ...] = ()  # _GUARD_TREE_EXIT: the inner tree's other loop exits
        # the uop lowered instead in the loop's fast copy (its op's `unchecked` form: jit.versions), or None
        self.fast: UopDef | None = None

    @property
    def name(self) -> str:
        return self.op.name


@dataclasses.dataclass
class Trace:
    """A recorded trace. A root trace starts at its loop's header and (normally) jumps back to it; a side
    trace starts at a side exit of its tree and ends by tail-jumping into a tree's root."""

    kind: TraceKind
    loop: LoopInfo
    start_pc: int
    entry_slots: dict[int, Value] = dataclasses.field(default_factory=dict)  # slot -> value read at the start
    # root traces: the slots of entry_slots the trace writes before it reads them, there only because it carries
    # an owned reference into them across the back-edge (dead at the entry but for what an exit before the write
    # gives back): an entry with one of them unbound lets an iteration run first instead (jit.monitor)
    carried_only: set[int] = dataclasses.field(default_factory=set)
    entry_stack: dict[int, Value] = dataclasses.field(default_factory=dict)  # side traces: stack index -> value read
    start_stack: list[Value] = dataclasses.field(default_factory=list)  # side traces: the whole stack at the start
    known_kinds: dict[int, Kind] = dataclasses.field(default_factory=dict)  # side traces: kinds the parent knew
    # side traces: the stack entries the parent's exit handed over with a reference of their own (OWNED)
    owned_entry_stack: frozenset[int] = frozenset()
    # side traces: the slots whose buffer value the parent's exit left borrowed (ExitView.borrowed_slots); those
    # the trace does not assign are still borrowed at its own exits
    entry_borrowed: frozenset[int] = frozenset()
    uops: list[Uop] = dataclasses.field(default_factory=list)
    written: set[int] = dataclasses.field(default_factory=set)  # slots the trace assigns
    end: TraceEnd | None = None  # set when recording finishes
    end_snapshot: Snapshot | None = None
    end_tree: Any = None  # the tree a TraceEnd.TREE end jumps into
    # a trace ending at its loop's header with an exit (no tree took its state, WhenHot.ROOT): the kinds a tree's
    # entry type map must give the slots that hold an owned reference there, for the exit to jump into it
    wanted_entry: dict[int, Kind] | None = None
    hoisted: list[Uop] = dataclasses.field(default_factory=list)  # guards moved to the trace's entry
    parent_exit: Any = None  # side traces: the runtime exit descriptor they hang from
    next_value: int = 0
    removed_uops: int = 0  # by the optimizer
    # a looping trace's fast copy and its conditions (jit.versions; None: one copy, the trace as it is)
    versioning: Versioning | None = None
    # a while loop's counters (jit.optimizer.counters): slot -> the most any iteration adds to it (its additions
    # unchecked, a hoisted _GUARD_COUNTER_ROOM instead); a side trace joined with the loop keeps that (codegen.joined)
    counters: dict[int, int] = dataclasses.field(default_factory=dict)
    # a side trace joined with its tree's loop: that loop merged with it (both ways in one iteration), whose
    # vectorized fast copy its function has (jit.optimizer.merge, codegen.joined); None: none
    merged: Trace | None = None
    # calls of Python functions recorded as generic calls, their bodies not inlined (jit.inline): the function's
    # qualified name -> where and why (jit.explain lists them)
    generic_calls: dict[str, str] = dataclasses.field(default_factory=dict)

    def new_value(self, kind: Kind, const: Any = NO_CONST) -> Value:
        value = Value(self.next_value, kind, const)
        self.next_value += 1
        return value

    def made_by(self, value: Value) -> Uop | None:
        """The recorded uop that made value (None for an entry value or a constant)."""
        return next((uop for uop in reversed(self.uops) if uop.out is value), None)

    def insert_after(self, producer: Value, name: str, args: tuple[Value, ...]) -> Value | None:
        """A pure uop with one output, placed right after the uop that made producer (None if no recorded uop
        did: an entry value or a constant)."""
        for index in range(len(self.uops) - 1, -1, -1):
            uop = self.uops[index]
            if uop.out is producer:
                op = UOPS[name]
                assert op.pure and isinstance(op.output, Kind) and not op.is_guard, name
                out = self.new_value(op.output)
                self.uops.insert(index + 1, Uop(op, args, out, None, uop.pc, uop.line))
                return out
        return None

    def emit(
        self,
        name: str,
        args: tuple[Value, ...] = (),
        *,
        kind: Kind | None = None,
        operand: Any = None,
        pc: int,
        line: int,
        exit: ExitPoint | None = None,
        const: Any = NO_CONST,
    ) -> Value | None:
        op = UOPS[name]
        out = None
        if op.output is not None:
            out_kind = kind if op.output == VARIES else op.output
            assert isinstance(out_kind, Kind), f"{name} needs an output kind"
            out = self.new_value(out_kind, const)
        assert (exit is not None) == op.is_guard, f"{name}: guard without exit or exit without guard"
        assert isinstance(operand, op.operand.type), f"{name}: operand {operand!r} is not {op.operand.doc}"
        self.uops.append(Uop(op, args, out, operand, pc, line, exit))
        return out

    @property
    def entry_kinds(self) -> dict[int, Kind]:
        """The entry type map: the kind of every slot the trace reads before writing it."""
        return {slot: value.kind for slot, value in sorted(self.entry_slots.items())}

    def holds_kinds(self, kinds: frozenset[Kind]) -> bool:
        """Does any value of the trace (read at its start, computed, or in a state an exit or its end writes)
        have one of kinds?"""
        values = [*self.entry_slots.values(), *self.entry_stack.values(), *self.start_stack]
        for uop in [*self.hoisted, *self.uops]:
            values.extend(uop.args)
            if uop.out is not None:
                values.append(uop.out)
        snapshots = [u.exit.snapshot for u in [*self.hoisted, *self.uops] if u.exit is not None]
        if self.end_snapshot is not None:
            snapshots.append(self.end_snapshot)
        for snapshot in snapshots:
            for frame in snapshot.frames:
                values.extend(frame.slots.values())
                values.extend(frame.stack)
        return any(v.kind in kinds for v in values)

    def entry_values(self) -> set[int]:
        """The ids of the values its hoisted uops read at the entry (an array's data pointer and dimensions): the
        same throughout the loop (the periodic check leaves where one changed)."""
        return {u.out.id for u in self.hoisted if u.out is not None and u.op.entry_value}

    def same_throughout(self) -> set[int]:
        """The ids of a looping trace's values that are the same in every iteration: the slots it reads at its start
        and never assigns, and what its hoisted uops read at the entry (``entry_values``)."""
        assert self.end_snapshot is not None
        end = self.end_snapshot.outer.slots
        return {v.id for slot, v in self.entry_slots.items() if end.get(slot) is v} | self.entry_values()

    def range_counter(self) -> tuple[int, Value, Value, Value] | None:
        """A looping trace's ``for ... in range`` counter: the position of its _GUARD_NOT_EXHAUSTED_RANGE (the
        first), and its inputs cur (loop-carried: its next value is _ITER_NEXT_RANGE of cur and step), stop and
        step (the same throughout: constants, slots read and never assigned, or values read at the entry: an
        array's length, which ``for x in a`` counts its index up to, by _ITER_INCREMENT). None if there is none."""
        if self.end is not TraceEnd.LOOP or self.end_snapshot is None:
            return None
        end = self.end_snapshot.outer.slots
        invariant = self.same_throughout()
        carried = {v.id: slot for slot, v in self.entry_slots.items() if end.get(slot) is not v}
        for position, uop in enumerate(self.uops):
            if uop.name != "_GUARD_NOT_EXHAUSTED_RANGE":
                continue
            cur, stop, step = uop.args
            if cur.id not in carried or not all(v.is_const or v.id in invariant for v in (stop, step)):
                return None
            following = end[carried[cur.id]]
            if not any(
                u.out is following
                and (
                    (u.args == (cur, step) and u.name.startswith("_ITER_NEXT_RANGE"))
                    or (u.name == "_ITER_INCREMENT" and u.args == (cur,) and step.is_const and step.const == 1)
                )
                for u in self.uops
            ):
                return None
            return position, cur, stop, step
        return None

    def exits(self) -> list[ExitPoint]:
        out = [u.exit for u in self.hoisted if u.exit is not None]
        for uop in self.uops:
            if uop.exit is not None:
                out.append(uop.exit)
            out.extend(uop.alternatives)
        return out
