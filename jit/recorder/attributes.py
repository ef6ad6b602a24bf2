"""Attribute loads of plain instances of Python classes, read where CPython keeps them (``jit.instances``).

`it.price`, `self.x` on an instance whose class looks attributes up as object does: the class is guarded per
load (``_GUARD_CLASS``), its version tag once at the trace's entry (``_GUARD_CLASS_VERSION``, hoisted: only
Python code changes a class, and a barrier checks it again), and the value is read from the instance's values
or its ``__slots__`` member (``_LOAD_ATTR_INSTANCE``), a guard leaving where it is not there (deleted, a real
dict made). No Python code runs: unlike ``_LOAD_ATTR_GENERIC`` it is no barrier, and the interpreter redoes the
load exactly where it leaves (a class attribute, an AttributeError, ...).

A site whose traces were specialized on ``MAX_SITE_CLASSES`` classes already is megamorphic: a load there from an
instance of yet another class takes the generic path, which guards no class, and so does every later recording
there; the tree whose side trace made the site megamorphic is recorded anew (``Monitor.recording_finished``),
so that its root takes the generic path too instead of a chain of class guards. Without this, a function that
defines its class inside (a new class object per call) grew a side trace per call, each behind the last and
compiled anew, up to the limit of side traces, after which every iteration left native code (9 to 100 times
slower than plain CPython).
"""

from __future__ import annotations

import sys
from typing import Any

from jit import instances, specialize
from jit.aborts import Abort, Reason
from jit.kinds import Kind
from jit.recorder import generic
from jit.recorder.recorder import Recorder
from jit.trace import Value

#: the kinds of values a native store takes: objects (which it stores), and numbers (which it boxes, or writes into
#: the object it replaces, as list stores do)
_STORED = frozenset(
    {
        Kind.INT,
        Kind.FLOAT,
        Kind.BOOL,
        Kind.NONE,
        Kind.INT_OBJECT,
        Kind.STR,
        Kind.LIST,
        Kind.TUPLE,
        Kind.DICT,
        Kind.OBJECT,
    }
)


#: the kinds of the values an inlined call's store may store at its return (jit.inline): of a type freed plainly
_DEFERRED = frozenset({Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.NONE, Kind.INT_OBJECT, Kind.STR})


def load(r: Recorder, obj: Value, name: str, actual: Any) -> Value | None:
    """obj.name (actual: obj as recorded) read natively, its result typed as seen; None where CPython's lookup
    may find anything but the instance's own value (the generic path then)."""
    if obj.kind != Kind.OBJECT:
        return None
    if obj.id in r.fresh and name in r.fresh[obj.id]:  # (an instance the inlined call made: what it stored)
        return r.fresh[obj.id][name]
    if r.inlined:  # (an inlined call's stores are made at its return: the value stored, jit.inline)
        stored = [(key[0], args[0]) for key, (_, args, _) in r.inlined[0].deferred.items() if _attribute(key, name)]
        if any(stored_in != obj.id for stored_in, _ in stored):
            why = f"it reads .{name} of an object that may be one it stored .{name} into"
            raise Abort(Reason.NOT_INLINED, name=r.inlined[-1].function.__qualname__, why=why)
        if stored:
            return stored[0][1]
    where = instances.find(actual, name) or instances.find_in_dict(actual, name)
    if where is None:
        return _class_value(r, obj, name, actual)
    if not r.may_specialize(where.klass):
        return None
    r.guard_class(obj, where.klass, where)
    loaded = r.emit("_LOAD_ATTR_INSTANCE", (obj,), operand=where)
    return generic._typed(r, loaded, instances.value_of(actual, where))


def _class_value(r: Recorder, obj: Value, name: str, actual: Any) -> Value | None:
    """`self.fee`: a class attribute holding a number, str or None, read through an instance no attribute of which
    can hide it (``jit.instances.find_class_value``): a constant of the trace while the class's version and the
    instance's shared keys, guarded as for an inlined method (``_GUARD_NO_INSTANCE_ATTR``), stay as recorded."""
    found = instances.find_class_value(actual, name)
    if found is None or not r.may_specialize(found[0].klass):
        return None
    where, value = found
    r.guard_class(obj, where.klass, where)
    r.emit("_GUARD_NO_INSTANCE_ATTR", (obj,), operand=where)
    if type(value) is int and not specialize.fits_int64(value):
        return r.const(value, Kind.INT_OBJECT)
    return r.const(value)


def store(r: Recorder, obj: Value, value: Value, name: str, actual: Any) -> bool:
    """obj.name = value (actual: obj as recorded) stored natively where the instance's own value is replaced
    (``_STORE_ATTR_INSTANCE``, no barrier); False where CPython's store may do anything else (the generic path
    then)."""
    if obj.kind != Kind.OBJECT or value.kind not in _STORED:
        return False
    if obj.id in r.fresh:
        return _store_fresh(r, obj, value, name, actual)
    where = instances.find_store(actual, name)
    if where is None:
        return False
    old = instances.value_of(actual, where)
    if _frees_unknown(old) or not r.may_specialize(where.klass):
        return False
    r.guard_class(obj, where.klass, where)
    if r.inlined and value.kind in _DEFERRED and type(old) in instances.FREED_PLAINLY:
        # (checked here, stored at the outermost inlined call's return, after its last exit: jit.inline; what
        # each deferred store replaces there, the value checked or one an earlier one stored, frees plainly)
        r.emit("_CHECK_STORE_ATTR_INSTANCE", (obj,), operand=where)
        r.inlined[0].defer((obj.id, name), "_STORE_ATTR_INSTANCE_CHECKED", (value, obj), where)
        return True
    if r.inlined and any(_attribute(key, name) for key in r.inlined[0].deferred):
        why = f"it stores .{name} where it is and into an object that may be the same at its return"
        raise Abort(Reason.NOT_INLINED, name=r.inlined[-1].function.__qualname__, why=why)
    r.emit("_STORE_ATTR_INSTANCE", (value, obj), operand=where)
    return True


def _store_fresh(r: Recorder, obj: Value, value: Value, name: str, actual: Any) -> bool:
    """`obj.name = value` on an instance the inlined call made (``Recorder.fresh``: `self.x = x` in an inlined
    __init__): nothing else holds it, so the store is no change Python code could see (an exit before the call's
    return makes the call again, and native code releases the instance): made where it is (``_STORE_ATTR_FRESH``),
    with exits after it. False (the generic path) where CPython's store could run Python code (a data descriptor),
    or would replace a value whose freeing could."""
    stored = r.fresh[obj.id]
    old = stored.get(name)
    if not instances.stores_plainly(type(actual), name) or (old is not None and old.kind not in _DEFERRED):
        return False
    r.emit("_STORE_ATTR_FRESH", (value, obj), operand=name)
    stored[name] = value
    return True


def _attribute(key: tuple[Any, Any], name: str) -> bool:
    """Is key, of an inlined call's deferred change (``jit.inline.InlinedCall.deferred``), a store of an attribute
    name (of an instance: its value id), rather than an append or a store into a dict or the globals?"""
    return type(key[0]) is int and key[1] == name


def _frees_unknown(old: Any) -> bool:
    """Would replacing old (as recorded) free an object whose freeing may run Python code? Then the store goes the
    generic path, a barrier: native code leaves before such a store (see codegen.lower.attributes), and a side
    trace from there would meet the same. (Three references: the instance's, this frame's and the argument's.)"""
    return type(old) not in instances.FREED_PLAINLY and sys.getrefcount(old) <= 3
