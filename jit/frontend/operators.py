"""Python's operators as tier-1 instruction arguments.

Each operator carries the function from the ``operator`` module that has exactly CPython's semantics for it
(the interpreter delegates to it, so values, exception types and messages match), and the name the recorder
uses when it specializes the operator into uops.
"""

from __future__ import annotations

import ast
import enum
import operator
from collections.abc import Callable
from typing import Any


def _contains(item: Any, container: Any) -> bool:
    return operator.contains(container, item)


def _not_contains(item: Any, container: Any) -> bool:
    return not operator.contains(container, item)


class BinOp(enum.Enum):
    ADD = ("+", operator.add, "ADD")
    SUB = ("-", operator.sub, "SUBTRACT")
    MUL = ("*", operator.mul, "MULTIPLY")
    TRUEDIV = ("/", operator.truediv, "TRUE_DIVIDE")
    FLOORDIV = ("//", operator.floordiv, "FLOOR_DIVIDE")
    MOD = ("%", operator.mod, "REMAINDER")
    POW = ("**", operator.pow, "POWER")
    LSHIFT = ("<<", operator.lshift, "LSHIFT")
    RSHIFT = (">>", operator.rshift, "RSHIFT")
    AND = ("&", operator.and_, "AND")
    OR = ("|", operator.or_, "OR")
    XOR = ("^", operator.xor, "XOR")
    MATMUL = ("@", operator.matmul, "MATRIX_MULTIPLY")
    IADD = ("+=", operator.iadd, "ADD")
    ISUB = ("-=", operator.isub, "SUBTRACT")
    IMUL = ("*=", operator.imul, "MULTIPLY")
    ITRUEDIV = ("/=", operator.itruediv, "TRUE_DIVIDE")
    IFLOORDIV = ("//=", operator.ifloordiv, "FLOOR_DIVIDE")
    IMOD = ("%=", operator.imod, "REMAINDER")
    IPOW = ("**=", operator.ipow, "POWER")
    ILSHIFT = ("<<=", operator.ilshift, "LSHIFT")
    IRSHIFT = (">>=", operator.irshift, "RSHIFT")
    IAND = ("&=", operator.iand, "AND")
    IOR = ("|=", operator.ior, "OR")
    IXOR = ("^=", operator.ixor, "XOR")
    IMATMUL = ("@=", operator.imatmul, "MATRIX_MULTIPLY")

    def __init__(self, symbol: str, fn: Callable[[Any, Any], Any], uop_name: str) -> None:
        self.symbol = symbol
        self.fn = fn
        self.uop_name = uop_name

    @property
    def inplace(self) -> bool:
        return self.symbol.endswith("=")

    @property
    def base(self) -> BinOp:
        """The plain operator behind an augmented one (``+=`` -> ``+``)."""
        return BinOp[self.name[1:]] if self.inplace else self

    def __str__(self) -> str:
        return self.symbol


class UnaryOp(enum.Enum):
    NEG = ("-", operator.neg)
    POS = ("+", operator.pos)
    INVERT = ("~", operator.invert)
    NOT = ("not", operator.not_)

    def __init__(self, symbol: str, fn: Callable[[Any], Any]) -> None:
        self.symbol = symbol
        self.fn = fn

    def __str__(self) -> str:
        return self.symbol


class CompareOp(enum.Enum):
    LT = ("<", operator.lt)
    LE = ("<=", operator.le)
    EQ = ("==", operator.eq)
    NE = ("!=", operator.ne)
    GT = (">", operator.gt)
    GE = (">=", operator.ge)
    IS = ("is", operator.is_)
    IS_NOT = ("is not", operator.is_not)
    IN = ("in", _contains)
    NOT_IN = ("not in", _not_contains)

    def __init__(self, symbol: str, fn: Callable[[Any, Any], Any]) -> None:
        self.symbol = symbol
        self.fn = fn

    def __str__(self) -> str:
        return self.symbol


AST_BINOPS: dict[type[ast.operator], BinOp] = {
    ast.Add: BinOp.ADD,
    ast.Sub: BinOp.SUB,
    ast.Mult: BinOp.MUL,
    ast.Div: BinOp.TRUEDIV,
    ast.FloorDiv: BinOp.FLOORDIV,
    ast.Mod: BinOp.MOD,
    ast.Pow: BinOp.POW,
    ast.LShift: BinOp.LSHIFT,
    ast.RShift: BinOp.RSHIFT,
    ast.BitAnd: BinOp.AND,
    ast.BitOr: BinOp.OR,
    ast.BitXor: BinOp.XOR,
    ast.MatMult: BinOp.MATMUL,
}

AST_INPLACE: dict[type[ast.operator], BinOp] = {k: BinOp["I" + v.name] for k, v in AST_BINOPS.items()}

AST_UNARYOPS: dict[type[ast.unaryop], UnaryOp] = {
    ast.USub: UnaryOp.NEG,
    ast.UAdd: UnaryOp.POS,
    ast.Invert: UnaryOp.INVERT,
    ast.Not: UnaryOp.NOT,
}

AST_CMPOPS: dict[type[ast.cmpop], CompareOp] = {
    ast.Lt: CompareOp.LT,
    ast.LtE: CompareOp.LE,
    ast.Eq: CompareOp.EQ,
    ast.NotEq: CompareOp.NE,
    ast.Gt: CompareOp.GT,
    ast.GtE: CompareOp.GE,
    ast.Is: CompareOp.IS,
    ast.IsNot: CompareOp.IS_NOT,
    ast.In: CompareOp.IN,
    ast.NotIn: CompareOp.NOT_IN,
}
