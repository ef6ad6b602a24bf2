"""Making exceptions from interpreted code look like they came from the user's function.

When an instruction raises, the exception leaves the interpreter through a tiny function compiled with the
user's file name, function name and line number, so the traceback shows ``File "user.py", line 12, in f`` and
the source line, as it would under plain CPython. The interpreter's own frames are dropped from the part of
the traceback below that point.
"""

from __future__ import annotations

import linecache
import types
from collections.abc import Callable
from typing import Any, NoReturn

_internal_codes: set[types.CodeType] = set()


def internal(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a runtime function whose frames should not show in user tracebacks."""
    _internal_codes.add(fn.__code__)
    return fn


_raisers: dict[tuple[str, str, str, int], Callable[[BaseException], NoReturn]] = {}


def _raiser_source(filename: str, line: int) -> str:
    """Source of `def raiser(exc): raise exc` whose raise sits at the user's line number. When the user's
    line is long enough, the raise statement spans exactly its text, so tracebacks underline nothing false."""
    text = linecache.getline(filename, line).rstrip()
    indent = len(text) - len(text.lstrip())
    body = "raise (exc"
    if line > 1 and indent > 0 and len(text) >= indent + len(body) + 1:
        padded = " " * indent + body + " " * (len(text) - indent - len(body) - 1) + ")"
        return "\n" * (line - 2) + "def raiser(exc):\n" + padded + "\n"
    return "\n" * (line - 1) + "def raiser(exc): raise exc\n"


def _raiser(filename: str, name: str, qualname: str, line: int) -> Callable[[BaseException], NoReturn]:
    key = (filename, name, qualname, line)
    fn = _raisers.get(key)
    if fn is None:
        source = _raiser_source(filename, line)
        namespace: dict[str, Any] = {}
        exec(compile(source, filename, "exec"), namespace)
        fn = namespace["raiser"]
        fn.__code__ = fn.__code__.replace(co_name=name, co_qualname=qualname)
        if len(_raisers) > 4096:
            _raisers.clear()
        _raisers[key] = fn
    return fn


def clean_traceback(exc: BaseException) -> None:
    """Drop tracejit's own frames from exc's traceback (the user's frames stay, in order)."""
    tb = exc.__traceback__
    probe = tb
    while probe is not None:
        if probe.tb_frame.f_code in _internal_codes:
            exc.__traceback__ = _without_internal_frames(tb)
            return
        probe = probe.tb_next


def _without_internal_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    entries = []
    while tb is not None:
        if tb.tb_frame.f_code not in _internal_codes:
            entries.append(tb)
        tb = tb.tb_next
    rebuilt = None
    for entry in reversed(entries):
        rebuilt = types.TracebackType(rebuilt, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return rebuilt


@internal
def raise_at(exc: BaseException, code: Any, pc: int) -> NoReturn:
    """Re-raise exc as if from the user's source line of instruction pc of tier-1 code `code`."""
    raiser = _raiser(code.filename, code.name, code.qualname, code.lines[pc])
    try:
        raiser(exc)
    finally:
        del exc
    raise AssertionError("unreachable")
