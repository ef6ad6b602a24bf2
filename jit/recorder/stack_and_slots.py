"""Handlers of the operand stack and the frame's slots: loads, stores, deletes, constants (unpacking:
``jit.recorder.unpacking``)."""

from __future__ import annotations

from typing import Any

from jit import specialize
from jit.aborts import Abort, Reason
from jit.frontend import instructions as I
from jit.kinds import Kind
from jit.recorder.recorder import Recorder, _handles
from runtime.frame import UNBOUND, Frame


@_handles(I.NOP)
def _nop(r: Recorder, frame: Frame, arg: Any) -> None:
    pass


@_handles(I.LOAD_FAST)
def _load_fast(r: Recorder, frame: Frame, slot: int) -> None:
    r.push(r.int_object_of(_read_bound(r, frame, slot), frame.slots[slot]))  # (int arithmetic takes int objects)


def _read_bound(r: Recorder, frame: Frame, slot: int) -> Any:
    """A local the instruction reads: unbound, the interpreter raises UnboundLocalError there, which ends the
    loop (a retry: jit.aborts)."""
    try:
        return r.read_slot(frame, slot)
    except Abort as abort:
        if abort.reason is not Reason.UNBOUND_READ:
            raise
        raise Abort(Reason.RAISES, what="read of an unbound local", exception="UnboundLocalError") from None


@_handles(I.STORE_FAST)
def _store_fast(r: Recorder, frame: Frame, slot: int) -> None:
    r.write_slot(slot, r.pop(stored=True))


@_handles(I.DELETE_FAST)
def _delete_fast(r: Recorder, frame: Frame, slot: int) -> None:
    _read_bound(r, frame, slot)
    r.write_slot(slot, r.const(UNBOUND))


@_handles(I.LOAD_FAST_AND_CLEAR)
def _load_fast_and_clear(r: Recorder, frame: Frame, slot: int) -> None:
    """A comprehension's result (or an operand parked across it) leaves its hidden slot for the stack."""
    r.push(r.read_slot(frame, slot))
    r.write_slot(slot, r.const(UNBOUND))


@_handles(I.CLEAR_SLOTS)
def _clear_slots(r: Recorder, frame: Frame, arg: tuple[int, int]) -> None:
    first, count = arg
    for slot in range(first, first + count):
        r.write_slot(slot, r.const(UNBOUND))


@_handles(I.LOAD_CONST)
def _load_const(r: Recorder, frame: Frame, value: Any) -> None:
    if type(value) is int and not specialize.fits_int64(value):  # (an operand of int arithmetic, or stored)
        r.push(r.const(value, Kind.INT_OBJECT))
        return
    r.push(r.const(value))


@_handles(I.POP_TOP)
def _pop_top(r: Recorder, frame: Frame, arg: Any) -> None:
    r.pop(objects=True)  # (an int past 64 bits is dropped as it is: narrowing it would need it to fit)


@_handles(I.COPY)
def _copy(r: Recorder, frame: Frame, n: int) -> None:
    r.push(r.abstract.peek(n))


@_handles(I.SWAP)
def _swap(r: Recorder, frame: Frame, n: int) -> None:
    r.abstract.swap(n)
