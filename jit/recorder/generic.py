"""The generic object path: operations the specializer has no uop for, recorded as C-API calls on objects.

A call of any callable (not a builtin the specializer knows, not a function it inlines), an attribute load or
store on anything but a module, and an operator on values that are not numbers become one uop each
(``_CALL_GENERIC``, ``_LOAD_ATTR_GENERIC``, ...: ``codegen.lower.generic``) instead of aborting the recording.
Their result is a new reference the trace owns (``codegen.ownership``).

Such a uop may run any Python code: it is a *barrier* (``UopDef.barrier``).

* What the recorder knew of the program's state before it is forgotten: the values of globals the loop
  stores, the dict entries it read (``Recorder.plain_entries``, as after any uop that ``mutates``).
* Borrowed pointers the trace still needs after it (an object read out of a list, whose list the call may
  empty) are given a reference of the trace's own first (``_KEEP_ALIVE``), so nothing it holds can dangle.
* When it raises, its exit (``Guard.RAISE``) leaves at its own instruction with the exception set, and the
  runtime re-raises it there (``runtime.runner``): the call is never made again by the interpreter, and the
  traceback shows the user's line.
* At the start of the next instruction (``after_barrier``, with the result on the stack), ``_CHECK_BARRIER``
  checks again the guards hoisted to the trace's entry (a global the call rebound); it leaves there, after the
  call, with its result in place. There too, the result the recorder saw is guarded by type and unboxed when
  it is a number, None, or a str, list, tuple or dict, so later uops take their fast path on it.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable
from typing import Any

from jit import arrays, specialize, specialize_numpy
from jit.aborts import Abort, Reason
from jit.frontend import instructions as I
from jit.frontend.operators import BinOp, CompareOp, UnaryOp
from jit.kinds import Kind
from jit.recorder import iteration, pure_methods, subscripts  # noqa: F401  (their handlers first: some are wrapped here)
from jit.recorder.recorder import _AFTER_BARRIER, _AT_END, _HANDLERS, Recorder, _handles
from jit.resume import FrameState
from jit.trace import FrameSnapshot, Snapshot, TraceKind, Value, WhenHot
from jit.uops import Callee
from runtime.frame import UNBOUND, Frame

#: kinds an argument of a generic operation may have: boxed by the lowering, or a pointer passed as it is
_PASSED = frozenset(
    {
        Kind.INT,
        Kind.FLOAT,
        Kind.BOOL,
        Kind.NONE,
        Kind.LIST,
        Kind.TUPLE,
        Kind.STR,
        Kind.DICT,
        Kind.OBJECT,
        Kind.INT_OBJECT,
        Kind.ARRAY,
        # (NumPy scalars: boxed as the interpreter boxes them at an exit, calling their type on the number)
        Kind.NP_FLOAT64,
        Kind.NP_INT64,
        Kind.NP_BOOL,
        Kind.NP_FLOAT32,
        Kind.NP_INT32,
        Kind.NP_UINT8,
    }
)
#: the pointer kinds a result is guarded to (the entry stubs classify such objects by these kinds too)
_POINTER_RESULTS = {str: Kind.STR, list: Kind.LIST, tuple: Kind.TUPLE, dict: Kind.DICT}
_UNBOXED = {int: ("_UNBOX_INT", Kind.INT), float: ("_UNBOX_FLOAT", Kind.FLOAT), bool: ("_UNBOX_BOOL", Kind.BOOL)}
#: the specializer's reasons that the generic path handles instead (an operator on values it has no uop for)
OPERATOR_FALLBACK = frozenset(
    {
        Reason.OPERAND_KIND,
        Reason.OPERATOR,
        Reason.MATMUL,
        Reason.NEGATIVE_INT_POWER,
        Reason.FLOAT_POWER,
        Reason.RESULT_TYPE,
        Reason.NUMPY_OPERATOR,  # (`//`, `%`, `**` of NumPy scalars, numpy.bool with bool: NumPy's own operators)
    }
)

#: the specializer's reasons that a unary operator goes through the generic path for (no uop for its operand)
UNARY_FALLBACK = frozenset({Reason.OPERAND_KIND})

#: the reasons a builtin's specialized handler gives up for which the builtin itself is called instead
BUILTIN_FALLBACK = frozenset(
    {
        Reason.ARITY,
        Reason.ONE_ITERABLE,
        Reason.LEN_OF,
        Reason.CONVERSION_OF,
        Reason.OPERAND_KIND,
        Reason.TRUTH,
        Reason.NEGATIVE_INT_POWER,
        Reason.FLOAT_POWER,
        Reason.RESULT_TYPE,
        Reason.INT_RESULT_TOO_BIG,
        Reason.UFUNC_OPERANDS,  # (a NumPy ufunc of an array, or with a result kind native code has not: NumPy's)
        Reason.NUMPY_OPERATOR,  # (abs() of a numpy.int32 or numpy.uint8)
    }
)


def argument(r: Recorder, v: Value, what: str) -> Value:
    """v as an argument of a generic operation: an i128 becomes an int object; kinds with no object (a
    bound method native code holds as its list) abort."""
    if v.kind == Kind.WIDE_INT:
        return specialize.as_int_object(r, v)
    if v.kind in (Kind.APPEND_METHOD, Kind.DICT_GET_METHOD):
        r.bind_apart(v)
    if v.kind not in _PASSED:
        raise Abort(Reason.OPERAND_KIND, what=what, kind=v.kind.short)
    return v


def barrier(
    r: Recorder,
    name: str,
    args: tuple[Value, ...],
    operand: Any = None,
    result: bool = True,
    resume: Snapshot | None = None,
) -> Value:
    """Emit the barrier uop name (the generic operation) on args; its result (None if it has none) is left for
    ``after_barrier`` to check at the next instruction. resume: the state its exit leaves with (raising), if not
    the instruction's."""
    if r.inlined:  # (an inlined body may not run Python code: its exits make the call again)
        raise Abort(Reason.INLINED_MUTATES, name=r.inlined[-1].function.__qualname__)
    if r.pending_methods:
        r.unfuse()
    if r.pending_subscript() is not None:
        raise Abort(Reason.ARRAY_INDEX_MUTATES, name=name)
    _keep_alive(r, args)
    _merge_checks(r, args)
    r.resume_override = resume
    try:
        out = r.emit(name, args, operand=operand)
    finally:
        r.resume_override = None
    r.trace.uops[-1].exit.when_hot = WhenHot.NEVER  # type: ignore[union-attr]  # (it leaves raising)
    r.after_python_ran()
    r.after_barrier = out if result else True
    return out


