"""Trace trees: a loop header's compiled root traces (one per entry type map), the side traces hanging from
their exits, and the calls between trees of nested loops.

A tree is entered through its root's function; its side traces are reached only from its exit stubs (through
the per-exit link pointers patched here) and end by tail-jumping into a root. An outer tree calls an inner
tree's root directly (linked by symbol). Invalidating a tree invalidates every tree that calls it or jumps
into it, so no live tree ever runs stale code; invalidated code is freed once no native code of the function
is running. The tree registry (``runtime.registry``) installs, invalidates and frees trees.
"""

from __future__ import annotations

import ctypes
import dataclasses
import operator
from typing import Any

from codegen.compile import NativeCode
from codegen.engine import CompiledModule
from codegen.entry import HANDOFF_COUNTS
from codegen.function import call_entry_symbol, proven_entry_symbol
from codegen.joined import JoinedSide, JoinPlan, loop_symbol
from jit.frontend.instructions import LoopInfo
from jit.kinds import Kind
from jit.trace import Trace, TraceEnd, WhenHot
from runtime.exits import ExitDescriptor
from runtime.native import entry_function

NATIVE_FUNCTION = ctypes.PYFUNCTYPE(ctypes.c_int64, ctypes.c_void_p)


@dataclasses.dataclass(eq=False)
class CompiledTrace:
    """An installed trace: what the backend built for it (``codegen.compile.NativeCode``) and its exits'
    descriptors, in ``trace.exits()`` order."""

    trace: Trace
    symbol: str
    module: CompiledModule
    ir: str  # as generated
    exits: list[ExitDescriptor]
    links_address: int  # the array of per-exit link pointers
    keepalive: list[Any]
    entry_address: int = 0  # a root's entry stub (codegen.entry), if it has one
    vectorized: bool = False  # its loop's fast copy went through LLVM's loop vectorizer (codegen.engine)
    joined: tuple[str, ...] = ()  # a side trace's: the side traces joined with its tree's loop (codegen.joined)
    tree: Tree | None = None
    parent: ExitDescriptor | None = None  # side traces: the exit they hang from
    #: ms from its recording's end to its code: the trace optimizer, the lowering to LLVM IR, then LLVM
    #: (``module.compile_ms``)
    compile_ms: float = 0.0
    #: the optimization level its code was compiled at (``jit.tiering``: 0 first, then the function's opt_level)
    opt_level: int = 0
    #: what it was compiled from (``codegen.compile.LoweredTrace``), to compile it again at another level
    lowered: Any = None
    #: the modules of its earlier code, replaced by ``swap``: kept linked as long as the trace is held, since a
    #: native frame may still run in one (another thread, or a caller below), and code linked against it may
    #: still call or jump into it by symbol (an outer tree compiled before this one was compiled again)
    retired: list[CompiledModule] = dataclasses.field(default_factory=list)
    #: ms its compilation at a higher level took (``jit.tiering``; 0: never compiled again)
    tier_up_ms: float = 0.0
    #: the JIT libraries its code was linked against (``jit.tiering`` compiles it again if one of them has a
    #: successor: its calls and jumps by symbol still go to the old code)
    libraries: tuple[str, ...] = ()

    @classmethod
    def install(cls, trace: Trace, native: NativeCode, exits: list[ExitDescriptor]) -> CompiledTrace:
        """The compiled trace of trace from the backend's native code; exits: the descriptors of
        trace.exits(), numbered already (each learns its position in the trace and its trace)."""
        compiled = cls(
            trace=trace,
            symbol=native.symbol,
            module=native.module,
            ir=native.ir,
            exits=exits,
            links_address=native.links_address,
            keepalive=native.keepalive,
            entry_address=native.entry_address,
            vectorized=native.vectorized,
            joined=native.joined,
            opt_level=native.module.opt_level,
            lowered=native.lowered,
            libraries=native.libraries,
        )
        for index, exit in enumerate(exits):
            exit.index = index
            exit.trace = compiled
        return compiled

    @property
    def address(self) -> int:
        return self.module.addresses[self.symbol]

    def exit_counts(self) -> list[int]:
        """How often each exit was taken in native code (including jumps into linked side traces)."""
        counts = self.module.addresses.get(f"{self.symbol}_counts")
        if counts is None or not self.exits:
            return []
        return list((ctypes.c_int64 * len(self.exits)).from_address(counts))

    def fast_runs(self) -> int:
        """How often a versioned loop's fast copy was entered (jit.versions; 0 if the trace has none)."""
        runs = self.module.addresses.get(f"{self.symbol}_fast_runs")
        return ctypes.c_int64.from_address(runs).value if runs is not None else 0

    def swap(self, native: NativeCode) -> None:
        """Run native from now on: the same trace compiled again (the same IR, symbols and exits) at another
        optimization level. The old module stays linked (``retired``); its exit counters and fast-copy counter
        carry over. Its exits' link pointers are patched again by the caller (``TreeRegistry.swap``), once the
        traces they point to have their new code too."""
        assert native.symbol == self.symbol and native.ir == self.ir
        old = self.module
        counts = self.exit_counts()
        runs = self.fast_runs()
        self.retired.append(old)  # (before the new code is visible: nothing is dropped if this is interrupted)
        self.module = native.module
        self.links_address = native.links_address
        self.entry_address = native.entry_address
        self.opt_level = native.module.opt_level
        self.libraries = native.libraries
        if counts:
            (ctypes.c_int64 * len(counts)).from_address(self.module.addresses[f"{self.symbol}_counts"])[:] = counts
        if runs:
            ctypes.c_int64.from_address(self.module.addresses[f"{self.symbol}_fast_runs"]).value = runs

    def link(self, exit: ExitDescriptor, target: CompiledTrace) -> None:
        """Patch exit's stub so that it jumps straight into target."""
        assert (exit.can_grow() or target.trace.parent_exit is None) and self.exits[exit.index] is exit
        self.patch(exit, target)

    def patch(self, exit: ExitDescriptor, target: CompiledTrace) -> None:
        """Point exit's link pointer at target's code as it is now (linked before: ``link``)."""
        ctypes.c_void_p.from_address(self.links_address + 8 * exit.index).value = target.address

    def takes(self, exit: ExitDescriptor, tree: Tree) -> bool:
        """May exit (one of this trace's, where it ends at its loop's header with a state no tree took:
        WhenHot.ROOT) jump into tree's root, as a _JUMP_TO_TREE would? Every slot of tree's entry type map holds
        a value of that kind there, as far as the exit knows, and the map names every slot that holds an owned
        reference (Trace.wanted_entry), which the jump hands over."""
        trace = self.trace
        if exit.when_hot is WhenHot.PEER:  # (a root's hoisted guard, at its entry: the state is the entry's)
            return (
                tree.root is not self
                and tree.loop.index == trace.loop.index
                and tree.valid
                and (tree.entry_kinds == trace.entry_kinds)
            )
        if trace.wanted_entry is None or tree.loop.index != trace.loop.index or not tree.valid:
            return False
        # (at its end, the trace knows the kinds of the slots it read too: each was guarded where it read it)
        known = {**{slot: value.kind for slot, value in trace.entry_slots.items()}, **exit.known_kinds}
        entry = tree.entry_kinds
        return all(known.get(slot) == kind for slot, kind in entry.items()) and all(
            entry.get(slot) == kind for slot, kind in trace.wanted_entry.items()
        )


