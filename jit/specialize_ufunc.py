"""NumPy's elementwise math ufuncs called on scalars in a trace (``numpy.sqrt(x)``, ``np.maximum(a, b)``, ...):
the ufuncs of ``jit.ufuncs.NAMES`` on Python numbers and NumPy scalars, with NumPy's result types (NEP 50: the
recorder takes the result's type from NumPy itself, on the values being recorded; it depends on the operands'
types only) and its floating-point events (native code leaves wherever NumPy would report one, and the
interpreter calls the ufunc, which warns, raises or is silent as ``np.errstate`` says; the events the error
state ignored when recorded, behind a guard that it still does: jit.numpy_errstate).

The callee reaches the trace as a constant, the ufunc object itself, read through ``numpy.<name>`` (a guard that
the global still is the module and the attribute still that very ufunc, both hoisted to the trace's entry) or
through a global bound to it (``from numpy import sqrt``: a hoisted guard on the global).
"""

from __future__ import annotations

from typing import Any

from jit import arrays, ufuncs
from jit.aborts import Abort, Reason
from jit.kinds import Kind, kind_of
from jit.specialize import CallHandler, Emitter
from jit.specialize_numpy import (
    as_double,
    as_float32,
    as_i64,
    check_python_ints,
    ignored_events,
    observe_strictly,
)
from jit.trace import Value

I, F, B = Kind.INT, Kind.FLOAT, Kind.BOOL
NF, NI, NB, F32, I32, U8 = (
    Kind.NP_FLOAT64,
    Kind.NP_INT64,
    Kind.NP_BOOL,
    Kind.NP_FLOAT32,
    Kind.NP_INT32,
    Kind.NP_UINT8,
)
_OPERANDS = frozenset({I, F, B, NF, NI, NB, F32, I32, U8})
_INTS = (NI, I32, U8)


def handler_for(fn: Any) -> CallHandler | None:
    """The recording of a call of fn, if fn is one of the NumPy ufuncs native code computes on scalars."""
    name = ufuncs.ufunc_named(fn)
    if name is None:
        return None

    def handler(r: Emitter, args: list[Value], actual: list[Any]) -> Value:
        return call(r, name, args, actual)

    return handler


def call(r: Emitter, name: str, args: list[Value], actual: list[Any]) -> Value:
    """numpy.<name>(*args) on numbers: its result as the NumPy scalar NumPy returns."""
    ufunc = getattr(arrays.numpy_module(), name)
    if len(args) != ufunc.nin:
        raise Abort(Reason.ARITY, name=f"numpy.{name}", count=len(args))
    kinds = " and ".join(v.kind.short for v in args)
    if any(v.kind not in _OPERANDS for v in args):
        raise Abort(Reason.UFUNC_OPERANDS, name=name, kinds=kinds, result="-")
    result = observe_strictly(f"numpy.{name}()", lambda: ufunc(*actual), ignored_events(r))
    kind = kind_of(result)
    out = _unary(r, name, args[0], kind) if ufunc.nin == 1 else _binary(r, name, args[0], args[1], kind)
    if out is None:
        raise Abort(Reason.UFUNC_OPERANDS, name=name, kinds=kinds, result=type(result).__name__)
    return out


def _floating(r: Emitter, v: Value, kind: Kind) -> Value:
    """v as the floating operand of a numpy.float64 (a double) or numpy.float32 (a float) result."""
    return as_float32(r, v) if kind == F32 else as_double(r, v)


def _unary(r: Emitter, name: str, v: Value, kind: Kind) -> Value | None:
    if kind in (NF, F32):
        x = _floating(r, v, kind)
        if name == "sqrt":
            return r.emit("_NP_SQRT", (x,), kind=kind)
        if name in ufuncs.THROUGH_LOOP:
            if ufuncs.inner_loop(name, "f" if kind == F32 else "d") is None or ufuncs.fe_events() is None:
                return None
            return r.emit("_NP_UFUNC_LOOP", (x,), operand=name, kind=kind)
        return r.emit("_NP_UFUNC_EXACT", (x,), operand=name, kind=kind)
    if name not in ("absolute", "floor", "ceil"):
        return None
    if kind in _INTS and v.kind in (I, *_INTS):
        if name == "absolute" and kind != U8:  # (an unsigned value is its own absolute value)
            return r.emit("_NP_UFUNC_EXACT", (v,), operand=name, kind=kind)
        return v if v.kind == kind else r.emit("_NP_CAST", (v,), kind=kind)  # (the same i64)
    if kind == NB and v.kind in (B, NB):  # the bool itself
        return v if v.kind == NB else r.emit("_NP_CAST", (v,), kind=NB)
    return None


def _binary(r: Emitter, name: str, a: Value, b: Value, kind: Kind) -> Value | None:
    if kind in (NF, F32):
        return r.emit("_NP_MINMAX", (_floating(r, a, kind), _floating(r, b, kind)), operand=name, kind=kind)
    if kind in _INTS:
        check_python_ints(r, a, b)  # (a Python int out of a numpy.int32's or numpy.uint8's range: OverflowError)
        return r.emit("_NP_MINMAX", (as_i64(r, a), as_i64(r, b)), operand=name, kind=kind)
    return None
