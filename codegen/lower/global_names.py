"""Lowerings of global-name guards, loads and stores (through the globals dict)."""

from __future__ import annotations

import types

from llvmlite import ir

from codegen import abi
from codegen.capi import I1, I32, I64, PTR
from codegen.context import LowerContext
from codegen.lower.objects import _load_at, _store_boxed, _type_is
from codegen.lower.table import (
    _args,
    lowers,
)
from jit.trace import Uop, Value


def _dict_entry_is(ctx: LowerContext, namespace: dict, name: str, expected: object, fallback: dict | None) -> ir.Value:
    """Is namespace[name] (else fallback[name]) expected? Where dict versions can be read (``abi.DICT_VERSION``),
    a guard remembers, in a word of its own, the versions of the dicts at which it last held: while they are the
    same, it holds without looking the name up (a barrier's re-check of the hoisted guards, a tree entered again
    and again, cost two loads per dict), as CPython's own caches of globals do."""
    if not abi.DICT_VERSION_OK:
        return _looked_up_is(ctx, namespace, name, expected, fallback)
    b = ctx.builder
    dicts = [namespace] if fallback is None else [namespace, fallback]
    count = ctx.__dict__.setdefault("_dict_guard_words", [0])
    words = []
    for _ in dicts:
        word = ir.GlobalVariable(ctx.module, I64, f"{ctx.local_prefix}_seen_version{count[0]}")
        word.initializer = ir.Constant(I64, -1)  # (never a version)
        count[0] += 1
        words.append(word)
    versions = []
    for mapping in dicts:
        address = b.add(b.ptrtoint(ctx.pointer(mapping), I64), ir.Constant(I64, abi.DICT_VERSION))
        versions.append(b.load(b.inttoptr(address, I64.as_pointer())))
    same: ir.Value = ir.Constant(I1, 1)
    for word, version in zip(words, versions):
        same = b.and_(same, b.icmp_unsigned("==", b.load(word), version))
    before = b.block
    slow = b.append_basic_block("dict_guard_lookup")
    join = b.append_basic_block("dict_guard_done")
    b.cbranch(same, join, slow)
    b.position_at_end(slow)
    holds = _looked_up_is(ctx, namespace, name, expected, fallback)
    for word, version in zip(words, versions):
        b.store(b.select(holds, version, ir.Constant(I64, -1)), word)
    slow_end = b.block
    b.branch(join)
    b.position_at_end(join)
    result = b.phi(I1)
    result.add_incoming(ir.Constant(I1, 1), before)
    result.add_incoming(holds, slow_end)
    return result


def _looked_up_is(ctx: LowerContext, namespace: dict, name: str, expected: object, fallback: dict | None) -> ir.Value:
    b = ctx.builder
    key = ctx.pointer(name)
    found = ctx.capi("PyDict_GetItem", ctx.pointer(namespace), key)
    if fallback is not None:
        missing = b.icmp_unsigned("==", found, ir.Constant(PTR, None))
        in_fallback = ctx.capi("PyDict_GetItem", ctx.pointer(fallback), key)
        found = b.select(missing, in_fallback, found)
    return b.icmp_unsigned("==", found, ctx.pointer(expected))


@lowers("_GUARD_GLOBAL", "_CHECK_GLOBAL")
def _guard_global(ctx: LowerContext, uop: Uop) -> None:
    binding = uop.operand
    namespace = ctx.globals if binding.namespace is None else binding.namespace
    builtins = ctx.builtins if binding.builtins is None else binding.builtins
    ctx.guard(_dict_entry_is(ctx, namespace, binding.name, binding.value, builtins), uop)


@lowers("_GUARD_MODULE_ATTR")
def _guard_module_attr(ctx: LowerContext, uop: Uop) -> None:
    attr = uop.operand
    ctx.guard(_dict_entry_is(ctx, attr.module.__dict__, attr.name, attr.value, None), uop)


@lowers("_LOAD_GLOBAL_VALUE")
def _load_global_value(ctx: LowerContext, uop: Uop) -> ir.Value:
    found = ctx.capi("PyDict_GetItem", ctx.pointer(ctx.globals), ctx.pointer(uop.operand.name))
    ctx.guard(ctx.builder.icmp_unsigned("!=", found, ir.Constant(PTR, None)), uop)
    return found


