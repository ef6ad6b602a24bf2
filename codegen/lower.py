"""The lowering of every uop to LLVM IR: one entry per uop in ``LOWERINGS``.

Each lowering reproduces CPython's result exactly or guards, leaving to the interpreter before anything
changes, in every case where it cannot (int overflow, division by zero, a math domain error, ...).
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from codegen import abi, capi
from codegen.capi import DOUBLE, I1, I32, I64, I128, PTR
from codegen.context import FLOAT32, LowerContext, llvm_type
from jit import arrays, ufuncs, uops
from jit.frontend.operators import CompareOp
from jit.kinds import NUMPY_INT_RANGES, NUMPY_SCALARS, Kind
from jit.trace import Uop, Value

Lowering = Callable[[LowerContext, Uop], "ir.Value | None"]
LOWERINGS: dict[str, Lowering] = {}

INT_MIN = -(2**63)
TWO_53 = 2**53
TWO_63 = 9.223372036854775808e18
DBL_MIN = 2.2250738585072014e-308
_OVERFLOW_RESULT = ir.LiteralStructType([I64, I1])

_ICMP = {
    CompareOp.LT: "<",
    CompareOp.LE: "<=",
    CompareOp.EQ: "==",
    CompareOp.NE: "!=",
    CompareOp.GT: ">",
    CompareOp.GE: ">=",
}


def lowers(*names: str) -> Callable[[Lowering], Lowering]:
    def register(fn: Lowering) -> Lowering:
        for name in names:
            assert name not in LOWERINGS, name
            LOWERINGS[name] = fn
        return fn

    return register


def _args(ctx: LowerContext, uop: Uop) -> list[ir.Value]:
    return [ctx.value(v) for v in uop.args]


def _i64(value: int) -> ir.Constant:
    return ir.Constant(I64, value)


def _f64(value: float) -> ir.Constant:
    return ir.Constant(DOUBLE, value)


def _true() -> ir.Constant:
    return ir.Constant(I1, 1)


def _libm_call(ctx: LowerContext, name: str, *args: ir.Value) -> ir.Value:
    """Call the C library's own function, as CPython does. Declared ``nobuiltin``: LLVM must not rewrite it
    by what it knows of the function (pow(x, 2.0) into x * x, pow(x, -1.0) into 1.0 / x, ...), since those
    rewrites are correctly rounded and libm's results are not always (they would differ from CPython's)."""
    fn = ctx.callees.get(name)
    if fn is None:
        fn = ir.Function(ctx.module, ir.FunctionType(DOUBLE, [DOUBLE] * len(args)), name)
        ctx.callees[name] = fn
    if "nobuiltin" not in fn.attributes:
        fn.attributes.add("nobuiltin")
    return ctx.builder.call(fn, list(args))


def _const_arg(uop: Uop, index: int) -> object | None:
    """The constant value of an argument, if it is one (guards it satisfies need no code)."""
    v = uop.args[index]
    return v.const if v.is_const else None


def _guard_non_negative(ctx: LowerContext, uop: Uop, index: int) -> None:
    """Leave if argument index is negative (a ValueError, or a float result), unless it is a constant >= 0."""
    known = _const_arg(uop, index)
    if known is None or known < 0:  # type: ignore[operator]
        ctx.guard(ctx.builder.icmp_signed(">=", ctx.value(uop.args[index]), _i64(0)), uop)


def _floors(b: ir.IRBuilder, remainder: ir.Value, divisor: ir.Value) -> ir.Value:
    """C truncates toward zero, Python floors: the C remainder needs adjusting when it is nonzero and its sign
    differs from the divisor's."""
    return b.and_(b.icmp_signed("!=", remainder, _i64(0)), b.icmp_signed("<", b.xor(remainder, divisor), _i64(0)))


def _entry_alloca(ctx: LowerContext, ty: ir.Type) -> ir.Value:
    with ctx.builder.goto_block(ctx.function.entry_basic_block):
        return ctx.builder.alloca(ty)


# --- structure: slots, stack, constants, tree calls ------------------------------------------------------
# the uops declared Lowering.SKELETON are lowered by the trace's skeleton (codegen.function)


