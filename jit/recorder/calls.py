"""Handlers of calls: builtins, methods, inlined Python functions, list appends."""

from __future__ import annotations

import dataclasses
import functools
import types
from collections.abc import Callable
from typing import Any

from jit import inline, instances, specialize, specialize_array_new, specialize_ufunc
from jit.aborts import Abort, Reason
from jit.frontend import instructions as I
from jit.frontend.nested_code import FunctionMaker
from jit.kinds import Kind
from jit.recorder import generic, iteration, super_calls, type_checks
from jit.recorder.recorder import Recorder, _handles
from jit.recorder.subscripts import _dict_get, _unbox
from jit.trace import NO_CONST, Value
from jit.uops import Callee
from runtime.frame import Frame


@_handles(I.CALL)
def _call(r: Recorder, frame: Frame, n: int) -> None:
    callee = r.abstract.peek(n + 1)
    if callee.id in r.pending_methods:  # `obj.m(...)`: one method call (jit.recorder.generic.PendingMethod)
        args = [r.pop(objects=True) for _ in range(n)][::-1]  # (an int past 64 bits: the int object)
        r.abstract.pop()
        r.push(_method_call(r, frame, callee, args))
        return
    fn, held = _held_callee(r, frame, callee, n, builtins=True)
    if iteration.made_by_call(r, frame, fn, n):  # (an inner loop's enumerate, zip or dict view)
        return
    if type_checks.fold(r, frame, fn, n):  # (isinstance() or type() of a value whose class the trace knows)
        return
    if type(fn) is FunctionMaker:  # (a lambda or nested def made: C code, no barrier)
        args = [r.pop() for _ in range(n)][::-1]
        r.pop()
        r.push(generic.make_function(r, fn, args))
        return
    if n == 0 and type(fn) is type and fn in generic.EMPTY_KINDS:  # (`set()`, `dict()`, ...: C code, no barrier)
        r.pop()
        r.push(generic.new_empty(r, fn))
        return
    handler = specialize.CALLS.get(fn) if fn is not None and _hashable(fn) else None
    made = specialize_array_new.constructor_named(fn) if handler is None and fn is not None else None
    if made is not None:
        _array_new(r, frame, made, n, ())
        return
    if handler is None and fn is not None:
        handler = specialize_ufunc.handler_for(fn)
    bound = callee.kind in (Kind.APPEND_METHOD, Kind.DICT_GET_METHOD)
    target = inline.target_of(fn) if handler is None and not bound else None
    if held is not None:
        target = held.function
    constructor = _constructor(r, fn) if handler is None else None
    if constructor is not None:
        target = constructor[1]
    if target is not None:
        _before_inlining(r, target)
    # (abs(), float(), int(), math functions, any call through the generic path, and an inlined callee, whose
    # parameters live in the trace only: an int past 64 bits as it is)
    objects = fn in specialize.TAKES_INT_OBJECTS if handler is not None else not bound
    if handler is not None and not objects and fn is not range and _past_64_bits(r, frame, n):
        # a builtin whose uops take 64-bit ints, given an int past them: CPython's builtin, on the int object
        args = [r.pop(objects=True) for _ in range(n)][::-1]
        r.pop()
        r.push(generic.call(r, callee, args))
        return
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
    if constructor is not None:
        r.push(_inlined_or_generic(r, frame, callee, constructor[1], args, n, None, constructs=constructor[0]))
        return
    if target is not None:
        r.push(_inlined_or_generic(r, frame, callee, target, args, n, held))
        return
    actual = frame.stack[len(frame.stack) - n :] if n else []
    if handler is None:
        r.push(generic.call(r, callee, args))
        return
    if fn is range:  # (a range is virtual: its loop's hidden slots; one kept as a value is made)
        made = handler(r, args, list(actual))
        r.push(made if r.code.ops[r.pc + 1] == I.RANGE_SETUP else iteration.range_object(r, made))
        return
    mark = generic.rolled_back(r)
    try:
        r.push(handler(r, args, list(actual)))
    except Abort as exc:
        if exc.reason not in generic.BUILTIN_FALLBACK:
            raise
        generic.roll_back(r, mark)  # (arguments the builtin's uops do not take: CPython's builtin does it)
        r.push(generic.call(r, callee, args))


def _constructor(r: Recorder, fn: Any) -> tuple[instances.ClassAttr, types.FunctionType] | None:
    """Where a call of fn makes an instance natively (``jit.instances.find_constructor``): its class's version
    and the ``__init__`` to inline (a dataclass's generated one: its stand-in, ``jit.inline.dataclass_init``)."""
    if type(fn) is not type:
        return None
    found = instances.find_constructor(fn)
    if found is None or not r.may_specialize(fn):
        return None
    return found[0], inline.dataclass_init(fn) or found[1]


