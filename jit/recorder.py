"""The recorder: follows the interpreter through one iteration of a hot loop and writes it down as uops.

It is the interpreter's trace hook: before each tier-1 instruction runs, ``Recorder.__call__`` sees it with the
real operands on the frame, and keeps an abstract copy of the operand stack and slots made of trace values
(``jit.trace.Value``) in a ``jit.resume.FrameState``; a guard asks ``jit.resume`` for the snapshot of the state
the instruction started with (taken only then, shared with the previous one when nothing changed). Operations are specialized on the kinds seen (``jit.specialize``); branches become
guards in the direction taken. Recording ends when the loop's header comes round again (a root trace), or when
a side trace reaches a loop header it can jump into; it aborts, with a reason, on anything native code cannot
do. A root trace begins just after its ``LOOP_HEADER``; a side trace begins at the pc of the exit it hangs
from, with the state that exit wrote.

Inner loops are never inlined: reaching the header of an inner loop that has a compiled tree records one
``_CALL_TREE`` (the interpreter runs the tree meanwhile, so recording sees its result), and reaching one that
has none aborts, so the inner loop compiles first. Recording goes on from whichever exit the inner tree took
(its loop's end, a `break`, a `return`, a guard in the middle of an iteration, whose iteration the trace then
finishes). A side trace ends with an exit where it leaves its loop or returns.
"""

from __future__ import annotations

import dataclasses
import traceback
import types
from collections.abc import Callable
from typing import Any

from jit import inline, specialize, specialize_numpy, specialize_ufunc
from jit.aborts import Abort, Reason
from jit.arrays import ArraySpec
from jit.frontend import instructions as I
from jit.frontend.instructions import LoopInfo
from jit.frontend.operators import CompareOp, UnaryOp
from jit.interfaces import ExitView, RecordingHost, TreeView
from jit.kinds import Kind, kind_of
from jit.resume import FrameState, Snapshots, prewritten
from jit.trace import NO_CONST, ExitPoint, FrameSnapshot, Snapshot, Trace, TraceEnd, TraceKind, Value, WhenHot
from jit.uops import UOPS, Callee, GlobalBinding, GlobalName, ModuleAttr, SlotKind, TreeCall, TreeExit
from runtime.frame import UNBOUND, Frame

#: the kinds of owned references a slot may hold (codegen.ownership)
OWNED_SLOT_KINDS = frozenset({Kind.INT_OBJECT})
#: the kinds a slot may hold an owned reference of (codegen.ownership.MAY_BE_OWNED)
MAY_BE_OWNED = frozenset({Kind.INT_OBJECT, Kind.LIST, Kind.TUPLE})

_ELEMENT_TYPES = {
    float: Kind.FLOAT,
    bool: Kind.BOOL,
    list: Kind.LIST,
    tuple: Kind.TUPLE,
    str: Kind.STR,
    dict: Kind.DICT,
}


