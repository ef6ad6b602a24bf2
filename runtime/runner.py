"""Running native code: entering a tree from the interpreter and coming back, and the pool of frame buffers.

``NativeRunner`` keeps a pool of buffers (``runtime.native.NativeBuffer``: their contents only matter from
packing to unpacking, so they are reused, one per native call in progress: threads, and signal handlers
calling back in, get their own), calls a tree's function on one, rebuilds the frame from the exit taken,
counts entries, iterations and exits, and frees invalidated code (the tree registry's graveyard) once no
native code of the function runs. Whether to enter, and what to do about the exit taken, is the monitor's
policy (``jit.monitor``).
"""

from __future__ import annotations

import ctypes
import threading
from typing import TYPE_CHECKING, Any

from codegen import abi
from codegen.entry import HANDOFF_COUNTS, HANDOFF_RANGE, HANDOFF_SEQUENCE, HANDOFF_WHILE
from jit.frontend.instructions import LoopKind
from runtime.errors import internal
from runtime.exits import ExitDescriptor
from runtime.frame import Frame
from runtime.native import NativeBuffer, Plans, handoff_function, holds_unbound
from runtime.registry import TreeRegistry
from runtime.trees import Tree

if TYPE_CHECKING:
    from codegen.engine import ObjectCache

# the kinds of loops whose state a hand-off from CPython builds natively (where their iterators' layouts are known)
_HANDOFF_KINDS = {LoopKind.WHILE: HANDOFF_WHILE}
if abi.RANGE_ITERATOR is not None:
    _HANDOFF_KINDS[LoopKind.RANGE] = HANDOFF_RANGE
if abi.ITERATORS_OK:
    _HANDOFF_KINDS[LoopKind.ITER] = HANDOFF_SEQUENCE


