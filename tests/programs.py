"""Random small numeric Python functions, for differential testing (and fuzzing) of tracejit.

``programs()`` is a hypothesis strategy of ``Program``: the source of one function

    def f(a, b, x, y, data):

(after the globals it uses, if any: ``LIMIT``, ``SCALE`` and a helper function ``h``, which f calls by its name or,
like ``abs``, through a local variable holding it, or instead a lambda or nested def that reads a local of f, ``hk``; and sometimes a lambda ``peek`` reading one of
f's variables, defined first and called in the return, which makes that variable a cell variable) with int
parameters ``a``,
``b``, float parameters ``x``, ``y`` and a non-empty list ``data`` of ints and/or floats. ``arguments()`` draws
matching argument tuples (0, negatives, values near 2**62/2**63/2**64, -0.0, nan, inf, tiny floats...).

The body has at least one loop, and uses: assignments (also chained, tuple and swap assignments, unpacking),
augmented assignments (also to ``data[...]``), assignment expressions (``(n := ...)``), ``if``/``elif``/``else``, ``for`` over ``range`` (constant or
variable bounds, negative steps, zero trips, bounds near 2**63) or over ``data``/a local tuple (also through
``enumerate`` and ``zip``)/the dict's values, bounded
``while`` loops (also ``while True``), loop ``else``, ``break``/``continue``, loops nested up to three deep
(an inner loop over ``enumerate``, ``zip`` or ``tally.items()`` gets a new iterator at each outer iteration),
early returns, calls of ``h`` with keyword arguments and of ``hg``, which updates a global ``f`` does not name,
instances of a class ``Pt`` made in loops (its ``__init__`` calls its base class's by ``super().__init__``), lists made, copied and swapped between locals ``box`` and
``keep`` (and appended to), ``acc.append(...)`` and ``acc.pop()`` on a local list, a dict ``tally`` keyed by strs read from a local tuple
``words`` (``tally[w] = tally.get(w, 0) + e``, ``w in tally``, ``len(tally)``), ``del``, module globals ``G`` and ``GS`` that ``f``
declares ``global`` (and assigns first, so that every call starts alike) used as variables (``del G`` too, assigned
again at once), ``for`` over a range object kept in a variable, ``is``/``is not`` of a number or a comparison and
``None``/``True``/``False``, the truth of a ``Truthy`` object (a class whose ``__bool__`` is Python code); expressions mixing ints and floats: arithmetic,
bitwise operators, (chained) comparisons, ``and``/``or``/``not``, conditional expressions,
``abs``/``min``/``max``/``int``/``float``/``round``/``len``, ``math`` functions, reads of ``data`` and of a
local tuple, list comprehensions, generator expressions, calls of ``h``. It ends with ``return (every variable)``, so that any wrong
value shows.

Every program is valid, deterministic and cheap to run, by construction:

* static types: each variable is either "int" (always holds an int or bool) or "num" (int, bool or float),
  so int-only operations (``&``, ``<<``, ``range`` bounds, indices) get ints; exceptions can still happen
  (division by zero, ``math.sqrt(-1)``, overflow, negative shift counts, ``int(nan)``, the unbound local
  ``u``...) and are compared;
* every loop has a trip count bounded at generation time (``range`` bounds are constants, ``e % K`` or
  ``v, v + K``; each ``while`` loop has its own counter, stepped first thing in its body, that no other
  statement writes; ``data`` never changes length), and the product of the bounds of nested loops stays under
  ``LOOP_BUDGET``;
* no value can grow exponentially in size across iterations: inside loops, operators that multiply bit
  lengths (``*``, ``**``, ``<<``) only take small constants, or the whole right-hand side is reduced
  ``% M`` / ``& M``; ``**`` exponents and shift counts are small constants.

Most programs are "narrow": their constants fit in 64 bits and they avoid what the JIT does not compile
(comprehensions, calls of Python functions, slices, ``in``...), so that their loops do run as
native code, where overflow checks, int/float mixing, nan, -0.0 and side exits get exercised; the others
("wide") use everything.

The generator draws all its choices through hypothesis (leaves and simple forms first), so failing programs
shrink to short, readable ones.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

PARAMS = ("a", "b", "x", "y", "data")
INT_PARAMS = ("a", "b")
NUM_PARAMS = ("x", "y")
INT_LOCALS = ("n", "m")
NUM_LOCALS = ("s", "t")
LOOP_VARS = ("i", "j", "k")
ITEM_VARS = ("vi", "vj", "vk")  # `for vi in data`
ZIP_VARS = ("zi", "zj", "zk")  # `for vi, zi in zip(data, tup)`
MAYBE_UNBOUND = "u"  # a local with no initial value (reading it may raise UnboundLocalError)
WORDS = ("a", "bb", "", "a b", "ünï")  # the strs a program's dict `tally` counts under
INT_GLOBALS = ("G",)  # module globals f declares `global` and uses as variables (it assigns them first)
NUM_GLOBALS = ("GS",)
COMP_VAR = "c"  # comprehension variable
HELPER = "def h(p, q):\n    return p - q if p > q else q - p\n"  # a Python function f may call
# a helper updating a global f does not name (inlined: its store is made at the call's return), which f resets
HELPER_GLOBAL = (
    "HG = 0\n\n\ndef hg(p):\n    global HG\n    HG = (HG + p) % 1000 if p > 0 else HG - 1\n    return HG\n\n\n"
    "def hg0():\n    global HG\n    HG = 0\n"
)
# a class whose instances f makes in its loops (made natively, its __init__ inlined on the new instance, and its
# base class's through `super().__init__`)
POINT = (
    "class PtBase:\n    def __init__(self, a):\n        self.a = a\n\n\n"
    "class Pt(PtBase):\n    def __init__(self, a, b):\n        super().__init__(a)\n        self.b = b - a\n"
)
# a class whose truth is Python code (`if Truthy(e):`: its __bool__ runs in the loop)
TRUTHY = "class Truthy:\n    def __init__(self, v):\n        self.v = v\n\n    def __bool__(self):\n        return self.v > 0\n"
DATA_MAX = 6  # longest `data` list arguments() draws
LOOP_BUDGET = 400  # product of the trip-count bounds of nested loops
MAX_TRIPS = 30  # trip-count bound of one loop
MAX_NEST = 4  # nesting of compound statements (if/for/while)

INT_CONSTS = (
    0, 1, 2, 3, -1, 5, 7, 10, -3, 100, 255, 65537, 2**31 - 1, 2**32, 2**40, 2**53 + 1,
    2**62, 2**62 + 1, 3 * 2**61, -(2**62), 2**63 - 1, 2**63 - 2, -(2**63), 2**64 + 3,
)  # fmt: skip
FLOAT_CONSTS = (
    "0.5", "1.0", "0.0", "-0.0", "2.5", "-1.5", "0.1", "3.25", "1e-300", "1e300", "1e16", "9007199254740993.0",
    "math.inf", "-math.inf", "math.nan", "4.611686018427388e18", "9.223372036854776e18",
)  # fmt: skip
# + - * most often: they are where int64 arithmetic overflows
INT_BINOPS = ((4, "+"), (3, "-"), (2, "*"), (1, "//"), (1, "%"), (1, "&"), (1, "|"), (1, "^"), (1, ">>"))
MASKS = ("% 1000003", "% 2**64", "& 0xFFFFFFFF", "& (2**64 - 1)", "% 2**63", "% 97")
FLOAT_MASKS = ("% 1000003", "% 2**64", "% 2**63", "% 97", "% 1.5")
# "narrow" programs keep their ints within 64 bits (unless arithmetic overflows), and use only constructs that
# tracejit compiles to native code, so that their loops do run natively; 2**63 is written out, as `2**63`
# itself would be a big int
NARROW_INT_CONSTS = tuple(c for c in INT_CONSTS if -(2**63) <= c < 2**63)
NARROW_MASKS = ("% 1000003", "& 0xFFFFFFFF", "% 97", "& 0x7FFFFFFFFFFFFFFF")
NARROW_FLOAT_MASKS = ("% 1000003", "% 97", "% 1.5", "% 4611686018427387904")
RANGE_BASES = ("2**63", "2**62", "-(2**63)", "2**64", "2**31", "2**53")
NARROW_RANGE_BASES = ("9223372036854775768", "4611686018427387904", "-9223372036854775768", "2147483648")


class Program:
    """A generated module: the function `name`, after the globals it uses."""

    def __init__(self, source: str, name: str = "f") -> None:
        self.source = source
        self.name = name

    def __repr__(self) -> str:  # hypothesis prints the falsifying example with this
        return f"Program('''\n{self.source}''')"


@dataclasses.dataclass(frozen=True)
class E:
    """A generated expression: its text, and whether it needs no parentheses as an operand."""

    text: str
    atom: bool = False

    def p(self) -> str:
        return self.text if self.atom else f"({self.text})"


def _atom(text: str) -> E:
    return E(text, True)


def _const(value: Any) -> E:
    text = str(value)
    return E(text, not text.startswith("-"))


@dataclasses.dataclass(frozen=True)
class Scope:
    int_read: tuple[str, ...]
    int_write: tuple[str, ...]
    num_read: tuple[str, ...]  # besides int_read
    num_write: tuple[str, ...]
    loops: int = 0  # enclosing loops
    budget: int = LOOP_BUDGET  # the product of trip bounds allowed for loops in here
    nest: int = 0  # enclosing compound statements
    in_loop: bool = False

    def inner(self, **changes: Any) -> Scope:
        return dataclasses.replace(self, nest=self.nest + 1, **changes)


class _Gen:
    def __init__(self, draw: Callable[[st.SearchStrategy[Any]], Any]) -> None:
        self.draw = draw
        self.counters = 0
        self.use_unbound = False  # whether the program reads and writes MAYBE_UNBOUND
        self.wide = True  # False: a "narrow" program (see NARROW_INT_CONSTS)
        self.use_tuple = False  # a local tuple `tup` of 3 numbers
        self.use_list = False  # a local list `acc`, appended to
        self.use_boxes = False  # local lists `box` and `keep`, made, copied and swapped between the two names
        self.use_dict = False  # a local tuple of strs `words` and a dict `tally` counting numbers under them
        self.use_globals = False  # f declares INT_GLOBALS and NUM_GLOBALS `global` and uses them as variables
        self.use_try = False  # a try around the top-level loop, or in it (with_try)
        self.as_generator = False  # a generator function: it yields its variables after the top-level loop

    # --- choices -----------------------------------------------------------------------------------------
    def int_(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def one(self, seq: Any) -> Any:
        return self.draw(st.sampled_from(seq))

    def flag(self, percent: int) -> bool:
        return self.int_(0, 99) >= 100 - percent  # shrinks to False

    def pick(self, *options: tuple[int, str]) -> str:
        """One of the names, with weights; 0-weight options are left out; shrinks towards the first."""
        options = tuple((w, v) for w, v in options if w > 0)
        r = self.int_(0, sum(w for w, _ in options) - 1)
        for w, v in options:
            if r < w:
                return v
            r -= w
        raise AssertionError

    # --- expressions -------------------------------------------------------------------------------------
    def int_leaf(self, sc: Scope) -> E:
        kind = self.pick(
            (12, "var"), (6, "const"), (2, "len"), (1, "global"), (self.use_list, "len_acc"),
            (self.use_dict, "len_tally"), (self.use_dict, "in_tally"),
        )  # fmt: skip
        if kind == "var":
            return _atom(self.one(sc.int_read))
        if kind == "len_tally":
            return _atom("len(tally)")
        if kind == "in_tally":
            return E(f"{self.word(sc)} {self.one(('in', 'not in'))} tally")
        if kind == "len_acc":
            return _atom("len(acc)")
        if kind == "const":
            return _const(self.one(INT_CONSTS if self.wide else NARROW_INT_CONSTS))
        if kind == "global":
            return _atom("LIMIT")
        return _atom("len(data)")

    def num_leaf(self, sc: Scope) -> E:
        kind = self.pick(
            (10, "var"), (6, "int"), (4, "const"), (2, "data"), (1, "global"), (self.use_unbound, "unbound"),
            (2 * self.use_tuple, "tuple"), (self.use_list, "last"), (self.use_dict, "tally"),
        )  # fmt: skip
        if kind == "tally":
            return _atom(f"tally.get({self.word(sc)}, {self.one(('0', '0.5', '-1'))})")
        if kind == "var":
            return _atom(self.one(sc.num_read))
        if kind == "tuple":
            return _atom(f"tup[{self.int_leaf(sc).p()} % 3]" if self.flag(70) else "tup[-1]")
        if kind == "last":
            if self.flag(30):  # (the last item taken out: a list's pop, after a read of it)
                return E("acc.pop() if acc else 0.5")
            return E("acc[-1] if acc else 0.5")
        if kind == "int":
            return self.int_leaf(sc)
        if kind == "const":
            return _const(self.one(FLOAT_CONSTS))
        if kind == "global":
            return _atom("SCALE")
        if kind == "unbound":
            return _atom(MAYBE_UNBOUND)
        return self.data_read(sc, 0)

    def data_index(self, sc: Scope, depth: int) -> str:
        kind = self.pick((4, "mod"), (1, "const"), (1, "neg"))
        if kind == "mod":
            return f"{self.int_expr(sc, depth).p()} % len(data)"
        if kind == "const":
            return self.one(("0", "-1"))
        return f"-1 - {self.int_expr(sc, depth).p()} % len(data)"

    def data_read(self, sc: Scope, depth: int) -> E:
        return _atom(f"data[{self.data_index(sc, max(depth - 1, 0))}]")

    def small_const(self) -> E:
        return _const(self.one((2, 3, -1, 5, 0.5, -2.5, 1.5)))

    def divisor(self, sc: Scope, depth: int, growth: bool, num: bool) -> E:
        kind = self.pick((2, "expr"), (4, "const"), (3, "or"))
        expr = self.num_expr if num else self.int_expr
        if kind == "expr":
            return expr(sc, depth - 1, growth)
        if kind == "const":
            return _const(self.one((3, 2, 7, -5, 1000, 2**32) + ((0.5, -2.5) if num else ())))
        return E(f"{expr(sc, depth - 1, growth).p()} or {self.one((1, 3, -7))}")

    def shift_count(self, sc: Scope, depth: int, growth: bool) -> E:
        kind = self.pick((12, "const"), (7, "mod"), (1, "negative"))
        if kind == "const":
            return _const(self.int_(0, 70 if growth else 3))
        if kind == "mod":
            return E(f"{self.int_expr(sc, depth - 1, growth).p()} % {64 if growth else 4}")
        return _const(-1)

    def int_expr(self, sc: Scope, depth: int, growth: bool = True) -> E:
        """An expression whose value is an int (or bool) whenever it evaluates."""
        if depth <= 0:
            return self.int_leaf(sc)
        kind = self.pick(
            (5, "leaf"), (8, "binop"), (2, "unary"), (3, "call"), (3, "convert"), (1, "ifexp"),
            (1, "compare"), (1, "boolop"), (1, "boolbits"), (1, "data"), (2, "shift"), (growth, "pow"),
            (self.walrus_weight(sc, sc.int_write, growth), "walrus"), (self.wide, "past64"),
        )  # fmt: skip
        d = depth - 1
        if kind == "leaf":
            return self.int_leaf(sc)
        if kind == "past64":  # an intermediate past 64 bits that comes back (an int object, a float meeting it)
            left, right = self.int_expr(sc, d, growth), self.int_expr(sc, d, growth)
            big = self.one(("18446744073709551616", "(1 << 70)", "9223372036854775808"))
            form = self.one(("floordiv", "mod", "float", "truediv"))
            if form == "floordiv":
                return E(f"({left.p()} * {big} + {right.p()}) // {big}")
            if form == "mod":
                return E(f"({left.p()} * {big} - {right.p()}) % 1000003")
            if form == "float":
                return _atom(f"int(({left.p()} * {big}) * 0.5 > {right.p()})")
            return _atom(f"round(({left.p()} * {big} + 1) / ({right.p()} or 3))")
        if kind == "walrus":
            return _atom(f"({self.one(sc.int_write)} := {self.int_expr(sc, d, growth).text})")
        if kind == "binop":
            op = self.pick(*INT_BINOPS)
            left = self.int_expr(sc, d, growth)
            if op in ("//", "%"):
                right = self.divisor(sc, depth, growth, num=False)
            elif op == ">>" and not self.flag(20):
                right = self.shift_count(sc, depth, growth=True)
            elif op == "*" and not growth:
                right = _const(self.one((2, 3, -1, 5, 0)))
            else:
                right = self.int_expr(sc, d, growth)
            return E(f"{left.p()} {op} {right.p()}")
        if kind == "unary":
            return E(f"{self.one(('-', '~', '+'))}{self.int_expr(sc, d, growth).p()}")
        if kind == "call":
            fn = self.one(("abs", "min", "max", "min3", "h") if self.wide else ("abs", "min", "max", "min3"))
            if fn == "abs":
                return _atom(f"abs({self.int_expr(sc, d, growth).text})")
            n = 3 if fn == "min3" else 2
            items = ", ".join(self.int_expr(sc, d, growth).text for _ in range(n))
            return _atom(f"{fn[:3]}({items})")
        if kind == "convert":
            fn = self.one(("int", "round", "math.floor", "math.ceil", "math.trunc", "len"))
            if fn == "len":
                return _atom("len(data)")
            return _atom(f"{fn}({self.num_expr(sc, d, growth).text})")
        if kind == "ifexp":
            body, test, orelse = self.int_expr(sc, d, growth), self.cond(sc, d), self.int_expr(sc, d, growth)
            return E(f"{body.p()} if {test.p()} else {orelse.p()}")
        if kind == "compare":
            return self.compare(sc, d) if self.flag(80) else E(f"not {self.num_expr(sc, d, growth).p()}")
        if kind == "boolop":
            op = self.one(("and", "or"))
            return E(f"{self.int_expr(sc, d, growth).p()} {op} {self.int_expr(sc, d, growth).p()}")
        if kind == "boolbits":  # bool & bool is a bool
            return E(f"{self.compare(sc, d).p()} {self.one(('&', '|', '^'))} {self.compare(sc, d).p()}")
        if kind == "data":
            return _atom(f"int({self.data_read(sc, d).text})")
        if kind == "shift":
            left = self.int_expr(sc, d, growth)
            return E(f"{left.p()} << {self.shift_count(sc, depth, growth).p()}")
        if kind == "global_helper":
            return _atom(f"hg({self.num_expr(sc, d, growth).text})")
        if kind == "instance":
            p, q = self.num_expr(sc, d, growth).text, self.num_expr(sc, d, growth).text
            return _atom(f"Pt({p}, {q}).b")
        assert kind == "pow"
        return E(f"{self.int_expr(sc, d, growth).p()} ** {self.int_(0, 3)}")

    def walrus_weight(self, sc: Scope, targets: tuple[str, ...], growth: bool) -> int:
        """An assignment expression stores its value unmasked: inside loops only where nothing grows."""
        return 1 if targets and (not sc.in_loop or not growth) else 0

    def num_expr(self, sc: Scope, depth: int, growth: bool = True) -> E:
        """An expression whose value is an int, bool or float whenever it evaluates."""
        if depth <= 0:
            return self.num_leaf(sc)
        kind = self.pick(
            (5, "leaf"), (8, "binop"), (3, "int"), (2, "unary"), (3, "call"), (2, "math"), (1, "ifexp"),
            (1, "boolop"), (1, "data"), (1, "sqrtabs"), (self.wide, "comprehension"), (self.wide, "helper"),
            (self.wide and not self.held, "global_helper"), (self.wide, "instance"),
            (1 if growth else 0, "pow"), (self.walrus_weight(sc, sc.num_write, growth), "walrus"),
        )  # fmt: skip
        d = depth - 1
        if kind == "leaf":
            return self.num_leaf(sc)
        if kind == "walrus":
            return _atom(f"({self.one(sc.num_write)} := {self.num_expr(sc, d, growth).text})")
        if kind == "binop":
            op = self.one(("+", "-", "*", "/", "//", "%"))
            left = self.num_expr(sc, d, growth)
            if op in ("/", "//", "%"):
                right = self.divisor(sc, depth, growth, num=True)
            elif op == "*" and not growth:
                right = self.small_const()
            else:
                right = self.num_expr(sc, d, growth)
            return E(f"{left.p()} {op} {right.p()}")
        if kind == "int":
            return self.int_expr(sc, depth, growth)
        if kind == "unary":
            return E(f"-{self.num_expr(sc, d, growth).p()}")
        if kind == "call":
            fn = self.one(("abs", "float", "min", "max", "round"))
            if fn in ("abs", "float"):
                return _atom(f"{fn}({self.num_expr(sc, d, growth).text})")
            if fn == "round":
                return _atom(f"round({self.num_expr(sc, d, growth).text}, {self.int_(-2, 3)})")
            return _atom(f"{fn}({self.num_expr(sc, d, growth).text}, {self.num_expr(sc, d, growth).text})")
        if kind == "math":
            fn = self.one(("sqrt", "floor", "fabs", "exp", "log", "sin", "hypot", "copysign", "fmod"))
            if fn in ("hypot", "copysign", "fmod"):
                args = f"{self.num_expr(sc, d, growth).text}, {self.num_expr(sc, d, growth).text}"
            else:
                args = self.num_expr(sc, d, growth).text
            return _atom(f"math.{fn}({args})")
        if kind == "ifexp":
            body, test, orelse = self.num_expr(sc, d, growth), self.cond(sc, d), self.num_expr(sc, d, growth)
            return E(f"{body.p()} if {test.p()} else {orelse.p()}")
        if kind == "boolop":
            op = self.one(("and", "or"))
            return E(f"{self.num_expr(sc, d, growth).p()} {op} {self.num_expr(sc, d, growth).p()}")
        if kind == "data":
            return self.data_read(sc, d)
        if kind == "sqrtabs":
            return E(f"{'held_abs' if self.held else 'abs'}({self.num_expr(sc, d, growth).text}) ** 0.5")
        if kind == "comprehension":
            return self.comprehension(sc, d, growth)
        if kind == "helper":
            name = "held_h" if self.held else "h"
            p, q = self.num_expr(sc, d, growth).text, self.num_expr(sc, d, growth).text
            form = self.one(("{p}, {q}", "{p}, q={q}", "q={q}, p={p}"))  # (keywords too: CALL_KW)
            return _atom(f"{name}({form.format(p=p, q=q)})")
        if kind == "global_helper":
            return _atom(f"hg({self.num_expr(sc, d, growth).text})")
        if kind == "instance":
            p, q = self.num_expr(sc, d, growth).text, self.num_expr(sc, d, growth).text
            return _atom(f"Pt({p}, {q}).b")
        assert kind == "pow"
        exponent = self.one(("2", "3", "-1", "0", "(-2)", "0.5"))
        return E(f"{self.num_expr(sc, d, growth).p()} ** {exponent}")

    def comprehension(self, sc: Scope, depth: int, growth: bool) -> E:
        """sum/max/len of a list comprehension over data or a short range."""
        kind = self.pick((3, "sum"), (2, "range"), (1, "count"), (1, "max"))
        if kind == "range":
            inner = dataclasses.replace(sc, int_read=(*sc.int_read, COMP_VAR))
            source = f"range({self.int_(0, 8)})"
        else:
            inner = dataclasses.replace(sc, num_read=(*sc.num_read, COMP_VAR))
            source = "data"
        if kind == "count":
            # (a comprehension's condition cannot be a bare conditional expression: always parenthesized)
            return _atom(f"len([{COMP_VAR} for {COMP_VAR} in data if {self.cond(inner, depth).p()}])")
        fn = "max" if kind == "max" else "sum"
        if self.flag(40):
            # (not beside a try, nor in a generator function: partial code is refused where a generator expression
            # reads a variable a loop binds, jit.frontend.statements._cells_may_outlive_their_statement)
            if fn == "sum" and not self.use_try and not self.as_generator and self.flag(50):
                return self.consumed(inner, depth, growth, source)
            return self.nested_code(sc, depth, growth, fn)
        elt = self.num_expr(inner, depth, growth).text
        test = f" if {self.cond(inner, depth).p()}" if self.flag(30) else ""
        return _atom(f"{fn}([{elt} for {COMP_VAR} in {source}{test}])")

    def consumed(self, inner: Scope, depth: int, growth: bool, source: str) -> E:
        """sum or any of a generator expression over data or a short range, reading the program's variables:
        tier-1 code inlines it (jit.frontend.consumers)."""
        # (no assignment expression: the expression would stay CPython's generator, which may not read them)
        inner = dataclasses.replace(inner, int_write=(), num_write=())
        test = f" if {self.cond(inner, depth).p()}" if self.flag(30) else ""
        if self.flag(30):
            return _atom(f"any({self.cond(inner, depth).p()} for {COMP_VAR} in {source}{test})")
        return _atom(f"sum({self.num_expr(inner, depth, growth).text} for {COMP_VAR} in {source}{test})")

    def nested_code(self, sc: Scope, depth: int, growth: bool, fn: str) -> E:
        """sum/max of a generator expression over a short range: code CPython compiles
        (jit.frontend.nested_code). It reads no variable the program assigns (its own, the prologue's locals,
        globals): one that does would make the whole function plain CPython."""
        # (no assignment expression either: it would assign a variable of the function, through a cell)
        inner = dataclasses.replace(sc, int_read=(COMP_VAR,), num_read=(COMP_VAR,), int_write=(), num_write=())
        reads_unbound, self.use_unbound = self.use_unbound, False
        try:
            elt = self.num_expr(inner, depth, growth).text
            source = f"range({self.int_(0, 8)})"
            test = f" if {self.cond(inner, depth).p()}" if self.flag(30) else ""
            return _atom(f"{fn}({elt} for {COMP_VAR} in {source}{test})")
        finally:
            self.use_unbound = reads_unbound

    def compare(self, sc: Scope, depth: int) -> E:
        ops = ("<", "<=", ">", ">=", "==", "!=")
        kind = self.pick((4, "simple"), (2, "chained"), (1, "parity"), (self.wide, "in"), (1, "identity"))
        if kind == "simple":
            return E(f"{self.num_expr(sc, depth).p()} {self.one(ops)} {self.num_expr(sc, depth).p()}")
        if kind == "chained":
            parts = [self.num_expr(sc, depth).p()]
            for _ in range(self.int_(2, 3)):
                parts += [self.one(ops), self.num_expr(sc, depth).p()]
            return E(" ".join(parts))
        if kind == "parity":
            return E(f"{self.int_expr(sc, depth).p()} % {self.one((2, 3))} == {self.one((0, 1))}")
        if kind == "identity":  # (of a number and None, True or False: never the same object)
            # (a variable or a comparison: a literal there is a SyntaxWarning)
            left = _atom(self.one(sc.num_read + sc.int_read)) if self.flag(50) else self.compare(sc, depth)
            return E(f"{left.p()} {self.one(('is', 'is not'))} {self.one(('None', 'True', 'False'))}")
        return E(f"{self.num_expr(sc, depth).p()} {self.one(('in', 'not in'))} data")

    def cond(self, sc: Scope, depth: int) -> E:
        """A test for if/while/ifexp."""
        if depth <= 0:
            return self.compare(sc, 0)
        kind = self.pick(
            (6, "compare"), (2, "boolop"), (1, "not"), (1, "truth"), (1, "predicate"), (self.wide, "object")
        )
        if kind == "object":
            return _atom(f"Truthy({self.num_expr(sc, depth - 1).text})")
        if kind == "compare":
            return self.compare(sc, depth - 1)
        if kind == "predicate":
            return _atom(f"math.{self.one(('isnan', 'isinf', 'isfinite'))}({self.num_expr(sc, depth - 1).text})")
        if kind == "boolop":
            op = self.one(("and", "or"))
            items = [self.cond(sc, depth - 1).p() for _ in range(self.int_(2, 3))]
            return E(f" {op} ".join(items))
        if kind == "not":
            return E(f"not {self.cond(sc, depth - 1).p()}")
        return self.num_expr(sc, depth - 1)

    # --- statements --------------------------------------------------------------------------------------
    def block(self, sc: Scope, lo: int, hi: int) -> list[str]:
        lines: list[str] = []
        for _ in range(self.int_(lo, hi)):
            lines += self.stmt(sc)
        return lines or ["pass"]

    def exit_stmt(self, sc: Scope) -> str:
        kind = self.pick((2 if sc.in_loop else 0, "break"), (2 if sc.in_loop else 0, "continue"), (1, "return"))
        if kind == "return":
            return self.return_stmt(sc)
        return kind

    def return_stmt(self, sc: Scope) -> str:
        if self.flag(30):
            return f"return {self.num_expr(sc, 1).text}"
        names = sorted(set(self.draw(st.lists(st.sampled_from(sc.int_read + sc.num_read), min_size=1, max_size=4))))
        return f"return ({', '.join(names)},)" if len(names) == 1 else f"return ({', '.join(names)})"

    def stmt(self, sc: Scope) -> list[str]:
        compound = sc.nest < MAX_NEST
        loops = compound and sc.budget >= 2 and sc.loops < 3
        kind = self.pick(
            (6, "assign"), (4, "augassign"), (3 if compound else 0, "if"), (3 if loops else 0, "for"),
            (2 if loops else 0, "while"), (1, "store"), (1 if sc.in_loop else 0, "exit"), (1, "return"),
            (1, "tuple"), (1, "chain"), (self.use_list, "append"), (2 * self.use_dict, "tally"),
            (3 * self.use_boxes, "box"),
        )  # fmt: skip
        if kind == "chain" and self.use_unbound and self.flag(15):
            kind = "del"
        if kind == "chain" and self.use_globals and self.flag(40):
            kind = "del_global"
        return getattr(self, f"stmt_{kind}")(sc)

    def rhs(self, sc: Scope, is_int: bool, depth: int | None = None) -> str:
        """The value of an assignment; inside loops, growing operators only under a mask."""
        expr = self.int_expr if is_int else self.num_expr
        if depth is None:
            depth = self.int_(1, 3)
        if not sc.in_loop:
            return expr(sc, depth).text
        if not self.flag(30):
            return expr(sc, depth, growth=False).text
        if self.wide:
            mask = self.one(MASKS if is_int else FLOAT_MASKS)
        else:
            mask = self.one(NARROW_MASKS if is_int else NARROW_FLOAT_MASKS)
        return f"({expr(sc, depth).text}) {mask}"

    def stmt_assign(self, sc: Scope) -> list[str]:
        is_int = self.flag(50)
        target = self.one(sc.int_write if is_int else sc.num_write)
        return [f"{target} = {self.rhs(sc, is_int)}"]

    def stmt_tuple(self, sc: Scope) -> list[str]:
        kind = self.pick((2, "swap"), (2, "general"), (self.wide, "divmod"), (self.wide, "list"))
        if kind == "swap":
            names = self.one((sc.int_write, sc.num_write))
            n = self.int_(2, 3)
            targets = self.draw(st.lists(st.sampled_from(names), min_size=n, max_size=n, unique=True))
            values = targets[1:] + targets[:1]
            return [f"{', '.join(targets)} = {', '.join(values)}"]
        if kind == "divmod":
            is_int = self.flag(50)
            write = sc.int_write if is_int else sc.num_write
            args = f"{self.rhs(sc, is_int, 1)}, {self.divisor(sc, 1, not sc.in_loop, num=not is_int).text}"
            return [f"{self.one(write)}, {self.one(write)} = divmod({args})"]
        n = self.int_(2, 3)
        targets, values = [], []
        for _ in range(n):
            is_int = self.flag(50)
            targets.append(self.one(sc.int_write if is_int else sc.num_write))
            values.append(self.rhs(sc, is_int, self.int_(0, 2)))
        if kind == "list":
            return [f"{', '.join(targets)} = [{', '.join(values)}]"]
        return [f"{', '.join(targets)} = {', '.join(values)}"]

    def stmt_chain(self, sc: Scope) -> list[str]:
        is_int = self.flag(50)
        targets = [self.one(sc.int_write if is_int else sc.num_write) for _ in range(self.int_(2, 3))]
        if not is_int and self.flag(20):
            targets[-1] = f"data[{self.data_index(sc, 1)}]"
        return [f"{' = '.join(targets)} = {self.rhs(sc, is_int)}"]

    def word(self, sc: Scope) -> str:
        """One of the strs of `words` (a str read from a tuple)."""
        return f"words[{self.int_leaf(sc).p()} % {len(WORDS)}]"

    def stmt_tally(self, sc: Scope) -> list[str]:
        key = self.word(sc)
        if self.flag(30):
            return [f"tally[{key}] = {self.num_expr(sc, self.int_(0, 1), growth=False).text}"]
        # (an operand of +: parenthesized where needed, `+ not x` is a SyntaxError)
        step = self.num_expr(sc, self.int_(0, 1), growth=False).p()
        return [f"tally[{key}] = tally.get({key}, 0) + {step}"]

    def stmt_append(self, sc: Scope) -> list[str]:
        return [f"acc.append({self.num_expr(sc, self.int_(0, 2), growth=not sc.in_loop).text})"]

    def stmt_box(self, sc: Scope) -> list[str]:
        """A list made, or moved between `box` and `keep` (objects a side trace copies into another variable)."""
        kind = self.pick((3, "make"), (3, "copy"), (1, "swap"), (1, "append"))
        if kind == "make":
            items = ", ".join(self.num_expr(sc, self.int_(0, 1), growth=False).text for _ in range(self.int_(1, 2)))
            return [f"box = [{items}]"]
        if kind == "copy":
            return [self.one(("keep = box", "box = keep"))]
        if kind == "swap":
            return ["box, keep = keep, box"]
        return [f"keep.append({self.num_expr(sc, 0, growth=False).text})"]  # (into both, where they are one list)

    def stmt_del(self, sc: Scope) -> list[str]:
        return [f"del {MAYBE_UNBOUND}"]

    def stmt_del_global(self, sc: Scope) -> list[str]:
        """`del G`, then G assigned again (every later read finds it bound)."""
        name = self.one(INT_GLOBALS)
        return [f"del {name}", f"{name} = {self.rhs(sc, True)}"]

    def aug(self, sc: Scope, target: str, is_int: bool) -> str:
        if is_int:
            op = self.pick(*INT_BINOPS, (1, "<<"), (1, "**"))
        else:
            op = self.pick((3, "+"), (2, "-"), (2, "*"), (1, "/"), (1, "//"), (1, "%"), (1, "**"))
        depth = self.int_(0, 2)
        growth = not sc.in_loop
        expr = self.int_expr if is_int else self.num_expr
        if op == "**":
            if sc.in_loop:  # v **= 2 would square v's size on every iteration
                value = self.one(("1", "0"))
            else:
                value = self.one(("2", "3", "0") if is_int else ("2", "3", "0", "-1", "0.5"))
        elif op == "*" and sc.in_loop:
            value = self.small_const().text if not is_int else str(self.one((2, 3, -1, 5, 0)))
        elif op == "<<" or (op == ">>" and not self.flag(20)):
            value = self.shift_count(sc, depth, growth or op == ">>").text
        elif op in ("//", "%", "/"):
            value = self.divisor(sc, depth + 1, growth, num=not is_int).text
        else:
            value = expr(sc, depth, growth).text
        return f"{target} {op}= {value}"

    def stmt_augassign(self, sc: Scope) -> list[str]:
        is_int = self.flag(50)
        return [self.aug(sc, self.one(sc.int_write if is_int else sc.num_write), is_int)]

    def stmt_store(self, sc: Scope) -> list[str]:
        target = f"data[{self.data_index(sc, 1)}]"
        if self.flag(50):
            return [self.aug(sc, target, is_int=False)]
        return [f"{target} = {self.rhs(sc, is_int=False)}"]

    def stmt_return(self, sc: Scope) -> list[str]:
        return [f"if {self.cond(sc, 2).text}:", "    " + self.return_stmt(sc)]

    def stmt_exit(self, sc: Scope) -> list[str]:
        return [f"if {self.cond(sc, 2).text}:", "    " + self.exit_stmt(sc)]

    def body(self, sc: Scope, lo: int = 1, hi: int = 4) -> list[str]:
        """An indented block, in an if it may end with break/continue/return."""
        lines = self.block(sc, lo, hi)
        return ["    " + line for line in lines]

    def if_body(self, sc: Scope) -> list[str]:
        lines = self.block(sc, 1, 3)
        if self.flag(15):
            lines.append(self.exit_stmt(sc))
        return ["    " + line for line in lines]

    def stmt_if(self, sc: Scope) -> list[str]:
        inner = sc.inner()
        lines = [f"if {self.cond(sc, 2).text}:", *self.if_body(inner)]
        for _ in range(self.int_(0, 2)):
            lines += [f"elif {self.cond(sc, 2).text}:", *self.if_body(inner)]
        if self.flag(40):
            lines += ["else:", *self.if_body(inner)]
        return lines

    def loop_scope(self, sc: Scope, trips: int, var: str | None = None, counter: str | None = None) -> Scope:
        int_read = sc.int_read + tuple(v for v in (var, counter) if v and v not in sc.int_read)
        int_write = sc.int_write + ((var,) if var and var not in sc.int_write else ())
        return sc.inner(
            int_read=int_read,
            int_write=int_write,
            loops=sc.loops + 1,
            budget=sc.budget // max(trips, 1),
            in_loop=True,
        )

    def loop_else(self, sc: Scope) -> list[str]:
        if not self.flag(15):
            return []
        return ["else:", *self.body(sc.inner(), 1, 2)]

    def trips(self, sc: Scope) -> int:
        """A bound on a new loop's trip count; shrinks towards 5, enough iterations to make the loop hot."""
        cap = min(MAX_TRIPS, sc.budget)
        mid = min(5, cap)
        return mid + self.int_(1 - mid, cap - mid)

    def up_to(self, k: int, lo: int) -> int:
        """A number in [lo, k], shrinking towards k."""
        return k - self.int_(0, k - lo)

    def range_args(self, sc: Scope, k: int) -> str:
        """Arguments of a range with at most k items."""
        kind = self.pick(
            (8, "stop"), (6, "start_stop"), (6, "step"), (6, "mod"), (4, "mod_start"), (4, "down"),
            (2 if k >= DATA_MAX else 0, "len"), (1, "var_step"), (2, "big"), (3, "offset"),
        )  # fmt: skip
        if kind == "stop":
            return str(self.up_to(k, -1))
        if kind == "start_stop":
            start = self.int_(-5, 5)
            return f"{start}, {start + self.up_to(k, -2)}"
        if kind == "step":
            step = self.one((2, -1, 3, -2, 1, -3))
            start = self.int_(-5, 5)
            stop = start + step * self.up_to(k, -2)
            return f"{start}, {stop}, {step}"
        if kind == "mod":
            return f"{self.int_expr(sc, 1).p()} % {self.up_to(k, 1)}"
        if kind == "mod_start":
            m = self.int_(1, max(k // 2, 1))
            return f"{self.int_expr(sc, 1).p()} % {m}, {self.up_to(k - m + 1, 0)}"
        if kind == "down":
            m = self.int_(1, max(k // 2, 1))
            return f"{self.up_to(k - m, 0)}, -({self.int_expr(sc, 1).p()} % {m}), -1"
        if kind == "len":
            return "len(data)"
        if kind == "big":  # a few iterations around the edges of machine integers
            base = self.one(RANGE_BASES if self.wide else NARROW_RANGE_BASES)
            step = self.one((1, -1, 2))
            start = self.int_(-3, 3)
            stop = start + step * self.up_to(k, -1)

            def at(offset: int) -> str:
                return f"{base} {'-' if offset < 0 else '+'} {abs(offset)}" if offset else base

            return f"{at(start)}, {at(stop)}" + (f", {step}" if step != 1 else "")
        if kind == "offset":  # from a variable: its value can be anything
            v = self.one(sc.int_read)
            t = self.up_to(k, 0)
            return self.one((f"{v}, {v} + {t}", f"{v}, {v} - {t}, -1"))
        # a step of -1, 0 (ValueError) or 1
        return f"-3, {self.up_to(k - 3, -3)}, {self.int_expr(sc, 1).p()} % 3 - 1"

    def stmt_for(self, sc: Scope) -> list[str]:
        var = LOOP_VARS[sc.loops]
        if sc.budget >= DATA_MAX and self.flag(25):
            item = ITEM_VARS[sc.loops]
            inner = self.loop_scope(sc, DATA_MAX, var=var)
            pair = ZIP_VARS[sc.loops]
            items = (item, pair)
            inner = dataclasses.replace(inner, num_read=(*inner.num_read, *items), num_write=(*inner.num_write, *items))
            heads = [f"{item} in data"] + [f"{item} in tup"] * self.use_tuple
            heads += [f"{var}, {item} in enumerate(data)", f"{var}, {item} in enumerate(data, {self.int_(-3, 3)})"]
            heads += [f"{item}, {pair} in zip(data, tup)", f"{pair}, {item} in zip(tup, data)"] * self.use_tuple
            heads += [f"{item} in tally.values()"] * self.use_dict  # (tally may grow meanwhile: RuntimeError)
            # (an inner loop's iterator the outer loop's trace makes: enumerate, zip, a dict's items)
            heads += [f"_w{sc.loops}, {item} in tally.items()"] * self.use_dict
            heads += [f"{var}, {item} in enumerate(tup, {self.int_(-3, 3)})", f"{item}, {pair} in zip(tup, tup)"] * (
                self.use_tuple
            )
            if self.wide:
                heads += [f"{item} in data[::-1]"]
            head = self.one(heads)
            if " zip(" not in head:
                inner = dataclasses.replace(inner, num_read=inner.num_read[:-1], num_write=inner.num_write[:-1])
            return [f"for {head}:", *self.with_try(sc, inner, self.body(inner))] + self.loop_else(sc)
        k = self.trips(sc)
        inner = self.loop_scope(sc, k, var=var)
        body = self.with_try(sc, inner, self.body(inner))
        if self.flag(15):  # a range object kept in a variable, iterated through its iterator
            rng = f"_r{sc.loops}"
            lines = [f"{rng} = range({self.range_args(sc, k)})", f"for {var} in {rng}:", *body]
        else:
            lines = [f"for {var} in range({self.range_args(sc, k)}):", *body]
        return lines + self.loop_else(sc)

    def with_try(self, sc: Scope, inner: Scope, body: list[str]) -> list[str]:
        """(use_try) The body of a loop outside every loop, if it holds a nested loop, starts with a try
        statement: the front end leaves such a loop to CPython and compiles its nested loops on their own
        (``jit.frontend.statements._compile_loop``), so the function still has loops to hand over."""
        if not self.use_try or sc.loops or not any(line.lstrip().startswith(("for ", "while ")) for line in body):
            return body
        attempt = self.stmt_assign(inner) if self.flag(50) else self.stmt_augassign(inner)
        handler = self.stmt_assign(inner) if self.flag(70) else ["pass"]
        lines = ["try:", *(f"    {line}" for line in attempt), f"    if {self.cond(inner, 1).text}:"]
        lines += ["        raise ZeroDivisionError", "except ZeroDivisionError:", *(f"    {line}" for line in handler)]
        return [f"    {line}" for line in lines] + body

    def stmt_while(self, sc: Scope) -> list[str]:
        k = self.trips(sc)
        w = f"w{self.counters}"
        self.counters += 1
        inner = self.loop_scope(sc, k, counter=w)
        kind = self.pick((3, "up"), (2, "down"), (1, "true"), (1, "from"))
        extra = f" and {self.cond(inner, 1).p()}" if self.flag(30) else ""
        if kind == "up":
            step = self.int_(1, 3)
            head = [f"{w} = 0", f"while {w} < {k * step}{extra}:", f"    {w} += {step}"]
        elif kind == "down":
            head = [f"{w} = {k}", f"while {w} > 0{extra}:", f"    {w} -= 1"]
        elif kind == "true":
            head = [f"{w} = 0", "while True:", f"    {w} += 1", f"    if {w} > {k - 1}:", "        break"]
        else:
            m = self.int_(1, k)
            head = [f"{w} = {self.int_expr(sc, 1).p()} % {m}", f"while {w} < {k}{extra}:", f"    {w} += 1"]
        return head + self.with_try(sc, inner, self.body(inner)) + self.loop_else(sc)

    # --- the function ------------------------------------------------------------------------------------
    def function(self) -> str:
        self.wide = self.flag(40)
        # (functions held in local variables: their calls are inlined or get their uops, guarded as values)
        self.held = self.flag(25)
        # the initial values (tup, acc and u do not exist yet)
        init_sc = Scope(int_read=INT_PARAMS, int_write=(), num_read=NUM_PARAMS, num_write=())
        self.use_globals = self.flag(30)
        self.use_try = self.flag(20)
        self.as_generator = self.flag(15)  # (drawn before the body: what the body may hold depends on it)
        int_vars = INT_LOCALS + INT_GLOBALS * self.use_globals
        num_vars = NUM_LOCALS + NUM_GLOBALS * self.use_globals
        lines = [f"global {', '.join(INT_GLOBALS + NUM_GLOBALS)}"] if self.use_globals else []
        lines += [f"{v} = {self.int_expr(init_sc, self.int_(0, 1)).text}" for v in int_vars]
        lines += [f"{v} = {self.num_expr(init_sc, self.int_(0, 1)).text}" for v in num_vars]
        init_loop_vars = not self.flag(20)
        if init_loop_vars:
            lines.append(" = ".join(LOOP_VARS) + " = 0")
        if self.flag(25):
            lines.append(f"tup = ({', '.join(self.num_leaf(init_sc).text for _ in range(3))})")
            self.use_tuple = True
        if self.flag(25):
            lines.append("acc = []")
            self.use_list = True
        if self.flag(20):
            lines.append("box = keep = []")
            self.use_boxes = True
        if self.flag(20):
            lines.append(f"words = {WORDS!r}")
            lines.append("tally = {}")
            self.use_dict = True
        self.use_unbound = self.flag(20)
        loop_vars = LOOP_VARS if init_loop_vars else ()
        sc = Scope(
            int_read=INT_PARAMS + int_vars + loop_vars,
            int_write=INT_PARAMS + int_vars + loop_vars,
            num_read=NUM_PARAMS + num_vars,
            num_write=NUM_PARAMS + num_vars + ((MAYBE_UNBOUND,) if self.use_unbound else ()),
        )
        # at least one loop at the top level: tracejit is about loops
        lines += self.block(sc, 0, 2) if self.flag(50) else []
        loop = self.stmt_while(sc) if self.flag(30) else self.stmt_for(sc)
        if self.use_try and self.flag(50):
            # (the try is left to CPython, the loop in it compiled; where the loop raises, the handler reads the
            # locals as they were there)
            handler = self.stmt_assign(sc)
            loop = ["try:", *(f"    {line}" for line in loop), "except (ZeroDivisionError, OverflowError, ValueError):"]
            loop += [f"    {line}" for line in handler]
        lines += loop
        if self.as_generator:  # (a generator function's loops that do not yield are compiled: partial code)
            lines.append(f"yield ({', '.join(sc.int_read + sc.num_read)})")
        lines += self.block(sc, 0, 3) if self.flag(50) else []
        # every variable, so that any wrong value shows; the loop variable may be unbound after the loop
        final = sc.int_read + sc.num_read + (() if init_loop_vars or not self.flag(20) else ("i",))
        final += ("acc",) * self.use_list + ("tally",) * self.use_dict + ("box", "keep") * self.use_boxes
        watched = sc.int_read + sc.num_read
        if watched and self.flag(25):  # a lambda reading a variable the loops write: a cell variable of f
            lines.insert(0, f"peek = lambda: {self.one(watched)}")
            final += ("peek()",)
        lines.append(f"return ({', '.join(final)})")
        held = [name for name in ("h", "abs") if f"held_{name}(" in "\n".join(lines)]
        if "h" in held and self.flag(50):  # a lambda or def, a closure over a local assigned once: inlined (LOAD_FREE)
            held.remove("h")
            weight = self.one(("1", "2", "-3", "0.5"))
            made = ["held_h = lambda p, q: (p - q if p > q else q - p) * hk"]
            if self.flag(50):
                made = ["def held_h(p, q):", "    return (p - q if p > q else q - p) * hk"]
            lines = ["hk = " + weight, *made, *lines]
        lines = [f"held_{name} = {name}" for name in held] + lines
        if any("hg(" in line for line in lines):
            lines.insert(0, "hg0()")
        body = "".join(f"    {line}\n" for line in lines)
        func = f"def f({', '.join(PARAMS)}):\n{body}"
        prelude = ""  # the globals f uses
        if "LIMIT" in func:
            prelude += f"LIMIT = {self.one(INT_CONSTS if self.wide else NARROW_INT_CONSTS)}\n"
        if "SCALE" in func:
            prelude += f"SCALE = {self.one(FLOAT_CONSTS)}\n"
        if re.search(r"\bh\(|= h\n", func):
            prelude += ("\n\n" if prelude else "") + HELPER
        if "hg(" in func:
            prelude += ("\n\n" if prelude else "") + HELPER_GLOBAL
        if "Pt(" in func:
            prelude += ("\n\n" if prelude else "") + POINT
        if "Truthy(" in func:
            prelude += ("\n\n" if prelude else "") + TRUTHY
        return f"{prelude}\n\n{func}" if prelude else func


@st.composite
def programs(draw: Callable[[st.SearchStrategy[Any]], Any]) -> Program:
    """A random function `f(a, b, x, y, data)` (see the module docstring)."""
    return Program(_Gen(draw).function())


# --- arguments ---------------------------------------------------------------------------------------------

SPECIAL_INTS = (0, 1, -1, 2, 3, 2**31, 2**32 - 1, 2**53 + 1, 2**62 - 1, 2**62, 2**63 - 1, 2**63, -(2**63),
                -(2**63) - 1, 2**64, -(2**62))  # fmt: skip
SPECIAL_FLOATS = (0.0, -0.0, 1.0, -1.0, 0.5, math.nan, math.inf, -math.inf, 1e-300, 5e-324, 1e300, 2.0**63,
                  -(2.0**63), 2.0**53 + 2, 1e16)  # fmt: skip

ints = st.one_of(
    st.integers(-10, 10),
    st.sampled_from(SPECIAL_INTS),
    st.integers(-(2**63), 2**63 - 1),
    st.integers(-10, 10),
    st.integers(-(2**65), 2**65),
    # a few steps from overflowing int64
    st.sampled_from((2**62, 2**63 - 1, -(2**63), -(2**62))).flatmap(lambda v: st.integers(v - 40, v + 40)),
)
floats = st.one_of(st.floats(-100, 100), st.sampled_from(SPECIAL_FLOATS), st.integers(-50, 50).map(float), st.floats())
data_lists = st.one_of(
    st.lists(ints, min_size=1, max_size=DATA_MAX),
    st.lists(floats, min_size=1, max_size=DATA_MAX),
    st.lists(st.one_of(ints, floats), min_size=1, max_size=DATA_MAX),
)


def arguments() -> st.SearchStrategy[tuple[Any, ...]]:
    """Arguments (a, b, x, y, data) for a generated program."""
    return st.tuples(ints, ints, floats, floats, data_lists)
