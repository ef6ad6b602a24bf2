"""Lowerings of the generic object path (``jit.recorder.generic``): C-API calls on objects of any type.

Every operand goes to the C-API as a new reference held for the call's duration: a number boxed here (a
constant as its own object), a pointer with its count raised, so that Python code run by the call cannot free
an argument under it (CPython's own stack holds its operands the same way). A failed call (NULL, or -1) leaves
through the uop's exit with the exception still set (``Guard.RAISE``): the runtime re-raises it at the
instruction, and nothing is redone. ``_CHECK_BARRIER`` re-checks the guards hoisted to the trace's entry, as
the periodic check does after signal handlers ran.
"""

from __future__ import annotations

import sys

from llvmlite import ir

from codegen import abi, capi, python_epoch
from codegen.capi import I1, I32, PTR
from codegen.context import LowerContext
from codegen.lower.objects import _box, _load_at, _same_object, _still_alive, _type_is
from codegen.lower.table import LOWERINGS, _entry_alloca, _i64, lowers
from jit import arrays
from jit.frontend.operators import BinOp, CompareOp
from jit.kinds import EXACT_TYPES, Kind
from jit.trace import Uop, Value

_NULL = ir.Constant(PTR, None)

_NUMBER = {
    "ADD": "Add",
    "SUBTRACT": "Subtract",
    "MULTIPLY": "Multiply",
    "TRUE_DIVIDE": "TrueDivide",
    "FLOOR_DIVIDE": "FloorDivide",
    "REMAINDER": "Remainder",
    "POWER": "Power",
    "LSHIFT": "Lshift",
    "RSHIFT": "Rshift",
    "AND": "And",
    "OR": "Or",
    "XOR": "Xor",
    "MATRIX_MULTIPLY": "MatrixMultiply",
}
# Py_LT, Py_LE, Py_EQ, Py_NE, Py_GT, Py_GE
_RICH = {CompareOp.LT: 0, CompareOp.LE: 1, CompareOp.EQ: 2, CompareOp.NE: 3, CompareOp.GT: 4, CompareOp.GE: 5}


def _reference(ctx: LowerContext, v: Value, uop: Uop) -> ir.Value:
    """A new reference to the object CPython would have for v (NULL, with MemoryError set, if boxing failed)."""
    if v.kind.is_pointer:
        obj = ctx.value(v)
        ctx.incref(obj)
        return obj
    same = _same_object(ctx, v)
    if same is None and v.boxed is not None and _still_alive(ctx, v.boxed, uop):
        same = ctx.value(v.boxed)  # (`x in seen` of an int read from a list: that int, not a new one)
    if same is not None:
        ctx.incref(same)
        return same
    return _box(ctx, v.kind, ctx.value(v))


def _references(ctx: LowerContext, uop: Uop, values: tuple[Value, ...]) -> list[ir.Value]:
    """New references to values; leaves (raising MemoryError) if a box could not be made."""
    b = ctx.builder
    refs = [_reference(ctx, v, uop) for v in values]
    boxed = [ref for v, ref in zip(values, refs) if not v.kind.is_pointer and not v.is_const and v.kind != Kind.NONE]
    if boxed:
        ok: ir.Value = ir.Constant(I1, 1)
        for ref in boxed:
            ok = b.and_(ok, b.icmp_unsigned("!=", ref, _NULL))
        ctx.guard(ok, uop, before_exit=lambda: _release(ctx, refs, null_safe=True))
    return refs


def _release(ctx: LowerContext, refs: list[ir.Value], null_safe: bool = False) -> None:
    for ref in refs:
        if null_safe:
            ctx.capi("Py_DecRef", ref)
        else:
            ctx.decref(ref)


def _succeeds(ctx: LowerContext, uop: Uop, refs: list[ir.Value], name: str, *args: ir.Value) -> None:
    """The C-API call name(*args), which returns 0 where it succeeds, on the new references refs (released after
    it); leave with its exception where it fails."""
    status = ctx.capi(name, *args)
    _release(ctx, refs)
    ctx.guard(ctx.builder.icmp_signed("==", status, ir.Constant(I32, 0)), uop)


def _made(ctx: LowerContext, uop: Uop, obj: ir.Value) -> ir.Value:
    """Go on if a C-API call made an object, else leave with its exception."""
    ctx.guard(ctx.builder.icmp_unsigned("!=", obj, _NULL), uop)
    return obj