#: uops that depend on nothing a hoisted guard pins (a global's binding, an array's header): between two
#: barriers, they need no check of those guards before them
_INDEPENDENT = frozenset(
    {"_GUARD_CLASS", "_GUARD_TYPE", "_GUARD_TYPE_OWNED", "_UNBOX_INT", "_UNBOX_FLOAT", "_UNBOX_BOOL", "_KEEP_ALIVE"}
)


def _merge_checks(r: Recorder, args: tuple[Value, ...]) -> None:
    """Drop the ``_CHECK_BARRIER`` after the previous barrier if nothing since then relied on what it checks
    (no constant pinned by a hoisted guard, no array header): this barrier's own check covers both (a method
    bound by one barrier and called by the next, `obj.method(i + 1)`, is checked once)."""
    uops = r.trace.uops
    for index in range(len(uops) - 1, -1, -1):
        uop = uops[index]
        if uop.name == "_CHECK_BARRIER":
            break
        if uop.op.barrier or not (uop.name in _INDEPENDENT or uop.op.fold is not None):
            return
        if any(_pinned(v) for v in uop.args):
            return
    else:
        return
    if not any(_pinned(v) for v in args):
        del uops[index]


def _pinned(v: Value) -> bool:
    """Might v be an object a hoisted guard pins (a global function, a module's attribute)?"""
    return v.is_const and v.kind.is_pointer and v.kind != Kind.STR


def _keep_alive(r: Recorder, args: tuple[Value, ...]) -> None:
    """Give every borrowed pointer the trace still holds after the barrier a reference of its own, taken just
    before it: Python code may drop the reference that kept it alive (an item of a list it empties). The
    arguments are held by the lowering for the call's duration. A root trace's slots it has not assigned yet
    hold what the list of slots holds, or a value a trace handed over owned (``keep_carried``); so do a side
    trace's, but for those its parent's exit left borrowed (``ExitView.borrowed_slots``, inherited along a chain
    of side traces: ``Trace.entry_borrowed``). (Keeping those alive too would make them owned slots, which a
    side trace can hand to its tree only where the tree reads them.)"""
    _keep_frame(r, r.abstract, _keeper(r), trace_frame=True)
    del args


def _keeper(r: Recorder) -> Callable[[Value], Value]:
    """v, or where v is a borrowed pointer, a reference of the trace's own to it (``_KEEP_ALIVE``, one per value)."""
    kept: dict[int, Value] = {}

    def keep(v: Value) -> Value:
        if not v.kind.is_pointer or v.is_const or r.is_owned(v):
            return v
        k = kept.get(v.id)
        if k is None:
            k = kept[v.id] = r.emit("_KEEP_ALIVE", (v,), kind=v.kind)
        return k

    return keep


def _keep_frame(r: Recorder, frame: FrameState, keep: Callable[[Value], Value], trace_frame: bool) -> None:
    """keep every value in frame's slots and stack (trace_frame: the trace's own frame, whose slots the trace has
    not assigned are left alone, as _keep_alive says; an inlined callee's frame holds only the trace's values)."""
    trace = r.trace
    for slot, v in list(frame.slots().items()):
        if trace_frame and slot not in trace.written:
            if trace.kind is TraceKind.ROOT or slot not in trace.entry_borrowed:
                continue
        k = keep(v)
        if k is not v:
            frame.set(slot, k)
            if trace_frame:
                trace.written.add(slot)  # (a side trace's slot it had not assigned: it holds k now)
    stack = frame.stack()
    new = [keep(v) for v in stack]
    if any(a is not b for a, b in zip(new, stack)):
        frame.replace_stack(new)


def keep_alive_everywhere(r: Recorder) -> None:
    """_keep_alive in every frame the trace holds values in (in an inlined call, its callers' frames too, saved
    while its body is recorded) and in the changes the outermost inlined call defers: before a uop that may free
    an object no barrier stands before (a list's pop, whose item's reference goes to the trace and is released
    after its last use: `top = stack[-1]; stack.pop()` left top borrowed from nothing)."""
    keep = _keeper(r)
    frames = [call.saved[1] for call in r.inlined] + [r.abstract]
    for depth, frame in enumerate(frames):
        _keep_frame(r, frame, keep, trace_frame=depth == 0)
    if r.inlined:
        deferred = r.inlined[0].deferred
        for key, (name, args, operand) in list(deferred.items()):
            new = tuple(keep(a) for a in args)
            if any(a is not b for a, b in zip(new, args)):
                deferred[key] = (name, new, operand)


def keep_carried(r: Recorder) -> None:
    """Where a trace ends at a loop header (looping, or jumping into a tree), if the function's traces have
    barriers: the borrowed pointers its slots carry on get a reference of their own (owned, handed over in the
    buffer), so that a barrier there cannot free them."""
    trace = r.trace
    if not (r.host_has_barriers or any(u.op.barrier for u in trace.uops)):
        return
    for slot in sorted(trace.written):
        v = r.abstract.get(slot)
        if v is not None and v.kind.is_pointer and not v.is_const and not r.is_owned(v):
            if trace.entry_slots.get(slot) is not v:
                r.abstract.set(slot, r.emit("_KEEP_ALIVE", (v,), kind=v.kind))


