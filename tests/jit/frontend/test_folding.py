"""Constant folding of operators (jit/frontend/folding.py) against CPython's own compiler: an expression folds
exactly when CPython's code for it holds one constant, and into CPython's value."""

import ast
import dis
import math

from helpers import check, define
from hypothesis import given, settings
from hypothesis import strategies as st

from jit import dump, stats
from jit.frontend.folding import NOT_CONSTANT, constant_value

_OPERATORS = ["+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^"]
_LITERALS = ["0", "1", "-1", "2", "3", "7", "64", "100", "127", "128", "129", "200", "-5", "10**9", "2**63",
             "0.5", "-0.0", "1e308", "1e999", "3j", "True", "False", "None", "'ab'", "''", "b'xy'", "'%s'"]  # fmt: skip


def _cpython(source: str) -> tuple[bool, object]:
    """Whether CPython's compiler folds source into one constant, and that constant."""
    code = compile(source, "<folding>", "eval")
    folded = not any(i.opname.startswith(("BINARY", "UNARY")) for i in dis.get_instructions(code))
    return folded, eval(code) if folded else None  # noqa: S307


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return type(a) is type(b) and repr(a) == repr(b)


def _agree(source: str) -> None:
    folded, value = _cpython(source)
    ours = constant_value(ast.parse(source, mode="eval").body)
    assert (ours is not NOT_CONSTANT) == folded, source
    if folded:
        assert _same(ours, value), (source, ours, value)


def test_cpython_limits() -> None:
    for source in [
        "(1 << 100) - 1", "1 << 128", "1 << 127", "2 << 127", "1 << -1", "3 << 0", "0 << 1000",
        "2 ** 127", "2 ** 128", "3 ** 80", "3 ** 81", "2 ** -1", "0 ** 500", "(-2) ** 127", "2.0 ** 2000",
        "(1 << 64) * (1 << 64)", "(1 << 63) * (1 << 64)", "'ab' * 2048", "'ab' * 2049", "'ab' * -1", "'' * -1",
        "b'x' * 4096", "b'x' * 4097", "3 * 'x'", "'%s' % 1", "b'%d' % 3", "7 % 3", "1 / 0", "1 // 0", "-(5)",
        "~5", "not 0", "+True", "-(-0.0)", "1e308 * 10", "10 ** 400.0", "2 @ 3", "'a' + 'b'", "1 + 'a'",
    ]:  # fmt: skip
        _agree(source)


def _expressions(depth: int) -> st.SearchStrategy[str]:
    leaf = st.sampled_from(_LITERALS).map(lambda text: f"({text})")
    if depth == 0:
        return leaf
    smaller = _expressions(depth - 1)
    unary = st.tuples(st.sampled_from(["-", "+", "~", "not "]), smaller).map(lambda t: f"({t[0]}{t[1]})")
    binary = st.tuples(smaller, st.sampled_from(_OPERATORS), smaller).map(lambda t: f"({t[0]} {t[1]} {t[2]})")
    return st.one_of(leaf, unary, binary)


@settings(max_examples=400, deadline=None)
@given(_expressions(3))
def test_folds_exactly_what_cpython_folds(source: str) -> None:
    _agree(source)


MASKED = """
def masked(n):
    h = 0
    for i in range(n):
        h = (h * 1000003 + i) & ((1 << 100) - 1)
    return h, h & (2 ** 64 - 1), -(1 << 70) // 3
"""

SAME_OBJECT = """
def same_object(n):
    hits = 0
    for i in range(n):
        a = 2 ** 100
        b = 2 ** 100
        if a is b:
            hits += 1
    return hits
"""


def test_a_folded_mask_in_a_hot_loop_is_one_constant() -> None:
    jitted = check(define(MASKED, "masked"), 0, 5, 300, 3000, native=True)
    # (no int-object operation makes the mask: one & with a constant per iteration)
    uops = dump(jitted, "uops")
    assert "operand=<<" not in uops and "1267650600228229401496703205375" in uops
    assert stats(jitted)["aborts"] == {}


def test_folded_constants_are_cpythons_objects() -> None:
    check(define(SAME_OBJECT, "same_object"), 0, 3, 500)
