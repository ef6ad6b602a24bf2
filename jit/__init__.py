"""tracejit: a tracing JIT compiler for numeric Python functions, on LLVM.

    from jit import jit

    @jit
    def f(n): ...

``jit.explain(f)`` reports what runs where and why not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jit import environment
from jit.errors import (
    EnvironmentVariableWarning,
    NativeCodeUnavailableError,
    NativeCodeUnavailableWarning,
    TracejitError,
    TracejitWarning,
    UnsupportedFunctionError,
)

environment.check()  # a value tracejit does not understand is reported at import

if TYPE_CHECKING:
    from jit.api import dump, explain, jit, stats

_API = ("dump", "explain", "jit", "stats")


def __getattr__(name: str) -> Any:
    """The API (``jit.api``) is imported at its first use, not with the package: every ``jit.x`` module runs
    this file first, and the vocabulary modules (``jit.kinds``, ...) must not pull in the layers above them."""
    if name in _API:
        from jit import api

        value = globals()[name] = getattr(api, name)
        return value
    raise AttributeError(f"module 'jit' has no attribute {name!r}")


__all__ = [
    "EnvironmentVariableWarning",
    "NativeCodeUnavailableError",
    "NativeCodeUnavailableWarning",
    "TracejitError",
    "TracejitWarning",
    "UnsupportedFunctionError",
    "dump",
    "explain",
    "jit",
    "stats",
]
