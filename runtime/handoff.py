"""A loop's state moving between CPython and tier 1.

CPython runs a ``for`` loop with an iterator object; tier 1 keeps the same state in the loop's hidden slots
(see ``jit.frontend.instructions``): ``cur, stop, step`` for a range, ``sequence, index`` for a list, a tuple or
an ndarray (``jit.kinds.by_index``), else the iterator itself. At a hand-off the tier-1 slots are made from CPython's iterator, through the
pickling interface of the builtin iterators (``__reduce__``); when CPython takes the loop back, its iterator
is moved to where tier 1 left it (``__setstate__``).

Only an iterator private to the loop (made by the loop from an iterable, which CPython passes along) is
copied this way; an iterator the user holds (``for x in it`` with ``it`` an iterator) is shared as it is, so
both sides see every ``next``.

``__setstate__`` means an absolute index for list and tuple iterators, and, for range iterators, an absolute
index on Python 3.11 but a relative advance from 3.12 on (where ``__reduce__`` gives the range still to go).
Which one is probed at import, per iterator type.
"""

from __future__ import annotations

from typing import Any

from jit.frontend.instructions import LoopInfo, LoopKind
from jit.kinds import by_index
from runtime.frame import UNBOUND

RANGE_ITERATOR = type(iter(range(0)))
LONG_RANGE_ITERATOR = type(iter(range(2**64)))
LIST_ITERATOR = type(iter([]))
TUPLE_ITERATOR = type(iter(()))


class _Sequence:
    def __getitem__(self, index: int) -> int:
        if index >= 3:
            raise IndexError(index)
        return index


SEQUENCE_ITERATOR = type(iter(_Sequence()))  # (an ndarray's iterator: it indexes the array)


def _setstate_is_absolute(it: Any) -> bool:
    """Whether __setstate__(n) of it's type moves to index n (True) or n items further (False)."""
    first = next(it)
    it.__setstate__(0)
    return next(it) == first


_ABSOLUTE = {
    RANGE_ITERATOR: _setstate_is_absolute(iter(range(3))),
    LONG_RANGE_ITERATOR: _setstate_is_absolute(iter(range(2**64, 2**64 + 3))),
    LIST_ITERATOR: _setstate_is_absolute(iter([0, 1, 2])),
    TUPLE_ITERATOR: _setstate_is_absolute(iter((0, 1, 2))),
    SEQUENCE_ITERATOR: _setstate_is_absolute(iter(_Sequence())),
}


def _position(it: Any) -> tuple[Any, int | None]:
    """What a builtin iterator walks (as its __reduce__ gives it) and its index there (None: exhausted, for
    good)."""
    reduced = it.__reduce__()
    walked = reduced[1][0]
    if len(reduced) < 3:
        return walked, None  # (an exhausted list or tuple iterator forgets its sequence)
    return walked, reduced[2] if reduced[2] is not None else 0


def _move(it: Any, index: int, target: int) -> None:
    """Move a builtin iterator now at index to index target."""
    it.__setstate__(target if _ABSOLUTE[type(it)] else target - index)


def enter(loop: LoopInfo, it: Any, iterable: Any, slots: list[Any]) -> None:
    """Fill loop's hidden slots from CPython's iterator `it`, made from `iterable` (None: `it` may be the
    user's own iterator)."""
    base = loop.hidden[0]
    kind = type(iterable)
    if loop.kind is LoopKind.RANGE:
        if kind is range:  # (tier 1's RANGE_SETUP takes exactly a range)
            if type(it) is RANGE_ITERATOR:  # (its range's length fits in a C long: the cheap way)
                slots[base] = iterable.start + (len(iterable) - it.__length_hint__()) * iterable.step
            else:
                rng, index = _position(it)
                slots[base] = rng.start + index * rng.step
            slots[base + 1] = iterable.stop  # (not rng.stop: __reduce__ gives the stop it computes)
            slots[base + 2] = iterable.step
            slots[base + 3] = None
        else:  # `range` names something else: tier 1 iterates what it returned
            slots[base] = slots[base + 1] = slots[base + 2] = None
            slots[base + 3] = it
    elif loop.kind is LoopKind.ITER:
        if by_index(iterable):  # (tier 1's GET_ITER takes exactly these: a subclass may differ)
            _, index = _position(it)
            slots[base] = iterable if index is not None else ()
            slots[base + 1] = index or 0
            slots[base + 2] = None
        else:
            slots[base] = slots[base + 1] = None
            slots[base + 2] = it


def leave(loop: LoopInfo, it: Any, iterable: Any, slots: list[Any]) -> None:
    """Before CPython resumes loop at its header: move its private iterator to where tier 1 left it."""
    if iterable is None or loop.kind is LoopKind.WHILE:
        return
    base = loop.hidden[0]
    if loop.kind is LoopKind.RANGE:
        step = slots[base + 2]
        if step is None or step is UNBOUND:
            return  # tier 1 iterated CPython's iterator itself
        rng, index = _position(it)
        assert index is not None
        _move(it, index, index + (slots[base] - (rng.start + index * rng.step)) // step)
    elif slots[base + 2] is None:
        _, index = _position(it)
        if index is not None:
            _move(it, index, slots[base + 1])
