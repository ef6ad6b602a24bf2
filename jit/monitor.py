"""The monitor: decides, at each hot loop header and each side exit, whether to run native code, record a
trace, or keep interpreting; and installs what gets compiled.

One monitor per jitted function (made when its first loop gets hot). Policies, each an option:
- a loop header records a root trace once its loop is hot, at most ``max_trees_per_loop`` trees (one per
  entry type map); failed recordings back off exponentially and, after ``max_aborts``, the header is
  blacklisted (and stops costing anything);
- an exit taken ``side_exit_threshold`` times grows a side trace (at most ``max_side_traces`` per tree), unless
  it leaves its loop; failures back off and blacklist the same way;
- a hoisted guard (a global's value) that keeps failing invalidates its tree, which is then recorded anew.

Every recording and compilation failure is caught here: the user's program never sees one.
"""

from __future__ import annotations

import sys
import threading
import traceback
from collections import Counter
from typing import Any, Protocol

from codegen import abi
from codegen.compile import compile_trace
from jit import environment
from jit.aborts import Abort, Reason
from jit.dumps import dump_trace, trees_text
from jit.frontend.instructions import T1Code
from jit.optimizer import optimize
from jit.options import Options
from jit.recorder import Recorder
from jit.trace import Trace, TraceKind, WhenHot
from runtime.errors import internal
from runtime.exits import ExitDescriptor, describe
from runtime.frame import Frame
from runtime.native import NativeBuffer
from runtime.trees import CompiledTrace, LoopState, Tree


class Jitted(Protocol):
    """What the monitor needs of the function it serves (``jit.function.JitFunction``, which makes the monitor
    once a loop gets hot): its tier-1 code, options and namespaces, the loop headers the interpreter asks about
    (``hot_loops``), and a way to stop jitting it."""

    code: T1Code
    options: Options
    globals: dict[str, Any]
    builtins: dict[str, Any]
    hot_loops: list[Any]

    def give_up(self, reason: str) -> None: ...


