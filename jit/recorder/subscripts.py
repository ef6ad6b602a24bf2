"""Handlers of subscripts and containers: item reads and stores on lists, tuples and dicts; list and tuple displays."""

from __future__ import annotations

from typing import Any

from jit import instances, specialize, specialize_numpy
from jit.aborts import Abort, Reason
from jit.frontend import instructions as I
from jit.kinds import Kind, kind_of
from jit.recorder.array_access import _array_key, _array_subscr, _shape_subscr
from jit.recorder.recorder import Recorder, _ArrayIndex, _handles, _subscript_snapshot
from jit.trace import Value
from runtime.frame import Frame

_ELEMENT_TYPES = {
    float: Kind.FLOAT,
    bool: Kind.BOOL,
    list: Kind.LIST,
    tuple: Kind.TUPLE,
    str: Kind.STR,
    dict: Kind.DICT,
}


def _unbox(r: Recorder, boxed: Value, item: Any) -> Value:
    """Guard a boxed element's type as observed and give its native value."""
    t = type(item)
    if item is None:
        r.emit("_GUARD_TYPE", (boxed,), operand=Kind.NONE, kind=Kind.OBJECT)
        return r.const(None)
    if t is set or t is frozenset:  # (only iterated: `for x in s`)
        r.emit("_GUARD_EXACT_TYPE", (boxed,), operand=t)
        return boxed
    kind = kind_of(item) if t is int else _ELEMENT_TYPES.get(t)
    if kind is None:
        # (a NumPy scalar: `for i, x in enumerate(a)` over an array gets numpy.float64 objects)
        scalar = specialize_numpy.unboxed_scalar(r, boxed, item)
        if scalar is not None:
            return scalar
        if r.may_specialize(t):  # any other object (the generic path): exactly of its type
            r.emit("_GUARD_CLASS", (boxed,), operand=t)
        return boxed
    if kind == Kind.OBJECT:  # an int past 64 bits: an int object of the trace's own (it may outlive the container)
        checked = r.emit("_GUARD_TYPE", (boxed,), operand=Kind.INT, kind=Kind.OBJECT)
        return r.emit("_NEW_INT_OBJECT_REF", (checked,))
    checked = r.emit("_GUARD_TYPE", (boxed,), operand=kind, kind=kind if kind.is_pointer else Kind.OBJECT)
    if kind.is_pointer:
        return checked
    value = r.emit({Kind.INT: "_UNBOX_INT", Kind.FLOAT: "_UNBOX_FLOAT", Kind.BOOL: "_UNBOX_BOOL"}[kind], (checked,))
    value.boxed = checked
    return value


@_handles(I.BINARY_SUBSCR)
def _binary_subscr(r: Recorder, frame: Frame, arg: Any) -> None:
    if r.abstract.peek(2).kind == Kind.DICT:
        _dict_subscr(r, frame)
        return
    if r.abstract.peek(2).id in r.virtual_shapes:
        _shape_subscr(r)
        return
    if Kind.ARRAY_INDEX in (r.abstract.peek(1).kind, r.abstract.peek(2).kind) or r.abstract.peek(2).kind == Kind.ARRAY:
        _array_subscr(r, frame)
        return
    index = specialize.as_int(r, r.pop())
    container = r.pop()
    if container.kind not in (Kind.LIST, Kind.TUPLE) or index.kind != Kind.INT:
        raise Abort(Reason.SUBSCRIPT, container=container.kind.short, index=index.kind.short)
    actual_container, actual_index = frame.stack[-2], frame.stack[-1]
    try:
        item = actual_container[actual_index]
    except IndexError:
        raise Abort(Reason.INDEX_OUT_OF_RANGE) from None
    name = "_BINARY_SUBSCR_LIST_INT" if container.kind == Kind.LIST else "_BINARY_SUBSCR_TUPLE_INT"
    boxed = r.emit(name, (container, index))
    r.push(_unbox(r, boxed, item))


def _dict_subscr(r: Recorder, frame: Frame) -> None:
    """d[key] with a str key: the lookup must find it (a missing key leaves, and the interpreter raises)."""
    key = r.pop()
    mapping = r.pop()
    if key.kind != Kind.STR:
        raise Abort(Reason.SUBSCRIPT, container="dict", index=key.kind.short)
    actual_mapping, actual_key = frame.stack[-2], frame.stack[-1]
    if actual_key not in actual_mapping:
        raise Abort(Reason.INDEX_OUT_OF_RANGE)
    found = r.emit("_DICT_LOOKUP_STR", (mapping, key))
    r.emit("_GUARD_FOUND", (found,))
    value = _unbox(r, found, actual_mapping[actual_key])
    _note_plain_entry(r, mapping, key, value)
    r.push(value)


def _note_plain_entry(r: Recorder, mapping: Value, key: Value, value: Value | None) -> None:
    """The trace read mapping[key] as value (None: missing)."""
    if value is None or value.kind in (Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.NONE):
        r.plain_entries.add((mapping.id, key.id))
    if value is not None and value.kind in (Kind.INT, Kind.FLOAT) and value.boxed is not None:
        r.entry_objects[(mapping.id, key.id)] = value.boxed