@lowers("_CALL_GENERIC")
def _call_generic(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    refs = _references(ctx, uop, uop.args)
    callable_, args = refs[0], refs[1:]
    array = _entry_alloca(ctx, ir.ArrayType(PTR, max(len(args), 1)))
    for index, arg in enumerate(args):
        b.store(arg, b.gep(array, [ir.Constant(I32, 0), ir.Constant(I32, index)], inbounds=True))
    names = uop.operand
    callee = uop.args[0]
    if callee.is_const and callee.const is str and len(args) == 1 and not names:
        # `str(x)`: as CPython's own specialization of it does (str has no vectorcall in 3.11: no args tuple)
        result = ctx.capi("PyObject_Str", args[0])
        _release(ctx, refs)
        return _made(ctx, uop, result)
    kwnames = ctx.pointer(names) if names else _NULL
    positional = len(args) - (len(names) if names else 0)
    first = b.bitcast(array, PTR.as_pointer())
    result = ctx.capi("PyObject_Vectorcall", callable_, first, _i64(positional), kwnames)
    _release(ctx, refs)
    return _made(ctx, uop, result)


@lowers("_GET_ITER_GENERIC")
def _get_iter_generic(ctx: LowerContext, uop: Uop) -> ir.Value:
    (iterable,) = refs = _references(ctx, uop, uop.args)
    iterator = ctx.capi("PyObject_GetIter", iterable)
    _release(ctx, refs)
    return _made(ctx, uop, iterator)


@lowers("_ITER_NEXT_GENERIC")
def _iter_next_generic(ctx: LowerContext, uop: Uop) -> ir.Value:
    """PyIter_Next: an item, or NULL with no exception where the iterator has none (its StopIteration cleared,
    as CPython's FOR_ITER does), or NULL with the exception it raised: then the trace leaves, re-raising."""
    b = ctx.builder
    (iterator,) = refs = _references(ctx, uop, uop.args)
    item = ctx.capi("PyIter_Next", iterator)
    _release(ctx, refs)
    raised = b.icmp_unsigned("!=", ctx.capi("PyErr_Occurred"), _NULL)
    ctx.guard(b.or_(b.icmp_unsigned("!=", item, _NULL), b.not_(raised)), uop)
    return item


@lowers("_GUARD_ITER_ITEM")
def _guard_iter_item(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(ctx.builder.icmp_unsigned("!=", ctx.value(uop.args[0]), _NULL), uop)


@lowers("_GUARD_ITER_DONE")
def _guard_iter_done(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(ctx.builder.icmp_unsigned("==", ctx.value(uop.args[0]), _NULL), uop)


@lowers("_CALL_METHOD_GENERIC", "_CALL_METHOD_DESCRIPTOR")
def _call_method(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    refs = _references(ctx, uop, uop.args)  # (obj first: the method's self)
    array = _entry_alloca(ctx, ir.ArrayType(PTR, len(refs)))
    for index, ref in enumerate(refs):
        b.store(ref, b.gep(array, [ir.Constant(I32, 0), ir.Constant(I32, index)], inbounds=True))
    name, *names = uop.operand
    kwnames = ctx.pointer(tuple(names)) if names else _NULL
    positional = len(refs) - len(names)
    first = b.bitcast(array, PTR.as_pointer())
    if uop.name == "_CALL_METHOD_DESCRIPTOR":  # (name: the descriptor)
        result = ctx.capi("PyObject_Vectorcall", ctx.pointer(name), first, _i64(positional), kwnames)
    else:
        result = ctx.capi("PyObject_VectorcallMethod", ctx.pointer(sys.intern(name)), first, _i64(positional), kwnames)
    _release(ctx, refs)
    return _made(ctx, uop, result)


#: the C-API call that makes each empty container ``_NEW_EMPTY`` makes, and its arguments
_EMPTY = {
    list: ("PyList_New", (_i64(0),)),
    tuple: ("PyTuple_New", (_i64(0),)),
    dict: ("PyDict_New", ()),
    set: ("PySet_New", (_NULL,)),
    frozenset: ("PyFrozenSet_New", (_NULL,)),
}


@lowers("_NEW_EMPTY")
def _new_empty(ctx: LowerContext, uop: Uop) -> ir.Value:
    name, args = _EMPTY[uop.operand]
    made = ctx.capi(name, *args)
    ctx.guard(ctx.builder.icmp_unsigned("!=", made, _NULL), uop, before_exit=lambda: ctx.capi("PyErr_Clear"))
    return made


#: the C-API setters of the parts of a function ``_MAKE_FUNCTION`` sets where given (each takes a new reference)
_FUNCTION_PARTS = ("PyFunction_SetDefaults", "PyFunction_SetKwDefaults", "PyFunction_SetAnnotations")


@lowers("_MAKE_FUNCTION")
def _make_function(ctx: LowerContext, uop: Uop) -> ir.Value:
    """CPython's MAKE_FUNCTION: PyFunction_New of the code object and globals (its name, qualified name,
    docstring and module from them), its closure a new tuple of a new cell for each value (the cells given as they
    are: the def's own, a cell variable's), then its defaults, keyword-only defaults and annotations where given (the setters cannot fail on a
    tuple or dict). Where an allocation fails, everything made is released, the exception cleared, and the trace
    leaves (the interpreter makes the function again)."""
    b = ctx.builder
    maker = uop.operand
    parts, values = uop.args[:3], uop.args[3:]
    refs = [_reference(ctx, v, uop) for v in values]  # (new references: numbers boxed)
    function = ctx.capi("PyFunction_New", ctx.pointer(maker.code), ctx.pointer(maker.globals))
    closure = ctx.capi("PyTuple_New", _i64(len(refs))) if refs else None
    cells = [ref if index in maker.cells else ctx.capi("PyCell_New", ref) for index, ref in enumerate(refs)]
    made = [function, *([closure] if closure is not None else []), *cells]
    ok: ir.Value = ir.Constant(I1, 1)
    for obj in [*made, *refs]:
        ok = b.and_(ok, b.icmp_unsigned("!=", obj, _NULL))
    own_cells = [cell for index, cell in enumerate(cells) if index not in maker.cells]

    def release() -> None:
        for obj in [*refs, *own_cells, *made[: 2 if closure is not None else 1]]:
            ctx.capi("Py_DecRef", obj)  # (NULL-safe; the tuple's items are all NULL yet)
        ctx.capi("PyErr_Clear")

    ctx.guard(ok, uop, before_exit=release)
    if closure is not None:
        items = b.bitcast(b.gep(closure, [_i64(abi.TUPLE_ITEMS)], inbounds=True), PTR.as_pointer())
        for index, cell in enumerate(cells):
            b.store(cell, b.gep(items, [_i64(index)], inbounds=True))  # (the tuple takes the cell's reference)
        for index, ref in enumerate(refs):
            if index not in maker.cells:
                ctx.decref(ref)  # (the cell holds its own)
        ctx.capi("PyFunction_SetClosure", function, closure)
        ctx.decref(closure)
    for setter, part in zip(_FUNCTION_PARTS, parts):
        if part.kind != Kind.NONE:
            ctx.capi(setter, function, ctx.value(part))
    return function


@lowers("_CALL_METHOD_PURE")
def _call_method_pure(ctx: LowerContext, uop: Uop) -> ir.Value:
    """A str method that runs no Python code (jit.recorder.pure_methods), called as _CALL_METHOD_DESCRIPTOR calls
    its descriptor; where boxing an argument or the call fails, the exception is cleared and the trace leaves
    (before the method's binding: the interpreter makes the call again and raises what CPython raises)."""
    b = ctx.builder
    refs = [_reference(ctx, v, uop) for v in uop.args]  # (obj first: the method's self)
    array = _entry_alloca(ctx, ir.ArrayType(PTR, len(refs)))
    for index, ref in enumerate(refs):
        b.store(ref, b.gep(array, [ir.Constant(I32, 0), ir.Constant(I32, index)], inbounds=True))
    descriptor, *names = uop.operand
    kwnames = ctx.pointer(tuple(names)) if names else _NULL
    boxed = [ref for v, ref in zip(uop.args, refs) if not v.kind.is_pointer and not v.is_const and v.kind != Kind.NONE]
    first = b.bitcast(array, PTR.as_pointer())
    if boxed:  # (a box that could not be made: no call)
        ok: ir.Value = ir.Constant(I1, 1)
        for ref in boxed:
            ok = b.and_(ok, b.icmp_unsigned("!=", ref, _NULL))

        def unboxed() -> None:
            _release(ctx, refs, null_safe=True)
            ctx.capi("PyErr_Clear")

        ctx.guard(ok, uop, before_exit=unboxed)
    result = _direct_call(ctx, descriptor, refs, array) if not names else None
    if result is None:
        result = ctx.capi("PyObject_Vectorcall", ctx.pointer(descriptor), first, _i64(len(refs) - len(names)), kwnames)
    _release(ctx, refs)
    ctx.guard(b.icmp_unsigned("!=", result, _NULL), uop, before_exit=lambda: ctx.capi("PyErr_Clear"))
    return result


def _direct_call(ctx: LowerContext, descriptor: object, refs: list[ir.Value], array: ir.Value) -> ir.Value | None:
    """descriptor's C function called on refs (self first, positional arguments only) in its own convention, as
    CPython's specialized CALL of a method descriptor calls it (the receiver is an exact str: no type check is
    due), where it is METH_NOARGS, METH_O or METH_FASTCALL (with or without METH_KEYWORDS) and takes that many
    arguments; else None (PyObject_Vectorcall, whose checks raise CPython's TypeError)."""
    flags = abi.method_flags(descriptor)
    if flags is None:
        return None
    b = ctx.builder
    convention = flags & (abi.METH_VARARGS | abi.METH_KEYWORDS | abi.METH_NOARGS | abi.METH_O | abi.METH_FASTCALL)
    self_, args = refs[0], refs[1:]
    if convention == abi.METH_NOARGS and not args:
        params, values = [PTR, PTR], [self_, _NULL]
    elif convention == abi.METH_O and len(args) == 1:
        params, values = [PTR, PTR], [self_, args[0]]
    elif convention in (abi.METH_FASTCALL, abi.METH_FASTCALL | abi.METH_KEYWORDS):
        rest = b.gep(array, [ir.Constant(I32, 0), ir.Constant(I32, 1)], inbounds=True)
        params, values = [PTR, PTR.as_pointer(), ir.IntType(64)], [self_, rest, _i64(len(args))]
        if convention & abi.METH_KEYWORDS:
            params.append(PTR)
            values.append(_NULL)
    else:
        return None
    definition = _load_at(ctx, ctx.pointer(descriptor), abi.DESCRIPTOR_METHOD, PTR)
    function = _load_at(ctx, definition, abi.METHOD_DEF_FUNCTION, ir.FunctionType(PTR, params).as_pointer())
    return b.call(function, values)


@lowers("_BINARY_SUBSCR_STR", "_LIST_SLICE", "_TUPLE_SLICE")
def _subscript_in_c(ctx: LowerContext, uop: Uop) -> ir.Value:
    """An exact str's item or slice, an exact list's or tuple's slice (jit.recorder.generic: no Python code runs);
    leaves, the exception cleared, where boxing the index or the subscript fails (the interpreter makes it again
    and raises CPython's error)."""
    b = ctx.builder
    refs = [_reference(ctx, v, uop) for v in uop.args]
    index = uop.args[1]
    if not index.kind.is_pointer and not index.is_const:  # (an int boxed: a box that could not be made)

        def unboxed() -> None:
            _release(ctx, refs, null_safe=True)
            ctx.capi("PyErr_Clear")

        ctx.guard(b.icmp_unsigned("!=", refs[1], _NULL), uop, before_exit=unboxed)
    result = ctx.capi("PyObject_GetItem", *refs)
    _release(ctx, refs)
    ctx.guard(b.icmp_unsigned("!=", result, _NULL), uop, before_exit=lambda: ctx.capi("PyErr_Clear"))
    return result


@lowers("_LOAD_ATTR_GENERIC")
def _load_attr(ctx: LowerContext, uop: Uop) -> ir.Value:
    (obj,) = _references(ctx, uop, uop.args)
    result = ctx.capi("PyObject_GetAttr", obj, ctx.pointer(sys.intern(uop.operand)))
    _release(ctx, [obj])
    return _made(ctx, uop, result)


@lowers("_STORE_ATTR_GENERIC")
def _store_attr(ctx: LowerContext, uop: Uop) -> None:
    refs = _references(ctx, uop, uop.args)
    _succeeds(ctx, uop, refs, "PyObject_SetAttr", refs[0], ctx.pointer(sys.intern(uop.operand)), refs[1])


@lowers("_STORE_GLOBAL_GENERIC")
def _store_global(ctx: LowerContext, uop: Uop) -> None:
    """globals[name] = value, whatever it replaces: the dict takes its own reference, and releases the old value's
    (whose freeing may run a finalizer: a barrier, the hoisted guards checked again after it)."""
    refs = _references(ctx, uop, uop.args)
    _succeeds(ctx, uop, refs, "PyDict_SetItem", ctx.pointer(ctx.globals), ctx.pointer(uop.operand.name), refs[0])


@lowers("_BINARY_SUBSCR_GENERIC")
def _subscript(ctx: LowerContext, uop: Uop) -> ir.Value:
    refs = _references(ctx, uop, uop.args)
    result = ctx.capi("PyObject_GetItem", *refs)
    _release(ctx, refs)
    return _made(ctx, uop, result)


@lowers("_STORE_SUBSCR_GENERIC")
def _store_subscript(ctx: LowerContext, uop: Uop) -> None:
    value, container, key = refs = _references(ctx, uop, uop.args)
    _succeeds(ctx, uop, refs, "PyObject_SetItem", container, key, value)


@lowers("_DELETE_SUBSCR_GENERIC")
def _delete_subscript(ctx: LowerContext, uop: Uop) -> None:
    refs = _references(ctx, uop, uop.args)
    _succeeds(ctx, uop, refs, "PyObject_DelItem", *refs)


@lowers("_DELETE_ATTR_GENERIC")
def _delete_attr(ctx: LowerContext, uop: Uop) -> None:
    refs = _references(ctx, uop, uop.args)
    _succeeds(ctx, uop, refs, "PyObject_SetAttr", refs[0], ctx.pointer(sys.intern(uop.operand)), _NULL)


@lowers("_BUILD_SLICE")
def _build_slice(ctx: LowerContext, uop: Uop) -> ir.Value:
    refs = _references(ctx, uop, uop.args)
    step = refs[2] if len(refs) == 3 else _NULL
    result = ctx.capi("PySlice_New", refs[0], refs[1], step)
    _release(ctx, refs)
    return _made(ctx, uop, result)


def _filled(ctx: LowerContext, uop: Uop, make: str, add: str, group: int, clear: bool = False) -> ir.Value:
    """A new set or dict (make) filled by the C-API function add with the inputs, group at a time; leaves with
    the error if anything failed (releasing what it made and holds), or without it where clear."""
    b = ctx.builder
    refs = _references(ctx, uop, uop.args)
    made = ctx.capi(make, _NULL) if make == "PySet_New" else ctx.capi(make)

    def released() -> None:
        _release(ctx, refs)
        if clear:
            ctx.capi("PyErr_Clear")

    ctx.guard(b.icmp_unsigned("!=", made, _NULL), uop, before_exit=released)

    def failed() -> None:
        ctx.decref(made)
        released()

    for start in range(0, len(refs), group):
        status = ctx.capi(add, made, *refs[start : start + group])
        ctx.guard(b.icmp_signed("==", status, ir.Constant(I32, 0)), uop, before_exit=failed)
    _release(ctx, refs)
    return made


@lowers("_BUILD_SET")
def _build_set(ctx: LowerContext, uop: Uop) -> ir.Value:
    return _filled(ctx, uop, "PySet_New", "PySet_Add", 1)


@lowers("_BUILD_MAP")
def _build_map(ctx: LowerContext, uop: Uop) -> ir.Value:
    return _filled(ctx, uop, "PyDict_New", "PyDict_SetItem", 2)


@lowers("_BUILD_MAP_CONST_KEYS")
def _build_map_const_keys(ctx: LowerContext, uop: Uop) -> ir.Value:
    """`{"name": n, "age": a}`: a dict display whose keys are distinct str or int constants, made as _BUILD_MAP makes
    one (no Python code runs: a str's or int's hash and equality are C code, and no value is replaced); where memory runs out,
    the exception is cleared and the trace leaves before the display, which the interpreter makes again."""
    return _filled(ctx, uop, "PyDict_New", "PyDict_SetItem", 2, clear=True)


_CONVERSIONS = {"s": "PyObject_Str", "r": "PyObject_Repr", "a": "PyObject_ASCII"}


@lowers("_FORMAT_VALUE")
def _format_value(ctx: LowerContext, uop: Uop) -> ir.Value:
    """CPython's FORMAT_VALUE: the conversion, then PyObject_Format (which returns a str as it is when there
    is no spec)."""
    refs = _references(ctx, uop, uop.args)
    value = refs[0]
    if uop.operand:
        converted = ctx.capi(_CONVERSIONS[uop.operand], value)
        ctx.guard(ctx.builder.icmp_unsigned("!=", converted, _NULL), uop, before_exit=lambda: _release(ctx, refs))
        ctx.decref(value)
        refs[0] = value = converted
    result = ctx.capi("PyObject_Format", value, refs[1] if len(refs) == 2 else _NULL)
    _release(ctx, refs)
    return _made(ctx, uop, result)


@lowers("_FORMAT_NUMBER")
def _format_number(ctx: LowerContext, uop: Uop) -> ir.Value:
    refs = _references(ctx, uop, uop.args)  # (the number's own object where the trace read one: no box made)
    if len(refs) == 2:
        result = ctx.capi("PyObject_Format", refs[0], refs[1])
    else:
        result = ctx.capi("PyObject_Str", refs[0])
    _release(ctx, refs)
    return _made(ctx, uop, result)


@lowers("_BUILD_STRING")
def _build_string(ctx: LowerContext, uop: Uop) -> ir.Value:
    """The parts joined by '': from an array of them, as CPython's BUILD_STRING (``capi.JOIN_ARRAY``), else a
    tuple of them (borrowed: the tuple is freed before anything else runs) given to PyUnicode_Join."""
    b = ctx.builder
    parts = [ctx.value(v) for v in uop.args]
    if capi.HAS_JOIN_ARRAY:
        array = _entry_alloca(ctx, ir.ArrayType(PTR, len(parts)))
        for index, part in enumerate(parts):
            b.store(part, b.gep(array, [_i64(0), _i64(index)], inbounds=True))
        first = b.gep(array, [_i64(0), _i64(0)], inbounds=True)
        return _made(ctx, uop, ctx.capi(capi.JOIN_ARRAY, ctx.pointer(""), first, _i64(len(parts))))
    joined = ctx.capi("PyTuple_New", _i64(len(parts)))
    ctx.guard(b.icmp_unsigned("!=", joined, _NULL), uop)
    items = b.bitcast(b.gep(joined, [_i64(abi.TUPLE_ITEMS)], inbounds=True), PTR.as_pointer())
    for index, part in enumerate(parts):
        ctx.incref(part)
        b.store(part, b.gep(items, [_i64(index)], inbounds=True))
    result = ctx.capi("PyUnicode_Join", ctx.pointer(""), joined)
    ctx.decref(joined)
    return _made(ctx, uop, result)


@lowers("_BINARY_OP_GENERIC")
def _binary_op(ctx: LowerContext, uop: Uop) -> ir.Value:
    op: BinOp = uop.operand
    refs = _references(ctx, uop, uop.args)
    name = ("PyNumber_InPlace" if op.inplace else "PyNumber_") + _NUMBER[op.uop_name]
    extra = [ctx.pointer(None)] if op.uop_name == "POWER" else []  # (the modulus of pow(a, b, None))
    result = ctx.capi(name, *refs, *extra)
    _release(ctx, refs)
    return _made(ctx, uop, result)


@lowers("_COMPARE_OP_GENERIC")
def _compare_op(ctx: LowerContext, uop: Uop) -> ir.Value:
    refs = _references(ctx, uop, uop.args)
    result = ctx.capi("PyObject_RichCompare", *refs, ir.Constant(I32, _RICH[uop.operand]))
    _release(ctx, refs)
    return _made(ctx, uop, result)


#: the C-API function of each unary operator on objects
_UNARY = {"-": "PyNumber_Negative", "+": "PyNumber_Positive", "~": "PyNumber_Invert"}


@lowers("_UNARY_OP_GENERIC")
def _unary_op(ctx: LowerContext, uop: Uop) -> ir.Value:
    refs = _references(ctx, uop, uop.args)
    result = ctx.capi(_UNARY[uop.operand.symbol], *refs)
    _release(ctx, refs)
    return _made(ctx, uop, result)


@lowers("_CONTAINS_GENERIC")
def _contains(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    refs = _references(ctx, uop, uop.args)
    found = ctx.capi("PySequence_Contains", *refs)
    _release(ctx, refs)
    ctx.guard(b.icmp_signed(">=", found, ir.Constant(I32, 0)), uop)
    return b.icmp_signed("!=", found, ir.Constant(I32, 0))


@lowers("_CONTAINS_SET")
def _contains_set(ctx: LowerContext, uop: Uop) -> ir.Value:
    """`item in s` for an exact set and an item whose hash and equality are C code: PySet_Contains cannot fail
    (but a box made for the item could: then it leaves, raising MemoryError, before anything happened)."""
    refs = _references(ctx, uop, uop.args)
    found = ctx.capi("PySet_Contains", *refs)
    _release(ctx, refs)
    ctx.guard(ctx.builder.icmp_signed(">=", found, ir.Constant(I32, 0)), uop)
    return ctx.builder.icmp_signed(">", found, ir.Constant(I32, 0))


@lowers("_SET_ADD")
def _set_add(ctx: LowerContext, uop: Uop) -> None:
    refs = _references(ctx, uop, uop.args)
    _succeeds(ctx, uop, refs, "PySet_Add", *refs)


@lowers("_TO_BOOL_OBJECT")
def _to_bool(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    truth = ctx.capi("PyObject_IsTrue", ctx.value(uop.args[0]))
    ctx.guard(b.icmp_signed(">=", truth, ir.Constant(I32, 0)), uop, before_exit=lambda: ctx.capi("PyErr_Clear"))
    return b.icmp_signed("!=", truth, ir.Constant(I32, 0))


@lowers("_TO_BOOL_GENERIC")
def _to_bool_generic(ctx: LowerContext, uop: Uop) -> ir.Value:
    """The user's __bool__ (or __len__) runs: the object is held for the call; an exception it raises (or
    CPython's TypeError for a result that is not a bool) leaves with it set, re-raised at the instruction."""
    b = ctx.builder
    refs = _references(ctx, uop, uop.args)
    truth = ctx.capi("PyObject_IsTrue", refs[0])
    _release(ctx, refs)
    ctx.guard(b.icmp_signed(">=", truth, ir.Constant(I32, 0)), uop)
    return b.icmp_signed("!=", truth, ir.Constant(I32, 0))


@lowers("_KEEP_ALIVE")
def _keep_alive(ctx: LowerContext, uop: Uop) -> ir.Value:
    obj = ctx.value(uop.args[0])
    ctx.incref(obj)
    return obj


@lowers("_GUARD_CLASS")
def _guard_class(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(_type_is(ctx, ctx.value(uop.args[0]), uop.operand), uop)


@lowers("_GUARD_TYPE_OWNED")
def _guard_type_owned(ctx: LowerContext, uop: Uop) -> ir.Value:
    obj = ctx.value(uop.args[0])
    expected = arrays.numpy_module().ndarray if uop.operand == Kind.ARRAY else EXACT_TYPES[uop.operand]
    ctx.guard(_type_is(ctx, obj, expected), uop)
    ctx.incref(obj)  # (the result's own reference: the object's is released after its last use)
    return obj


@lowers("_CHECK_BARRIER")
def _check_barrier(ctx: LowerContext, uop: Uop) -> None:
    """Python code ran: every guard hoisted to the trace's entry again (a global rebound, an array's header
    changed), and every value read there (an array's data address) the same, else leave here. (A guard on a
    global or a module attribute costs two loads while its dicts are unchanged: codegen.lower.global_names.)"""
    python_epoch.advance(ctx.builder, ctx.module)  # (trees called later from a loop check their guards again)
    for guard in ctx.trace.hoisted:
        _check_again(ctx, guard, uop)


def _check_again(ctx: LowerContext, hoisted: Uop, uop: Uop) -> None:
    """The hoisted guard (or value read at the entry) again, leaving through uop's exit."""
    again = Uop(hoisted.op, hoisted.args, hoisted.out, hoisted.operand, hoisted.pc, hoisted.line, uop.exit)
    if hoisted.op.is_guard:
        LOWERINGS[hoisted.name](ctx, again)
    else:
        value = LOWERINGS[hoisted.name](ctx, again)
        assert hoisted.out is not None and value is not None
        ctx.guard(ctx.builder.icmp_unsigned("==", value, ctx.values[hoisted.out.id]), uop)
