"""Handlers of global names and attributes: guarded loads, stores, module attributes."""

from __future__ import annotations

import types

from jit import inline, instances, specialize
from jit.aborts import Abort, Reason
from jit.frontend import instructions as I
from jit.kinds import Kind
from jit.recorder import attributes, generic, iteration, operator_methods
from jit.recorder.array_access import _array_attribute
from jit.recorder.recorder import Recorder, _handles
from jit.recorder.subscripts import _unbox
from jit.trace import NO_CONST, Value
from jit.uops import GlobalBinding, GlobalName, ModuleAttr
from runtime.frame import Frame

#: the kinds of values whose freeing runs no Python code (numbers, None, a str): a store of one natively
#: (``_STORE_GLOBAL``), where what it replaces is one too, runs none either
_PLAIN_KINDS = frozenset({Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.INT_OBJECT, Kind.NONE, Kind.STR})
_NUMBERS = frozenset({Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.INT_OBJECT, Kind.NONE})


@_handles(I.STORE_GLOBAL)
def _store_global(r: Recorder, frame: Frame, name: str) -> None:
    """`g = value` of a global the function declares `global`: into the module's dict at once, which takes its
    own reference. A number, None or a str replacing one (as recorded, checked where it is unless the trace knows
    it) is stored natively (``_STORE_GLOBAL``: nothing it frees runs Python code); any other store (a list, a
    tuple, an instance, or anything replacing one, whose freeing may run a finalizer) is a barrier
    (``_STORE_GLOBAL_GENERIC``). Reads of the global later in the trace get the value stored (after a barrier,
    what the dict holds then)."""
    value = r.pop(stored=True)  # (an int past 64 bits as recorded: stored as the int object, like a local)
    globals_ = frame.function.globals
    if type(globals_) is not dict:
        raise Abort(Reason.GLOBALS_NOT_DICT)
    if r.inlined:
        if value.kind not in _NUMBERS:
            raise Abort(Reason.GLOBAL_STORE_KIND, kind=value.kind.short, name=name)
        _defer_store(r, frame, name, value)
        return
    if value.kind not in _NUMBERS:
        # (a trace guarding it to hold a number at its entry would fail that guard wherever it is checked again)
        r.code.object_globals.add(name)
        if name in r.numbers_throughout:
            raise Abort(Reason.GLOBAL_NOT_NUMBER, kind=value.kind.short, name=name)
    else:
        _number_throughout(r, frame, name)
    over_number = name in r.number_globals or name in r.numbers_throughout
    old = globals_.get(name)
    if value.kind in _PLAIN_KINDS and (over_number or type(old) in instances.FREED_PLAINLY):
        if not over_number:  # (a str it replaces may be freed: a pointer the trace borrowed from it would dangle)
            generic.keep_alive_everywhere(r)
        r.emit("_STORE_GLOBAL", (value,), operand=GlobalName(name, over_number=over_number))
        r.global_values[name] = value
        r.number_globals.add(name)
        return
    stored = generic.argument(r, value, f"a store into the global {name}")
    generic.barrier(r, "_STORE_GLOBAL_GENERIC", (stored,), operand=GlobalName(name), result=False)


def _defer_store(r: Recorder, frame: Frame, name: str, value: Value) -> None:
    """An inlined call's store of a global of the trace's function (`global count; count += 1` in a helper):
    checked here, made at the outermost call's return, after its last exit (``jit.inline``); reads of it until
    then get the value stored. ``Recorder.inline_call`` made the name one the trace reads at each use."""
    if frame.function.globals is not r.globals or name not in r.stored_globals:
        raise Abort(Reason.INLINED_MUTATES, name=r.inlined[-1].function.__qualname__)
    r.emit("_CHECK_STORE_GLOBAL", operand=GlobalName(name))
    r.inlined[0].defer(("global", name), "_STORE_GLOBAL_CHECKED", (value,), GlobalName(name, over_number=True))
    r.global_values[name] = value
    r.number_globals.add(name)


@_handles(I.DELETE_GLOBAL)
def _delete_global(r: Recorder, frame: Frame, name: str) -> None:
    """`del g` of a global the function declares `global`: deleted from the dict natively where it holds a
    number or None (its freeing runs no Python code), else the trace leaves there and the interpreter deletes it
    (or raises NameError). Every read of a name the function stores or deletes is a read of the dict."""
    globals_ = frame.function.globals
    if type(globals_) is not dict:
        raise Abort(Reason.GLOBALS_NOT_DICT)
    if name not in globals_:  # (the interpreter raises NameError: the loop ends, a retry)
        raise Abort(Reason.RAISES, what=f"del of the global {name!r}", exception="NameError")
    if type(globals_[name]) not in (int, float, bool, type(None)):
        raise Abort(Reason.GLOBAL_DELETED, name=name, kind=type(globals_[name]).__name__)
    r.emit("_DELETE_GLOBAL", operand=GlobalName(name))
    r.global_values.pop(name, None)
    r.number_globals.discard(name)