class Recorder:
    def __init__(
        self,
        host: RecordingHost,
        frame: Frame,
        loop: LoopInfo,
        start_pc: int,
        parent: ExitView | None = None,
    ) -> None:
        self.host = host  # the monitor, seen through jit.interfaces
        self.code = frame.code
        self.trace = Trace(TraceKind.SIDE if parent else TraceKind.ROOT, loop, start_pc)
        # the abstract frame (slot -> value, operand stack), and the snapshots taken of it (jit.resume)
        self.abstract = FrameState(start_pc)
        self.snapshots = Snapshots([self.abstract])
        self.virtual_ranges: dict[int, tuple[Value, Value, Value]] = {}
        # (dict value id, str key value id) whose entry the trace read as a number, None or missing, since the
        # last uop that could change a dict (a store over it then needs no check of what it replaces)
        self.plain_entries: set[tuple[int, int]] = set()
        self.bound_dicts: dict[int, Value] = {}  # `d.get` value id -> d
        # the items of an enumerate or a zip, about to be unpacked (value id -> the items): never built
        self.virtual_tuples: dict[int, tuple[Value, ...]] = {}
        self.wide_bounds: dict[int, int] = {}  # (jit.specialize) the largest magnitude of each i128 value
        self.owned_values: set[int] = set()  # the ids of the values uops declared `owns` made
        self.kept_alive: dict[int, Value] = {}  # boxed value id -> the reference the trace took to it (_NEW_REF)
        self.array_specs: dict[int, ArraySpec] = {}  # arrays guarded so far (value id -> spec)
        self.array_headers: dict[int, tuple[Value, list[Value], list[Value]]] = {}  # (specialize_numpy.header)
        self.virtual_shapes: dict[int, Value] = {}  # `a.shape` about to be subscripted (value id -> the array)
        # array subscripts being evaluated: `a[i]` of a multi-dimensional array, a key `(i, j)` (never built)
        self.array_indices: dict[int, _ArrayIndex] = {}
        self.resume_override: Snapshot | None = None  # where guards resume while an array subscript completes
        self.pending_tree: TreeView | None = None
        # inner loops whose tree left in the middle of an iteration: the trace records the rest of that
        # iteration, and its back-edge to the header (where the tree is called again) is allowed once
        self.finishing_inner: set[int] = set()
        self.inlined: list[inline.InlinedCall] = []  # the calls whose bodies are being recorded (jit.inline)
        self.site_snapshot: Any = None  # the state at the CALL being inlined (taken before its arguments go)
        # globals the function stores: read from the dict each time, not pinned by a guard; and the values this
        # trace stored last (until a tree call, which may store them too)
        self.globals = frame.function.globals
        self.stored_globals = _stored_globals(self.code)
        self.global_values: dict[str, Value] = {}
        # globals whose value in the dict the trace knows is an int, float or bool (it read or stored one):
        # storing over it needs no check that freeing the old value runs no Python code
        self.number_globals: set[str] = set()
        # globals a hoisted _GUARD_GLOBAL_NUMBER keeps a number while the trace runs (native code stores only
        # numbers, and checks them again after running signal handlers): every store over them is over a number
        self.numbers_throughout: set[str] = set()
        self.pc = start_pc
        self.frame: Frame | None = None  # the frame whose instruction is being recorded
        self.line = self.code.lines[start_pc]
        self.limit = host.options.max_trace_length
        self.depth = 0  # nesting depth of the trees this trace calls
        self.finished = False
        # a root trace: what the frame's slots held where it starts (the kind of a slot it assigns an int object
        # without reading it first becomes part of its entry type map: codegen.ownership)
        self.start_slots = list(frame.slots) if parent is None else []
        if parent is None:
            self.snapshots.begin(start_pc)
            self.emit("_CHECK_PERIODIC")
            self.trace.uops[-1].exit.when_hot = WhenHot.NEVER  # type: ignore[union-attr]
        else:
            self.trace.parent_exit = parent
            self.trace.known_kinds = dict(parent.known_kinds)
            self.trace.owned_entry_stack = frozenset(parent.owned_stack)
            for index, kind in enumerate(parent.stack_kinds):
                if index in parent.stack_consts:  # a constant where the parent left: still that constant
                    value = self.const(parent.stack_consts[index])
                else:
                    value = self.trace.new_value(kind)
                    self.trace.entry_stack[index] = value
                self.abstract.push(value)
            self.trace.start_stack = list(self.abstract.stack())
            self.snapshots.begin(start_pc)

    # --- the trace hook ----------------------------------------------------------------------------------
    def __call__(self, frame: Frame, pc: int) -> None:
        try:
            self.record(frame, pc)
        except Abort as exc:
            self.abort(exc, frame)
        except Exception as exc:  # a recorder bug must never break the user's program
            self.abort(_internal_error(exc), frame)

    def abort(self, abort: Abort, frame: Frame | None = None) -> None:
        if self.finished:
            return
        self.finished = True
        if frame is not None:
            frame.trace_hook = None
        self.host.recording_aborted(self, abort)

    def finish(self, frame: Frame) -> None:
        self.finished = True
        frame.trace_hook = None
        self.host.recording_finished(self, self.trace)

    def inline_call(self, frame: Frame, target: types.FunctionType, args: list[Value], n: int) -> Value:
        """Record the body of a call of target (the interpreter is at the caller's CALL, with target's
        arguments on the stack) into the trace; the call's result. The callee runs here, once (jit.inline)."""
        options = self.host.options
        name = target.__qualname__
        if len(self.inlined) >= options.max_inline_depth:
            why = f"calls nested deeper than max_inline_depth ({options.max_inline_depth})"
            raise Abort(Reason.NOT_INLINED, name=name, why=why)
        if any(call.function is target for call in self.inlined):
            raise Abort(Reason.NOT_INLINED, name=name, why="recursion")
        code = inline.callee_code(target, n)
        actual = list(frame.stack[len(frame.stack) - n :]) if n else []
        slots = inline.initial_slots(target, code, actual)
        site = self.inlined[0] if self.inlined else None
        callee_frame = FrameState(0)
        call = inline.InlinedCall(
            function=target,
            code=code,
            abstract=callee_frame,
            site=site.site if site else self.site_snapshot,
            site_pc=site.site_pc if site else self.pc,
            site_line=site.site_line if site else self.line,
            saved=(self.code, self.abstract, self.pc, self.line),
        )
        self.inlined.append(call)
        self.code, self.abstract = code, callee_frame
        try:
            for slot, value in enumerate(args):
                callee_frame.set(slot, value)
            for slot in range(n, target.__code__.co_argcount):
                callee_frame.set(slot, self.const(slots[slot]))  # a default (the guard below pins them)
            self.emit("_GUARD_CALLEE", operand=Callee(target, target.__code__, target.__defaults__))
            try:
                result = self.host.run_inlined(target, code, slots, _InlinedHook(self))
            except Abort:
                raise
            except Exception as exc:
                raise Abort(
                    Reason.NOT_INLINED, name=name, why=f"it raised {type(exc).__name__} while recorded"
                ) from None
        finally:
            self.inlined.pop()
            self.code, self.abstract, self.pc, self.line = call.saved
        if call.result is None:
            raise Abort(Reason.NOT_INLINED, name=name, why="it did not return")
        frame.stack[len(frame.stack) - n - 1] = inline.Returns(result)  # the caller's CALL gets the result
        return call.result

    def record(self, frame: Frame, pc: int) -> None:
        inside = self.trace.loop.contains(pc)
        if not inside and self.trace.kind is TraceKind.ROOT:  # the loop ended (condition false, break)
            raise Abort(Reason.LOOP_ENDED)
        self.line = self.code.lines[pc]
        self.snapshots.begin(pc)
        if not inside:
            self.pc = pc
            self.end_with_exit(frame, leaves_loop=True)  # a side trace that ends the loop (a `break`)
            return
        self.record_instruction(frame, pc)

    def record_instruction(self, frame: Frame, pc: int) -> None:
        """Record the instruction at pc of the code being recorded (the trace's, or an inlined callee's)."""
        if len(self.trace.uops) > self.limit:
            raise Abort(Reason.TOO_LONG, limit=self.limit)
        self.pc = pc
        self.frame = frame
        op = self.code.ops[pc]
        handler = _HANDLERS.get(op)
        if handler is None:
            raise Abort(Reason.NOT_COMPILED, instruction=I.OPS[op].name)
        handler(self, frame, self.code.args[pc])

    # --- building blocks -----------------------------------------------------------------------------------
    def emit(
        self,
        name: str,
        args: tuple[Value, ...] = (),
        *,
        kind: Kind | None = None,
        operand: Any = None,
        leaves_loop: bool = False,
        propagate: bool = False,
    ) -> Value:
        exit = None
        op = UOPS[name]
        pc, line = self.pc, self.line
        if self.inlined:  # (jit.inline) every exit of an inlined body makes the outermost call again
            if op.mutates:
                raise Abort(Reason.INLINED_MUTATES, name=self.inlined[-1].function.__qualname__)
            site = self.inlined[0]
            pc, line = site.site_pc, site.site_line
            if op.is_guard:
                exit = ExitPoint(site.site, line, propagate=propagate)
        else:
            pending = self.pending_subscript()
            if pending is not None and op.mutates and name != "_ARRAY_STORE":
                raise Abort(Reason.ARRAY_INDEX_MUTATES, name=name)
            if op.is_guard:
                snapshot = pending if pending is not None else self.snapshots.take()
                exit = ExitPoint(snapshot, line, leaves_loop=leaves_loop, propagate=propagate)
        if op.mutates or name == "_CALL_TREE":
            self.plain_entries.clear()
        out = self.trace.emit(name, args, kind=kind, operand=operand, pc=pc, line=line, exit=exit)
        if op.owns and out is not None:
            self.owned_values.add(out.id)
        return out  # type: ignore[return-value]

    def pending_subscript(self) -> Snapshot | None:
        """While an array subscript is being evaluated (a virtual `a[i]` or `(i, j)` on the stack), the state
        its first part started from: every guard until it completes resumes there (nothing visible has
        happened since: what came after is redone)."""
        if self.resume_override is not None:
            return self.resume_override
        if self.array_indices:
            for value in self.abstract.stack():
                index = self.array_indices.get(value.id)
                if index is not None:
                    return index.snapshot
        return None

    def const(self, value: Any, kind: Kind | None = None) -> Value:
        if kind is None:
            kind = Kind.UNBOUND if value is UNBOUND else kind_of(value)
        pc, line = (self.inlined[0].site_pc, self.inlined[0].site_line) if self.inlined else (self.pc, self.line)
        return self.trace.emit("_LOAD_CONST_INLINE", kind=kind, operand=value, pc=pc, line=line, const=value)  # type: ignore[return-value]

    def virtual_range(self, start: Value, stop: Value, step: Value) -> Value:
        value = self.trace.new_value(Kind.RANGE)
        self.virtual_ranges[value.id] = (start, stop, step)
        return value

    def push(self, value: Value) -> None:
        self.abstract.push(value)

    def pop(self, objects: bool = False, stored: bool = False) -> Value:
        """The value on top of the operand stack. An int past 64 bits (an int object or an i128) is narrowed to
        an int (a guard that it fits in 64 bits) unless the consumer takes `objects` (int arithmetic), or it is
        `stored` into a local and does not fit in 64 bits as recorded: then it is an int object there (owned:
        codegen.ownership), which a guard narrows again where it is next used as an int."""
        value = self.abstract.pop()
        if value.kind == Kind.RANGE:
            raise Abort(Reason.RANGE_USED)
        if value.kind in specialize.BEYOND_64_BITS and not objects:
            depth = len(self.abstract.stack())
            stack = self.frame.stack if self.frame is not None else []
            actual = stack[depth] if depth < len(stack) else None
            if stored and not self.inlined and not specialize.fits_int64(actual):
                return specialize.as_int_object(self, value)
            if value.is_const and not specialize.fits_int64(value.const):
                return self.const(value.const)  # (an object native code only moves, as any other constant)
            return specialize.narrow(self, value, actual, "this use of an int")
        if value.kind == Kind.ARRAY_INDEX:
            raise Abort(Reason.ARRAY_VIEW_USED)
        return value

    def read_slot(self, frame: Frame, slot: int) -> Value:
        value = self.abstract.get(slot)
        if value is not None:
            return value
        if self.inlined:  # an inlined callee's local not assigned yet
            return self.const(UNBOUND)
        kind = self.slot_kind(frame.slots[slot], slot)
        if kind == Kind.UNBOUND:
            raise Abort(Reason.UNBOUND_READ)
        if kind == Kind.RANGE:
            raise Abort(Reason.RANGE_IN_LOCAL)
        trace = self.trace
        if trace.kind is TraceKind.SIDE:
            known = trace.known_kinds.get(slot)
            if known is None:
                self.emit("_GUARD_SLOT_KIND", operand=SlotKind(slot, kind))
            elif known != kind:
                raise Abort(Reason.SLOT_KIND_CHANGED, slot=slot, kind=kind.short, known=known.short)
        value = trace.new_value(kind)
        trace.entry_slots[slot] = value
        self.abstract.set(slot, value)
        return value

    def enter_owned_slots(self) -> None:
        """At a root's end: every slot that carries an owned reference into the next iteration (a value a uop
        made, or one that came in through another slot that does: `a, b = b, []`) becomes part of the entry
        type map (an exit early in the next iteration gives the interpreter that value, which the back-edge
        keeps: codegen.ownership), with the kind it had where the trace started."""
        trace = self.trace
        owned = {v.id for v in self.abstract.slots().values() if self.is_owned(v) and not v.is_const}
        grown = True
        while grown:
            grown = False
            for slot in sorted(trace.written):
                end = self.abstract.get(slot)
                if end is None or end.id not in owned:
                    continue
                entry = trace.entry_slots.get(slot)
                if entry is None:
                    kind = self.slot_kind(self.start_slots[slot], slot)
                    if kind == Kind.RANGE:
                        raise Abort(Reason.RANGE_IN_LOCAL)
                    entry = trace.entry_slots[slot] = trace.new_value(kind)
                if entry.id not in owned:
                    owned.add(entry.id)
                    grown = True

    def slot_kind(self, actual: Any, slot: int) -> Kind:
        """The kind of a slot's value as the buffer tags it where the trace starts: an int past 64 bits is an
        int object the buffer owns (Kind.INT_OBJECT) in a root trace's entry type map, or where the parent
        exit left one; elsewhere an object native code only moves (Kind.OBJECT)."""
        kind = kind_of(actual)
        if type(actual) is int:
            trace = self.trace
            if trace.kind is TraceKind.ROOT:
                return Kind.INT_OBJECT if kind == Kind.OBJECT else kind
            if trace.known_kinds.get(slot) == Kind.INT_OBJECT:
                return Kind.INT_OBJECT
        return kind

    def write_slot(self, slot: int, value: Value) -> None:
        if value.kind == Kind.RANGE:
            raise Abort(Reason.RANGE_STORED)
        if value.kind == Kind.ARRAY_INDEX:
            raise Abort(Reason.ARRAY_VIEW_USED)
        trace = self.trace
        if self.is_owned(value) and trace.kind is TraceKind.ROOT and not self.inlined and slot not in trace.entry_slots:
            # a loop-carried owned reference must be in the entry type map (never assigned late, where an exit
            # would find the previous iteration's value: codegen.ownership keeps no such references)
            kind = self.slot_kind(self.start_slots[slot], slot)
            if kind == Kind.RANGE:
                raise Abort(Reason.RANGE_IN_LOCAL)
            trace.entry_slots[slot] = trace.new_value(kind)
        self.abstract.set(slot, value)
        if not self.inlined:  # (an inlined callee's locals live only in the trace)
            self.trace.written.add(slot)

    def guard_branch(self, condition: Value, truth: bool, alternative_pc: int) -> None:
        """Guard that condition (a bool value) stays as observed; alternative_pc is where the other
        direction would go."""
        if condition.is_const:
            return
        leaves = not self.trace.loop.contains(alternative_pc)
        self.emit("_GUARD_IS_TRUE_POP" if truth else "_GUARD_IS_FALSE_POP", (condition,), leaves_loop=leaves)

    # --- loop headers: closing, nesting ---------------------------------------------------------------------
    def close_at_header(self, frame: Frame) -> None:
        """The interpreter is back at the header of the trace's loop."""
        trace = self.trace
        if trace.kind is TraceKind.ROOT:
            self.enter_owned_slots()
        trace.end_snapshot = self.snapshots.take(empty_stack=True)
        if trace.kind is TraceKind.ROOT:
            stable = all(self.abstract.get(s).kind == v.kind for s, v in trace.entry_slots.items())
            if stable:
                trace.end = TraceEnd.LOOP
                self.emit("_JUMP_TO_TOP")
            else:
                self.end_with_link(frame)
        else:
            self.end_with_link(frame)
        self.finish(frame)

    def end_with_exit(self, frame: Frame, *, leaves_loop: bool = False, when_hot: WhenHot = WhenHot.NEVER) -> None:
        """End the trace by leaving to the interpreter at the current pc, with the operand stack as it is (a
        side trace leaving its loop, a `return`): for the tree, one more way out, which trees calling it
        follow (``record_tree_result``)."""
        trace = self.trace
        trace.end = TraceEnd.EXIT
        trace.end_snapshot = self.snapshots.take()
        self.emit("_EXIT_TRACE", operand=self.pc, leaves_loop=leaves_loop)
        trace.uops[-1].exit.when_hot = when_hot  # type: ignore[union-attr]
        self.finish(frame)

    def end_with_link(self, frame: Frame) -> None:
        """End at a loop header by jumping into a tree whose entry kinds match, else by exiting."""
        trace = self.trace
        owned = self.owned_slots()
        for tree in self.host.trees_at(trace.loop.index):
            # (an owned reference goes into a slot of the tree's entry type map, whose traces know its kind)
            takes = all(slot in tree.entry_kinds for slot in owned)
            if takes and self.matches_entry(frame, tree.entry_kinds):
                for slot in tree.entry_kinds:
                    self.read_slot(frame, slot)  # the jump reads the tree's live-in slots
                trace.end = TraceEnd.TREE
                trace.end_tree = tree
                self.emit("_JUMP_TO_TREE", operand=tree)
                return
        trace.end = TraceEnd.EXIT
        self.emit("_EXIT_TRACE", operand=self.pc)

    def is_owned(self, value: Value) -> bool:
        """Does value hold a reference of the trace's own (an int object, a list the trace built)?"""
        return value.kind in OWNED_SLOT_KINDS or value.id in self.owned_values

    def owned_slots(self) -> set[int]:
        """The slots that may hold an owned reference here: assigned one, or (a side trace) holding where it
        started what the parent's exit may have handed over (an int object, a list or a tuple), or holding the
        value they started with that a root's back-edge may make owned (codegen.ownership)."""
        trace = self.trace
        out = {slot for slot, kind in trace.known_kinds.items() if kind in MAY_BE_OWNED}
        for slot, value in self.abstract.slots().items():
            if self.is_owned(value) or (trace.entry_slots.get(slot) is value and value.kind in MAY_BE_OWNED):
                out.add(slot)
            else:
                out.discard(slot)
        return out

    def matches_entry(self, frame: Frame, entry_kinds: dict[int, Kind]) -> bool:
        for slot, kind in entry_kinds.items():
            value = self.abstract.get(slot)
            have = value.kind if value is not None else self.slot_kind(frame.slots[slot], slot)
            if have != kind:
                return False
        return True

    def inner_header(self, frame: Frame, loop: LoopInfo) -> None:
        """The interpreter reached the header of a loop nested in the trace's loop."""
        if not self.host.options.nesting:
            raise _EndHere()
        tree = self.host.tree_for(loop.index, frame)
        if tree is None:
            if self.host.compiling(loop.index):
                # its tree will be there in a moment: record this loop then, calling it (not inlining it)
                raise Abort(Reason.INNER_COMPILING, line=loop.line)
            # recorded on: if the inner loop runs an iteration, its back-edge aborts the recording
            return
        if tree.depth + 1 > self.host.options.max_nesting_depth:
            raise Abort(Reason.TOO_DEEP, limit=self.host.options.max_nesting_depth)
        if any(value.kind in specialize.BEYOND_64_BITS for value in self.abstract.stack()):
            raise Abort(Reason.INT_OBJECT_ACROSS_LOOP)  # (native code owns it: the inner tree could not)
        if any(kind in OWNED_SLOT_KINDS for kind in tree.entry_kinds.values()):
            raise Abort(Reason.INT_OBJECT_SLOT_AT_INNER_LOOP)
        if self.owned_slots() & tree.slots_written():  # (the call hands them over and takes them back)
            raise Abort(Reason.OWNED_SLOT_WRITTEN_BY_INNER_LOOP)
        for slot in tree.entry_kinds:
            self.read_slot(frame, slot)
        self.pending_tree = tree

    def at_loop_header(self, frame: Frame, loop: int, pc: int) -> int:
        """The interpreter's loop-header hook while recording: run a pending inner tree, record the call."""
        tree = self.pending_tree
        if tree is None or tree.loop.index != loop:
            return pc + 1
        self.pending_tree = None
        self.emit("_CALL_TREE", operand=TreeCall(tree, self.snapshots.take()))
        self.global_values.clear()  # (the inner loop may store the globals this trace stored)
        self.number_globals.clear()
        exit, resume_pc = self.host.run_tree_while_recording(frame, tree)
        try:
            self.record_tree_result(frame, tree, exit, pc)
        except Abort as exc:
            self.abort(exc, frame)
        except Exception as exc:
            self.abort(_internal_error(exc), frame)
        return resume_pc

    def record_tree_result(self, frame: Frame, tree: TreeView, exit: ExitView, pc: int) -> None:
        """After an inner tree ran: guard that it left through the exit it took (its loop's end, a `break`, a
        `return`, a guard in the middle of an iteration), read back what it wrote, and go on recording from
        there. At run time, the tree leaving its loop another way is an exit of this trace (which may grow a
        side trace); any other exit is handed to the interpreter as the inner tree left it."""
        if not exit.follows_from(tree):
            raise Abort(Reason.INNER_EXIT)
        self.depth = max(self.depth, tree.depth)
        trace = self.trace
        self.pc = pc
        self.line = self.code.lines[pc]
        self.emit("_GUARD_TREE_EXIT", operand=TreeExit(tree, exit.id), propagate=True)
        guard = trace.uops[-1]
        alternatives = []
        snapshot = self.snapshots.take()
        for other in tree.loop_exits():
            if other.id == exit.id:
                continue
            point = ExitPoint(snapshot, self.line)
            point.prewritten = prewritten(
                trace, snapshot, other.id, other.pc, other.stack_kinds, tree.writes_at(other), other.owned_stack
            )
            alternatives.append(point)
        guard.alternatives = tuple(alternatives)
        for slot, (kind, certain) in tree.writes_at(exit).items():
            actual = kind_of(frame.slots[slot])
            if kind in OWNED_SLOT_KINDS:
                raise Abort(Reason.INT_OBJECT_SLOT_AT_INNER_LOOP)
            if not certain:
                self.emit("_GUARD_SLOT_KIND", operand=SlotKind(slot, actual), propagate=True)
            elif actual != kind:
                raise Abort(Reason.INNER_WROTE_KIND)
            value = trace.emit("_RELOAD_SLOT", kind=actual, operand=slot, pc=pc, line=self.line)
            self.abstract.set(slot, value)  # type: ignore[arg-type]
            trace.written.add(slot)
        stack = []
        for index, kind in enumerate(exit.stack_kinds):
            if index in exit.stack_consts:  # a constant the inner trace did not write (a builtin to call, ...)
                stack.append(self.const(exit.stack_consts[index]))
            else:
                stack.append(trace.emit("_RELOAD_STACK", kind=kind, operand=index, pc=pc, line=self.line))
        self.abstract.replace_stack(stack)  # type: ignore[arg-type]
        own = trace.loop.index
        for loop in self.code.loops:  # the inner loops (the tree's, or deeper) whose iteration the exit left
            if loop.index != own and loop.contains(exit.pc) and trace.loop.contains(loop.header_pc):
                self.finishing_inner.add(loop.index)


