"""What the recorder needs from the layers above it, as small interfaces (``typing.Protocol``s).

The recorder (``jit.recorder``) sits below the runtime and the policy: it may not import the monitor, the
tree registry or the trees. It sees the one who started the recording as a ``RecordingHost`` (in tracejit,
``jit.monitor.Monitor``), a compiled tree of an inner loop as a ``TreeView`` (``runtime.trees.Tree``) and a
side exit as an ``ExitView`` (``runtime.exits.ExitDescriptor``). The layering test
(``tests/test_layering.py``) keeps it that way.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any, Protocol

from jit.aborts import Abort, Reason
from jit.frontend.instructions import LoopInfo
from jit.kinds import Kind
from jit.options import Options
from jit.trace import Trace
from runtime.frame import Frame


class ExitView(Protocol):
    """A side exit of a compiled trace: where the interpreter resumes and what the trace knew there."""

    id: int  # what native code returns when it leaves through this exit
    pc: int
    stack_kinds: list[Kind]
    known_kinds: dict[int, Kind]  # slot -> kind, for the slots whose buffer value the trace knows
    stack_consts: dict[int, Any]  # stack index -> the constant there
    owned_stack: frozenset[int]  # the stack entries handed over with a reference of their own (OWNED)
    # the slots the exit writes with a value it hands over without a reference (a list read from another
    # list, ...): a side trace from it knows the buffer owns nothing there, whatever the slot's kind
    borrowed_slots: frozenset[int]

    def follows_from(self, tree: Any) -> bool:
        """Is this an exit of tree, or of a tree a call of it may run (handed on as it was), so that a trace
        calling tree can go on from it?"""
        ...


class TreeView(Protocol):
    """A compiled tree (an inner loop's, for a call or a jump): its entry type map and what it writes."""

    loop: LoopInfo
    depth: int  # 1 + the deepest tree it calls
    entry_kinds: dict[int, Kind]

    def loop_exits(self) -> Sequence[ExitView]:
        """The exits of the tree's traces that leave its loop (its end, a `break`)."""
        ...

    def writes_at(self, exit: Any) -> dict[int, tuple[Kind | None, bool]]:
        """slot -> (kind, certain) for the slots the tree may have changed when it leaves through exit."""
        ...

    def slots_written(self) -> set[int]:
        """Every slot a call of the tree may assign."""
        ...

    def runs_python(self) -> bool:
        """May a call of the tree run Python code (a barrier in one of its traces, or of a tree it reaches)?"""
        ...

    def is_bridge(self) -> bool:
        """Does the tree's root run one iteration and tail-jump into another tree of its loop (a first iteration
        of other kinds: `s = 0.0` before `s += a[k] * b[k]` makes it a numpy.float64)?"""
        ...


class RecordingHost(Protocol):
    """Whoever started a recording: it owns the policy and the trees, and hears how the recording ended."""

    options: Options
    # per site whose traces guard a class (id of its tier-1 code, pc): the classes they were specialized on (by id,
    # weakly), or None once it is megamorphic (jit.recorder.recorder.Recorder.may_specialize)
    site_classes: dict[tuple[int, int], dict[int, weakref.ref[type]] | None]
    # globals of the function rebound as a rule: traces read them from the dict at each use (jit.recorder.names)
    volatile_globals: set[str]
    unstable_classes: weakref.WeakSet[type]
    # trees invalidated because NumPy's error state changed (jit.numpy_errstate): from 2 on, traces ignore no event
    errstate_changes: int

    def recording_aborted(self, recorder: Any, abort: Abort) -> None:
        """The recording stopped without a trace (the recorder has unhooked itself)."""
        ...

    def recording_finished(self, recorder: Any, trace: Trace) -> None:
        """The recording produced trace (to optimize, compile and install)."""
        ...

    def trees_at(self, loop: int) -> Sequence[TreeView]:
        """The live trees at loop's header."""
        ...

    def tree_for(self, loop: int, frame: Frame) -> TreeView | None:
        """The live tree at loop's header whose entry type map matches frame, if any."""
        ...

    def compiling(self, loop: int) -> bool:
        """Is a trace of loop being compiled in the background (a tree of it, or a side trace of one)?"""
        ...

    def why_no_tree(self, loop: int) -> Reason:
        """Why inner loop `loop` has no tree for the types it meets: INNER_COMPILING (on its way from the
        background compiler), INNER_BUSY (another thread records or compiles it), INNER_FIRST (it may still
        get one: it records first) or INNER_NOT_COMPILED (it will not: blacklisted, or at its limit of trees)."""
        ...

    def run_inlined(self, function: Any, code: Any, slots: list[Any], hook: Any) -> Any:
        """Run an inlined callee's tier-1 code on slots in the interpreter with hook as its trace hook (the
        dry run of ``jit.inline``); its return value."""
        ...

    def run_tree_while_recording(self, frame: Frame, tree: Any) -> tuple[ExitView, int]:
        """Run tree natively on frame (an inner loop of the trace being recorded); its exit and resume pc."""
        ...