@lowers("_LOAD_CONST_INLINE")
def _load_const(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.constant(uop.out.kind, uop.operand)  # type: ignore[union-attr]


@lowers("_GUARD_SLOT_KIND")
def _guard_slot_kind(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(ctx.slot_kind_matches(uop.operand.slot, uop.operand.kind), uop)


@lowers("_CALL_TREE")
def _call_tree(ctx: LowerContext, uop: Uop) -> None:
    ctx.call_handed = ctx.ownership.slot_state(ctx.trace, uop.operand.snapshot)  # (taken back after the call)
    ctx.materialize(uop.operand.snapshot)
    ctx.store_fuel()
    callee = ctx.tree_function(uop.operand.tree.symbol)
    ctx.call_result = ctx.builder.call(callee, [ctx.buf])
    ctx.load_fuel()


@lowers("_GUARD_TREE_EXIT")
def _guard_tree_exit(ctx: LowerContext, uop: Uop) -> None:
    """The inner tree left its loop the recorded way: go on. It left another normal way: that exit of the
    outer trace (the state is in the buffer already; it may grow a side trace). Anything else: hand the
    inner tree's exit to the interpreter as it is."""
    exit_id = uop.operand.exit
    b = ctx.builder
    result = ctx.call_result

    def dispatch() -> None:
        for point in uop.alternatives:
            taken = ctx.function.append_basic_block("inner_loop_exit")
            other = ctx.function.append_basic_block()
            b.cbranch(b.icmp_signed("==", result, _i64(point.prewritten.inner_exit)), taken, other)
            b.position_at_end(taken)
            ctx.exit_stub(point)
            b.position_at_end(other)

    ctx.guard(b.icmp_signed("==", result, _i64(exit_id)), uop, before_exit=dispatch)
    if ctx.call_handed:  # the inner tree wrote none of the slots holding them (jit.recorder): the trace's again
        call = ctx.trace.uops[ctx.position - 1]
        assert call.name == "_CALL_TREE"
        ctx.take_back(ctx.call_handed, call.operand.snapshot)


@lowers("_RELOAD_SLOT")
def _reload_slot(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.load_slot(uop.operand, uop.out.kind)  # type: ignore[union-attr]


@lowers("_RELOAD_STACK")
def _reload_stack(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.load_stack(uop.operand, uop.out.kind)  # type: ignore[union-attr]


@lowers("_JUMP_TO_TREE")
def _jump_to_tree(ctx: LowerContext, uop: Uop) -> None:
    assert ctx.trace.end_snapshot is not None
    ctx.materialize(ctx.trace.end_snapshot)
    ctx.store_fuel()
    callee = ctx.tree_function(uop.operand.symbol)
    ctx.builder.ret(ctx.builder.call(callee, [ctx.buf], tail="musttail"))


@lowers("_EXIT_TRACE")
def _exit_trace(ctx: LowerContext, uop: Uop) -> None:
    assert uop.exit is not None
    ctx.exit_stub(uop.exit)


# --- globals -----------------------------------------------------------------------------------------------


def _dict_entry_is(ctx: LowerContext, namespace: dict, name: str, expected: object, fallback: dict | None) -> ir.Value:
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


@lowers("_STORE_GLOBAL")
def _store_global(ctx: LowerContext, uop: Uop) -> None:
    """globals[name] = the value, boxed. The value it replaces must free without running Python code (an
    int, float, bool or None), else the interpreter makes the store."""
    namespace, key = ctx.pointer(ctx.globals), ctx.pointer(uop.operand.name)
    if not uop.operand.over_number:  # (else the trace read or stored a number there, and nothing ran since)
        _guard_entry_drops_plainly(ctx, uop, namespace, key)
    (value,) = _args(ctx, uop)
    _dict_set(ctx, uop, namespace, key, uop.args[0], value)


def _guard_entry_drops_plainly(ctx: LowerContext, uop: Uop, mapping: ir.Value, key: ir.Value) -> None:
    """Leave unless mapping[key] is missing or holds a number or None: replacing it then runs no Python code."""
    b = ctx.builder
    old = ctx.capi("PyDict_GetItem", mapping, key)
    missing = b.icmp_unsigned("==", old, ir.Constant(PTR, None))
    old_type = _load_at(ctx, b.select(missing, ctx.pointer(None), old), abi.OB_TYPE, PTR)
    plain = missing
    for cls in (int, float, bool, type(None)):
        plain = b.or_(plain, b.icmp_unsigned("==", old_type, ctx.pointer(cls)))
    ctx.guard(plain, uop)


def _dict_set(ctx: LowerContext, uop: Uop, mapping: ir.Value, key: ir.Value, v: Value, native: ir.Value) -> None:
    """mapping[key] = v (native: its lowered value), boxed if it is a number; leave if that fails."""
    b = ctx.builder
    new = native if v.kind.is_pointer else _same_object(ctx, v)
    boxed_here = new is None
    if new is None:
        new = _box(ctx, v.kind, native)
        ctx.guard(b.icmp_unsigned("!=", new, ir.Constant(PTR, None)), uop, before_exit=lambda: ctx.capi("PyErr_Clear"))
    status = ctx.capi("PyDict_SetItem", mapping, key, new)  # (takes its own references)
    if boxed_here:
        ctx.decref(new)
    ctx.guard(b.icmp_signed("==", status, ir.Constant(I32, 0)), uop, before_exit=lambda: ctx.capi("PyErr_Clear"))


@lowers("_GUARD_CALLEE")
def _guard_callee(ctx: LowerContext, uop: Uop) -> None:
    callee = uop.operand
    b = ctx.builder
    function = ctx.pointer(callee.function)
    code = ctx.capi("PyFunction_GetCode", function)
    defaults = ctx.capi("PyFunction_GetDefaults", function)
    expected = ctx.pointer(callee.defaults) if callee.defaults is not None else ir.Constant(PTR, None)
    same = b.and_(b.icmp_unsigned("==", code, ctx.pointer(callee.code)), b.icmp_unsigned("==", defaults, expected))
    ctx.guard(same, uop)


# --- objects: type guards, boxing --------------------------------------------------------------------------

_TYPE_OF_KIND = {
    Kind.INT: int,
    Kind.FLOAT: float,
    Kind.BOOL: bool,
    Kind.LIST: list,
    Kind.TUPLE: tuple,
    Kind.STR: str,
    Kind.DICT: dict,
    Kind.NONE: type(None),
}


def _load_at(ctx: LowerContext, pointer: ir.Value, offset: int, ty: ir.Type) -> ir.Value:
    b = ctx.builder
    address = b.gep(pointer, [_i64(offset)], inbounds=True)
    return b.load(b.bitcast(address, ty.as_pointer()))


def _type_is(ctx: LowerContext, obj: ir.Value, pytype: type) -> ir.Value:
    return ctx.builder.icmp_unsigned("==", _load_at(ctx, obj, abi.OB_TYPE, PTR), ctx.pointer(pytype))


@lowers("_GUARD_TYPE")
def _guard_type(ctx: LowerContext, uop: Uop) -> ir.Value:
    obj = ctx.value(uop.args[0])
    ctx.guard(_type_is(ctx, obj, _TYPE_OF_KIND[uop.operand]), uop)
    return obj


@lowers("_UNBOX_INT", "_NARROW_INT_OBJECT")
def _unbox_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    overflow = _entry_alloca(ctx, I32)
    value = ctx.capi("PyLong_AsLongLongAndOverflow", ctx.value(uop.args[0]), overflow)
    ctx.guard(b.icmp_signed("==", b.load(overflow), ir.Constant(I32, 0)), uop)
    return value


@lowers("_UNBOX_FLOAT")
def _unbox_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    return _load_at(ctx, ctx.value(uop.args[0]), abi.FLOAT_VALUE, DOUBLE)


@lowers("_UNBOX_BOOL")
def _unbox_bool(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.icmp_unsigned("==", ctx.value(uop.args[0]), ctx.pointer(True))


@lowers("_CONVERT_INT_TO_FLOAT")
def _int_to_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.sitofp(ctx.value(uop.args[0]), DOUBLE)


@lowers("_CONVERT_BOOL_TO_INT")
def _bool_to_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.zext(ctx.value(uop.args[0]), I64)


def _same_object(ctx: LowerContext, v: Value) -> ir.Value | None:
    """A borrowed pointer to the object CPython would have at hand for v, if v was not computed: a
    constant, or a number just read out of a list or tuple. (Not when the trace also overwrites list items:
    or globals: that could have freed the object.)"""
    if v.kind == Kind.NONE:
        return ctx.pointer(None)
    if v.is_const and v.kind.is_number:
        return ctx.pointer(v.const)
    if v.boxed is not None and not any(u.op.drops for u in ctx.trace.uops):
        return ctx.value(v.boxed)
    return None


def _box(ctx: LowerContext, kind: Kind, value: ir.Value) -> ir.Value:
    """A new reference to a Python object for a native value (NULL if allocation failed)."""
    b = ctx.builder
    if kind == Kind.INT:
        return ctx.capi("PyLong_FromLongLong", value)
    if kind == Kind.FLOAT:
        return ctx.capi("PyFloat_FromDouble", value)
    if kind.is_numpy_scalar:
        return _box_numpy_scalar(ctx, kind, value)
    obj = b.select(value, ctx.pointer(True), ctx.pointer(False))
    ctx.capi("Py_IncRef", obj)
    return obj


def _box_numpy_scalar(ctx: LowerContext, kind: Kind, value: ir.Value) -> ir.Value:
    """A new numpy.bool (one of its two singletons), or a NumPy scalar made by calling its type on the Python
    float or int of the same value (exact), as the interpreter boxes it at an exit (NULL if that failed)."""
    b = ctx.builder
    scalar_type = NUMPY_SCALARS[kind]
    if kind == Kind.NP_BOOL:
        obj = b.select(value, ctx.pointer(scalar_type(True)), ctx.pointer(scalar_type(False)))
        ctx.capi("Py_IncRef", obj)
        return obj
    if kind.is_numpy_int:
        python = ctx.capi("PyLong_FromLongLong", value)
    else:
        python = ctx.capi("PyFloat_FromDouble", value if value.type == DOUBLE else b.fpext(value, DOUBLE))
    null = ir.Constant(PTR, None)
    made = b.icmp_unsigned("!=", python, null)

    def call() -> ir.Value:
        arguments = _entry_alloca(ctx, PTR)
        b.store(python, arguments)
        obj = ctx.capi("PyObject_Vectorcall", ctx.pointer(scalar_type), arguments, _i64(1), null)
        ctx.capi("Py_DecRef", python)
        return obj

    return _phi_if(ctx, made, call, null)


# --- ints past 64 bits: int objects the trace owns (codegen.ownership releases them) -----------------------

_NUMBER_FUNCTION = {
    "ADD": "PyNumber_Add",
    "SUBTRACT": "PyNumber_Subtract",
    "MULTIPLY": "PyNumber_Multiply",
    "FLOOR_DIVIDE": "PyNumber_FloorDivide",
    "REMAINDER": "PyNumber_Remainder",
    "LSHIFT": "PyNumber_Lshift",
    "RSHIFT": "PyNumber_Rshift",
    "AND": "PyNumber_And",
    "OR": "PyNumber_Or",
    "XOR": "PyNumber_Xor",
}


def _guard_made(ctx: LowerContext, uop: Uop, obj: ir.Value) -> None:
    """Leave if a C-API call failed (NULL), clearing its exception: the interpreter does the instruction again
    and raises it (exact: these operations on ints run no Python code and change nothing)."""
    ok = ctx.builder.icmp_unsigned("!=", obj, ir.Constant(PTR, None))
    ctx.guard(ok, uop, before_exit=lambda: _clear(ctx))


def _clear(ctx: LowerContext) -> None:
    ctx.capi("PyErr_Clear")


@lowers("_BOX_INT")
def _box_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    obj = ctx.capi("PyLong_FromLongLong", ctx.value(uop.args[0]))
    _guard_made(ctx, uop, obj)
    return obj


@lowers("_BINARY_OP_INT_OBJECT")
def _binary_op_int_object(ctx: LowerContext, uop: Uop) -> ir.Value:
    obj = ctx.capi(_NUMBER_FUNCTION[uop.operand.uop_name], *_args(ctx, uop))
    _guard_made(ctx, uop, obj)
    return obj


# --- ints past 64 bits in i128 (the recorder bounds their magnitudes below 2**127: no overflow checks) --------


def _i128(value: int) -> ir.Constant:
    return ir.Constant(I128, value)


@lowers("_WIDEN_INT")
def _widen_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.sext(ctx.value(uop.args[0]), I128)


LOWERINGS["_BINARY_OP_ADD_WIDE"] = lambda ctx, uop: ctx.builder.add(*_args(ctx, uop))
LOWERINGS["_BINARY_OP_SUBTRACT_WIDE"] = lambda ctx, uop: ctx.builder.sub(*_args(ctx, uop))
LOWERINGS["_BINARY_OP_MULTIPLY_WIDE"] = lambda ctx, uop: ctx.builder.mul(*_args(ctx, uop))


@lowers("_NARROW_WIDE")
def _narrow_wide(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    wide = ctx.value(uop.args[0])
    narrow = b.trunc(wide, I64)
    ctx.guard(b.icmp_signed("==", b.sext(narrow, I128), wide), uop)
    return narrow


def _box_wide(ctx: LowerContext, wide: ir.Value) -> ir.Value:
    """A new int object for an i128 (NULL if allocation failed): high * 2**64 + low, through CPython's ints."""
    b = ctx.builder
    high = ctx.capi("PyLong_FromLongLong", b.trunc(b.ashr(wide, _i128(64)), I64))
    low = ctx.capi("PyLong_FromUnsignedLongLong", b.trunc(wide, I64))
    null = ir.Constant(PTR, None)
    result = _phi_if(
        ctx,
        b.and_(b.icmp_unsigned("!=", high, null), b.icmp_unsigned("!=", low, null)),
        lambda: _shift_add(ctx, high, low),
        null,
    )
    for temporary in (high, low):
        with b.if_then(b.icmp_unsigned("!=", temporary, null)):
            ctx.decref(temporary)
    return result


def _shift_add(ctx: LowerContext, high: ir.Value, low: ir.Value) -> ir.Value:
    b = ctx.builder
    shifted = ctx.capi("PyNumber_Lshift", high, ctx.pointer(64))
    null = ir.Constant(PTR, None)
    total = _phi_if(ctx, b.icmp_unsigned("!=", shifted, null), lambda: ctx.capi("PyNumber_Add", shifted, low), null)
    with b.if_then(b.icmp_unsigned("!=", shifted, null)):
        ctx.decref(shifted)
    return total


def _phi_if(ctx: LowerContext, condition: ir.Value, then: Callable[[], ir.Value], otherwise: ir.Value) -> ir.Value:
    """then() where condition holds, else otherwise."""
    b = ctx.builder
    before = b.block
    with b.if_then(condition):
        value = then()
        inside = b.block
    phi = b.phi(value.type)
    phi.add_incoming(value, inside)
    phi.add_incoming(otherwise, before)
    return phi


@lowers("_BOX_WIDE")
def _box_wide_uop(ctx: LowerContext, uop: Uop) -> ir.Value:
    obj = _box_wide(ctx, ctx.value(uop.args[0]))
    _guard_made(ctx, uop, obj)
    return obj


@lowers("_BINARY_OP_REMAINDER_WIDE")
def _mod_wide(ctx: LowerContext, uop: Uop) -> ir.Value:
    """Python's % of an i128 by an int (the result has the divisor's sign, and fits in 64 bits)."""
    b = ctx.builder
    x, y = _args(ctx, uop)
    if _const_arg(uop, 1) in (None, 0):
        ctx.guard(b.icmp_signed("!=", y, _i64(0)), uop)
    if not capi.WIDE_DIVISION_ADDRESSES:
        return _mod_wide_through_ints(ctx, uop, x, y)
    # (|x| < 2**127, so x % -1 cannot overflow)
    remainder = b.trunc(b.srem(x, b.sext(y, I128)), I64)
    return b.add(remainder, b.select(_floors(b, remainder, y), y, _i64(0)))


def _mod_wide_through_ints(ctx: LowerContext, uop: Uop, x: ir.Value, y: ir.Value) -> ir.Value:
    """_BINARY_OP_REMAINDER_WIDE where LLVM's i128 division has no runtime to call: CPython's int %."""
    b = ctx.builder
    null = ir.Constant(PTR, None)
    dividend = _box_wide(ctx, x)
    _guard_made(ctx, uop, dividend)
    divisor = ctx.capi("PyLong_FromLongLong", y)
    ctx.guard(b.icmp_unsigned("!=", divisor, null), uop, before_exit=lambda: (ctx.decref(dividend), _clear(ctx)))
    remainder = ctx.capi("PyNumber_Remainder", dividend, divisor)
    ctx.decref(dividend)
    ctx.decref(divisor)
    _guard_made(ctx, uop, remainder)
    overflow = _entry_alloca(ctx, I32)
    value = ctx.capi("PyLong_AsLongLongAndOverflow", remainder, overflow)
    ctx.decref(remainder)
    return value


# --- int arithmetic ----------------------------------------------------------------------------------------


def _with_overflow(name: str) -> Lowering:
    def lower(ctx: LowerContext, uop: Uop) -> ir.Value:
        b = ctx.builder
        result = ctx.intrinsic(f"llvm.{name}.with.overflow.i64", _OVERFLOW_RESULT, *_args(ctx, uop))
        value = b.extract_value(result, 0)  # (before the guard: a loop's last guard can then be its back-edge)
        ctx.guard(b.not_(b.extract_value(result, 1)), uop)
        return value

    return lower


LOWERINGS["_BINARY_OP_ADD_INT"] = _with_overflow("sadd")
LOWERINGS["_BINARY_OP_SUBTRACT_INT"] = _with_overflow("ssub")
LOWERINGS["_BINARY_OP_MULTIPLY_INT"] = _with_overflow("smul")


def _no_overflow(name: str) -> Lowering:
    """An operation the range analysis proved fits i64: no check (``nsw``: LLVM may rely on it)."""

    def lower(ctx: LowerContext, uop: Uop) -> ir.Value:
        return getattr(ctx.builder, name)(*_args(ctx, uop), flags=["nsw"])

    return lower


LOWERINGS["_BINARY_OP_MULTIPLY_INT_IN_RANGE"] = _no_overflow("mul")  # (+ and -: _add_in_range, _subtract_in_range)


@lowers("_BINARY_OP_FLOOR_DIVIDE_INT")
def _floordiv_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    x, y = _args(ctx, uop)
    if _const_arg(uop, 1) in (None, 0, -1):
        min_by_minus_one = b.and_(b.icmp_signed("==", x, _i64(INT_MIN)), b.icmp_signed("==", y, _i64(-1)))
        ctx.guard(b.and_(b.icmp_signed("!=", y, _i64(0)), b.not_(min_by_minus_one)), uop)
    quotient = b.sdiv(x, y)
    remainder = b.srem(x, y)
    return b.sub(quotient, b.zext(_floors(b, remainder, y), I64))


@lowers("_BINARY_OP_REMAINDER_INT")
def _mod_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    x, y = _args(ctx, uop)
    if _const_arg(uop, 1) in (None, 0):
        ctx.guard(b.icmp_signed("!=", y, _i64(0)), uop)
    safe_y = b.select(b.icmp_signed("==", y, _i64(-1)), _i64(1), y)  # INT_MIN % -1 overflows srem; the answer is 0
    remainder = b.srem(x, safe_y)
    return b.add(remainder, b.select(_floors(b, remainder, y), y, _i64(0)))


@lowers("_BINARY_OP_POWER_INT")
def _pow_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    """Square-and-multiply, leaving on a negative exponent (a float result) or on overflow."""
    b = ctx.builder
    base0, exp0 = _args(ctx, uop)
    _guard_non_negative(ctx, uop, 1)
    before = b.block
    head = ctx.function.append_basic_block("ipow_head")
    body = ctx.function.append_basic_block("ipow_body")
    done = ctx.function.append_basic_block("ipow_done")
    b.branch(head)
    b.position_at_end(head)
    result = b.phi(I64)
    base = b.phi(I64)
    exp = b.phi(I64)
    overflow = b.phi(I1)
    result.add_incoming(_i64(1), before)
    base.add_incoming(base0, before)
    exp.add_incoming(exp0, before)
    overflow.add_incoming(ir.Constant(I1, 0), before)
    b.cbranch(b.icmp_signed("==", exp, _i64(0)), done, body)
    b.position_at_end(body)
    bit = b.trunc(exp, I1)
    product = ctx.intrinsic("llvm.smul.with.overflow.i64", _OVERFLOW_RESULT, result, base)
    next_result = b.select(bit, b.extract_value(product, 0), result)
    next_exp = b.ashr(exp, _i64(1))
    square = ctx.intrinsic("llvm.smul.with.overflow.i64", _OVERFLOW_RESULT, base, base)
    square_matters = b.icmp_signed("!=", next_exp, _i64(0))
    next_overflow = b.or_(
        overflow, b.or_(b.and_(bit, b.extract_value(product, 1)), b.and_(square_matters, b.extract_value(square, 1)))
    )
    result.add_incoming(next_result, body)
    base.add_incoming(b.extract_value(square, 0), body)
    exp.add_incoming(next_exp, body)
    overflow.add_incoming(next_overflow, body)
    b.branch(head)
    b.position_at_end(done)
    ctx.guard(b.not_(overflow), uop)
    return result


@lowers("_BINARY_OP_LSHIFT_INT")
def _lshift_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    x, n = _args(ctx, uop)
    in_range = b.icmp_signed("<", n, _i64(64))
    amount = b.select(in_range, n, _i64(0))
    shifted = b.shl(x, amount)
    fits = b.and_(in_range, b.icmp_signed("==", b.ashr(shifted, amount), x))
    is_zero = b.icmp_signed("==", x, _i64(0))
    ctx.guard(b.and_(b.icmp_signed(">=", n, _i64(0)), b.or_(fits, is_zero)), uop)  # n < 0: ValueError
    return b.select(fits, shifted, _i64(0))


@lowers("_BINARY_OP_RSHIFT_INT")
def _rshift_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    x, n = _args(ctx, uop)
    _guard_non_negative(ctx, uop, 1)
    return b.ashr(x, b.select(b.icmp_signed("<", n, _i64(64)), n, _i64(63)))


def _bitwise(op: str) -> Lowering:
    def lower(ctx: LowerContext, uop: Uop) -> ir.Value:
        x, y = _args(ctx, uop)
        return getattr(ctx.builder, op)(x, y)

    return lower


for _kind in ("INT", "BOOL"):
    LOWERINGS[f"_BINARY_OP_AND_{_kind}"] = _bitwise("and_")
    LOWERINGS[f"_BINARY_OP_OR_{_kind}"] = _bitwise("or_")
    LOWERINGS[f"_BINARY_OP_XOR_{_kind}"] = _bitwise("xor")


@lowers("_BINARY_OP_TRUE_DIVIDE_INT")
def _truediv_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    x, y = _args(ctx, uop)

    def exact(v: ir.Value) -> ir.Value:
        return b.and_(b.icmp_signed(">=", v, _i64(-TWO_53)), b.icmp_signed("<=", v, _i64(TWO_53)))

    # both convert to double exactly, so one IEEE division is the correctly rounded quotient, as in CPython
    ctx.guard(b.and_(b.icmp_signed("!=", y, _i64(0)), b.and_(exact(x), exact(y))), uop)
    return b.fdiv(b.sitofp(x, DOUBLE), b.sitofp(y, DOUBLE))


@lowers("_UNARY_NEGATIVE_INT")
def _neg_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    (x,) = _args(ctx, uop)
    ctx.guard(b.icmp_signed("!=", x, _i64(INT_MIN)), uop)
    return b.neg(x)


@lowers("_UNARY_NEGATIVE_INT_IN_RANGE")
def _neg_int_unchecked(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.sub(_i64(0), ctx.value(uop.args[0]), flags=["nsw"])


@lowers("_UNARY_INVERT_INT")
def _invert_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.not_(ctx.value(uop.args[0]))


@lowers("_COMPARE_OP_INT")
def _compare_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    x, y = _args(ctx, uop)
    return ctx.builder.icmp_signed(_ICMP[uop.operand], x, y)


# --- strs and dicts ----------------------------------------------------------------------------------------


@lowers("_LEN_STR")
def _len_str(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.capi("PyUnicode_GetLength", ctx.value(uop.args[0]))


@lowers("_LEN_DICT")
def _len_dict(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.capi("PyDict_Size", ctx.value(uop.args[0]))


@lowers("_COMPARE_OP_STR")
def _compare_str(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    x, y = _args(ctx, uop)
    if uop.operand in (CompareOp.EQ, CompareOp.NE):
        # the same object, or lengths that differ, answer without comparing characters (CPython's own
        # shortcuts: a str's characters are stored in one canonical form)
        same = b.icmp_unsigned("==", x, y)
        differ = b.icmp_unsigned("!=", _load_at(ctx, x, abi.OB_SIZE, I64), _load_at(ctx, y, abi.OB_SIZE, I64))
        decided = b.or_(same, differ)
        order = _phi_if(
            ctx, b.not_(decided), lambda: ctx.capi("PyUnicode_Compare", x, y), b.zext(differ, I32)
        )  # 0 where equal
    else:
        order = ctx.capi("PyUnicode_Compare", x, y)  # -1, 0 or 1 (exact strs: it cannot fail)
    return b.icmp_signed(_ICMP[uop.operand], order, ir.Constant(I32, 0))


@lowers("_DICT_LOOKUP_STR")
def _dict_lookup_str(ctx: LowerContext, uop: Uop) -> ir.Value:
    mapping, key = _args(ctx, uop)
    return ctx.capi("PyDict_GetItem", mapping, key)


@lowers("_GUARD_FOUND")
def _guard_found(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(ctx.builder.icmp_unsigned("!=", ctx.value(uop.args[0]), ir.Constant(PTR, None)), uop)


@lowers("_GUARD_MISSING")
def _guard_missing(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(ctx.builder.icmp_unsigned("==", ctx.value(uop.args[0]), ir.Constant(PTR, None)), uop)


@lowers("_CONTAINS_DICT_STR")
def _contains_dict_str(ctx: LowerContext, uop: Uop) -> ir.Value:
    mapping, key = _args(ctx, uop)
    return ctx.builder.icmp_unsigned("!=", ctx.capi("PyDict_GetItem", mapping, key), ir.Constant(PTR, None))


@lowers("_CONTAINS_STR")
def _contains_str(ctx: LowerContext, uop: Uop) -> ir.Value:
    text, part = _args(ctx, uop)
    found = ctx.capi("PyUnicode_Contains", text, part)  # 1 or 0 (exact strs: it cannot fail)
    return ctx.builder.icmp_signed("==", found, ir.Constant(I32, 1))


@lowers("_BIND_DICT_GET")
def _bind_dict_get(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.value(uop.args[0])


@lowers("_STORE_SUBSCR_DICT_STR", "_STORE_SUBSCR_DICT_STR_OVER_NUMBER")
def _store_subscr_dict_str(ctx: LowerContext, uop: Uop) -> None:
    """d[key] = value, boxed. The value it replaces must free without running Python code (a number or
    None), else the interpreter makes the store (checked here, unless the trace read it since)."""
    value, mapping, key = _args(ctx, uop)
    if uop.name == "_STORE_SUBSCR_DICT_STR":
        _guard_entry_drops_plainly(ctx, uop, mapping, key)
    _dict_set(ctx, uop, mapping, key, uop.args[0], value)


# --- float arithmetic --------------------------------------------------------------------------------------


def _float_op(op: str) -> Lowering:
    def lower(ctx: LowerContext, uop: Uop) -> ir.Value:
        x, y = _args(ctx, uop)
        return getattr(ctx.builder, op)(x, y)

    return lower


LOWERINGS["_BINARY_OP_ADD_FLOAT"] = _float_op("fadd")
LOWERINGS["_BINARY_OP_SUBTRACT_FLOAT"] = _float_op("fsub")
LOWERINGS["_BINARY_OP_MULTIPLY_FLOAT"] = _float_op("fmul")


def _nonzero_divisor(ctx: LowerContext, uop: Uop) -> tuple[ir.Value, ir.Value]:
    x, y = _args(ctx, uop)
    if not _const_arg(uop, 1):  # 0.0 and -0.0: ZeroDivisionError
        ctx.guard(ctx.builder.fcmp_unordered("!=", y, _f64(0.0)), uop)
    return x, y


@lowers("_BINARY_OP_TRUE_DIVIDE_FLOAT")
def _truediv_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    x, y = _nonzero_divisor(ctx, uop)
    return ctx.builder.fdiv(x, y)


def _float_mod(ctx: LowerContext, x: ir.Value, y: ir.Value) -> tuple[ir.Value, ir.Value]:
    """CPython's float modulo: fmod, then the remainder takes the divisor's sign. Returns (mod, adjusted)."""
    b = ctx.builder
    mod = b.frem(x, y)
    nonzero = b.fcmp_unordered("!=", mod, _f64(0.0))
    signs_differ = b.xor(b.fcmp_ordered("<", y, _f64(0.0)), b.fcmp_ordered("<", mod, _f64(0.0)))
    adjust = b.and_(nonzero, signs_differ)
    signed_zero = ctx.intrinsic("llvm.copysign.f64", DOUBLE, _f64(0.0), y)
    adjusted = b.select(adjust, b.fadd(mod, y), mod)
    return b.select(nonzero, adjusted, signed_zero), adjust


@lowers("_BINARY_OP_REMAINDER_FLOAT")
def _mod_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    x, y = _nonzero_divisor(ctx, uop)
    return _float_mod(ctx, x, y)[0]


@lowers("_BINARY_OP_FLOOR_DIVIDE_FLOAT")
def _floordiv_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    """CPython's _float_div_mod, step by step."""
    b = ctx.builder
    x, y = _nonzero_divisor(ctx, uop)
    raw_mod = b.frem(x, y)
    div = b.fdiv(b.fsub(x, raw_mod), y)
    _, adjust = _float_mod(ctx, x, y)
    div = b.select(adjust, b.fsub(div, _f64(1.0)), div)
    floor = ctx.intrinsic("llvm.floor.f64", DOUBLE, div)
    floor = b.select(b.fcmp_ordered(">", b.fsub(div, floor), _f64(0.5)), b.fadd(floor, _f64(1.0)), floor)
    zero = ctx.intrinsic("llvm.copysign.f64", DOUBLE, _f64(0.0), b.fdiv(x, y))
    return b.select(b.fcmp_unordered("!=", div, _f64(0.0)), floor, zero)


@lowers("_BINARY_OP_POWER_FLOAT")
def _pow_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    """CPython's float_pow for finite operands; nan, inf, 0 ** negative, negative ** fraction (a complex
    result), overflow and underflow all leave to the interpreter."""
    b = ctx.builder
    x, y = _args(ctx, uop)
    inf = _f64(float("inf"))
    fabs_x = ctx.intrinsic("llvm.fabs.f64", DOUBLE, x)
    fabs_y = ctx.intrinsic("llvm.fabs.f64", DOUBLE, y)
    finite = b.and_(b.fcmp_ordered("<", fabs_x, inf), b.fcmp_ordered("<", fabs_y, inf))
    y_integral = b.fcmp_ordered("==", ctx.intrinsic("llvm.floor.f64", DOUBLE, y), y)
    y_odd = b.fcmp_ordered("==", b.frem(fabs_y, _f64(2.0)), _f64(1.0))
    x_zero = b.fcmp_ordered("==", x, _f64(0.0))
    x_negative = b.fcmp_ordered("<", x, _f64(0.0))
    y_zero = b.fcmp_ordered("==", y, _f64(0.0))
    bad = b.or_(b.and_(x_zero, b.fcmp_ordered("<", y, _f64(0.0))), b.and_(x_negative, b.not_(y_integral)))
    ok = b.or_(y_zero, b.and_(finite, b.not_(bad)))
    ctx.guard(ok, uop)
    magnitude = _libm_call(ctx, "pow", fabs_x, y)
    magnitude = b.select(b.fcmp_ordered("==", fabs_x, _f64(1.0)), _f64(1.0), magnitude)
    general = b.select(b.and_(x_negative, y_odd), b.fneg(magnitude), magnitude)
    general_ok = b.and_(
        b.fcmp_ordered(">=", ctx.intrinsic("llvm.fabs.f64", DOUBLE, general), _f64(DBL_MIN)),
        b.fcmp_ordered("<", ctx.intrinsic("llvm.fabs.f64", DOUBLE, general), inf),
    )
    needs_general = b.and_(b.not_(y_zero), b.not_(x_zero))
    ctx.guard(b.or_(b.not_(needs_general), general_ok), uop)  # overflow (OverflowError) or underflow
    zero_case = b.select(y_odd, x, _f64(0.0))  # 0.0 ** odd keeps the zero's sign
    return b.select(y_zero, _f64(1.0), b.select(x_zero, zero_case, general))


@lowers("_UNARY_NEGATIVE_FLOAT")
def _neg_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.fneg(ctx.value(uop.args[0]))


@lowers("_COMPARE_OP_FLOAT")
def _compare_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    x, y = _args(ctx, uop)
    if uop.operand == CompareOp.NE:
        return ctx.builder.fcmp_unordered("!=", x, y)  # nan != anything
    return ctx.builder.fcmp_ordered(_ICMP[uop.operand], x, y)


@lowers("_COMPARE_OP_INT_FLOAT")
def _compare_int_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    """Exact comparison of an i64 with a double, as CPython compares int and float (no rounding of the int)."""
    b = ctx.builder
    x, y = _args(ctx, uop)
    is_nan = b.fcmp_unordered("uno", y, y)
    big = b.fcmp_ordered(">=", y, _f64(TWO_63))
    small = b.fcmp_ordered("<", y, _f64(-TWO_63))
    in_range = b.not_(b.or_(is_nan, b.or_(big, small)))
    safe_y = b.select(in_range, y, _f64(0.0))
    whole = b.fptosi(safe_y, I64)
    fraction = b.fsub(safe_y, b.sitofp(whole, DOUBLE))
    # order: -1, 0, 1 for x <, ==, > y
    by_whole = b.select(
        b.icmp_signed("<", x, whole),
        _i64(-1),
        b.select(b.icmp_signed(">", x, whole), _i64(1), _i64(0)),
    )
    by_fraction = b.select(
        b.fcmp_ordered(">", fraction, _f64(0.0)),
        _i64(-1),
        b.select(b.fcmp_ordered("<", fraction, _f64(0.0)), _i64(1), _i64(0)),
    )
    order = b.select(b.icmp_signed("!=", by_whole, _i64(0)), by_whole, by_fraction)
    order = b.select(big, _i64(-1), b.select(small, _i64(1), order))
    if uop.operand == CompareOp.NE:
        return b.or_(is_nan, b.icmp_signed("!=", order, _i64(0)))
    return b.and_(b.not_(is_nan), b.icmp_signed(_ICMP[uop.operand], order, _i64(0)))


# --- truth, identity, branches -----------------------------------------------------------------------------


@lowers("_TO_BOOL_INT")
def _to_bool_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.icmp_signed("!=", ctx.value(uop.args[0]), _i64(0))


@lowers("_TO_BOOL_FLOAT")
def _to_bool_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.fcmp_unordered("!=", ctx.value(uop.args[0]), _f64(0.0))


@lowers("_TO_BOOL_LIST", "_TO_BOOL_TUPLE")
def _to_bool_sized(ctx: LowerContext, uop: Uop) -> ir.Value:
    size = _load_at(ctx, ctx.value(uop.args[0]), abi.OB_SIZE, I64)
    return ctx.builder.icmp_signed("!=", size, _i64(0))


@lowers("_UNARY_NOT")
def _not(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.xor(ctx.value(uop.args[0]), _true())


@lowers("_IS_OP")
def _is_op(ctx: LowerContext, uop: Uop) -> ir.Value:
    x, y = _args(ctx, uop)
    return ctx.builder.icmp_unsigned("!=" if uop.operand else "==", x, y)


@lowers("_SELECT")
def _select(ctx: LowerContext, uop: Uop) -> ir.Value:
    condition, x, y = _args(ctx, uop)
    return ctx.builder.select(condition, x, y)


@lowers("_GUARD_IS_TRUE_POP")
def _guard_true(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(ctx.value(uop.args[0]), uop)


@lowers("_GUARD_IS_FALSE_POP")
def _guard_false(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(ctx.builder.not_(ctx.value(uop.args[0])), uop)


@lowers("_GUARD_NONZERO_INT")
def _guard_nonzero(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(ctx.builder.icmp_signed("!=", ctx.value(uop.args[0]), _i64(0)), uop)


# --- loops -------------------------------------------------------------------------------------------------


def _range_has_more(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    cur, stop, step = _args(ctx, uop)
    up = b.icmp_signed(">", step, _i64(0))
    return b.select(up, b.icmp_signed("<", cur, stop), b.icmp_signed(">", cur, stop))


@lowers("_GUARD_NOT_EXHAUSTED_RANGE")
def _guard_range_more(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(_range_has_more(ctx, uop), uop)


@lowers("_GUARD_EXHAUSTED_RANGE")
def _guard_range_done(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(ctx.builder.not_(_range_has_more(ctx, uop)), uop)


LOWERINGS["_ITER_NEXT_RANGE"] = _with_overflow("sadd")
LOWERINGS["_ITER_NEXT_RANGE_NO_OVERFLOW"] = _no_overflow("add")


def _sequence_has_more(ctx: LowerContext, uop: Uop) -> ir.Value:
    sequence, index = _args(ctx, uop)
    return ctx.builder.icmp_signed("<", index, _load_at(ctx, sequence, abi.OB_SIZE, I64))


@lowers("_GUARD_NOT_EXHAUSTED_LIST", "_GUARD_NOT_EXHAUSTED_TUPLE")
def _guard_sequence_more(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(_sequence_has_more(ctx, uop), uop)


@lowers("_GUARD_EXHAUSTED_LIST", "_GUARD_EXHAUSTED_TUPLE")
def _guard_sequence_done(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(ctx.builder.not_(_sequence_has_more(ctx, uop)), uop)


def _item(ctx: LowerContext, sequence: ir.Value, index: ir.Value, is_list: bool) -> ir.Value:
    b = ctx.builder
    if is_list:
        items = b.bitcast(_load_at(ctx, sequence, abi.LIST_ITEMS, PTR), PTR.as_pointer())
    else:
        items = b.bitcast(b.gep(sequence, [_i64(abi.TUPLE_ITEMS)], inbounds=True), PTR.as_pointer())
    return b.load(b.gep(items, [index], inbounds=True))


@lowers("_ITER_NEXT_LIST", "_ITER_NEXT_TUPLE")
def _iter_next(ctx: LowerContext, uop: Uop) -> ir.Value:
    sequence, index = _args(ctx, uop)
    return _item(ctx, sequence, index, uop.name == "_ITER_NEXT_LIST")


@lowers("_ITER_INCREMENT")
def _iter_increment(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.add(ctx.value(uop.args[0]), _i64(1), flags=["nsw"])


_SEQUENCE_ITERATOR_TYPES = {Kind.LIST: type(iter([])), Kind.TUPLE: type(iter(())), None: None}
_NULL = ir.Constant(PTR, None)


def _store_at(ctx: LowerContext, pointer: ir.Value, offset: int, value: ir.Value) -> None:
    b = ctx.builder
    b.store(value, b.bitcast(b.gep(pointer, [_i64(offset)], inbounds=True), value.type.as_pointer()))


@lowers("_GUARD_SEQUENCE_ITERATOR")
def _guard_sequence_iterator(ctx: LowerContext, uop: Uop) -> None:
    iterator = ctx.value(uop.args[0])
    if not abi.ITERATORS_OK:  # (another layout than the one checked: never native)
        ctx.guard(ir.Constant(I1, 0), uop)
        return
    ctx.guard(_type_is(ctx, iterator, _SEQUENCE_ITERATOR_TYPES[uop.operand]), uop)  # first: then read its fields
    live = _load_at(ctx, iterator, abi.SEQUENCE_ITERATOR_SEQUENCE, PTR)
    ctx.guard(ctx.builder.icmp_unsigned("!=", live, _NULL), uop)


@lowers("_SEQUENCE_ITERATOR_SEQUENCE")
def _sequence_iterator_sequence(ctx: LowerContext, uop: Uop) -> ir.Value:
    return _load_at(ctx, ctx.value(uop.args[0]), abi.SEQUENCE_ITERATOR_SEQUENCE, PTR)


@lowers("_LOAD_ITERATOR_POSITION")
def _load_iterator_position(ctx: LowerContext, uop: Uop) -> ir.Value:
    return _load_at(ctx, ctx.value(uop.args[0]), abi.SEQUENCE_ITERATOR_INDEX, I64)


@lowers("_STORE_ITERATOR_POSITION")
def _store_iterator_position(ctx: LowerContext, uop: Uop) -> None:
    iterator, position = _args(ctx, uop)
    _store_at(ctx, iterator, abi.SEQUENCE_ITERATOR_INDEX, position)


@lowers("_GUARD_ENUMERATE")
def _guard_enumerate(ctx: LowerContext, uop: Uop) -> None:
    numbered = ctx.value(uop.args[0])
    if not abi.ITERATORS_OK:
        ctx.guard(ir.Constant(I1, 0), uop)
        return
    ctx.guard(_type_is(ctx, numbered, enumerate), uop)
    long_count = _load_at(ctx, numbered, abi.ENUMERATE_LONG_COUNT, PTR)
    ctx.guard(ctx.builder.icmp_unsigned("==", long_count, _NULL), uop)


@lowers("_ENUMERATE_ITERATOR")
def _enumerate_iterator(ctx: LowerContext, uop: Uop) -> ir.Value:
    return _load_at(ctx, ctx.value(uop.args[0]), abi.ENUMERATE_ITERATOR, PTR)


@lowers("_LOAD_ENUMERATE_COUNT")
def _load_enumerate_count(ctx: LowerContext, uop: Uop) -> ir.Value:
    return _load_at(ctx, ctx.value(uop.args[0]), abi.ENUMERATE_COUNT, I64)


@lowers("_STORE_ENUMERATE_COUNT")
def _store_enumerate_count(ctx: LowerContext, uop: Uop) -> None:
    numbered, count = _args(ctx, uop)
    _store_at(ctx, numbered, abi.ENUMERATE_COUNT, count)


_DICT_ITERATOR_TYPES = frozenset({type(iter({})), type(iter({}.values())), type(iter({}.items()))})
_CONTAINER_ITERATOR_TYPES = _DICT_ITERATOR_TYPES | {type(iter(set()))}
_STR_ITERATOR_TYPES = frozenset({type(iter("")), type(iter("é"))})


@lowers("_GUARD_BUILTIN_ITERATOR")
def _guard_builtin_iterator(ctx: LowerContext, uop: Uop) -> None:
    b = ctx.builder
    iterator = ctx.value(uop.args[0])
    if not abi.ITERATORS_OK:
        ctx.guard(ir.Constant(I1, 0), uop)
        return
    ctx.guard(_type_is(ctx, iterator, uop.operand), uop)
    if uop.operand in _STR_ITERATOR_TYPES:  # its characters are CPython's cached ones: one byte each
        text = _load_at(ctx, iterator, abi.SEQUENCE_ITERATOR_SEQUENCE, PTR)
        text = b.select(b.icmp_unsigned("==", text, _NULL), ctx.pointer(""), text)  # (exhausted: no characters)
        state = _load_at(ctx, text, abi.STR_STATE, I32)
        kind = b.and_(b.lshr(state, ir.Constant(I32, abi.STR_KIND_SHIFT)), ir.Constant(I32, 7))
        ctx.guard(b.icmp_unsigned("==", kind, ir.Constant(I32, 1)), uop)


@lowers("_ITER_NEXT_BUILTIN")
def _iter_next_builtin(ctx: LowerContext, uop: Uop) -> ir.Value:
    """The iterator's own tp_iternext. Before it, what keeps the borrowed items alive: a dict or set iterator's
    container must have another reference (the exhausted iterator drops its own), and a dict iterator must
    expect more (at none left, finding one raises an error that asking again would not raise)."""
    b = ctx.builder
    iterator = ctx.value(uop.args[0])
    if uop.operand in _CONTAINER_ITERATOR_TYPES:
        container = _load_at(ctx, iterator, abi.CONTAINER_ITERATOR_CONTAINER, PTR)
        ctx.guard(b.icmp_unsigned("!=", container, _NULL), uop)
        ctx.guard(b.icmp_signed(">=", _load_at(ctx, container, 0, I64), _i64(2)), uop)
        if uop.operand in _DICT_ITERATOR_TYPES:
            ctx.guard(b.icmp_signed(">", _load_at(ctx, iterator, abi.DICT_ITERATOR_LENGTH, I64), _i64(0)), uop)
    next_type = ir.FunctionType(PTR, [PTR])
    tp = _load_at(ctx, iterator, abi.OB_TYPE, PTR)
    function = b.bitcast(_load_at(ctx, tp, abi.TYPE_ITERNEXT, PTR), next_type.as_pointer())
    item = b.call(function, [iterator])
    ctx.guard(b.icmp_unsigned("!=", item, _NULL), uop, before_exit=lambda: ctx.capi("PyErr_Clear"))
    return item


@lowers("_GUARD_ZIP")
def _guard_zip(ctx: LowerContext, uop: Uop) -> None:
    zipped = ctx.value(uop.args[0])
    if not abi.ITERATORS_OK:
        ctx.guard(ir.Constant(I1, 0), uop)
        return
    b = ctx.builder
    ctx.guard(_type_is(ctx, zipped, zip), uop)
    size = _load_at(ctx, zipped, abi.ZIP_SIZE, I64)
    ctx.guard(b.icmp_signed("==", size, _i64(uop.operand)), uop)
    # distinct iterators: `zip(it, it)` takes two items of it per step, which reading each once would not
    iterators = _load_at(ctx, zipped, abi.ZIP_ITERATORS, PTR)
    each = [_load_at(ctx, iterators, abi.TUPLE_ITEMS + abi.WORD * k, PTR) for k in range(uop.operand)]
    distinct = _true()
    for k, first in enumerate(each):
        for second in each[k + 1 :]:
            distinct = b.and_(distinct, b.icmp_unsigned("!=", first, second))
    ctx.guard(distinct, uop)


@lowers("_ZIP_ITERATOR")
def _zip_iterator(ctx: LowerContext, uop: Uop) -> ir.Value:
    iterators = _load_at(ctx, ctx.value(uop.args[0]), abi.ZIP_ITERATORS, PTR)
    return _load_at(ctx, iterators, abi.TUPLE_ITEMS + abi.WORD * uop.operand, PTR)


# --- lists and tuples --------------------------------------------------------------------------------------


def _checked_index(ctx: LowerContext, uop: Uop, sequence: ir.Value, index: ir.Value) -> ir.Value:
    b = ctx.builder
    size = _load_at(ctx, sequence, abi.OB_SIZE, I64)
    index = b.select(b.icmp_signed("<", index, _i64(0)), b.add(index, size), index)
    ctx.guard(b.icmp_unsigned("<", index, size), uop)  # unsigned: a negative index is out of range too
    return index


@lowers("_BINARY_SUBSCR_LIST_INT", "_BINARY_SUBSCR_TUPLE_INT")
def _subscr(ctx: LowerContext, uop: Uop) -> ir.Value:
    sequence, index = _args(ctx, uop)
    index = _checked_index(ctx, uop, sequence, index)
    return _item(ctx, sequence, index, uop.name == "_BINARY_SUBSCR_LIST_INT")


@lowers("_BINARY_SUBSCR_LIST_INT_IN_BOUNDS", "_BINARY_SUBSCR_TUPLE_INT_IN_BOUNDS")
def _subscr_in_bounds(ctx: LowerContext, uop: Uop) -> ir.Value:
    sequence, index = _args(ctx, uop)
    return _item(ctx, sequence, index, uop.name == "_BINARY_SUBSCR_LIST_INT_IN_BOUNDS")


@lowers("_LEN_LIST", "_LEN_TUPLE")
def _len(ctx: LowerContext, uop: Uop) -> ir.Value:
    return _load_at(ctx, ctx.value(uop.args[0]), abi.OB_SIZE, I64)


@lowers("_NEW_REF")
def _new_ref(ctx: LowerContext, uop: Uop) -> ir.Value:
    obj = ctx.value(uop.args[0])
    ctx.incref(obj)
    return obj


@lowers(
    "_STORE_SUBSCR_LIST_INT",
    "_STORE_SUBSCR_LIST_OBJECT",
    "_STORE_SUBSCR_LIST_INT_IN_BOUNDS",
    "_STORE_SUBSCR_LIST_OBJECT_IN_BOUNDS",
)
def _store_subscr(ctx: LowerContext, uop: Uop) -> None:
    b = ctx.builder
    value, sequence, index = _args(ctx, uop)
    if not uop.name.endswith("_IN_BOUNDS"):  # (else the range analysis proved 0 <= index < len)
        index = _checked_index(ctx, uop, sequence, index)
    items = b.bitcast(_load_at(ctx, sequence, abi.LIST_ITEMS, PTR), PTR.as_pointer())
    slot = b.gep(items, [index], inbounds=True)
    old = b.load(slot)
    # the element dropped must free without running Python code (no __del__): a float, int or bool
    old_type = _load_at(ctx, old, abi.OB_TYPE, PTR)
    plain = b.or_(
        b.icmp_unsigned("==", old_type, ctx.pointer(float)),
        b.or_(b.icmp_unsigned("==", old_type, ctx.pointer(int)), b.icmp_unsigned("==", old_type, ctx.pointer(bool))),
    )
    ctx.guard(plain, uop)
    new = value if uop.name.startswith("_STORE_SUBSCR_LIST_OBJECT") else _same_object(ctx, uop.args[0])
    if new is not None:
        ctx.incref(new)
    else:
        new = _box(ctx, uop.args[0].kind, value)
        ctx.guard(b.icmp_unsigned("!=", new, ir.Constant(PTR, None)), uop, before_exit=lambda: ctx.capi("PyErr_Clear"))
    b.store(new, slot)
    ctx.decref(old)


@lowers("_BIND_APPEND")
def _bind_append(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.value(uop.args[0])


@lowers("_CALL_LIST_APPEND")
def _list_append(ctx: LowerContext, uop: Uop) -> None:
    b = ctx.builder
    target, item = _args(ctx, uop)
    kind = uop.args[1].kind
    obj = item if kind.is_pointer else _same_object(ctx, uop.args[1])
    boxed_here = obj is None
    if obj is None:
        obj = _box(ctx, kind, item)
        ctx.guard(b.icmp_unsigned("!=", obj, ir.Constant(PTR, None)), uop, before_exit=lambda: ctx.capi("PyErr_Clear"))
    status = ctx.capi("PyList_Append", target, obj)
    if boxed_here:
        ctx.decref(obj)  # the list holds its own reference now
    # on failure (no memory) nothing was appended: the interpreter redoes it and raises
    ctx.guard(b.icmp_signed("==", status, ir.Constant(I32, 0)), uop, before_exit=lambda: ctx.capi("PyErr_Clear"))


@lowers("_BUILD_LIST", "_BUILD_TUPLE")
def _build_list(ctx: LowerContext, uop: Uop) -> ir.Value:
    """PyList_New (PyTuple_New) and a new reference to each item, given to the list (a number boxed, or the
    very object it was read as); if an allocation failed, everything made is released and the trace leaves
    (the interpreter builds it again)."""
    is_list = uop.name == "_BUILD_LIST"
    b = ctx.builder
    null = ir.Constant(PTR, None)
    references = []
    for value in uop.args:
        obj = ctx.value(value) if value.kind.is_pointer else _same_object(ctx, value)
        if obj is None:
            obj = _box(ctx, value.kind, ctx.value(value))
        else:
            ctx.capi("Py_IncRef", obj)
        references.append(obj)
    made = ctx.capi("PyList_New" if is_list else "PyTuple_New", _i64(len(references)))
    ok = b.icmp_unsigned("!=", made, null)
    for obj in references:
        ok = b.and_(ok, b.icmp_unsigned("!=", obj, null))

    def release() -> None:
        for obj in [*references, made]:
            ctx.capi("Py_DecRef", obj)  # (NULL-safe)
        ctx.capi("PyErr_Clear")

    ctx.guard(ok, uop, before_exit=release)
    if references:
        if is_list:
            items = b.bitcast(_load_at(ctx, made, abi.LIST_ITEMS, PTR), PTR.as_pointer())
        else:
            items = b.bitcast(b.gep(made, [_i64(abi.TUPLE_ITEMS)], inbounds=True), PTR.as_pointer())
        for index, obj in enumerate(references):
            b.store(obj, b.gep(items, [_i64(index)], inbounds=True))
    return made


# --- builtins and math -------------------------------------------------------------------------------------


@lowers("_CALL_ABS_INT")
def _abs_int(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    (x,) = _args(ctx, uop)
    ctx.guard(b.icmp_signed("!=", x, _i64(INT_MIN)), uop)
    return b.select(b.icmp_signed("<", x, _i64(0)), b.neg(x), x)


@lowers("_CALL_ABS_FLOAT")
def _abs_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.intrinsic("llvm.fabs.f64", DOUBLE, ctx.value(uop.args[0]))


def _to_int(ctx: LowerContext, uop: Uop, rounded: ir.Value) -> ir.Value:
    """An integral double to i64, leaving for nan, inf and values past 64 bits (CPython makes a big int)."""
    b = ctx.builder
    fits = b.and_(b.fcmp_ordered(">=", rounded, _f64(-TWO_63)), b.fcmp_ordered("<", rounded, _f64(TWO_63)))
    ctx.guard(fits, uop)
    return b.fptosi(rounded, I64)


def _rounding(intrinsic: str) -> Lowering:
    def lower(ctx: LowerContext, uop: Uop) -> ir.Value:
        return _to_int(ctx, uop, ctx.intrinsic(intrinsic, DOUBLE, ctx.value(uop.args[0])))

    return lower


LOWERINGS["_CALL_FLOAT_TO_INT"] = _rounding("llvm.trunc.f64")
LOWERINGS["_CALL_ROUND_FLOAT"] = _rounding("llvm.roundeven.f64")  # round(): half to even
LOWERINGS["_CALL_MATH_FLOOR"] = _rounding("llvm.floor.f64")
LOWERINGS["_CALL_MATH_CEIL"] = _rounding("llvm.ceil.f64")

_INTRINSIC_MATH = {"sqrt": "llvm.sqrt.f64", "fabs": "llvm.fabs.f64"}


@lowers("_CALL_MATH_UNARY")
def _math_unary(ctx: LowerContext, uop: Uop) -> ir.Value:
    """A libm function as CPython's math module calls it: a nan from a non-nan argument is a domain error,
    an inf from a finite one a range error; both leave, and the interpreter raises."""
    b = ctx.builder
    (x,) = _args(ctx, uop)
    name = uop.operand
    if name in _INTRINSIC_MATH:
        result = ctx.intrinsic(_INTRINSIC_MATH[name], DOUBLE, x)
    else:
        result = _libm_call(ctx, name, x)
    inf = _f64(float("inf"))
    domain = b.and_(b.fcmp_unordered("uno", result, result), b.fcmp_ordered("ord", x, x))
    finite_x = b.fcmp_ordered("<", ctx.intrinsic("llvm.fabs.f64", DOUBLE, x), inf)
    infinite_result = b.fcmp_ordered("==", ctx.intrinsic("llvm.fabs.f64", DOUBLE, result), inf)
    ctx.guard(b.not_(b.or_(domain, b.and_(finite_x, infinite_result))), uop)
    return result


@lowers("_CALL_MATH_PREDICATE")
def _math_predicate(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    (x,) = _args(ctx, uop)
    magnitude = ctx.intrinsic("llvm.fabs.f64", DOUBLE, x)
    inf = _f64(float("inf"))
    if uop.operand == "isnan":
        return b.fcmp_unordered("uno", x, x)
    if uop.operand == "isinf":
        return b.fcmp_ordered("==", magnitude, inf)
    return b.fcmp_ordered("<", magnitude, inf)


@lowers("_CALL_BUILTIN_FLOAT")
def _call_builtin_float(ctx: LowerContext, uop: Uop) -> ir.Value:
    """Call a pure builtin through the C-API with boxed arguments; its float result is CPython's own."""
    b = ctx.builder
    boxed = [_box(ctx, v.kind, ctx.value(v)) for v in uop.args]

    def release_arguments() -> None:
        for obj in boxed:
            ctx.capi("Py_DecRef", obj)

    def clear_error() -> None:
        ctx.capi("PyErr_Clear")

    all_boxed = _true()
    for obj in boxed:
        all_boxed = b.and_(all_boxed, b.icmp_unsigned("!=", obj, ir.Constant(PTR, None)))
    ctx.guard(all_boxed, uop, before_exit=lambda: (release_arguments(), clear_error()))
    array = _entry_alloca(ctx, ir.ArrayType(PTR, max(len(boxed), 1)))
    for i, obj in enumerate(boxed):
        b.store(obj, b.gep(array, [ir.Constant(I32, 0), ir.Constant(I32, i)], inbounds=True))
    first = b.bitcast(array, PTR.as_pointer())
    result = ctx.capi("PyObject_Vectorcall", ctx.pointer(uop.operand), first, _i64(len(boxed)), ir.Constant(PTR, None))
    release_arguments()
    ctx.guard(b.icmp_unsigned("!=", result, ir.Constant(PTR, None)), uop, before_exit=clear_error)
    ctx.guard(_type_is(ctx, result, float), uop, before_exit=lambda: ctx.capi("Py_DecRef", result))
    value = _load_at(ctx, result, abi.FLOAT_VALUE, DOUBLE)
    ctx.capi("Py_DecRef", result)
    return value


def check_complete() -> None:
    """The table lowers exactly the uops declared to be lowered by it (``Lowering.TABLE``), each once."""
    table = {name for name, op in uops.UOPS.items() if op.lowering is uops.Lowering.TABLE}
    missing = table - set(LOWERINGS)
    assert not missing, f"uops without a lowering: {sorted(missing)}"
    extra = set(LOWERINGS) - table
    assert not extra, f"lowerings of uops the table does not lower: {sorted(extra)}"


__all__ = ["LOWERINGS", "check_complete", "llvm_type"]


# --- NumPy arrays and scalars (jit.arrays: the header's layout; jit.specialize_numpy: what the uops mean) ------

_STORAGE = {
    "float64": DOUBLE,
    "float32": ir.FloatType(),
    "int64": I64,
    "int32": I32,
    "uint8": ir.IntType(8),
    "bool": ir.IntType(8),
}


def _array_field(ctx: LowerContext, array: ir.Value, offset: int, ty: ir.Type) -> ir.Value:
    return _load_at(ctx, array, offset, ty)


def _array_vector(ctx: LowerContext, array: ir.Value, offset: int, axis: int) -> ir.Value:
    """dimensions[axis] or strides[axis] (offset: arrays.ARRAY_DIMENSIONS or arrays.ARRAY_STRIDES)."""
    b = ctx.builder
    vector = b.bitcast(_array_field(ctx, array, offset, PTR), I64.as_pointer())
    return b.load(b.gep(vector, [_i64(axis)], inbounds=True))


@lowers("_GUARD_ARRAY")
def _guard_array(ctx: LowerContext, uop: Uop) -> None:
    """Exactly numpy.ndarray, its dtype's scalar type in native byte order, ndim, aligned (and C-contiguous)."""
    b = ctx.builder
    spec = uop.operand
    np = arrays.numpy_module()
    array = ctx.value(uop.args[0])
    ok = _type_is(ctx, array, np.ndarray)
    descr = _array_field(ctx, array, arrays.ARRAY_DESCR, PTR)
    typeobj = _load_at(ctx, descr, arrays.DESCR_TYPEOBJ, PTR)
    ok = b.and_(ok, b.icmp_unsigned("==", typeobj, ctx.pointer(np.dtype(spec.dtype).type)))
    byteorder = _load_at(ctx, descr, arrays.DESCR_BYTEORDER, ir.IntType(8))
    ok = b.and_(ok, b.icmp_unsigned("!=", byteorder, ir.Constant(ir.IntType(8), ord(">"))))
    nd = _array_field(ctx, array, arrays.ARRAY_ND, I32)
    ok = b.and_(ok, b.icmp_signed("==", nd, ir.Constant(I32, spec.ndim)))
    mask = arrays.ALIGNED | (arrays.C_CONTIGUOUS if spec.contiguous else 0)
    flags = _array_field(ctx, array, arrays.ARRAY_FLAGS, I32)
    ok = b.and_(ok, b.icmp_unsigned("==", b.and_(flags, ir.Constant(I32, mask)), ir.Constant(I32, mask)))
    ctx.guard(ok, uop)


@lowers("_GUARD_ARRAY_WRITEABLE")
def _guard_array_writeable(ctx: LowerContext, uop: Uop) -> None:
    b = ctx.builder
    flags = _array_field(ctx, ctx.value(uop.args[0]), arrays.ARRAY_FLAGS, I32)
    writeable = ir.Constant(I32, arrays.WRITEABLE)
    ctx.guard(b.icmp_unsigned("!=", b.and_(flags, writeable), ir.Constant(I32, 0)), uop)


@lowers("_ARRAY_DATA")
def _array_data(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.ptrtoint(_array_field(ctx, ctx.value(uop.args[0]), arrays.ARRAY_DATA, PTR), I64)


@lowers("_ARRAY_DIM")
def _array_dim(ctx: LowerContext, uop: Uop) -> ir.Value:
    return _array_vector(ctx, ctx.value(uop.args[0]), arrays.ARRAY_DIMENSIONS, uop.operand)


@lowers("_ARRAY_STRIDE")
def _array_stride(ctx: LowerContext, uop: Uop) -> ir.Value:
    return _array_vector(ctx, ctx.value(uop.args[0]), arrays.ARRAY_STRIDES, uop.operand)


@lowers("_ARRAY_SIZE")
def _array_size(ctx: LowerContext, uop: Uop) -> ir.Value:
    array = ctx.value(uop.args[0])
    size: ir.Value = _i64(1)
    for axis in range(uop.operand.ndim):
        size = ctx.builder.mul(size, _array_vector(ctx, array, arrays.ARRAY_DIMENSIONS, axis))
    return size


@lowers("_ARRAY_INDEX")
def _array_index(ctx: LowerContext, uop: Uop) -> ir.Value:
    """NumPy's index check: negative indices count from the end; out of range leaves (IndexError)."""
    b = ctx.builder
    dim, index = _args(ctx, uop)
    index = b.select(b.icmp_signed("<", index, _i64(0)), b.add(index, dim), index)
    ctx.guard(b.icmp_unsigned("<", index, dim), uop)  # unsigned: still negative is out of range too
    return index


@lowers("_ARRAY_INDEX_IN_RANGE")
def _array_index_in_range(ctx: LowerContext, uop: Uop) -> ir.Value:
    dim, index = _args(ctx, uop)
    ctx.guard(ctx.builder.icmp_unsigned("<", index, dim), uop)  # (unsigned: a negative index leaves too)
    return index


@lowers("_GUARD_INDEX_RANGE")
def _guard_index_range(ctx: LowerContext, uop: Uop) -> None:
    """low <= base < dimension - high for each dimension (in i128: a broadcast view's dimension may be near
    2**63)."""
    b = ctx.builder
    base, low, *pairs = _args(ctx, uop)
    ok = b.icmp_signed(">=", base, low)
    for dim, high in zip(pairs[::2], pairs[1::2]):
        limit = b.sub(b.sext(dim, I128), b.sext(high, I128))
        ok = b.and_(ok, b.icmp_signed("<", b.sext(base, I128), limit))
    ctx.guard(ok, uop)


@lowers("_BINARY_OP_ADD_INT_IN_RANGE")
def _add_in_range(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.add(*_args(ctx, uop), flags=["nsw"])


@lowers("_BINARY_OP_SUBTRACT_INT_IN_RANGE")
def _subtract_in_range(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.sub(*_args(ctx, uop), flags=["nsw"])


def _element_address(ctx: LowerContext, spec: arrays.ArraySpec, inputs: list[ir.Value]) -> ir.Value:
    """The address of an element from _ARRAY_LOAD's inputs (data, checked indices, then the dimensions after
    the first or the strides): row-major from the shape for a C-contiguous array, else from its strides."""
    b = ctx.builder
    data, indices, rest = inputs[0], inputs[1 : 1 + spec.ndim], inputs[1 + spec.ndim :]
    if spec.contiguous:
        linear = indices[0]
        for axis in range(1, spec.ndim):
            linear = b.add(b.mul(linear, rest[axis - 1], flags=["nsw"]), indices[axis], flags=["nsw"])
        offset = b.mul(linear, _i64(spec.item.itemsize), flags=["nsw"])
    else:
        offset = b.mul(indices[0], rest[0], flags=["nsw"])
        for axis in range(1, spec.ndim):
            offset = b.add(offset, b.mul(indices[axis], rest[axis], flags=["nsw"]), flags=["nsw"])
    address = b.inttoptr(b.add(data, offset), _STORAGE[spec.dtype].as_pointer())
    return address


@lowers("_ARRAY_LOAD")
def _array_load(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    spec = uop.operand
    loaded = b.load(_element_address(ctx, spec, _args(ctx, uop)), align=spec.item.itemsize)
    kind = uop.out.kind  # type: ignore[union-attr]
    if kind == Kind.NP_BOOL:
        return b.icmp_unsigned("!=", loaded, ir.Constant(loaded.type, 0))
    if kind == Kind.NP_INT32:
        return b.sext(loaded, I64)
    if kind == Kind.NP_UINT8:
        return b.zext(loaded, I64)
    return loaded


def _in_range(ctx: LowerContext, value: ir.Value, kind: Kind) -> ir.Value:
    """Does an i64 hold a value of NumPy int kind's range?"""
    b = ctx.builder
    low, high = NUMPY_INT_RANGES[kind]
    return b.and_(b.icmp_signed(">=", value, _i64(low)), b.icmp_signed("<=", value, _i64(high)))


def _store_conversion(ctx: LowerContext, uop: Uop, value: Value, dtype: str) -> ir.Value:
    """value as an element of dtype, as NumPy converts it; leaves where NumPy raises or warns."""
    b = ctx.builder
    native = ctx.value(value)
    storage = _STORAGE[dtype]
    if dtype in ("int32", "uint8"):  # (from a Python int in its range, a bool, or a NumPy int that fits)
        if native.type == I1:
            return b.zext(native, storage)
        if value.kind == Kind.INT:
            ctx.guard(_in_range(ctx, native, Kind.NP_INT32 if dtype == "int32" else Kind.NP_UINT8), uop)
        return b.trunc(native, storage)
    if native.type == FLOAT32:  # (exactly as a double)
        native = b.fpext(native, DOUBLE)
    is_double = native.type == DOUBLE
    if dtype == "float32":
        if value.kind == Kind.NP_FLOAT32:
            return ctx.value(value)
        if is_double:  # rounded; overflow (NumPy warns: "overflow encountered in cast") and underflow leave
            result = b.fptrunc(native, FLOAT32)
            ctx.guard(_event_free(ctx, result, True, b.fcmp_ordered("==", native, _f64(0.0))), uop)
            return result
        return b.sitofp(native, FLOAT32) if native.type == I64 else b.uitofp(native, FLOAT32)
    if dtype == "bool":
        if is_double:
            truth = b.fcmp_unordered("!=", native, _f64(0.0))  # nan is true
        elif native.type == I1:
            truth = native
        else:
            truth = b.icmp_signed("!=", native, _i64(0))
        return b.zext(truth, storage)
    if native.type == I1:
        native = b.zext(native, I64)
    if dtype == "float64":
        return native if is_double else b.sitofp(native, DOUBLE)
    assert dtype == "int64", dtype
    if not is_double:
        return native
    # truncation toward zero, as a C cast; NaN and values outside int64 leave (ValueError, OverflowError)
    in_range = b.and_(b.fcmp_ordered(">=", native, _f64(-TWO_63)), b.fcmp_ordered("<", native, _f64(TWO_63)))
    ctx.guard(in_range, uop)
    return b.fptosi(native, I64)


@lowers("_ARRAY_STORE")
def _array_store(ctx: LowerContext, uop: Uop) -> None:
    b = ctx.builder
    value, *inputs = uop.args
    spec = uop.operand
    converted = _store_conversion(ctx, uop, value, spec.dtype)
    address = _element_address(ctx, spec, [ctx.value(v) for v in inputs])
    b.store(converted, address, align=spec.item.itemsize)


@lowers("_NP_CAST")
def _np_cast(ctx: LowerContext, uop: Uop) -> ir.Value:
    """Between numeric kinds of the same value, exactly or rounded as NumPy casts: ints (and bools) to a
    double or a float, a float to a double, NumPy scalars to the Python numbers of the same width."""
    b = ctx.builder
    value = ctx.value(uop.args[0])
    target = llvm_type(uop.out.kind)  # type: ignore[union-attr]
    if value.type == target:
        return value
    if target in (DOUBLE, FLOAT32):
        if value.type == FLOAT32:
            return b.fpext(value, DOUBLE)
        return b.sitofp(value, target) if value.type == I64 else b.uitofp(value, target)
    assert value.type == I1 and target == I64
    return b.zext(value, I64)


FLT_MIN = 1.1754943508222875e-38


def _event_free(ctx: LowerContext, result: ir.Value, tiny_matters: bool, zero_ok: ir.Value) -> ir.Value:
    """No floating-point event NumPy would report (a double or a float result): the result is finite, and
    (for * and /) not tiny unless it is an exact zero (zero_ok: an operand made it zero). A nan or inf
    operand leaves too (conservative: the interpreter redoes it)."""
    b = ctx.builder
    ty = result.type
    smallest, suffix = (DBL_MIN, "f64") if ty == DOUBLE else (FLT_MIN, "f32")
    magnitude = ctx.intrinsic(f"llvm.fabs.{suffix}", ty, result)
    ok = b.fcmp_ordered("<", magnitude, ir.Constant(ty, float("inf")))
    if tiny_matters:
        normal = b.fcmp_ordered(">=", magnitude, ir.Constant(ty, smallest))
        zero = b.and_(b.fcmp_ordered("==", result, ir.Constant(ty, 0.0)), zero_ok)
        ok = b.and_(ok, b.or_(normal, zero))
    return ok


def _np_float_op(op: str) -> Lowering:
    """numpy.float64 or numpy.float32 arithmetic (by the inputs' type), leaving on every floating-point event."""

    def lower(ctx: LowerContext, uop: Uop) -> ir.Value:
        b = ctx.builder
        x, y = _args(ctx, uop)
        zero = ir.Constant(x.type, 0.0)
        if op == "fdiv":
            ctx.guard(b.fcmp_unordered("!=", y, zero), uop)  # division by zero: NumPy's warning
        result = getattr(b, op)(x, y)
        if op == "fmul":
            zero_ok = b.or_(b.fcmp_ordered("==", x, zero), b.fcmp_ordered("==", y, zero))
        elif op == "fdiv":
            zero_ok = b.fcmp_ordered("==", x, zero)
        else:
            zero_ok = _true()
        ctx.guard(_event_free(ctx, result, op in ("fmul", "fdiv"), zero_ok), uop)
        return result

    return lower


for _width in ("FLOAT64", "FLOAT32"):
    LOWERINGS[f"_NP_BINARY_OP_ADD_{_width}"] = _np_float_op("fadd")
    LOWERINGS[f"_NP_BINARY_OP_SUBTRACT_{_width}"] = _np_float_op("fsub")
    LOWERINGS[f"_NP_BINARY_OP_MULTIPLY_{_width}"] = _np_float_op("fmul")
    LOWERINGS[f"_NP_BINARY_OP_TRUE_DIVIDE_{_width}"] = _np_float_op("fdiv")


@lowers("_NP_TO_FLOAT32")
def _np_to_float32(ctx: LowerContext, uop: Uop) -> ir.Value:
    """A double rounded to float32 (NumPy's cast of a Python float); leaves where the cast overflows or
    underflows (NumPy reports those), and for nan and infinities (conservative)."""
    b = ctx.builder
    x = ctx.value(uop.args[0])
    result = b.fptrunc(x, FLOAT32)
    ctx.guard(_event_free(ctx, result, True, b.fcmp_ordered("==", x, _f64(0.0))), uop)
    return result


@lowers("_NP_UNARY_NEGATIVE_FLOAT32")
def _np_neg_float32(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.fneg(ctx.value(uop.args[0]))


@lowers("_NP_ABS_FLOAT32")
def _np_abs_float32(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.intrinsic("llvm.fabs.f32", FLOAT32, ctx.value(uop.args[0]))


LOWERINGS["_NP_BINARY_OP_ADD_INT64"] = _with_overflow("sadd")
LOWERINGS["_NP_BINARY_OP_SUBTRACT_INT64"] = _with_overflow("ssub")
LOWERINGS["_NP_BINARY_OP_MULTIPLY_INT64"] = _with_overflow("smul")


@lowers("_NP_COMPARE_OP_FLOAT64", "_NP_COMPARE_OP_FLOAT32")
def _np_compare_float64(ctx: LowerContext, uop: Uop) -> ir.Value:
    x, y = _args(ctx, uop)
    if uop.operand == CompareOp.NE:
        return ctx.builder.fcmp_unordered("!=", x, y)
    return ctx.builder.fcmp_ordered(_ICMP[uop.operand], x, y)


@lowers("_NP_COMPARE_OP_INT64")
def _np_compare_int64(ctx: LowerContext, uop: Uop) -> ir.Value:
    x, y = _args(ctx, uop)
    return ctx.builder.icmp_signed(_ICMP[uop.operand], x, y)


@lowers("_NP_UNARY_NEGATIVE_FLOAT64")
def _np_neg_float64(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.fneg(ctx.value(uop.args[0]))


@lowers("_NP_ABS_FLOAT64")
def _np_abs_float64(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.intrinsic("llvm.fabs.f64", DOUBLE, ctx.value(uop.args[0]))


def _not_int64_min(ctx: LowerContext, uop: Uop) -> ir.Value:
    """The input, after leaving if it is -2**63 (its negation and absolute value overflow: NumPy warns)."""
    value = ctx.value(uop.args[0])
    ctx.guard(ctx.builder.icmp_signed("!=", value, _i64(INT_MIN)), uop)
    return value


@lowers("_NP_UNARY_NEGATIVE_INT64")
def _np_neg_int64(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.neg(_not_int64_min(ctx, uop))


@lowers("_NP_ABS_INT64")
def _np_abs_int64(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    value = _not_int64_min(ctx, uop)
    return b.select(b.icmp_signed("<", value, _i64(0)), b.neg(value), value)


def _np_small_int_op(op: str) -> Lowering:
    """numpy.int32 or numpy.uint8 arithmetic on i64 operands within 32 bits (exact in i64), leaving where the
    result is outside the output kind's range (NumPy warns: overflow)."""

    def lower(ctx: LowerContext, uop: Uop) -> ir.Value:
        x, y = _args(ctx, uop)
        result = getattr(ctx.builder, op)(x, y)
        ctx.guard(_in_range(ctx, result, uop.out.kind), uop)  # type: ignore[union-attr]
        return result

    return lower


LOWERINGS["_NP_BINARY_OP_ADD_SMALL_INT"] = _np_small_int_op("add")
LOWERINGS["_NP_BINARY_OP_SUBTRACT_SMALL_INT"] = _np_small_int_op("sub")
LOWERINGS["_NP_BINARY_OP_MULTIPLY_SMALL_INT"] = _np_small_int_op("mul")


@lowers("_NP_CHECK_RANGE")
def _np_check_range(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(_in_range(ctx, ctx.value(uop.args[0]), uop.operand), uop)


# --- NumPy's math ufuncs on scalars (jit.ufuncs; jit.specialize_ufunc: the result types) ----------------------


def _suffix(ty: ir.Type) -> str:
    return "f32" if ty == FLOAT32 else "f64"


@lowers("_NP_SQRT")
def _np_sqrt(ctx: LowerContext, uop: Uop) -> ir.Value:
    """Correctly rounded, as NumPy's loops compute it; below zero (-inf too) NumPy reports invalid: leave
    (a NaN gives NaN, no event; -0.0 gives -0.0)."""
    b = ctx.builder
    x = ctx.value(uop.args[0])
    ctx.guard(b.fcmp_unordered(">=", x, ir.Constant(x.type, 0.0)), uop)
    return ctx.intrinsic(f"llvm.sqrt.{_suffix(x.type)}", x.type, x)


@lowers("_NP_UFUNC_EXACT")
def _np_ufunc_exact(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    x = ctx.value(uop.args[0])
    name = uop.operand
    if x.type != I64:
        intrinsic = {"absolute": "fabs", "floor": "floor", "ceil": "ceil"}[name]
        return ctx.intrinsic(f"llvm.{intrinsic}.{_suffix(x.type)}", x.type, x)
    assert name == "absolute", name
    magnitude = b.select(b.icmp_signed("<", x, _i64(0)), b.sub(_i64(0), x), x)  # (wraps at -2**63, as NumPy)
    if uop.out.kind == Kind.NP_INT32:  # type: ignore[union-attr]
        return b.sext(b.trunc(magnitude, I32), I64)  # (abs(-2**31) wraps to -2**31, as NumPy's int32 loop)
    return magnitude


@lowers("_NP_MINMAX")
def _np_minmax(ctx: LowerContext, uop: Uop) -> ir.Value:
    """NumPy's minimum/maximum loops: the first operand if it is strictly smaller (larger) or a NaN, else the
    second (so a NaN on either side wins, and of equal values, -0.0 and 0.0 too, the second is the result)."""
    b = ctx.builder
    x, y = _args(ctx, uop)
    wanted = "<" if uop.operand == "minimum" else ">"
    if x.type == I64:
        return b.select(b.icmp_signed(wanted, x, y), x, y)
    first = b.or_(b.fcmp_ordered(wanted, x, y), b.fcmp_unordered("uno", x, x))
    return b.select(first, x, y)


@lowers("_NP_UFUNC_LOOP")
def _np_ufunc_loop(ctx: LowerContext, uop: Uop) -> ir.Value:
    """Call NumPy's inner loop of the ufunc on one element (args = {&in, &out}, dimensions = {1}, steps =
    {size, size}), the floating-point status flags cleared before and tested after, as NumPy does; leave if
    one of NumPy's events is flagged (the interpreter calls the ufunc again, which reports it)."""
    b = ctx.builder
    x = ctx.value(uop.args[0])
    char = "f" if x.type == FLOAT32 else "d"
    loop = ufuncs.inner_loop(uop.operand, char)
    events, fenv = ufuncs.fe_events(), ufuncs.fenv_functions()
    assert loop is not None and events is not None and fenv is not None, "checked by the recorder"
    cell = _entry_alloca(ctx, ir.ArrayType(x.type, 2))
    zero = ir.Constant(I32, 0)
    into, out = (b.gep(cell, [zero, ir.Constant(I32, k)], inbounds=True) for k in (0, 1))
    args = _entry_alloca(ctx, ir.ArrayType(PTR, 2))
    for k, address in enumerate((into, out)):
        b.store(b.bitcast(address, PTR), b.gep(args, [zero, ir.Constant(I32, k)], inbounds=True))
    sizes = _entry_alloca(ctx, ir.ArrayType(I64, 3))  # dimensions[0], steps[0], steps[1]
    size = 4 if char == "f" else 8
    for k, value in enumerate((1, size, size)):
        b.store(_i64(value), b.gep(sizes, [zero, ir.Constant(I32, k)], inbounds=True))
    b.store(x, into)
    fenv_type = ir.FunctionType(I32, [I32])
    clear, test = (
        b.bitcast(ctx.symbols.address(name, address), fenv_type.as_pointer())
        for name, address in zip(("feclearexcept", "fetestexcept"), fenv)
    )
    mask = ir.Constant(I32, events)
    b.call(clear, [mask])
    loop_type = ir.FunctionType(ir.VoidType(), [PTR.as_pointer(), I64.as_pointer(), I64.as_pointer(), PTR])
    where = f"np_{uop.operand}_{char}"  # (symbols, not addresses: codegen.symbols)
    function = b.bitcast(ctx.symbols.address(where, loop.function), loop_type.as_pointer())
    dimensions = b.gep(sizes, [zero, zero], inbounds=True)
    steps = b.gep(sizes, [zero, ir.Constant(I32, 1)], inbounds=True)
    data = ctx.symbols.address(f"{where}_data", loop.data) if loop.data else ir.Constant(PTR, None)
    b.call(function, [b.bitcast(args, PTR.as_pointer()), dimensions, steps, data])
    flagged = b.call(test, [mask])
    result = b.load(out)
    ctx.guard(b.icmp_signed("==", flagged, ir.Constant(I32, 0)), uop)
    return result