def _internal_error(exc: Exception) -> Abort:
    detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
    return Abort(Reason.RECORDER_ERROR, detail=detail)


class _InlinedHook:
    """The trace hook of an inlined callee's frame: its instructions go to the recorder of the trace. An
    abort raises out of the callee's dry run (the instruction does not run) and aborts the whole recording."""

    __slots__ = ("recorder",)

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    def __call__(self, frame: Frame, pc: int) -> None:
        self.recorder.record_instruction(frame, pc)

    def abort(self, abort: Abort) -> None:
        pass  # (the exception that stopped the dry run reaches Recorder.inline_call, which decides)


class _EndHere(Exception):
    """Nesting is off: the outer trace ends at the inner loop's header and leaves to the interpreter."""


# --- instruction handlers ------------------------------------------------------------------------------------

Handler = Callable[[Recorder, Frame, Any], None]
_HANDLERS: dict[int, Handler] = {}


def _handles(*ops: int) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for op in ops:
            _HANDLERS[op] = fn
        return fn

    return register


@_handles(I.NOP)
def _nop(r: Recorder, frame: Frame, arg: Any) -> None:
    pass


@_handles(I.LOAD_FAST)
def _load_fast(r: Recorder, frame: Frame, slot: int) -> None:
    r.push(r.read_slot(frame, slot))