def after_barrier(r: Recorder, frame: Frame) -> None:
    """At the instruction after a barrier: check the hoisted guards again, and guard the result's type as
    seen (unboxing a number), leaving here with the result on the stack where either fails. (Several results,
    an unpacking's items: each where it is on the stack, the first on top.)"""
    pending = r.after_barrier
    r.after_barrier = None
    ran_code, r.ran_no_code = not r.ran_no_code, False
    if r.pending_next is not None:
        _next_outcome(r)
    if r.pending_branch is not None:
        _branch_outcome(r, frame)
    if ran_code:
        r.emit("_CHECK_BARRIER")
        r.trace.uops[-1].exit.when_hot = WhenHot.NEVER  # type: ignore[union-attr]
    results = pending if isinstance(pending, tuple) else (pending,) if isinstance(pending, Value) else ()
    objects = [(depth, v) for depth, v in enumerate(results, 1) if v.kind == Kind.OBJECT and depth <= len(frame.stack)]
    for depth, value in objects:
        made = type(frame.stack[-depth])
        plain = _generator_expression(frame.stack[-depth]) or value.id in r.plain_generators
        if getattr(made, "__del__", None) is not None and not plain:
            # (native code releases the object after its last use, where the interpreter would not run its
            # finalizer, and checks no hoisted guard after it: a global the finalizer rebinds would go unseen)
            raise Abort(Reason.FINALIZER, name=made.__qualname__)
    for depth, result in objects:
        stack = r.abstract.stack()
        if len(stack) < depth or stack[-depth] is not result or (depth == 1 and r.code.ops[r.pc] == I.POP_TOP):
            continue
        typed = _typed(r, result, frame.stack[-depth])
        if typed is not result:
            retyped = list(stack)
            retyped[-depth] = typed
            r.abstract.replace_stack(retyped)


_AFTER_BARRIER.append(after_barrier)
_AT_END.append(keep_carried)


def _generator_expression(obj: Any) -> bool:
    """A generator expression's generator: its finalizer closes it, which unwinds a frame that has no try, with
    or finally statement (an expression's): it runs no Python code of its own, as a list's freeing does not."""
    return type(obj) is types.GeneratorType and obj.gi_code.co_name == "<genexpr>"


#: the code flags of the functions whose calls make something other than a plain generator
_NOT_PLAIN_GENERATOR = 0x80 | 0x100 | 0x200  # CO_COROUTINE, CO_ITERABLE_COROUTINE, CO_ASYNC_GENERATOR


def plain_generator_function(fn: Any) -> bool:
    """Is fn a generator function (`def` with `yield`) whose code has no exception handler (no try, with or
    finally: an empty exception table)? Closing its generator, as its finalizer does, unwinds the frame where it
    waits without running a line of it, as a generator expression's does. (From CPython 3.12 on, every generator's
    code has a handler of its own: none qualifies there.)"""
    if type(fn) is not types.FunctionType:
        return False
    code = fn.__code__
    generator = code.co_flags & 0x20 and not code.co_flags & _NOT_PLAIN_GENERATOR  # (0x20: CO_GENERATOR)
    return bool(generator) and getattr(code, "co_exceptiontable", None) == b""


def _typed(r: Recorder, value: Value, actual: Any) -> Value:
    t = type(actual)
    if actual is None:
        r.emit("_GUARD_TYPE", (value,), operand=Kind.NONE, kind=Kind.OBJECT)
        return r.const(None)
    if t in _UNBOXED and (t is not int or specialize.fits_int64(actual)):
        name, kind = _UNBOXED[t]
        checked = r.emit("_GUARD_TYPE", (value,), operand=kind, kind=Kind.OBJECT)
        unboxed = r.emit(name, (checked,))
        unboxed.boxed = checked  # (moved on unchanged, `out.append(sum(chunk))`: that very object, as CPython)
        return unboxed
    kind = _POINTER_RESULTS.get(t)
    if kind is not None:
        return r.emit("_GUARD_TYPE_OWNED", (value,), operand=kind, kind=kind)
    np = arrays.numpy_module()
    if np is not None and t is np.ndarray and arrays.spec_of(actual) is not None:
        # (np.sqrt(a), a + b, np.dot(m, m): an array, as arrays the function was called with, its spec guarded)
        made = r.emit("_GUARD_TYPE_OWNED", (value,), operand=Kind.ARRAY, kind=Kind.ARRAY)
        specialize_numpy.guarded_spec(r, made, actual)
        return made
    # (np.sum(row), np.dot(a, b): a numpy.float64; np.argmax(row), np.int64 // 2: the others)
    scalar = specialize_numpy.unboxed_scalar(r, value, actual)
    if scalar is not None:
        return scalar
    if t is not int and r.may_specialize(t):  # (an int past 64 bits stays an object of any kind: never narrowed)
        r.guard_class(value, t)
    return value


# --- the operations ------------------------------------------------------------------------------------------


def call(r: Recorder, callee: Value, args: list[Value], kwnames: tuple[str, ...] = (), target: Any = None) -> Value:
    """callee(*args) (the last len(kwnames) arguments by keyword) through PyObject_Vectorcall. target: the function
    the callee is, as recorded, where the caller knows it: a plain generator function's code is guarded, so that
    its generators may be released where native code is done with them (``after_barrier``)."""
    what = "a call"
    inputs = (argument(r, callee, what), *(argument(r, v, what) for v in args))
    plain = target is not None and plain_generator_function(target)
    if plain:
        r.emit("_GUARD_CALLEE_VALUE", (inputs[0],), operand=Callee(target, target.__code__, None))
    out = barrier(r, "_CALL_GENERIC", inputs, operand=kwnames or ())
    if plain:
        r.plain_generators.add(out.id)
    return out


@dataclasses.dataclass
class PendingMethod:
    """`obj.name` where the recorder expects a call of it next (a method call): nothing is recorded yet, and the
    stack holds a placeholder value (no uop makes it), which the CALL takes as one uop, ``_CALL_METHOD_GENERIC``
    (PyObject_VectorcallMethod: as CPython's own LOAD_METHOD, no bound method object is made for a function
    or a method descriptor of the type). The instructions in between only load and compute the arguments
    (``recorder._WHILE_METHOD_PENDING``, nothing that may run Python code), and their guards leave at the
    LOAD_ATTR (snapshot), where the interpreter binds the method itself. Anything else that meets the
    placeholder aborts the recording, and the next one binds the method at that LOAD_ATTR apart
    (``T1Code.unfused_methods``)."""

    obj: Value
    name: str
    snapshot: Snapshot
    pc: int
    actual: Any  # (what obj was when recorded)
    descriptor: Any = None  # (the method itself where the receiver's kind fixes it: ``_fixed_method``)
    code: Any = None  # (the tier-1 code of the LOAD_ATTR: the function's, or an inlined callee's)
    function: Any = None  # (`super().name`: the plain function the lookup found, ``jit.recorder.super_calls``)


