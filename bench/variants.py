"""The variants of a function that the benchmark times: plain CPython, ``@jit``, ``@jit(nesting=False)`` and
``numba.njit``, the yardstick.

Numba is optional (the ``bench`` extra installs it where it has wheels). It is imported only where a Numba
variant is made, so that processes that time something else do not pay for importing it. Numba may refuse a
function (``NumbaCannotRun`` says why, in one line) or compute something else than CPython: its ints are 64-bit
and wrap around on overflow where Python's grow (``numba_discrepancy``).
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable
from typing import Any

from jit import jit

PLAIN, JIT, NESTING_OFF, NUMBA = "plain", "jit", "nesting-off", "numba"
#: @jit with the policy of entries that pay off and no warm-up: every hand-off enters native code (to measure what
#: that costs)
ALWAYS_ENTER = "always-enter"
#: the same, entering native code the way it did before entry stubs: the frame unboxed and boxed in Python
PYTHON_ENTRY = "python-entry"
#: the header of each variant's column
LABELS = {
    PLAIN: "plain CPython",
    JIT: "@jit",
    NESTING_OFF: "nesting off",
    NUMBA: "numba.njit",
    ALWAYS_ENTER: "@jit(min_native_iterations=0, warmup=0)",
    PYTHON_ENTRY: "@jit(min_native_iterations=0, warmup=0, entry_stubs=False)",
}


def make_variant(func: Callable[..., Any], variant: str) -> Callable[..., Any]:
    """A fresh callable for one variant: the function itself, a new jit instance of it, or a new Numba
    dispatcher (which compiles at its first call)."""
    if variant == PLAIN:
        return func
    if variant == JIT:
        return jit(func)
    if variant == NESTING_OFF:
        return jit(nesting=False)(func)
    if variant == ALWAYS_ENTER:
        return jit(min_native_iterations=0, warmup=0)(func)
    if variant == PYTHON_ENTRY:
        return jit(min_native_iterations=0, warmup=0, entry_stubs=False)(func)
    if variant == NUMBA:
        import numba

        return numba.njit(func)
    raise ValueError(f"unknown variant {variant!r}")


def numba_installed() -> bool:
    """Whether numba can be found (cheap: does not import it). Every process of a run gets the same answer."""
    return importlib.util.find_spec("numba") is not None


def numba_import_problem() -> str | None:
    """None if numba imports, else why not (in one line)."""
    if not numba_installed():
        return "Numba is not installed"
    try:
        import numba  # noqa: F401
    except Exception as exc:  # a broken install (numpy too new, ...) must not stop the benchmark
        return f"Numba does not import: {type(exc).__name__}: {first_line(str(exc))}"
    return None


def warm_numba() -> None:
    """Compile one trivial function, so that Numba's one-time initialization is not charged to the first
    kernel's first call."""
    import numba

    @numba.njit
    def numba_warmup(n: int) -> int:
        total = 0
        for i in range(n):
            total += i
        return total

    numba_warmup(10)


class NumbaCannotRun(Exception):
    """Numba could not compile (or run) a function as written; str() is the reason, in one line."""


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def first_line(message: str) -> str:
    lines = [line.strip() for line in _ANSI.sub("", message).splitlines()]
    return next((line for line in lines if line), "")


def numba_reason(exc: Exception) -> str:
    """The line of a Numba error that says what is wrong, without the pipeline step it failed in."""
    lines = [line.strip() for line in _ANSI.sub("", str(exc)).splitlines()]
    meaningful = [line for line in lines if line and not line.startswith("Failed in ")]
    reason = meaningful[0] if meaningful else type(exc).__name__
    return reason if len(reason) <= 200 else reason[:197] + "..."


def numba_call(dispatcher: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    """Call a Numba dispatcher; a compilation failure (or an exception CPython would not raise, which the
    caller's comparison would not catch) becomes NumbaCannotRun."""
    from numba.core.errors import NumbaError

    try:
        return dispatcher(*args)
    except NumbaError as exc:
        raise NumbaCannotRun(numba_reason(exc)) from exc
    except Exception as exc:
        raise NumbaCannotRun(f"raised {type(exc).__name__}: {first_line(str(exc))}") from exc


def numba_discrepancy(got: Any, expected: Any) -> str | None:
    """None if Numba's result is CPython's (same type and value), else a short label: "wraps" where the ints
    agree modulo 2**64 (Numba's int64 arithmetic wrapped around), "differs" otherwise."""
    if type(got) is type(expected) and (got == expected or repr(got) == repr(expected)):
        return None
    if type(got) is int and type(expected) is int and (got - expected) % 2**64 == 0:
        return "wraps"
    return "differs"