@_handles(I.STORE_FAST)
def _store_fast(r: Recorder, frame: Frame, slot: int) -> None:
    r.write_slot(slot, r.pop(stored=True))


@_handles(I.DELETE_FAST)
def _delete_fast(r: Recorder, frame: Frame, slot: int) -> None:
    r.read_slot(frame, slot)
    r.write_slot(slot, r.const(UNBOUND))


@_handles(I.CLEAR_SLOTS)
def _clear_slots(r: Recorder, frame: Frame, arg: tuple[int, int]) -> None:
    first, count = arg
    for slot in range(first, first + count):
        r.write_slot(slot, r.const(UNBOUND))


@_handles(I.LOAD_CONST)
def _load_const(r: Recorder, frame: Frame, value: Any) -> None:
    if type(value) is int and not specialize.fits_int64(value):  # (an operand of int arithmetic, or stored)
        r.push(r.const(value, Kind.INT_OBJECT))
        return
    r.push(r.const(value))


@_handles(I.POP_TOP)
def _pop_top(r: Recorder, frame: Frame, arg: Any) -> None:
    r.pop()


@_handles(I.COPY)
def _copy(r: Recorder, frame: Frame, n: int) -> None:
    r.push(r.abstract.peek(n))


@_handles(I.SWAP)
def _swap(r: Recorder, frame: Frame, n: int) -> None:
    r.abstract.swap(n)


def _stored_globals(code: Any) -> frozenset[str]:
    """The globals any instruction of the function stores or deletes. Not only its loop's: a loop's trees run
    inside the trees of the loops around it, whose stores would fail an identity guard hoisted to the inner
    tree's entry at every call (and invalidate it), and a name stored before the loop (a table built per
    call) would fail it at every call."""
    return frozenset(arg for op, arg in zip(code.ops, code.args) if op in (I.STORE_GLOBAL, I.DELETE_GLOBAL))


@_handles(I.STORE_GLOBAL)
def _store_global(r: Recorder, frame: Frame, name: str) -> None:
    value = r.pop()
    if type(frame.function.globals) is not dict:
        raise Abort(Reason.GLOBALS_NOT_DICT)
    if value.kind not in (Kind.INT, Kind.FLOAT, Kind.BOOL):
        raise Abort(Reason.GLOBAL_STORE_KIND, kind=value.kind.short, name=name)
    _number_throughout(r, frame, name)
    over_number = name in r.number_globals or name in r.numbers_throughout
    r.emit("_STORE_GLOBAL", (value,), operand=GlobalName(name, over_number=over_number))
    r.global_values[name] = value
    r.number_globals.add(name)


@_handles(I.DELETE_GLOBAL)
def _delete_global(r: Recorder, frame: Frame, name: str) -> None:
    raise Abort(Reason.GLOBAL_DELETED, name=name)


def _number_throughout(r: Recorder, frame: Frame, name: str) -> None:
    """At the trace's first use of a global it stores: if it is a number, guard (hoisted to the entry) that it
    is one there (so the first use sees what the trace was entered with, unless an inner tree called before
    stored one: then the guard only leaves more often than needed)."""
    if name in r.numbers_throughout or r.inlined or frame.function.globals is not r.globals:
        return
    if type(frame.function.globals.get(name)) in (int, float, bool):
        r.emit("_GUARD_GLOBAL_NUMBER", operand=GlobalName(name))
        r.numbers_throughout.add(name)


def _load_stored_global(r: Recorder, frame: Frame, name: str) -> None:
    """A global the loop itself stores: the value this trace stored last, else read from the dict."""
    known = r.global_values.get(name)
    if known is not None:
        r.push(known)
        return
    function = frame.function
    if type(function.globals) is not dict:
        raise Abort(Reason.GLOBALS_NOT_DICT)
    _number_throughout(r, frame, name)
    value = function.globals.get(name, NO_CONST)
    if value is NO_CONST or type(value) not in (int, float, bool, list, tuple):
        # a builtin until the function stores the name, a function, a module...: that very object, checked at
        # every read (the store may come before the next one)
        if value is NO_CONST:
            value = function.builtins.get(name, NO_CONST)
        if value is NO_CONST:
            raise Abort(Reason.GLOBAL_UNDEFINED, name=name)
        r.emit("_CHECK_GLOBAL", operand=GlobalBinding(name, value))
        r.push(r.const(value))
        return
    if type(value) is int and kind_of(value) == Kind.OBJECT:
        raise Abort(Reason.GLOBAL_BIG_INT, name=name)
    boxed = r.emit("_LOAD_GLOBAL_VALUE", operand=GlobalName(name))
    loaded = _unbox(r, boxed, value)
    r.global_values[name] = loaded  # (nothing but a store or a tree call changes it)
    r.push(loaded)
    if type(value) in (int, float, bool):
        r.number_globals.add(name)


@_handles(I.LOAD_GLOBAL)
def _load_global(r: Recorder, frame: Frame, name: str) -> None:
    function = frame.function
    if name in r.stored_globals and function.globals is r.globals:  # (an inlined callee may share them)
        _load_stored_global(r, frame, name)
        return
    if type(function.globals) is not dict:
        raise Abort(Reason.GLOBALS_NOT_DICT)
    value = function.globals.get(name, NO_CONST)
    if value is NO_CONST:
        value = function.builtins.get(name, NO_CONST)
    if value is NO_CONST:
        raise Abort(Reason.GLOBAL_UNDEFINED, name=name)
    if r.inlined:  # an inlined callee's globals (maybe another module's)
        binding = GlobalBinding(name, value, function.globals, function.builtins)
    else:
        binding = GlobalBinding(name, value)
    r.emit("_GUARD_GLOBAL", operand=binding)
    r.push(r.const(value))


@_handles(I.LOAD_ATTR)
def _load_attr(r: Recorder, frame: Frame, name: str) -> None:
    obj = r.pop()
    if obj.kind == Kind.LIST and name == "append" and type(frame.stack[-1]) is list:
        r.push(r.emit("_BIND_APPEND", (obj,)))
        return
    if obj.kind == Kind.DICT and name == "get":
        bound = r.emit("_BIND_DICT_GET", (obj,))
        r.bound_dicts[bound.id] = obj
        r.push(bound)
        return
    if obj.kind == Kind.ARRAY:
        _array_attribute(r, frame, obj, name)
        return
    module = obj.const if obj.is_const else None
    if type(module) is not types.ModuleType:
        raise Abort(Reason.ATTRIBUTE, name=name, kind=obj.kind.short)
    namespace = module.__dict__
    if name not in namespace:
        raise Abort(Reason.MODULE_ATTRIBUTE, name=name, module=module.__name__)
    if namespace is r.globals and name in r.stored_globals:
        raise Abort(Reason.MODULE_ATTRIBUTE_STORED, name=name, module=module.__name__)
    value = namespace[name]
    r.emit("_GUARD_MODULE_ATTR", operand=ModuleAttr(module, name, value))
    r.push(r.const(value))