@dataclasses.dataclass(frozen=True)
class _Held:
    """A Python function a variable holds, called (``Recorder.inline_call``'s held): the value holding it, the
    function, and for a bound method the object it is bound to and how that is specialized."""

    value: Value
    function: types.FunctionType
    receiver: Any = NO_CONST
    specialize_receiver: Callable[[Value], Value] | None = None


def _held_callee(r: Recorder, frame: Frame, callee: Value, n: int, builtins: bool) -> tuple[Any, _Held | None]:
    """The callable of a call with n arguments: the constant it names (or, with builtins, a builtin function of
    specialize.CALLS a variable holds, guarded to be that one), or where a variable holds a Python function or a
    bound method of one, that to inline."""
    fn = callee.const if callee.is_const else None
    if fn is not None or callee.kind != Kind.OBJECT:
        return fn, None
    observed = frame.stack[len(frame.stack) - n - 1]  # (a callable defined in the function, or passed to it)
    if (
        builtins
        and type(observed) is types.BuiltinFunctionType
        and _hashable(observed)
        and observed in specialize.CALLS
    ):
        # a builtin function (`f = math.sqrt`, or passed as an argument): that very one, then its uops, as where
        # the call names it
        r.emit("_GUARD_CALLEE_VALUE", (callee,), operand=Callee(observed, None, None))
        return observed, None
    if type(observed) is types.FunctionType and not hasattr(observed, "__tracejit__"):
        return None, _Held(callee, observed)
    if (
        type(observed) is types.MethodType
        and type(observed.__func__) is types.FunctionType
        and not hasattr(observed.__func__, "__tracejit__")
    ):
        # a bound method (`step = obj.step`, then `step(dt)` in the loop): its function, on its receiver, which
        # is guarded as observed (jit.recorder.Recorder.inline_call)
        receiver = observed.__self__
        return None, _Held(callee, observed.__func__, receiver, functools.partial(_unbox, r, item=receiver))
    return None, None


def _before_inlining(r: Recorder, target: types.FunctionType) -> None:
    """Before the arguments of a call of target that may be inlined are popped: where its body's exits resume."""
    if r.inlined:
        return
    if r.pending_subscript() is not None:
        raise Abort(Reason.ARRAY_INDEX_MUTATES, name=f"a call of {target.__qualname__}")
    r.site_snapshot = r.snapshots.take()  # where the exits of the inlined body resume: this CALL


def _inlined_or_generic(
    r: Recorder,
    frame: Frame,
    callee: Value,
    target: types.FunctionType,
    args: list[Value],
    n: int,
    held: _Held | None,
    keywords: tuple[str, ...] = (),
    constructs: instances.ClassAttr | None = None,
) -> Value:
    """A call of target (callee, a constant or held) on args: its body inlined, else one generic call.
    constructs: callee is a class whose instances native code makes, target its __init__
    (``Recorder.inline_call``)."""
    how: dict[str, Any] = {"keywords": keywords, "constructs": constructs}
    if held is not None:
        how.update(held=held.value, receiver=held.receiver, specialize_receiver=held.specialize_receiver)
    if r.inlined:  # (a call the outermost inlined call makes: if it cannot be inlined, neither can that)
        return r.inline_call(frame, target, args, n, **how)
    mark = generic.rolled_back(r)
    try:
        return r.inline_call(frame, target, args, n, **how)
    except Abort as exc:
        if exc.reason is Reason.INLINED_STORES_PINNED_GLOBAL:
            raise  # (recorded again at once, reading the global at each use: then it is inlined)
        # not inlined (it has a loop, changes a list, ...): nothing of its dry run was visible, and the
        # interpreter makes the call once, for real; native code makes it through the C-API
        generic.roll_back(r, mark)
        _not_inlined(r, target, exc)
    # (callee is target itself, not a class nor a bound method: where it makes generators, its code is guarded)
    itself = constructs is None and (held is None or held.receiver is NO_CONST)
    return generic.call(r, callee, args, keywords, target if itself else None)


def _not_inlined(r: Recorder, target: types.FunctionType, why: Abort) -> None:
    """Note for jit.explain that a call of target is recorded generically, and why."""
    r.trace.generic_calls.setdefault(target.__qualname__, f"line {r.line}: {why}")


