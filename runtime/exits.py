"""Side exits as the runtime knows them: one descriptor per guard of every compiled trace of a function,
numbered function-wide (the number is what native code returns).

A descriptor says where the interpreter resumes (pc, stack depth), what the trace knew there about the kinds
of the buffer's slots (a side trace recorded from the exit starts from that knowledge), how often the exit
was taken, and what it links to.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Container
from typing import Any

from jit.kinds import Kind
from jit.lifecycle import Lifecycle
from jit.resume import FrameResume, Hold, exit_resume, prewritten_known
from jit.trace import ExitPoint, Trace, WhenHot


@dataclasses.dataclass(eq=False)
class ExitDescriptor:
    id: int
    pc: int
    line: int
    stack_kinds: list[Kind]
    known_kinds: dict[int, Kind]  # slot -> kind, for the slots whose buffer value the trace knows
    stack_consts: dict[int, Any]  # stack index -> the constant there (a builtin about to be called, ...)
    leaves_loop: bool
    when_hot: WhenHot
    propagate: bool
    followed: bool  # (jit.trace.ExitPoint.followed)
    # slot -> (kind, certain) for every slot the trace assigns: what it may have changed in the buffer
    writes: dict[int, tuple[Kind | None, bool]] = dataclasses.field(default_factory=dict)
    exact_writes: bool = True  # False when the state was written by an inner tree (``writes`` is empty then)
    # the stack entries native code hands over with a reference of their own (OWNED): a side trace recorded
    # from the exit starts owning them (codegen.ownership)
    owned_stack: frozenset[int] = frozenset()
    # the slots the exit writes with a value it hands over without a reference of its own (no OWNED tag)
    borrowed_slots: frozenset[int] = frozenset()
    # (runtime.trees builds on this module: the tree and trace an exit belongs to are typed there, not here)
    tree: Any = None  # the runtime.trees.Tree it belongs to (None once freed)
    trace: Any = None  # the runtime.trees.CompiledTrace it belongs to (None once freed)
    index: int = 0  # position in its trace (its counter, its link pointer)
    taken: int = 0  # returns to the interpreter through this exit
    aborts: int = 0  # failed recordings of a side trace from it
    life: Lifecycle = dataclasses.field(default_factory=Lifecycle)  # growing a side trace from it (jit.lifecycle)
    side: Any = None  # the side trace (runtime.trees.CompiledTrace) linked to it
    # an exit where a trace ends at its loop's header (WhenHot.ROOT): the tree (runtime.trees.Tree) it jumps into
    linked_tree: Any = None
    roots_asked: int = 0  # root recordings started for it (jit.monitor.Monitor.wants_root: at most two)
    retry_at: int = 0  # `taken` count at which recording may be tried again

    def follows_from(self, tree: Any) -> bool:
        """Is this an exit of tree, or of a tree a call of it may run (one it calls or tail-jumps into,
        handed on as it was), so that a trace calling tree can go on from it? (Not an exit that only hands
        such an exit on, nor one of code freed since, nor a hoisted guard's that a tree call's proven entry skips
        after a call that reached the exit the caller expects: an array's header, NumPy's error state.)"""
        if self.propagate or self.tree is None or not self.followed:
            return False
        return self.tree is tree or self.tree in tree.reached()

    @property
    def recording(self) -> bool:
        """A side trace from it is being recorded or compiled."""
        return self.life.recording

    @property
    def blacklisted(self) -> bool:
        return self.life.blacklisted

    def can_grow(self) -> bool:
        return self.when_hot is WhenHot.SIDE and not self.leaves_loop and not self.propagate and not self.blacklisted


def describe(trace: Trace, point: ExitPoint, number: int, owned: Container[int] = ()) -> ExitDescriptor:
    """The runtime's view of exit point of trace (numbered number), from ``jit.resume``'s account of it; owned:
    the ids of the trace's values that hold a reference of their own (``codegen.ownership``)."""
    if point.prewritten is not None:
        state = point.prewritten
        return ExitDescriptor(
            id=number,
            pc=state.pc,
            line=point.line,
            stack_kinds=list(state.stack_kinds),
            known_kinds=prewritten_known(trace, point.snapshot, state),
            stack_consts={},
            leaves_loop=False,
            when_hot=point.when_hot,
            propagate=False,
            followed=point.followed,
            exact_writes=False,
            owned_stack=state.owned_stack,
            borrowed_slots=state.borrowed_slots,
        )
    (frame,) = exit_resume(trace, point.snapshot)
    return ExitDescriptor(
        id=number,
        pc=frame.pc,
        line=point.line,
        stack_kinds=frame.stack_kinds,
        known_kinds=frame.known_kinds,
        stack_consts=frame.stack_consts,
        leaves_loop=point.leaves_loop,
        when_hot=point.when_hot,
        propagate=point.propagate,
        followed=point.followed,
        writes=frame.writes(),
        owned_stack=frozenset(index for index, value in enumerate(frame.stack) if value.id in owned),
        borrowed_slots=_borrowed_slots(frame, owned, trace.entry_borrowed),
    )


def _borrowed_slots(frame: FrameResume, owned: Container[int], inherited: frozenset[int]) -> frozenset[int]:
    """The slots an exit writes with no reference of their own: a value native code does not own (an int object
    constant aside, which gets one), or a looping root's previous value of a slot it assigns late (never an owned
    one: jit.recorder puts those in the entry type map); and (a side trace) the slots its parent's exit left
    borrowed that it has not assigned (inherited), whose buffer value is still that borrowed one."""
    assigned = {s.slot for s in frame.slots if s.hold is not Hold.BUFFER}
    return frozenset(slot for slot in inherited if slot not in assigned) | frozenset(
        s.slot
        for s in frame.slots
        if s.hold is Hold.PREVIOUS
        or (
            s.hold is Hold.VALUE and s.value is not None and s.value.id not in owned and s.value.kind != Kind.INT_OBJECT
        )
    )