@_handles(I.BINARY_OP)
def _binary_op(r: Recorder, frame: Frame, op: Any) -> None:
    b = r.pop(objects=True)
    a = r.pop(objects=True)
    if a.kind.is_numpy_scalar or b.kind.is_numpy_scalar:
        r.push(specialize_numpy.binary(r, op, a, b, frame.stack[-2], frame.stack[-1]))
        return
    r.push(specialize.binary(r, op, a, b, frame.stack[-2], frame.stack[-1]))


@_handles(I.COMPARE_OP)
def _compare_op(r: Recorder, frame: Frame, op: Any) -> None:
    b = r.pop()
    a = r.pop()
    if (a.kind.is_numpy_scalar or b.kind.is_numpy_scalar) and op not in (CompareOp.IS, CompareOp.IS_NOT):
        r.push(specialize_numpy.compare(r, op, a, b))
        return
    r.push(specialize.compare(r, op, a, b))


@_handles(I.UNARY_OP)
def _unary_op(r: Recorder, frame: Frame, op: Any) -> None:
    v = r.pop()
    if v.kind.is_numpy_scalar and op != UnaryOp.NOT:
        r.push(specialize_numpy.unary(r, op, v, frame.stack[-1]))
        return
    r.push(specialize.unary(r, op, v, frame.stack[-1]))


@_handles(I.POP_JUMP_IF_FALSE, I.POP_JUMP_IF_TRUE)
def _pop_jump_if(r: Recorder, frame: Frame, target: int) -> None:
    condition = specialize.truth(r, r.pop())
    truth = bool(frame.stack[-1])
    jump_when = r.code.ops[r.pc] == I.POP_JUMP_IF_TRUE
    jumps = truth == jump_when
    r.guard_branch(condition, truth, r.pc + 1 if jumps else target)


@_handles(I.JUMP_IF_FALSE_OR_POP, I.JUMP_IF_TRUE_OR_POP)
def _jump_if_or_pop(r: Recorder, frame: Frame, target: int) -> None:
    value = r.abstract.peek()
    condition = specialize.truth(r, value)
    truth = bool(frame.stack[-1])
    jump_when = r.code.ops[r.pc] == I.JUMP_IF_TRUE_OR_POP
    jumps = truth == jump_when
    r.guard_branch(condition, truth, r.pc + 1 if jumps else target)
    if not jumps:
        r.pop()


@_handles(I.JUMP)
def _jump(r: Recorder, frame: Frame, target: int) -> None:
    pass


@_handles(I.JUMP_BACKWARD)
def _jump_backward(r: Recorder, frame: Frame, target: int) -> None:
    loop = r.code.loops[r.code.args[target]]
    if loop.index != r.trace.loop.index:
        if loop.index in r.finishing_inner:  # the end of an iteration its tree left midway
            r.finishing_inner.discard(loop.index)
            return
        raise Abort(Reason.INNER_NOT_COMPILED, line=loop.line)


@_handles(I.LOOP_HEADER)
def _loop_header(r: Recorder, frame: Frame, index: int) -> None:
    if index == r.trace.loop.index:
        r.close_at_header(frame)
        return
    try:
        r.inner_header(frame, r.code.loops[index])
    except _EndHere:
        r.trace.end = TraceEnd.EXIT
        r.trace.end_snapshot = r.snapshots.take(empty_stack=True)
        r.emit("_EXIT_TRACE", operand=r.pc)
        r.trace.uops[-1].exit.when_hot = WhenHot.NEVER  # type: ignore[union-attr]  # the inner loop's tree takes over
        r.finish(frame)


@_handles(I.FOR_RANGE)
def _for_range(r: Recorder, frame: Frame, arg: tuple[int, int]) -> None:
    base, _exit_pc = arg
    step_slot = r.read_slot(frame, base + 2)
    if step_slot.kind == Kind.NONE:
        raise Abort(Reason.RANGE_REBOUND)
    cur, stop = r.read_slot(frame, base), r.read_slot(frame, base + 1)
    for v in (cur, stop, step_slot):
        if v.kind != Kind.INT:
            raise Abort(Reason.RANGE_BEYOND_64_BITS)
    actual_cur, actual_stop, actual_step = frame.slots[base], frame.slots[base + 1], frame.slots[base + 2]
    more = actual_cur < actual_stop if actual_step > 0 else actual_cur > actual_stop
    own = r.trace.loop.header_pc == r.pc - 1
    if more:
        specialize.observe("the range's next value", lambda: actual_cur + actual_step, Kind.INT)
        r.emit("_GUARD_NOT_EXHAUSTED_RANGE", (cur, stop, step_slot), leaves_loop=own)
        following = r.emit("_ITER_NEXT_RANGE", (cur, step_slot))
        r.push(cur)
        r.write_slot(base, following)
    else:
        if own:
            raise Abort(Reason.LOOP_ENDED)
        r.emit("_GUARD_EXHAUSTED_RANGE", (cur, stop, step_slot))
        for slot in range(base, base + 4):
            r.write_slot(slot, r.const(UNBOUND))


@_handles(I.RANGE_SETUP)
def _range_setup(r: Recorder, frame: Frame, base: int) -> None:
    value = r.abstract.pop()
    parts = r.virtual_ranges.get(value.id)
    if parts is None:
        raise Abort(Reason.RANGE_ELSEWHERE)
    for offset, part in enumerate(parts):
        r.write_slot(base + offset, part)
    r.write_slot(base + 3, r.const(None))


@_handles(I.FOR_ITER)
def _for_iter(r: Recorder, frame: Frame, arg: tuple[int, int]) -> None:
    base, _exit_pc = arg
    iterator = r.read_slot(frame, base + 2)
    if iterator.kind != Kind.NONE:
        if type(frame.slots[base + 2]) in (enumerate, zip):
            _for_iter_combined(r, iterator, frame.slots[base + 2])
            return
        if type(frame.slots[base + 2]) in _BUILTIN_ITERATORS:
            _for_iter_builtin(r, iterator, frame.slots[base + 2])
            return
        raise Abort(Reason.FOR_OVER, what=type(frame.slots[base + 2]).__name__)
    sequence, index = r.read_slot(frame, base), r.read_slot(frame, base + 1)
    if sequence.kind == Kind.ARRAY and index.kind == Kind.INT:
        _for_iter_array(r, frame, base, sequence, index)
        return
    if sequence.kind not in (Kind.LIST, Kind.TUPLE) or index.kind != Kind.INT:
        raise Abort(Reason.FOR_OVER, what=sequence.kind.short)
    suffix = "LIST" if sequence.kind == Kind.LIST else "TUPLE"
    actual_sequence, actual_index = frame.slots[base], frame.slots[base + 1]
    own = r.trace.loop.header_pc == r.pc - 1
    if actual_index >= len(actual_sequence):
        if own:
            raise Abort(Reason.LOOP_ENDED)
        r.emit(f"_GUARD_EXHAUSTED_{suffix}", (sequence, index))
        for slot in range(base, base + 3):
            r.write_slot(slot, r.const(UNBOUND))
        return
    r.emit(f"_GUARD_NOT_EXHAUSTED_{suffix}", (sequence, index), leaves_loop=own)
    boxed = r.emit(f"_ITER_NEXT_{suffix}", (sequence, index))
    value = _unbox(r, boxed, actual_sequence[actual_index])
    r.write_slot(base + 1, r.emit("_ITER_INCREMENT", (index,)))
    r.push(value)


_SEQUENCE_ITERATORS = {type(iter([])): Kind.LIST, type(iter(())): Kind.TUPLE}
_MAX_ZIPPED = 4


