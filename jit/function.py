"""The state tracejit keeps for one decorated function: its tier-1 code, how it runs, and its statistics."""

from __future__ import annotations

import threading
import types
from typing import Any

from jit import binder as binder_mod
from jit.frontend import T1Code, Unsupported, compile_to_tier1
from jit.options import Options
from runtime.errors import internal
from runtime.frame import UNBOUND, Frame
from runtime.interpreter import prepare_args, run


class JitFunction:
    """Runtime state of one ``@jit`` function, shared by all its calls and threads.

    ``mode`` is one of ``"pending"`` (not called yet: the front end runs on the first call), ``"tier1"``
    (runs in tracejit's interpreter, hot loops compiled), ``"plain"`` (runs as plain CPython; ``reason`` says
    why) or ``"disabled"`` (``JIT_DISABLE=1``).
    """

    def __init__(self, py_func: types.FunctionType, options: Options, disabled: bool) -> None:
        self.py_func = py_func
        self.options = options
        self.mode = "disabled" if disabled else "pending"
        self.reason: Unsupported | None = None
        self.code: T1Code | None = None
        self.lock = threading.Lock()
        self.globals: dict[str, Any] = py_func.__globals__
        self.builtins: dict[str, Any] = py_func.__builtins__  # type: ignore[attr-defined]
        self.exec_args: tuple[Any, ...] = ()
        self.backedge_counts: list[int] = []
        self.hot_loops: list[Any] = []
        self.hot_threshold = 0
        self.monitor: Any = None  # the JIT's state (jit.monitor.Monitor), made when a loop first gets hot
        self.jit_unavailable: str | None = None
        self.gave_up: str | None = None  # why calls now go straight to plain CPython
        self.calls = 0
        self.binder = binder_mod.make_binder(py_func, py_func if disabled else self._first_call)

    # --- calls -----------------------------------------------------------------------------------------
    @internal
    def _first_call(self, *args: Any, **kwonly: Any) -> Any:
        self.ensure_prepared()
        return self._current_target()(*args, **kwonly)

    def ensure_prepared(self) -> None:
        """Run the front end if it has not run yet (it runs on the first call, or for jit.explain)."""
        with self.lock:
            if self.mode == "pending":
                self._prepare()

    def _current_target(self) -> Any:
        return self.call_tier1 if self.mode == "tier1" else self.py_func

    def _prepare(self) -> None:
        try:
            self.code = compile_to_tier1(self.py_func)
        except Unsupported as exc:
            self.reason = exc
            self.mode = "plain"
        else:
            self.exec_args = prepare_args(self.code)
            self.backedge_counts = [0] * len(self.code.loops)
            self.hot_loops = [None] * len(self.code.loops)
            self.jit_unavailable = jit_unavailable()
            self.hot_threshold = self.options.threshold if self.jit_unavailable is None else 0
            self.mode = "tier1"
        binder_mod.set_target(self.binder, self._current_target())

    @internal
    def call_tier1(self, *args: Any, **kwonly: Any) -> Any:
        code = self.code
        assert code is not None
        self.calls += 1
        slots = list(args)
        if kwonly:
            slots.extend(kwonly.values())
        slots.extend([UNBOUND] * (code.nslots - len(slots)))
        return run(Frame(self, code, slots))

    def give_up(self, reason: str) -> None:
        """Run later calls as plain CPython: the JIT found nothing to compile that pays."""
        self.gave_up = reason
        binder_mod.set_target(self.binder, self.py_func)

    # --- hooks of the interpreter ----------------------------------------------------------------------
    def loop_is_hot(self, loop: int) -> None:
        """Called by the interpreter when a loop's back-edge count reaches the threshold."""
        if self.monitor is None:
            with self.lock:
                if self.monitor is None:
                    try:
                        from jit.monitor import Monitor  # imports llvmlite
                    except Exception as exc:
                        self.jit_unavailable = f"llvmlite is not usable: {exc}"
                        self.hot_threshold = 0  # later calls stop counting; this one ends its loops interpreted
                        return
                    monitor = Monitor(self)
                    # from now on the interpreter calls the monitor directly at hot loop headers
                    self.at_loop_header = monitor.at_loop_header  # type: ignore[method-assign]
                    self.monitor = monitor
        self.monitor.loop_is_hot(loop)

    def at_loop_header(self, frame: Frame, loop: int, pc: int) -> int:
        """Called at the header of a hot loop; returns the pc to continue from."""
        return pc + 1


def jit_unavailable() -> str | None:
    """Why native code cannot be generated in this process, or None if it can."""
    from codegen import abi

    if abi.FREE_THREADED:
        return "free-threaded CPython build (tracejit needs the GIL)"
    if not abi.JIT_SUPPORTED:
        return "unexpected CPython object layout"
    return None  # (llvmlite itself is imported only once a loop gets hot: see loop_is_hot)