def _method_call(r: Recorder, frame: Frame, method: Value, args: list[Value], keywords: tuple[str, ...] = ()) -> Value:
    """`obj.m(*args)`: the body of m inlined where m is a plain Python function of obj's class that no instance
    attribute can hide (``jit.instances.find_method``: the class, its version and the instance's keys guarded),
    and the callee can be inlined (``jit.inline``); else one generic method call. keywords: the names of the
    last len(keywords) arguments, given by keyword."""
    pending = r.pending_methods[method.id]
    if pending.function is not None:  # (`super().name(...)`)
        return super_calls.call(r, frame, method, args, keywords)
    found = instances.find_method(pending.actual, pending.name)
    if found is None:
        return generic.call_method(r, method, args, keywords)
    where, function = found
    if not r.may_specialize(where.klass):  # (a megamorphic site: see Recorder.may_specialize)
        return generic.call_method(r, method, args, keywords)
    mark = generic.rolled_back(r)
    try:
        r.guard_class(pending.obj, where.klass, where)  # (their exits resume at the LOAD_ATTR: it is pending)
        r.emit("_GUARD_NO_INSTANCE_ATTR", (pending.obj,), operand=where)
        del r.pending_methods[method.id]
        return r.inline_call(frame, function, [pending.obj, *args], len(args), method=pending, keywords=keywords)
    except Abort as exc:
        # not inlined (a loop, a store, ...): nothing of its dry run was visible; one generic call
        generic.roll_back(r, mark)
        r.pending_methods[method.id] = pending
        _not_inlined(r, function, exc)
    return generic.call_method(r, method, args, keywords)


@_handles(I.CALL_KW)
def _call_kw(r: Recorder, frame: Frame, arg: tuple[int, tuple[str, ...]]) -> None:
    """A call with keyword arguments: numpy.empty/zeros/ones natively (`dtype=`), any other callable through the
    generic path (the last len(names) arguments are the keywords' values)."""
    n, names = arg
    names = tuple(names)
    callee = r.abstract.peek(n + 1)
    made = specialize_array_new.constructor_named(callee.const) if callee.is_const else None
    if made is not None:
        _array_new(r, frame, made, n, names)
        return
    if callee.id in r.pending_methods:  # `obj.m(..., k=v)`: inlined where m can be, as without keywords
        args = [r.pop(objects=True) for _ in range(n)][::-1]
        r.abstract.pop()
        r.push(_method_call(r, frame, callee, args, names))
        return
    fn, held = _held_callee(r, frame, callee, n, builtins=False)
    target = held.function if held is not None else inline.target_of(fn)
    constructor = _constructor(r, fn)
    if constructor is not None:
        target = constructor[1]
    if target is not None and callee.kind not in (Kind.APPEND_METHOD, Kind.DICT_GET_METHOD):
        _before_inlining(r, target)
        args = [r.pop(objects=True) for _ in range(n)][::-1]  # (an inlined callee's parameters: as they are)
        r.pop()
        constructs = constructor[0] if constructor is not None else None
        r.push(_inlined_or_generic(r, frame, callee, target, args, n, held, names, constructs))
        return
    args = [r.pop(objects=True) for _ in range(n)][::-1]  # (all to the generic path: an int object as it is)
    callee = r.pop()
    if callee.kind in (Kind.APPEND_METHOD, Kind.DICT_GET_METHOD):
        raise Abort(Reason.CALL, name=f"{callee.kind.short} with keywords")
    r.push(generic.call(r, callee, args, names))


def _array_new(r: Recorder, frame: Frame, name: str, n: int, keywords: tuple[str, ...]) -> None:
    """numpy.<name>(shape, ...): a new array owned by the trace (jit.specialize_array_new)."""
    if r.inlined:  # (like a list built in an inlined call: its exits would redo the call)
        raise Abort(Reason.NOT_COMPILED, instruction=f"numpy.{name} in an inlined call")
    actual = list(frame.stack[len(frame.stack) - n :])
    args = [r.pop() for _ in range(n)][::-1]
    r.pop()
    built = r.trace.made_by(args[0]) if n else None
    items = list(built.args) if built is not None and built.name == "_BUILD_TUPLE" else None
    r.push(specialize_array_new.record(r, name, args, actual, keywords, items))


def _past_64_bits(r: Recorder, frame: Frame, n: int) -> bool:
    """Is one of the n arguments on top of the stack an int past 64 bits (an int object or an i128 that does not
    fit in 64 bits as recorded)?"""
    return any(
        r.abstract.peek(depth).kind in specialize.BEYOND_64_BITS and not specialize.fits_int64(frame.stack[-depth])
        for depth in range(1, n + 1)
    )


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
    if item.kind in (Kind.APPEND_METHOD, Kind.DICT_GET_METHOD):
        r.bind_apart(item)  # (appended as a value: `handlers.append(d.get)`)
    if item.kind in (Kind.UNBOUND, Kind.RANGE):
        raise Abort(Reason.APPEND_VALUE, kind=item.kind.short)
    if r.inlined:  # (made at the outermost inlined call's return, after its last exit: jit.inline)
        call = r.inlined[0]
        call.defer(("append", len(call.deferred)), "_CALL_LIST_APPEND_CHECKED", (target, item))
        return
    r.emit("_CALL_LIST_APPEND", (target, item))