class Tree:
    def __init__(self, loop: LoopInfo, root: CompiledTrace, depth: int, calls: list[Tree]) -> None:
        self.loop = loop
        self.root = root
        self.entry_kinds: dict[int, Kind] = root.trace.entry_kinds
        self.carried_only = frozenset(root.trace.carried_only)
        # the slots whose int objects the buffer holds a reference to while the tree runs (codegen.ownership)
        self.owned_entry_slots = tuple(slot for slot, kind in self.entry_kinds.items() if kind == Kind.INT_OBJECT)
        slots = tuple(self.entry_kinds)
        kinds = tuple(int(kind) for kind in self.entry_kinds.values())
        # matching an entry type map: one C-level gather of the tags, one tuple comparison
        if len(slots) == 0:
            self.matches = lambda tags: True  # type: ignore[method-assign]
        elif len(slots) == 1:
            self._gather = operator.itemgetter(slots[0])
            self._expected: Any = kinds[0]
        else:
            self._gather = operator.itemgetter(*slots)
            self._expected = kinds
        self.symbol = root.symbol
        # what an outer trace calls (_CALL_TREE): the root's tree call entry, where it has one (codegen.function)
        call_entry = call_entry_symbol(root.symbol)
        self.call_symbol = call_entry if call_entry in root.module.addresses else root.symbol
        # or the loop's function of the side trace last joined with its loop, where that is an entry of the tree
        # (codegen.joined.loop_entry: set by join_entry)
        self.joined_entry: CompiledTrace | None = None
        self.refresh()
        self.side_traces: list[CompiledTrace] = []
        self.depth = depth  # 1 + the deepest tree it calls
        self.calls = calls
        self.callers: list[Tree] = []
        self.jumpers: list[Tree] = []  # trees with a trace that tail-jumps into this one
        self.jumps_to: list[Tree] = []  # the trees a trace of this one tail-jumps into
        self.valid = True
        # entries from the interpreter and CPython, and the iterations they ran (of this tree's loop and of the trees
        # it calls): those counted in Python, plus those of its hand-offs, which count themselves natively
        self.entries_counted = 0
        self.iterations_counted = 0
        self.handoff_counts = (ctypes.c_int64 * HANDOFF_COUNTS)()  # [entries, iterations] (codegen.entry)
        self.side_writes: set[int] = set()  # slots side traces assign
        for tree in calls:
            tree.callers.append(self)
        root.tree = self

    def refresh(self) -> None:
        """Take the root's code as it is now (made, or compiled again: ``CompiledTrace.swap``): the library later
        traces link against, the function and entry stub Python enters, the hand-off (made again at its next
        use)."""
        root = self.root
        # the entry that skips the guards of codegen.function.ENTRY_CHECKED, where it has one (codegen.python_epoch)
        proven = proven_entry_symbol(root.symbol)
        self.proven_call_symbol: str | None = proven if proven in root.module.addresses else None
        self.library = root.module.library
        self.function = NATIVE_FUNCTION(root.address)
        # the entry stub as a builtin: entry(slots) -> None (no match) or (exit, iterations, *stack)
        self.entry: Any = entry_function(root.entry_address, root.symbol) if root.entry_address else None
        # the hand-off from CPython (runtime.native.handoff_function), made at its first use; False: none. Made
        # for the entry stub at handoff_entry: one made while a swap replaced the stub (the background compiler
        # swaps while the user's thread plans its hand-offs) is made again at its next plan
        self.handoff: Any = None
        self.handoff_entry = 0

    @property
    def call_library(self) -> str:
        """The JIT library that defines call_symbol."""
        return self.joined_entry.module.library if self.joined_entry is not None else self.library

    def join_entry(self, side: CompiledTrace) -> None:
        """side, just installed, joined with the loop: outer trees compiled from now on call its loop's function,
        where it is an entry of the tree (``codegen.joined.loop_entry``), instead of the root's: the loop with the
        side traces joined in it (those compiled before go on calling what they call: the same loop, as it was)."""
        symbol = loop_symbol(side.symbol)
        if side.joined and symbol in side.module.addresses and self.call_symbol in (self.symbol, self._loop_symbol()):
            self.call_symbol = symbol
            self.joined_entry = side

    def _loop_symbol(self) -> str | None:
        return loop_symbol(self.joined_entry.symbol) if self.joined_entry is not None else None

    @property
    def opt_level(self) -> int:
        """The lowest optimization level among its traces' code (``jit.tiering``)."""
        return min(compiled.opt_level for compiled in self.traces())

    @property
    def entries(self) -> int:
        """Native entries from the interpreter and CPython."""
        return self.entries_counted + self.handoff_counts[0]

    @property
    def iterations(self) -> int:
        """The loop iterations those entries ran (of this tree's loop and of the trees it calls)."""
        return self.iterations_counted + self.handoff_counts[1]

    def matches(self, tags: bytes) -> bool:
        return self._gather(tags) == self._expected

    def matches_once_bound(self, tags: bytes) -> bool:
        """Would the entry type map match but for slots that are unbound now and that the root writes before
        it reads them (``Trace.carried_only``: one iteration run first binds them)?"""
        unbound = int(Kind.UNBOUND)
        waiting = False
        for slot, kind in self.entry_kinds.items():
            tag = tags[slot]
            if tag != kind:
                if tag != unbound or slot not in self.carried_only:
                    return False
                waiting = True
        return waiting

    def traces(self) -> list[CompiledTrace]:
        return [self.root, *self.side_traces]

    def writes_at(self, exit: ExitDescriptor) -> dict[int, tuple[Kind | None, bool]]:
        """The slots the tree may have changed in the buffer when it leaves through exit (one of its own):
        slot -> (kind, certain). At an exit of the root, slots it assigns late in an iteration (``jit.resume``
        says which), or only a side trace assigns, are uncertain (and so are those of the trees it may tail-jump into); at any other exit (of a side trace, or one
        the root takes after a tree it calls left another way than recorded), every slot the tree or a tree
        it calls may assign is, unless the exit knows its kind. A caller checks the uncertain ones' tags."""
        if exit.trace is self.root and exit.exact_writes:
            out = dict(exit.writes)
            # (the loop may have run in a peer tree a side trace jumps into, and come back to this root: what
            # those trees and their side traces assign is uncertain too; only this tree's side traces' writes
            # were counted, and an outer trace kept a variable a peer's side trace assigned in a register)
            for slot in sorted(self.slots_written() - self.root.trace.written):
                out[slot] = (None, False)
            return out
        out = {}
        for slot in sorted(self.slots_written()):
            kind = exit.known_kinds.get(slot)
            out[slot] = (kind, kind is not None)
        return out

    def reached(self) -> list[Tree]:
        """The trees whose code a call of this one may run: those it calls or tail-jumps into (a peer tree of
        its loop), and theirs, transitively (itself first)."""
        out: list[Tree] = [self]
        for tree in out:  # (grows while it is walked)
            for other in (*tree.calls, *tree.jumps_to):
                if other not in out:
                    out.append(other)
        return out

    def observers(self) -> list[Tree]:
        """The trees whose traces may see this tree's exits come back from a call: its callers, the callers
        of the trees that jump into it, and theirs, transitively."""
        out: list[Tree] = []
        todo = [self]
        for tree in todo:  # (grows while it is walked)
            for other in (*tree.callers, *tree.jumpers):
                if other not in todo:
                    todo.append(other)
                    out.append(other)
        return out

    def slots_written(self) -> set[int]:
        """Every slot a trace of this tree, or of a tree a call of it may run, may assign."""
        out: set[int] = set()
        for tree in self.reached():
            out |= tree.root.trace.written | tree.side_writes
        return out

    def loop_exits(self) -> list[ExitDescriptor]:
        """The exits that leave the tree's loop, of its traces and of the peer trees of its loop a side trace
        of it tail-jumps into (an int past 64 bits in a variable, then back): its end (a range or iterator
        running out, a while condition turning false), and side traces ending at a `break`."""
        return [
            e
            for tree in self.reached()
            if tree.loop.index == self.loop.index
            for trace in tree.traces()
            for e in trace.exits
            if e.leaves_loop
        ]

    def is_bridge(self) -> bool:
        """Does the root run one iteration and tail-jump into another tree of its loop (``TreeView``)?"""
        trace = self.root.trace
        return trace.end is TraceEnd.TREE and trace.end_tree is not None and trace.end_tree.loop is self.loop

    def runs_python(self) -> bool:
        """May a call of this tree run Python code: a barrier (the generic object path) in a trace of it or of a
        tree it reaches? Then its callers check their hoisted guards again after the call; a side trace that
        makes it so later invalidates them (``runtime.registry``)."""
        return any(uop.op.barrier for tree in self.reached() for t in tree.traces() for uop in t.trace.uops)

    def entered_from(self) -> list[Tree]:
        """The trees whose code may lead into this one's: itself and the peer trees that tail-jump into it,
        transitively (their callers follow its exits)."""
        out: list[Tree] = [self]
        for tree in out:  # (grows while it is walked)
            for other in tree.jumpers:
                if other not in out:
                    out.append(other)
        return out

    def joins_from(self, exit: ExitDescriptor) -> bool:
        """May a side trace from exit be joined with this tree's loop (``join_plan``): is exit the root's, or that
        of a side trace that comes back to the tree?"""
        return self._joined_under(exit) is not False

    def _joined_under(self, exit: ExitDescriptor) -> str | bool | None:
        """(``join_plan``) the symbol of the side trace exit belongs to, where that one comes back to this tree;
        None where exit is the root's; False otherwise."""
        if exit.trace is self.root:
            return None
        above = next((c for c in self.side_traces if exit.trace is c and c.trace.end_tree is self), None)
        return above.symbol if above is not None else False

    def side_on_its_way(self, exit: ExitDescriptor) -> bool:
        """Is a side trace from another exit of this tree's traces being recorded or compiled now (in the
        background, or by another thread)? It is not installed yet, so a side trace from exit lowered meanwhile
        would not be joined with it (``join_plan`` takes the installed ones)."""
        return any(other is not exit and other.life.recording for compiled in self.traces() for other in compiled.exits)

    def join_plan(self, side: Trace, symbol: str) -> JoinPlan | None:
        """What side (about to be compiled as symbol, hanging from an exit of this tree) may be joined with
        (``codegen.joined``): this tree's root and its side traces that jump back to it, hanging from the root or
        from another of them, side among them; None if side does not come back to this tree from its root or
        from such a side trace."""
        parent: ExitDescriptor = side.parent_exit
        if parent is None or side.end_tree is not self:
            return None
        sides = []
        for compiled in self.side_traces:
            if compiled.parent is None or compiled.trace.end_tree is not self:
                continue
            above = self._joined_under(compiled.parent)
            if above is not False:
                sides.append(JoinedSide(compiled.trace, compiled.symbol, compiled.parent.index, above))
        own = self._joined_under(parent)
        if own is False:
            return None
        libraries = tuple(
            compiled.module.library for compiled in self.side_traces if compiled.symbol in {s.symbol for s in sides}
        )
        sides.append(JoinedSide(side, symbol, parent.index, own))
        # (how often the side's way was taken, per iteration of the tree's entries: codegen.joined.IF_CONVERT_SHARE)
        counts = parent.trace.exit_counts()
        taken = counts[parent.index] if parent.index < len(counts) else 0
        share = taken / self.iterations if self.iterations > 0 else None
        return JoinPlan(self.root.trace, self.root.symbol, tuple(sides), libraries, share)

    def add_side_trace(self, side: CompiledTrace) -> bool:
        """Attach a side trace; True if it assigns slots no trace of the tree assigned before (the tree's
        callers, which reload what the tree may change, are then out of date)."""
        self.side_traces.append(side)
        side.tree = self
        new = side.trace.written - self.root.trace.written - self.side_writes
        self.side_writes |= side.trace.written
        return bool(new)
