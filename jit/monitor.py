"""The monitor: the policy that decides, at each hot loop header and each side exit, whether to run native
code, record a trace, or keep interpreting; and what to do with what gets recorded.

One monitor per jitted function (made when its first loop gets hot). Policies, each an option:
- a loop header records a root trace once its loop is hot, at most ``max_trees_per_loop`` trees (one per
  entry type map); failed recordings back off exponentially and, after ``max_aborts``, the header is
  blacklisted (and stops costing anything);
- an exit taken ``side_exit_threshold`` times grows a side trace (at most ``max_side_traces`` per tree), unless
  it leaves its loop; failures back off and blacklist the same way;
- a hoisted guard (a global's value) that keeps failing invalidates its tree, which is then recorded anew.

The mechanisms are elsewhere: running native code and the buffer pool (``runtime.runner``), installing,
invalidating and freeing trees (``runtime.registry``), and the recording life cycle of each loop header and
exit (``jit.lifecycle``). Every recording and compilation failure is caught here: the user's program never
sees one.
"""

from __future__ import annotations

import functools
import sys
import threading
import time
import traceback
import weakref
import zlib
from collections import Counter
from typing import Any, Protocol

from codegen import abi
from codegen.cache import CodeCache
from codegen.compile import LoweredTrace, compile_lowered, lower_trace
from jit import background, environment, tiering
from jit.aborts import Abort, Reason
from jit.dumps import dump_trace, trees_text
from jit.frontend.instructions import T1Code
from jit.inline import CalleeFunction
from jit.kinds import Kind, kind_of
from jit.lifecycle import Lifecycle, LoopState
from jit.optimizer import optimize
from jit.options import Options
from jit.recorder import Recorder
from jit.trace import Trace, TraceKind, WhenHot
from runtime.errors import clean_traceback, internal
from runtime.exits import ExitDescriptor
from runtime.frame import Frame
from runtime.interpreter import prepare_args, run
from runtime.native import NativeBuffer
from runtime.registry import TreeRegistry
from runtime.runner import NativeRunner
from runtime.trees import CompiledTrace, Tree

#: the types of a global's value that traces can read from the dict at each use (jit.recorder.names)
_VOLATILE_TYPES = (int, float, bool, list, tuple)

#: what a loop header's wait for slots to be bound costs (Monitor.waits_for_binding), in ms: about 25 us measured
#: (an iteration through the hand-off and the interpreter's header instead of native code; 2-core machine, 3.11)
WAIT_MS = 0.025


def _root_kind(value: Any) -> Kind:
    """The kind a root trace's entry type map gives a slot holding value (``Recorder.slot_kind``)."""
    kind = kind_of(value)
    return Kind.INT_OBJECT if kind == Kind.OBJECT and type(value) is int else kind


class Jitted(Protocol):
    """What the monitor needs of the function it serves (``jit.function.JitFunction``, which makes the monitor
    once a loop gets hot): its tier-1 code, options and namespaces, the loop headers the interpreter asks about
    (``hot_loops``), and a way to stop jitting it (and to take that back)."""

    py_func: Any
    code: T1Code
    options: Options
    globals: dict[str, Any]
    builtins: dict[str, Any]
    hot_loops: list[Any]

    def give_up(self, reason: str) -> None: ...

    def revive(self) -> None: ...


