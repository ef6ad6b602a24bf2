"""Tiered compilation (issue 9: compile time): cheap code first, optimized code once a tree is hot.

With ``@jit(tier_up_threshold=N)`` (N > 0, ``opt_level`` > 0), every trace is first compiled at optimization
level 0: no IR passes, LLVM's fast instruction selection and register allocation (measured on the benchmark
kernels' traces, CPU time: 9.1 ms per trace, median over kernels, instead of 21.6 at level 2; the lowering in
Python, about 5 ms of it, is paid once). Code at level 0 is 1.1 to 28 times slower (measured on the kernels:
most 2-9x; 28x where level 2 vectorizes), so once a tree's entries from Python (the interpreter, or a hand-off
from CPython) have run N native iterations (``Tree.iterations``), its next entry first compiles it again at the
function's ``opt_level`` with the trees its code may reach (those it calls or jumps into, transitively:
``Tree.reached``), and the new code replaces the old (``TreeRegistry.swap``). Asked before an entry, not after
an exit: no native frame of that entry exists yet, and an interruption (Ctrl-C during the compilation) leaves
no exit half handled.

Why a family at once: an outer tree calls an inner tree's root, and a side trace jumps into its tree's root, by
symbol, resolved when its library is linked. A trace compiled again is the same module text (same symbols,
exits, counters) linked as a new JIT library against the newest libraries of what it depends on
(``TreeRegistry.current_library``), roots before side traces and callees before callers, so the new code calls
and jumps only into new code; link pointers (side traces, jumps into other trees) are patched at run time and
are set again by the swap. The old libraries stay linked as long as their traces are held
(``CompiledTrace.retired``): a native frame may still run in one (another thread, or an outer call below a
Python call that re-entered the function), and code compiled before the swap (an outer tree at level 0 that
calls a tree swapped since) still calls into them, until it is compiled again itself (when it gets hot). The two
levels compile the same IR, so results, exits and reference counts cannot differ.

A side trace of a tree whose code is all at the top level is compiled at the top level directly; one compiled
at level 0 meanwhile makes its tree's level 0 again (``Tree.opt_level``), and the tree's next hot entry
compiles just that trace again. So does a trace linked against a library that has a successor (lowered before a
swap and compiled after it, or compiled while it happened): its jumps by symbol would reach the old code, whose
link pointers no side trace installed since is in (measured: a side trace installed that way sent every other
iteration of letter_stats back to the interpreter, and the loop was handed back to CPython as not paying); at
most twice per trace (two roots jumping into each other would otherwise be compiled again in turn forever).
With ``sync_compile=False`` the compilation runs in the background compiler (``jit.background``), behind the
first compilations of traces, and the swap happens there; else on the thread about to enter the tree. A family
that fails to compile, or whose trees are invalidated while it compiles, keeps its code.
"""

from __future__ import annotations

import functools
import threading
import traceback
from typing import Any

from codegen.compile import NativeCode, compile_lowered
from jit import background, environment
from jit.trace import Trace, TraceKind
from runtime.trees import CompiledTrace, Tree

#: the optimization level traces are compiled at first (``jit.options.Options.first_opt_level``)
FIRST_LEVEL = 0
#: how many times a trace's code may be replaced (its first compilation again, then for a library swapped since)
MAX_RELINKS = 2