@lowers("_GUARD_GLOBAL_NUMBER")
def _guard_global_number(ctx: LowerContext, uop: Uop) -> None:
    b = ctx.builder
    found = ctx.capi("PyDict_GetItem", ctx.pointer(ctx.globals), ctx.pointer(uop.operand.name))
    missing = b.icmp_unsigned("==", found, ir.Constant(PTR, None))
    found_type = _load_at(ctx, b.select(missing, ctx.pointer(None), found), abi.OB_TYPE, PTR)
    number = b.icmp_unsigned("==", found_type, ctx.pointer(int))
    for cls in (float, bool):
        number = b.or_(number, b.icmp_unsigned("==", found_type, ctx.pointer(cls)))
    ctx.guard(number, uop)


@lowers("_STORE_GLOBAL", "_STORE_GLOBAL_CHECKED")
def _store_global(ctx: LowerContext, uop: Uop) -> None:
    """globals[name] = the value, boxed (a number, None or a str: any other object is stored by a barrier,
    ``_STORE_GLOBAL_GENERIC``). The value it replaces must free without running Python code (an int, float,
    bool, None or str), else the interpreter makes the store (checked here, unless the trace read a number there
    or stored a number, None or a str since anything could change it, or an inlined call checked it: then it
    leaves only where memory runs out, with the MemoryError)."""
    namespace, key = ctx.pointer(ctx.globals), ctx.pointer(uop.operand.name)
    checked = uop.name == "_STORE_GLOBAL_CHECKED"
    if not checked and not uop.operand.over_number:
        _guard_entry_drops_plainly(ctx, uop, namespace, key, strs=True)
    (value,) = _args(ctx, uop)
    _dict_set(ctx, uop, namespace, key, uop.args[0], value, raising=checked)


@lowers("_CHECK_STORE_GLOBAL")
def _check_store_global(ctx: LowerContext, uop: Uop) -> None:
    """The check of an inlined call's store of a global (``jit.inline``), where it is: the store is made at the
    call's return (_STORE_GLOBAL_CHECKED), with nothing that runs Python code in between, so the name is still
    unbound or bound to a number or None there (an earlier store of the call put a number or None there too)."""
    _guard_entry_drops_plainly(ctx, uop, ctx.pointer(ctx.globals), ctx.pointer(uop.operand.name))


@lowers("_DELETE_GLOBAL")
def _delete_global(ctx: LowerContext, uop: Uop) -> None:
    """del globals[name], where it holds a number or None: freeing it runs no Python code. A missing name
    leaves (the interpreter raises CPython's NameError there), as does any other value (whose freeing could)."""
    b = ctx.builder
    namespace, key = ctx.pointer(ctx.globals), ctx.pointer(uop.operand.name)
    present = b.icmp_unsigned("!=", ctx.capi("PyDict_GetItem", namespace, key), ir.Constant(PTR, None))
    ctx.guard(present, uop)
    _guard_entry_drops_plainly(ctx, uop, namespace, key)
    status = ctx.capi("PyDict_DelItem", namespace, key)  # (cannot fail: the key is there, a str)
    ctx.guard(b.icmp_signed("==", status, ir.Constant(I32, 0)), uop, before_exit=lambda: ctx.capi("PyErr_Clear"))


def _guard_entry_drops_plainly(
    ctx: LowerContext, uop: Uop, mapping: ir.Value, key: ir.Value, strs: bool = False, old: ir.Value | None = None
) -> None:
    """Leave unless mapping[key] is missing or holds a number or None (or, strs, a str): replacing it then runs no
    Python code. (A str only where the recorder kept the trace's borrowed pointers alive before the uop: the
    dict's reference may have been the str's last.) old: mapping[key] (borrowed, NULL if missing) where the
    caller looked it up already."""
    b = ctx.builder
    if old is None:
        old = ctx.capi("PyDict_GetItem", mapping, key)
    missing = b.icmp_unsigned("==", old, ir.Constant(PTR, None))
    old_type = _load_at(ctx, b.select(missing, ctx.pointer(None), old), abi.OB_TYPE, PTR)
    plain = missing
    for cls in (int, float, bool, type(None), *((str,) if strs else ())):
        plain = b.or_(plain, b.icmp_unsigned("==", old_type, ctx.pointer(cls)))
    ctx.guard(plain, uop)


def _dict_set(
    ctx: LowerContext, uop: Uop, mapping: ir.Value, key: ir.Value, v: Value, native: ir.Value, raising: bool = False
) -> None:
    """mapping[key] = v (native: its lowered value), boxed if it is a number; leave if that fails (raising: with
    the MemoryError, else without it, for the interpreter to make the store)."""
    _store_boxed(ctx, uop, v, native, lambda new: ctx.capi("PyDict_SetItem", mapping, key, new), raising)