def _is_method(actual: Any, name: str) -> bool:
    """Would CPython's LOAD_METHOD find name as a method of actual (a function or method descriptor of its type,
    no instance attribute of that name, the usual attribute lookup)? Then the recorder expects a call next.
    (Only a guess for the recording: PyObject_VectorcallMethod looks the attribute up for itself.)"""
    t = type(actual)
    if isinstance(getattr(t, "__getattribute__", None), types.FunctionType):
        return False
    found = _in_type(t, name)
    if not isinstance(found, (types.FunctionType, types.MethodDescriptorType)):
        return False
    # Whether an instance attribute hides it: looked up as CPython would, never through the instance's
    # `__dict__`, whose mere reading makes CPython 3.11+ give the object a real dict in place of its inline
    # values, after which every attribute access of its methods is slower for the object's whole life
    # (measured: a method call with three attribute updates 2.2x slower).
    try:
        bound = getattr(actual, name)
    except Exception:
        return False
    if isinstance(found, types.FunctionType):
        return type(bound) is types.MethodType and bound.__func__ is found and bound.__self__ is actual
    # (a subclass too: `builtin_method`, a C method of a heap type with METH_METHOD, as re.Pattern.match)
    return isinstance(bound, types.BuiltinMethodType) and bound.__self__ is actual


#: kinds whose values are exactly of a builtin type (no subclass) that cannot be given attributes, nor its
#: instances: their methods are those the type's own dict holds, for as long as the process runs
_IMMUTABLE_TYPES = {
    Kind.STR: str,
    Kind.LIST: list,
    Kind.TUPLE: tuple,
    Kind.DICT: dict,
    Kind.INT: int,
    Kind.FLOAT: float,
    Kind.BOOL: bool,
}


def _fixed_method(kind: Kind, actual: Any, name: str) -> Any:
    """The method descriptor `obj.name` always binds where obj is of that kind (`s.upper()`: str.upper), or
    None: called directly, it skips the lookup that PyObject_VectorcallMethod makes at every call."""
    t = _IMMUTABLE_TYPES.get(kind)
    if t is None or type(actual) is not t:
        return None
    found = _in_type(t, name)
    return found if type(found) is types.MethodDescriptorType else None


def _in_type(t: type, name: str) -> Any:
    """What the type's attribute lookup finds for name in t and its bases (None if nothing)."""
    for klass in t.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return None


def load_attr(r: Recorder, obj: Value, name: str, actual: Any = None) -> Value:
    what = f"attribute .{name}"
    if may_pend(r) and _is_method(actual, name):
        return pend(r, argument(r, obj, what), name, actual, descriptor=_fixed_method(obj.kind, actual, name))
    return barrier(r, "_LOAD_ATTR_GENERIC", (argument(r, obj, what),), operand=name)


def may_pend(r: Recorder) -> bool:
    """May a method loaded at the current instruction wait for its call unbound (``PendingMethod``)? Not inside
    an array subscript being recorded, nor where an earlier recording found it used otherwise (bound apart)."""
    return r.pending_subscript() is None and r.pc not in r.code.unfused_methods


def pend(r: Recorder, obj: Value, name: str, actual: Any, descriptor: Any = None, function: Any = None) -> Value:
    """The placeholder of `obj.name` left pending until its call (``PendingMethod``): its guards leave at the
    current instruction, which binds it again."""
    method = r.trace.new_value(Kind.OBJECT)
    pending = PendingMethod(obj, name, r.snapshots.take(), r.pc, actual, descriptor, r.code, function)
    r.pending_methods[method.id] = pending
    return method


def call_method(r: Recorder, method: Value, args: list[Value], kwnames: tuple[str, ...] = ()) -> Value:
    """The call of a pending method (``PendingMethod``) with args (the last len(kwnames) by keyword)."""
    pending = r.pending_methods.pop(method.id)
    what = "a call"
    if pending.name == "add" and len(args) == 1 and not kwnames and type(pending.actual) is set:
        r.resume_override = pending.snapshot  # (its guards leave at the LOAD_ATTR: the stack holds no method)
        try:
            if _plain_set(r, pending.obj, pending.actual, args[0]):  # (runs no Python code: no barrier)
                r.emit("_SET_ADD", (pending.obj, args[0]))
                r.trace.uops[-1].exit.when_hot = WhenHot.NEVER  # type: ignore[union-attr]  # (MemoryError)
                return r.const(None)
        finally:
            r.resume_override = None
    if pending.name == "pop" and not args and not kwnames and type(pending.actual) is list:
        return _list_pop(r, pending)
    inputs = (pending.obj, *(argument(r, v, what) for v in args))
    if pending.descriptor is not None:
        # (`w.upper()`: C code only, no barrier; a method bound around it stays pending)
        out = pure_methods.call(r, pending.descriptor, pending.obj, list(inputs[1:]), kwnames, pending.snapshot)
        if out is not None:
            return out
        operand = (pending.descriptor, *kwnames)
        return barrier(r, "_CALL_METHOD_DESCRIPTOR", inputs, operand=operand, resume=pending.snapshot)
    return barrier(r, "_CALL_METHOD_GENERIC", inputs, operand=(pending.name, *kwnames), resume=pending.snapshot)


def _list_pop(r: Recorder, pending: PendingMethod) -> Value:
    """`lst.pop()` of an exact list: ``_LIST_POP``, no barrier (it runs no Python code: the item's reference goes
    to the trace). Its guard leaves at the method's LOAD_ATTR (the interpreter binds it again, and raises the
    IndexError of an empty list). The item is typed at the next instruction, where a guard leaves after the call
    with the item on the stack (``after_barrier``, with no check of the hoisted guards); in an inlined call, at
    the caller's, after the outermost call returns (no guard may follow a change there)."""
    keep_alive_everywhere(r)
    obj = pending.obj
    r.resume_override = pending.snapshot
    try:
        if obj.kind != Kind.LIST:
            obj = r.emit("_GUARD_TYPE", (obj,), operand=Kind.LIST, kind=Kind.LIST)
        popped = r.emit("_LIST_POP", (obj,))
    finally:
        r.resume_override = None
    if not r.inlined:
        r.after_barrier, r.ran_no_code = popped, True
    return popped


