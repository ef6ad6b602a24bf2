"""The state tracejit keeps for one decorated function: its tier-1 code, how it runs, and its statistics."""

from __future__ import annotations

import enum
import functools
import inspect
import sys
import threading
import time
import traceback
import types
import warnings
from typing import Any

from codegen import abi
from jit.errors import NativeCodeUnavailableError, NativeCodeUnavailableWarning, TracejitError, UnsupportedFunctionError
from jit.frontend import T1Code, Unsupported, compile_to_tier1
from jit.frontend.instrument import InstrumentedCode, instrument
from jit.frontend.source import locate
from jit.options import Options
from jit.wrapper import forwarder, make_wrapper
from runtime.errors import clean_traceback, internal
from runtime.frame import UNBOUND, Frame
from runtime.interpreter import prepare_args, run
from runtime.loop_driver import LoopRuntime

# what the code object alone shows the front end refuses (a generator function compiles as partial code only:
# the front end decides)
_NOT_COMPILABLE_FLAGS = (
    inspect.CO_COROUTINE
    | inspect.CO_ASYNC_GENERATOR
    | inspect.CO_ITERABLE_COROUTINE
    | inspect.CO_VARARGS
    | inspect.CO_VARKEYWORDS
)


class Mode(enum.StrEnum):
    """How a ``@jit`` function runs."""

    PENDING = "pending"  # not called yet: the front end runs on the first call, or for jit.explain
    TIER1 = "tier1"  # the front end compiled it: its loops can run natively
    PLAIN = "plain"  # runs as plain CPython (JitFunction.reason says why)
    DISABLED = "disabled"  # JIT_DISABLE=1


class Baseline(enum.StrEnum):
    """What runs a tier-1 function outside native code."""

    # the instrumented code: CPython runs the function and hands hot loops to the JIT (a function with no loop
    # statement keeps its own code)
    CPYTHON = "cpython"
    # option interpreter=True: the whole function runs in tracejit's tier-1 interpreter, the reference semantics
    INTERPRETER = "interpreter"


