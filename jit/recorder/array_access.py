"""Handlers of NumPy array subscripts and attributes (jit.arrays: the array's header)."""

from __future__ import annotations

from typing import Any

from jit import specialize_numpy
from jit.aborts import Abort, Reason
from jit.frontend import instructions as I
from jit.kinds import Kind
from jit.recorder.recorder import Recorder, _ArrayIndex, _subscript_snapshot
from jit.trace import Snapshot, Value
from runtime.frame import Frame


def _array_key(r: Recorder, frame: Frame) -> tuple[Value, list[Value], Any, list[Any], Snapshot | None]:
    """Pop a subscript's container and key where one is an array or a virtual part of an array subscript:
    (the array, its indices, the actual array, their actual values, where guards resume)."""
    key = r.abstract.pop()
    container = r.abstract.pop()
    actual_container, actual_key = frame.stack[-2], frame.stack[-1]
    head = r.array_indices.get(container.id)
    if head is not None:  # a[i][j]
        if key.kind not in (Kind.INT, Kind.NP_INT64):
            raise Abort(Reason.ARRAY_VIEW_USED)
        assert head.array is not None
        return head.array, [*head.items, key], head.actual_array, [*head.actual, actual_key], head.snapshot
    if container.kind != Kind.ARRAY:
        raise Abort(Reason.ARRAY_VIEW_USED)
    tuple_key = r.array_indices.get(key.id)
    if tuple_key is not None:  # a[i, j]
        return container, tuple_key.items, actual_container, tuple_key.actual, tuple_key.snapshot
    return container, [key], actual_container, [actual_key], None


def _array_subscr(r: Recorder, frame: Frame) -> None:
    """a[i], a[i, j, ...] and a[i][j]...: an element once every dimension has an index; before that a
    virtual `a[i]` that only a further subscript may use."""
    first_part = r.abstract.peek(2).kind == Kind.ARRAY and r.abstract.peek(1).kind != Kind.ARRAY_INDEX
    snapshot_here = _subscript_snapshot(r) if first_part else None
    array, items, actual_array, actual, snapshot = _array_key(r, frame)
    spec = specialize_numpy.guarded_spec(r, array, actual_array)
    if len(items) < spec.ndim:
        if any(v.kind not in (Kind.INT, Kind.NP_INT64) for v in items):
            raise Abort(Reason.ARRAY_INDEX, spec=spec, what=items[-1].kind.short)
        row = r.trace.new_value(Kind.ARRAY_INDEX)
        start = snapshot if snapshot is not None else snapshot_here
        assert start is not None
        r.array_indices[row.id] = _ArrayIndex(array, actual_array, items, actual, start)
        r.push(row)
        return
    r.resume_override = snapshot
    try:
        r.push(specialize_numpy.load(r, array, items, actual_array, actual))
    finally:
        r.resume_override = None


def _array_attribute(r: Recorder, frame: Frame, array: Value, name: str) -> None:
    """a.ndim, a.size, and a.shape when a constant subscript follows (a.shape[k]): read from the header."""
    actual = frame.stack[-1]
    if name == "ndim":
        r.push(r.const(specialize_numpy.guarded_spec(r, array, actual).ndim))
        return
    if name == "size":
        spec = specialize_numpy.guarded_spec(r, array, actual)
        r.push(r.emit("_ARRAY_SIZE", (array,), operand=spec))
        return
    ops = r.code.ops
    if name == "shape" and r.pc + 2 < len(ops) and ops[r.pc + 1] == I.LOAD_CONST and ops[r.pc + 2] == I.BINARY_SUBSCR:
        shape = r.trace.new_value(Kind.TUPLE)  # (never materialized: the subscript comes next, with no guard)
        r.virtual_shapes[shape.id] = array
        specialize_numpy.guarded_spec(r, array, actual)
        r.push(shape)
        return
    raise Abort(Reason.ARRAY_ATTRIBUTE, name=name)


def _shape_subscr(r: Recorder) -> None:
    index = r.pop()
    array = r.virtual_shapes.pop(r.pop().id)
    ndim = r.array_specs[array.id].ndim
    k = index.const
    if type(k) is not int or not -ndim <= k < ndim:
        raise Abort(Reason.ARRAY_ATTRIBUTE, name=f"shape[{k!r}]")
    dims = specialize_numpy.header(r, array, r.array_specs[array.id])[1]
    r.push(dims[k % ndim])