def store_attr(r: Recorder, obj: Value, value: Value, name: str) -> None:
    what = f"attribute .{name}"
    barrier(r, "_STORE_ATTR_GENERIC", (argument(r, obj, what), argument(r, value, what)), operand=name, result=False)


def unary(r: Recorder, op: UnaryOp, v: Value) -> Value:
    """-v, +v or ~v through CPython's own operator (an object's __neg__, ~ of a bool), a barrier."""
    return barrier(r, "_UNARY_OP_GENERIC", (argument(r, v, f"unary {op}"),), operand=op)


def binary(r: Recorder, op: BinOp, a: Value, b: Value) -> Value:
    what = f"operator {op}"
    if op.uop_name == "ADD" and a.kind == Kind.STR and b.kind == Kind.STR:
        # (exact strs: no Python code runs, no barrier; `s += x` may grow s in place)
        out = r.emit("_BINARY_OP_ADD_STR", (a, b))
        r.trace.uops[-1].exit.when_hot = WhenHot.NEVER  # type: ignore[union-attr]  # (it leaves raising)
        return out
    return barrier(r, "_BINARY_OP_GENERIC", (argument(r, a, what), argument(r, b, what)), operand=op)


#: the kinds of set items whose hash and equality are C code that runs no Python code and cannot fail
_PLAIN_KEYS = frozenset({Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.STR})


def _plain_set(r: Recorder, container: Value, actual: Any, item: Value) -> bool:
    """Is `item in container` or `container.add(item)` plain C work (an exact set, an item of _PLAIN_KEYS): then
    no barrier (it runs no Python code), with the container's class guarded."""
    if container.kind != Kind.OBJECT or type(actual) not in (set, frozenset) or item.kind not in _PLAIN_KEYS:
        return False
    r.guard_class(container, type(actual))
    return True


def compare(r: Recorder, op: CompareOp, a: Value, b: Value, container: Any = None) -> Value:
    what = f"comparison {op}"
    a, b = argument(r, a, what), argument(r, b, what)
    if op in (CompareOp.IN, CompareOp.NOT_IN):
        if _plain_set(r, b, container, a):
            found = r.emit("_CONTAINS_SET", (b, a))
            r.trace.uops[-1].exit.when_hot = WhenHot.NEVER  # type: ignore[union-attr]  # (it leaves raising)
        else:
            found = barrier(r, "_CONTAINS_GENERIC", (b, a))
        return found if op == CompareOp.IN else r.emit("_UNARY_NOT", (found,))
    if op in (CompareOp.IS, CompareOp.IS_NOT):
        raise Abort(Reason.IDENTITY, op=op, kind=f"{a.kind.short} and {b.kind.short}")
    return barrier(r, "_COMPARE_OP_GENERIC", (a, b), operand=op)


#: what a type's `__bool__` or `__len__` is where its truth is C code (a C type's slot wrapper) or it has none
_C_SLOT = (types.WrapperDescriptorType, type(None))


def truth(r: Recorder, v: Value, actual: Any) -> Value:
    """The truth of an object of another kind (specialize.truth has none), by PyObject_IsTrue. Where its type's
    truth runs no Python code (no ``__bool__`` or ``__len__`` written in Python), not a barrier, so the
    interpreter may test it again where a branch guard leaves; its type is guarded as seen. Else it is a barrier
    (``_TO_BOOL_GENERIC``: the user's ``__bool__`` runs once, and what it raises, or CPython's TypeError for a
    result that is not a bool, is re-raised at the instruction): a branch on it must not leave to test it again
    (``runs_code``)."""
    t = type(actual)
    if v.kind not in (Kind.OBJECT, Kind.ARRAY):
        raise Abort(Reason.TRUTH, kind=v.kind.short)
    plain = all(isinstance(getattr(t, name, None), _C_SLOT) for name in ("__bool__", "__len__"))
    if not plain or (v.kind == Kind.OBJECT and not r.may_specialize(t)):
        return barrier(r, "_TO_BOOL_GENERIC", (argument(r, v, "a truth test"),))
    if v.kind == Kind.OBJECT:
        r.guard_class(v, t)  # (unless a guard since the last barrier made it known: a result typed as it came)
    return r.emit("_TO_BOOL_OBJECT", (v,))


def truth_of(r: Recorder, v: Value, actual: Any) -> Value:
    """The truth of v (actual: its value as recorded): specialized where its kind has a uop, else ``truth``."""
    try:
        return specialize.truth(r, v)
    except Abort as exc:
        if exc.reason is not Reason.TRUTH:
            raise
        return truth(r, v, actual)


def runs_code(r: Recorder, condition: Value) -> bool:
    """Was condition computed by a barrier of this instruction (the truth of an object whose ``__bool__`` is
    Python code)? Then the recorder must not test it again to see the branch's direction: ``branch_later``."""
    return r.after_barrier is condition


@dataclasses.dataclass
class PendingBranch:
    """A branch on the answer of a user's ``__bool__`` (or ``__len__``): its direction is seen at the next
    instruction (``_branch_outcome``), where the guard on it is emitted, resuming where the other direction goes
    (the interpreter does not test the object again)."""

    condition: Value
    jump_when: bool  # (POP_JUMP_IF_TRUE, JUMP_IF_TRUE_OR_POP)
    pc: int
    target: int
    pops: bool  # POP_JUMP_IF_*: the object popped either way; JUMP_IF_*_OR_POP: kept where it jumps


def branch_later(r: Recorder, condition: Value, jump_when: bool, target: int, pops: bool) -> None:
    r.pending_branch = PendingBranch(condition, jump_when, r.pc, target, pops)


