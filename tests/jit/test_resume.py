"""jit.resume: taking snapshots while recording (sharing what did not change, the state at an instruction's
start however much the instruction changed since), and the one account of the state at an exit that the
lowering, the runtime's exit descriptors and trees read."""

from __future__ import annotations

import re

import pytest

import jit.recorder
from codegen import abi
from codegen.context import LowerContext
from jit import jit as jit_decorator
from jit import resume
from jit.kinds import DIRTY, Kind
from jit.resume import (
    FrameState,
    Hold,
    Snapshots,
    entry_snapshot,
    exit_resume,
    frame_resume,
    needed_values,
    prewritten,
    substitute,
)
from jit.trace import ExitPoint, FrameSnapshot, Prewritten, Snapshot, Trace, TraceKind, WhenHot
from runtime.exits import describe


def new_trace(kind: TraceKind = TraceKind.ROOT) -> Trace:
    return Trace(kind, None, 0)  # type: ignore[arg-type]  # resume never looks at the loop


def values(trace: Trace, n: int, kind: Kind = Kind.INT) -> list:
    return [trace.new_value(kind) for _ in range(n)]


def recording(stack=()) -> tuple[FrameState, Snapshots]:
    frame = FrameState(0, stack)
    snapshots = Snapshots([frame])
    snapshots.begin(0)
    return frame, snapshots


# --- taking snapshots ------------------------------------------------------------------------------------------


def test_a_snapshot_is_the_state_at_the_instructions_start():
    trace = new_trace()
    a, b, c = values(trace, 3)
    frame, snapshots = recording()
    frame.set(0, a)
    frame.push(b)
    snapshots.begin(7)
    frame.pop()
    frame.set(0, c)
    frame.set(1, c)
    frame.push(c)
    snap = snapshots.take()
    assert snap.pc == 7 and len(snap.frames) == 1
    assert snap.outer is snap.inner
    assert snap.outer.slots == {0: a} and snap.outer.stack == [b]
    assert frame.get(0) is c and frame.get(1) is c and frame.stack() == (c,)  # the frame itself goes on


def test_one_snapshot_per_instruction_however_often_asked():
    trace = new_trace()
    (a,) = values(trace, 1)
    frame, snapshots = recording()
    snapshots.begin(3)
    first = snapshots.take()
    frame.push(a)
    assert snapshots.take() is first
    assert snapshots.counts()["snapshots"] == 1


def test_instructions_that_never_ask_cost_nothing():
    trace = new_trace()
    vs = values(trace, 20)
    frame, snapshots = recording()
    for pc, v in enumerate(vs):
        snapshots.begin(pc)
        frame.push(v)
        frame.set(pc % 3, frame.pop())
    assert snapshots.counts() == {"snapshots": 0, "shared_slot_maps": 0, "shared_stacks": 0, "copies": 0}


def test_unchanged_maps_are_shared_with_the_previous_snapshot():
    trace = new_trace()
    a, b = values(trace, 2)
    frame, snapshots = recording([a])
    frame.set(0, b)
    snapshots.begin(1)
    first = snapshots.take()
    snapshots.begin(2)  # e.g. a NOP, or an instruction that only reads
    second = snapshots.take()
    assert second is not first and (first.pc, second.pc) == (1, 2)
    assert second.outer.slots is first.outer.slots
    assert second.outer.stack is first.outer.stack
    snapshots.begin(3)
    frame.push(b)  # the stack changes, the slots do not
    snapshots.begin(4)
    third = snapshots.take()
    assert third.outer.slots is first.outer.slots
    assert third.outer.stack is not first.outer.stack and third.outer.stack == [a, b]
    assert snapshots.counts()["shared_slot_maps"] == 2 and snapshots.counts()["shared_stacks"] == 1


