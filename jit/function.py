"""The state tracejit keeps for one decorated function: its tier-1 code, how it runs, and its statistics."""

from __future__ import annotations

import functools
import threading
import types
import warnings
from typing import Any

from jit import binder as binder_mod
from jit.errors import NativeCodeUnavailableError, NativeCodeUnavailableWarning, TracejitError, UnsupportedFunctionError
from jit.frontend import T1Code, Unsupported, compile_to_tier1
from jit.options import Options
from runtime.errors import internal
from runtime.frame import UNBOUND, Frame
from runtime.interpreter import prepare_args, run


class JitFunction:
    """Runtime state of one ``@jit`` function, shared by all its calls and threads.

    ``mode`` is one of ``"pending"`` (not called yet: the front end runs on the first call), ``"tier1"``
    (runs in tracejit's interpreter, hot loops compiled), ``"plain"`` (runs as plain CPython; ``reason`` says
    why) or ``"disabled"`` (``JIT_DISABLE=1``). With ``strict=True``, ``refusal`` makes the error every call
    raises instead of running as plain CPython or without native code.
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
        self.refusal: functools.partial[TracejitError] | None = None  # strict=True: makes the error calls raise
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
        if self.refusal is not None:
            return self._refuse
        if self.mode == "tier1" and self.gave_up is None:
            return self.call_tier1
        return self.py_func

    def _prepare(self) -> None:
        strict = self.options.strict
        try:
            self.code = compile_to_tier1(self.py_func)
        except Unsupported as exc:
            self.reason = exc
            self.mode = "plain"
            if strict:
                self.refusal = functools.partial(
                    UnsupportedFunctionError, self._refusal_message(exc), exc.reason, exc.line
                )
        else:
            self.exec_args = prepare_args(self.code)
            self.backedge_counts = [0] * len(self.code.loops)
            self.hot_loops = [None] * len(self.code.loops)
            # (llvmlite itself is imported only once a loop gets hot, unless strict mode must know now)
            self.jit_unavailable = jit_unavailable() or (llvm_unusable() if strict else None)
            self.hot_threshold = self.options.threshold if self.jit_unavailable is None else 0
            self.mode = "tier1"
            if self.jit_unavailable is not None:
                if strict:
                    reason = self.jit_unavailable
                    self.refusal = functools.partial(NativeCodeUnavailableError, self._refusal_message(reason), reason)
                else:
                    self.gave_up = f"native code is not available: {self.jit_unavailable}"
        binder_mod.set_target(self.binder, self._current_target())
        if self.jit_unavailable is not None and not strict:
            warn_native_code_unavailable(self.jit_unavailable)

    def _refusal_message(self, why: Unsupported | str) -> str:
        code = self.py_func.__code__
        name = self.py_func.__qualname__
        where = f"{name} ({code.co_filename}:{code.co_firstlineno})"
        if isinstance(why, Unsupported):
            at = f" at line {why.line}" if why.line is not None else ""
            return (
                f"tracejit cannot compile {where}: {why.what}{at}: {why.reason} "
                f"(@jit(strict=True); without strict, {name} would run as plain CPython)"
            )
        return (
            f"tracejit cannot generate native code for {where}: {why} "
            f"(@jit(strict=True); without strict, {name} would run as plain CPython)"
        )

    @internal
    def _refuse(self, *args: Any, **kwonly: Any) -> Any:
        assert self.refusal is not None
        raise self.refusal()

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
        binder_mod.set_target(self.binder, self._current_target())

    # --- hooks of the interpreter ----------------------------------------------------------------------
    def loop_is_hot(self, loop: int) -> None:
        """Called by the interpreter when a loop's back-edge count reaches the threshold."""
        if self.monitor is None:
            with self.lock:
                if self.monitor is None and self.jit_unavailable is None:
                    monitor_class, self.jit_unavailable = load_monitor()  # imports llvmlite
                    if monitor_class is not None:
                        monitor = monitor_class(self)
                        # from now on the interpreter calls the monitor directly at hot loop headers
                        self.at_loop_header = monitor.at_loop_header  # type: ignore[method-assign]
                        self.monitor = monitor
                    else:
                        self.hot_threshold = 0  # later calls stop counting; this one ends its loops interpreted
                        self.give_up(f"native code is not available: {self.jit_unavailable}")
            if self.monitor is None:
                if self.jit_unavailable is not None:
                    warn_native_code_unavailable(self.jit_unavailable)
                return
        self.monitor.loop_is_hot(loop)

    def at_loop_header(self, frame: Frame, loop: int, pc: int) -> int:
        """Called at the header of a hot loop; returns the pc to continue from."""
        return pc + 1


def jit_unavailable() -> str | None:
    """Why native code cannot be generated in this process, or None if it can, as far as the CPython build
    tells (llvmlite itself is imported only once a loop gets hot: see load_monitor)."""
    from codegen import abi

    if abi.FREE_THREADED:
        return "free-threaded CPython build (tracejit needs the GIL)"
    if not abi.JIT_SUPPORTED:
        return "unexpected CPython object layout"
    return None


def load_monitor() -> tuple[Any, str | None]:
    """The monitor class (``jit.monitor.Monitor``: importing it imports llvmlite), or None and why not."""
    try:
        from jit.monitor import Monitor
    except Exception as exc:
        return None, f"llvmlite is not usable: {exc}"
    return Monitor, None


def llvm_unusable() -> str | None:
    """Why llvmlite cannot generate code in this process, or None if it can: imports it and starts LLVM
    (about 80 ms, once per process; strict mode asks at the first call, instead of when a loop gets hot)."""
    monitor_class, reason = load_monitor()
    if monitor_class is None:
        return reason
    try:
        from codegen.engine import engine

        engine()
    except Exception as exc:
        return f"LLVM cannot be started: {exc}"
    return None


_warned_native_code_unavailable = False


def warn_native_code_unavailable(reason: str) -> None:
    """Tell the user, once per process, that jitted functions get no native code."""
    global _warned_native_code_unavailable
    if _warned_native_code_unavailable:
        return
    _warned_native_code_unavailable = True
    warnings.warn(
        f"tracejit: native code is not available ({reason}); @jit functions run as plain CPython. "
        "Install a working llvmlite (pip install 'llvmlite>=0.44'); jit.explain(f) tells more.",
        NativeCodeUnavailableWarning,
        stacklevel=2,
    )