def _branch_outcome(r: Recorder, frame: Frame) -> None:
    pending = r.pending_branch
    r.pending_branch = None
    stack = list(r.abstract.stack())
    if pending.pops:
        if pending.target == pending.pc + 1:  # (both ways go on here: nothing to guard)
            return
        jumped = r.pc == pending.target
        other_stack = stack
    else:
        jumped = len(frame.stack) == len(stack)  # (the object still on the stack: it jumped)
        other_stack = stack[:-1] if jumped else stack
        if not jumped:
            r.abstract.pop()
            r.snapshots.begin(r.pc)  # (this instruction's guards resume with the object popped)
    truth = jumped == pending.jump_when
    other = pending.pc + 1 if jumped else pending.target
    r.resume_override = Snapshot([FrameSnapshot(other, dict(r.abstract.slots()), list(other_stack))])
    try:
        r.guard_branch(pending.condition, truth, other)
    finally:
        r.resume_override = None


def rolled_back(r: Recorder) -> Any:
    """A mark of the recorder's state, for ``roll_back``: what a specialization or an inlining that aborted
    halfway added is undone before the generic path records the operation instead."""
    saved = {name: getattr(r, name).copy() for name in _ROLLED_BACK}
    return len(r.trace.uops), saved


#: what the recorder knows that recording an operation may change (value ids it makes are never reused)
_ROLLED_BACK = (
    "plain_entries",
    "entry_objects",
    "bound_dicts",
    "virtual_tuples",
    "made_iterators",
    "global_values",
    "number_globals",
    "numbers_throughout",
    "owned_values",
    "kept_alive",
    "array_specs",
    "array_headers",
    "writeable_arrays",
    "errstate_guarded",
    "dependent_values",
    "shared_values",
    "wide_bounds",
    "pending_methods",  # (an inlined call that gave up halfway may have left a method of its own pending)
)


def roll_back(r: Recorder, mark: Any) -> None:
    length, saved = mark
    del r.trace.uops[length:]
    for name, value in saved.items():
        setattr(r, name, value)


# --- subscripts: what the specialized handlers of jit.recorder.subscripts give up on ------------------------

#: their reasons to give up that the generic path handles (a container or key of another kind)
SUBSCRIPT_FALLBACK = frozenset({Reason.SUBSCRIPT, Reason.ITEM_ASSIGNMENT, Reason.STORE_KIND, Reason.OVERWRITE_TYPE})
_ARRAY_KINDS = (Kind.ARRAY, Kind.ARRAY_INDEX)


def _with_fallback(op: int, depth: int, generic_handler: Any) -> None:
    """Wrap the handler of op (its operands: the top depth stack entries): where it gives up for a reason of
    SUBSCRIPT_FALLBACK, undo what it recorded and record generic_handler(r, *operands) instead."""
    specialized = _HANDLERS[op]

    def handler(r: Recorder, frame: Frame, arg: Any) -> None:
        operands = [r.abstract.peek(k) for k in range(depth, 0, -1)]
        if any(v.kind in _ARRAY_KINDS for v in operands) or any(v.id in r.virtual_shapes for v in operands):
            specialized(r, frame, arg)
            return
        height = len(r.abstract.stack())
        mark = rolled_back(r)
        try:
            specialized(r, frame, arg)
        except Abort as exc:
            if exc.reason not in SUBSCRIPT_FALLBACK:
                raise
            roll_back(r, mark)
            while len(r.abstract.stack()) > height - depth:
                r.abstract.pop()
            generic_handler(r, *operands)

    _HANDLERS[op] = handler


#: the uops of a slice of an exact list or tuple (C code: no barrier)
_SLICES = {Kind.LIST: "_LIST_SLICE", Kind.TUPLE: "_TUPLE_SLICE"}


def _subscript(r: Recorder, container: Value, key: Value) -> None:
    what = "a subscript"
    if container.kind == Kind.STR and _plain_index(r, key) and r.pending_subscript() is None:
        r.push(_subscript_in_c(r, "_BINARY_SUBSCR_STR", container, key))
        return
    sliced = _SLICES.get(container.kind)  # (`rows[a:b]`: a new list of the same items, no Python code)
    if sliced and key.kind not in (Kind.INT, Kind.BOOL) and _plain_index(r, key) and r.pending_subscript() is None:
        r.push(_subscript_in_c(r, sliced, container, key))
        return
    r.push(barrier(r, "_BINARY_SUBSCR_GENERIC", (argument(r, container, what), argument(r, key, what))))


def _plain_index(r: Recorder, key: Value) -> bool:
    """Is key an int, or a slice of ints and None (a constant one, or one _BUILD_SLICE makes), which a str's
    subscript reads in C (no `__index__` of a user's class)?"""
    if key.kind in (Kind.INT, Kind.BOOL):
        return True
    if key.is_const:
        part = key.const
        return type(part) is slice and all(type(p) in (int, type(None)) for p in (part.start, part.stop, part.step))
    made = r.trace.made_by(key)
    return (
        made is not None
        and made.name == "_BUILD_SLICE"
        and all(a.kind in (Kind.INT, Kind.BOOL, Kind.NONE) for a in made.args)
    )


def _subscript_in_c(r: Recorder, name: str, container: Value, key: Value) -> Value:
    """`w[:2]`, `w[i]` of an exact str, `rows[a:b]` of an exact list or tuple: the uop name, no barrier (in an
    inlined helper too, `key(x)`: `return x[:2]`). Its exit leaves before the subscript, its operands on the stack
    again (or before the binding of a method waiting for its call around it: jit.recorder.generic.PendingMethod)."""
    if r.inlined:  # (its exits make the outermost inlined call again)
        out = r.emit(name, (container, key))
    else:
        before = r.method_resume()
        if before is None:
            r.push(container)
            r.push(key)
            before = r.snapshots.take()
            r.abstract.pop()
            r.abstract.pop()
        r.resume_override = before
        try:
            out = r.emit(name, (container, key))
        finally:
            r.resume_override = None
    r.trace.uops[-1].exit.when_hot = WhenHot.NEVER  # type: ignore[union-attr]  # (it leaves where it raises)
    return out


def _store_subscript(r: Recorder, value: Value, container: Value, key: Value) -> None:
    what = "an item assignment"
    args = (argument(r, value, what), argument(r, container, what), argument(r, key, what))
    barrier(r, "_STORE_SUBSCR_GENERIC", args, result=False)