def test_a_snapshot_never_sees_later_changes():
    trace = new_trace()
    a, b, c = values(trace, 3)
    frame, snapshots = recording()
    frame.set(0, a)
    frame.push(a)
    snapshots.begin(1)
    snap = snapshots.take()  # holds the frame's own maps: the frame copies them before changing them
    assert snap.outer.slots is frame.slots() and snap.outer.stack is frame._stack  # nothing copied yet
    frame.set(0, b)
    frame.set(5, b)
    frame.push(c)
    snapshots.begin(2)
    frame.swap(2)
    frame.pop()
    assert snap.outer.slots == {0: a} and snap.outer.stack == [a]
    assert frame.slots() == {0: b, 5: b} and frame.stack() == (c,)
    assert snapshots.counts()["copies"] == 2  # one of each map, on its first change


@pytest.mark.parametrize(
    "change, expected_now",
    [
        (lambda f, v: f.push(v[3]), (0, 1, 2, 3)),
        (lambda f, v: f.pop(), (0, 1)),
        (lambda f, v: (f.pop(), f.pop(), f.push(v[4])), (0, 4)),
        (lambda f, v: f.swap(3), (2, 1, 0)),
        (lambda f, v: f.swap(2), (0, 2, 1)),
        (lambda f, v: f.replace_stack([v[5]]), (5,)),
        (lambda f, v: (f.pop(), f.replace_stack([v[5], v[6]]), f.push(v[4]), f.swap(3)), (4, 6, 5)),
    ],
    ids=["push", "pop", "pop-pop-push", "swap3", "swap2", "replace", "mixed"],
)
def test_every_stack_change_is_undone_for_the_snapshot(change, expected_now):
    trace = new_trace()
    v = values(trace, 7)
    frame, snapshots = recording(v[:3])
    snapshots.begin(9)
    change(frame, v)
    assert frame.stack() == tuple(v[i] for i in expected_now)
    assert snapshots.take().outer.stack == v[:3]


def test_slot_changes_are_undone_for_the_snapshot():
    trace = new_trace()
    a, b, c = values(trace, 3)
    frame, snapshots = recording()
    frame.set(1, a)
    snapshots.begin(4)
    frame.set(1, b)
    frame.set(2, b)
    frame.set(1, c)
    assert snapshots.take().outer.slots == {1: a}
    assert frame.slots() == {1: c, 2: b}


def test_end_snapshot_has_an_empty_stack_and_shares_the_slots():
    trace = new_trace()
    (a,) = values(trace, 1)
    frame, snapshots = recording([a])
    frame.set(0, a)
    snapshots.begin(5)
    exit_snapshot = snapshots.take()
    end = snapshots.take(empty_stack=True)
    assert end is not exit_snapshot and end.pc == 5
    assert end.outer.stack == [] and end.outer.slots is exit_snapshot.outer.slots
    assert snapshots.take() is exit_snapshot


def test_entry_snapshot():
    trace = new_trace(TraceKind.SIDE)
    trace.start_pc = 12
    a, b = values(trace, 2)
    trace.entry_slots[3] = a
    trace.start_stack = [b]
    snap = entry_snapshot(trace)
    assert snap.pc == 12 and snap.outer.slots == {3: a} and snap.outer.stack == [b]
    assert snap.outer.slots is not trace.entry_slots


def test_the_recorder_takes_far_fewer_snapshots_than_instructions(monkeypatch):
    """A real recording: snapshots only where a guard (or a call) needs one."""
    counts = []
    instructions = [0]
    record, finish = jit.recorder.Recorder.record, jit.recorder.Recorder.finish

    def counting_record(self, frame, pc):
        instructions[0] += 1
        record(self, frame, pc)

    def counting_finish(self, frame):
        counts.append(self.snapshots.counts())
        finish(self, frame)

    monkeypatch.setattr(jit.recorder.Recorder, "record", counting_record)
    monkeypatch.setattr(jit.recorder.Recorder, "finish", counting_finish)

    def kernel(n):
        total = 0
        for i in range(n):
            total += (i ^ 3) & 7
        return total

    assert jit_decorator(threshold=2)(kernel)(50) == kernel(50)
    (only,) = counts
    assert instructions[0] > 8
    # the periodic check, the range's end, the two overflow checks of `+=` and the loop's end
    assert only["snapshots"] <= instructions[0] // 2
    assert only["copies"] <= only["snapshots"] * 2


