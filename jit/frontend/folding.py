"""Constant folding of operators, as CPython's compiler does it (its AST optimizer, ``Python/ast_opt.c``): a unary
or binary operator on constants is one constant of the code object, computed when the function is compiled.

Why the front end does it too: the tier-1 code then holds what CPython's code holds. ``(1 << 100) - 1`` in a
loop is one int object, not two int-object operations every iteration in native code (a hash loop masking
with it ran 1.3x slower than CPython); and the value is CPython's constant itself (``FunctionBuilder.constant``
takes the equal constant of the function's code object), so ``is`` answers as under CPython.

Exactly CPython's rules: nothing folds that would raise (the operation raises at run time instead, at its
line), and results that could be large are not made: an int product, power or left shift past
``MAX_INT_SIZE`` bits, a str or bytes repeated past ``MAX_STR_SIZE``, or a repeat count that is negative or
not an int; ``%`` with a str or bytes on the left (formatting) is never folded. An operation that warns is
not folded either (it warns when it runs).
"""

from __future__ import annotations

import ast
import operator
import warnings
from collections.abc import Callable
from typing import Any

#: CPython's limits on what its compiler folds (``Python/ast_opt.c``)
MAX_INT_SIZE = 128  # bits
MAX_STR_SIZE = 4096  # characters or bytes

#: what ``constant_value`` returns for an expression that is not folded
NOT_CONSTANT: Any = object()


def constant_value(node: ast.expr) -> Any:
    """The constant CPython's compiler makes of node (a literal, or operators on literals), else NOT_CONSTANT."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp):
        operand = constant_value(node.operand)
        if operand is NOT_CONSTANT:
            return NOT_CONSTANT
        return _attempt(_UNARY[type(node.op)], operand)
    if isinstance(node, ast.BinOp):
        left = constant_value(node.left)
        if left is NOT_CONSTANT:
            return NOT_CONSTANT
        right = constant_value(node.right)
        if right is NOT_CONSTANT:
            return NOT_CONSTANT
        operation = _BINARY.get(type(node.op))
        if operation is None:
            return NOT_CONSTANT  # (@: no constant implements it)
        return _attempt(operation, left, right)
    return NOT_CONSTANT


def _attempt(operation: Callable[..., Any], *args: Any) -> Any:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return operation(*args)
    except Exception:  # (CPython's compiler clears the error and leaves the operation to run time)
        return NOT_CONSTANT


def _is_int(value: Any) -> bool:
    return isinstance(value, int)  # (bool included: CPython checks PyLong_Check)


def _multiply(left: Any, right: Any) -> Any:
    if _is_int(left) and _is_int(right) and left and right:
        if abs(left).bit_length() + abs(right).bit_length() > MAX_INT_SIZE:
            return NOT_CONSTANT
    elif _is_int(left) and isinstance(right, (str, bytes)):
        if right and not (0 <= left <= MAX_STR_SIZE // len(right)):
            return NOT_CONSTANT  # (a negative count, or a C long overflow, is not folded either)
    elif _is_int(right) and isinstance(left, (str, bytes)):
        return _multiply(right, left)
    return left * right


def _power(left: Any, right: Any) -> Any:
    if _is_int(left) and _is_int(right) and left and right > 0:
        if abs(left).bit_length() > MAX_INT_SIZE // right:
            return NOT_CONSTANT
    return left**right


def _lshift(left: Any, right: Any) -> Any:
    if _is_int(left) and _is_int(right) and left and right:
        if right < 0:
            return NOT_CONSTANT  # (CPython's size check fails on it; the shift raises at run time)
        if right > MAX_INT_SIZE or abs(left).bit_length() > MAX_INT_SIZE - right:
            return NOT_CONSTANT
    return left << right


def _mod(left: Any, right: Any) -> Any:
    if isinstance(left, (str, bytes)):
        return NOT_CONSTANT
    return left % right


_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.Invert: operator.invert,
    ast.Not: operator.not_,
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: _multiply,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: _mod,
    ast.Pow: _power,
    ast.LShift: _lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.BitAnd: operator.and_,
}