@_handles(I.DELETE_SUBSCR)
def _delete_subscript(r: Recorder, frame: Frame, arg: Any) -> None:
    """`del container[key]`: PyObject_DelItem (a `__delitem__`, or freeing what goes, may run Python code)."""
    key = r.pop(objects=True)
    container = r.pop(objects=True)
    what = "a del of an item"
    barrier(r, "_DELETE_SUBSCR_GENERIC", (argument(r, container, what), argument(r, key, what)), result=False)


@_handles(I.DELETE_ATTR)
def _delete_attr(r: Recorder, frame: Frame, name: str) -> None:
    """`del obj.name` (a `__delattr__`, a descriptor, or freeing what goes, may run Python code)."""
    obj = r.pop(objects=True)
    barrier(r, "_DELETE_ATTR_GENERIC", (argument(r, obj, f"a del of .{name}"),), operand=name, result=False)


_with_fallback(I.BINARY_SUBSCR, 2, _subscript)
_with_fallback(I.STORE_SUBSCR, 3, _store_subscript)


@_handles(I.MAP_ADD)
def _map_add(r: Recorder, frame: Frame, slot: int) -> None:
    """A dict comprehension's `key: value`, into the dict it builds (a hidden slot): PyObject_SetItem on that exact
    dict, which is CPython's MAP_ADD (PyDict_SetItem); hashing and comparing the key may run Python code: a
    barrier, as a dict display's."""
    value = r.pop(stored=True)
    key = r.pop(objects=True)
    _store_subscript(r, value, r.read_slot(frame, slot), key)


@_handles(I.SET_ADD)
def _set_add(r: Recorder, frame: Frame, slot: int) -> None:
    """A set comprehension's item, into the set it builds (a hidden slot): PySet_Add where the item is an int, float,
    bool or str (no Python code runs: ``_SET_ADD``); another item, whose hash may run Python code, is not compiled."""
    item = r.pop(objects=True)
    target = r.read_slot(frame, slot)
    if not _plain_set(r, target, frame.slots[slot], item):
        raise Abort(Reason.NOT_COMPILED, instruction=f"SET_ADD of a {item.kind.short}")
    r.emit("_SET_ADD", (target, item))
    r.trace.uops[-1].exit.when_hot = WhenHot.NEVER  # type: ignore[union-attr]  # (it leaves raising: MemoryError)


@_handles(I.BUILD_SLICE)
def _build_slice(r: Recorder, frame: Frame, n: int) -> None:
    """`a[i:j]`, `a[::k]`: a new slice object (PySlice_New; runs no Python code), or one made now where every
    bound is a constant (`w[:3]`: slices cannot change, and one of the trace's own saves an allocation and its
    freeing at every use)."""
    parts = [argument(r, r.pop(), "a slice") for _ in range(n)][::-1]
    if all(p.is_const and p.kind in (Kind.INT, Kind.NONE) for p in parts):
        r.push(r.const(slice(*(p.const for p in parts))))
        return
    r.push(r.emit("_BUILD_SLICE", tuple(parts)))


#: the kinds of the empty containers ``new_empty`` makes
EMPTY_KINDS = {list: Kind.LIST, tuple: Kind.TUPLE, dict: Kind.DICT, set: Kind.OBJECT, frozenset: Kind.OBJECT}


def new_empty(r: Recorder, klass: type) -> Value:
    """An empty list, tuple, dict, set or frozenset (`set()`, `{}`): C code, no barrier (a method bound around it
    stays fused: `groups.setdefault(key, set())`)."""
    return r.emit("_NEW_EMPTY", kind=EMPTY_KINDS[klass], operand=klass)


def make_function(r: Recorder, maker: Any, args: list[Value]) -> Value:
    """A lambda or nested def made (a call of its ``jit.frontend.nested_code.FunctionMaker``): C code, no
    barrier."""
    passed = tuple(argument(r, value, "a function's default or closure") for value in args)
    return r.emit("_MAKE_FUNCTION", passed, operand=maker)


@_handles(I.BUILD_SET)
def _build_set(r: Recorder, frame: Frame, n: int) -> None:
    """`{a, b}`: PySet_New and PySet_Add (hashing the items may run Python code: a barrier)."""
    if n == 0:  # (never a display: `{}` is a dict; a starred `{*xs}` builds from an empty set)
        r.push(new_empty(r, set))
        return
    items = [argument(r, r.pop(), "a set display") for _ in range(n)][::-1]
    r.push(barrier(r, "_BUILD_SET", tuple(items)))


#: the kinds of f-string fields formatted by their type's C code (``_FORMAT_NUMBER``)
_FORMATTED_PLAINLY = frozenset({Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.INT_OBJECT, Kind.WIDE_INT})


@_handles(I.FORMAT_VALUE)
def _format_value(r: Recorder, frame: Frame, arg: tuple[str | None, bool]) -> None:
    """An f-string's field `{x!r:spec}`: the conversion, then PyObject_Format (both may run the object's Python
    code: a barrier). A str with neither is the field itself, as in CPython."""
    conversion, has_spec = arg
    spec = argument(r, r.pop(), "a format spec") if has_spec else None
    value = r.pop(objects=True)
    if value.kind == Kind.STR and conversion is None and spec is None:
        r.push(value)
        return
    args = (argument(r, value, "an f-string field"), *((spec,) if spec is not None else ()))
    if value.kind in _FORMATTED_PLAINLY and (spec is None or (spec.is_const and conversion is None)):
        # (an int's, float's or bool's str, repr and ascii are one str, their __format__ with an empty spec that
        # str too, and with a spec their C code: no Python code runs, no barrier)
        formatted = r.emit("_FORMAT_NUMBER", args)
        r.trace.uops[-1].exit.when_hot = WhenHot.NEVER  # type: ignore[union-attr]  # (it leaves raising)
        r.push(formatted)
        return
    r.push(barrier(r, "_FORMAT_VALUE", args, operand=conversion or ""))


