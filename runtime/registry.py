"""The tree registry of one function: installs what the backend built, invalidates trees and frees their code.

It numbers exits function-wide (the number is what native code returns), turns the backend's ``NativeCode``
into an installed ``CompiledTrace``, hangs root traces at their loop header as trees and side traces from their
parent exit (patching the exit's link pointer), and keeps the graph of calls and jumps between trees, so that
invalidating a tree invalidates every tree that calls it or jumps into it. Invalidated trees wait in the
graveyard until no native code of the function runs (``runtime.runner`` frees them then). Which trees to
record, install or invalidate is the monitor's policy (``jit.monitor``); this module does it.
"""

from __future__ import annotations

import itertools
import threading

from codegen.compile import NativeCode
from codegen.ownership import Ownership
from jit.frontend.instructions import LoopInfo
from jit.trace import Trace
from runtime.exits import ExitDescriptor, describe
from runtime.trees import CompiledTrace, Tree


class TreeRegistry:
    def __init__(self, nloops: int) -> None:
        self.trees: list[list[Tree]] = [[] for _ in range(nloops)]  # per loop header, its live trees
        self.exits: list[ExitDescriptor] = []  # every exit of every compiled trace, by number
        self.traces: list[CompiledTrace] = []  # the traces whose code is held (not yet freed)
        self.graveyard: list[Tree] = []  # invalidated trees whose code is still held
        self.invalidated = 0
        # per loop, the loop driver's plan of its hand-offs into native code (runtime.loop_driver), made from its
        # trees: dropped whenever they change (a tree installed or invalidated, a side trace installed); and how
        # many times they were dropped (a plan made meanwhile is not kept)
        self.plans: list[object] = [None] * nloops
        self.plans_dropped = 0
        self._numbering = threading.Lock()  # (two threads may compile at once)
        # traces lowered so far: the number in each trace's symbol. Not the number of traces held, which goes
        # down when one is freed (an invalidated tree, a discarded compile) and does not count traces being
        # lowered meanwhile: a later trace got the symbol of one still linked, and a side trace's jump or a
        # tree's call, linked by symbol, reached the other one (a wrong result, found by the generated programs)
        self._lowered = itertools.count()
        # installing and invalidating are atomic with respect to each other (the background compiler installs
        # while the user's threads run, and may invalidate)
        self.lock = threading.RLock()
        # traces being compiled: the code of invalidated trees, which they may link against, is not freed
        # meanwhile
        self.compiling = 0
        # JIT libraries whose traces were compiled again (swap): each old library's name -> its successor's
        self.successors: dict[str, str] = {}

    # --- installing ------------------------------------------------------------------------------------
    def number_exits(self, trace: Trace) -> list[ExitDescriptor]:
        """Describe and number trace's exits (setting each exit point's id), in trace.exits() order."""
        owned = Ownership(trace).handed_with_reference  # (the values a side trace recorded from an exit starts owning)
        with self._numbering:
            exits = []
            for point in trace.exits():
                exit = describe(trace, point, len(self.exits), owned)
                point.id = exit.id
                self.exits.append(exit)
                exits.append(exit)
        return exits

    def symbol_number(self) -> int:
        """The number of the next trace's symbol: never one another trace of this function had."""
        with self._numbering:
            return next(self._lowered)

    def add(self, trace: Trace, native: NativeCode, exits: list[ExitDescriptor]) -> CompiledTrace:
        """The compiled trace of trace (its exits numbered by number_exits), held until it is freed."""
        compiled = CompiledTrace.install(trace, native, exits)
        self.traces.append(compiled)
        return compiled

    def discard(self, compiled: CompiledTrace) -> None:
        """Drop compiled, which will not be installed (held, not installed, since add)."""
        with self.lock:
            self.traces = [t for t in self.traces if t is not compiled]

    def stale(self, compiled: CompiledTrace) -> bool:
        """Was something compiled was built against invalidated while it compiled (the trees it calls or jumps
        into, a side trace's own tree)? Then it must not be installed. (Call with the lock held.)"""
        trace = compiled.trace
        used = _trees_used(trace, "_CALL_TREE") + _trees_used(trace, "_JUMP_TO_TREE")
        if trace.parent_exit is not None:
            parent: ExitDescriptor = trace.parent_exit
            if parent.tree is None or parent.trace is None:
                return True
            used.append(parent.tree)
        return not all(tree.valid for tree in used)

    def install_root(self, compiled: CompiledTrace, loop: LoopInfo, depth: int) -> Tree:
        """A new tree at loop's header, rooted at compiled; depth: how deep the trees it calls nest."""
        tree = Tree(loop, compiled, depth=1 + depth, calls=_trees_used(compiled.trace, "_CALL_TREE"))
        for exit in compiled.exits:
            exit.tree = tree
        for target in _trees_used(compiled.trace, "_JUMP_TO_TREE"):
            target.jumpers.append(tree)
            tree.jumps_to.append(target)
        self.trees[loop.index].append(tree)
        self.drop_plans()
        return tree

    def install_side(self, compiled: CompiledTrace) -> None:
        """Hang side trace compiled from its parent exit and link the exit's stub to it. The trees that call
        its tree are out of date, and invalidated, if it assigns slots its tree did not, if it leaves the loop
        (a way out they do not follow yet), or if they follow its parent exit (which no longer returns)."""
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
                if target not in tree.jumps_to:
                    tree.jumps_to.append(target)
        compiled.parent = parent
        parent.side = compiled
        self.drop_plans()  # (what the monitor allows may have changed: native_handoffs)
        ran_python = any(t.runs_python() for t in tree.entered_from())
        grew = tree.add_side_trace(compiled)
        parent.trace.link(parent, compiled)
        tree.join_entry(compiled)
        leaves = any(exit.leaves_loop for exit in compiled.exits)
        # (a jump into a peer tree: the callers now meet that tree's ways out of the loop too)
        jumps = any(target is not tree for target in _trees_used(compiled.trace, "_JUMP_TO_TREE"))
        callers = [caller for entered in tree.entered_from() for caller in entered.callers]
        for caller in callers:
            if grew or leaves or jumps:
                self.invalidate(caller)
        if not ran_python and tree.runs_python():
            # (a call of the tree may run Python code now: its callers, and theirs, did not check their hoisted
            # guards again after it, jit.recorder.recorder.at_loop_header)
            for caller in tree.observers():
                self.invalidate(caller)
        for caller in tree.observers():  # (a caller's caller, or a caller of a tree jumping here, may follow it)
            if caller.valid and _follows(caller, parent.id):
                self.invalidate(caller)

    def link_to_tree(self, exit: ExitDescriptor, tree: Tree) -> bool:
        """Patch exit (where a trace ends at its loop's header, WhenHot.ROOT) to jump into tree's root, if its
        state fits tree's entry type map (``CompiledTrace.takes``): as a side trace's _JUMP_TO_TREE, tree is then
        one its own tree jumps into (invalidated with it), and the callers of its own tree, which now meet tree's
        ways out of the loop too (and no longer see the exit return), are invalidated."""
        with self.lock:
            owner, compiled = exit.tree, exit.trace
            if owner is None or compiled is None or not owner.valid or exit.linked_tree is not None:
                return False
            if not compiled.takes(exit, tree):
                return False
            compiled.link(exit, tree.root)
            exit.linked_tree = tree
            self.drop_plans()
            if tree is not owner:
                tree.jumpers.append(owner)
                if tree not in owner.jumps_to:
                    owner.jumps_to.append(tree)
            # (and the exit no longer returns: a caller may have gone on from it)
            for caller in [caller for entered in owner.entered_from() for caller in entered.callers]:
                self.invalidate(caller)
            return True

    def current_library(self, name: str) -> str:
        """The JIT library that holds the newest code of the traces library name held (itself if they were
        never compiled again): it exports the same symbols."""
        while name in self.successors:
            name = self.successors[name]
        return name

    def swap(self, natives: list[tuple[CompiledTrace, NativeCode]]) -> bool:
        """Let each installed trace run its new code (the same trace compiled again at another level:
        ``jit.tiering``), all at once: its trees' entries, and every link pointer into or out of it, then
        point at the new code; the old code stays linked (``CompiledTrace.retired``). False (nothing swapped)
        if one of them is no longer installed (its tree was invalidated while they compiled)."""
        with self.lock:
            for compiled, _ in natives:
                tree = compiled.tree
                if tree is None or not tree.valid or not any(t is compiled for t in tree.traces()):
                    return False
            swapped: set[int] = set()
            for compiled, native in natives:
                self.successors[compiled.module.library] = native.module.library
                compiled.swap(native)
                swapped.add(id(compiled))
                assert compiled.tree is not None
                if compiled.tree.root is compiled:
                    compiled.tree.refresh()
            for tree in self.live_trees():  # (the links are patched at run time, not by symbol)
                for compiled in tree.traces():
                    for exit in compiled.exits:
                        target = exit.side if exit.side is not None else None
                        if target is None and exit.linked_tree is not None:
                            target = exit.linked_tree.root
                        if target is not None and (id(compiled) in swapped or id(target) in swapped):
                            compiled.patch(exit, target)
            self.drop_plans()  # (the hand-offs from CPython: made again for the new entry stubs)
            return True

    def drop_plans(self) -> None:
        """The trees changed: the loop driver plans its hand-offs again (call with the lock held)."""
        self.plans[:] = [None] * len(self.plans)
        self.plans_dropped += 1

    # --- invalidating and freeing ----------------------------------------------------------------------
    def invalidate(self, tree: Tree) -> None:
        """Stop using tree and everything that calls it or jumps into it; free their code when idle."""
        with self.lock:
            self._invalidate(tree)

    def _invalidate(self, tree: Tree) -> None:
        if not tree.valid:
            return
        tree.valid = False
        self.invalidated += 1
        trees = self.trees[tree.loop.index]
        if tree in trees:
            trees.remove(tree)
        self.drop_plans()
        self.graveyard.append(tree)
        for other in [*tree.callers, *tree.jumpers]:
            self._invalidate(other)

    def free_graveyard(self) -> None:
        """Drop invalidated trees' code (only when no native code of this function is running, and no trace of
        it is being compiled: it may link against them)."""
        with self.lock:
            if not self.compiling:
                self._free_graveyard()

    def _free_graveyard(self) -> None:
        dead = {id(t) for tree in self.graveyard for t in tree.traces()}
        self.traces = [t for t in self.traces if id(t) not in dead]
        for tree in self.graveyard:
            for compiled in tree.traces():
                for exit in compiled.exits:
                    exit.trace = exit.tree = exit.side = exit.linked_tree = None
            for callee in tree.calls:
                if tree in callee.callers:
                    callee.callers.remove(tree)
            for live in self.live_trees():
                if tree in live.jumpers:
                    live.jumpers.remove(tree)
                if tree in live.jumps_to:
                    live.jumps_to.remove(tree)
        self.graveyard.clear()

    # --- looking up ------------------------------------------------------------------------------------
    def live_trees(self) -> list[Tree]:
        return [tree for trees in self.trees for tree in trees]

    def tree_for(self, loop: int, tags: bytes) -> Tree | None:
        """The tree at loop's header whose entry type map matches the buffer's tags, if any."""
        for tree in self.trees[loop]:
            if tree.matches(tags):
                return tree
        return None


def _follows(caller: Tree, exit_id: int) -> bool:
    """Does a trace of caller go on after a tree call that left through exit exit_id?"""
    for compiled in caller.traces():
        for uop in compiled.trace.uops:
            if uop.name == "_GUARD_TREE_EXIT" and uop.operand.exit == exit_id:
                return True
    return False


def _trees_used(trace: Trace, uop_name: str) -> list[Tree]:
    out: list[Tree] = []
    for uop in trace.uops:
        if uop.name == uop_name:
            tree = uop.operand.tree if uop_name == "_CALL_TREE" else uop.operand
            if tree not in out:
                out.append(tree)
    return out
