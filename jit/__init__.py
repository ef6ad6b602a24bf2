"""tracejit: a tracing JIT compiler for numeric Python functions, on LLVM.

    from jit import jit

    @jit
    def f(n): ...

``jit.explain(f)`` reports what runs where and why not.
"""

from __future__ import annotations

from jit import environment
from jit.api import dump, explain, jit, stats
from jit.errors import (
    EnvironmentVariableWarning,
    NativeCodeUnavailableError,
    NativeCodeUnavailableWarning,
    TracejitError,
    TracejitWarning,
    UnsupportedFunctionError,
)

environment.check()  # a value tracejit does not understand is reported at import

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