@_handles(I.BUILD_STRING)
def _build_string(r: Recorder, frame: Frame, n: int) -> None:
    """An f-string of several parts, each a str by now (a constant, or a field checked to be one)."""
    parts = [r.pop() for _ in range(n)][::-1]
    if any(part.kind != Kind.STR for part in parts):
        raise Abort(Reason.NOT_COMPILED, instruction="BUILD_STRING of parts not known to be str")
    if all(part.is_const for part in parts):  # (a format spec: `{x:.1f}`)
        r.push(r.const("".join(part.const for part in parts)))
    elif len(parts) == 1:
        r.push(parts[0])
    else:
        r.push(r.emit("_BUILD_STRING", tuple(parts)))


@_handles(I.BUILD_MAP)
def _build_map(r: Recorder, frame: Frame, n: int) -> None:
    """`{k: v, ...}`: PyDict_New and PyDict_SetItem (hashing the keys may run Python code: a barrier, unless they
    are distinct str or int constants)."""
    if n == 0:
        r.push(new_empty(r, dict))
        return
    items = [argument(r, r.pop(), "a dict display") for _ in range(2 * n)][::-1]
    keys = items[0::2]
    if all(k.is_const and type(k.const) in (str, int) for k in keys) and len({k.const for k in keys}) == n:
        # (a record, `{"name": n, "age": a}`: no Python code runs, an exact dict whose entries later uops read)
        r.push(r.emit("_BUILD_MAP_CONST_KEYS", tuple(items)))
        r.trace.uops[-1].exit.when_hot = WhenHot.NEVER  # type: ignore[union-attr]  # (memory: the interpreter's)
        return
    r.push(barrier(r, "_BUILD_MAP", tuple(items)))


# --- for over any iterable: what jit.recorder.iteration gives up on -----------------------------------------


@dataclasses.dataclass
class PendingNext:
    """A ``_ITER_NEXT_GENERIC`` whose outcome the next instruction shows (``_next_outcome``): an item (at the
    FOR_ITER's next instruction, the item pushed) or none (at the loop's exit, its hidden slots emptied)."""

    item: Value
    base: int  # the loop's hidden slots: base + 2 holds the iterator
    pc: int  # the FOR_ITER's
    exit_pc: int
    own: bool  # the FOR_ITER of the trace's own loop


def _for_iter(r: Recorder, frame: Frame, arg: tuple[int, int]) -> None:
    """`for x in it` over an iterator native code has no uop of its own for (a generator, a map, a filter, a zip
    of iterators, a user's class): its next() through PyIter_Next, a barrier (it may run any Python code, and
    raise: re-raised at the FOR_ITER). Whether it gave an item is seen at the next instruction."""
    base, exit_pc = arg
    iterator = r.read_slot(frame, base + 2)
    if iterator.kind != Kind.OBJECT:
        raise Abort(Reason.FOR_OVER, what=iterator.kind.short)
    own = r.trace.loop.header_pc == r.pc - 1
    item = barrier(r, "_ITER_NEXT_GENERIC", (iterator,))
    r.pending_next = PendingNext(item, base, r.pc, exit_pc, own)


def _next_outcome(r: Recorder) -> None:
    """At the instruction after a generic FOR_ITER: guard that its next() did as it did while recording. With an
    item, the guard's exit is the loop's end (the hidden slots emptied, as CPython's FOR_ITER leaves them); with
    none (an inner loop that ended), its exit resumes in the loop with the item on the stack, handed over."""
    pending = r.pending_next
    assert pending is not None
    r.pending_next = None
    stack = list(r.abstract.stack())
    slots = dict(r.abstract.slots())
    hidden = range(pending.base, pending.base + 3)
    if r.pc == pending.pc + 1:
        ended = {**slots, **{slot: r.const(UNBOUND) for slot in hidden}}
        r.resume_override = Snapshot([FrameSnapshot(pending.exit_pc, ended, stack, frozenset(hidden))])
        try:
            r.emit("_GUARD_ITER_ITEM", (pending.item,), leaves_loop=pending.own)
        finally:
            r.resume_override = None
        r.push(pending.item)
        r.snapshots.begin(r.pc)  # (this instruction's guards resume with the item on the stack)
        return
    if r.pc != pending.exit_pc:  # (the next() raised: nothing to record after it)
        raise Abort(Reason.FOR_OVER, what="iterator whose next() raised")
    r.resume_override = Snapshot([FrameSnapshot(pending.pc + 1, slots, [*stack, pending.item])])
    try:
        r.emit("_GUARD_ITER_DONE", (pending.item,))
    finally:
        r.resume_override = None
    r.trace.uops[-1].exit.when_hot = WhenHot.NEVER  # type: ignore[union-attr]  (its item: no side trace takes it)
    for slot in hidden:
        r.write_slot(slot, r.const(UNBOUND))
    r.snapshots.begin(r.pc)  # (this instruction's guards resume with the hidden slots emptied)


def _get_iter(r: Recorder, frame: Frame, base: int) -> None:
    """iter() of an iterable native code has no uop of its own for: PyObject_GetIter, a barrier (a class's
    __iter__ runs). The iterator, the trace's own, goes to the loop's hidden slot (as jit.recorder.iteration's)."""
    iterable = r.pop()
    iterator = barrier(r, "_GET_ITER_GENERIC", (argument(r, iterable, "iter()"),), result=False)
    r.write_slot(base, r.const(None))
    r.write_slot(base + 1, r.const(None))
    r.write_slot(base + 2, iterator)


def _iteration_fallback(op: int, generic_handler: Any) -> None:
    """Wrap the handler of op: where it gives up on the iterable's type (``Reason.FOR_OVER``), undo what it
    recorded and record generic_handler instead."""
    specialized = _HANDLERS[op]

    def handler(r: Recorder, frame: Frame, arg: Any) -> None:
        mark = rolled_back(r)
        stack = list(r.abstract.stack())
        try:
            specialized(r, frame, arg)
        except Abort as exc:
            if exc.reason is not Reason.FOR_OVER or r.inlined:
                raise
            roll_back(r, mark)
            r.abstract.replace_stack(stack)
            generic_handler(r, frame, arg)

    _HANDLERS[op] = handler


_iteration_fallback(I.FOR_ITER, _for_iter)
_iteration_fallback(I.GET_ITER, _get_iter)