class Monitor:
    def __init__(self, function: Jitted) -> None:
        self.function = function
        self.code = function.code
        self.options = function.options
        self.layout = abi.Layout(self.code.nslots, self.code.max_stack)
        self.loops: list[LoopState | None] = [None] * len(self.code.loops)
        self.exits: list[ExitDescriptor] = []
        self.traces: list[CompiledTrace] = []  # the traces whose code is held (not yet freed)
        self.compiled: list[tuple[str, float, int]] = []  # every compilation: (kind, ms, code bytes)
        self.lock = threading.Lock()
        self.graveyard: list[Tree] = []
        self.free_buffers: list[NativeBuffer] = []
        self.active = 0  # native calls in progress
        self.native_entries = 0
        self.native_iterations = 0  # loop iterations those entries ran (trees called included)
        self.exits_to_interpreter = 0
        self.recordings = 0  # started
        self.abort_reasons: Counter[str] = Counter()  # by message, with where it happened
        self.abort_codes: Counter[str] = Counter()  # by the reason's code (jit.aborts)
        self.invalidated = 0
        self.limits_hit: Counter[str] = Counter()
        self.dump_kinds = environment.dump_kinds()

    # --- hooks called by the interpreter ---------------------------------------------------------------
    def loop_is_hot(self, loop: int) -> None:
        state = self.loops[loop]
        if state is None:
            state = self.loops[loop] = LoopState(self.code.loops[loop], self.options.threshold)
        if not state.blacklisted:
            self.function.hot_loops[loop] = state

    @internal
    def at_loop_header(self, frame: Frame, loop: int, pc: int) -> int:
        hook = frame.trace_hook
        if hook is not None:
            return hook.at_loop_header(frame, loop, pc)
        state = self.loops[loop]
        assert state is not None
        if state.trees:
            buffer = self.take_buffer()
            tree = state.tree_for(buffer.pack(frame.slots))
            if tree is not None:
                return self.run(frame, tree, buffer)
            self.free_buffers.append(buffer)
        if self.may_record(state):
            state.recording = True
            self.recordings += 1
            frame.trace_hook = Recorder(self, frame, state.loop, pc + 1)
        return pc + 1

    # --- running native code ---------------------------------------------------------------------------
    def take_buffer(self) -> NativeBuffer:
        """A frame buffer: its contents only matter from packing to unpacking, so buffers are reused (one
        per native call in progress: threads, and signal handlers calling back in, get their own)."""
        try:
            return self.free_buffers.pop()
        except IndexError:
            return NativeBuffer(self.layout)

    @internal
    def call_native(self, frame: Frame, tree: Tree, buffer: NativeBuffer) -> ExitDescriptor:
        """Run tree on the packed buffer; rebuild the frame from the exit it took and return that exit."""
        buffer.words[abi.FUEL] = abi.FUEL_START
        self.native_entries += 1
        tree.entries += 1
        with self.lock:  # `active` guards freeing code: no lost updates between threads
            self.active += 1
        try:
            exit_id = tree.function(buffer.address)
        except BaseException:
            # a signal handler's exception (KeyboardInterrupt): native code left through its periodic exit
            with self.lock:
                self.active -= 1
            exit = self.exits[buffer.words[abi.EXIT]]
            self.exits_to_interpreter += 1
            frame.stack[:] = buffer.unpack(frame.slots, len(exit.stack_kinds))
            self.free_buffers.append(buffer)
            raise
        with self.lock:
            self.active -= 1
        iterations = abi.FUEL_START - buffer.words[abi.FUEL]
        self.native_iterations += iterations
        tree.iterations += iterations
        exit = self.exits[exit_id]
        self.exits_to_interpreter += 1
        exit.taken += 1
        frame.stack[:] = buffer.unpack(frame.slots, len(exit.stack_kinds))
        self.free_buffers.append(buffer)
        if self.graveyard:
            with self.lock:
                if self.active == 0:
                    self.free_graveyard()
        return exit

    @internal
    def run(self, frame: Frame, tree: Tree, buffer: NativeBuffer) -> int:
        exit = self.call_native(frame, tree, buffer)
        if exit.taken >= max(exit.retry_at, self.options.side_exit_threshold) and exit.tree is not None:
            if exit.when_hot is WhenHot.INVALIDATE:
                self.invalidate(exit.tree)
            elif exit.can_grow() and exit.side is None and self.options.side_exit_threshold:
                self.maybe_record_side(frame, exit)
        return exit.pc

    @internal
    def run_tree_while_recording(self, frame: Frame, tree: Tree) -> tuple[ExitDescriptor, int]:
        buffer = self.take_buffer()
        buffer.pack(frame.slots)
        exit = self.call_native(frame, tree, buffer)
        return exit, exit.pc

    # --- recording -------------------------------------------------------------------------------------
    def may_record(self, state: LoopState) -> bool:
        if state.recording or state.blacklisted or not self.options.threshold:
            return False
        if state.cooldown > 0:
            state.cooldown -= 1
            return False
        if len(state.trees) >= self.options.max_trees_per_loop or state.made >= 2 * self.options.max_trees_per_loop:
            self.limits_hit["max_trees_per_loop"] += 1
            self.blacklist(state)
            return False
        return True

    def maybe_record_side(self, frame: Frame, exit: ExitDescriptor) -> None:
        tree = exit.tree
        assert tree is not None
        if not tree.valid:
            return
        if len(tree.side_traces) >= self.options.max_side_traces:
            self.limits_hit["max_side_traces"] += 1
            exit.blacklisted = True
            return
        if exit.recording:
            return  # another thread records from this exit right now
        exit.recording = True
        self.recordings += 1
        frame.trace_hook = Recorder(self, frame, tree.loop, exit.pc, parent=exit)

    def tree_for(self, loop: int, frame: Frame) -> Tree | None:
        state = self.loops[loop]
        if state is None or not state.trees:
            return None
        buffer = self.take_buffer()
        tree = state.tree_for(buffer.pack(frame.slots))  # the same tags the entry itself will use
        self.free_buffers.append(buffer)
        return tree

    def trees_at(self, loop: int) -> list[Tree]:
        state = self.loops[loop]
        return list(state.trees) if state is not None else []

    def recording_aborted(self, recorder: Recorder, abort: Abort) -> None:
        trace = recorder.trace
        where = f"{trace.kind} trace of the loop at line {trace.loop.line}, at line {recorder.line}"
        self.abort_reasons[f"{where}: {abort}"] += 1
        self.abort_codes[abort.reason.code] += 1
        retry = abort.retry
        options = self.options
        if trace.kind is TraceKind.ROOT:
            state = self.loops[trace.loop.index]
            assert state is not None
            state.recording = False
            if retry and state.retries < _MAX_RETRIES:
                state.retries += 1
                return
            state.aborts += 1
            if state.aborts >= options.max_aborts:
                self.blacklist(state)
            else:
                state.cooldown = options.threshold << state.aborts
        else:
            exit = trace.parent_exit
            exit.recording = False
            exit.aborts += 1
            if exit.aborts >= options.max_aborts or abort.reason is Reason.LEFT_LOOP:
                exit.blacklisted = True  # that path leaves the loop: it belongs to an enclosing loop's tree
            else:
                exit.retry_at = exit.taken + (options.side_exit_threshold << exit.aborts)

    def blacklist(self, state: LoopState) -> None:
        state.blacklisted = True
        state.recording = False
        if not state.trees:
            self.function.hot_loops[state.loop.index] = None  # the interpreter stops asking
        hot = [s for s in self.loops if s is not None]
        if all(s.blacklisted and not s.trees for s in hot):
            # nothing of this function runs natively, and tier-1 interpretation is slower than CPython:
            # from the next call on, run it as plain CPython
            lines = ", ".join(str(s.loop.line) for s in hot)
            self.function.give_up(f"no loop compiles (loops at line {lines} were blacklisted)")

    def recording_finished(self, recorder: Recorder, trace: Trace) -> None:
        state = self.loops[trace.loop.index]
        assert state is not None
        try:
            compiled = self.compile(trace)  # LLVM releases the GIL: other threads run meanwhile
        except Exception as exc:
            detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
            self.recording_aborted(recorder, Abort(Reason.COMPILER_ERROR, detail=detail))
            if environment.debug():
                traceback.print_exc()
            return
        if trace.kind is TraceKind.ROOT:
            self.install_root(state, compiled, recorder)
            state.recording = False  # only now: until the tree is installed, no other thread records it
        else:
            self.install_side(compiled, recorder)
        if "trees" in self.dump_kinds:
            sys.stderr.write(trees_text(self) + "\n")

    # --- compiling and installing ----------------------------------------------------------------------
    def compile(self, trace: Trace) -> CompiledTrace:
        optimize(trace)
        with self.lock:
            exits = []
            for point in trace.exits():
                exit = describe(trace, point, len(self.exits))
                point.id = exit.id
                self.exits.append(exit)
                exits.append(exit)
        name = "".join(c if c.isalnum() else "_" for c in self.code.qualname)
        symbol = f"tj_{name}_{trace.kind}{trace.loop.index}_{len(self.traces)}_{id(self) & 0xFFFF:x}"
        native = compile_trace(
            trace,
            symbol=symbol,
            layout=self.layout,
            globals_=self.function.globals,
            builtins_=self.function.builtins,
            opt_level=self.options.opt_level,
        )
        compiled = CompiledTrace.install(trace, native, exits)
        self.traces.append(compiled)
        self.compiled.append((trace.kind, compiled.module.compile_ms, compiled.module.code_bytes))
        trace_kinds = [kind for kind in self.dump_kinds if kind != "trees"]  # (trees: once it is installed)
        if trace_kinds:
            sys.stderr.write(dump_trace(self, compiled, trace_kinds))
        return compiled

    def install_root(self, state: LoopState, compiled: CompiledTrace, recorder: Recorder) -> None:
        calls = _trees_used(compiled.trace, "_CALL_TREE")
        tree = Tree(state.loop, compiled, depth=1 + recorder.depth, calls=calls)
        for exit in compiled.exits:
            exit.tree = tree
        for target in _trees_used(compiled.trace, "_JUMP_TO_TREE"):
            target.jumpers.append(tree)
        state.trees.append(tree)
        state.made += 1
        state.aborts = 0

    def install_side(self, compiled: CompiledTrace, recorder: Recorder) -> None:
        parent: ExitDescriptor = compiled.trace.parent_exit
        tree = parent.tree
        assert tree is not None and parent.trace is not None
        for exit in compiled.exits:
            exit.tree = tree
        for callee in _trees_used(compiled.trace, "_CALL_TREE"):
            tree.calls.append(callee)
            callee.callers.append(tree)
        for target in _trees_used(compiled.trace, "_JUMP_TO_TREE"):
            if target is not tree:
                target.jumpers.append(tree)
        compiled.parent = parent
        parent.side = compiled
        parent.recording = False
        grew = tree.add_side_trace(compiled)
        parent.trace.link(parent, compiled)
        if grew:
            for caller in list(tree.callers):
                self.invalidate(caller)

    def invalidate(self, tree: Tree) -> None:
        """Stop using tree and everything that calls it or jumps into it; free their code when idle."""
        if not tree.valid:
            return
        tree.valid = False
        self.invalidated += 1
        state = self.loops[tree.loop.index]
        if state is not None and tree in state.trees:
            state.trees.remove(tree)
        self.graveyard.append(tree)
        for other in [*tree.callers, *tree.jumpers]:
            self.invalidate(other)

    def free_graveyard(self) -> None:
        """Drop invalidated trees' code (no native code of this function is running)."""
        dead = {id(t) for tree in self.graveyard for t in tree.traces()}
        self.traces = [t for t in self.traces if id(t) not in dead]
        for tree in self.graveyard:
            for compiled in tree.traces():
                for exit in compiled.exits:
                    exit.trace = exit.tree = exit.side = None
            for callee in tree.calls:
                if tree in callee.callers:
                    callee.callers.remove(tree)
            for live in self.live_trees():
                if tree in live.jumpers:
                    live.jumpers.remove(tree)
        self.graveyard.clear()

    def live_trees(self) -> list[Tree]:
        return [t for state in self.loops if state is not None for t in state.trees]


_MAX_RETRIES = 32  # recordings that ended by bad timing, before they count as failures


def _trees_used(trace: Trace, uop_name: str) -> list[Tree]:
    out: list[Tree] = []
    for uop in trace.uops:
        if uop.name == uop_name:
            tree = uop.operand.tree if uop_name == "_CALL_TREE" else uop.operand
            if tree not in out:
                out.append(tree)
    return out


__all__ = ["Any", "Monitor"]