def _dict_get(r: Recorder, frame: Frame, mapping: Value, args: list[Value], actual: list[Any]) -> Value:
    """d.get(key[, default]) with a str key: found or not as observed (a guard), then the value or default."""
    if not 1 <= len(args) <= 2:
        raise Abort(Reason.ARITY, name="dict.get", count=len(args))
    key = args[0]
    if key.kind != Kind.STR:
        r.code.generic_dict_gets.add(r.bound_method_sites[mapping.id])  # (the next recording: a generic call)
        raise Abort(Reason.DICT_GET_KEY, kind=key.kind.short)
    actual_mapping = frame.stack[len(frame.stack) - len(args) - 1].__self__
    found = r.emit("_DICT_LOOKUP_STR", (mapping, key))
    owner = r.bound_dicts.get(mapping.id, mapping)
    either = _number_or_default(r, found, args, actual_mapping.get(actual[0], _MISSING))
    if either is not None:
        r.plain_entries.add((owner.id, key.id))
        r.entry_objects[(owner.id, key.id)] = found  # (NULL where it is missing: codegen's store over it knows)
        return either
    if actual[0] in actual_mapping:
        r.emit("_GUARD_FOUND", (found,))
        value = _unbox(r, found, actual_mapping[actual[0]])
        _note_plain_entry(r, owner, key, value)
        return value
    r.emit("_GUARD_MISSING", (found,))
    _note_plain_entry(r, owner, key, None)
    return args[1] if len(args) == 2 else r.const(None)


_MISSING = object()

_OR_DEFAULT = {Kind.INT: (int, "_UNBOX_INT_OR_DEFAULT"), Kind.FLOAT: (float, "_UNBOX_FLOAT_OR_DEFAULT")}


def _number_or_default(r: Recorder, found: Value, args: list[Value], observed: Any) -> Value | None:
    """`d.get(key, 0)`: where the default is an int or a float and the key was missing or held a number of that
    very type, one value of that kind, whichever way the lookup goes (a guard on found or missing would give the
    other way a side trace: a word count finds its key nearly every time, after a first recording that missed)."""
    if len(args) != 2 or args[1].kind not in _OR_DEFAULT:
        return None
    pytype, name = _OR_DEFAULT[args[1].kind]
    if observed is not _MISSING and (type(observed) is not pytype or kind_of(observed) != args[1].kind):
        return None
    return r.emit(name, (found, args[1]))


@_handles(I.BUILD_TUPLE)
def _build_tuple(r: Recorder, frame: Frame, n: int) -> None:
    """`(a, b)`: a new tuple, owned by the trace (as `_build_list`'s lists); a key of int indices that subscripts
    an array right away (`a[i, j]`) is never built."""
    ops = r.code.ops
    next_op = ops[r.pc + 1] if r.pc + 1 < len(ops) else None
    items = [r.abstract.peek(k) for k in range(n, 0, -1)]
    if (
        n < 2
        or next_op not in (I.BINARY_SUBSCR, I.STORE_SUBSCR, I.COPY)
        or len(r.abstract.stack()) < n + 1
        or r.abstract.peek(n + 1).kind != Kind.ARRAY
        or any(v.kind not in (Kind.INT, Kind.NP_INT64) for v in items)
    ):
        _build(r, frame, n, "_BUILD_TUPLE")
        return
    snapshot = _subscript_snapshot(r)
    for _ in range(n):
        r.abstract.pop()
    key = r.trace.new_value(Kind.ARRAY_INDEX)
    actual = list(frame.stack[len(frame.stack) - n :])
    r.array_indices[key.id] = _ArrayIndex(None, None, items, actual, snapshot)
    r.push(key)