# --- what the optimizer sees ------------------------------------------------------------------------------------


def test_substitute_and_needed_values_visit_shared_maps_once():
    trace = new_trace()
    a, b, c, d = values(trace, 4)
    trace.written = {0}
    slots = {0: a, 1: d}  # slot 1 is only read: nothing to write back
    stack = [b, a]
    first = Snapshot([FrameSnapshot(1, slots, stack)])
    second = Snapshot([FrameSnapshot(2, slots, stack)])
    assert sorted(v.id for v in needed_values(trace, [first, second])) == sorted([a.id, b.id, a.id])
    replaced = []

    def sub(v):
        replaced.append(v)
        return c if v is a else v

    substitute([first, second], sub)
    assert len(replaced) == 4  # two slots and two stack entries, once
    assert second.outer.slots == {0: c, 1: d} and second.outer.stack == [b, c]


# --- the state at an exit ---------------------------------------------------------------------------------------


def root_trace_with_three_slots():
    """A root trace that reads slot 0 and assigns it, assigns slot 1 before the exit and slot 2 after it."""
    trace = new_trace(TraceKind.ROOT)
    entry, one, two = trace.new_value(Kind.INT), trace.new_value(Kind.FLOAT), trace.new_value(Kind.INT)
    trace.entry_slots[0] = entry
    trace.written = {0, 1, 2}
    return trace, entry, one, two


def test_root_exit_state():
    trace, entry, one, two = root_trace_with_three_slots()
    const = trace.new_value(Kind.INT, 42)
    # at the exit: slot 0 still holds its entry value (the loop phi), slot 1 was assigned, slot 2 not yet
    frame = FrameSnapshot(6, {0: entry, 1: one, 4: two}, [two, const])
    state = frame_resume(trace, frame)
    assert state.pc == 6
    holds = {s.slot: (s.hold, s.value, s.kind) for s in state.slots}
    assert holds == {
        0: (Hold.VALUE, entry, Kind.INT),  # in a later iteration the buffer holds an older value: write it
        1: (Hold.VALUE, one, Kind.FLOAT),
        2: (Hold.PREVIOUS, None, None),  # assigned later in the iteration: depends on which iteration
    }
    assert [s.slot for s in state.slots if s.write] == [0, 1]
    assert state.known_kinds == {0: Kind.INT, 1: Kind.FLOAT}  # slot 4 is not the trace's to know
    assert state.stack == (two, const) and state.stack_kinds == [Kind.INT, Kind.INT]
    assert state.stack_consts == {1: 42}
    assert state.writes() == {0: (Kind.INT, True), 1: (Kind.FLOAT, True), 2: (None, False)}


def test_root_exit_state_when_the_slot_is_read_before_it_is_assigned():
    trace, entry, one, _two = root_trace_with_three_slots()
    # the snapshot does not have slot 0 (read later in the iteration): it holds the value it came with
    state = frame_resume(trace, FrameSnapshot(1, {}, []))
    assert [(s.slot, s.hold, s.value) for s in state.slots] == [
        (0, Hold.VALUE, entry),
        (1, Hold.PREVIOUS, None),
        (2, Hold.PREVIOUS, None),
    ]
    assert state.known_kinds == {0: Kind.INT}