def _field(ctx: LowerContext, obj: ir.Value, in_place: bool, offset: int, getter: str) -> ir.Value:
    """A pointer field of a function, cell or bound method, borrowed: read at offset where in_place (its layout
    checked in codegen.abi), else through the C-API's getter."""
    return _load_at(ctx, obj, offset, PTR) if in_place else ctx.capi(getter, obj)


@lowers("_GUARD_CALLEE")
def _guard_callee(ctx: LowerContext, uop: Uop) -> None:
    callee = uop.operand
    b = ctx.builder
    function = ctx.pointer(callee.function)
    code = _field(ctx, function, abi.FUNCTIONS_OK, abi.FUNCTION_CODE, "PyFunction_GetCode")
    defaults = _field(ctx, function, abi.FUNCTIONS_OK, abi.FUNCTION_DEFAULTS, "PyFunction_GetDefaults")
    expected = ctx.pointer(callee.defaults) if callee.defaults is not None else ir.Constant(PTR, None)
    same = b.and_(b.icmp_unsigned("==", code, ctx.pointer(callee.code)), b.icmp_unsigned("==", defaults, expected))
    ctx.guard(same, uop)


@lowers("_GUARD_CALLEE_VALUE")
def _guard_callee_value(ctx: LowerContext, uop: Uop) -> None:
    """A function called through a variable (a helper defined in the function, or passed as an argument), whose
    body the trace inlines: any function object with the recorded one's code and globals runs that body (a
    ``def`` run again makes a new function object with the same code), and the defaults are checked only where
    the call takes some. A builtin function (code None), whose uops the trace has, or the class a method's class
    cell holds (``jit.recorder.super_calls``): that very object."""
    callee = uop.operand
    b = ctx.builder
    function = ctx.value(uop.args[0])
    if callee.code is None:  # (a builtin function or a class: that very one)
        ctx.guard(b.icmp_unsigned("==", function, ctx.pointer(callee.function)), uop)
        return
    ctx.guard(_type_is(ctx, function, types.FunctionType), uop)  # (only then are the fields below a function's)
    code = _field(ctx, function, abi.FUNCTIONS_OK, abi.FUNCTION_CODE, "PyFunction_GetCode")
    namespace = _field(ctx, function, abi.FUNCTIONS_OK, abi.FUNCTION_GLOBALS, "PyFunction_GetGlobals")
    same = b.and_(
        b.icmp_unsigned("==", code, ctx.pointer(callee.code)),
        b.icmp_unsigned("==", namespace, ctx.pointer(callee.function.__globals__)),
    )
    if callee.defaults is not None:
        defaults = _field(ctx, function, abi.FUNCTIONS_OK, abi.FUNCTION_DEFAULTS, "PyFunction_GetDefaults")
        same = b.and_(same, b.icmp_unsigned("==", defaults, ctx.pointer(callee.defaults)))
    ctx.guard(same, uop)


@lowers("_LOAD_FREE")
def _load_free(ctx: LowerContext, uop: Uop) -> ir.Value:
    """What cell uop.operand of the closure holds (the function's code is guarded, so it has that cell), borrowed:
    the cell keeps it alive, and only Python code, a barrier, can change the cell. Empty: leave (the interpreter
    makes the call, which raises CPython's NameError)."""
    b = ctx.builder
    closure = _field(ctx, ctx.value(uop.args[0]), abi.FUNCTIONS_OK, abi.FUNCTION_CLOSURE, "PyFunction_GetClosure")
    cell = _load_at(ctx, closure, abi.TUPLE_ITEMS + abi.WORD * uop.operand, PTR)
    if abi.FUNCTIONS_OK:
        value = _load_at(ctx, cell, abi.CELL_CONTENTS, PTR)
    else:  # (a new reference, given back at once: the cell keeps its own)
        value = ctx.capi("PyCell_Get", cell)
        ctx.capi("Py_DecRef", value)
    ctx.guard(b.icmp_unsigned("!=", value, ir.Constant(PTR, None)), uop)
    return value


@lowers("_METHOD_FUNCTION", "_METHOD_SELF")
def _method_part(ctx: LowerContext, uop: Uop) -> ir.Value:
    """A bound method's function or receiver (its class is guarded before), borrowed: the method holds both."""
    method = ctx.value(uop.args[0])
    if uop.name == "_METHOD_FUNCTION":
        return _field(ctx, method, abi.METHODS_OK, abi.METHOD_FUNCTION, "PyMethod_Function")
    return _field(ctx, method, abi.METHODS_OK, abi.METHOD_SELF, "PyMethod_Self")