class JitFunction:
    """Runtime state of one ``@jit`` function, shared by all its calls and threads.

    ``wrapper`` is the function ``@jit`` returned; tracejit swaps its code (see ``jit.wrapper``). ``mode`` (a
    ``Mode``) says how it runs; for ``Mode.PLAIN``, ``reason`` says why, found by the front end when asked if
    the code object alone told. ``baseline`` (a ``Baseline``) says what runs a tier-1 function outside native
    code. With ``strict=True``, ``refusal`` makes the error every call raises instead of running as plain
    CPython or without native code.
    """

    def __init__(self, py_func: types.FunctionType, options: Options, disabled: bool) -> None:
        self.py_func = py_func
        self.options = options
        self.mode = Mode.DISABLED if disabled else Mode.PENDING
        self.baseline = Baseline.INTERPRETER if options.interpreter else Baseline.CPYTHON
        self.reason: Unsupported | None = None
        self.code: T1Code | None = None
        self.instrumented: InstrumentedCode | None = None
        self.loop_runtime: Any = None  # runtime.loop_driver.LoopRuntime (Baseline.CPYTHON)
        # the versions of the instrumented code, by the loops parked in them (see runtime.parking), and the
        # one new calls run
        self.versions: dict[frozenset[int], types.CodeType] = {}
        self.version: frozenset[int] | None = None
        self.lock = threading.Lock()
        self.globals: dict[str, Any] = py_func.__globals__
        self.builtins: dict[str, Any] = py_func.__builtins__  # type: ignore[attr-defined]
        self.closure: tuple[Any, ...] = py_func.__closure__ or ()  # (its cells: LOAD_FREE, a closure's variables)
        self.exec_args: tuple[Any, ...] = ()
        self.loop_views: list[Any] = []  # per loop, what run_loop runs (Baseline.CPYTHON)
        self.backedge_counts: list[int] = []
        self.hot_loops: list[Any] = []
        self.hot_threshold = 0
        self.monitor: Any = None  # the JIT's state (jit.monitor.Monitor), made when a loop first gets hot
        self.jit_unavailable: str | None = None
        self.gave_up: str | None = None  # why no loop of the function runs natively
        self.calls = 0  # calls run by the tier-1 interpreter (Baseline.INTERPRETER)
        self.frontend_ms = 0.0  # the front end's time at the first call (source, tier-1 code, instrumentation)
        self.refusal: functools.partial[TracejitError] | None = None  # strict=True: makes the error calls raise
        self.wrapper = make_wrapper(py_func)
        code = py_func.__code__
        if self.mode is Mode.PENDING:
            class_cell = code.co_freevars == ("__class__",)
            # (a closure reading variables of enclosing functions runs as one: its forwarders take its cells,
            # jit.wrapper; with the class cell of a method using super() besides, it stays plain)
            mixed_cells = "__class__" in code.co_freevars and not class_cell
            if (code.co_flags & _NOT_COMPILABLE_FLAGS and not options.strict) or (
                code.co_freevars and (options.strict or mixed_cells)
            ):
                self.mode = Mode.PLAIN  # (the front end's reason is found when jit.explain asks)
            elif (code.co_flags & inspect.CO_GENERATOR or class_cell) and not options.strict:
                # a generator function's code stays a generator's (inspect.isgeneratorfunction, and a call runs
                # nothing until its first next()), and a method using super() keeps its class cell, which a
                # trampoline's code (no free variable) cannot take over: the front end runs now
                self.ensure_prepared()
            else:  # the front end runs at the first call (and decides the code of later calls)
                self._set_code(forwarder(py_func, self, "first_call"))

    def _set_code(self, code: types.CodeType) -> None:
        self.wrapper.__code__ = code
        if code.co_filename.startswith("<tracejit "):  # a forwarder: its frames never show in tracebacks
            internal(self.wrapper)

    # --- calls -----------------------------------------------------------------------------------------
    @internal
    def first_call(self, *args: Any, **kwonly: Any) -> Any:
        """The trampoline's target: prepare the function, then call it again with its final code."""
        self.ensure_prepared()
        return self.wrapper(*args, **kwonly)

    def clean_traceback(self) -> None:
        """Called by a forwarder's except clause: drop its own traceback entry (the head) and tracejit's frames
        from the exception being handled."""
        exc = sys.exception()  # type: ignore[attr-defined]
        if exc is not None and exc.__traceback__ is not None:
            exc.__traceback__ = exc.__traceback__.tb_next
            clean_traceback(exc)

    def ensure_prepared(self) -> None:
        """Run the front end if it has not run yet (it runs on the first call, or for jit.explain)."""
        with self.lock:
            if self.mode is Mode.PENDING:
                start = time.perf_counter()
                self._prepare()
                self.frontend_ms = (time.perf_counter() - start) * 1000.0
            elif self.mode is Mode.PLAIN and self.reason is None:
                try:
                    compile_to_tier1(self.py_func)
                except Unsupported as exc:
                    self.reason = exc
                else:  # (the flags and free variables that made it plain always make the front end refuse)
                    self.reason = Unsupported("generator, coroutine, star-args or closure")

    def _prepare(self) -> None:
        strict = self.options.strict
        try:
            # (the CPython baseline runs the function and hands over its loops only: statements outside them that
            # the front end cannot compile are left to it)
            # (strict mode refuses them: nothing left to CPython, as Numba's nopython)
            self.code = compile_to_tier1(self.py_func, partial=self.baseline is Baseline.CPYTHON and not strict)
        except Unsupported as exc:
            self.reason = exc
            self.mode = Mode.PLAIN
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
            self.mode = Mode.TIER1
            if self.jit_unavailable is not None:
                if strict:
                    reason = self.jit_unavailable
                    self.refusal = functools.partial(NativeCodeUnavailableError, self._refusal_message(reason), reason)
                else:
                    self.gave_up = f"native code is not available: {self.jit_unavailable}"
        self._set_code(self._current_code())
        if self.jit_unavailable is not None and not strict:
            warn_native_code_unavailable(self.jit_unavailable)

    def _current_code(self) -> types.CodeType:
        """The code the wrapper runs, once the front end has run."""
        if self.refusal is not None:
            return forwarder(self.py_func, self, "refuse")
        if self.mode is not Mode.TIER1 or (self.gave_up is not None and self.jit_unavailable is not None):
            return self.py_func.__code__
        if self.baseline is Baseline.INTERPRETER:
            return self.py_func.__code__ if self.gave_up is not None else forwarder(self.py_func, self, "call_tier1")
        assert self.code is not None
        if self.hot_threshold <= 0 or not any(loop.handed_over for loop in self.code.loops):
            return self.py_func.__code__  # nothing to hand to the JIT (threshold=0: nothing ever is)
        if self.instrumented is None:
            return self._instrument()
        return self.wrapper.__code__

    def _instrument(self) -> types.CodeType:
        """The instrumented code, bound to this function's loop runtime (the plain code if that fails)."""
        assert self.code is not None
        try:
            self.instrumented = instrument(locate(self.py_func), self.code)
            runtime = LoopRuntime(self, self.instrumented.single_copy, self.instrumented.comprehensions)
            code = self.instrumented.bind({"RT": runtime.hooks})
            if not self._swappable(code):
                raise AssertionError("the instrumented code's free variables or kind differ from the function's")
        except Exception as exc:  # a bug of the instrumentation must not break the user's program
            detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
            self.reason = Unsupported(f"internal error while instrumenting the code: {detail}")
            self.mode = Mode.PLAIN
            return self.py_func.__code__
        runtime.codes.append(code)
        self.loop_runtime = runtime
        self.version = frozenset()
        self.versions[self.version] = code
        return code

    def _swappable(self, code: types.CodeType) -> bool:
        """May code (an instrumented copy) run as the wrapper's? The wrapper's closure is the function's: code takes
        the same free variables (the class cell of a method using super()), and stays a generator's where the
        function's is one."""
        own = self.py_func.__code__
        return code.co_freevars == own.co_freevars and not (code.co_flags ^ own.co_flags) & inspect.CO_GENERATOR

    def can_park(self) -> bool:
        """Whether new calls run the instrumented code, so that a version of it can take over."""
        return self.version is not None and self.wrapper.__code__ is self.versions[self.version]

    def run_version(self, parked: frozenset[int], build: bool = True) -> bool:
        """Make new calls run the version of the instrumented code in which the loops `parked` have no counter
        (the user's own code when every loop is parked); whether they do. build: make that version if it is not
        made yet; a garbage collection callback (the parking clock's) passes False: it may run inside any
        ``ast.parse`` or ``compile`` of an AST, the user's or ours, whose recursion count CPython 3.11 keeps in
        module state, so that parsing there made the interrupted one fail (``SystemError: AST constructor recursion
        depth mismatch``). Takes no lock (the GIL makes each step atomic; a race leaves a loop counted or uncounted
        until its next park or wake, never wrong)."""
        if not self.can_park():
            return False
        code = self.versions.get(parked)
        if code is None:
            if not build:
                return False
            code = self.make_version(parked)
            if code is None:
                return False  # (stay as it is)
        self.version = parked
        self.wrapper.__code__ = code
        return True

    def make_version(self, parked: frozenset[int]) -> types.CodeType | None:
        """The version of the instrumented code in which the loops `parked` have no counter, made once (None: it
        cannot run as the wrapper's code)."""
        code = self.versions.get(parked)
        if code is not None:
            return code
        assert self.code is not None and self.loop_runtime is not None
        if all(loop.index in parked for loop in self.code.loops if loop.handed_over):
            code = self.py_func.__code__
        else:
            version = instrument(locate(self.py_func), self.code, parked)
            code = version.bind({"RT": self.loop_runtime.hooks})
            if not self._swappable(code):
                return None
            self.loop_runtime.codes.append(code)
        self.versions[parked] = code
        return code

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
    def refuse(self, *args: Any, **kwonly: Any) -> Any:
        """What a strict function's calls run when tracejit cannot compile it."""
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
        """No loop of the function runs natively. With the interpreter as baseline, or without native code in
        this process, later calls run as plain CPython; with CPython as baseline, the blacklisted loops already
        run plain."""
        self.gave_up = reason
        self._set_code(self._current_code())

    def revive(self) -> None:
        """A blacklisted loop records again (the CPython baseline retries them): the give-up is over."""
        if self.jit_unavailable is None and self.baseline is Baseline.CPYTHON:
            self.gave_up = None

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

    def at_own_header(self, frame: Frame, loop: int, pc: int) -> int:
        """Called by run_loop at the header of the loop it runs (the loop driver replaces this)."""
        return -1


def jit_unavailable() -> str | None:
    """Why native code cannot be generated in this process, or None if it can, as far as the CPython build
    tells (llvmlite itself is imported only once a loop gets hot: see load_monitor)."""
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
