"""Owned references: the trace values that hold a reference of their own, and where each one is given up.

Most pointers native code holds are borrowed: the frame, a trace constant or a container the frame holds keeps
the object alive. A uop declared ``owns`` (an int object computed past 64 bits, ``Kind.INT_OBJECT``) makes a
new object instead, and the trace owns that reference. Such a value may live on the operand stack and in
slots (variables), across the loop's back-edge, exits and tail-jumps; this plan says, with no run-time
bookkeeping, where each reference is given up:

* after its last position (its last use as an input, or the last guard whose exit state holds it) the value
  is released (``Py_DecRef``) on the path that goes on;
* a guard between its definition and its last position leaves with the value either in the exit's state,
  which hands the reference over (the tag's ``OWNED`` bit: the interpreter releases it once it holds the
  object; a value in two places of the state gets one more reference for each), or not, and then the exit
  releases it;
* a side trace's stack values of an owned kind hold the reference the parent's exit handed over (the exit
  tail-jumps with the state in the buffer), from before its first uop;
* a slot of an owned kind the trace reads at its entry is loaded with a reference of the trace's own
  (``Py_IncRef``); the buffer keeps its own (a slot whose tag is an owned kind always holds a reference of the
  buffer's: the entry stub or the packer took one, or an exit handed one over), which the trace releases where
  it writes that slot at an exit (``codegen.context.LowerContext.materialize``);
* in a looping root trace, a slot's value at the iteration's end flows into the next iteration (the slot's
  phi): it is kept to the back-edge and not released there, with one more reference for each further slot it
  flows into; a slot the loop never assigns keeps its entry value for the whole loop (released at the exits);
* an object written into the buffer's slots that is not what the slot held at the trace's entry (another
  slot's object, an item of a list, a looping root's phi, the previous iteration's value of a slot assigned
  late, the loop's state handed from one of its functions to another) goes with a reference of its own, tag
  OWNED (``LowerContext.materialize``, ``store_loop_state``): native code may go on from that state (a side trace
  linked to the exit, the tree a side trace jumps into, the loop's fast copy) and release what kept it alive
  before the interpreter takes the state. The only borrowed objects in the buffer are then the ones the
  interpreter's frame holds (what the tree was entered with) and constants.
"""

from __future__ import annotations

from collections import Counter

from jit.kinds import MAY_BE_OWNED, Kind
from jit.resume import Hold, exit_resume, taken_over
from jit.trace import Snapshot, Trace, TraceEnd, TraceKind, Value

#: the kinds whose values are always owned references (a constant of such a kind aside: borrowed)
OWNED_KINDS = frozenset({Kind.INT_OBJECT})
ENTRY = -1  # the position of values the trace starts with


