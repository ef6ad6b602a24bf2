"""Handlers of calls: builtins, methods, inlined Python functions, list appends."""

from __future__ import annotations

from typing import Any

from jit import inline, specialize, specialize_ufunc
from jit.aborts import Abort, Reason
from jit.frontend import instructions as I
from jit.kinds import Kind
from jit.recorder import iteration
from jit.recorder.recorder import Recorder, _handles
from jit.recorder.subscripts import _dict_get
from jit.trace import Value
from runtime.frame import Frame


@_handles(I.CALL)
def _call(r: Recorder, frame: Frame, n: int) -> None:
    callee = r.abstract.peek(n + 1)
    fn = callee.const if callee.is_const else None
    if iteration.made_by_call(r, frame, fn, n):  # (an inner loop's enumerate, zip or dict view)
        return
    handler = specialize.CALLS.get(fn) if fn is not None and _hashable(fn) else None
    if handler is None and fn is not None:
        handler = specialize_ufunc.handler_for(fn)
        numpy_name = specialize_ufunc.numpy_callable(fn) if handler is None else None
        if numpy_name is not None:
            raise Abort(Reason.NUMPY_CALL, name=numpy_name)
    bound = callee.kind in (Kind.APPEND_METHOD, Kind.DICT_GET_METHOD)
    target = inline.target_of(fn) if handler is None and not bound else None
    if target is not None and not r.inlined:
        if r.pending_subscript() is not None:
            raise Abort(Reason.ARRAY_INDEX_MUTATES, name=f"a call of {target.__qualname__}")
        r.site_snapshot = r.snapshots.take()  # where the exits of the inlined body resume: this CALL
    # (abs(), float(), int(), math functions: their handlers take ints past 64 bits)
    objects = handler is not None and fn in specialize.TAKES_INT_OBJECTS
    stored = callee.kind == Kind.APPEND_METHOD  # (an int past 64 bits: the int object, appended as it is)
    args = [r.pop(objects=objects, stored=stored) for _ in range(n)][::-1]
    r.pop()
    if callee.kind == Kind.DICT_GET_METHOD:
        r.push(_dict_get(r, frame, callee, args, list(frame.stack[len(frame.stack) - n :])))
        return
    if callee.kind == Kind.APPEND_METHOD:
        if n != 1:
            raise Abort(Reason.APPEND_ARGUMENTS)
        _append(r, callee, args[0])
        r.push(r.const(None))
        return
    if target is not None:
        r.push(r.inline_call(frame, target, args, n))
        return
    actual = frame.stack[len(frame.stack) - n :] if n else []
    if handler is None:
        name = getattr(fn, "__qualname__", None) or callee.kind.short
        raise Abort(Reason.CALL, name=name)
    r.push(handler(r, args, list(actual)))


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


@_handles(I.LIST_APPEND)
def _list_append(r: Recorder, frame: Frame, slot: int) -> None:
    target = r.read_slot(frame, slot)
    if target.kind != Kind.LIST:
        raise Abort(Reason.APPEND_TO, kind=target.kind.short)
    _append(r, target, r.pop(stored=True))


def _append(r: Recorder, target: Value, item: Value) -> None:
    if item.kind in (Kind.UNBOUND, Kind.RANGE, Kind.APPEND_METHOD, Kind.DICT_GET_METHOD):
        raise Abort(Reason.APPEND_VALUE, kind=item.kind.short)
    r.emit("_CALL_LIST_APPEND", (target, item))