def _number_throughout(r: Recorder, frame: Frame, name: str) -> None:
    """At the trace's first use of a global it stores: if it is a number, guard (hoisted to the entry) that it
    is one there (so the first use sees what the trace was entered with, unless an inner tree called before
    stored one: then the guard only leaves more often than needed)."""
    if name in r.numbers_throughout or r.inlined or frame.function.globals is not r.globals:
        return
    if name in r.code.object_globals:  # (a trace of the function stores other values there)
        return
    if type(frame.function.globals.get(name)) in (int, float, bool):
        r.emit("_GUARD_GLOBAL_NUMBER", operand=GlobalName(name))
        r.numbers_throughout.add(name)


def _load_stored_global(r: Recorder, frame: Frame, name: str) -> None:
    """A global the loop itself stores: the value this trace stored last, else read from the dict."""
    known = r.global_values.get(name)
    if known is not None:
        r.push(known)
        return
    function = frame.function
    if type(function.globals) is not dict:
        raise Abort(Reason.GLOBALS_NOT_DICT)
    _number_throughout(r, frame, name)
    value = function.globals.get(name, NO_CONST)
    if value is NO_CONST or type(value) not in (int, float, bool, list, tuple, str, dict):
        # a builtin until the function stores the name, a function, a module...: that very object, checked at
        # every read (the store may come before the next one)
        if value is NO_CONST:
            value = function.builtins.get(name, NO_CONST)
        if value is NO_CONST:  # (the interpreter raises NameError: the loop ends, a retry)
            raise Abort(Reason.RAISES, what=f"global name {name!r}", exception="NameError")
        r.emit("_CHECK_GLOBAL", operand=GlobalBinding(name, value))
        r.push(r.const(value))
        return
    # (an int past 64 bits: _unbox makes it an int object of the trace's own, guarded to be an int)
    boxed = r.emit("_LOAD_GLOBAL_VALUE", operand=GlobalName(name))
    loaded = _unbox(r, boxed, value)
    r.global_values[name] = loaded  # (nothing but a store or a tree call changes it)
    r.push(loaded)
    if type(value) in (int, float, bool):
        r.number_globals.add(name)


@_handles(I.LOAD_GLOBAL)
def _load_global(r: Recorder, frame: Frame, name: str) -> None:
    function = frame.function
    if name in r.stored_globals and function.globals is r.globals:  # (an inlined callee may share them)
        _load_stored_global(r, frame, name)
        return
    if type(function.globals) is not dict:
        raise Abort(Reason.GLOBALS_NOT_DICT)
    value = function.globals.get(name, NO_CONST)
    if value is NO_CONST:
        value = function.builtins.get(name, NO_CONST)
    if value is NO_CONST:  # (the interpreter raises NameError: the loop ends, a retry)
        raise Abort(Reason.RAISES, what=f"global name {name!r}", exception="NameError")
    if r.inlined:  # an inlined callee's globals (maybe another module's)
        binding = GlobalBinding(name, value, function.globals, function.builtins)
    else:
        binding = GlobalBinding(name, value)
    r.emit("_GUARD_GLOBAL", operand=binding)
    if type(value) is int and not specialize.fits_int64(value):  # (that very int object: a constant of int arithmetic)
        r.push(r.const(value, Kind.INT_OBJECT))
        return
    r.push(r.const(value))


#: what a closure's cell may hold for the trace to read it (the kinds _LOAD_GLOBAL_VALUE reads, None, a function:
#: a helper defined in the enclosing function, inlined where it is called, _GUARD_CALLEE_VALUE; and, where the
#: class is one the site may be specialized on, any object, guarded as a list's item is: ``subscripts._unbox``)
_FREE_TYPES = (int, float, bool, list, tuple, type(None), types.FunctionType, types.BuiltinFunctionType)


@_handles(I.LOAD_FREE)
def _load_free(r: Recorder, frame: Frame, arg: tuple[int, str]) -> None:
    """A variable of an enclosing function a closure reads (the jitted function's, or an inlined callee's): from
    the cell of the function value (or constant: the jitted function, or the callee the call guarded), at every
    read (Python code may assign it between two reads)."""
    index, name = arg
    call = r.inlined[-1] if r.inlined else None
    owner = r.closure_owner(frame)
    if r.inlined and r.inlined[0].cells:  # (cells this inlined call assigned: stored at its return)
        pending = r.inlined[0].cells
        key = (inline.cell_owner(owner), index)
        if key in pending:
            r.push(pending[key])
            return
        if any(k[0] != key[0] for k in pending):  # (another function's closure could hold the same cell)
            why = f"it reads {name!r} of an enclosing function after a call assigned a variable of another's"
            raise Abort(Reason.NOT_INLINED, name=r.inlined[0].function.__qualname__, why=why)
    try:
        value = frame.function.closure[index].cell_contents
    except ValueError:  # (the interpreter raises NameError: the call is made for real)
        raise Abort(Reason.RAISES, what=f"free variable {name!r}", exception="NameError") from None
    if type(value) not in _FREE_TYPES and not r.may_specialize(type(value)):
        if call is None:
            raise Abort(Reason.FREE_VARIABLE, name=name, type=type(value).__name__)
        why = f"it reads {name!r} of an enclosing function, a {type(value).__name__}"
        raise Abort(Reason.NOT_INLINED, name=call.function.__qualname__, why=why)
    r.push(_unbox(r, r.emit("_LOAD_FREE", (owner,), operand=index), value))


