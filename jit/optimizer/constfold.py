"""Constant folding: a pure operation (or a guard that cannot fail) on constants becomes a constant.

The folded value is computed by CPython's own operator, which is by definition what the uop computes; a fold
that would raise or leave the uop's kind (an int past 64 bits) is not done, and the uop stays to exit."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

from jit.frontend.operators import BinOp
from jit.kinds import Kind, kind_of
from jit.trace import Trace, Uop
from jit.uops import UOPS

_BINARY: dict[str, Callable[[Any, Any], Any]] = {}
for _op in BinOp:
    if not _op.inplace and _op != BinOp.MATMUL:
        _BINARY[f"_BINARY_OP_{_op.uop_name}_INT"] = _op.fn
        _BINARY[f"_BINARY_OP_{_op.uop_name}_FLOAT"] = _op.fn
        _BINARY[f"_BINARY_OP_{_op.uop_name}_BOOL"] = _op.fn

_UNARY: dict[str, Callable[[Any], Any]] = {
    "_CONVERT_INT_TO_FLOAT": float,
    "_CONVERT_BOOL_TO_INT": int,
    "_UNARY_NEGATIVE_INT": operator.neg,
    "_UNARY_NEGATIVE_FLOAT": operator.neg,
    "_UNARY_INVERT_INT": operator.invert,
    "_UNARY_NOT": operator.not_,
    "_TO_BOOL_INT": bool,
    "_TO_BOOL_FLOAT": bool,
    "_CALL_ABS_INT": abs,
    "_CALL_ABS_FLOAT": abs,
    "_CALL_FLOAT_TO_INT": int,
    "_CALL_ROUND_FLOAT": round,
    "_CALL_MATH_FLOOR": math.floor,
    "_CALL_MATH_CEIL": math.ceil,
}
_COMPARES = {"_COMPARE_OP_INT", "_COMPARE_OP_FLOAT", "_COMPARE_OP_INT_FLOAT"}


def _evaluate(uop: Uop) -> Any:
    values = [v.const for v in uop.args]
    if uop.name in _BINARY:
        return _BINARY[uop.name](*values)
    if uop.name in _UNARY:
        return _UNARY[uop.name](*values)
    if uop.name in _COMPARES:
        return uop.operand.fn(*values)
    raise LookupError(uop.name)


def run(trace: Trace) -> None:
    const_op = UOPS["_LOAD_CONST_INLINE"]
    for uop in trace.uops:
        if uop.out is None or not uop.args or not all(v.is_const for v in uop.args):
            continue
        if uop.name == "_SELECT":
            continue
        try:
            result = _evaluate(uop)
        except LookupError:
            continue
        except (ArithmeticError, ValueError, TypeError):
            continue  # the uop exits at run time; the interpreter raises
        if kind_of(result) != uop.out.kind or (uop.out.kind == Kind.FLOAT and type(result) is not float):
            continue
        uop.op = const_op
        uop.args = ()
        uop.operand = result
        uop.exit = None
        uop.out.const = result
