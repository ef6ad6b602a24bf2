"""Loop versioning: the conditions under which a looping trace runs its fast copy.

The range analysis (``jit.optimizer.ranges``) proves some checks of a looping trace cannot fail as long as
conditions on the values at the loop's top hold: the slots' values there (the loop counter, an accumulator)
and the loop-invariant values (a range's stop, a list's length). Codegen (``codegen.function``) evaluates
the conditions where the loop is entered, and again after each periodic check, and runs the fast copy of the
loop (each uop with a ``fast`` form lowered as that form: no overflow or bounds check) while they hold, else
the checked copy (the trace as recorded).

An expression (``Expr``) is over i64 values at the loop's top: constants, trace values (an entry value or a
loop-invariant one; a loop-carried slot's value is the one it has at the top of the iteration the check runs
in), a list's or tuple's length there, and ``+ - * min max``. Evaluating one leaves the fast copy alone when
any step overflows i64, so a condition that holds holds in exact integer arithmetic. The listing shows each
condition as a Python comparison (``v4 + max(v2 - v1, v1 - v2) * 7 <= 9223372036854775807``), and reads it
back the same way.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable
from typing import Any

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

#: the binary operators of expressions, with their Python operation (exact: the codegen leaves the fast copy
#: alone where the i64 result would differ)
BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "min": min,
    "max": max,
}
_SYMBOLS = {"add": "+", "sub": "-", "mul": "*"}
_PRECEDENCE = {"add": 1, "sub": 1, "mul": 2}


@dataclasses.dataclass(frozen=True)
class Expr:
    """An i64 expression at the loop's top. op: ``const`` (args: the int), ``value`` (a trace value),
    ``len`` (a list's or tuple's length: args, the trace value of the sequence) or one of ``BINARY``."""

    op: str
    args: tuple[Any, ...]

    @property
    def is_const(self) -> bool:
        return self.op == "const"

    @property
    def const(self) -> int:
        assert self.op == "const", self
        return self.args[0]

    def __str__(self) -> str:
        return _format(self, 0)


def const(value: int) -> Expr:
    return Expr("const", (value,))


def value(v: Any) -> Expr:
    """A trace value (``jit.trace.Value``) of kind int, or its constant."""
    return const(v.const) if v.is_const else Expr("value", (v,))


def length(sequence: Any) -> Expr:
    """The length of a list or tuple (a trace value) at the loop's top."""
    return Expr("len", (sequence,))


def _fits(n: int) -> bool:
    return INT64_MIN <= n <= INT64_MAX


def binary(op: str, a: Expr, b: Expr) -> Expr:
    """a op b, folded where both are constants (and the result fits i64) or where one is a neutral element."""
    if a.is_const and b.is_const:
        result = BINARY[op](a.const, b.const)
        if _fits(result):
            return const(result)
    if op in ("min", "max") and a == b:
        return a
    if op == "add" and a.is_const and a.const == 0:
        return b
    if op in ("add", "sub") and b.is_const and b.const == 0:
        return a
    if op == "mul" and ((a.is_const and a.const == 1) or (b.is_const and b.const == 0)):
        return b
    if op == "mul" and ((b.is_const and b.const == 1) or (a.is_const and a.const == 0)):
        return a
    return Expr(op, (a, b))


def add(a: Expr, b: Expr) -> Expr:
    return binary("add", a, b)


def sub(a: Expr, b: Expr) -> Expr:
    return binary("sub", a, b)


def mul(a: Expr, b: Expr) -> Expr:
    return binary("mul", a, b)


def minimum(a: Expr, b: Expr) -> Expr:
    return binary("min", a, b)


def maximum(a: Expr, b: Expr) -> Expr:
    return binary("max", a, b)


@dataclasses.dataclass(frozen=True)
class Condition:
    """lhs <= rhs, both evaluated without overflowing i64."""

    lhs: Expr
    rhs: Expr

    def __str__(self) -> str:
        return f"{self.lhs} <= {self.rhs}"

    @property
    def static(self) -> bool | None:
        """Its truth where both sides are constants (None: known only at run time)."""
        if self.lhs.is_const and self.rhs.is_const:
            return self.lhs.const <= self.rhs.const
        return None


def evaluable(expr: Expr) -> Condition:
    """The condition that expr evaluates without overflowing (every i64 is at most INT64_MAX)."""
    return Condition(expr, const(INT64_MAX))


@dataclasses.dataclass(eq=False)
class Versioning:
    """The conditions of a looping trace's fast copy (its uops' ``fast`` forms hold while all hold)."""

    conditions: list[Condition]

    def __str__(self) -> str:
        return "; ".join(str(c) for c in self.conditions)


# --- text --------------------------------------------------------------------------------------------------


def _format(expr: Expr, outer: int) -> str:
    if expr.op == "const":
        return repr(expr.const) if expr.const >= 0 or outer == 0 else f"({expr.const!r})"
    if expr.op == "value":
        return f"v{expr.args[0].id}"
    if expr.op == "len":
        return f"len(v{expr.args[0].id})"
    if expr.op in ("min", "max"):
        return f"{expr.op}({_format(expr.args[0], 0)}, {_format(expr.args[1], 0)})"
    precedence = _PRECEDENCE[expr.op]
    left = _format(expr.args[0], precedence)
    right = _format(expr.args[1], precedence + 1)  # (a - (b - c): the right side binds tighter)
    text = f"{left} {_SYMBOLS[expr.op]} {right}"
    return f"({text})" if precedence < outer else text


_AST_OPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul"}


def parse_condition(text: str, value_of: Callable[[int], Any]) -> Condition:
    """A condition as ``str(condition)`` writes it; value_of gives the trace value of ``v<id>``."""
    tree = ast.parse(text, mode="eval").body
    if not (isinstance(tree, ast.Compare) and len(tree.ops) == 1 and isinstance(tree.ops[0], ast.LtE)):
        raise ValueError(f"not `lhs <= rhs`: {text!r}")
    return Condition(_parse(tree.left, value_of), _parse(tree.comparators[0], value_of))


def _parse(node: ast.expr, value_of: Callable[[int], Any]) -> Expr:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return const(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        return const(-node.operand.value)
    if isinstance(node, ast.Name) and node.id.startswith("v") and node.id[1:].isdigit():
        return Expr("value", (value_of(int(node.id[1:])),))
    if isinstance(node, ast.BinOp) and type(node.op) in _AST_OPS:
        return Expr(_AST_OPS[type(node.op)], (_parse(node.left, value_of), _parse(node.right, value_of)))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        args = [_parse(a, value_of) for a in node.args]
        if node.func.id == "len" and len(args) == 1 and args[0].op == "value":
            return Expr("len", args[0].args)
        if node.func.id in ("min", "max") and len(args) == 2:
            return Expr(node.func.id, tuple(args))
    raise ValueError(f"not an expression of a condition: {ast.unparse(node)!r}")
