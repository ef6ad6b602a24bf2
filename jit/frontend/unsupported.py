"""Why a function cannot be compiled to tier-1 code."""

from __future__ import annotations


class Unsupported(Exception):
    """Raised by the front end for a construct outside the supported subset (or, ``source=True``, when the
    function's source cannot be used); the function then runs as plain CPython and ``jit.explain`` shows
    ``reason`` and ``line``."""

    def __init__(self, reason: str, line: int | None = None, *, source: bool = False) -> None:
        super().__init__(reason, line)
        self.reason = reason
        self.line = line
        self.source = source

    @property
    def what(self) -> str:
        """What kind of refusal this is, for reports: "unsupported construct" or "source not usable"."""
        return "source not usable" if self.source else "unsupported construct"

    def __str__(self) -> str:
        where = f" (line {self.line})" if self.line is not None else ""
        return f"{self.reason}{where}"
