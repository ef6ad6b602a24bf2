"""Owned references: the trace values that hold a reference of their own, and where each one is given up.

Most pointers native code holds are borrowed: the frame, a trace constant or a container the frame holds keeps
the object alive. A uop declared ``owns`` (an int object computed past 64 bits, ``Kind.INT_OBJECT``) makes a
new object instead, and the trace owns that reference. The recorder keeps such values on the operand stack
only (never in a slot, a container or across an inner tree's call), so each lives inside one iteration, from
the uop that makes it to its last use, and this plan is exact with no run-time bookkeeping:

* after its last position (its last use as an input, or the last guard whose exit state holds it) the value
  is released (``Py_DecRef``) on the path that goes on;
* a guard between its definition and its last position leaves with the value either in the exit's state,
  which hands the reference over (the tag's ``OWNED`` bit: the interpreter releases it once it holds the
  object; a value in two places of the state gets one more reference for each), or not, and then the exit
  releases it;
* a side trace's stack values of an owned kind hold the reference the parent's exit handed over (the exit
  tail-jumps with the state in the buffer), from before its first uop.
"""

from __future__ import annotations

from collections import Counter

from jit.kinds import Kind
from jit.resume import Hold, exit_resume
from jit.trace import Snapshot, Trace, Value

#: the kinds whose values are always owned references
OWNED_KINDS = frozenset({Kind.INT_OBJECT})
ENTRY = -1  # the position of values the trace starts with


class Ownership:
    """Where each owned value of a trace is defined and last needed (positions are indices in trace.uops)."""

    def __init__(self, trace: Trace) -> None:
        self.defined: dict[int, int] = {}
        self.last: dict[int, int] = {}
        self.values: dict[int, Value] = {}
        self._states: dict[int, Counter[int]] = {}
        for value in trace.entry_stack.values():
            if value.kind in OWNED_KINDS:
                self._define(value, ENTRY)
        for position, uop in enumerate(trace.uops):
            for arg in uop.args:
                if arg.id in self.defined:
                    self.last[arg.id] = position
            if uop.exit is not None:
                for value_id in self.state(trace, uop.exit.snapshot):
                    self.last[value_id] = position
            if uop.out is not None and (uop.op.owns or uop.out.kind in OWNED_KINDS) and not uop.out.is_const:
                assert uop.op.owns, f"{uop.name} makes a {uop.out.kind.short} without owning it"
                self._define(uop.out, position)
        self.released: dict[int, list[Value]] = {}
        for value_id, position in self.last.items():
            self.released.setdefault(position, []).append(self.values[value_id])

    def _define(self, value: Value, position: int) -> None:
        self.defined[value.id] = position
        self.last[value.id] = position
        self.values[value.id] = value

    def state(self, trace: Trace, snapshot: Snapshot) -> Counter[int]:
        """How many times each owned value appears in the interpreter's state at snapshot."""
        known = self._states.get(id(snapshot))
        if known is None:
            known = Counter()
            if self.defined:
                (frame,) = exit_resume(trace, snapshot)
                for slot in frame.slots:
                    if slot.hold is Hold.VALUE and slot.value is not None and slot.value.id in self.defined:
                        known[slot.value.id] += 1
                for value in frame.stack:
                    if value.id in self.defined:
                        known[value.id] += 1
            self._states[id(snapshot)] = known
        return known

    def live_at(self, position: int) -> list[Value]:
        """The owned values defined before position and still needed at or after it."""
        return [
            self.values[value_id]
            for value_id, defined in self.defined.items()
            if defined < position <= self.last[value_id]
        ]