def test_side_exit_state():
    trace = new_trace(TraceKind.SIDE)
    trace.known_kinds = {0: Kind.INT, 1: Kind.FLOAT, 7: Kind.LIST}  # what the parent's exit knew
    entry = trace.new_value(Kind.INT)
    trace.entry_slots[0] = entry
    assigned = trace.new_value(Kind.BOOL)
    trace.written = {0, 1, 2, 3}
    frame = FrameSnapshot(4, {0: entry, 3: assigned}, [])
    state = frame_resume(trace, frame)
    assert [(s.slot, s.hold, s.value, s.kind) for s in state.slots] == [
        (0, Hold.BUFFER, None, Kind.INT),  # still the value the buffer holds
        (1, Hold.BUFFER, None, Kind.FLOAT),  # not assigned yet: the parent's value
        (2, Hold.BUFFER, None, None),
        (3, Hold.VALUE, assigned, Kind.BOOL),
    ]
    assert state.known_kinds == {0: Kind.INT, 1: Kind.FLOAT, 3: Kind.BOOL, 7: Kind.LIST}


def test_prewritten_by_an_inner_tree():
    trace, entry, one, _two = root_trace_with_three_slots()
    snap = Snapshot([FrameSnapshot(3, {0: entry, 1: one}, [])])
    inner_writes = {1: (Kind.INT, True), 5: (Kind.FLOAT, True), 0: (None, False)}
    state = prewritten(snap, inner_exit=17, pc=30, stack_kinds=(Kind.INT,), inner_writes=inner_writes)
    assert (state.inner_exit, state.pc, state.stack_kinds) == (17, 30, [Kind.INT])
    # known before the call: slots 0 and 1; the inner tree made 1 an int, wrote 5, and may have changed 0
    assert resume.prewritten_known(trace, snap, state) == {1: Kind.INT, 5: Kind.FLOAT}


# --- what each consumer gets -----------------------------------------------------------------------------------


def test_runtime_exit_descriptor():
    trace, entry, one, two = root_trace_with_three_slots()
    const = trace.new_value(Kind.OBJECT, len)
    snap = Snapshot([FrameSnapshot(6, {0: entry, 1: one}, [const, two])])
    point = ExitPoint(snap, line=11, leaves_loop=True)
    exit = describe(trace, point, 40)
    (state,) = exit_resume(trace, snap)
    assert (exit.id, exit.pc, exit.line, exit.leaves_loop) == (40, 6, 11, True)
    assert exit.stack_kinds == state.stack_kinds == [Kind.OBJECT, Kind.INT]
    assert exit.stack_consts == {0: len}
    assert exit.known_kinds == state.known_kinds == {0: Kind.INT, 1: Kind.FLOAT}
    assert exit.writes == state.writes()


def test_runtime_exit_descriptor_of_a_prewritten_exit():
    trace, entry, *_ = root_trace_with_three_slots()
    point = ExitPoint(Snapshot([FrameSnapshot(6, {0: entry}, [])]), line=11)
    point.when_hot = WhenHot.NEVER
    # the inner tree certainly wrote a float into slot 2 and maybe something into slot 0
    point.prewritten = Prewritten(3, 25, [Kind.FLOAT], {2: (Kind.FLOAT, True), 0: (None, False)})
    exit = describe(trace, point, 41)
    assert (exit.pc, exit.stack_kinds, exit.known_kinds, exit.stack_consts) == (25, [Kind.FLOAT], {2: Kind.FLOAT}, {})
    assert not exit.leaves_loop and not exit.propagate and exit.when_hot is WhenHot.NEVER


