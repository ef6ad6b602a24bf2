"""Parking: a loop that has not paid for a long time leaves the instrumented code, and comes back later.

A loop CPython runs plain (blacklisted without a tree, or its native entries did not pay) still costs a
little at each of its starts: the instrumented code reads its counter and counts its back-off (about 20-50 ns,
a fifth of a small helper's call). Once a loop's back-off, counted in loop starts, has reached its longest
(``runtime.loop_driver``), the loop is *parked*: the function's code is swapped for a version in which that
loop is the user's statement with no counter at all (``jit.frontend.instrument``; with every loop parked, the
user's own code object). Frames already running keep their code, whose counter keeps counting the longest
back-off; calls made from then on run the new version.

A parked loop is not parked for good. What wakes it must cost nothing in the code, so the clock is CPython's
garbage collector: a callback counts collections (of any generation), and a loop wakes once it has been parked
for its number of them, which doubles each time it is parked again (``FIRST_PARK`` up to ``MAX_PARK``). Woken,
the loop is back in the code and handed to the JIT at its next start but one, where a change of behaviour wins
it back. A program that allocates no containers triggers no collection and keeps its loops parked, but then
nothing changes that could make them pay either. (Collections, not wall time: tests wake loops with
``gc.collect``.)

The callback is installed when a loop is first parked (and stays: removing it while CPython calls the
callbacks would make it skip another library's). It runs wherever a collection
happens, in any thread, in the middle of any code, tracejit's included: it takes no lock, skips a loop runtime
busy changing its code (it wakes at a later collection), never raises, and never parses nor compiles: it runs
inside any ``ast.parse`` or compile of an AST that allocates, whose recursion count CPython 3.11 keeps in module
state (a parse there made the interrupted one raise ``SystemError: AST constructor recursion depth mismatch``), so
it only swaps in versions of the code that parking made beforehand (``LoopRuntime.park``); a loop whose version
is not made stays parked, tried again at the next collection.
"""

from __future__ import annotations

import gc
import weakref
from typing import Any

FIRST_PARK = 16  # garbage collections a loop stays parked the first time
MAX_PARK = 2**16  # garbage collections a loop stays parked, at most

# (weak reference to a loop runtime, loop index) -> the collection count at which the loop wakes
_due: dict[tuple[weakref.ref[Any], int], int] = {}
_clock = [0, 0]  # [collections counted, the smallest due count]
_installed = [False]


def park(runtime: Any, index: int, collections: int) -> None:
    """Count `collections` garbage collections, then call ``runtime.wake(index)``."""
    due = _clock[0] + collections
    _due[(weakref.ref(runtime), index)] = due
    if len(_due) == 1 or due < _clock[1]:
        _clock[1] = due
    if not _installed[0]:
        gc.callbacks.append(_on_collection)
        _installed[0] = True


def collections_left(runtime: Any, index: int) -> int | None:
    """How many more garbage collections loop `index` of `runtime` stays parked (None: it is not parked)."""
    due = _due.get((weakref.ref(runtime), index))
    return None if due is None else max(due - _clock[0], 0)


def _on_collection(phase: str, info: dict[str, int]) -> None:
    if phase != "stop":
        return
    try:
        _clock[0] += 1
        if _clock[0] >= _clock[1]:
            _wake_due()
    except Exception:  # a gc callback must never raise: the loop stays parked, at worst
        pass


def _wake_due() -> None:
    now = _clock[0]
    soonest = None
    for key, due in list(_due.items()):
        runtime = key[0]()
        if runtime is None:
            _due.pop(key, None)
            continue
        if due <= now and not runtime.busy:
            try:
                woken = runtime.wake(key[1])
            except Exception:
                woken = True  # (dropped: the loop stays parked)
            if woken:
                _due.pop(key, None)
                continue
            due = _due[key] = now + 1  # (its version of the code is not made: tried again at the next collection)
        soonest = due if soonest is None else min(soonest, due)
    _clock[1] = now + 1 if soonest is None else soonest
