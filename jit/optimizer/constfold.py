"""Constant folding: a pure operation (or a guard that cannot fail) on constants becomes a constant.

The folded value is computed by the uop's declared ``fold`` (``jit.uops``), CPython's own operation, which is by
definition what the uop computes; a fold that would raise or leave the uop's kind (an int past 64 bits) is not
done, and the uop stays to exit."""

from __future__ import annotations

from jit.kinds import Kind, kind_of
from jit.trace import Trace
from jit.uops import UOPS


def run(trace: Trace) -> None:
    const_op = UOPS["_LOAD_CONST_INLINE"]
    for uop in trace.uops:
        fold = uop.op.fold
        if fold is None or uop.out is None or not uop.args or not all(v.is_const for v in uop.args):
            continue
        try:
            result = fold(uop.operand, *(v.const for v in uop.args))
        except (ArithmeticError, ValueError, TypeError):
            continue  # the uop exits at run time; the interpreter raises
        if kind_of(result) != uop.out.kind or (uop.out.kind == Kind.FLOAT and type(result) is not float):
            continue
        uop.op = const_op
        uop.args = ()
        uop.operand = result
        uop.exit = None
        uop.out.const = result
