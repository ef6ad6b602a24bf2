"""The recording life cycle, as an explicit state machine (LuaJIT's ``trace_state`` idea).

A place that records traces, a loop header (root traces) or a side exit (a side trace), goes through::

    IDLE ──start──► RECORDING ──compile──► COMPILING ──installed──► IDLE (a header may record another tree)
     ▲                  │                      │
     └────aborted───────┴──────────────────────┘  (the monitor then backs off, or blacklists)
    any ──blacklist──► BLACKLISTED (a recording still under way there ends quietly)
    BLACKLISTED ──reprobe──► IDLE (a loop header, once CPython has run it plain for a back-off: try again)

``Lifecycle`` makes only these moves; any other is a bug of tracejit's and raises ``IllegalTransition``.
``start`` is the one move two threads may race for: it is atomic and says whether this thread won. When to
move (thresholds, back-off, limits) is the monitor's policy (``jit.monitor``); this module only knows which
moves exist. ``LoopState`` is a loop header's life cycle with its back-off counters and its installed trees.
"""

from __future__ import annotations

import enum
import threading

from jit.frontend.instructions import LoopInfo
from jit.interfaces import TreeView


class Phase(enum.Enum):
    IDLE = "idle"  # may record (once hot, and once a back-off is over)
    RECORDING = "recording"  # a recorder follows the interpreter
    COMPILING = "compiling"  # the trace goes through the optimizer and LLVM (other threads may run meanwhile)
    BLACKLISTED = "blacklisted"  # not recorded again (a loop header: until the loop driver reprobes it)


# (module constants: reading a member from its Enum class costs a lookup through the class's metaclass, about
# 70 ns on CPython 3.11, and the properties below are read at every loop exit: runtime.loop_driver's judge)
_RECORDING = Phase.RECORDING
_COMPILING = Phase.COMPILING
_BLACKLISTED = Phase.BLACKLISTED


class IllegalTransition(RuntimeError):
    """A move the recording life cycle does not have (a bug of tracejit's, never the user's)."""


# (phase, event) -> the next phase; an event not listed for a phase is illegal, except in BLACKLISTED
_MOVES: dict[tuple[Phase, str], Phase] = {
    (Phase.IDLE, "start"): Phase.RECORDING,
    (Phase.RECORDING, "compile"): Phase.COMPILING,
    (Phase.RECORDING, "aborted"): Phase.IDLE,
    (Phase.COMPILING, "aborted"): Phase.IDLE,
    (Phase.COMPILING, "installed"): Phase.IDLE,
}

_STARTING = threading.Lock()  # (starting is rare: one lock for all places)


class Lifecycle:
    """Where one place that records traces is in its life cycle."""

    __slots__ = ("phase",)

    def __init__(self) -> None:
        self.phase = Phase.IDLE

    def start(self) -> bool:
        """Begin a recording here: True if this call moved IDLE to RECORDING, False if another thread is
        recording here already or the place is blacklisted."""
        with _STARTING:
            if self.phase is not Phase.IDLE:
                return False
            self.phase = Phase.RECORDING
            return True

    def compile(self) -> None:
        """The recording produced a trace, now being compiled."""
        self._move("compile")

    def installed(self) -> None:
        """The compiled trace is installed: this place may record again (a header: another type map)."""
        self._move("installed")

    def aborted(self) -> None:
        """The recording, or the compilation of its trace, failed."""
        self._move("aborted")

    def blacklist(self) -> None:
        """Stop recording here (until someone reprobes it)."""
        self.phase = Phase.BLACKLISTED

    def reprobe(self) -> bool:
        """Blacklisted until now: may record again (the caller decides when, and how many tries). False if
        the place was not blacklisted (another thread reprobed it first)."""
        with _STARTING:
            if self.phase is not Phase.BLACKLISTED:
                return False
            self.phase = Phase.IDLE
            return True

    def _move(self, event: str) -> None:
        phase = self.phase
        if phase is Phase.BLACKLISTED:
            return  # blacklisted while a recording was under way: it ends without reviving the place
        after = _MOVES.get((phase, event))
        if after is None:
            raise IllegalTransition(f"recording life cycle: {event} in phase {phase.value}")
        self.phase = after

    @property
    def recording(self) -> bool:
        """A trace from here is being recorded or compiled (no other recording may start here)."""
        phase = self.phase
        return phase is _RECORDING or phase is _COMPILING

    @property
    def compiling(self) -> bool:
        """A trace from here is being compiled (in the background, or by another thread)."""
        return self.phase is _COMPILING

    @property
    def blacklisted(self) -> bool:
        return self.phase is _BLACKLISTED


class LoopState(Lifecycle):
    """What the JIT knows about one loop header of a function: its life cycle, back-off and trees."""

    __slots__ = ("aborts", "cooldown", "loop", "made", "retries", "threshold", "trees", "waiting", "waiting_on")

    def __init__(self, loop: LoopInfo, threshold: int, trees: list[TreeView]) -> None:
        super().__init__()
        self.loop = loop
        self.trees = trees  # the live trees at this header (the tree registry's list: it adds and removes)
        self.aborts = 0  # failed recordings since the last tree was installed
        self.retries = 0  # recordings cut short by the loop ending meanwhile
        self.waiting = False  # for the trees compiling in the background (an inner loop's): record after them
        # an inner loop's header that another thread records or compiles: record after it is done (not a failure)
        self.waiting_on: LoopState | None = None
        self.cooldown = 0  # header visits to let pass before the next recording attempt
        self.made = 0  # trees ever compiled here (invalidated ones included)
        self.threshold = threshold