def test_a_prewritten_exit_knows_the_entry_slots_its_root_reads_after_the_call():
    """An outer root that calls an inner tree and reads an entry slot (`flagged += 1`) only after the call: its
    entry checks the slot's kind, so the exit taken when the inner tree leaves another way knows it too. Worked
    out while recording, at the call, the exit did not know it, and a side trace grown from that exit could
    not end in a root whose entry type map names the slot: its end was never linked (every outer iteration
    left native code; bench `flagged_rows` with a warm-up, 0.22x plain)."""
    trace = new_trace(TraceKind.ROOT)
    flagged, row = trace.new_value(Kind.INT), trace.new_value(Kind.LIST)
    at_call = Snapshot([FrameSnapshot(6, {1: row}, [])])
    point = ExitPoint(at_call, line=11)
    point.prewritten = resume.prewritten(at_call, 3, 25, [], {4: (Kind.INT, True)})
    trace.entry_slots[1] = row
    trace.entry_slots[2] = flagged  # read after the call, when recording went on
    trace.written = {2, 4}
    exit = describe(trace, point, 42)
    assert exit.known_kinds == {1: Kind.LIST, 2: Kind.INT, 4: Kind.INT}


def test_tree_writes_at_a_loop_exit():
    from runtime.trees import Tree

    trace, entry, one, _two = root_trace_with_three_slots()
    point = ExitPoint(Snapshot([FrameSnapshot(6, {0: entry, 1: one}, [])]), line=1, leaves_loop=True)
    exit = describe(trace, point, 0)

    class Root:  # the little of a CompiledTrace that writes_at reads
        pass

    tree = Tree.__new__(Tree)
    tree.root = Root()  # type: ignore[assignment]
    tree.root.trace = trace  # type: ignore[attr-defined]
    tree.side_writes = {1, 9}
    tree.calls, tree.jumps_to = [], []
    exit.trace = tree.root
    assert tree.writes_at(exit) == {0: (Kind.INT, True), 1: (Kind.FLOAT, True), 2: (None, False), 9: (None, False)}


def test_tree_writes_at_another_exit_are_everything_it_may_assign():
    """At an exit of a side trace, or one whose state an inner tree wrote, every slot the tree or a tree it
    calls may assign may have changed; only the kinds the exit knows are certain."""
    from runtime.trees import Tree

    trace, entry, one, _two = root_trace_with_three_slots()
    point = ExitPoint(Snapshot([FrameSnapshot(6, {0: entry, 1: one}, [])]), line=1)
    exit = describe(trace, point, 0)
    exit.known_kinds = {0: Kind.INT, 5: Kind.FLOAT}

    class Root:
        pass

    def tree_of(written: set[int], side_writes: set[int], calls: list) -> Tree:
        tree = Tree.__new__(Tree)
        tree.root = Root()  # type: ignore[assignment]
        tree.root.trace = Trace(TraceKind.ROOT, trace.loop, 0)  # type: ignore[attr-defined]
        tree.root.trace.written = written  # type: ignore[attr-defined]
        tree.side_writes = side_writes
        tree.calls, tree.jumps_to = calls, []
        return tree

    inner = tree_of({5, 7}, set(), [])
    tree = tree_of({0}, {3}, [inner])
    exit.trace = object()  # a side trace's
    expected = {0: (Kind.INT, True), 3: (None, False), 5: (Kind.FLOAT, True), 7: (None, False)}
    assert tree.writes_at(exit) == expected
    exit.trace = tree.root
    exit.exact_writes = False  # the root's, after an inner tree left another way than recorded
    assert tree.writes_at(exit) == expected


def _lowered(trace: Trace, snapshot: Snapshot, flags: bool = False) -> str:
    layout = abi.Layout(nslots=4, max_stack=2)
    ctx = LowerContext(trace, layout, "t", "", "")
    if flags:
        from llvmlite import ir

        for slot in trace.written:
            ctx.valid[slot] = (ir.Constant(ir.IntType(1), 1), ir.Constant(ir.IntType(64), 99))
            ctx.valid_kinds[slot] = Kind.INT
    ctx.materialize(snapshot)
    ctx.builder.ret(ir_zero())
    return str(ctx.module)


def ir_zero():
    from llvmlite import ir

    return ir.Constant(ir.IntType(64), 0)


def _tag_stores(text: str) -> list[int]:
    return [int(t) for t in re.findall(r"store i8 (\d+)", text)]


