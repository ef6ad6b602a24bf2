"""Why a function cannot be compiled to tier-1 code."""

from __future__ import annotations


class Unsupported(Exception):
    """Raised by the front end for a construct outside the supported subset; the function then runs as plain
    CPython and ``jit.explain`` shows ``reason`` and ``line``."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason, line)
        self.reason = reason
        self.line = line

    def __str__(self) -> str:
        where = f" (line {self.line})" if self.line is not None else ""
        return f"{self.reason}{where}"