class Ownership:
    """Where each owned value of a trace is defined and last needed (positions are indices in trace.uops)."""

    def __init__(self, trace: Trace) -> None:
        self.defined: dict[int, int] = {}
        self.last: dict[int, int] = {}
        self.values: dict[int, Value] = {}
        self._states: dict[int, Counter[int]] = {}
        self._held: dict[int, tuple[list[Value], list[Value]]] = {}
        for index, value in trace.entry_stack.items():
            if value.kind in OWNED_KINDS or index in trace.owned_entry_stack:
                self._define(value, ENTRY)
        owns = {uop.out.id for uop in trace.uops if uop.out is not None and uop.op.owns and not uop.out.is_const}
        looping = trace.end is TraceEnd.LOOP
        end = trace.end_snapshot.outer.slots if looping and trace.end_snapshot is not None else {}
        #: the entry slots loaded with a reference of the trace's own: of an owned kind, or (a looping root)
        #: a slot into which an owned value flows at the back-edge (its phi holds one from then on)
        self.entry_slots = {slot: v for slot, v in trace.entry_slots.items() if v.kind in OWNED_KINDS}
        grown = True
        while grown:  # (a value flowing from one slot's phi into another's: `a, b = b, []`)
            grown = False
            for slot, v in trace.entry_slots.items():
                if (
                    slot not in self.entry_slots
                    and slot in end
                    and (end[slot].id in owns or end[slot] in self.entry_slots.values())
                ):
                    self.entry_slots[slot] = v
                    grown = True
        # a side trace's str it builds onto (jit.resume.taken_over): its reference too
        builds_onto = taken_over(trace)
        self.entry_slots.update({slot: trace.entry_slots[slot] for slot in builds_onto})
        #: the entry slots whose reference the trace takes over from the buffer where the buffer owns one (its tag
        #: OWNED: the tag loses it), else takes one of its own: the slots every exit writes (a root's assigned
        #: slots, a side trace's taken over), which hand it back; so a str the trace builds onto is held once
        self.taken = (
            {slot for slot in self.entry_slots if slot in trace.written} if trace.kind is TraceKind.ROOT else set()
        )
        self.taken |= builds_onto
        for value in self.entry_slots.values():
            self._define(value, ENTRY)
        #: value id -> the owned values it depends on without a reference of its own: an item read out of a list
        #: the trace built, what a guard passes on of an owned value, a number unboxed from such an object
        #: (``Value.boxed``); each of those stays alive as long as the value is needed (not one whose contents
        #: another object holds too: ``UopDef.shared``)
        self.borrowed_from: dict[int, frozenset[int]] = {}
        self.borrowed_kinds: dict[int, Kind] = {}
        shared = {uop.out.id for uop in trace.uops if uop.op.shared and uop.out is not None}
        for position, uop in enumerate(trace.uops):
            for arg in uop.args:
                if arg.id in self.defined:
                    self.last[arg.id] = position
                self._keep_roots(arg.id, position)
            if uop.exit is not None:
                for value_id in self.state(trace, uop.exit.snapshot):
                    self.last[value_id] = position
                for value_id in self._borrowed_in(trace, uop.exit.snapshot):
                    self._keep_roots(value_id, position)
            if uop.name == "_CALL_TREE":  # handed over to the buffer, taken back after the next uop's guard
                for value_id in self.slot_state(trace, uop.operand.snapshot):
                    self.last[value_id] = max(self.last[value_id], position + 1)
                for value_id in self._borrowed_in(trace, uop.operand.snapshot):
                    self._keep_roots(value_id, position + 1)  # (the inner tree reads it from the buffer)
            if uop.out is not None and (uop.op.owns or uop.out.kind in OWNED_KINDS) and not uop.out.is_const:
                assert uop.op.owns, f"{uop.name} makes a {uop.out.kind.short} without owning it"
                self._define(uop.out, position)
            elif uop.out is not None and not uop.out.is_const and (uop.out.kind.is_pointer or uop.out.boxed):
                roots = frozenset().union(
                    *(
                        {arg.id}
                        if arg.id in self.defined and arg.id not in shared
                        else self.borrowed_from.get(arg.id, frozenset())
                        for arg in uop.args
                    )
                )
                if roots:
                    self.borrowed_from[uop.out.id] = roots
                    self.borrowed_kinds[uop.out.id] = uop.out.kind
        if trace.end is TraceEnd.TREE and self.defined:
            # the tail-jump hands the end state's values over, in the buffer (with the reference each holds)
            assert trace.end_snapshot is not None
            for value_id in self.state(trace, trace.end_snapshot):
                self.last[value_id] = len(trace.uops) - 1
            for value_id in self._borrowed_in(trace, trace.end_snapshot):
                self._keep_roots(value_id, len(trace.uops) - 1)
        # a looping root: what flows across the back-edge (value id -> the references the next iteration needs
        # of it: one per slot phi it flows into), and the entry values held for the whole loop
        self.carried: Counter[int] = Counter()
        self.kept: set[int] = set()
        self.carried_values: dict[int, Value] = {}
        if trace.end is TraceEnd.LOOP and self.defined:
            assert trace.end_snapshot is not None
            latch = len(trace.uops) - 1
            end = trace.end_snapshot.outer.slots
            for slot, value in self.entry_slots.items():
                if end.get(slot) is value:
                    self.kept.add(value.id)
                    self.last[value.id] = latch
                elif self.last[value.id] == ENTRY:
                    self.last[value.id] = 0  # (a phi: released in the loop's body, at every iteration)
            for slot, value in self.entry_slots.items():
                flows = end[slot]
                if flows is value:
                    continue
                # (else a constant, or a list or tuple the frame keeps alive: the latch takes a reference)
                assert flows.is_const or flows.id in self.defined or flows.kind not in OWNED_KINDS, flows
                self.carried[flows.id] += 1
                self.carried_values[flows.id] = flows
                if flows.id in self.defined:
                    self.last[flows.id] = latch
        # the positions of the uops declared `steals` that keep the reference of their first input (owned, used
        # last there, once): a store of a _NEW_REF's object hands the list that very reference (no incref, and
        # no release after it); an exit at its guards comes first, with the reference still the trace's
        self.stolen: dict[int, int] = {}
        for position, uop in enumerate(trace.uops):
            if uop.op.steals and uop.args:
                value_id = uop.args[0].id
                if (
                    value_id in self.defined
                    and self.last[value_id] == position
                    and value_id not in self.kept
                    and value_id not in self.carried
                    and sum(arg.id == value_id for arg in uop.args) == 1
                ):
                    self.stolen[position] = value_id
        # the positions of uops declared `steals_alias` that take, besides the stolen reference, that of the value
        # it is a _KEEP_ALIVE of (owned, used last there; the lowering gives it up where it gives up the stolen one)
        self.stolen_aliases: dict[int, int] = {}
        kept_alive = {u.out.id: u.args[0] for u in trace.uops if u.name == "_KEEP_ALIVE" and u.out is not None}
        for position, value_id in self.stolen.items():
            alias = kept_alive.get(value_id)
            if (
                trace.uops[position].op.steals_alias
                and alias is not None
                and alias.id in self.defined
                and self.last[alias.id] == position
                and alias.id not in self.kept
                and alias.id not in self.carried
                and alias.id not in self.stolen.values()
                and all(arg.id != alias.id for arg in trace.uops[position].args)
            ):
                self.stolen_aliases[position] = alias.id
        stolen = set(self.stolen.values()) | set(self.stolen_aliases.values())
        self.released: dict[int, list[Value]] = {}
        for value_id, position in self.last.items():
            if value_id in self.kept or value_id in self.carried or value_id in stolen:
                continue  # (held across the back-edge: never released in the loop's body; or a store kept it)
            self.released.setdefault(position, []).append(self.values[value_id])

    def _define(self, value: Value, position: int) -> None:
        self.defined[value.id] = position
        self.last[value.id] = position
        self.values[value.id] = value

    def _keep_roots(self, value_id: int, position: int) -> None:
        """Value is needed at position: so are the owned values it depends on."""
        for root in self.borrowed_from.get(value_id, ()):
            self.last[root] = max(self.last[root], position)

    def _held_at(self, trace: Trace, snapshot: Snapshot) -> tuple[list[Value], list[Value]]:
        """The values the interpreter's state at snapshot holds: in its slots (one per slot), on its stack."""
        held = self._held.get(id(snapshot))
        if held is None:
            (frame,) = exit_resume(trace, snapshot)
            slots = [slot.value for slot in frame.slots if slot.hold is Hold.VALUE and slot.value is not None]
            held = self._held[id(snapshot)] = (slots, list(frame.stack))
        return held

    def _borrowed_in(self, trace: Trace, snapshot: Snapshot) -> list[int]:
        """The ids of the values in the interpreter's state at snapshot that depend on owned values."""
        if not self.borrowed_from:
            return []
        slots, stack = self._held_at(trace, snapshot)
        return [value.id for value in (*slots, *stack) if value.id in self.borrowed_from]

    @property
    def handed_with_reference(self) -> set[int]:
        """The ids of the values an exit's state holds with a reference of their own: the owned values, and the
        objects that depend on one (``pinned``)."""
        pinned = (value_id for value_id in self.borrowed_from if self.borrowed_kinds[value_id] in MAY_BE_OWNED)
        return set(self.defined) | set(pinned)

    def pinned(self, trace: Trace, snapshot: Snapshot) -> tuple[list[Value], set[int]]:
        """The objects written into the interpreter's state at snapshot that depend on an owned value (the state
        takes a reference of its own to each: the owned value may be released at that exit), and the ids of
        the owned values they depend on (released only once the state is written)."""
        if not self.borrowed_from:
            return [], set()
        slots, stack = self._held_at(trace, snapshot)
        pinned = [v for v in (*slots, *stack) if v.id in self.borrowed_from and v.kind in MAY_BE_OWNED]
        return pinned, {root for v in pinned for root in self.borrowed_from[v.id]}

    def state(self, trace: Trace, snapshot: Snapshot) -> Counter[int]:
        """How many times each owned value appears in the interpreter's state at snapshot."""
        known = self._states.get(id(snapshot))
        if known is None:
            known = Counter()
            if self.defined:
                slots, stack = self._held_at(trace, snapshot)
                known.update(value.id for value in (*slots, *stack) if value.id in self.defined)
            self._states[id(snapshot)] = known
        return known

    def slot_state(self, trace: Trace, snapshot: Snapshot) -> Counter[int]:
        """How many slots of the interpreter's state at snapshot hold each owned value."""
        known: Counter[int] = Counter()
        if self.defined:
            slots, _ = self._held_at(trace, snapshot)
            known.update(value.id for value in slots if value.id in self.defined)
        return known

    def live_at(self, position: int) -> list[Value]:
        """The owned values defined before position (or, at the entry, there) and still needed at or after it
        (at the entry: the hoisted guards)."""
        return [
            self.values[value_id]
            for value_id, defined in self.defined.items()
            if (defined < position or defined == position == ENTRY) and position <= self.last[value_id]
        ]

    def latch_references(self) -> list[tuple[Value, int]]:
        """At a looping root's back-edge: the values to take more references to (value, how many), so that
        each slot phi of an owned kind starts the next iteration with a reference of its own."""
        out = []
        for value_id, needed in self.carried.items():
            value = self.carried_values[value_id]
            have = 1 if value_id in self.defined and value_id not in self.kept else 0
            if needed > have:
                out.append((value, needed - have))
        return out
