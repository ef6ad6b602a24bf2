"""The state of one call of a jitted function while the tier-1 interpreter runs it."""

from __future__ import annotations

from typing import Any


class _Unbound:
    """The value of a slot with nothing in it (an unassigned local, a finished loop's hidden slot)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<unbound>"

    def __reduce__(self) -> str:
        return "UNBOUND"


UNBOUND: Any = _Unbound()


class Frame:
    """Slots (user locals, then hidden loop state) and the operand stack of one call.

    ``function`` is the function's runtime state (``jit.function.JitFunction``): its tier-1 code, globals,
    builtins, loop counters and the JIT that the interpreter consults at loop headers.
    ``trace_hook`` is set while a trace is being recorded; the interpreter calls it before every instruction.
    ``error_pc``: when the interpreter runs one loop (``run_loop``) and an exception leaves it, the pc of the
    instruction that raised. ``raised_at``: native code left with an exception at that pc (a generic call
    raised there, a signal handler ran at a loop's header): the interpreter raises it from there.
    """

    __slots__ = ("function", "code", "slots", "stack", "trace_hook", "error_pc", "raised_at")

    def __init__(self, function: Any, code: Any, slots: list[Any]) -> None:
        self.function = function
        self.code = code
        self.slots = slots
        self.stack: list[Any] = []
        self.trace_hook: Any = None
        self.error_pc: int | None = None
        # the pc where native code left with an exception (runtime.runner): where the interpreter raises it
        self.raised_at: int | None = None
