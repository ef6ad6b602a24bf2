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
from codegen.entry import HANDOFF_RANGE, HANDOFF_SEQUENCE, HANDOFF_WHILE
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
        self.native_entries = 0
        self.native_iterations = 0  # loop iterations those entries ran (trees called included)
        self.exits_to_interpreter = 0
        self.stub_entries = 0  # native entries through an entry stub
        self.stub_refusals = 0  # entries the stubs refused (no tree's entry type map matched: counted by the monitor)
        self.handoff_entries = 0  # stub entries through a hand-off in one native call (hand_over)
        self.spill: list[list[Any]] = []  # where a hand-off's native call leaves the slots if it raises

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
        self.native_entries += 1
        tree.entries += 1
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
            self.exits_to_interpreter += 1
            frame.stack[:] = buffer.unpack(frame.slots, len(exit.stack_kinds))
            buffer.release_references(frame.slots, owned)
            self.free_buffers.append(buffer)
            raise
        with self.lock:
            self.active -= 1
        iterations = abi.FUEL_START - buffer.words[abi.FUEL]
        self.native_iterations += iterations
        tree.iterations += iterations
        exit = exits[exit_id]
        self.exits_to_interpreter += 1
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
                self.native_entries += 1
                self.stub_entries += 1
                tree.entries += 1
                self.exits_to_interpreter += 1
                frame.stack[:] = result[2:]
            raise
        if result is None:
            return None
        # (exit number, iterations, *operand stack)
        iterations = result[1]
        self.native_entries += 1
        self.stub_entries += 1
        self.native_iterations += iterations
        self.exits_to_interpreter += 1
        tree.entries += 1
        tree.iterations += iterations
        exit = self.registry.exits[result[0]]
        exit.taken += 1
        if len(result) > 2:
            frame.stack[:] = result[2:]
        elif frame.stack:
            frame.stack.clear()
        if self.registry.graveyard:
            self.free_graveyard()
        return exit

    @internal
    def hand_over(self, trees: list[Tree], values: tuple[Any, ...], it: Any, iterable: Any) -> Any:
        """A loop's hand-off from CPython at its header, in one native call (``codegen.entry.build_handoff``)
        through the first of its trees whose entry stub takes the state: ``(exit, stub result, slots, locals,
        whether a local is unbound)``; None if no tree took it, NotImplemented if the hand-off cannot build the
        state (the caller goes through Python: ``runtime.handoff``)."""
        for tree in trees:
            handoff = tree.handoff
            if handoff is None:
                handoff = tree.handoff = self.make_handoff(tree)
            if handoff is False:
                continue
            try:
                out = handoff(values, it, iterable, self.spill)
            except BaseException:
                # a signal handler's exception (KeyboardInterrupt): native code left through its periodic exit
                if self.spill:
                    slots = self.spill.pop()
                    if len(slots) > self.layout.nslots:
                        self.native_entries += 1
                        self.stub_entries += 1
                        self.handoff_entries += 1
                        tree.entries += 1
                        self.exits_to_interpreter += 1
                raise
            if out is None:
                continue
            if out is NotImplemented:
                return out
            result, slots, values, unbound = out
            iterations = result[1]
            self.native_entries += 1
            self.stub_entries += 1
            self.handoff_entries += 1
            self.native_iterations += iterations
            self.exits_to_interpreter += 1
            tree.entries += 1
            tree.iterations += iterations
            exit = self.registry.exits[result[0]]
            exit.taken += 1
            if self.registry.graveyard:
                self.free_graveyard()
            return exit, result, slots, values, unbound
        return None

    def make_handoff(self, tree: Tree) -> Any:
        """tree's hand-off builtin (``runtime.native.handoff_function``); False if it has none (no entry stub,
        or hidden slots of a kind only ``runtime.handoff`` fills)."""
        info = tree.loop
        kind = _HANDOFF_KINDS.get(info.kind)
        if tree.entry is None or kind is None or (kind != HANDOFF_WHILE) != bool(info.hidden):
            return False
        base = info.hidden[0] if info.hidden else 0
        return handoff_function(tree.root.entry_address, self.layout.nslots, self.nlocals, base, kind)

    @internal
    def run(self, frame: Frame, tree: Tree) -> ExitDescriptor:
        """Pack frame and run tree on it."""
        buffer = self.take_buffer()
        buffer.pack(frame.slots)
        return self.call(frame, tree, buffer)