def test_lowering_writes_what_resume_says():
    trace = new_trace(TraceKind.ROOT)
    trace.written = {0, 1, 2}
    a = trace.new_value(Kind.INT, 5)
    b = trace.new_value(Kind.FLOAT, 2.5)
    c = trace.new_value(Kind.BOOL, True)
    snap = Snapshot([FrameSnapshot(3, {0: a, 1: b, 3: a}, [c])])  # slot 2: assigned later
    text = _lowered(trace, snap)
    # slots 0 and 1 and the one stack entry, tagged with their kinds and DIRTY; nothing for slots 2 and 3
    assert _tag_stores(text) == [Kind.INT | DIRTY, Kind.FLOAT | DIRTY, Kind.BOOL | DIRTY]
    assert "store i64 5," in text and "store double 0x4004000000000000," in text
    # a looping trace writes slot 2's previous value and its tag where its flag says it has one, else leaves the
    # slot's word and tag as they are: each stores a select between the two (no branch, no block of its own on an
    # exit path: codegen.context.LowerContext.store_slot_if)
    text = _lowered(trace, snap, flags=True)
    assert _tag_stores(text) == [Kind.INT | DIRTY, Kind.FLOAT | DIRTY, Kind.BOOL | DIRTY]
    assert [int(t) for t in re.findall(r"select +i1 1, i8 (\d+), i8 %", text)] == [Kind.INT | DIRTY]
    assert re.search(r"select +i1 1, i64 99, i64 %", text)
    assert "br " not in text


def test_side_trace_lowering_leaves_the_buffers_values_alone():
    trace = new_trace(TraceKind.SIDE)
    trace.written = {0, 1}
    entry = trace.new_value(Kind.INT, 1)
    trace.entry_slots[0] = entry
    snap = Snapshot([FrameSnapshot(3, {0: entry}, [])])
    assert _tag_stores(_lowered(trace, snap, flags=True)) == []


def test_assigned_late():
    trace, entry, one, two = root_trace_with_three_slots()
    trace.end_snapshot = Snapshot([FrameSnapshot(0, {0: two, 1: one, 2: two}, [])])
    # slot 0 is read before it is assigned (a loop phi); 1 and 2 are not: exits may find older values there
    assert resume.assigned_late(trace) == {1: one, 2: two}
    state = frame_resume(trace, FrameSnapshot(3, {0: entry}, []))
    assert {s.slot for s in state.slots if s.hold is Hold.PREVIOUS} <= set(resume.assigned_late(trace))


def test_resume_sits_in_the_vocabulary_layer():
    """jit.resume is read by the recorder, the optimizer, the lowering and the runtime: it imports none of
    them (only the trace's vocabulary)."""
    import ast
    import pathlib

    tree = ast.parse(pathlib.Path(resume.__file__).read_text())
    ours = {"jit", "codegen", "runtime"}
    imported = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ours
    }
    imported |= {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name.split(".")[0] in ours
    }
    assert imported == {"jit.kinds", "jit.trace"}


def test_an_exit_before_a_side_traces_first_read_of_a_slot_does_not_claim_its_kind():
    """A side trace guards the kind of a slot its parent did not know where it first reads it; an exit
    before that read (a branch) must not claim the kind, or a side trace grown from it would trust it: here
    `total` was a float when the traces were recorded and is an int in a later call."""
    from helpers import check, define

    source = (
        "def skip_then_mixed(xs):\n"
        "    total = 0\n"
        "    for x in xs:\n"
        "        if x < 0:\n"
        "            continue\n"
        "        if x > 100:\n"
        "            total += 0.5\n"
        "        else:\n"
        "            total += x\n"
        "    return total\n"
    )
    func = define(source, "skip_then_mixed")
    check(func, ([-1] * 5 + [200, 3] * 4,), ([-1, -1, -1, 1, -1, 200, 1],), ([1, -1, 200, 1] * 3,), native=True)