def _for_iter_combined(r: Recorder, iterator: Value, actual: enumerate | zip) -> None:
    """`for i, x in enumerate(seq)` and `for x, y in zip(xs, ys)` over lists and tuples. Native code advances
    the iterator objects themselves (the enumerate's count, each list or tuple iterator's index), so whoever else
    holds them finds them where CPython leaves them; every guard comes before the first store, so an exit leaves
    them as they were (the interpreter then runs `next` itself). The tuple of items is never built: the next
    instruction must unpack it."""
    reduced = actual.__reduce__()
    numbered = type(actual) is enumerate
    inner = [reduced[1][0]] if numbered else list(reduced[1])
    kinds = [_SEQUENCE_ITERATORS.get(type(it)) for it in inner]
    if None in kinds:
        raise Abort(Reason.FOR_OVER, what=f"{type(actual).__name__} of other than list or tuple iterators")
    states = [it.__reduce__() for it in inner]
    if any(len(state) < 3 for state in states) or (numbered and reduced[1][1] >= 2**63 - 1):
        raise Abort(Reason.FOR_OVER, what=f"{type(actual).__name__} past its end or its ssize_t count")
    if len({id(it) for it in inner}) < len(inner) or len(inner) > _MAX_ZIPPED:
        raise Abort(Reason.FOR_OVER, what=f"zip of the same iterator twice, or of more than {_MAX_ZIPPED}")
    width = 2 if numbered else len(inner)
    following = r.pc + 1
    if not inner or r.code.ops[following] != I.UNPACK_SEQUENCE or r.code.args[following] != width:
        raise Abort(Reason.FOR_OVER, what=f"{type(actual).__name__} whose items are not unpacked into {width} names")
    own = r.trace.loop.header_pc == r.pc - 1
    if any(state[2] >= len(state[1][0]) for state in states):
        if own:
            raise Abort(Reason.LOOP_ENDED)
        raise Abort(Reason.FOR_OVER, what=f"{type(actual).__name__} ending within the trace")
    if numbered:
        r.emit("_GUARD_ENUMERATE", (iterator,))
        iterators = [r.emit("_ENUMERATE_ITERATOR", (iterator,))]
    else:
        r.emit("_GUARD_ZIP", (iterator,), operand=len(inner))
        iterators = [r.emit("_ZIP_ITERATOR", (iterator,), operand=k) for k in range(len(inner))]
    moves, items = [], []
    for it, kind, state in zip(iterators, kinds, states):
        r.emit("_GUARD_SEQUENCE_ITERATOR", (it,), operand=kind)
        sequence = r.emit("_SEQUENCE_ITERATOR_SEQUENCE", (it,), kind=kind)
        position = r.emit("_LOAD_ITERATOR_POSITION", (it,))
        r.emit(f"_GUARD_NOT_EXHAUSTED_{kind.name}", (sequence, position), leaves_loop=own)
        (actual_sequence,), actual_position = state[1], state[2]
        boxed = r.emit(f"_ITER_NEXT_{kind.name}", (sequence, position))
        items.append(_unbox(r, boxed, actual_sequence[actual_position]))
        moves.append((it, r.emit("_ITER_INCREMENT", (position,))))
    if numbered:
        count = r.emit("_LOAD_ENUMERATE_COUNT", (iterator,))
        following_count = r.emit("_BINARY_OP_ADD_INT", (count, r.const(1)))  # (leaves where CPython's count grows)
        items.insert(0, count)
    for it, position in moves:  # (no guard from here on)
        r.emit("_STORE_ITERATOR_POSITION", (it, position))
    if numbered:
        r.emit("_STORE_ENUMERATE_COUNT", (iterator, following_count))
    unpacked = r.trace.new_value(Kind.TUPLE)
    r.virtual_tuples[unpacked.id] = tuple(items)
    r.push(unpacked)


_DICT_ITEMS_ITERATOR = type(iter({}.items()))
_STR_ITERATORS = frozenset({type(iter("")), type(iter("é"))})
_BUILTIN_ITERATORS = _STR_ITERATORS | {type(iter({})), type(iter({}.values())), _DICT_ITEMS_ITERATOR, type(iter(set()))}


def _for_iter_builtin(r: Recorder, iterator: Value, actual: Any) -> None:
    """`for c in s` (a str of characters below U+0100), `for k in d`, `for v in d.values()`, `for k, v in
    d.items()` (unpacked), `for x in a_set`: the next item through the iterator's own tp_iternext. From there
    on the iterator has moved: every guard until the item is unpacked resumes after FOR_ITER, with the item on
    the stack (handed over), and grows no side trace (which could not take that reference over)."""
    reduced = actual.__reduce__()  # (read without moving it: iter(s) and a position, or a list of what is left)
    if type(actual) in _STR_ITERATORS:
        text, position = (reduced[1][0], reduced[2]) if len(reduced) > 2 else ("", 0)
        if any(ord(c) > 0xFF for c in text):
            raise Abort(Reason.FOR_OVER, what="str with characters past U+00FF (each one a new object)")
        left = text[position : position + 1]
    else:
        left = reduced[1][0]
    pairs = type(actual) is _DICT_ITEMS_ITERATOR
    following = r.pc + 1
    if pairs and (r.code.ops[following] != I.UNPACK_SEQUENCE or r.code.args[following] != 2):
        raise Abort(Reason.FOR_OVER, what="dict items not unpacked into two names")
    own = r.trace.loop.header_pc == r.pc - 1
    if not left:
        if own:
            raise Abort(Reason.LOOP_ENDED)
        raise Abort(Reason.FOR_OVER, what=f"{type(actual).__name__} ending within the trace")
    r.emit("_GUARD_BUILTIN_ITERATOR", (iterator,), operand=type(actual))
    kind = Kind.TUPLE if pairs else Kind.OBJECT
    item = r.emit("_ITER_NEXT_BUILTIN", (iterator,), operand=type(actual), kind=kind, leaves_loop=own)
    r.push(item)
    after = Snapshot([FrameSnapshot(following, dict(r.abstract.slots()), list(r.abstract.stack()))])
    first = len(r.trace.uops)
    r.resume_override = after
    try:
        if pairs:
            items = tuple(
                _unbox(r, r.emit("_BINARY_SUBSCR_TUPLE_INT", (item, r.const(k))), part)
                for k, part in enumerate(left[0])
            )
        else:
            unboxed = _unbox(r, item, left[0])
    finally:
        r.resume_override = None
    for uop in r.trace.uops[first:]:
        if uop.exit is not None:
            uop.exit.when_hot = WhenHot.NEVER
    r.abstract.pop()
    if pairs:
        unpacked = r.trace.new_value(Kind.TUPLE)
        r.virtual_tuples[unpacked.id] = items
        r.push(unpacked)
    else:
        r.push(unboxed)


def _for_iter_array(r: Recorder, frame: Frame, base: int, array: Value, index: Value) -> None:
    """`for x in a` over a 1-D array: a[0], a[1], ... (its iterator indexes it) until its length."""
    actual_array, actual_index = frame.slots[base], frame.slots[base + 1]
    spec = specialize_numpy.guarded_spec(r, array, actual_array)
    if spec.ndim != 1:
        raise Abort(Reason.FOR_OVER, what=f"{spec.ndim}-D array")
    length = specialize_numpy.header(r, array, spec)[1][0]
    more = r.emit("_COMPARE_OP_INT", (index, length), operand=CompareOp.LT)
    own = r.trace.loop.header_pc == r.pc - 1
    if actual_index >= len(actual_array):
        if own:
            raise Abort(Reason.LOOP_ENDED)
        r.emit("_GUARD_IS_FALSE_POP", (more,))
        for slot in range(base, base + 3):
            r.write_slot(slot, r.const(UNBOUND))
        return
    r.emit("_GUARD_IS_TRUE_POP", (more,), leaves_loop=own)
    value = specialize_numpy.load(r, array, [index], actual_array, [actual_index])
    r.write_slot(base + 1, r.emit("_ITER_INCREMENT", (index,)))
    r.push(value)


@_handles(I.GET_ITER)
def _get_iter(r: Recorder, frame: Frame, base: int) -> None:
    iterable = r.pop()
    if iterable.kind not in (Kind.LIST, Kind.TUPLE, Kind.ARRAY):
        raise Abort(Reason.FOR_OVER, what=type(frame.stack[-1]).__name__)
    r.write_slot(base, iterable)
    r.write_slot(base + 1, r.const(0))
    r.write_slot(base + 2, r.const(None))


def _unbox(r: Recorder, boxed: Value, item: Any) -> Value:
    """Guard a boxed element's type as observed and give its native value."""
    t = type(item)
    if item is None:
        r.emit("_GUARD_TYPE", (boxed,), operand=Kind.NONE, kind=Kind.OBJECT)
        return r.const(None)
    kind = kind_of(item) if t is int else _ELEMENT_TYPES.get(t)
    if kind is None:
        raise Abort(Reason.ELEMENT_TYPE, type=t.__name__)
    if kind == Kind.OBJECT:
        raise Abort(Reason.ELEMENT_BIG_INT)
    checked = r.emit("_GUARD_TYPE", (boxed,), operand=kind, kind=kind if kind.is_pointer else Kind.OBJECT)
    if kind.is_pointer:
        return checked
    value = r.emit({Kind.INT: "_UNBOX_INT", Kind.FLOAT: "_UNBOX_FLOAT", Kind.BOOL: "_UNBOX_BOOL"}[kind], (checked,))
    value.boxed = checked
    return value


