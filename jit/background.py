"""Compiling traces off the thread that runs the user's code (issue 9).

When a recording ends, the monitor optimizes the trace and lowers it to LLVM IR, then hands it to the process's
background compiler (one daemon thread, started with the first job) and the interpreter goes on; the compiler
compiles it with LLVM (which releases the GIL, so the user's thread really runs meanwhile) and installs it, and
the next entry at its loop header or exit runs it. Jobs run one at a time, in order.

Once everything is installed, the code must be what compiling synchronously makes (same trees, side traces,
joins and links), only later. Synchronously, nothing else happens between a recording's end and its code's
installation; in the background, the user's thread goes on, and what it meets meanwhile must not be recorded
against trees as they are before the installation. So (``jit.monitor``), while a trace is on its way:

- an outer loop's recording that reaches a loop whose tree is on its way stops (``Reason.INNER_COMPILING``) and
  records again once that tree is installed (not later: meanwhile the inner tree's entries from CPython, one per
  outer iteration, grew trees of their own);
- a loop nested in one whose tree is on its way does not record, and its header visits meanwhile do not make it
  hot (synchronously, the outer tree would run it from now on: a loop unrolled into it got a tree, never entered);
- a side exit of a tree's root does not record while a side trace from another exit of that root is on its way
  (``jit.stats``: ``sides_postponed``): ``codegen.joined`` joins the side traces installed when a side trace is
  lowered, and the second of two side traces recorded at once was joined with itself only, the loop running in two
  functions that jump into each other (the histogram kernel's steady state: 2.3 times as slow);
- a hand-off of an inner loop that recorded its tree makes the enclosing loop hot, as the native code it would
  run synchronously does (``runtime.loop_driver``); else an outer loop of a few iterations per start could be
  judged too short to record meanwhile; and the loop driver does not judge whether native entries pay.

This is what ``@jit(sync_compile=False)`` does. The default, ``sync_compile=True``, compiles on the recording
thread, which waits: ``jit.stats`` counts then do not depend on timing, and, measured on the benchmark
kernels (2 cores shared with other work), first calls are no slower than in the background. Under the GIL, a
background compilation waits for the GIL each time LLVM returns to Python (about five times per trace) while
the user's thread runs Python code, up to the switch interval (5 ms) each: a trace took about 3 times as long
to arrive (37 ms instead of 12), so a loop ran that much longer at CPython's speed before native code took
over, and first calls took 1.2 to 2 times as long as when compiling synchronously. (Only the LLVM part runs in
the background: optimizing and lowering, Python code, would compete for the GIL too.) With a core to spare
and a program that keeps its own thread busy in Python, the background wins.

Fork: a child process has only the thread that forked, so a compilation under way in the parent would never
finish in the child, and llvmlite's lock (``codegen.engine``) or LLVM's own could stay held forever. Before a
fork, the forking thread waits until the background compiler has nothing left to do (bounded), then holds the
engine's lock across the fork; the child gets a new, idle background compiler. Exit: at interpreter exit no
new job starts and the one under way is waited for (bounded), so LLVM is not running while Python finalizes.
"""

from __future__ import annotations

import atexit
import collections
import os
import sys
import threading
from collections.abc import Callable

#: how long a fork or the interpreter's exit waits for background compilations, in seconds
DRAIN_TIMEOUT = 30.0


class BackgroundCompiler:
    """A queue of compilation jobs run, in order, by one daemon thread (started with the first job); jobs
    submitted as ``later`` (``jit.tiering``'s compilations again at a higher level) run only when no other job
    waits: a trace's first code, which the interpreter waits for, does not queue behind them."""

    def __init__(self) -> None:
        self._jobs: collections.deque[Callable[[], None]] = collections.deque()
        self._later: collections.deque[Callable[[], None]] = collections.deque()
        self._cond = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None
        self._unfinished = 0  # queued or running
        self._closed = False

    def submit(self, job: Callable[[], None], later: bool = False) -> bool:
        """Queue job (it must not raise; later: behind every job not submitted so); False if the compiler is
        closed (the interpreter is exiting)."""
        with self._cond:
            if self._closed:
                return False
            (self._later if later else self._jobs).append(job)
            self._unfinished += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="tracejit-compiler", daemon=True)
                self._thread.start()
            self._cond.notify_all()
        return True

    @property
    def unfinished(self) -> int:
        """Jobs queued or running."""
        return self._unfinished

    def drain(self, timeout: float = DRAIN_TIMEOUT) -> bool:
        """Wait until every job submitted so far has finished; False if timeout passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: self._unfinished == 0, timeout)

    def close(self, timeout: float = DRAIN_TIMEOUT) -> None:
        """Start no new job (queued ones are dropped) and wait for the one under way."""
        with self._cond:
            self._closed = True
            dropped = len(self._jobs) + len(self._later)
            self._jobs.clear()
            self._later.clear()
            self._unfinished -= dropped
            self._cond.notify_all()
            self._cond.wait_for(lambda: self._unfinished == 0, timeout)

    def _work(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._jobs or self._later or self._closed)
                if not self._jobs and not self._later:
                    return
                job = self._jobs.popleft() if self._jobs else self._later.popleft()
            try:
                job()
            finally:
                with self._cond:
                    self._unfinished -= 1
                    self._cond.notify_all()


_compiler: BackgroundCompiler | None = None
_compiler_lock = threading.Lock()


def compiler() -> BackgroundCompiler:
    """The process's background compiler."""
    global _compiler
    if _compiler is None:
        with _compiler_lock:
            if _compiler is None:
                _compiler = BackgroundCompiler()
    return _compiler


def _engine_lock() -> threading.Lock | None:
    """The LLVM engine's lock, if LLVM has been set up in this process (never imports llvmlite)."""
    engine = sys.modules.get("codegen.engine")
    current = getattr(engine, "current", None)
    if current is None:
        return None
    made = current()
    return made.lock if made is not None else None


_held_across_fork: threading.Lock | None = None


def _before_fork() -> None:
    global _held_across_fork
    if _compiler is not None:
        _compiler.drain()
    lock = _engine_lock()
    if lock is not None:
        lock.acquire()
    _held_across_fork = lock


def _after_fork_in_parent() -> None:
    global _held_across_fork
    if _held_across_fork is not None:
        _held_across_fork.release()
    _held_across_fork = None


def _after_fork_in_child() -> None:
    global _compiler, _held_across_fork, _compiler_lock
    if _held_across_fork is not None:
        _held_across_fork.release()  # (taken by this very thread before the fork)
    _held_across_fork = None
    _compiler_lock = threading.Lock()
    _compiler = None  # its thread does not exist here; its queue was empty (drained before the fork)


def _at_exit() -> None:
    if _compiler is not None:
        _compiler.close()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child)
atexit.register(_at_exit)


__all__ = ["BackgroundCompiler", "compiler"]
