"""``numpy.empty``, ``numpy.zeros`` and ``numpy.ones`` called in a trace: a new C-order array of a dtype native
code handles (``jit.arrays.DTYPES``), 1 to 3 dimensions, made natively through NumPy's C API and owned by the
trace (``codegen.ownership``: released where the variable holding it is assigned again, handed over where it
escapes), so its elements are read and written natively like any array's.

The shape is a Python int or a tuple of them (a constant, or one the loop builds); the dtype, positional or by
keyword, must be a constant (``np.float64``, ``float``, ``"int32"``, ``np.dtype(...)``: whatever ``numpy.dtype``
accepts, in the machine's byte order), float64 if absent. The callee reaches the trace as a constant (the
module attribute or global it was read through is guarded at the trace's entry). Any other argument (``order``,
``like``, a NumPy int as a dimension) aborts the recording, as before. A negative dimension or a failed
allocation leaves native code, and the interpreter makes the call, which raises NumPy's error.
"""

from __future__ import annotations

from typing import Any

from jit import arrays
from jit.aborts import Abort, Reason
from jit.arrays import ArraySpec
from jit.kinds import Kind
from jit.specialize_numpy import ArrayEmitter
from jit.trace import Value

UOPS = {"empty": "_ARRAY_EMPTY", "zeros": "_ARRAY_ZEROS", "ones": "_ARRAY_ONES"}


def constructor_named(fn: Any) -> str | None:
    """ "empty", "zeros" or "ones" if fn is that very function of the NumPy the program imported (and native
    code can call NumPy's C API), else None."""
    np = arrays.numpy_module()
    if np is None:
        return None
    for name in UOPS:
        if fn is getattr(np, name, None):
            return name if arrays.api_function(arrays.API_ZEROS) is not None else None
    return None


def record(
    r: ArrayEmitter,
    name: str,
    args: list[Value],
    actual: list[Any],
    keywords: tuple[str, ...],
    shape_items: list[Value] | None,
) -> Value:
    """numpy.<name>(shape[, dtype]) as a new array. args/actual: the arguments, the last len(keywords) of them
    by keyword; shape_items: the items of the shape if the loop built it as a tuple (else None)."""
    positional = len(args) - len(keywords)
    named = dict(zip(keywords, range(positional, len(args))))
    if positional < 1 or positional > 2 or set(named) - {"dtype"} or (positional == 2 and named):
        raise Abort(Reason.ARRAY_NEW, name=name, what="these arguments")
    dtype_at = 1 if positional == 2 else named.get("dtype")
    dtype = "float64"
    if dtype_at is not None:
        given = args[dtype_at]
        if not given.is_const:
            raise Abort(Reason.ARRAY_NEW, name=name, what="a dtype not constant")
        dtype = _dtype_name(given.const)
        if dtype is None:
            raise Abort(Reason.ARRAY_NEW, name=name, what=f"dtype {given.const!r}")
    dims = _dims(r, name, args[0], actual[0], shape_items)
    if not 1 <= len(dims) <= arrays.MAX_NDIM:
        raise Abort(Reason.ARRAY_NEW, name=name, what=f"{len(dims)} dimensions")
    shape = actual[0] if isinstance(actual[0], tuple) else (actual[0],)
    if any(type(n) is not int or n < 0 for n in shape):  # (it raises: the guard would always leave)
        raise Abort(Reason.ARRAY_NEW, name=name, what=f"shape {actual[0]!r}")
    spec = ArraySpec(dtype, len(dims), True)
    made = r.emit(UOPS[name], tuple(dims), operand=spec)
    r.array_specs[made.id] = spec  # (known: no guard)
    r.writeable_arrays.add(made.id)
    return made


def _dtype_name(given: Any) -> str | None:
    """The name of the dtype numpy.dtype(given) is, if native code handles it (in the machine's byte order)."""
    np = arrays.numpy_module()
    try:
        dtype = np.dtype(given)
    except Exception:
        return None
    if dtype.name not in arrays.DTYPES or dtype.byteorder == ">" or not dtype.isnative:
        return None
    return str(dtype.name)


def _dims(r: ArrayEmitter, name: str, shape: Value, actual: Any, items: list[Value] | None) -> list[Value]:
    """The dimensions of the shape: ints held as i64 (a constant tuple's items become constants)."""
    if shape.kind == Kind.INT:
        return [shape]
    if shape.kind == Kind.TUPLE and items is not None and all(v.kind == Kind.INT for v in items):
        return items
    if shape.is_const and type(shape.const) is tuple and all(type(n) is int and 0 <= n < 2**63 for n in shape.const):
        return [r.const(n) for n in shape.const]
    raise Abort(Reason.ARRAY_NEW, name=name, what=f"a shape of {shape.kind.short} {type(actual).__name__}")
