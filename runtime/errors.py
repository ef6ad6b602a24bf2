"""Making exceptions from interpreted code look like they came from the user's function.

When an instruction raises, the exception leaves the interpreter through a tiny function compiled with the
user's file name, function name and line number, so the traceback shows ``File "user.py", line 12, in f`` and
the source line, as it would under plain CPython. tracejit's own frames (the wrapper ``@jit`` returns, the
interpreter, the monitor, anything in tracejit's packages) are dropped from the traceback the caller sees, so a
deep recursion prints as short as under CPython. ``TRACEJIT_DEBUG=1`` keeps them, for reporting tracejit bugs.
"""

from __future__ import annotations

import linecache
import os
import types
import weakref
from collections.abc import Callable
from typing import Any, NoReturn

from jit import environment
from runtime.frame import UNBOUND

_UNBOUND_ID = id(UNBOUND)

# weak: generated code (each jitted function's wrapper) is registered too, and goes with its function. Keyed by
# id, not a WeakSet: a WeakSet's lookup of a member compares two weak references, so the code objects themselves,
# with ==, which on 3.11 rebuilds and compares their bytecode (13 us for the interpreter's loop, on every exception
# leaving a handed-over loop). A reference's callback drops its entry when the code dies, before its id is reused.
_internal_codes: dict[int, weakref.ref[types.CodeType]] = {}
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PACKAGE_DIRS = tuple(os.path.join(_ROOT, package) + os.sep for package in ("jit", "runtime", "codegen"))