@_handles(I.STORE_SUBSCR)
def _store_subscr(r: Recorder, frame: Frame, arg: Any) -> None:
    if Kind.ARRAY_INDEX in (r.abstract.peek(1).kind, r.abstract.peek(2).kind) or r.abstract.peek(2).kind == Kind.ARRAY:
        array, items, actual_array, actual, snapshot = _array_key(r, frame)
        value = r.pop()
        r.resume_override = snapshot
        try:
            specialize_numpy.store(r, value, array, items, frame.stack[-3], actual_array, actual)
        finally:
            r.resume_override = None
        return
    if r.abstract.peek(2).kind == Kind.DICT:
        key, mapping, value = r.pop(), r.pop(), r.pop()
        if key.kind != Kind.STR:
            raise Abort(Reason.ITEM_ASSIGNMENT, container="dict")
        if value.kind not in (Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.STR):
            raise Abort(Reason.STORE_KIND, kind=value.kind.short)
        old = frame.stack[-2].get(frame.stack[-1])
        if old is not None and type(old) not in (int, float, bool):
            raise Abort(Reason.OVERWRITE_TYPE, type=type(old).__name__)
        if r.inlined:  # (checked here, stored at the outermost inlined call's return: jit.inline)
            r.emit("_CHECK_STORE_SUBSCR_DICT_STR", (mapping, key))
            call = r.inlined[0]
            call.defer(("dict", len(call.deferred)), "_STORE_SUBSCR_DICT_STR_CHECKED", (value, mapping, key))
            return
        checked = (mapping.id, key.id) not in r.plain_entries
        read = r.entry_objects.get((mapping.id, key.id))
        if read is not None and value.kind in (Kind.INT, Kind.FLOAT):  # (`d[k] = d.get(k, 0) + 1`)
            r.emit("_STORE_SUBSCR_DICT_STR_OVER_READ", (value, mapping, key, read))
        else:
            name = "_STORE_SUBSCR_DICT_STR" if checked else "_STORE_SUBSCR_DICT_STR_OVER_NUMBER"
            r.emit(name, (value, mapping, key))
        if value.kind != Kind.STR:
            r.plain_entries.add((mapping.id, key.id))
        return
    index = specialize.as_int(r, r.pop())
    container = r.pop()
    value = r.pop(stored=True)  # (an int past 64 bits: the int object, stored as it is)
    if container.kind != Kind.LIST or index.kind != Kind.INT:
        raise Abort(Reason.ITEM_ASSIGNMENT, container=container.kind.short)
    if value.kind not in (Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.INT_OBJECT):
        raise Abort(Reason.STORE_KIND, kind=value.kind.short)
    actual_list, actual_index = frame.stack[-2], frame.stack[-1]
    try:
        old = actual_list[actual_index]
    except IndexError:
        raise Abort(Reason.INDEX_OUT_OF_RANGE) from None
    if type(old) not in (int, float, bool):
        raise Abort(Reason.OVERWRITE_TYPE, type=type(old).__name__)
    if value.kind == Kind.INT_OBJECT:
        r.emit("_STORE_SUBSCR_LIST_OBJECT", (value, container, index))
        return
    kept = _kept_alive(r, value)
    if kept is not None:  # the very object read (as CPython stores it), not a new box
        r.emit("_STORE_SUBSCR_LIST_OBJECT", (kept, container, index))
        return
    r.emit("_STORE_SUBSCR_LIST_INT", (value, container, index))


def _kept_alive(r: Recorder, value: Value) -> Value | None:
    """For a number read out of a list or tuple unchanged: a reference of the trace's own to its object, taken
    where it was read (a store in between could drop the container's reference: `a[i], a[j] = a[j], a[i]`)."""
    boxed = value.boxed
    if boxed is None or r.inlined:
        return None
    kept = r.kept_alive.get(boxed.id)
    if kept is None:
        kept = r.trace.insert_after(boxed, "_NEW_REF", (boxed,))
        if kept is not None:
            r.kept_alive[boxed.id] = kept
    return kept


#: the kinds of the items a list built natively may hold: freeing such a list (where the variable holding it
#: is assigned again) runs no Python code (numbers, str, and containers other code keeps alive)
_BUILT_ITEM_KINDS = frozenset(
    {Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.NONE, Kind.INT_OBJECT, Kind.STR, Kind.LIST, Kind.TUPLE, Kind.DICT}
)


@_handles(I.BUILD_LIST)
def _build_list(r: Recorder, frame: Frame, n: int) -> None:
    """`[]`, `[a, b]`: a new list, owned by the trace (codegen.ownership) until it is handed over or freed."""
    _build(r, frame, n, "_BUILD_LIST")


def _build(r: Recorder, frame: Frame, n: int, uop: str) -> None:
    """A new list or tuple (uop) of the top n stack values (in an inlined call too: nothing else holds it yet, and
    an exit before the call's return, which makes the call again, releases it)."""
    actual = frame.stack[len(frame.stack) - n :] if n else []
    items = [r.pop(stored=True) for _ in range(n)][::-1]
    for item, observed in zip(items, actual):
        if item.kind == Kind.OBJECT and _freed_plainly(r, item, observed):
            continue
        if item.kind not in _BUILT_ITEM_KINDS:
            raise Abort(Reason.BUILD_ITEM, container=uop[7:].lower(), kind=item.kind.short)
    r.push(r.emit(uop, tuple(items)))


def _freed_plainly(r: Recorder, item: Value, observed: Any) -> bool:
    """May a list or tuple the trace builds hold item, an object of observed's class, guarded here (`(it.w, it)`,
    `[name, obj]`)? Releasing such a container releases its reference to item, which may be the last one: that
    runs no finalizer of the item's class where the class defines no ``__del__`` (a class of Python's, whose
    version tag is guarded: no ``__del__`` can be added to it unseen; or a static type, which cannot get one), as
    for the generic path's own results. A class the site must not be specialized on (``Recorder.may_specialize``)
    keeps the abort."""
    klass = type(observed)
    if getattr(klass, "__del__", None) is not None or not r.may_specialize(klass):
        return False
    where = None
    if klass.__flags__ & instances.HEAPTYPE:
        version = instances.version_of(klass)
        if not version:
            return False
        where = instances.ClassAttr(klass, version, "__del__")
    r.guard_class(item, klass, where)
    return True
