"""NumPy arrays and scalars in traces: element reads and writes, and NumPy's scalar arithmetic (NumPy 2.x).

Arrays (``Kind.ARRAY``) are guarded once on their spec (``jit.arrays.ArraySpec``: dtype, dimensions, layout)
where the trace first uses them; the guard is hoisted to the trace's entry when the array's slot is not
assigned in the loop (``jit.optimizer.hoist``). An element read ``a[i]`` / ``a[i, j]`` checks each index
against its dimension (negative indices count from the end; out of range leaves, and the interpreter raises
NumPy's ``IndexError``) and loads the element as NumPy's scalar (``Kind.NP_FLOAT64``, ``NP_FLOAT32``,
``NP_INT64``, ``NP_INT32``, ``NP_UINT8``, ``NP_BOOL``). A write converts the value as NumPy does and leaves where
NumPy would raise or warn (a NaN or out-of-range float into an int array, a float32 cast that overflows, a
Python int out of an int32 or uint8 array's range) and where the array is read-only.

Scalar arithmetic follows NEP 50: a Python int, float or bool mixed with a NumPy scalar takes the NumPy
scalar's type (int64 with a Python float is float64); the recorder takes each result's type from NumPy itself
(NumPy's promotion depends on the operands' types only). Native code leaves wherever NumPy would warn or raise
(integer overflow, float overflow, underflow, invalid result or division by zero, a Python int out of an
int32 or uint8 operand's range), so the interpreter redoes the operation under the program's ``np.errstate``.
Float arithmetic ignores the events the error state ignored when it was recorded (by default underflow), behind
one guard that it still does (``ignored_events``; jit.numpy_errstate). Operations not listed here abort the
recording.
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Callable
from typing import Any, Protocol

from jit import arrays, numpy_errstate
from jit.aborts import Abort, Reason
from jit.arrays import ArraySpec
from jit.frontend.operators import BinOp, CompareOp, UnaryOp
from jit.kinds import ELEMENT_KINDS, NUMPY_INT_RANGES, Kind, kind_of
from jit.specialize import CALLS, Emitter, as_int
from jit.trace import Value


class ArrayEmitter(Emitter, Protocol):
    """An emitter that remembers which arrays the trace has guarded, with their specs, the values of their
    headers it has read, and which it knows are writeable (by the array's value id)."""

    array_specs: dict[int, ArraySpec]
    array_headers: dict[int, tuple[Value, list[Value], list[Value]]]
    writeable_arrays: set[int]  # (guarded so, or made by the trace: jit.specialize_array_new)
    errstate_guarded: set[frozenset[str]]  # (ignored_events: the events the trace's guard checks, if it has one)
    errstate_stable: bool  # (ignored_events: False where such guards invalidated two of the function's trees)


I, F, B = Kind.INT, Kind.FLOAT, Kind.BOOL
NF, NI, NB, F32 = Kind.NP_FLOAT64, Kind.NP_INT64, Kind.NP_BOOL, Kind.NP_FLOAT32
I32, U8 = Kind.NP_INT32, Kind.NP_UINT8
_SMALL_INTS = (I32, U8)
_NUMERIC = frozenset({I, F, B, NF, NI, NB, F32, I32, U8})
_ARITHMETIC = (BinOp.ADD, BinOp.SUB, BinOp.MUL, BinOp.TRUEDIV)
_COMPARISONS = (CompareOp.LT, CompareOp.LE, CompareOp.EQ, CompareOp.NE, CompareOp.GT, CompareOp.GE)
_INDEX_KINDS = (I, NI, I32, U8)
STORABLE = frozenset({I, F, B, NF, NI, NB, F32, I32, U8})
STORED_DTYPES = frozenset({"float64", "int64", "bool", "float32", "int32", "uint8"})
# what may be stored into an int32 or uint8 array natively (Python ints are checked against its range)
_SMALL_STORABLE = {
    "int32": frozenset({I, B, NB, I32, U8}),
    "uint8": frozenset({I, B, NB, U8}),
}  # (codegen.lower converts values to these)


def strictly(compute: Callable[[], Any], ignored: frozenset[str] = frozenset()) -> Any:
    """compute() with every NumPy floating-point event and warning raised (what native code must not meet), but
    the events of ignored (which the error state ignores: ``ignored_events``)."""
    np = arrays.numpy_module()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise", **dict.fromkeys(ignored, "ignore")):
            return compute()


def observe_strictly(what: str, compute: Callable[[], Any], ignored: frozenset[str] = frozenset()) -> Any:
    """compute() on the values being recorded, every NumPy event raised but those of ignored: recording stops if
    there is one (the compiled guard would leave every time)."""
    try:
        return strictly(compute, ignored)
    except Exception as exc:
        raise Abort(Reason.RAISES, what=what, exception=type(exc).__name__) from None


def ignored_events(r: ArrayEmitter) -> frozenset[str]:
    """The floating-point events NumPy's error state ignores now (by default underflow), which the float
    operation being recorded ignores too (its lowering checks no other): the trace guards, once, that the state
    still ignores them (``_GUARD_NP_ERRSTATE``, hoisted to its entry; jit.numpy_errstate). Empty where NumPy
    ignores none, or where such guards invalidated two of the function's trees (it is called under changing
    states as a rule: jit.monitor): then no guard, and native code leaves on every event."""
    events = numpy_errstate.ignored_now() if r.errstate_stable else frozenset()
    if events and events not in r.errstate_guarded:
        if r.errstate_guarded:  # (Python code the loop ran changed the state while it was recorded)
            raise Abort(Reason.ERRSTATE_CHANGED)
        r.emit("_GUARD_NP_ERRSTATE", (), operand=numpy_errstate.Ignored(events))
        r.errstate_guarded.add(events)
    return events


# --- arrays --------------------------------------------------------------------------------------------------


def guarded_spec(r: ArrayEmitter, array: Value, actual: Any) -> ArraySpec:
    """The array's spec, guarded at its first use in the trace."""
    spec = r.array_specs.get(array.id)
    if spec is None:
        spec = arrays.spec_of(actual)
        assert spec is not None, "Kind.ARRAY is given only to arrays with a spec"
        r.emit("_GUARD_ARRAY", (array,), operand=spec)
        r.array_specs[array.id] = spec
    return spec


def header(r: ArrayEmitter, array: Value, spec: ArraySpec) -> tuple[Value, list[Value], list[Value]]:
    """The array's data address, dimensions and (strided layouts) strides, read once per trace (and hoisted
    to its entry with the spec's guard when the array is the same throughout)."""
    known = r.array_headers.get(array.id)
    if known is None:
        data = r.emit("_ARRAY_DATA", (array,))
        dims = [r.emit("_ARRAY_DIM", (array,), operand=axis) for axis in range(spec.ndim)]
        strides = [] if spec.contiguous else [r.emit("_ARRAY_STRIDE", (array,), operand=k) for k in range(spec.ndim)]
        known = r.array_headers[array.id] = (data, dims, strides)
    return known


def _address_inputs(
    r: ArrayEmitter, array: Value, spec: ArraySpec, indices: list[Value], actual_array: Any, actual: list[Any]
) -> list[Value]:
    """What _ARRAY_LOAD and _ARRAY_STORE take after the value: the data address, the checked indices, then
    the dimensions after the first (C order) or the strides."""
    if len(indices) != spec.ndim or any(v.kind not in _INDEX_KINDS for v in indices):
        what = ", ".join(v.kind.short for v in indices)
        raise Abort(Reason.ARRAY_INDEX, spec=spec, what=f"({what})")
    for axis, index in enumerate(actual):
        if not -actual_array.shape[axis] <= index < actual_array.shape[axis]:
            raise Abort(Reason.INDEX_OUT_OF_RANGE)
    data, dims, strides = header(r, array, spec)
    # an index not negative when recorded is checked as one (jit.optimizer.bounds merges such checks)
    checked = [
        r.emit("_ARRAY_INDEX_IN_RANGE" if actual[axis] >= 0 else "_ARRAY_INDEX", (dims[axis], v))
        for axis, v in enumerate(indices)
    ]
    return [data, *checked, *(dims[1:] if spec.contiguous else strides)]


def load(r: ArrayEmitter, array: Value, indices: list[Value], actual_array: Any, actual: list[Any]) -> Value:
    """a[i] or a[i, j, ...]: one element, as NumPy's scalar."""
    spec = guarded_spec(r, array, actual_array)
    kind = ELEMENT_KINDS.get(spec.dtype)
    if kind is None:
        raise Abort(Reason.ARRAY_ELEMENT_KIND, dtype=spec.dtype)
    inputs = _address_inputs(r, array, spec, indices, actual_array, actual)
    return r.emit("_ARRAY_LOAD", tuple(inputs), operand=spec, kind=kind)


def store(
    r: ArrayEmitter,
    value: Value,
    array: Value,
    indices: list[Value],
    actual_value: Any,
    actual_array: Any,
    actual: list[Any],
) -> None:
    """a[i, ...] = value, converted as NumPy converts it (leaving where NumPy raises or warns)."""
    spec = guarded_spec(r, array, actual_array)
    allowed = _SMALL_STORABLE.get(spec.dtype, STORABLE)
    if spec.dtype not in STORED_DTYPES or value.kind not in allowed:
        raise Abort(Reason.ARRAY_STORE, kind=value.kind.short, dtype=spec.dtype)
    if not actual_array.flags.writeable:
        raise Abort(Reason.ARRAY_READ_ONLY)
    np = arrays.numpy_module()
    scratch = np.zeros(1, dtype=spec.dtype)
    try:
        strictly(lambda: scratch.__setitem__(0, actual_value))
    except Exception as exc:
        exception = type(exc).__name__
        raise Abort(Reason.ARRAY_STORE_RAISES, value=actual_value, dtype=spec.dtype, exception=exception) from None
    if array.id not in r.writeable_arrays:
        r.emit("_GUARD_ARRAY_WRITEABLE", (array,))
        r.writeable_arrays.add(array.id)
    inputs = _address_inputs(r, array, spec, indices, actual_array, actual)
    r.emit("_ARRAY_STORE", (value, *inputs), operand=spec)


# --- scalars -------------------------------------------------------------------------------------------------


def unboxed_scalar(r: Emitter, value: Value, actual: Any) -> Value | None:
    """value, an object observed to be the NumPy scalar actual, guarded to be of its exact type and unboxed as its
    kind (a numpy.float64 has a float's layout; the others where ``arrays.scalars_ok``); None if actual is no
    NumPy scalar native code holds."""
    t = type(actual)
    np = arrays.numpy_module()
    if np is not None and t is np.float64:
        r.emit("_GUARD_CLASS", (value,), operand=t)
        return r.emit("_UNBOX_NP_FLOAT64", (value,))
    if np is None:
        return None
    kind = kind_of(actual)
    if kind.is_numpy_scalar and arrays.scalars_ok():
        r.emit("_GUARD_CLASS", (value,), operand=t)
        return r.emit("_UNBOX_NP_SCALAR", (value,), operand=kind, kind=kind)
    return None


def as_double(r: Emitter, v: Value) -> Value:
    """A number as a double, as NumPy converts it to float64."""
    if v.kind.is_double:
        return v
    if v.kind in (NI, NB, F32, I32, U8):
        return r.emit("_NP_CAST", (v,), kind=F)
    return r.emit("_CONVERT_INT_TO_FLOAT", (as_int(r, v),))


def as_float32(r: Emitter, v: Value) -> Value:
    """A number as float32, as NumPy converts a Python number or a bool to a numpy.float32 operand."""
    if v.kind == F32:
        return v
    if v.kind.is_double:
        return r.emit("_NP_TO_FLOAT32", (v,))
    return r.emit("_NP_CAST", (v,), kind=F32)


def _floating(a: Value, b: Value) -> bool:
    """Is either operand a float (Python's, numpy.float64 or numpy.float32)?"""
    return a.kind.is_double or b.kind.is_double or F32 in (a.kind, b.kind)


def _single(a: Value, b: Value) -> bool:
    """float32 arithmetic: a numpy.float32 with a numpy.float32, a Python number or a bool (with a
    numpy.float64 or numpy.int64 NumPy computes in float64)."""
    kinds = (a.kind, b.kind)
    return F32 in kinds and not any(k in kinds for k in (NF, NI, I32))


def as_i64(r: Emitter, v: Value) -> Value:
    """An int, bool or NumPy int or bool as an i64 (NumPy's ints are i64 already)."""
    if v.kind == NB:
        return r.emit("_NP_CAST", (v,), kind=I)
    return as_int(r, v)


def _operands(op: Any, a: Value, b: Value) -> None:
    """Operands NumPy's scalar operators handle as native code does: numbers, and a numpy.bool only with a
    number that is not a bool (bool with bool is logical in NumPy)."""
    if a.kind not in _NUMERIC or b.kind not in _NUMERIC or {a.kind, b.kind} <= {B, NB}:
        raise Abort(Reason.NUMPY_OPERATOR, op=op, kinds=f"{a.kind.short} and {b.kind.short}")


def binary(r: Emitter, op: BinOp, a: Value, b: Value, actual_a: Any, actual_b: Any) -> Value:
    """An arithmetic operator with a NumPy scalar operand."""
    op = op.base
    _operands(op, a, b)
    if op not in _ARITHMETIC:
        raise Abort(Reason.NUMPY_OPERATOR, op=op, kinds=f"{a.kind.short} and {b.kind.short}")
    ignored = ignored_events(r) if _floating(a, b) else frozenset()  # (a float result: NEP 50)
    result = observe_strictly(f"operator {op}", lambda: op.fn(actual_a, actual_b), ignored)
    check_python_ints(r, a, b)
    # NumPy's promotion depends on the operands' types only (NEP 50): the result's type is the rule
    kind = kind_of(result)
    if kind == F32:
        return r.emit(f"_NP_BINARY_OP_{op.uop_name}_FLOAT32", (as_float32(r, a), as_float32(r, b)))
    if kind == NF:
        return r.emit(f"_NP_BINARY_OP_{op.uop_name}_FLOAT64", (as_double(r, a), as_double(r, b)))
    if kind == NI:
        return r.emit(f"_NP_BINARY_OP_{op.uop_name}_INT64", (as_i64(r, a), as_i64(r, b)))
    if kind in _SMALL_INTS:
        return r.emit(f"_NP_BINARY_OP_{op.uop_name}_SMALL_INT", (as_i64(r, a), as_i64(r, b)), kind=kind)
    raise Abort(Reason.NUMPY_OPERATOR, op=op, kinds=f"{a.kind.short} and {b.kind.short}")


def check_python_ints(r: Emitter, a: Value, b: Value) -> None:
    """A Python int with a numpy.int32 or numpy.uint8 is converted to that type first (NEP 50): out of its
    range, NumPy raises OverflowError (native code leaves, and the interpreter raises it)."""
    for v, other in ((a, b), (b, a)):
        if v.kind == I and other.kind in _SMALL_INTS and not v.is_const:
            r.emit("_NP_CHECK_RANGE", (v,), operand=other.kind)
        elif v.kind == I and other.kind in _SMALL_INTS:
            low, high = NUMPY_INT_RANGES[other.kind]
            if not low <= v.const <= high:
                raise Abort(Reason.RAISES, what="a Python int out of a NumPy int's range", exception="OverflowError")


def compare(r: Emitter, op: CompareOp, a: Value, b: Value) -> Value:
    """A comparison with a NumPy scalar operand: a numpy.bool."""
    _operands(op, a, b)
    if op not in _COMPARISONS:
        raise Abort(Reason.NUMPY_OPERATOR, op=op, kinds=f"{a.kind.short} and {b.kind.short}")
    if _single(a, b):
        return r.emit("_NP_COMPARE_OP_FLOAT32", (as_float32(r, a), as_float32(r, b)), operand=op)
    if _floating(a, b):
        return r.emit("_NP_COMPARE_OP_FLOAT64", (as_double(r, a), as_double(r, b)), operand=op)
    return r.emit("_NP_COMPARE_OP_INT64", (as_i64(r, a), as_i64(r, b)), operand=op)


def unary(r: Emitter, op: UnaryOp, v: Value, actual: Any) -> Value:
    """-x or +x of a NumPy scalar (``not x`` is its truth)."""
    if v.kind in (NF, NI, F32, I32, U8) and op == UnaryOp.POS:
        return v
    if v.kind in _SMALL_INTS and op == UnaryOp.NEG:
        observe_strictly("unary -", lambda: -actual)
        return r.emit("_NP_BINARY_OP_SUBTRACT_SMALL_INT", (r.const(0), v), kind=v.kind)
    if v.kind == F32 and op == UnaryOp.NEG:
        return r.emit("_NP_UNARY_NEGATIVE_FLOAT32", (v,))
    if v.kind == NF and op == UnaryOp.NEG:
        return r.emit("_NP_UNARY_NEGATIVE_FLOAT64", (v,))
    if v.kind == NI and op == UnaryOp.NEG:
        observe_strictly("unary -", lambda: -actual)
        return r.emit("_NP_UNARY_NEGATIVE_INT64", (v,))
    raise Abort(Reason.NUMPY_OPERATOR, op=op, kinds=v.kind.short)


def absolute(r: Emitter, v: Value, actual: Any) -> Value:
    """abs() of a NumPy scalar."""
    if v.kind == NF:
        return r.emit("_NP_ABS_FLOAT64", (v,))
    if v.kind == F32:
        return r.emit("_NP_ABS_FLOAT32", (v,))
    if v.kind == NI:
        observe_strictly("abs()", lambda: abs(actual))
        return r.emit("_NP_ABS_INT64", (v,))
    raise Abort(Reason.NUMPY_OPERATOR, op="abs()", kinds=v.kind.short)


def python_float(r: Emitter, v: Value) -> Value:
    """float(x) of a NumPy scalar: a Python float."""
    if v.kind in (NF, NI, F32, I32, U8):
        return r.emit("_NP_CAST", (v,), kind=F)
    raise Abort(Reason.CONVERSION_OF, name="float", kind=v.kind.short)


# --- builtins on NumPy scalars: abs() and float() take NumPy scalars here, everything else as before ----------


def _extend(fn: Any, numpy_handler: Callable[[Emitter, Value, Any], Value]) -> None:
    plain = CALLS[fn]

    def handler(r: Emitter, args: list[Value], actual: list[Any]) -> Value:
        if len(args) == 1 and args[0].kind.is_numpy_scalar:
            return numpy_handler(r, args[0], actual[0])
        return plain(r, args, actual)

    CALLS[fn] = handler


_extend(builtins.abs, absolute)
_extend(builtins.float, lambda r, v, actual: python_float(r, v))