def internal(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a function whose frames should not show in user tracebacks: generated code such as the wrapper
    ``@jit`` returns (the frames of code in tracejit's own packages are dropped anyway)."""
    code = fn.__code__
    key = id(code)

    def forget(ref: weakref.ref[types.CodeType]) -> None:
        if _internal_codes.get(key) is ref:
            del _internal_codes[key]

    _internal_codes[key] = weakref.ref(code, forget)
    return fn


def _is_internal(code: types.CodeType) -> bool:
    if code.co_filename.startswith(_PACKAGE_DIRS):
        return True
    ref = _internal_codes.get(id(code))
    return ref is not None and ref() is code


_raisers: dict[tuple[str, str, str, int], Callable[[BaseException], NoReturn]] = {}


def _raiser_source(filename: str, line: int, generator: bool = False) -> str:
    """Source of `def raiser(exc): raise exc` whose raise sits at the user's line number. When the user's
    line is long enough, the raise statement spans exactly its text, so tracebacks underline nothing false (and
    where the failing expression is the whole line, mark its operator as CPython's do: they read the text); a
    shorter line gets a raise from its indentation to the next line (a statement over several lines gets no
    carets). generator: a generator function (a `yield` after the raise)."""
    text = linecache.getline(filename, line).rstrip()
    indent = len(text) - len(text.lstrip())
    body = "raise (exc"
    after = " " * indent + "yield\n" if generator else ""
    if line > 1 and indent > 0 and len(text) >= indent + len(body) + 1:
        padded = " " * indent + body + " " * (len(text) - indent - len(body) - 1) + ")"
        return "\n" * (line - 2) + "def raiser(exc):\n" + padded + "\n" + after
    if line > 1 and indent > 0:
        return "\n" * (line - 2) + "def raiser(exc):\n" + " " * indent + body + "\n)\n" + after
    return "\n" * (line - 1) + "def raiser(exc): raise exc" + ("; yield" if generator else "") + "\n"


def _raiser(
    filename: str, name: str, qualname: str, line: int, generator: bool = False
) -> Callable[[BaseException], Any]:
    key = (filename, name, qualname, line, generator)
    fn = _raisers.get(key)
    if fn is None:
        source = _raiser_source(filename, line, generator)
        namespace: dict[str, Any] = {}
        exec(compile(source, filename, "exec"), namespace)
        fn = namespace["raiser"]
        fn.__code__ = fn.__code__.replace(co_name=name, co_qualname=qualname)
        if len(_raisers) > 4096:
            _raisers.clear()
        _raisers[key] = fn
    return fn


# An exception's attribute: the id of the first entry of its traceback when it was last cleaned; the
# traceback from that entry on is clean, so an exception leaving n nested jitted calls costs O(n) cleaning, not
# O(n**2). On the exception, not in a global: a new exception and its traceback often reuse the addresses of
# one just freed. An id, not a reference: no frame is kept alive.
_CLEANED = "__tracejit_cleaned_from__"


def clean_traceback(exc: BaseException) -> None:
    """Drop tracejit's own frames from exc's traceback (the user's frames stay, in order)."""
    if environment.debug():
        return
    clean_from = exc.__dict__.get(_CLEANED, 0)
    head: types.TracebackType | None = None
    kept: types.TracebackType | None = None  # the last entry kept so far
    probe = exc.__traceback__
    while probe is not None and id(probe) != clean_from:
        if not _is_internal(probe.tb_frame.f_code):
            if kept is None:
                head = probe
            elif kept.tb_next is not probe:
                kept.tb_next = probe  # unlink the internal entries in between
            kept = probe
        probe = probe.tb_next
    if kept is None:
        head = probe
    elif kept.tb_next is not probe:
        kept.tb_next = probe
    exc.__traceback__ = head
    exc.__dict__[_CLEANED] = id(head)


@internal
def raise_at(exc: BaseException, code: Any, pc: int) -> NoReturn:
    """Re-raise exc as if from the user's source line of instruction pc of tier-1 code `code`."""
    raiser = _raiser(code.filename, code.name, code.qualname, code.lines[pc])
    try:
        raiser(exc)
    finally:
        del exc
    raise AssertionError("unreachable")


def comprehension_entry(filename: str, name: str, qualname: str, line: int) -> tuple[types.FrameType, int, int]:
    """A traceback entry (frame, lasti, lineno) of a comprehension's own frame (name, qualname) at the user's line,
    for a traceback to show where CPython runs the comprehension in a frame of its own: the entry a raiser of that
    name makes raising there, its frame cleared."""
    # (a generator's: a finished generator's frame keeps no link to the frames that resumed it, so the entry holds
    # nothing of the stack it was made on, the loop driver's iterator say)
    raiser = _raiser(filename, name, qualname, line, generator=True)
    try:
        next(raiser(_EntryProbe()))
    except _EntryProbe as probe:
        entry = probe.__traceback__
        while entry is not None and entry.tb_frame.f_code is not raiser.__code__:
            entry = entry.tb_next
        assert entry is not None
        made = entry.tb_frame, entry.tb_lasti, entry.tb_lineno
        made[0].clear()  # (it held the probe, whose traceback holds the frame: no cycle left)
        return made
    raise AssertionError("unreachable")


class _EntryProbe(Exception):
    """Raised only to make a traceback entry (``comprehension_entry``)."""


def _comprehension_frames() -> bool:
    """Whether the running Python runs a comprehension in a frame of its own (a nested function: 3.11), which
    tracebacks show; from 3.12 on, comprehensions are inlined."""
    code = compile("[x for x in ()]", "<probe>", "eval")
    return any(isinstance(const, types.CodeType) for const in code.co_consts)


COMPREHENSION_FRAMES = _comprehension_frames()


def own_frame_loops(code: Any) -> list[Any]:
    """The first loops of the comprehensions and generator expressions of tier-1 code `code` that CPython runs in
    frames of their own, outermost first: a generator expression's on every version, a list, set or dict
    comprehension's where the running Python makes one (3.11)."""
    return sorted(
        (
            loop
            for loop in code.loops
            if loop.frame_name is not None and (COMPREHENSION_FRAMES or loop.frame_name == "<genexpr>")
        ),
        key=lambda loop: loop.header_pc,
    )


def own_frames_at(code: Any, pc: int | None, candidates: list[Any] | None = None) -> list[Any]:
    """Those of ``own_frame_loops(code)`` (or of candidates, that list made once) whose own frames CPython would run
    the instruction at pc in, outermost first. (What a builtin consuming a generator expression does with each
    element, ``LoopInfo.consumer_pcs``, runs in the frame around the expression's.)"""
    if pc is None:
        return []
    levels = [loop for loop in (own_frame_loops(code) if candidates is None else candidates) if loop.contains(pc)]
    for depth, level in enumerate(levels):
        if pc in level.consumer_pcs:
            return levels[:depth]
    return levels


def own_frame_entries(
    code: Any, pc: int | None, levels: list[Any] | None = None
) -> list[tuple[types.FrameType, int, int]]:
    """Traceback entries of the own frames (``own_frames_at``, or levels: some of them, the innermost last) the
    instruction at pc of tier-1 code `code` runs in, outermost first: each at the line where the next one starts,
    the innermost at the instruction's line, as CPython's traceback shows them."""
    if levels is None:
        levels = own_frames_at(code, pc)
    if not levels:
        return []
    assert pc is not None
    entries = []
    qualname = f"{code.qualname}.<locals>"
    for level in own_frames_at(code, levels[0].frame_pc):  # (the frames around the first level's, if any)
        qualname = f"{qualname}.{level.frame_name}"
    for depth, level in enumerate(levels):
        name = level.frame_name
        qualname = f"{qualname}.{name}"  # (a nested one's: f.<locals>.<listcomp>.<genexpr>, as CPython's)
        line = code.lines[levels[depth + 1].frame_pc] if depth + 1 < len(levels) else code.lines[pc]
        entries.append(comprehension_entry(code.filename, name, qualname, line))
    return entries


def _entries_first(exc: BaseException, entries: list[tuple[types.FrameType, int, int]]) -> types.TracebackType | None:
    """exc's traceback, tracejit's frames dropped (``clean_traceback``), after the traceback entries `entries`
    (outermost first)."""
    clean_traceback(exc)
    rebuilt = exc.__traceback__
    for frame, lasti, lineno in reversed(entries):
        rebuilt = types.TracebackType(rebuilt, frame, lasti, lineno)
    return rebuilt


def enter_own_frames(exc: BaseException, code: Any, pc: int) -> int:
    """Start exc's traceback (tracejit's frames dropped) with the entries of the own frames the instruction at pc of
    tier-1 code `code` runs in (``own_frame_entries``), for it to be raised from the function's line then (as
    ``raise_at`` does): as CPython's traceback shows them after the function's frame. The pc whose line the
    function's frame shows: the outermost own frame's call, else pc."""
    levels = own_frames_at(code, pc)
    if not levels:
        return pc
    exc.__traceback__ = _entries_first(exc, own_frame_entries(code, pc, levels))
    return levels[0].frame_pc


def generator_raised(exc: BaseException, code: Any, pc: int) -> tuple[RuntimeError, int] | None:
    """PEP 479 for a generator expression consumed inline (``jit.frontend.consumers``): where exc, a StopIteration
    raised at pc of tier-1 code `code`, was raised in the body of one (its loops, from its first FOR_ITER: the
    end of an iterator it loops over raises nothing), the RuntimeError CPython raises instead, caused by exc, and
    the pc where it shows in the code around (the innermost such expression's call); exc's traceback then starts
    at the expression's own frame, as CPython's does. None elsewhere."""
    if not isinstance(exc, StopIteration):
        return None
    levels = own_frames_at(code, pc)
    generators = [level for level in levels if level.frame_name == "<genexpr>"]
    if not generators:
        return None
    innermost = generators[-1]
    inside = levels[levels.index(innermost) :]
    exc.__traceback__ = _entries_first(exc, own_frame_entries(code, pc, inside))
    converted = RuntimeError("generator raised StopIteration")
    converted.__cause__ = exc
    converted.__context__ = exc
    return converted, innermost.frame_pc


@internal
def raise_in_comprehension(exc: BaseException, entries: list[tuple[types.FrameType, int, int]]) -> NoReturn:
    """Re-raise exc, raised in a comprehension that CPython handed over whole, as if from that comprehension's own
    frames where the running Python makes them: entries (``LoopRuntime.comprehension_entries``, outermost first)
    go before the user's functions the comprehension called, if it raised in one, and tracejit's frames go; the
    user's frame then shows the comprehension, as CPython's traceback."""
    if not entries:
        raise exc
    try:
        raise exc.with_traceback(_entries_first(exc, entries))
    finally:
        del exc


# --- exceptions leaving a loop that CPython handed to the JIT --------------------------------------------
#
# The instrumented code (jit.frontend.instrument) calls the loop driver (runtime.loop_driver) from inside the
# user's own frame. An exception leaving the driver reaches that frame at the hand-off call; the frame's
# handler calls ``fix_handoff_traceback``, which points the frame's traceback entry at the instruction that
# failed in tier 1 and drops tracejit's frames, so that the traceback reads as CPython's would.

# by id, each to its code (which it keeps alive): a set of codes would hash the code looked up, which on 3.11
# hashes its bytecode (0.3-0.5 us, twice at every exception leaving a handed-over loop)
_driver_codes: dict[int, types.CodeType] = {}


def loop_driver(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark the function that runs a handed-off loop: its frame has locals ``self`` (with a method
    ``traceback_position(code, frame)``) and ``frame`` (the tier-1 frame); it is internal."""
    _driver_codes[id(fn.__code__)] = fn.__code__
    return internal(fn)


def _is_driver(code: types.CodeType) -> bool:
    return _driver_codes.get(id(code)) is code


#: An exception's attribute, set by the loop driver as the exception leaves it (``LoopRuntime.loop``): (the driver's
#: frame, its runtime, the tier-1 frame or None), what the instrumented frame's handler would otherwise read from the
#: driver frame's ``f_locals`` (1-1.5 us a read on 3.11: it copies every local of the driver into a dict, twice per
#: exception). Taken off the exception by the first handler that sees it (``fix_handoff_traceback``), so a caller
#: never does; an entry whose driver frame is another than the one at hand is not used (a handler deeper down did
#: not run: a RecursionError), then f_locals is read.
HANDOFF_NOTE = "__tracejit_handoff__"


def _driver_state(driver: types.FrameType, note: tuple[Any, ...] | None) -> tuple[Any, Any]:
    """(the loop runtime, the tier-1 frame or None) of the loop driver frame `driver`: from the driver's note on
    the exception if it is that frame's, else from its locals."""
    if note is not None and note[0] is driver:
        return note[1], note[2]
    names = driver.f_locals
    return names["self"], names.get("frame")


def _locals_of(runtime: Any, frame: Any) -> tuple[tuple[Any, ...], bool] | None:
    if frame is None:
        return None
    values = tuple(frame.slots[: runtime.t1.nlocals])
    return values, _UNBOUND_ID in map(id, values)  # (by identity: a value's == may be the user's)


def handoff_locals(exc: BaseException) -> tuple[tuple[Any, ...], bool] | None:
    """Where a handed-off loop raised exc: the user's locals as the tier-1 frame had them (slot order, the
    unbound marker for unbound ones) and whether one is unbound, for the instrumented frame handling exc (its
    traceback's head, which called the loop driver) to take before it re-raises, so that its frame holds them
    as CPython's would have when that instruction raised (a handler around the loop, a ``finally``, a
    post-mortem debugger see them); None if the driver made no tier-1 frame (nothing of the loop ran). Call it
    before ``fix_handoff_traceback``, which drops the driver's entry (``unwind_handoff`` does both)."""
    node = exc.__traceback__
    following = node.tb_next if node is not None else None
    if following is None or not _is_driver(following.tb_frame.f_code):
        return None
    return _locals_of(*_driver_state(following.tb_frame, exc.__dict__.get(HANDOFF_NOTE)))


def unwind_handoff(exc: BaseException) -> tuple[tuple[Any, ...], bool] | None:
    """What the instrumented frame handling exc, raised by a hand-off, does before it re-raises, in one call:
    ``handoff_locals`` (returned), then ``fix_handoff_traceback``."""
    # (one Python call where it can: 2 us at every exception leaving a handed-over loop went in a dozen small ones)
    note = exc.__dict__.pop(HANDOFF_NOTE, None)
    node = exc.__traceback__
    following = node.tb_next if node is not None else None
    unwound = None
    if following is not None:
        driver = following.tb_frame
        if _driver_codes.get(id(driver.f_code)) is driver.f_code:
            if note is not None and note[0] is driver:
                runtime, frame = note[1], note[2]
            else:
                runtime, frame = _driver_state(driver, None)
            if frame is not None:
                values = tuple(frame.slots[: runtime.t1.nlocals])
                unwound = values, _UNBOUND_ID in map(id, values)  # (by identity: a value's == may be the user's)
    try:
        _fix(exc, note)
    except RecursionError:
        pass  # (no stack left to fix the traceback: the locals are still the frame's, as when this was two calls)
    return unwound


def fix_handoff_traceback(exc: BaseException) -> None:
    """Rewrite exc's traceback from its head (the instrumented frame handling it): every user frame entry
    that called the loop driver gets the failing instruction's position; tracejit's frames go (TRACEJIT_DEBUG=1
    keeps them). The walk stops at the first entry already in order, so each frame's handler does a few steps
    only. Takes the driver's note (``HANDOFF_NOTE``) off exc."""
    _fix(exc, exc.__dict__.pop(HANDOFF_NOTE, None))


def _fix(exc: BaseException, note: tuple[Any, ...] | None) -> None:
    keep_ours = environment.debug()
    kept: list[tuple[types.FrameType, int, int]] = []
    node = exc.__traceback__
    fixed = False
    internal_codes = _internal_codes
    driver_codes = _driver_codes
    while node is not None:
        code = node.tb_frame.f_code
        following = node.tb_next
        # (_is_internal and _is_driver, inline)
        ref = internal_codes.get(id(code))
        if code.co_filename.startswith(_PACKAGE_DIRS) or (ref is not None and ref() is code):
            if keep_ours:
                kept.append((node.tb_frame, node.tb_lasti, node.tb_lineno))
            node = following
            continue
        if following is None:
            break
        driver = following.tb_frame
        if driver_codes.get(id(driver.f_code)) is not driver.f_code:
            break  # a user frame that did not hand off: from here on the traceback is in order
        runtime, tier1_frame = _driver_state(driver, note)
        located = runtime.raise_location(code, tier1_frame)
        if located is None:
            kept.append((node.tb_frame, node.tb_lasti, node.tb_lineno))
        else:
            kept.append((node.tb_frame, *located[0]))
            # (the frames of the comprehensions the instruction ran in, where CPython makes them: after the user's)
            kept.extend(located[1])
        fixed = True
        node = following
    if not fixed:
        return
    rebuilt = node
    for frame, lasti, lineno in reversed(kept):
        rebuilt = types.TracebackType(rebuilt, frame, lasti, lineno)
    exc.__traceback__ = rebuilt