class Monitor:
    def __init__(self, function: Jitted) -> None:
        self.function = function
        self.code = function.code
        self.options = function.options
        self.layout = abi.Layout(self.code.nslots, self.code.max_stack)
        self.registry = TreeRegistry(len(self.code.loops))
        # the persistent code cache (option cache), and how many of this function's traces LLVM compiled
        self.cache = CodeCache.for_function(function.py_func, self.code, self.options) if self.options.cache else None
        self.llvm_compiles = 0
        self.runner = NativeRunner(self.layout, self.registry, self.cache, self.code.nlocals)
        self.loops: list[LoopState | None] = [None] * len(self.code.loops)
        self.compiled: list[tuple[str, float, int]] = []  # every compilation: (kind, ms, code bytes)
        self.compile_phases: dict[str, float] = {}  # where every compilation's time went, in ms (jit.stats)
        self.recordings = 0  # started
        # hand-offs from CPython enter trees in one native call (NativeRunner.hand_over) where entry stubs are on
        self.native_handoffs = self.options.entry_stubs
        self.abort_reasons: Counter[str] = Counter()  # by message, with where it happened
        self.abort_codes: Counter[str] = Counter()  # by the reason's code (jit.aborts)
        self.limits_hit: Counter[str] = Counter()
        self.dump_kinds = environment.dump_kinds()
        self.sync_compile = self.options.sync_compile
        # tiered compilation (option tier_up_threshold): traces compiled cheaply first, hot trees again
        self.tiering = tiering.Tiering(self) if self.options.first_opt_level != self.options.opt_level else None
        self.pending = 0  # traces handed to the background compiler and not installed (or dropped) yet
        self.sides_postponed = 0  # side trace recordings put off while another of the same tree was on its way
        self._pending_lock = threading.Lock()
        self.has_barriers = False  # a trace of the function runs Python code (the generic object path)
        # loop -> (its trees' native entries where its header last waited for slots to be bound, how many waits)
        self.binding_waits: dict[int, tuple[int, int]] = {}
        # loop -> an exit where a trace ends at its header with a state no tree takes (WhenHot.ROOT), taken often:
        # the header records a root tree for that state when it next meets it (wants_root)
        self.root_requests: dict[int, ExitDescriptor] = {}
        # per site whose traces guard a class (id of its tier-1 code, pc): the classes they were specialized on (by
        # id, weakly), or None once it is megamorphic (Recorder.may_specialize: it takes the generic path)
        self.site_classes: dict[tuple[int, int], dict[int, weakref.ref[type]] | None] = {}
        # globals whose guards invalidated trees (by name), and those that did so more than once: rebound as a
        # rule, read from the dict at each use by later traces (_count_rebinding)
        self.rebindings: Counter[str] = Counter()
        self.volatile_globals: set[str] = set()
        # classes whose version guards invalidated trees (by id), and those that did so more than once: changed as
        # a rule, never specialized on by later traces (_count_class_change)
        self.class_changes: Counter[int] = Counter()
        self.unstable_classes: weakref.WeakSet[type] = weakref.WeakSet()
        # trees invalidated by their guard of NumPy's error state (_count_rebinding): from the second on, the
        # function is called under changing states as a rule, and later traces ignore no event (no such guard)
        self.errstate_changes = 0

    # --- hooks called by the interpreter ---------------------------------------------------------------
    def loop_is_hot(self, loop: int) -> None:
        state = self.loops[loop]
        if state is None:
            info = self.code.loops[loop]
            state = self.loops[loop] = LoopState(info, self.options.threshold, self.registry.trees[loop])
        if not state.blacklisted:
            self.function.hot_loops[loop] = state

    @internal
    def at_loop_header(self, frame: Frame, loop: int, pc: int) -> int:
        hook = frame.trace_hook
        if hook is not None:
            return hook.at_loop_header(frame, loop, pc)
        state = self.loops[loop]
        assert state is not None
        if self.root_requests and self.records_wanted_root(frame, state, pc):
            return pc + 1
        if state.trees:
            runner = self.runner
            exit = self.enter_through_stubs(frame, loop)
            if exit is not None:
                return self.exited(frame, exit)
            buffer = runner.take_buffer()
            tags = buffer.pack(frame.slots)
            tree = self.registry.tree_for(loop, tags)
            if tree is not None:
                return self.run(frame, tree, buffer)
            runner.give_back(buffer)
            if self.waits_for_binding(state, tags):
                return pc + 1
        if self.may_record(state) and state.start():
            self.recordings += 1
            frame.trace_hook = Recorder(self, frame, state.loop, pc + 1)
        return pc + 1

    def waits_for_binding(self, state: LoopState, tags: bytes) -> bool:
        """No tree of state's loop matches tags, but one would once slots its root writes before reading them
        are bound (a later call enters the loop with the body's locals unbound: ``Tree.matches_once_bound``):
        let this iteration run where the function runs, which binds them, and enter at the next header, rather
        than record a second root tree for the same loop (its compile time, and a place among
        max_trees_per_loop). Each wait must be followed by a native entry of the loop's trees before the next
        one: else (the iteration left them unbound) the header records as usual. It records too once the waits
        have cost about what compiling that tree did (a wait is a round trip through the hand-off, WAIT_MS; a
        tree of its own would run that first iteration natively): a loop entered that often with them unbound
        pays for a tree of its own, and no loop pays more than twice the better choice's cost."""
        index = state.loop.index
        trees = self.registry.trees[index]
        waiting_for = [tree for tree in trees if tree.matches_once_bound(tags)]
        if not waiting_for:
            return False
        entries = sum(tree.entries for tree in trees)
        last, waits = self.binding_waits.get(index, (-1, 0))
        budget = min(tree.root.compile_ms for tree in waiting_for)
        if last == entries or waits * WAIT_MS >= budget:
            return False  # (the last wait was not followed by an entry, or the waits cost a compilation)
        self.binding_waits[index] = (entries, waits + 1)
        state.cooldown = max(state.cooldown, 1)  # (CPython's loop driver hands the loop back after one iteration)
        return True

    # --- entering native code --------------------------------------------------------------------------
    def enter_through_stubs(self, frame: Frame, loop: int, count: bool = True) -> ExitDescriptor | None:
        """Run the first tree at loop's header whose entry stub takes frame's slots (None: none did, or
        entry stubs are off); the exit it took. count: count a refusal by them all (``stub_refusals``)."""
        if self.options.entry_stubs:
            runner = self.runner
            tried = False
            for tree in self.registry.trees[loop]:
                if self.tiering is not None:
                    self.tiering.before_entry(tree)
                if tree.entry is not None:
                    exit = runner.enter(frame, tree)
                    if exit is not None:
                        return exit
                    tried = True
            if tried and count:
                runner.stub_refusals += 1
        return None

    @internal
    def run(self, frame: Frame, tree: Tree, buffer: NativeBuffer) -> int:
        """Run tree (buffer: frame packed); then act on the exit it took: grow a side trace or invalidate."""
        if self.tiering is not None:
            self.tiering.before_entry(tree)
        return self.exited(frame, self.runner.call(frame, tree, buffer))

    def exited(self, frame: Frame, exit: ExitDescriptor) -> int:
        """Act on the exit native code took: grow a side trace or invalidate; the pc to go on from."""
        if exit.leaves_loop and exit.when_hot is not WhenHot.INVALIDATE:
            return exit.pc  # (the usual way out of a hand-off: nothing grows from it)
        if exit.when_hot is WhenHot.ROOT:
            if exit.taken >= self.options.side_exit_threshold and exit.tree is not None:
                self.wants_root(exit)
            return exit.pc
        if exit.when_hot is WhenHot.PEER:
            if exit.taken >= self.options.side_exit_threshold and exit.tree is not None:
                self.wants_peer(exit)
            return exit.pc
        if exit.taken >= max(exit.retry_at, self.options.side_exit_threshold) and exit.tree is not None:
            if exit.when_hot is WhenHot.INVALIDATE:
                self._count_rebinding(exit)
                self.registry.invalidate(exit.tree)
            elif exit.can_grow() and exit.side is None and self.options.side_exit_threshold:
                self.maybe_record_side(frame, exit)
        return exit.pc

    def _count_rebinding(self, exit: ExitDescriptor) -> None:
        """exit, a hoisted guard's, invalidates its tree: if it guards that a global of the function still binds a
        number, list or tuple, and that global has invalidated a tree before, the global is rebound as a rule
        (a helper the loop calls updates it, ...): from now on traces read it from the dict at each use, as
        they read the globals the function stores (``volatile_globals``), instead of pinning it by a guard
        whose failure invalidates the tree again and again."""
        if exit.trace is None:
            return
        globals_ = self.function.globals
        for uop in exit.trace.trace.hoisted:
            if uop.exit is None or uop.exit.id != exit.id:
                continue
            if uop.name == "_GUARD_CLASS_VERSION":
                self._count_class_change(uop.operand.klass)
                return
            if uop.name == "_GUARD_NP_ERRSTATE":
                self.errstate_changes += 1
                return
            if uop.name != "_GUARD_GLOBAL":
                continue
            binding = uop.operand
            if binding.namespace not in (None, globals_) or type(globals_.get(binding.name)) not in _VOLATILE_TYPES:
                return
            self.rebindings[binding.name] += 1
            if self.rebindings[binding.name] >= 2:
                self.volatile_globals.add(binding.name)
            return

    def _count_class_change(self, klass: type) -> None:
        """A class whose version guard invalidated a tree: where it did so before, the class is changed as a rule
        (a counter kept on it, `Money.calls += 1`, which gives it a new version tag each time): from now on traces
        do not specialize on it (``unstable_classes``: its loads, stores, method calls and instances take the
        generic path, which guards no version), instead of guarding a version that fails at every entry."""
        self.class_changes[id(klass)] += 1
        if self.class_changes[id(klass)] >= 2:
            self.unstable_classes.add(klass)

    # --- a root tree for a state no tree takes --------------------------------------------------------
    def wants_root(self, exit: ExitDescriptor) -> None:
        """exit, where a trace ends at its loop's header with a state no tree's entry type map takes (an owned
        int object in a slot the trees do not name, a slot of another kind: WhenHot.ROOT), is hot: jump into a
        tree that takes it now, if one was installed since; else let the header record one (TraceMonkey's
        type-specialized trees: one root per entry type map, up to max_trees_per_loop), rather than grow side
        traces from it, each of which would end there the same way."""
        if exit.linked_tree is not None or exit.trace is None or exit.trace.trace.wanted_entry is None:
            return
        if exit.roots_asked >= 2:
            return  # (the roots recorded for it did not take it: a loop ended while recording, a kind that varies)
        loop = exit.trace.trace.loop.index
        wanted = exit.trace.trace.wanted_entry
        for tree in self.registry.trees[loop]:
            if self.registry.link_to_tree(exit, tree):
                self.root_requests.pop(loop, None)
                return
            if all(tree.entry_kinds.get(slot) == kind for slot, kind in wanted.items()):
                return  # (a root for it exists, and does not take the rest of its state: another would not either)
        self.root_requests.setdefault(loop, exit)

    def wants_peer(self, exit: ExitDescriptor) -> None:
        """exit, a root's hoisted guard on a value of its entry (the function a variable holds), fails at the entry
        often: another value is there (`integrate(f2, ...)` after `integrate(f1, ...)`). Let the header record a
        peer root tree for the loop, with the same entry type map, which the exit then jumps into (linked to the
        tree recorded for it only, never to an older one: no exit can lead back to its own tree). Peers take at most
        half of max_trees_per_loop, so that entry type maps keep room for their trees (a loop with no room left
        for one stops recording). Beyond that, or where the peers asked for did not take the value, the exit grows
        a side trace instead, as a transient guard's does (each iteration then enters the tree and leaves for the
        side trace: about 8 ns an iteration, against 0.75 ns in a peer, on a float sum calling `c * x * x`)."""
        if exit.linked_tree is not None or exit.trace is None:
            return
        state = self.loops[exit.trace.trace.loop.index]
        peers_full = state is None or len(state.trees) >= self.options.max_trees_per_loop // 2
        if state is None or peers_full or exit.roots_asked >= 2 or not self._may_add_tree(state):
            exit.when_hot = WhenHot.SIDE
            return
        self.root_requests.setdefault(exit.trace.trace.loop.index, exit)

    def records_wanted_root(self, frame: Frame, state: LoopState, pc: int) -> bool:
        """At a loop header with a request of wants_root: record the root tree it asks for, if the frame's slots
        hold what that exit's state held in the slots it must name (and the loop may record)."""
        index = state.loop.index
        exit = self.root_requests.get(index)
        if exit is None:
            return False
        if exit.tree is None or exit.trace is None or exit.linked_tree is not None or not self._may_add_tree(state):
            self.root_requests.pop(index, None)  # (gone, linked meanwhile, or no room for another tree)
            return False
        peer = exit.when_hot is WhenHot.PEER
        wanted = exit.tree.entry_kinds if peer else exit.trace.trace.wanted_entry
        slots = frame.slots
        if any(_root_kind(slots[slot]) != kind for slot, kind in wanted.items()):
            return False  # (the state it needs comes again when the exit is taken again)
        if not self.may_record(state) or not state.start():
            return False
        self.root_requests.pop(index, None)
        exit.roots_asked += 1
        self.recordings += 1
        recorder = Recorder(self, frame, state.loop, pc + 1, entry=wanted)
        recorder.peer_of = exit if peer else None
        frame.trace_hook = recorder
        return True

    def link_to_new_tree(self, tree: Tree) -> None:
        """A root tree was installed: the exits of its loop's trees that end at its header with a state it takes
        (WhenHot.ROOT) jump into it from now on."""
        registry = self.registry
        for other in list(registry.trees[tree.loop.index]):
            for compiled in other.traces():
                if compiled.trace.wanted_entry is None:
                    continue
                for exit in compiled.exits:
                    if exit.when_hot is WhenHot.ROOT and exit.linked_tree is None:
                        registry.link_to_tree(exit, tree)

    # --- what the recorder asks (jit.interfaces.RecordingHost) -----------------------------------------
    @internal
    def run_inlined(self, function: Any, code: T1Code, slots: list[Any], hook: Any) -> Any:
        frame = Frame(CalleeFunction(function, prepare_args(code)), code, slots)
        frame.trace_hook = hook
        try:
            return run(frame)
        except Exception as exc:
            # (the caller's CALL may raise it as it is, jit.inline.Raises: its traceback from the callee's line on)
            clean_traceback(exc)
            raise

    def run_tree_while_recording(self, frame: Frame, tree: Tree) -> tuple[ExitDescriptor, int]:
        exit = self.runner.run(frame, tree)
        return exit, exit.pc

    def tree_for(self, loop: int, frame: Frame) -> Tree | None:
        state = self.loops[loop]
        if state is None or not state.trees:
            return None
        return self.registry.tree_for(loop, self.runner.tags(frame))  # the same tags the entry itself will use

    def compiling(self, loop: int) -> bool:
        """Is a trace of loop on its way from the background compiler: a tree, or a side trace of one of its
        trees?"""
        if not self.pending:
            return False
        state = self.loops[loop]
        if state is None:
            return False
        return state.compiling or any(
            exit.life.compiling for tree in state.trees for compiled in tree.traces() for exit in compiled.exits
        )

    def why_no_tree(self, loop: int) -> Reason:
        state = self.loops[loop]
        if state is None:
            return Reason.INNER_FIRST  # (not hot by itself yet: the abort makes it hot)
        if state.compiling and self.pending > 0:
            return Reason.INNER_COMPILING
        if state.recording:
            return Reason.INNER_BUSY
        if state.blacklisted or not self._may_add_tree(state):
            return Reason.INNER_NOT_COMPILED
        return Reason.INNER_FIRST

    def trees_at(self, loop: int) -> list[Tree]:
        return list(self.registry.trees[loop])

    # --- when to record --------------------------------------------------------------------------------
    def may_record(self, state: LoopState) -> bool:
        if state.recording or state.blacklisted or not self.options.threshold:
            return False
        if self.pending and self._enclosing_compiling(state):
            # an enclosing loop's tree is on its way from the background compiler: compiled synchronously, it would
            # run this loop from now on (calling its tree, or unrolled), and this header would record nothing. Its
            # visits meanwhile do not count: once the tree is there, it must get hot anew (distances: a loop of 3
            # trips unrolled into its outer loop's trace got a tree of its own, never entered)
            state.cooldown = max(state.cooldown, self.options.threshold)
            return False
        if state.waiting:
            if self.pending:
                return False
            state.waiting = False
        if state.waiting_on is not None:
            inner = state.waiting_on
            if inner.recording or self.compiling(inner.loop.index):
                return False
            state.waiting_on = None
        if state.cooldown > 0:
            state.cooldown -= 1
            return False
        if not self._may_add_tree(state):
            self.limits_hit["max_trees_per_loop"] += 1
            self.blacklist(state)
            return False
        return True

    def _enclosing_compiling(self, state: LoopState) -> bool:
        """Is a root trace of a loop enclosing state's being compiled?"""
        loops = self.code.loops
        parent = state.loop.parent
        while parent is not None:
            outer = self.loops[parent]
            if outer is not None and outer.compiling:
                return True
            parent = loops[parent].parent
        return False

    def _may_add_tree(self, state: LoopState) -> bool:
        """Is loop state below its limit of trees (max_trees_per_loop live, twice that ever made)?"""
        limit = self.options.max_trees_per_loop
        return len(state.trees) < limit and state.made < 2 * limit

    def maybe_record_side(self, frame: Frame, exit: ExitDescriptor) -> None:
        tree = exit.tree
        assert tree is not None
        if not tree.valid:
            return
        if len(tree.side_traces) >= self.options.max_side_traces:
            self.limits_hit["max_side_traces"] += 1
            exit.life.blacklist()
            return
        if tree.joins_from(exit) and tree.side_on_its_way(exit):
            # a side trace from another exit of the tree is on its way (compiling in the background; recorded or
            # compiled by another thread): lowered now, this one would not be joined with it (codegen.joined), and
            # the loop would run in two functions that jump into each other where compiling synchronously makes one
            # (histogram: its steady state 2.3x as slow with sync_compile=False). Record it once that one is
            # installed: the same code as with sync_compile, which records it only then too
            exit.retry_at = exit.taken + self.options.side_exit_threshold
            self.sides_postponed += 1
            return
        if not exit.life.start():
            return  # another thread records from this exit right now
        if exit.side is not None:
            # the background compiler hung a side trace from it since the caller looked (it does so before the
            # exit is idle again: a start that wins sees it)
            exit.life.aborted()
            return
        self.recordings += 1
        frame.trace_hook = Recorder(self, frame, tree.loop, exit.pc, parent=exit)

    def recording_aborted(self, recorder: Recorder, abort: Abort) -> None:
        trace = recorder.trace
        where = f"{trace.kind} trace of the loop at line {trace.loop.line}, at line {recorder.line}"
        self.abort_reasons[f"{where}: {abort}"] += 1
        self.abort_codes[abort.reason.code] += 1
        inner_first = self._record_inner_first(abort)
        retry = abort.retry
        options = self.options
        # an inner loop without a tree yet, while traces of this function compile in the background: its tree is
        # probably among them; try again a little later, not counting a failure
        waiting = abort.reason is Reason.INNER_FIRST and self.pending > 0
        # an inner loop another thread records or compiles right now, or whose tree compiles in the background: its
        # tree is on its way (bad timing, which warm-up from several threads at once meets all the time: not a
        # failure, and no recording until then; but right then, as when compiling synchronously: waiting for
        # every compilation of the function, the outer loop's recording came later, and in the meantime its
        # inner loops' trees were entered from CPython at every outer iteration and grew trees of their own)
        busy = self._inner_busy(abort)
        if trace.kind is TraceKind.ROOT:
            state = self.loops[trace.loop.index]
            assert state is not None
            state.aborted()
            if waiting:
                state.waiting = True  # (may_record: not before the background compiler is done)
                return
            if busy is not None:
                state.waiting_on = busy  # (may_record: not before that recording is done)
                return
            if retry and state.retries < _MAX_RETRIES:
                state.retries += 1
                if inner_first:  # (the next outer iteration runs the inner loop from its start: it records then)
                    state.cooldown = 1
                return
            state.aborts += 1
            if state.aborts >= options.max_aborts:
                self.blacklist(state)
            else:
                state.cooldown = options.threshold << state.aborts
        else:
            exit = trace.parent_exit
            exit.life.aborted()
            if waiting or busy is not None or inner_first:
                # (bounded: the inner loop gets a tree or fails to, and then the abort is INNER_NOT_COMPILED)
                exit.retry_at = exit.taken + options.side_exit_threshold
                return
            exit.aborts += 1
            if exit.aborts >= options.max_aborts:
                exit.life.blacklist()
            else:
                exit.retry_at = exit.taken + (options.side_exit_threshold << exit.aborts)

    def _record_inner_first(self, abort: Abort) -> bool:
        """An outer recording reached an inner loop that has no tree for the types it met (a comprehension, a
        loop too short to get hot by itself, a new type map): let the inner loop record at its next header, in
        the iteration the interpreter finishes now (True: the outer abort is bad timing, INNER_FIRST)."""
        if abort.reason is not Reason.INNER_FIRST:
            return False
        self.loop_is_hot(abort.params["loop"])
        return True

    def _inner_busy(self, abort: Abort) -> LoopState | None:
        """The inner loop's state, if the abort says another thread records or compiles it right now, or that its
        tree compiles in the background."""
        if abort.reason is not Reason.INNER_BUSY and abort.reason is not Reason.INNER_COMPILING:
            return None
        index = abort.params["loop"]
        state = self.loops[index]
        return state if state is not None and (state.recording or self.compiling(index)) else None

    def blacklist(self, state: LoopState) -> None:
        state.blacklist()
        if not state.trees:
            self.function.hot_loops[state.loop.index] = None  # the interpreter stops asking
        hot = [s for s in self.loops if s is not None]
        if all(s.blacklisted and not s.trees for s in hot):
            # nothing of this function runs natively, and tier-1 interpretation is slower than CPython:
            # from the next call on, run it as plain CPython
            lines = ", ".join(str(s.loop.line) for s in hot)
            self.function.give_up(f"no loop compiles (loops at line {lines} were blacklisted)")

    def reprobe(self, loop: int) -> None:
        """Let blacklisted loop `loop` (which has no tree) record again, once: what made its recordings fail
        may be gone (the CPython baseline's loop driver calls this after running the loop plain for a
        back-off, so no decision not to compile is for good)."""
        state = self.loops[loop]
        if state is None or state.trees or not state.reprobe():
            return  # another thread reprobed it a moment ago
        state.aborts = max(self.options.max_aborts - 1, 0)  # one more failure blacklists it again
        state.retries = 0
        state.cooldown = 0
        self.function.hot_loops[loop] = state
        self.function.revive()

    # --- what to do with a recorded trace --------------------------------------------------------------
    def recording_finished(self, recorder: Recorder, trace: Trace) -> None:
        """Optimize trace and lower it to LLVM IR (here: Python code), then compile it with LLVM and install
        it: here too with sync_compile, else in the background (jit.background) while this thread goes on
        interpreting, entering the code once it is installed."""
        registry = self.registry
        if recorder.generalized and trace.kind is TraceKind.SIDE:
            # an attribute site went megamorphic in this side trace: rather than hang it behind the class guards
            # of its tree, record the tree anew, taking the generic path there from its root on
            trace.parent_exit.life.aborted()
            if trace.parent_exit.tree is not None:
                registry.invalidate(trace.parent_exit.tree)
            return
        self._life(trace).compile()
        if not self.has_barriers and any(u.op.barrier for u in trace.uops):
            self.has_barriers = True  # (jit.recorder.generic.keep_carried: later traces hand over references)
        with registry.lock:
            registry.compiling += 1
        depth = recorder.depth
        try:
            lowered, exits = self.lower(trace)
        except Exception as exc:
            with registry.lock:
                registry.compiling -= 1
            self._compiler_error(recorder, exc)
            return
        if not self.sync_compile:
            with self._pending_lock:
                self.pending += 1
            job = functools.partial(self._compile_in_background, recorder, trace, lowered, exits, depth)
            if background.compiler().submit(job):
                return
            with self._pending_lock:
                self.pending -= 1  # (the interpreter is exiting: compile here)
        self._compile_and_install(recorder, trace, lowered, exits, depth)

    def lower(self, trace: Trace) -> tuple[LoweredTrace, list[ExitDescriptor]]:
        """Optimize trace, number its exits and lower it to LLVM IR."""
        start = time.perf_counter()
        optimize(trace)
        optimized = time.perf_counter()
        registry = self.registry
        exits = registry.number_exits(trace)
        name = "".join(c if c.isalnum() else "_" for c in self.code.qualname)
        # (fixed width: listings align their columns on symbol lengths, and golden tests compare them; with a
        # code cache, the same in every process: the symbol is part of the module's text, so of the cache's key)
        suffix = self._stable_suffix if self.cache is not None else id(self) & 0xFFFF
        symbol = f"tj_{name}_{trace.kind}{trace.loop.index}_{registry.symbol_number()}_{suffix:04x}"
        join = None
        if trace.kind is TraceKind.SIDE and self.options.join_side_traces and trace.parent_exit.tree is not None:
            join = trace.parent_exit.tree.join_plan(trace, symbol)  # (codegen.joined)
        lowered = lower_trace(
            trace,
            symbol=symbol,
            layout=self.layout,
            globals_=self.function.globals,
            builtins_=self.function.builtins,
            active_address=self.runner.stubs_active_address,
            cache=self.cache,
            join=join,
        )
        lowered.phases = {"optimize": (optimized - start) * 1e3, "lower": (time.perf_counter() - optimized) * 1e3}
        return lowered, exits

    @functools.cached_property
    def _stable_suffix(self) -> int:
        """The last part of trace symbols with a code cache: from where the function is defined, not the address
        of this monitor (two functions of the same name in one process still get different ones, mostly)."""
        code = self.code
        return zlib.crc32(f"{code.filename}:{code.qualname}:{code.firstlineno}".encode()) & 0xFFFF

    def _compile_in_background(
        self, recorder: Recorder, trace: Trace, lowered: LoweredTrace, exits: list[ExitDescriptor], depth: int
    ) -> None:
        try:
            self._compile_and_install(recorder, trace, lowered, exits, depth)
        except BaseException:  # (a bug of tracejit's: never into the background thread's top level)
            if environment.debug():
                traceback.print_exc()
        finally:
            with self._pending_lock:
                self.pending -= 1

    def _compile_and_install(
        self, recorder: Recorder, trace: Trace, lowered: LoweredTrace, exits: list[ExitDescriptor], depth: int
    ) -> None:
        registry = self.registry
        try:
            try:
                level = self.tiering.level_for(trace) if self.tiering is not None else self.options.opt_level
                # (the newest code of what it calls or jumps into: jit.tiering may have swapped some since it was
                # lowered; a swap while it compiles is caught later, Tiering.wanted)
                libraries = [registry.current_library(name) for name in lowered.dependencies]
                native = compile_lowered(lowered, level, self.cache, libraries)  # LLVM releases the GIL
            except Exception as exc:
                self._compiler_error(recorder, exc)
                return
            compiled = registry.add(trace, native, exits)
            if not native.module.cached:
                self.llvm_compiles += 1
            compiled.compile_ms = sum(lowered.phases.values()) + compiled.module.compile_ms
            self.compiled.append((trace.kind, compiled.compile_ms, compiled.module.code_bytes))
            for phase, ms in (*lowered.phases.items(), *compiled.module.phases.items()):
                self.compile_phases[phase] = self.compile_phases.get(phase, 0.0) + ms
            trace_kinds = [kind for kind in self.dump_kinds if kind != "trees"]  # (trees: once it is installed)
            if trace_kinds:
                sys.stderr.write(dump_trace(self, compiled, trace_kinds))
            with registry.lock:
                if registry.stale(compiled):
                    # a tree it calls, jumps into or hangs from was invalidated meanwhile: drop it quietly
                    registry.discard(compiled)
                    self._life(trace).aborted()
                    return
                if trace.kind is TraceKind.ROOT:
                    state = self.loops[trace.loop.index]
                    assert state is not None
                    tree = registry.install_root(compiled, state.loop, depth)
                    self.link_to_new_tree(tree)
                    if recorder.peer_of is not None:  # (the exit whose request this peer answers jumps into it)
                        registry.link_to_tree(recorder.peer_of, tree)
                    state.made += 1
                    state.aborts = 0
                    state.installed()  # only now: until the tree is installed, no other thread records it
                else:
                    registry.install_side(compiled)
                    # only now: the user's thread reads neither lock nor life cycle before growing a side trace
                    # from a hot exit (Monitor.exited), only whether the exit has one and is idle; idle first, it
                    # recorded a second side trace from the same exit between the two (the background compiler)
                    trace.parent_exit.life.installed()
        finally:
            with registry.lock:
                registry.compiling -= 1
        if "trees" in self.dump_kinds:
            sys.stderr.write(trees_text(self) + "\n")

    def _compiler_error(self, recorder: Recorder, exc: Exception) -> None:
        detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
        self.recording_aborted(recorder, Abort(Reason.COMPILER_ERROR, detail=detail))
        if environment.debug():
            traceback.print_exc()

    def _life(self, trace: Trace) -> Lifecycle:
        """The life cycle trace was recorded in: its loop header's (a root trace) or its parent exit's."""
        if trace.kind is TraceKind.ROOT:
            state = self.loops[trace.loop.index]
            assert state is not None
            return state
        return trace.parent_exit.life  # type: ignore[no-any-return]

    # --- what jit.stats, jit.dump and the loop driver read ---------------------------------------------
    @property
    def traces(self) -> list[CompiledTrace]:
        """The traces whose code is held (not yet freed)."""
        return self.registry.traces

    @property
    def growth(self) -> int:
        """Recordings started plus traces compiled: the loop driver does not judge whether a hand-off's native
        entries paid if either happened during it (its trees were growing: with the background compiler, a side
        trace may arrive in a hand-off that did not record it, after many entries that left where it now
        goes on; measured: histogram's loop sent back to CPython for good, 300 times slower)."""
        return self.recordings + len(self.compiled)

    @property
    def invalidated(self) -> int:
        return self.registry.invalidated

    @property
    def native_entries(self) -> int:
        return self.runner.native_entries

    @property
    def native_iterations(self) -> int:
        return self.runner.native_iterations

    @property
    def exits_to_interpreter(self) -> int:
        return self.runner.exits_to_interpreter

    def live_trees(self) -> list[Tree]:
        return self.registry.live_trees()


_MAX_RETRIES = 32  # recordings that ended by bad timing, before they count as failures


__all__ = ["Monitor"]
