"""Unpacking into names, UNPACK_SEQUENCE: `x, y = pair`, `for k, v in rows`, `(x, y), w = p`.

* A list or a tuple (exactly): a guard on its length (a wrong one leaves, and the interpreter raises CPython's
  ValueError), then its items read in place, as reads of items 0 to n - 1 (the first on top).
* A tuple subclass whose ``__iter__`` is tuple's (a namedtuple, a structseq: ``jit.instances.iterated_as_tuple``):
  the same, with its class guarded where it is unpacked (``_GUARD_CLASS``, unless a guard since the last barrier
  says so already) and its version tag once (hoisted; checked again after barriers: assigning ``__iter__`` to the
  class or a base changes it). CPython iterates it with tuple's own iterator, which reads the object's size and
  items in place, as the tuple uops do (the layout is a tuple's).
* An enumerate's or a zip's items (virtual tuples, never built): pushed as they are.
* Anything else (a str, a generator, a set, a dict view, a range, a user's sequence, a tuple subclass with an
  ``__iter__`` of its own, one whose site met too many classes): CPython's own unpacking, called as a function
  (``jit.unpacking.unpacker``, ``_CALL_GENERIC``: a barrier, which may run the object's Python ``__iter__`` and
  raises CPython's own errors at this instruction, never made twice). It returns an exact tuple of exactly n
  items, read out of it with no guard; they are typed at the next instruction as a generic call's result is
  (``jit.recorder.generic.after_barrier``: a guard there leaves after the unpacking, with the items on the stack).
"""

from __future__ import annotations

from typing import Any

from jit import instances
from jit.aborts import Abort, Reason
from jit.frontend import instructions as I
from jit.frontend.operators import CompareOp
from jit.kinds import Kind
from jit.recorder import generic
from jit.recorder.recorder import Recorder, _handles
from jit.recorder.subscripts import _unbox
from jit.trace import Value
from jit.unpacking import unpacker
from runtime.frame import Frame


@_handles(I.UNPACK_SEQUENCE)
def _unpack_sequence(r: Recorder, frame: Frame, n: int) -> None:
    sequence = r.pop()
    items = r.virtual_tuples.pop(sequence.id, None)
    if items is not None:  # an enumerate's or a zip's items: only ever unpacked (the first on top)
        for item in reversed(items):
            r.push(item)
        return
    actual = frame.stack[-1]
    if sequence.kind in (Kind.LIST, Kind.TUPLE) or _as_tuple(r, sequence, actual):
        _in_place(r, sequence, actual, n)
        return
    _generic(r, sequence, n)


def _as_tuple(r: Recorder, sequence: Value, actual: Any) -> bool:
    """Is sequence (actual as recorded) an object CPython unpacks as a tuple? Then its class and version are
    guarded as recorded."""
    if sequence.kind != Kind.OBJECT:
        return False
    where = instances.iterated_as_tuple(type(actual))
    if where is None or not r.may_specialize(where.klass):
        return False
    r.guard_class(sequence, where.klass, where)
    return True


def _in_place(r: Recorder, sequence: Value, actual: Any, n: int) -> None:
    """A list, or a tuple (or a tuple subclass iterated as one), of n items: its length guarded, its items read."""
    is_list = sequence.kind == Kind.LIST
    size = list.__len__(actual) if is_list else tuple.__len__(actual)  # (never a subclass's own __len__)
    if size != n:  # (CPython raises ValueError here: the loop ends, a retry)
        what = f"unpacking {size} items into {n} names"
        raise Abort(Reason.RAISES, what=what, exception="ValueError")
    length = r.emit("_LEN_LIST" if is_list else "_LEN_TUPLE", (sequence,))
    same = r.emit("_COMPARE_OP_INT", (length, r.const(n)), operand=CompareOp.EQ)
    r.emit("_GUARD_IS_TRUE_POP", (same,))
    name = "_BINARY_SUBSCR_LIST_INT" if is_list else "_BINARY_SUBSCR_TUPLE_INT"
    read = list.__getitem__ if is_list else tuple.__getitem__
    for k in reversed(range(n)):
        r.push(_unbox(r, r.emit(name, (sequence, r.const(k))), read(actual, k)))


def _generic(r: Recorder, sequence: Value, n: int) -> None:
    """CPython's own unpacking, called (a barrier); its n items read out of the tuple it returns, typed at the
    next instruction."""
    what = f"unpacking a {sequence.kind.short}"
    made = generic.call(r, r.const(unpacker(n)), [generic.argument(r, sequence, what)])
    items = tuple(r.emit("_BINARY_SUBSCR_TUPLE_INT_IN_BOUNDS", (made, r.const(k))) for k in range(n))
    for item in reversed(items):
        r.push(item)
    r.after_barrier = items  # (the first on top: each typed as seen there)
