"""Turning one operation on typed trace values into uops, specialized on the kinds observed.

The recorder (``jit.recorder``, seen here as an ``Emitter``) tracks the tier-1 stack and slots; this module decides, for an operator or a
call, which uops compute it with CPython's exact result, or aborts the recording (``Abort``) when native code
cannot. Every guard emitted here leaves to the interpreter at the start of the current tier-1 instruction.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import Any, Protocol

from jit.aborts import Abort, Reason
from jit.frontend.operators import BinOp, CompareOp, UnaryOp
from jit.kinds import INT64_MAX, INT64_MIN, Kind
from jit.trace import Value


class Emitter(Protocol):
    """What this module needs from the recorder (``jit.recorder.Recorder``): emitting uops at the current
    instruction (a guard's exit resumes there), constants, and virtual ranges (``range(...)`` not built)."""

    def emit(
        self,
        name: str,
        args: tuple[Value, ...] = (),
        *,
        kind: Kind | None = None,
        operand: Any = None,
        leaves_loop: bool = False,
        propagate: bool = False,
    ) -> Value: ...

    def const(self, value: Any, kind: Kind | None = None) -> Value: ...

    #: the largest magnitude each i128 value of the trace (Kind.WIDE_INT) can have, by value id
    wide_bounds: dict[int, int]

    def virtual_range(self, start: Value, stop: Value, step: Value) -> Value: ...


I, F, B = Kind.INT, Kind.FLOAT, Kind.BOOL


def as_int(r: Emitter, v: Value) -> Value:
    if v.kind == B:
        return r.emit("_CONVERT_BOOL_TO_INT", (v,))
    return v


def as_float(r: Emitter, v: Value) -> Value:
    v = as_int(r, v)
    if v.kind == I:
        return r.emit("_CONVERT_INT_TO_FLOAT", (v,))
    return v


def to_float(r: Emitter, v: Value) -> Value:
    """A number as a float, as CPython converts it: an int past 64 bits too (a guard leaves where it is too large
    for a float, and the interpreter raises CPython's OverflowError)."""
    if v.kind in BEYOND_64_BITS:
        return r.emit("_CONVERT_INT_OBJECT_TO_FLOAT", (as_int_object(r, v),))
    return as_float(r, v)


def python_number(r: Emitter, v: Value) -> Value:
    """A numpy.float64 or numpy.int64 as the Python float or int it converts to (what math functions and int()
    compute with); other values as they are."""
    if v.kind in (Kind.NP_FLOAT64, Kind.NP_FLOAT32):
        return r.emit("_NP_CAST", (v,), kind=F)
    if v.kind.is_numpy_int:
        return r.emit("_NP_CAST", (v,), kind=I)
    return v


def observe(what: str, compute: Callable[[], Any], kind: Kind | None = None) -> Any:
    """Compute an operation on the values the interpreter is about to use, as CPython will. A guard emitted
    for it must hold for those values: if the operation raises, or its result does not fit the uop's
    kind (an int past 64 bits), the compiled guard would fail on every run, so recording stops here."""
    try:
        result = compute()
    except Exception as exc:
        raise Abort(Reason.RAISES, what=what, exception=type(exc).__name__) from None
    if kind == I and not (type(result) in (int, bool) and INT64_MIN <= result <= INT64_MAX):
        raise Abort(Reason.INT_RESULT_TOO_BIG, what=what)
    if kind == F and type(result) is not float:
        raise Abort(Reason.RESULT_TYPE, what=what, type=type(result).__name__)
    return result


def fits_int64(value: Any) -> bool:
    return type(value) in (int, bool) and INT64_MIN <= value <= INT64_MAX


WIDE_LIMIT = 2**127 - 1  # the largest magnitude an i128 holds
_NARROWING = {Kind.INT_OBJECT: "_NARROW_INT_OBJECT", Kind.WIDE_INT: "_NARROW_WIDE"}


def narrow(r: Emitter, v: Value, actual: Any, what: str) -> Value:
    """An int object or an i128 as an int: a guard that it fits in 64 bits (it must here, or recording
    stops)."""
    name = _NARROWING.get(v.kind)
    if name is None:
        return v
    if not fits_int64(actual):
        raise Abort(Reason.INT_RESULT_TOO_BIG, what=what)
    return r.emit(name, (v,))


def as_int_object(r: Emitter, v: Value) -> Value:
    """An int (a bool, an i128) as an int object: boxed by native code, or the constant object itself."""
    if v.kind == Kind.INT_OBJECT:
        return v
    if v.is_const:
        return r.const(int(v.const), Kind.INT_OBJECT)
    if v.kind == Kind.WIDE_INT:
        return r.emit("_BOX_WIDE", (v,))
    return r.emit("_BOX_INT", (as_int(r, v),))


def as_wide(r: Emitter, v: Value) -> Value:
    if v.kind == Kind.WIDE_INT:
        return v
    if v.is_const:
        return r.const(int(v.const), Kind.WIDE_INT)
    return r.emit("_WIDEN_INT", (as_int(r, v),))


def _magnitude(r: Emitter, v: Value) -> int:
    """The largest magnitude v can have (an int: 2**63; an i128: what the recorder proved, if it knows)."""
    if v.is_const:
        return abs(int(v.const))
    if v.kind == Kind.WIDE_INT:
        return r.wide_bounds.get(v.id, WIDE_LIMIT)
    return 2**63


def _number(v: Value, what: str) -> None:
    if not v.kind.is_number:
        raise Abort(Reason.OPERAND_KIND, what=what, kind=v.kind.short)


# --- binary operators ------------------------------------------------------------------------------------


# int operations CPython's own int type computes past 64 bits, natively through the C-API
_INT_OBJECT_OPS = frozenset(
    {
        BinOp.ADD,
        BinOp.SUB,
        BinOp.MUL,
        BinOp.FLOORDIV,
        BinOp.MOD,
        BinOp.LSHIFT,
        BinOp.RSHIFT,
        BinOp.AND,
        BinOp.OR,
        BinOp.XOR,
        BinOp.POW,  # (a non-negative exponent: the lowering leaves where the result is not an int)
    }
)
#: the kinds of ints past 64 bits: operand-stack temporaries, narrowed back to an int wherever else they go
BEYOND_64_BITS = (Kind.INT_OBJECT, Kind.WIDE_INT)
_INTEGRAL = (I, B, *BEYOND_64_BITS)


def binary(r: Emitter, op: BinOp, a: Value, b: Value, actual_a: Any, actual_b: Any) -> Value:
    op = op.base
    what = f"operator {op}"
    if a.kind in BEYOND_64_BITS or b.kind in BEYOND_64_BITS:
        if op in _INT_OBJECT_OPS and a.kind in _INTEGRAL and b.kind in _INTEGRAL:
            if op == BinOp.POW and actual_b < 0:
                raise Abort(Reason.NEGATIVE_INT_POWER)
            observe(what, lambda: op.fn(actual_a, actual_b))
            return _past_64_bits(r, op, a, b)
        if op == BinOp.TRUEDIV and a.kind in _INTEGRAL and b.kind in _INTEGRAL:
            return _true_divide_ints(r, a, b, actual_a, actual_b)
        if F in (a.kind, b.kind) and a.kind in (F, *_INTEGRAL) and b.kind in (F, *_INTEGRAL) and op in _FLOAT_OPS:
            # float op int: CPython converts the int to a float first (OverflowError if it is too large)
            observe(what, lambda: (float(actual_a), float(actual_b)))
            a, b = to_float(r, a), to_float(r, b)
        else:
            a, b = narrow(r, a, actual_a, what), narrow(r, b, actual_b, what)
    _number(a, f"operator {op}")
    _number(b, f"operator {op}")
    if op in (BinOp.AND, BinOp.OR, BinOp.XOR) and a.kind == B and b.kind == B:
        return r.emit(f"_BINARY_OP_{op.uop_name}_BOOL", (a, b))
    if op == BinOp.MATMUL:
        raise Abort(Reason.MATMUL)
    if a.kind != F and b.kind != F:
        if op == BinOp.POW and actual_b < 0:
            raise Abort(Reason.NEGATIVE_INT_POWER)
        if op == BinOp.TRUEDIV:
            observe(what, lambda: op.fn(actual_a, actual_b), F)
            if max(abs(actual_a), abs(actual_b)) > 2**53:
                return _true_divide_ints(r, a, b, actual_a, actual_b)
        elif op in _INT_OBJECT_OPS:
            if not fits_int64(observe(what, lambda: op.fn(actual_a, actual_b))):
                return _past_64_bits(r, op, a, b)
        else:
            observe(what, lambda: op.fn(actual_a, actual_b), I)
        a, b = as_int(r, a), as_int(r, b)
        r.emit("_GUARD_BOTH_INT", (a, b))
        return r.emit(f"_BINARY_OP_{op.uop_name}_INT", (a, b))
    if op in (BinOp.LSHIFT, BinOp.RSHIFT, BinOp.AND, BinOp.OR, BinOp.XOR):
        raise Abort(Reason.FLOAT_BITWISE, op=op)
    x, y = float(actual_a), float(actual_b)
    observe(what, lambda: op.fn(x, y), F)
    if op == BinOp.POW and not _native_float_pow(x, y):
        raise Abort(Reason.FLOAT_POWER)
    a, b = as_float(r, a), as_float(r, b)
    r.emit("_GUARD_BOTH_FLOAT", (a, b))
    return r.emit(f"_BINARY_OP_{op.uop_name}_FLOAT", (a, b))


# the operators a float computes with an int operand converted to a float
_FLOAT_OPS = frozenset({BinOp.ADD, BinOp.SUB, BinOp.MUL, BinOp.TRUEDIV, BinOp.FLOORDIV, BinOp.MOD, BinOp.POW})


def _true_divide_ints(r: Emitter, a: Value, b: Value, actual_a: Any, actual_b: Any) -> Value:
    """int / int past 2**53: CPython's correctly rounded division of the int objects (ZeroDivisionError, or an
    OverflowError for a quotient too large for a float, leaves and the interpreter raises it)."""
    observe("operator /", lambda: actual_a / actual_b, F)
    return r.emit("_BINARY_OP_TRUEDIV_INT_OBJECT", (as_int_object(r, a), as_int_object(r, b)))


def _past_64_bits(r: Emitter, op: BinOp, a: Value, b: Value) -> Value:
    """An int operation whose result may leave 64 bits (observed by the caller): in i128 where the magnitudes
    provably stay below 2**127 (no check needed), else on int objects through CPython's own int type. Either
    result is narrowed back to an int where it is stored or used as one."""
    if Kind.INT_OBJECT not in (a.kind, b.kind):
        wide = _wide(r, op, a, b)
        if wide is not None:
            return wide
    return r.emit("_BINARY_OP_INT_OBJECT", (as_int_object(r, a), as_int_object(r, b)), operand=op)


def _wide(r: Emitter, op: BinOp, a: Value, b: Value) -> Value | None:
    ma, mb = _magnitude(r, a), _magnitude(r, b)
    if op == BinOp.MOD and b.kind in (I, B):  # |a % b| < |b|: an int again
        return r.emit("_BINARY_OP_REMAINDER_WIDE", (as_wide(r, a), as_int(r, b)))
    if op in (BinOp.ADD, BinOp.SUB):
        bound = ma + mb
    elif op == BinOp.MUL:
        bound = ma * mb
    else:
        return None
    if bound > WIDE_LIMIT:
        return None
    out = r.emit(f"_BINARY_OP_{op.uop_name}_WIDE", (as_wide(r, a), as_wide(r, b)))
    r.wide_bounds[out.id] = bound
    return out


def _native_float_pow(x: float, y: float) -> bool:
    """Mirror of the guards in the lowering of _BINARY_OP_POWER_FLOAT."""
    if y == 0:
        return True
    if not (math.isfinite(x) and math.isfinite(y)):
        return False
    if x == 0:
        return y > 0
    if x < 0 and y != math.floor(y):
        return False
    result = abs(x) ** y if abs(x) != 1.0 else 1.0
    return 2.2250738585072014e-308 <= abs(result) < math.inf


# --- comparisons -----------------------------------------------------------------------------------------

_MIRROR = {
    CompareOp.LT: CompareOp.GT,
    CompareOp.GT: CompareOp.LT,
    CompareOp.LE: CompareOp.GE,
    CompareOp.GE: CompareOp.LE,
    CompareOp.EQ: CompareOp.EQ,
    CompareOp.NE: CompareOp.NE,
}


def compare(r: Emitter, op: CompareOp, a: Value, b: Value) -> Value:
    if op in (CompareOp.IS, CompareOp.IS_NOT):
        return _identity(r, op, a, b)
    if op in (CompareOp.IN, CompareOp.NOT_IN):
        if a.kind == Kind.STR and b.kind in (Kind.DICT, Kind.STR):
            name = "_CONTAINS_DICT_STR" if b.kind == Kind.DICT else "_CONTAINS_STR"
            found = r.emit(name, (b, a))
            return found if op == CompareOp.IN else r.emit("_UNARY_NOT", (found,))
        raise Abort(Reason.OPERATOR, op=op)
    if a.kind == Kind.STR and b.kind == Kind.STR and op not in (CompareOp.IS, CompareOp.IS_NOT):
        return r.emit("_COMPARE_OP_STR", (a, b), operand=op)
    if Kind.NONE in (a.kind, b.kind) and op in (CompareOp.EQ, CompareOp.NE):
        if a.kind.is_number or b.kind.is_number or a.kind == b.kind:
            equal = a.kind == b.kind
            return r.const(equal if op == CompareOp.EQ else not equal)
    _number(a, f"comparison {op}")
    _number(b, f"comparison {op}")
    if a.kind != F and b.kind != F:
        return r.emit("_COMPARE_OP_INT", (as_int(r, a), as_int(r, b)), operand=op)
    if a.kind == F and b.kind == F:
        return r.emit("_COMPARE_OP_FLOAT", (a, b), operand=op)
    if a.kind == F:  # float op int: the same test as int (mirrored op) float
        return r.emit("_COMPARE_OP_INT_FLOAT", (as_int(r, b), a), operand=_MIRROR[op])
    return r.emit("_COMPARE_OP_INT_FLOAT", (as_int(r, a), b), operand=op)


_ORDERINGS = frozenset({CompareOp.LT, CompareOp.LE, CompareOp.EQ, CompareOp.NE, CompareOp.GT, CompareOp.GE})


def compares_int_objects(op: CompareOp, a: Value, b: Value) -> bool:
    """A comparison of an int past 64 bits (an int object or an i128) with an int or a float: compared as int
    objects (not narrowed to 64 bits, which such an int would not fit), or exactly with the float."""
    return (
        op in _ORDERINGS
        and (a.kind in BEYOND_64_BITS or b.kind in BEYOND_64_BITS)
        and a.kind in (F, *_INTEGRAL)
        and b.kind in (F, *_INTEGRAL)
    )


def compare_int_objects(r: Emitter, op: CompareOp, a: Value, b: Value) -> Value:
    """CPython's comparison of two ints, one past 64 bits (``compares_int_objects``). A constant outside 64 bits
    against an int that fits in them compares as 0 does (`h > 2**80` is False for every 64-bit h)."""
    if b.kind == F:  # (CPython compares an int with a float exactly, whatever their magnitudes)
        return r.emit("_COMPARE_OP_INT_OBJECT_FLOAT", (as_int_object(r, a), b), operand=op)
    if a.kind == F:
        return r.emit("_COMPARE_OP_INT_OBJECT_FLOAT", (as_int_object(r, b), a), operand=_MIRROR[op])
    for x, y, flip in ((a, b, False), (b, a, True)):
        if y.is_const and not fits_int64(y.const) and x.kind in (I, B):
            return r.const(op.fn(y.const, 0) if flip else op.fn(0, y.const))
    return r.emit("_COMPARE_OP_INT_OBJECT", (as_int_object(r, a), as_int_object(r, b)), operand=op)


#: the ints CPython shares (every exact int of these values is one object)
SMALL_INTS = (-5, 256)


def _identity(r: Emitter, op: CompareOp, a: Value, b: Value) -> Value:
    """`a is b`, exactly: CPython's answer is the identity of two objects, which a number unboxed in the trace
    has not kept. Values of two types are never one object; an object of any type (Kind.OBJECT: an untyped
    result may be None, a bool, a small int at run time) against None, a bool or an int is compared with the
    very object CPython has for those (Py_None, Py_True/Py_False, the shared small ints; an int outside -5..256
    gets a new box, which is no other object); two unboxed ints or floats of which CPython may hold one object
    twice abort (Reason.IDENTITY)."""
    invert = op == CompareOp.IS_NOT
    a, b = (as_int_object(r, v) if v.kind == Kind.WIDE_INT else v for v in (a, b))
    for x, y in ((a, b), (b, a)):
        if x.kind == Kind.OBJECT and y.kind in (Kind.NONE, B, I, Kind.INT_OBJECT):
            return r.emit("_IS_OP", (x, _as_object(r, y)), operand=invert)
        if x.kind == Kind.INT_OBJECT and y.kind == I:  # (the int object may be a shared small int)
            return r.emit("_IS_OP", (x, as_int_object(r, y)), operand=invert)
    if a.kind == Kind.NONE or b.kind == Kind.NONE:
        return r.const((a.kind == b.kind) != invert)
    if a.kind == B and b.kind == B:
        result = r.emit("_COMPARE_OP_INT", (as_int(r, a), as_int(r, b)), operand=CompareOp.EQ)
        return r.emit("_UNARY_NOT", (result,)) if invert else result
    if a.kind.is_pointer and b.kind.is_pointer:
        if a.kind != b.kind and Kind.OBJECT not in (a.kind, b.kind):
            return r.const(invert)
        return r.emit("_IS_OP", (a, b), operand=invert)
    if a.kind != b.kind:
        return r.const(invert)  # values of different types (an int, a float, a bool, a str...) are never one object
    if a.kind == I and any(v.is_const and SMALL_INTS[0] <= v.const <= SMALL_INTS[1] for v in (a, b)):
        # (an int and one of CPython's shared ints -5..256: one object exactly where they are equal)
        return r.emit("_COMPARE_OP_INT", (a, b), operand=CompareOp.NE if invert else CompareOp.EQ)
    raise Abort(Reason.IDENTITY, op=op, kind=a.kind.short)


def _as_object(r: Emitter, v: Value) -> Value:
    """None, a bool or an int as the object CPython would have for it (a shared one where CPython shares it)."""
    if v.kind == Kind.NONE or (v.is_const and v.kind == B):
        return r.const(v.const, Kind.OBJECT)
    if v.kind == B:
        return r.emit("_SELECT", (v, r.const(True, Kind.OBJECT), r.const(False, Kind.OBJECT)), kind=Kind.OBJECT)
    return as_int_object(r, v)


# --- unary operators and truth ---------------------------------------------------------------------------


def unary(r: Emitter, op: UnaryOp, v: Value, actual: Any) -> Value:
    if op == UnaryOp.NOT:
        return r.emit("_UNARY_NOT", (truth(r, v),))
    if v.kind in BEYOND_64_BITS:  # -x, ~x, +x of an int past 64 bits: CPython's own int operation
        return v if op == UnaryOp.POS else r.emit("_UNARY_OP_INT_OBJECT", (as_int_object(r, v),), operand=op)
    _number(v, f"unary {op}")
    if op == UnaryOp.INVERT:
        if v.kind != I:
            raise Abort(Reason.OPERAND_KIND, what="unary ~", kind=v.kind.short)  # (CPython's operator instead)
        return r.emit("_UNARY_INVERT_INT", (v,))
    v = as_int(r, v)
    if op == UnaryOp.POS:
        return v
    if v.kind == I and not fits_int64(observe("unary -", lambda: -actual)):  # -(-2**63): an int object
        return r.emit("_UNARY_OP_INT_OBJECT", (as_int_object(r, v),), operand=op)
    return r.emit("_UNARY_NEGATIVE_INT" if v.kind == I else "_UNARY_NEGATIVE_FLOAT", (v,))


def truth(r: Emitter, v: Value) -> Value:
    if v.kind in BEYOND_64_BITS:  # an int past 64 bits: not zero (CPython's comparison of int objects)
        return r.emit(
            "_COMPARE_OP_INT_OBJECT", (as_int_object(r, v), r.const(0, Kind.INT_OBJECT)), operand=CompareOp.NE
        )
    kind = v.kind
    if kind in (B, Kind.NP_BOOL):
        return v
    if kind == Kind.NP_FLOAT32:
        return r.emit("_TO_BOOL_FLOAT", (r.emit("_NP_CAST", (v,), kind=F),))
    if kind == Kind.NONE:
        return r.const(False)
    if kind in (Kind.STR, Kind.DICT):  # not empty
        size = r.emit("_LEN_STR" if kind == Kind.STR else "_LEN_DICT", (v,))
        return r.emit("_TO_BOOL_INT", (size,))
    name = {
        I: "_TO_BOOL_INT",
        F: "_TO_BOOL_FLOAT",
        Kind.LIST: "_TO_BOOL_LIST",
        Kind.TUPLE: "_TO_BOOL_TUPLE",
        Kind.NP_FLOAT64: "_TO_BOOL_FLOAT",
        Kind.NP_INT64: "_TO_BOOL_INT",
        Kind.NP_INT32: "_TO_BOOL_INT",
        Kind.NP_UINT8: "_TO_BOOL_INT",
    }.get(kind)
    if name is None:
        raise Abort(Reason.TRUTH, kind=kind.short)
    return r.emit(name, (v,))


# --- calls of builtins -----------------------------------------------------------------------------------

CallHandler = Callable[[Emitter, list[Value], list[Any]], Value]
CALLS: dict[Any, CallHandler] = {}


def _call(*fns: Any) -> Callable[[CallHandler], CallHandler]:
    def register(handler: CallHandler) -> CallHandler:
        for fn in fns:
            CALLS[fn] = handler
        return handler

    return register


def _arity(args: list[Value], *counts: int, name: str) -> None:
    if len(args) not in counts:
        raise Abort(Reason.ARITY, name=name, count=len(args))


@_call(builtins.abs)
def _abs(r: Emitter, args: list[Value], actual: list[Any]) -> Value:
    _arity(args, 1, name="abs")
    v = as_int(r, args[0])
    if v.kind in BEYOND_64_BITS or (v.kind == I and not fits_int64(abs(actual[0]))):  # (abs(-2**63) too)
        return r.emit("_CALL_ABS_INT_OBJECT", (as_int_object(r, v),))
    _number(v, "abs()")
    return r.emit("_CALL_ABS_INT" if v.kind == I else "_CALL_ABS_FLOAT", (v,))


def _min_max(r: Emitter, args: list[Value], actual: list[Any], is_max: bool) -> Value:
    name = "max" if is_max else "min"
    if len(args) < 2:
        raise Abort(Reason.ONE_ITERABLE, name=name)
    for v in args:
        if v.kind not in BEYOND_64_BITS:
            _number(v, f"{name}()")
    # CPython keeps the first of equal items and replaces it only when a later item is strictly better
    op = CompareOp.GT if is_max else CompareOp.LT
    best, best_actual = args[0], actual[0]
    for v, x in zip(args[1:], actual[1:]):
        # (an int past 64 bits: CPython's comparison of int objects, exact against a float)
        better = compare_int_objects(r, op, v, best) if compares_int_objects(op, v, best) else compare(r, op, v, best)
        wins = x > best_actual if is_max else x < best_actual
        if v.kind == best.kind and not better.is_const:
            if v.kind == Kind.INT_OBJECT:  # (the one chosen, with a reference of its own)
                best = r.emit("_SELECT_INT_OBJECT", (better, v, best))
            else:
                chosen = r.emit("_SELECT", (better, v, best), kind=v.kind)
                if v.kind == Kind.WIDE_INT:
                    r.wide_bounds[chosen.id] = max(_magnitude(r, v), _magnitude(r, best))
                best = chosen
            best_actual = x if wins else best_actual
            continue
        # items of different kinds: which one wins decides the result's kind, so guard on it
        if not better.is_const:
            r.emit("_GUARD_IS_TRUE_POP" if wins else "_GUARD_IS_FALSE_POP", (better,))
        if wins:
            best, best_actual = v, x
    return best


@_call(builtins.min)
def _min(r: Emitter, args: list[Value], actual: list[Any]) -> Value:
    return _min_max(r, args, actual, is_max=False)


@_call(builtins.max)
def _max(r: Emitter, args: list[Value], actual: list[Any]) -> Value:
    return _min_max(r, args, actual, is_max=True)


@_call(builtins.float)
def _float(r: Emitter, args: list[Value], actual: list[Any]) -> Value:
    _arity(args, 1, name="float")
    if args[0].kind in BEYOND_64_BITS:
        observe("float()", lambda: float(actual[0]), F)
        return to_float(r, args[0])
    _number(args[0], "float()")
    return as_float(r, args[0])


@_call(builtins.bool)
def _bool(r: Emitter, args: list[Value], actual: list[Any]) -> Value:
    _arity(args, 1, name="bool")
    return truth(r, args[0])


@_call(builtins.len)
def _len(r: Emitter, args: list[Value], actual: list[Any]) -> Value:
    _arity(args, 1, name="len")
    kind = args[0].kind
    if kind == Kind.LIST:
        return r.emit("_LEN_LIST", (args[0],))
    if kind == Kind.TUPLE:
        return r.emit("_LEN_TUPLE", (args[0],))
    if kind == Kind.STR:
        return r.emit("_LEN_STR", (args[0],))
    if kind == Kind.DICT:
        return r.emit("_LEN_DICT", (args[0],))
    if kind == Kind.ARRAY:  # (arrays of a kind have one dimension at least)
        return r.emit("_ARRAY_DIM", (args[0],), operand=0)
    raise Abort(Reason.LEN_OF, kind=kind.short)


@_call(builtins.pow)
def _pow(r: Emitter, args: list[Value], actual: list[Any]) -> Value:
    _arity(args, 2, name="pow")
    return binary(r, BinOp.POW, args[0], args[1], actual[0], actual[1])


@_call(builtins.range)
def _range(r: Emitter, args: list[Value], actual: list[Any]) -> Value:
    _arity(args, 1, 2, 3, name="range")
    ints = []
    for v, x in zip(args, actual):
        v = as_int(r, v)
        if v.kind in BEYOND_64_BITS:  # (a bound past 64 bits as recorded: an int object in its hidden slot)
            v = as_int_object(r, v) if not fits_int64(x) else narrow(r, v, x, "range()")
        if v.kind not in (I, Kind.INT_OBJECT):
            raise Abort(Reason.RANGE_ARGUMENT, kind=v.kind.short)
        ints.append(v)
    if len(ints) == 1:
        ints = [r.const(0), ints[0]]
    if len(ints) == 2:
        ints.append(r.const(1))
    step = ints[2]
    if step.is_const and step.const == 0:
        raise Abort(Reason.RANGE_STEP_ZERO)
    if step.kind == Kind.INT_OBJECT and not step.is_const:
        r.emit("_GUARD_IS_TRUE_POP", (truth(r, step),))
    elif not step.is_const:
        r.emit("_GUARD_NONZERO_INT", (step,))
    return r.virtual_range(ints[0], ints[1], step)


# math functions CPython computes by calling the C library function of the same name and checking errors
# the generic way (math_1 in mathmodule.c): nan from a non-nan argument or inf from a finite one is an error
_LIBM_UNARY = (
    "sqrt sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh exp expm1 fabs log log2 log10 log1p"
).split()
_MATH_PURE_FLOAT = "hypot atan2 fmod pow copysign erf erfc gamma lgamma cbrt exp2 dist ldexp degrees radians".split()


# mathmodule.c's loghelper: the log of an int a float holds is the log of that float (the conversion's guard
# leaves for a larger one, and the interpreter computes it)
_LOG_OF_INTS = frozenset({"log", "log2", "log10"})


def _math_unary(name: str) -> CallHandler:
    def handler(r: Emitter, args: list[Value], actual: list[Any]) -> Value:
        _arity(args, 1, name=f"math.{name}")
        v = python_number(r, args[0])
        if v.kind in BEYOND_64_BITS and name in _LOG_OF_INTS and abs(actual[0]) >= 2**1024:
            # (CPython takes the log of an int past a float's range without converting it)
            v = narrow(r, v, actual[0], f"math.{name}()")
        if v.kind not in BEYOND_64_BITS:
            _number(v, f"math.{name}()")
        observe(f"math.{name}()", lambda: getattr(math, name)(actual[0]), F)
        return r.emit("_CALL_MATH_UNARY", (to_float(r, v),), operand=name)

    return handler


for _name in _LIBM_UNARY:
    if hasattr(math, _name):
        CALLS[getattr(math, _name)] = _math_unary(_name)


def _to_int(uop: str, fn: Callable[[float], int]) -> CallHandler:
    """int(), round(), math.trunc/floor/ceil: an int stays as it is, a float is rounded by uop."""

    def handler(r: Emitter, args: list[Value], actual: list[Any]) -> Value:
        _arity(args, 1, name=fn.__name__)
        v = as_int(r, python_number(r, args[0]) if fn is not round else args[0])
        if v.kind == I or v.kind in BEYOND_64_BITS:
            return v
        if v.kind != F:
            raise Abort(Reason.CONVERSION_OF, name=fn.__name__, kind=v.kind.short)
        if not fits_int64(observe(f"{fn.__name__}()", lambda: fn(actual[0]))):
            # past 64 bits: the int object CPython makes of the rounded float
            return r.emit("_CALL_FLOAT_TO_INT_OBJECT", (v,), operand=_ROUNDING[uop])
        return r.emit(uop, (v,))

    return handler


_ROUNDING = {
    "_CALL_FLOAT_TO_INT": "llvm.trunc.f64",
    "_CALL_ROUND_FLOAT": "llvm.roundeven.f64",
    "_CALL_MATH_FLOOR": "llvm.floor.f64",
    "_CALL_MATH_CEIL": "llvm.ceil.f64",
}


CALLS[builtins.int] = _to_int("_CALL_FLOAT_TO_INT", int)
CALLS[math.trunc] = _to_int("_CALL_FLOAT_TO_INT", math.trunc)
CALLS[builtins.round] = _to_int("_CALL_ROUND_FLOAT", round)
CALLS[math.floor] = _to_int("_CALL_MATH_FLOOR", math.floor)
CALLS[math.ceil] = _to_int("_CALL_MATH_CEIL", math.ceil)


def _math_predicate(name: str) -> CallHandler:
    def handler(r: Emitter, args: list[Value], actual: list[Any]) -> Value:
        _arity(args, 1, name=f"math.{name}")
        v = args[0]
        if v.kind in BEYOND_64_BITS:  # (converted to a float first: OverflowError past a float's range)
            observe(f"math.{name}()", lambda: getattr(math, name)(actual[0]))
            v = to_float(r, v)
        _number(v, f"math.{name}()")
        if v.kind != F:
            return r.const(name == "isfinite")
        return r.emit("_CALL_MATH_PREDICATE", (v,), operand=name)

    return handler


for _name in ("isnan", "isinf", "isfinite"):
    CALLS[getattr(math, _name)] = _math_predicate(_name)


def _builtin_float(fn: Any) -> CallHandler:
    """A pure math function returning a float, called through the C-API so its result is CPython's own."""

    def handler(r: Emitter, args: list[Value], actual: list[Any]) -> Value:
        for v in args:
            _number(v, f"{fn.__name__}()")
        try:
            result = fn(*actual)
        except Exception as exc:
            raise Abort(Reason.MATH_RAISES, name=fn.__name__, exception=type(exc).__name__) from None
        assert isinstance(result, float), fn  # (each function of _MATH_PURE_FLOAT returns a float, or raises)
        return r.emit("_CALL_BUILTIN_FLOAT", tuple(args), operand=fn)

    return handler


for _name in _MATH_PURE_FLOAT:
    if hasattr(math, _name) and getattr(math, _name) not in CALLS:
        CALLS[getattr(math, _name)] = _builtin_float(getattr(math, _name))


#: the callables whose handlers take an int past 64 bits as it is (the recorder narrows other calls' arguments)
TAKES_INT_OBJECTS = frozenset(
    {
        builtins.abs,
        builtins.min,
        builtins.max,
        builtins.range,
        builtins.float,
        builtins.int,
        builtins.round,
        math.trunc,
        math.floor,
        math.ceil,
        *(getattr(math, name) for name in _LIBM_UNARY if hasattr(math, name)),
        math.isnan,
        math.isinf,
        math.isfinite,
    }
)
