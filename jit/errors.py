"""The exceptions and warnings tracejit raises for its own reasons (all exported from ``jit``).

Errors of the user's code are never wrapped: a jitted function raises exactly what the plain function raises.
These classes are only for what tracejit itself has to say, so that users can catch or filter it.
"""

from __future__ import annotations

__all__ = [
    "EnvironmentVariableWarning",
    "NativeCodeUnavailableError",
    "NativeCodeUnavailableWarning",
    "TracejitError",
    "TracejitWarning",
    "UnsupportedFunctionError",
]


class TracejitError(Exception):
    """Base class of the errors tracejit raises itself."""


class UnsupportedFunctionError(TracejitError):
    """``@jit(strict=True)``: the front end cannot compile the function (an unsupported construct, or its source
    is unavailable or changed), so it would run as plain CPython. ``reason`` and ``line`` say why and where."""

    def __init__(self, message: str, reason: str, line: int | None) -> None:
        super().__init__(message)
        self.reason = reason
        self.line = line


class NativeCodeUnavailableError(TracejitError):
    """``@jit(strict=True)``: native code cannot be generated in this process (llvmlite cannot be imported or
    used, or the CPython build is not one tracejit supports). ``reason`` says why."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class TracejitWarning(UserWarning):
    """Base class of tracejit's warnings: ``warnings.filterwarnings("ignore", category=jit.TracejitWarning)``
    silences all of them."""


class NativeCodeUnavailableWarning(TracejitWarning):
    """Native code cannot be generated in this process, so jitted functions are interpreted (slower than plain
    CPython). Issued once per process."""


class EnvironmentVariableWarning(TracejitWarning):
    """An environment variable tracejit reads has a value it does not understand; the value is ignored."""