@_handles(I.STORE_FREE)
def _store_free(r: Recorder, frame: Frame, arg: tuple[int, str]) -> None:
    """`nonlocal name; name = value` in an inlined call (only a callee to inline assigns its closure's variables:
    ``jit.frontend.source.locate``): checked where it is (the cell holds nothing, a number or None: replacing it
    runs no Python code), made at the outermost call's return, after its last exit (``jit.inline``); reads of the
    cell until then get the value stored."""
    index, name = arg
    if not r.inlined:
        raise Abort(Reason.INLINED_MUTATES, name=frame.function.__qualname__)  # (never: the front end refuses it)
    site = r.inlined[0]
    callee = r.inlined[-1].function.__qualname__
    value = generic.argument(r, r.pop(stored=True), f"a store into the variable {name!r} of an enclosing function")
    try:
        old = frame.function.closure[index].cell_contents
    except ValueError:
        old = None
    if type(old) not in (int, float, bool, type(None)):
        why = f"it assigns {name!r} of an enclosing function, which holds a {type(old).__name__}"
        raise Abort(Reason.NOT_INLINED, name=callee, why=why)
    owner = r.closure_owner(frame)
    key = (inline.cell_owner(owner), index)
    if any(k[0] != key[0] for k in site.cells):  # (another function's closure could hold the same cell)
        why = f"it assigns {name!r} of an enclosing function after a call assigned a variable of another's"
        raise Abort(Reason.NOT_INLINED, name=callee, why=why)
    cell = r.emit("_CLOSURE_CELL", (owner,), operand=index)
    r.emit("_CHECK_STORE_CELL", (cell,))
    site.defer(("cell", key), "_STORE_CELL_CHECKED", (value, cell))
    site.cells[key] = value


@_handles(I.LOAD_ATTR)
def _load_attr(r: Recorder, frame: Frame, name: str) -> None:
    if iteration.made_dict_view(r, frame, name):  # (`for k, v in d.items()` in a loop)
        return
    if operator_methods.load_property(r, frame, name):  # (a property's getter, inlined)
        return
    obj = r.pop()
    if (
        obj.kind == Kind.LIST
        and name == "append"
        and type(frame.stack[-1]) is list
        and r.pc not in r.code.unfused_methods
    ):
        bound = r.emit("_BIND_APPEND", (obj,))
        r.bound_method_sites[bound.id] = r.pc
        r.push(bound)
        return
    if obj.kind == Kind.DICT and name == "get" and r.pc not in r.code.generic_dict_gets:
        bound = r.emit("_BIND_DICT_GET", (obj,))
        r.bound_dicts[bound.id] = obj
        r.bound_method_sites[bound.id] = r.pc
        r.push(bound)
        return
    if obj.kind == Kind.ARRAY:
        _array_attribute(r, frame, obj, name)
        return
    module = obj.const if obj.is_const else None
    if type(module) is not types.ModuleType:
        if obj.kind in (Kind.APPEND_METHOD, Kind.DICT_GET_METHOD):
            raise Abort(Reason.ATTRIBUTE, name=name, kind=obj.kind.short)
        loaded = attributes.load(r, obj, name, frame.stack[-1])  # (an instance's own attribute: no barrier)
        if loaded is None:
            loaded = generic.load_attr(r, obj, name, frame.stack[-1])  # (a method to call, a property run, ...)
        r.push(loaded)
        return
    namespace = module.__dict__
    if name not in namespace:
        raise Abort(Reason.MODULE_ATTRIBUTE, name=name, module=module.__name__)
    if namespace is r.globals and name in r.stored_globals:
        raise Abort(Reason.MODULE_ATTRIBUTE_STORED, name=name, module=module.__name__)
    value = namespace[name]
    r.emit("_GUARD_MODULE_ATTR", operand=ModuleAttr(module, name, value))
    r.push(r.const(value))


@_handles(I.STORE_ATTR)
def _store_attr(r: Recorder, frame: Frame, name: str) -> None:
    obj = r.pop()
    value = r.pop(stored=True)  # (an int past 64 bits: the int object, stored as it is)
    if not attributes.store(r, obj, value, name, frame.stack[-1]):  # (an instance's own attribute: no barrier)
        generic.store_attr(r, obj, value, name)