class Tiering:
    """The tiering policy of one function's monitor (made only where ``tier_up_threshold`` is on)."""

    def __init__(self, monitor: Any) -> None:
        self.monitor = monitor
        self.threshold: int = monitor.options.tier_up_threshold
        self.top: int = monitor.options.opt_level
        self.lock = threading.Lock()
        self.under_way: set[int] = set()  # trees (by id) whose family is being compiled again
        self.settled: dict[int, int] = {}  # trees (by id) with nothing to compile again, as of that many changes
        self.failed: set[int] = set()  # trees (by id) whose family failed to compile: never tried again
        # every trace compiled again: (symbol, ms, code bytes); where that time went (jit.stats)
        self.recompiled: list[tuple[str, float, int]] = []
        self.phases: dict[str, float] = {}
        self.swaps = 0  # families swapped in
        self.dropped = 0  # families compiled, not swapped (a tree of it was invalidated meanwhile)

    def level_for(self, trace: Trace) -> int:
        """The optimization level a new trace is compiled at: the top level for a side trace of a tree whose
        code is all at the top already, else the first level."""
        if trace.kind is TraceKind.SIDE:
            tree = trace.parent_exit.tree
            if tree is not None and tree.opt_level >= self.top:
                return self.top
        return FIRST_LEVEL

    def wanted(self, tree: Tree) -> bool:
        """Is code a call of tree may run (its traces, those of the trees it calls or jumps into) to be compiled
        again (``needs``)? Remembered until the trees change (``TreeRegistry.plans_dropped`` counts changes)."""
        registry = self.monitor.registry
        changes = registry.plans_dropped
        if self.settled.get(id(tree)) == changes:
            return False
        if any(self.needs(c) for t in tree.reached() for c in t.traces()):
            return True
        self.settled[id(tree)] = changes
        return False

    def needs(self, compiled: CompiledTrace) -> bool:
        """Is compiled's code to be compiled again: below the top level, or linked against a library whose code
        was compiled again since (a trace lowered or compiled while a swap happened: its calls and jumps by
        symbol reach the old code, whose link pointers do not see side traces installed since)?"""
        if compiled.opt_level < self.top:
            return True
        if len(compiled.retired) >= MAX_RELINKS:  # (a cycle of roots: see the module's docstring)
            return False
        current = self.monitor.registry.current_library
        return any(current(name) != name for name in compiled.libraries)

    def before_entry(self, tree: Tree) -> None:
        """tree is about to be entered from Python (no native frame of this entry yet: an interruption here
        leaves nothing half done): if its entries so far ran threshold iterations and code it may reach runs
        below the top level, compile that code again at the top level and swap it in (with sync_compile; else
        in the background, and this entry runs the code as it is)."""
        if tree.iterations < self.threshold or not tree.valid or not self.wanted(tree):
            return
        key = id(tree)
        with self.lock:
            if key in self.under_way or key in self.failed:
                return
            self.under_way.add(key)
        family = [t for t in tree.reached() if t.valid]
        todo = _compile_order([c for t in family for c in t.traces() if self.needs(c)], self.monitor)
        if any(c.lowered is None for c in todo):  # (not made by codegen.compile: nothing to compile again)
            todo = []
        if not todo:
            with self.lock:
                self.under_way.discard(key)
            return
        monitor = self.monitor
        if not monitor.sync_compile:
            if background.compiler().submit(functools.partial(self._in_background, tree, todo), later=True):
                return
        self._tier_up(tree, todo)

    def _in_background(self, tree: Tree, todo: list[CompiledTrace]) -> None:
        try:
            self._tier_up(tree, todo)
        except BaseException:  # (a bug of tracejit's: never into the background thread's top level)
            if environment.debug():
                traceback.print_exc()

    def _tier_up(self, tree: Tree, todo: list[CompiledTrace]) -> None:
        """Compile todo (tree's family's traces below the top level, in dependency order) again at the top
        level, then swap the new code in."""
        registry = self.monitor.registry
        with registry.lock:
            registry.compiling += 1  # (the graveyard's code, which they may link against, stays meanwhile)
        natives: list[tuple[CompiledTrace, NativeCode]] = []
        try:
            successors: dict[str, str] = {}  # (the libraries of this family's new code, not swapped in yet)
            for compiled in todo:
                lowered = compiled.lowered
                libraries = [registry.current_library(name) for name in lowered.dependencies]
                libraries = [successors.get(name, name) for name in libraries]
                try:
                    native = compile_lowered(lowered, self.top, self.monitor.cache, libraries)
                except Exception:
                    if environment.debug():
                        traceback.print_exc()
                    with self.lock:
                        self.failed.add(id(tree))
                    return
                successors[compiled.module.library] = native.module.library
                natives.append((compiled, native))
            if registry.swap(natives):
                self._count(natives)
            else:
                with self.lock:
                    self.dropped += 1
        finally:
            with registry.lock:
                registry.compiling -= 1
            with self.lock:
                self.under_way.discard(id(tree))

    def _count(self, natives: list[tuple[CompiledTrace, NativeCode]]) -> None:
        with self.lock:
            self.swaps += 1
            for compiled, native in natives:
                module = native.module
                compiled.tier_up_ms = module.compile_ms
                self.recompiled.append((compiled.symbol, module.compile_ms, module.code_bytes))
                for phase, ms in module.phases.items():
                    self.phases[phase] = self.phases.get(phase, 0.0) + ms
                if not module.cached:
                    self.monitor.llvm_compiles += 1


def _compile_order(traces: list[CompiledTrace], monitor: Any) -> list[CompiledTrace]:
    """traces in an order where each comes after those whose libraries it links against, where it can: roots
    (callees before callers, a root a bridge jumps into before the bridge), then side traces in the order
    they were installed (a joined side trace links against those before it). A cycle (two peer roots jumping
    into each other) is cut: the first one's new code jumps into the other's old code until it is compiled
    again (``Tiering.needs``)."""
    registry = monitor.registry
    roots = [c for c in traces if c.trace.kind is TraceKind.ROOT]
    sides = [c for c in traces if c.trace.kind is not TraceKind.ROOT]
    waiting = {c.module.library for c in roots}
    ordered: list[CompiledTrace] = []
    while roots:
        ready = next(
            (
                c
                for c in roots
                if not ({registry.current_library(d) for d in c.lowered.dependencies} & (waiting - {c.module.library}))
            ),
            roots[0],
        )
        roots.remove(ready)
        waiting.discard(ready.module.library)
        ordered.append(ready)
    return ordered + sides


__all__ = ["Tiering", "FIRST_LEVEL"]