@_handles(I.BINARY_SUBSCR)
def _binary_subscr(r: Recorder, frame: Frame, arg: Any) -> None:
    if r.abstract.peek(2).kind == Kind.DICT:
        _dict_subscr(r, frame)
        return
    if r.abstract.peek(2).id in r.virtual_shapes:
        _shape_subscr(r)
        return
    if Kind.ARRAY_INDEX in (r.abstract.peek(1).kind, r.abstract.peek(2).kind) or r.abstract.peek(2).kind == Kind.ARRAY:
        _array_subscr(r, frame)
        return
    index = specialize.as_int(r, r.pop())
    container = r.pop()
    if container.kind not in (Kind.LIST, Kind.TUPLE) or index.kind != Kind.INT:
        raise Abort(Reason.SUBSCRIPT, container=container.kind.short, index=index.kind.short)
    actual_container, actual_index = frame.stack[-2], frame.stack[-1]
    try:
        item = actual_container[actual_index]
    except IndexError:
        raise Abort(Reason.INDEX_OUT_OF_RANGE) from None
    name = "_BINARY_SUBSCR_LIST_INT" if container.kind == Kind.LIST else "_BINARY_SUBSCR_TUPLE_INT"
    boxed = r.emit(name, (container, index))
    r.push(_unbox(r, boxed, item))


def _dict_subscr(r: Recorder, frame: Frame) -> None:
    """d[key] with a str key: the lookup must find it (a missing key leaves, and the interpreter raises)."""
    key = r.pop()
    mapping = r.pop()
    if key.kind != Kind.STR:
        raise Abort(Reason.SUBSCRIPT, container="dict", index=key.kind.short)
    actual_mapping, actual_key = frame.stack[-2], frame.stack[-1]
    if actual_key not in actual_mapping:
        raise Abort(Reason.INDEX_OUT_OF_RANGE)
    found = r.emit("_DICT_LOOKUP_STR", (mapping, key))
    r.emit("_GUARD_FOUND", (found,))
    value = _unbox(r, found, actual_mapping[actual_key])
    _note_plain_entry(r, mapping, key, value)
    r.push(value)


def _note_plain_entry(r: Recorder, mapping: Value, key: Value, value: Value | None) -> None:
    """The trace read mapping[key] as value (None: missing)."""
    if value is None or value.kind in (Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.NONE):
        r.plain_entries.add((mapping.id, key.id))


def _dict_get(r: Recorder, frame: Frame, mapping: Value, args: list[Value], actual: list[Any]) -> Value:
    """d.get(key[, default]) with a str key: found or not as observed (a guard), then the value or default."""
    if not 1 <= len(args) <= 2:
        raise Abort(Reason.ARITY, name="dict.get", count=len(args))
    key = args[0]
    if key.kind != Kind.STR:
        raise Abort(Reason.SUBSCRIPT, container="dict", index=key.kind.short)
    actual_mapping = frame.stack[len(frame.stack) - len(args) - 1].__self__
    found = r.emit("_DICT_LOOKUP_STR", (mapping, key))
    owner = r.bound_dicts.get(mapping.id, mapping)
    if actual[0] in actual_mapping:
        r.emit("_GUARD_FOUND", (found,))
        value = _unbox(r, found, actual_mapping[actual[0]])
        _note_plain_entry(r, owner, key, value)
        return value
    r.emit("_GUARD_MISSING", (found,))
    _note_plain_entry(r, owner, key, None)
    return args[1] if len(args) == 2 else r.const(None)


@dataclasses.dataclass
class _ArrayIndex:
    """A virtual value: `a[i]` of an array with more dimensions (array set), or a key `(i, j)` (array None: the
    array is below it on the stack); with the index values, their actual values, and the state at the start of
    the subscript's first part (its guards resume there)."""

    array: Value | None
    actual_array: Any
    items: list[Value]
    actual: list[Any]
    snapshot: Snapshot


def _subscript_snapshot(r: Recorder) -> Snapshot:
    pending = r.pending_subscript()
    return pending if pending is not None else r.snapshots.take()


@_handles(I.BUILD_TUPLE)
def _build_tuple(r: Recorder, frame: Frame, n: int) -> None:
    """`(a, b)`: a new tuple, owned by the trace (as `_build_list`'s lists); a key of int indices that subscripts
    an array right away (`a[i, j]`) is never built."""
    ops = r.code.ops
    next_op = ops[r.pc + 1] if r.pc + 1 < len(ops) else None
    items = [r.abstract.peek(k) for k in range(n, 0, -1)]
    if (
        n < 2
        or next_op not in (I.BINARY_SUBSCR, I.STORE_SUBSCR, I.COPY)
        or len(r.abstract.stack()) < n + 1
        or r.abstract.peek(n + 1).kind != Kind.ARRAY
        or any(v.kind not in (Kind.INT, Kind.NP_INT64) for v in items)
    ):
        _build(r, n, "_BUILD_TUPLE")
        return
    snapshot = _subscript_snapshot(r)
    for _ in range(n):
        r.abstract.pop()
    key = r.trace.new_value(Kind.ARRAY_INDEX)
    actual = list(frame.stack[len(frame.stack) - n :])
    r.array_indices[key.id] = _ArrayIndex(None, None, items, actual, snapshot)
    r.push(key)


def _array_key(r: Recorder, frame: Frame) -> tuple[Value, list[Value], Any, list[Any], Snapshot | None]:
    """Pop a subscript's container and key where one is an array or a virtual part of an array subscript:
    (the array, its indices, the actual array, their actual values, where guards resume)."""
    key = r.abstract.pop()
    container = r.abstract.pop()
    actual_container, actual_key = frame.stack[-2], frame.stack[-1]
    head = r.array_indices.get(container.id)
    if head is not None:  # a[i][j]
        if key.kind not in (Kind.INT, Kind.NP_INT64):
            raise Abort(Reason.ARRAY_VIEW_USED)
        assert head.array is not None
        return head.array, [*head.items, key], head.actual_array, [*head.actual, actual_key], head.snapshot
    if container.kind != Kind.ARRAY:
        raise Abort(Reason.ARRAY_VIEW_USED)
    tuple_key = r.array_indices.get(key.id)
    if tuple_key is not None:  # a[i, j]
        return container, tuple_key.items, actual_container, tuple_key.actual, tuple_key.snapshot
    return container, [key], actual_container, [actual_key], None


def _array_subscr(r: Recorder, frame: Frame) -> None:
    """a[i], a[i, j, ...] and a[i][j]...: an element once every dimension has an index; before that a
    virtual `a[i]` that only a further subscript may use."""
    first_part = r.abstract.peek(2).kind == Kind.ARRAY and r.abstract.peek(1).kind != Kind.ARRAY_INDEX
    snapshot_here = _subscript_snapshot(r) if first_part else None
    array, items, actual_array, actual, snapshot = _array_key(r, frame)
    spec = specialize_numpy.guarded_spec(r, array, actual_array)
    if len(items) < spec.ndim:
        if any(v.kind not in (Kind.INT, Kind.NP_INT64) for v in items):
            raise Abort(Reason.ARRAY_INDEX, spec=spec, what=items[-1].kind.short)
        row = r.trace.new_value(Kind.ARRAY_INDEX)
        start = snapshot if snapshot is not None else snapshot_here
        assert start is not None
        r.array_indices[row.id] = _ArrayIndex(array, actual_array, items, actual, start)
        r.push(row)
        return
    r.resume_override = snapshot
    try:
        r.push(specialize_numpy.load(r, array, items, actual_array, actual))
    finally:
        r.resume_override = None


def _array_attribute(r: Recorder, frame: Frame, array: Value, name: str) -> None:
    """a.ndim, a.size, and a.shape when a constant subscript follows (a.shape[k]): read from the header."""
    actual = frame.stack[-1]
    if name == "ndim":
        r.push(r.const(specialize_numpy.guarded_spec(r, array, actual).ndim))
        return
    if name == "size":
        spec = specialize_numpy.guarded_spec(r, array, actual)
        r.push(r.emit("_ARRAY_SIZE", (array,), operand=spec))
        return
    ops = r.code.ops
    if name == "shape" and r.pc + 2 < len(ops) and ops[r.pc + 1] == I.LOAD_CONST and ops[r.pc + 2] == I.BINARY_SUBSCR:
        shape = r.trace.new_value(Kind.TUPLE)  # (never materialized: the subscript comes next, with no guard)
        r.virtual_shapes[shape.id] = array
        specialize_numpy.guarded_spec(r, array, actual)
        r.push(shape)
        return
    raise Abort(Reason.ARRAY_ATTRIBUTE, name=name)


def _shape_subscr(r: Recorder) -> None:
    index = r.pop()
    array = r.virtual_shapes.pop(r.pop().id)
    ndim = r.array_specs[array.id].ndim
    k = index.const
    if type(k) is not int or not -ndim <= k < ndim:
        raise Abort(Reason.ARRAY_ATTRIBUTE, name=f"shape[{k!r}]")
    dims = specialize_numpy.header(r, array, r.array_specs[array.id])[1]
    r.push(dims[k % ndim])


