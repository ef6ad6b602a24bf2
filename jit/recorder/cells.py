"""Handlers of a function's cell variables (``jit.frontend.nested_code.cell_variables``): the cell is the slot's
value, read at the trace's entry as any slot; what it holds is read from it at every ``LOAD_DEREF`` (a nested
function called, or any barrier, may have stored into it since: nothing read before is kept) and guarded on its
type as a slot's value is; ``STORE_DEREF`` stores natively where what it replaces frees running no Python code."""

from __future__ import annotations

import sys
from typing import Any

from jit.aborts import Abort, Reason
from jit.frontend import instructions as I
from jit.recorder import generic
from jit.recorder.names import _FREE_TYPES
from jit.recorder.recorder import Recorder, _handles
from jit.recorder.subscripts import _unbox
from jit.trace import Value
from runtime.frame import Frame

#: what a cell may hold, replaced natively (``_STORE_CELL``): its release runs no Python code
_FREED_PLAINLY = (int, float, bool, type(None))


def _cell(r: Recorder, frame: Frame, slot: int) -> tuple[Value, Any]:
    """The cell of the cell variable in slot (a trace value: the slot's), and the cell itself."""
    return r.read_slot(frame, slot), frame.slots[slot]


@_handles(I.LOAD_DEREF)
def _load_deref(r: Recorder, frame: Frame, slot: int) -> None:
    cell, actual = _cell(r, frame, slot)
    name = frame.code.slot_names[slot]
    try:
        value = actual.cell_contents
    except ValueError:  # (the interpreter raises there: the loop ends, a retry)
        # (in a comprehension, a nested function on Python 3.11: NameError about a free variable)
        in_comprehension = r.pc in frame.code.comprehension_loads and sys.version_info < (3, 12)
        error = "NameError" if in_comprehension else "UnboundLocalError"
        raise Abort(Reason.RAISES, what=f"read of the empty cell variable {name!r}", exception=error) from None
    if type(value) not in _FREE_TYPES and not r.may_specialize(type(value)):
        raise Abort(Reason.CELL_VARIABLE, name=name, type=type(value).__name__)
    r.push(_unbox(r, r.emit("_LOAD_CELL", (cell,), operand=slot), value))


@_handles(I.STORE_DEREF)
def _store_deref(r: Recorder, frame: Frame, slot: int) -> None:
    """Into the cell: natively where it holds nothing, a number or None (as recorded; checked where it runs),
    else a barrier (``_STORE_CELL_GENERIC``: releasing a list, an instance... may run a finalizer)."""
    value = generic.argument(r, r.pop(stored=True), "a store into a cell variable")
    cell, actual = _cell(r, frame, slot)
    try:
        old = actual.cell_contents
    except ValueError:
        old = None
    if type(old) in _FREED_PLAINLY:
        r.emit("_STORE_CELL", (value, cell), operand=slot)
        return
    generic.barrier(r, "_STORE_CELL_GENERIC", (value, cell), operand=slot, result=False)


@_handles(I.DELETE_DEREF)
def _delete_deref(r: Recorder, frame: Frame, slot: int) -> None:
    raise Abort(Reason.CELL_DELETED, name=frame.code.slot_names[slot])


@_handles(I.MAKE_CELL)
def _make_cell(r: Recorder, frame: Frame, slot: int) -> None:
    raise AssertionError("MAKE_CELL runs at the function's entry, in no loop")