class NativeRunner:
    """Runs one function's trees (see the module's docstring)."""

    def __init__(
        self, layout: abi.Layout, registry: TreeRegistry, cache: ObjectCache | None = None, nlocals: int = 0
    ) -> None:
        self.layout = layout
        self.nlocals = nlocals  # the user's locals, the first slots (a hand-off from CPython passes them)
        self.registry = registry
        self.free_buffers: list[NativeBuffer] = []
        self.plans = Plans()  # how to pack and unpack the shapes seen (shared by the buffers)
        self.lock = threading.Lock()  # `active` guards freeing code: no lost updates between threads
        self.active = 0  # native calls in progress through ctypes (the Python path)
        # and through entry stubs, which count themselves here (with the GIL held: no update is lost)
        self.stubs_active = ctypes.c_int64(0)
        self.stubs_active_address = ctypes.addressof(self.stubs_active)
        # holds_unbound(values): is a value the unbound marker (compared by identity, natively)?
        # (compiled with the entry stubs' support library, or found in cache: codegen.cache)
        self.holds_unbound = holds_unbound(cache)
        # the counters (native_entries, ...): those counted in Python, plus those of the hand-offs from CPython
        # (handoff_calls), which count their entries and iterations themselves natively, in handoff_counts
        self.entries_counted = 0
        self.iterations_counted = 0
        self.exits_counted = 0
        self.stub_entries_counted = 0
        self.handoff_entries_counted = 0
        self.handoff_counts = (ctypes.c_int64 * HANDOFF_COUNTS)()  # [entries, iterations] (codegen.entry)
        self.stub_refusals = 0  # entries the stubs refused (no tree's entry type map matched: counted by the monitor)
        self.spill: list[list[Any]] = []  # where a hand-off's native call leaves the slots if it raises

    @property
    def native_entries(self) -> int:
        return self.entries_counted + self.handoff_counts[0]

    @property
    def native_iterations(self) -> int:
        """The loop iterations native entries ran (trees called included)."""
        return self.iterations_counted + self.handoff_counts[1]

    @property
    def exits_to_interpreter(self) -> int:
        return self.exits_counted + self.handoff_counts[0]

    @property
    def stub_entries(self) -> int:
        """Native entries through an entry stub."""
        return self.stub_entries_counted + self.handoff_counts[0]

    @property
    def handoff_entries(self) -> int:
        """Stub entries through a hand-off from CPython in one native call (handoff_calls)."""
        return self.handoff_entries_counted + self.handoff_counts[0]

    def take_buffer(self) -> NativeBuffer:
        """A frame buffer (from the pool, or a new one); give it back with give_back, or through call."""
        try:
            return self.free_buffers.pop()
        except IndexError:
            return NativeBuffer(self.layout, self.plans)

    def give_back(self, buffer: NativeBuffer) -> None:
        self.free_buffers.append(buffer)

    def tags(self, frame: Frame) -> bytes:
        """The kinds of frame's slots as a tree's entry sees them (packed the same way)."""
        buffer = self.take_buffer()
        tags = buffer.pack(frame.slots)
        self.free_buffers.append(buffer)
        return tags

    @internal
    def call(self, frame: Frame, tree: Tree, buffer: NativeBuffer) -> ExitDescriptor:
        """Run tree on the packed buffer (given back to the pool afterwards); rebuild the frame from the exit
        it took and return that exit."""
        buffer.words[abi.FUEL] = abi.FUEL_START
        owned = tree.owned_entry_slots
        buffer.take_references(frame.slots, owned)
        self.entries_counted += 1
        tree.entries_counted += 1
        with self.lock:
            self.active += 1
        exits = self.registry.exits
        try:
            exit_id = tree.function(buffer.address)
        except BaseException:
            # a signal handler's exception (KeyboardInterrupt): native code left through its periodic exit
            with self.lock:
                self.active -= 1
            exit = exits[buffer.words[abi.EXIT]]
            self.exits_counted += 1
            frame.error_pc = frame.raised_at = exit.pc  # (where it left: a generic call that raised, ...)
            iterations = abi.FUEL_START - buffer.words[abi.FUEL]
            self.iterations_counted += iterations
            tree.iterations_counted += iterations
            frame.stack[:] = buffer.unpack(frame.slots, len(exit.stack_kinds))
            buffer.release_references(frame.slots, owned)
            self.free_buffers.append(buffer)
            raise
        with self.lock:
            self.active -= 1
        iterations = abi.FUEL_START - buffer.words[abi.FUEL]
        self.iterations_counted += iterations
        tree.iterations_counted += iterations
        exit = exits[exit_id]
        self.exits_counted += 1
        exit.taken += 1
        frame.stack[:] = buffer.unpack(frame.slots, len(exit.stack_kinds))
        buffer.release_references(frame.slots, owned)
        self.free_buffers.append(buffer)
        if self.registry.graveyard:
            self.free_graveyard()
        return exit

    def free_graveyard(self) -> None:
        """Free invalidated trees' code if no native code of the function is running."""
        with self.lock:
            if self.active == 0 and self.stubs_active.value == 0:
                self.registry.free_graveyard()

    @internal
    def enter(self, frame: Frame, tree: Tree) -> ExitDescriptor | None:
        """Run tree through its entry stub (``codegen.entry``) on frame's slots, which it leaves rebuilt as
        the exit taken wants them; return that exit, or None (nothing run) if the slots do not match the
        tree's entry type map."""
        slots = frame.slots
        try:
            result = tree.entry(slots)
        except BaseException:
            # a signal handler's exception (KeyboardInterrupt): the stub appended the exit's state
            if len(slots) > self.layout.nslots:
                result = slots.pop()
                self.entries_counted += 1
                self.stub_entries_counted += 1
                tree.entries_counted += 1
                self.exits_counted += 1
                frame.stack[:] = result[2:]
                frame.error_pc = frame.raised_at = self.registry.exits[result[0]].pc
                self.iterations_counted += result[1]
                tree.iterations_counted += result[1]
            raise
        if result is None:
            return None
        # (exit number, iterations, *operand stack)
        iterations = result[1]
        self.entries_counted += 1
        self.stub_entries_counted += 1
        self.iterations_counted += iterations
        self.exits_counted += 1
        tree.entries_counted += 1
        tree.iterations_counted += iterations
        exit = self.registry.exits[result[0]]
        exit.taken += 1
        if len(result) > 2:
            frame.stack[:] = result[2:]
        elif frame.stack:
            frame.stack.clear()
        if self.registry.graveyard:
            self.free_graveyard()
        return exit

    def handoff_calls(self, index: int) -> tuple[tuple[Any, Tree], ...]:
        """The hand-offs from CPython into loop index's trees, each in one native call (``codegen.entry.build_handoff``),
        in the order of its trees: ``(handoff, tree)`` pairs, where ``handoff(values, it, iterable, self.spill)``
        returns ``(the stub's result, slots, the locals as a tuple, whether one is unbound, whether the loop
        ended)`` (see ``codegen.entry.build_handoff``), None if the tree's
        entry stub refused the state, NotImplemented if the hand-off cannot build it (the caller then goes through
        Python: ``runtime.handoff``). An entry counts itself natively (``handoff_counts``, the tree's too); the
        caller counts the exit taken (``exit.taken``), frees the graveyard, and calls handoff_raised if a
        hand-off raises. (For trees without one, see make_handoff: they are left out.)"""
        calls = []
        for tree in self.registry.trees[index]:
            address = tree.root.entry_address  # (jit.tiering: a swap may have replaced the stub since)
            handoff = tree.handoff
            if handoff is None or tree.handoff_entry != address:
                handoff = self.make_handoff(tree, address)
                tree.handoff, tree.handoff_entry = handoff, address
            if handoff is not False:
                calls.append((handoff, tree))
        return tuple(calls)

    def handoff_raised(self, tree: Tree) -> tuple[int, list[Any]] | None:
        """A hand-off into tree raised (a signal handler's exception, KeyboardInterrupt: native code left through
        its periodic exit; a generic operation raised): count the entry it made, if it made one (its slots are in
        spill then), and return the pc native code left from with the slots it left (for the traceback)."""
        if self.spill:
            slots = self.spill.pop()
            if len(slots) > self.layout.nslots:
                raised = (self.registry.exits[slots[-1][0]].pc, slots)
                self.iterations_counted += slots[-1][1]
                tree.iterations_counted += slots[-1][1]
                self.entries_counted += 1
                self.stub_entries_counted += 1
                self.handoff_entries_counted += 1
                tree.entries_counted += 1
                self.exits_counted += 1
                return raised
        return None

    def make_handoff(self, tree: Tree, address: int) -> Any:
        """tree's hand-off builtin (``runtime.native.handoff_function``) through the entry stub at address (its
        root's); False if it has none (no entry stub, or hidden slots of a kind only ``runtime.handoff``
        fills)."""
        info = tree.loop
        kind = _HANDOFF_KINDS.get(info.kind)
        if not address or kind is None or (kind != HANDOFF_WHILE) != bool(info.hidden):
            return False
        base = info.hidden[0] if info.hidden else 0
        return handoff_function(
            address,
            self.layout.nslots,
            self.nlocals,
            base,
            kind,
            ctypes.addressof(self.handoff_counts),
            ctypes.addressof(tree.handoff_counts),
            info.accumulator,
        )

    @internal
    def run(self, frame: Frame, tree: Tree) -> ExitDescriptor:
        """Pack frame and run tree on it."""
        buffer = self.take_buffer()
        buffer.pack(frame.slots)
        return self.call(frame, tree, buffer)