@_handles(I.STORE_SUBSCR)
def _store_subscr(r: Recorder, frame: Frame, arg: Any) -> None:
    if Kind.ARRAY_INDEX in (r.abstract.peek(1).kind, r.abstract.peek(2).kind) or r.abstract.peek(2).kind == Kind.ARRAY:
        array, items, actual_array, actual, snapshot = _array_key(r, frame)
        value = r.pop()
        r.resume_override = snapshot
        try:
            specialize_numpy.store(r, value, array, items, frame.stack[-3], actual_array, actual)
        finally:
            r.resume_override = None
        return
    if r.abstract.peek(2).kind == Kind.DICT:
        key, mapping, value = r.pop(), r.pop(), r.pop()
        if key.kind != Kind.STR:
            raise Abort(Reason.ITEM_ASSIGNMENT, container="dict")
        if value.kind not in (Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.STR):
            raise Abort(Reason.STORE_KIND, kind=value.kind.short)
        old = frame.stack[-2].get(frame.stack[-1])
        if old is not None and type(old) not in (int, float, bool):
            raise Abort(Reason.OVERWRITE_TYPE, type=type(old).__name__)
        checked = (mapping.id, key.id) not in r.plain_entries
        r.emit("_STORE_SUBSCR_DICT_STR" if checked else "_STORE_SUBSCR_DICT_STR_OVER_NUMBER", (value, mapping, key))
        if value.kind != Kind.STR:
            r.plain_entries.add((mapping.id, key.id))
        return
    index = specialize.as_int(r, r.pop())
    container = r.pop()
    value = r.pop()
    if container.kind != Kind.LIST or index.kind != Kind.INT:
        raise Abort(Reason.ITEM_ASSIGNMENT, container=container.kind.short)
    if value.kind not in (Kind.INT, Kind.FLOAT, Kind.BOOL):
        raise Abort(Reason.STORE_KIND, kind=value.kind.short)
    actual_list, actual_index = frame.stack[-2], frame.stack[-1]
    try:
        old = actual_list[actual_index]
    except IndexError:
        raise Abort(Reason.INDEX_OUT_OF_RANGE) from None
    if type(old) not in (int, float, bool):
        raise Abort(Reason.OVERWRITE_TYPE, type=type(old).__name__)
    kept = _kept_alive(r, value)
    if kept is not None:  # the very object read (as CPython stores it), not a new box
        r.emit("_STORE_SUBSCR_LIST_OBJECT", (kept, container, index))
        return
    r.emit("_STORE_SUBSCR_LIST_INT", (value, container, index))


def _kept_alive(r: Recorder, value: Value) -> Value | None:
    """For a number read out of a list or tuple unchanged: a reference of the trace's own to its object, taken
    where it was read (a store in between could drop the container's reference: `a[i], a[j] = a[j], a[i]`)."""
    boxed = value.boxed
    if boxed is None or r.inlined:
        return None
    kept = r.kept_alive.get(boxed.id)
    if kept is None:
        kept = r.trace.insert_after(boxed, "_NEW_REF", (boxed,))
        if kept is not None:
            r.kept_alive[boxed.id] = kept
    return kept


@_handles(I.CALL)
def _call(r: Recorder, frame: Frame, n: int) -> None:
    callee = r.abstract.peek(n + 1)
    fn = callee.const if callee.is_const else None
    handler = specialize.CALLS.get(fn) if fn is not None and _hashable(fn) else None
    if handler is None and fn is not None:
        handler = specialize_ufunc.handler_for(fn)
        numpy_name = specialize_ufunc.numpy_callable(fn) if handler is None else None
        if numpy_name is not None:
            raise Abort(Reason.NUMPY_CALL, name=numpy_name)
    bound = callee.kind in (Kind.APPEND_METHOD, Kind.DICT_GET_METHOD)
    target = inline.target_of(fn) if handler is None and not bound else None
    if target is not None and not r.inlined:
        if r.pending_subscript() is not None:
            raise Abort(Reason.ARRAY_INDEX_MUTATES, name=f"a call of {target.__qualname__}")
        r.site_snapshot = r.snapshots.take()  # where the exits of the inlined body resume: this CALL
    args = [r.pop() for _ in range(n)][::-1]
    r.pop()
    if callee.kind == Kind.DICT_GET_METHOD:
        r.push(_dict_get(r, frame, callee, args, list(frame.stack[len(frame.stack) - n :])))
        return
    if callee.kind == Kind.APPEND_METHOD:
        if n != 1:
            raise Abort(Reason.APPEND_ARGUMENTS)
        _append(r, callee, args[0])
        r.push(r.const(None))
        return
    if target is not None:
        r.push(r.inline_call(frame, target, args, n))
        return
    actual = frame.stack[len(frame.stack) - n :] if n else []
    if handler is None:
        name = getattr(fn, "__qualname__", None) or callee.kind.short
        raise Abort(Reason.CALL, name=name)
    r.push(handler(r, args, list(actual)))


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


@_handles(I.LIST_APPEND)
def _list_append(r: Recorder, frame: Frame, slot: int) -> None:
    target = r.read_slot(frame, slot)
    if target.kind != Kind.LIST:
        raise Abort(Reason.APPEND_TO, kind=target.kind.short)
    _append(r, target, r.pop())


def _append(r: Recorder, target: Value, item: Value) -> None:
    if item.kind in (Kind.UNBOUND, Kind.RANGE, Kind.APPEND_METHOD, Kind.DICT_GET_METHOD):
        raise Abort(Reason.APPEND_VALUE, kind=item.kind.short)
    r.emit("_CALL_LIST_APPEND", (target, item))


@_handles(I.RETURN_VALUE)
def _return_value(r: Recorder, frame: Frame, arg: Any) -> None:
    """A side trace ends here, leaving to the interpreter with the value on the stack, which returns it. A
    root trace whose iteration returns has no loop to compile: it is recorded again at the next chance."""
    if r.inlined:  # an inlined callee returns to the caller's trace
        r.inlined[-1].result = r.pop()
        return
    if r.trace.kind is TraceKind.ROOT:
        raise Abort(Reason.RETURN_IN_LOOP)
    r.end_with_exit(frame)


@_handles(I.UNPACK_SEQUENCE)
def _unpack_sequence(r: Recorder, frame: Frame, n: int) -> None:
    """`x, y = pair` or `for x, y in pairs` over a list or tuple: a guard on its length (else the interpreter
    raises CPython's ValueError), then its items, as reads of items 0 to n - 1 (the first on top)."""
    sequence = r.pop()
    items = r.virtual_tuples.pop(sequence.id, None)
    if items is not None:  # an enumerate's or a zip's items: only ever unpacked (the first on top)
        for item in reversed(items):
            r.push(item)
        return
    actual = frame.stack[-1]
    if sequence.kind not in (Kind.LIST, Kind.TUPLE) or len(actual) != n:
        raise Abort(Reason.UNPACK, kind=sequence.kind.short, count=n)
    is_list = sequence.kind == Kind.LIST
    size = r.emit("_LEN_LIST" if is_list else "_LEN_TUPLE", (sequence,))
    same = r.emit("_COMPARE_OP_INT", (size, r.const(n)), operand=CompareOp.EQ)
    r.emit("_GUARD_IS_TRUE_POP", (same,))
    name = "_BINARY_SUBSCR_LIST_INT" if is_list else "_BINARY_SUBSCR_TUPLE_INT"
    for k in reversed(range(n)):
        r.push(_unbox(r, r.emit(name, (sequence, r.const(k))), actual[k]))


#: the kinds of the items a list built natively may hold: freeing such a list (where the variable holding it
#: is assigned again) runs no Python code (numbers, str, and containers other code keeps alive)
_BUILT_ITEM_KINDS = frozenset(
    {Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.NONE, Kind.INT_OBJECT, Kind.STR, Kind.LIST, Kind.TUPLE, Kind.DICT}
)


@_handles(I.BUILD_LIST)
def _build_list(r: Recorder, frame: Frame, n: int) -> None:
    """`[]`, `[a, b]`: a new list, owned by the trace (codegen.ownership) until it is handed over or freed."""
    _build(r, n, "_BUILD_LIST")


def _build(r: Recorder, n: int, uop: str) -> None:
    """A new list or tuple (uop) of the top n stack values."""
    if r.inlined:
        raise Abort(Reason.NOT_COMPILED, instruction=f"{uop[1:]} in an inlined call")
    items = [r.pop(stored=True) for _ in range(n)][::-1]
    for item in items:
        if item.kind not in _BUILT_ITEM_KINDS:
            raise Abort(Reason.BUILD_ITEM, container=uop[7:].lower(), kind=item.kind.short)
    r.push(r.emit(uop, tuple(items)))


@_handles(I.CALL_KW, I.RAISE)
def _not_compiled(r: Recorder, frame: Frame, arg: Any) -> None:
    raise Abort(Reason.NOT_COMPILED, instruction=I.OPS[r.code.ops[r.pc]].name)
