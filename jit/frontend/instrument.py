"""The instrumented code: the user's function as CPython compiles it, with every loop statement counting its
iterations and handing itself to the JIT once hot. This is the baseline tier: CPython runs the function, the
JIT runs only the loops it takes over.

Each loop statement L (its tier-1 ``LoopInfo`` index) keeps one int in the list ``LOOPS`` (``RT.counters``):

* ``> 0``  counting: iterations left before the loop is hot (a COUNTED copy of the loop runs);
* ``== 0`` hot: at the loop's start, the loop is handed to the JIT at its header;
* ``< 0``  plain: loop starts left before the JIT looks at this loop again (the PLAIN copy runs: the user's
  loop exactly as written, with no per-iteration cost); ``NEVER``: plain for good, and not even counted.

The counted copy counts in a local, written back to LOOPS[L] in a ``finally`` however the loop is left (a
``try`` costs nothing in CPython until something raises), which also counts the start in ``RT.starts[L]``
(so that the runtime knows how many iterations a start runs before it records the loop).

A hand-off calls ``RT.runtime().loop(L, at_body, it, iterable, values)`` (``runtime`` a weak reference:
``runtime.loop_driver.CodeHooks`` says why): ``at_body`` False at the loop's header (before
the next item is fetched / the condition is tested), True at the start of the body (the target is assigned /
the condition held); ``it`` the loop's iterator (None for ``while``), ``iterable`` what the loop made it from,
if that is not the iterator itself, else None (then the iterator may be the user's: the JIT must call its
``next`` itself; a private one it may copy the state of, as tier 1 does with a range, list or tuple;
the iterable is kept meanwhile, from the loop's start to its end, in the counted copy only); ``values`` the
user's locals in tier-1 slot order, ``UNBOUND`` for unbound ones, and for a cell variable of the tier-1 code
(``T1Code.cells``) its cell itself: the instrumented code has the same cell variables as the user's function
(CPython compiles the same nested scopes in it), and ``RT.cell`` takes the cell out of a lambda reading the
variable, so that tier 1 reads and writes the very cell the nested functions CPython made hold (what comes back
in its place is the same cell, which no assignment takes). It returns ``(how, values, extra)``: how is
CONTINUE (go on with the loop in CPython, from its header: the runtime has moved the iterator to where the
JIT left it and chosen the copy through ``RT.counters[L]``), EXHAUSTED (the loop ended: run its else clause),
BREAK or RETURN (``extra`` is the value); otherwise ``extra`` says whether some local came back unbound
(such locals are deleted). Exceptions propagate; ``RT.unwound(e)`` (``RT.fix(e)`` for a comprehension) first
makes their traceback show the line that failed, as CPython's would.

Objects enter the code as constants: the generated code holds placeholder constants, which ``bind``
replaces in ``co_consts`` with the real objects, so the function's globals stay the user's globals and the
code has no free variables. Hidden locals get a prefix no name of the function starts with.

Code growth: a ``for`` loop's body and else clause appear three times (a plain copy over the iterable, the
counted copy, and a plain copy over the iterator for when the JIT gives the loop back mid-way), a ``while``
loop's twice (counted, plain); inner loops are instrumented inside every copy. A loop whose body would appear
more than ``MAX_COPIES`` times in the function gets a single copy instead (the plain one): it then counts loop
STARTS, not iterations, and is handed to the JIT at its header only. So two nested levels of ``for`` loops are
fully instrumented, and deeper loops still reach native code when an enclosing loop does.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import types
from collections.abc import Collection
from typing import Any

from jit.frontend.builder import collect_consts, const_key
from jit.frontend.instructions import LoopInfo, T1Code
from jit.frontend.loops import LOOP_HEAD_AT_ITERABLE
from jit.frontend.source import FunctionSource

# what a hand-off tells the instrumented code (plain ints: compared with == on the hot path)
CONTINUE, EXHAUSTED, BREAK, RETURN = 0, 1, 2, 3

#: a counter that stays plain for good (no counting: the cheapest loop start); a one-digit int, as CPython's
#: specialized int operations require
NEVER = -(2**30) + 1

#: a counted copy whose count is above this (a warm-up: ``jit.options``' warmup) counts a start of a ``for`` loop
#: whose iterator's length hint is below its count at once, by that hint, and runs it plain: counting each iteration
#: (a decrement and test of a local) costs a small body half its speed in CPython. A start that breaks early counts
#: for its whole length
COUNT_BY_LENGTH = 1024
#: (a count above every count: a loop with loops in it counts each iteration, where they boost it)
NEVER_BY_LENGTH = 2**30

#: once a start of a loop with no loop in it was counted where the count left is above ``COUNT_BY_LENGTH`` (one by one:
#: a ``while`` loop, a ``for`` loop over an iterator without a length hint, such as ``enumerate``, ``zip``, a
#: generator; or at once by its length hint), the next start charges itself and the WARMUP_SKIP - 1 to
#: 2 * WARMUP_SKIP - 2 starts after it that length at once (the count's low bits choose: a fixed number would sample
#: the same item of a periodic pattern, such as the same row of a table in each call), and they run the plain copy
#: (``RT.skips``, ``_CHARGE_AHEAD``): counting one by one cost such a body a third to half of its speed (a decrement
#: of an int past 256 each iteration, or a ``while`` loop's ``repeat``, and the counted copy's set-up at each start),
#: a start counted by its hint about 100 ns (the hint's call and the counted copy's set-up); a plain start costs a
#: list read and write. A power of two.
WARMUP_SKIP = 16

#: how many times the body of the innermost instrumented loop may appear in the generated code
MAX_COPIES = 9

#: objects the generated code refers to; ``bind`` gets one object per name. RT has the attributes ``runtime``,
#: ``fix`` and ``unwound`` (``runtime.errors``: what a hand-off that raised does: unwound also returns the locals
#: where it raised), ``counters`` (LOOPS: a list, one int per tier-1 loop), ``skips`` and ``began`` (per loop: the
#: plain starts charged ahead, and the count where its last counted start began: ``WARMUP_SKIP``), ``boost`` (per
#: loop: 1 once a loop nested in it ran native code, so that it gets hot at its next iteration), ``starts`` (per loop:
#: the starts its counted copy ended), ``iter`` (the builtin), ``hint`` (``operator.length_hint``), ``repeat``
#: (``itertools.repeat``: a `while` loop's counted copy counts with it), ``unbound`` (the tier-1 UNBOUND marker),
#: ``name_error``, ``base_exception`` and ``recursion_error`` (the builtin classes: the user's globals may rebind
#: their names), ``ticks`` (per loop: a counter a comprehension's counted copy calls per iteration), ``cell`` (the
#: cell of a lambda's one free variable) and ``extend`` (what adds the rest of a comprehension given back part way).
PLACEHOLDERS = ("RT",)

# The placeholder constant. CPython warns at compile time about calling, indexing or `is`-comparing a
# literal, so RT is only ever an attribute's owner. (LOOPS is not a constant of its own: a list in co_consts
# would make the code object unhashable, and debuggers and profilers hash code objects.)
_PLACEHOLDER_VALUES: dict[str, Any] = {"RT": frozenset({"\x00tracejit placeholder RT"})}


@dataclasses.dataclass
class InstrumentedCode:
    """The instrumented function's code, with placeholders still in its constants."""

    code: types.CodeType
    tree: ast.Module  # the generated AST
    prefix: str  # hidden locals start with this
    single_copy: frozenset[int]  # loops instrumented with one (plain) copy: they count loop starts
    comprehensions: frozenset[int] = frozenset()  # comprehensions' loops handed over whole (in single_copy too)

    def source(self) -> str:
        """The generated code as Python source, placeholders shown as <NAME> (a debug view, for tests and
        golden files)."""
        text = ast.unparse(self.tree)
        for name, value in _PLACEHOLDER_VALUES.items():
            text = text.replace(repr(value), f"<{name}>")
        return text

    def bind(self, objects: dict[str, Any]) -> types.CodeType:
        """The code with every placeholder replaced by objects[name] (nested code objects included)."""
        by_value = {_PLACEHOLDER_VALUES[name]: obj for name, obj in objects.items()}
        return _replace_constants(self.code, by_value)


def _share_constants(code: types.CodeType, table: dict[Any, Any]) -> types.CodeType:
    consts = []
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            const = _share_constants(const, table)
        else:
            key = const_key(const)
            if key is not None:
                const = table.get(key, const)
        consts.append(const)
    return _with_consts(code, consts)


def _with_consts(code: types.CodeType, consts: list[Any]) -> types.CodeType:
    """code with these constants; code itself where each is the one it has (the user's own code of a nested
    function stays itself: _users_nested_code)."""
    if all(new is old for new, old in zip(consts, code.co_consts)):
        return code
    return code.replace(co_consts=tuple(consts))


def _replace_constants(code: types.CodeType, table: dict[Any, Any]) -> types.CodeType:
    consts = []
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            const = _replace_constants(const, table)
        elif type(const) is frozenset and const in table:
            const = table[const]
        consts.append(const)
    return _with_consts(code, consts)


def _users_nested_code(code: types.CodeType, user: types.CodeType) -> types.CodeType:
    """code, with the code of each function it defines (a ``def`` or ``lambda``, which the instrumentation copies
    as it is) replaced by the user's own code object of that function, where one matches it: then a function the
    instrumented code makes has the code it has under CPython (``f.__code__ is``, and what the front end reads:
    the text of a nested function compiles to the user's code, not always to the instrumented one's, which
    CPython compiles in another module: `math.sin(x)` on a module the user's imports is one LOAD_ATTR there,
    a LOAD_METHOD here), so that a call of it is inlined (``jit.inline``)."""
    users: dict[tuple[str, int], types.CodeType | None] = {}

    def collect(outer: types.CodeType) -> None:
        for const in outer.co_consts:
            if isinstance(const, types.CodeType):
                key = (const.co_qualname, const.co_firstlineno)
                users[key] = None if key in users else const  # (two on one line: neither)
                collect(const)

    def swap(outer: types.CodeType) -> types.CodeType:
        consts = []
        for const in outer.co_consts:
            if isinstance(const, types.CodeType):
                mine = users.get((const.co_qualname, const.co_firstlineno))
                const = mine if mine is not None and _same_function(const, mine) else swap(const)
            consts.append(const)
        return _with_consts(outer, consts)

    collect(user)
    return swap(code)


def _same_function(copy: types.CodeType, user: types.CodeType) -> bool:
    """Is copy (compiled from the instrumented code) the user's function user compiled elsewhere: a function
    (not a comprehension), the same parameters, locals, cells, free variables (the closure the instrumented code
    makes for it follows copy's), names, flags and file?"""
    if copy.co_name.startswith("<") and copy.co_name != "<lambda>":
        return False
    fields = (
        "co_name",
        "co_filename",
        "co_argcount",
        "co_posonlyargcount",
        "co_kwonlyargcount",
        "co_varnames",
        "co_cellvars",
        "co_freevars",
        "co_names",
        "co_flags",
    )
    return all(getattr(copy, field) == getattr(user, field) for field in fields)


def instrument(source: FunctionSource, t1: T1Code, parked: frozenset[int] = frozenset()) -> InstrumentedCode:
    """Generate the instrumented code of a function the front end compiled to ``t1``. The loops in ``parked``
    (tier-1 loop indices) appear as the user wrote them, with no counter (their inner loops are instrumented):
    a loop that has not paid for a long time costs nothing at its start (``runtime.parking``)."""
    return _Instrumenter(source, t1, parked).build()


# --- templates -------------------------------------------------------------------------------------------
# Upper-case names are filled in: hidden locals (IT, S, ...), the placeholder RT, L (the loop's
# index), user code (ITERABLE, TARGET, TEST; statement lists BODY, ORELSE) and hand-offs (HANDOFF_*).

# A loop statement's start: its counter read; where the plain copy runs (plain, or a start charged ahead), that start
# counted (a for loop's template goes on in the plain copy, a while loop's sets S for its tail)
_START = """
S = RT.counters[L]
if S < 0 or (Q := RT.skips[L]):
    if S < 0:
        if S > NEVER:
            RT.counters[L] = S + 1
    else:
        RT.skips[L] = Q - 1
"""

_FOR = (
    _START
    + """    for TARGET in ITERABLE:
        BODY
    else:
        ORELSE
else:
    try:
        OWN = ITERABLE
        IT = RT.iter(OWN)
        if IT is OWN:
            OWN = None
        HOW = 0
        if not S:
            HANDOFF_HEADER
        if HOW == 0:
            C = RT.counters[L]
            if CHARGE_AHEAD:
                RT.counters[L] = RT.began[L] = N
                RT.skips[L] = Q - 1
                RT.starts[L] += Q
            elif C > BY_LENGTH and 0 < (N := RT.hint(IT, 0)) < C:
                RT.began[L] = C
                RT.counters[L] = C - N
                RT.starts[L] += 1
            elif C > 0:
                HOW = 2
                RT.began[L] = C
                try:
                    for TARGET in IT:
                        C -= 1
                        if not C:
                            HANDOFF_BODY
                            if H == 0 and C > 0:
                                continue
                            HOW = H
                            break
                        BODY
                    else:
                        HOW = 1
                finally:
                    RT.counters[L] = C
                    RT.starts[L] += 1
        OWN = None
        if HOW == 0:
            for TARGET in IT:
                BODY
            else:
                IT = None
                ORELSE
        else:
            IT = None
            if HOW == 1:
                ORELSE
        IT = None
    except RT.base_exception:
        IT = OWN = None
        raise
"""
)

# a while loop: its header, its counted copy (one of two), its plain copy
_WHILE_HEAD = (
    _START
    + """        S = -1
else:
    HOW = 0
    if not S:
        HANDOFF_HEADER
    if HOW == 0:
        C = RT.counters[L]
        if CHARGE_AHEAD:
            RT.counters[L] = RT.began[L] = N
            RT.skips[L] = Q - 1
            RT.starts[L] += Q
        elif C > 0:
            HOW = 2
            RT.began[L] = C
"""
)
_WHILE_TAIL = """
                RT.starts[L] += 1
    if HOW:
        S = 0
        if HOW == 1:
            ORELSE
    else:
        S = -1
if S < 0:
    while TEST:
        BODY
    else:
        ORELSE
"""
_WHILE_COUNTED = """
            try:
                while TEST:
                    C -= 1
                    if not C:
                        HANDOFF_BODY
                        if H == 0 and C > 0:
                            continue
                        HOW = H
                        break
                    BODY
                else:
                    HOW = 1
            finally:
                RT.counters[L] = C
"""

# The counted copy of a `while` loop with no loop in it counts its iterations with an itertools.repeat iterator K
# (a for statement around the user's test and body; K's length hint is the count left) rather than a decrement of
# C: an int past 256, which CPython allocates anew at each decrement, cost a small body 40% of its speed while it
# warmed up (a warm-up counts up to 2**30 - 1); FOR_ITER over K, 15-20%. The test runs where CPython's `while` runs
# it, once per iteration; the iteration after the last counted one hands off as before (C 0), once its test is
# true. What is left of the count is K's hint, and one more where the loop ended by its test (K gave an item for
# that test: C counts the iterations whose test was true, as the decrement did). A loop with loops in it counts
# with C: a loop nested in it boosts it by setting C (``_BOOST``).
_WHILE_COUNTED_BY_ITERATOR = """
            K = None
            try:
                while True:
                    for N in (K := RT.repeat(None, C - 1)):
                        if not TEST:
                            HOW = 1
                            break
                        BODY
                    else:
                        K = None
                        if not TEST:
                            C = 1
                            HOW = 1
                            break
                        C = 0
                        HANDOFF_BODY
                        if H == 0 and C > 0:
                            continue
                        HOW = H
                        break
                    break
            finally:
                if K is not None:
                    C = RT.hint(K, 0) + 1 + (HOW == 1)
                    K = None
                RT.counters[L] = C
"""
_WHILE = _WHILE_HEAD + _WHILE_COUNTED[1:] + _WHILE_TAIL[1:]
_WHILE_LEAF = _WHILE_HEAD + _WHILE_COUNTED_BY_ITERATOR[1:] + _WHILE_TAIL[1:]

# single copy (deep loops): count loop starts towards 0 from either side; hand off at the header only
_FOR_SINGLE = """
try:
    IT = ITERABLE
    S = RT.counters[L]
    if S:
        if S > 0:
            RT.counters[L] = S - 1
        elif S > NEVER:
            RT.counters[L] = S + 1
    else:
        OWN = IT
        IT = RT.iter(OWN)
        if IT is OWN:
            OWN = None
        HANDOFF_HEADER
        OWN = None
        if HOW:
            IT = None
            if HOW == 1:
                ORELSE
        else:
            S = -1
    if S:
        for TARGET in IT:
            BODY
        else:
            IT = None
            ORELSE
        IT = None
except RT.base_exception:
    IT = OWN = None
    raise
"""

_WHILE_SINGLE = """
S = RT.counters[L]
if S:
    if S > 0:
        RT.counters[L] = S - 1
    elif S > NEVER:
        RT.counters[L] = S + 1
else:
    HANDOFF_HEADER
    if HOW == 1:
        ORELSE
    elif not HOW:
        S = -1
if S:
    while TEST:
        BODY
    else:
        ORELSE
"""

# the hand-off itself; READS are the reads of possibly-unbound locals, DELETES their deletion
_HANDOFF = """
READS
SAVE
try:
    RESULT, VALUES, R = RT.runtime().loop(L, AT_BODY, IT, OWN, ARGS)
except RT.base_exception as E:
    W = None
    try:
        W = RT.unwound(E)
    except RT.recursion_error:
        pass
    if W is not None:
        UNWOUND
    raise
CLEAR
RELOAD
BOOST
if RESULT == 3:
    return R
"""

# in a loop nested in a counted copy: once the inner loop ran native code, let the outer loop get hot at its
# next iteration (its body already did much work per iteration: TraceMonkey records such outer loops soon)
_BOOST = """
if RT.boost[P]:
    RT.boost[P] = 0
    CP = 1
"""

# after a hand-off, delete the locals it left unbound (R: whether there are any)
_DELETES = """
if R:
    DELETES
"""

# (a hand-off that raised) the locals where the loop raised, taken before re-raising (RT.unwound)
_UNWOUND = """
VALUES, W = W
"""
_UNWOUND_DELETES = """
VALUES, W = W
if W:
    DELETES
"""

_READ = """
try:
    V = NAME
except RT.name_error:
    V = RT.unbound
"""

_DELETE = """
if NAME is RT.unbound:
    del NAME
"""


# A list, set or dict comprehension outside every instrumented loop (its first tier-1 loop L) is handed over at its
# header only, whole. Its statement reads the comprehension's counter S as a loop's: > 0 counting (a COUNTED copy of
# the comprehension counts the iterations of its first loop, only until it is hot), 0 hot (handed over), < 0 plain
# (the statement as written, counting starts towards 0). One counter per comprehension of the statement; the
# statement as written runs when every one is plain. The counted copy counts in RT.ticks[L], an itertools.count's
# __next__ (a C call, always true): a local the comprehension wrote would be a cell, made at each call of the
# function whatever copy runs (CPython 3.11 runs a comprehension as a nested function).
_COMPREHENSION_READ = """
S = RT.counters[L]
"""
_COMPREHENSION_PLAIN = """
if S > NEVER:
    RT.counters[L] = S + 1
"""
# (in the statement's other copy: each comprehension's set-up and its bookkeeping once the statement ends)
_COMPREHENSION_SETUP = """
if S < 0:
    if S > NEVER:
        RT.counters[L] = S + 1
elif S:
    C = RT.ticks[L]()
"""
_COMPREHENSION_COUNTED = """
if S > 0:
    C = S + 1 + C - RT.ticks[L]()
    RT.counters[L] = C if C > 0 else 0
    RT.starts[L] += 1
"""

# (TEST: every comprehension's S < 0; READS: reads of possibly unbound locals, CLEAR: the hidden locals)
_COMPREHENSION_STATEMENT = """
if TEST:
    PLAIN
    STATEMENT
else:
    SETUP
    try:
        READS
        HOT
    except RT.base_exception as E:
        CLEAR
        try:
            RT.fix(E)
        except RT.recursion_error:
            pass
        raise
    finally:
        COUNTED
    CLEAR_AFTER
"""

# One comprehension in the statement's second copy. Once hot (S 0): the first iterable evaluated and iter() called
# on it where CPython does it, then the whole comprehension handed over at its loop's header (``loop`` with whole
# True; the iterable passed as a loop statement's hand-off passes it: None where it is its own iterator, which may
# be the user's); R is (ended, what it built). If the runtime gave the loop back part way (ended False), CPython
# goes on from the iterator, where tier 1 left it (``runtime.handoff.leave``), and adds what the rest of the
# comprehension (REST, over I) builds. Nothing is evaluated twice.
_COMPREHENSION_HANDOFF = """(
    (PLAIN_COPY if S < 0 else COUNTED_COPY) if S
    else R[1] if (R := RT.runtime().loop(L, False, (I := RT.iter(O := ITERABLE)), None if I is O else O, ARGS, True))[0]
    else RT.extend(R[1], REST)
)"""

# A generator expression a builtin consumes (``jit.frontend.consumers``), in the statement's second copy, the same
# way, the whole call handed over: once hot, the callee evaluated (F) and checked to be the builtin of the consumer K
# (without running any user code), else called with the generator as written; then the first iterable evaluated
# and iter() called on it, and the expression's loop handed over whole: R is (ended, what its loop built), which
# RT.consumed makes the consumer's result of; given back part way, the builtin consumes the rest (REST, over I)
# after what tier 1 consumed (RT.consume_rest).
_CONSUMER_HANDOFF = """(
    (PLAIN_COPY if S < 0 else COUNTED_COPY) if S
    else (
        RT.consumed(K, F, R[1])
        if (R := RT.runtime().loop(L, False, (I := RT.iter(O := ITERABLE)), None if I is O else O, ARGS, True))[0]
        else RT.consume_rest(K, F, R[1], REST)
    )
    if RT.consumer_is(K, F := CALLEE)
    else F(GENERATOR)
)"""

_COMPREHENSION_PARTS = {
    "READ": _COMPREHENSION_READ,
    "PLAIN": _COMPREHENSION_PLAIN,
    "SETUP": _COMPREHENSION_SETUP,
    "COUNTED": _COMPREHENSION_COUNTED,
}

# the test the counted copy adds first to its first loop: counts an iteration, always true
_COUNT_ITERATION = "RT.ticks[L]()"


# A start of a loop with no loop in it, past its warm-up's check: did its last start count N > 0 iterations (one by
# one in the counted copy, or at once by its length hint; RT.began: the count where it began), with nothing charged
# since? Then this start and the next Q - 1 are charged N each at once (N: the count left after that, above
# COUNT_BY_LENGTH) and run plain. (A loop with loops in it counts every iteration: the loops nested in it boost it.
# Its test is False.)
_CHARGE_AHEAD = (
    "C > BY_LENGTH and 0 < (N := RT.began[L] - C) and (N := C - (Q := SKIP + (C & SKIP - 1)) * N) > BY_LENGTH"
)


def _template(text: str) -> list[ast.stmt]:
    return ast.parse(text).body  # (parsing anew is several times faster than deep-copying a parsed one)


class _Fill(ast.NodeTransformer):
    """Fill in a template: ``names`` renames upper-case names (hidden locals, placeholders), ``exprs`` puts
    user expressions in place of names, ``stmts`` statement lists in place of a name standing alone as a
    statement. Template nodes get the position of ``at``; its for/while statements that of ``loop_at``."""

    def __init__(
        self,
        at: ast.AST,
        names: dict[str, str],
        exprs: dict[str, ast.expr] | None = None,
        stmts: dict[str, list[ast.stmt]] | None = None,
        loop_at: ast.AST | None = None,
    ) -> None:
        self.at = at
        self.names = names
        self.exprs = exprs or {}
        self.stmts = stmts or {}
        self.loop_at = loop_at or at

    def fill(self, body: list[ast.stmt]) -> list[ast.stmt]:
        return self._visit_list(body)

    def _visit_list(self, items: list[Any]) -> list[Any]:
        out: list[Any] = []
        for item in items:
            if isinstance(item, ast.AST):
                result = self.visit(item)
                out.extend(result if isinstance(result, list) else [result])
            else:
                out.append(item)
        return out

    def generic_visit(self, node: ast.AST) -> ast.AST:
        ast.copy_location(node, self.loop_at if isinstance(node, (ast.For, ast.While)) else self.at)
        if isinstance(node, ast.Attribute):
            # CPython moves a method call's or attribute load's start to the end of the attribute's name:
            # a one-line name right at the start keeps `RT.iter(x)` exactly where the loop's GET_ITER is
            node.end_lineno = node.lineno
            node.end_col_offset = node.col_offset + len(node.attr)
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                items = self._visit_list(value)
                if not items and field == "body":
                    items = [ast.copy_location(ast.Pass(), self.at)]
                setattr(node, field, items)
            elif isinstance(value, ast.AST):
                setattr(node, field, self.visit(value))
        return node

    def visit_Expr(self, node: ast.Expr) -> Any:
        if isinstance(node.value, ast.Name) and node.value.id in self.stmts:
            return self.stmts[node.value.id]
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> Any:
        if node.id in self.exprs:
            replacement = self.exprs[node.id]
            if not hasattr(replacement, "lineno"):  # made by the instrumenter: at the template's position
                for sub in ast.walk(replacement):
                    if "lineno" in sub._attributes and not hasattr(sub, "lineno"):
                        ast.copy_location(sub, self.at)
            return replacement
        if node.id in _PLACEHOLDER_VALUES:
            return ast.copy_location(ast.Constant(_PLACEHOLDER_VALUES[node.id]), self.at)
        if node.id in self.names:
            node.id = self.names[node.id]
        return self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> Any:
        if node.name is not None:
            node.name = self.names.get(node.name, node.name)
        return self.generic_visit(node)


class _Instrumenter:
    def __init__(self, source: FunctionSource, t1: T1Code, parked: frozenset[int]) -> None:
        self.source = source
        self.parked = parked
        self.outer_loops = t1.outer_loops
        self.loops: dict[tuple[int, int], LoopInfo] = {
            loop.statement: loop for loop in t1.loops if loop.statement is not None
        }
        self.prefix = _hidden_prefix(source)
        self.local_names = t1.slot_names[: t1.nlocals]
        # the cell variables of the tier-1 code: a hand-off passes their cells (``cell``), takes nothing back
        self.cell_names = frozenset(t1.slot_names[slot] for slot in t1.cells)
        # locals surely bound when each loop starts: the hand-off reads them directly (others under try)
        self.bound_at = _bound_at_loops(source, set(self.local_names[: t1.nparams]))
        # locals surely unbound when each loop starts: its header's hand-off passes the marker (no try)
        self.unbound_at = _unbound_at_loops(source, set(self.local_names[: t1.nparams]))
        self.single_copy: set[int] = set()
        # outermost comprehensions' first loops, by the comprehension's position (one loop each: a comprehension the
        # front end compiled twice, which no position tells apart, stays as written)
        by_position: dict[tuple[int, int], list[LoopInfo]] = {}
        for loop in t1.loops:
            if loop.comprehension is not None:
                by_position.setdefault(loop.comprehension, []).append(loop)
        self.comprehension_loops = {at: found[0] for at, found in by_position.items() if len(found) == 1}
        self.handed_comprehensions: set[int] = set()
        self.levels: dict[int, int] = {}  # loop index -> its nesting level (see block)

    def hidden(self, name: str, number: int) -> str:
        return f"{self.prefix}{name.lower()}{number}"

    def build(self) -> InstrumentedCode:
        node = self.source.node
        func = copy.copy(node)  # the def with its decorators (never run: they only give co_firstlineno)
        func.body = self.block(node.body, 1, 0)
        declared = [name for stmt in ast.walk(node) if isinstance(stmt, ast.Global) for name in stmt.names]
        if declared:
            # one declaration at the top instead of each where the user wrote it: a loop body appears more
            # than once, and a name used before a later copy's `global` would be a SyntaxError
            at = 1 if _has_docstring(node.body) else 0
            func.body.insert(at, ast.copy_location(ast.Global(list(dict.fromkeys(declared))), node.body[0]))
        inner: ast.stmt = func
        if self.source.class_name is not None:
            # private names are mangled as in the user's class: compile the def inside a class of that name
            inner = ast.copy_location(ast.ClassDef(self.source.class_name, [], [], [func], []), node)
        if self.source.free_names:
            # a closure: compiled inside a function binding the variables it reads, so that its code takes them as
            # free variables, as the user's does (the wrapper runs it with the user's cells)
            binds = ast.Assign([ast.Name(name, ast.Store()) for name in self.source.free_names], ast.Constant(None))
            enclosing = ast.FunctionDef(
                "enclosing", ast.arguments([], [], None, [], [], None, []), [binds, inner], [], None, None
            )
            inner = ast.fix_missing_locations(ast.copy_location(enclosing, node))
        tree = ast.Module([inner], [])  # (every node has its position: the user's, or its loop's)
        flags = _future_flags(self.source)
        compiled = compile(tree, self.source.filename, "exec", flags=flags, dont_inherit=True)
        original = self.source.func.__code__
        code = _find_code(compiled, original.co_name, original.co_firstlineno)
        if code is None:
            raise AssertionError(f"the instrumented code of {original.co_qualname} was not found")
        code = code.replace(co_qualname=original.co_qualname)
        # the user's literals are the very objects of the function's own code, as in its tier-1 code (so
        # that `is` between literals answers the same whichever tier made them)
        table: dict[Any, Any] = {}
        collect_consts(original, table)
        code = _users_nested_code(_share_constants(code, table), original)
        return InstrumentedCode(
            code, tree, self.prefix, frozenset(self.single_copy), frozenset(self.handed_comprehensions)
        )

    # --- statements ------------------------------------------------------------------------------------
    def block(self, stmts: list[ast.stmt], copies: int, level: int) -> list[ast.stmt]:
        """The statements replacing stmts, which appear `copies` times, inside `level` loop statements (else
        clauses included): a loop's hidden locals are named by level, so sibling loops share them (the frame
        stays small) and a loop never shares them with one running inside it."""
        out: list[ast.stmt] = []
        for stmt in stmts:
            out.extend(self.stmt(stmt, copies, level))
        return out

    def stmt(self, node: ast.stmt, copies: int, level: int) -> list[ast.stmt]:
        if isinstance(node, ast.Global):  # (declared once, at the top: see build)
            return [ast.copy_location(ast.Pass(), node)]
        if isinstance(node, (ast.For, ast.While)):
            loop = self.loops.get((node.lineno, node.col_offset))
            if loop is None:
                # a loop left to CPython (``jit.frontend.statements._compile_loop``): the user's statement, never
                # handed over; its nested loops that have tier-1 code are instrumented as usual
                plain = copy.copy(node)
                plain.body = self.block(node.body, copies, level + 1)
                plain.orelse = self.block(node.orelse, copies, level + 1)
                return [plain]
            return self.loop(node, loop, copies, level)
        if isinstance(node, (ast.If, ast.With)):
            out = copy.copy(node)
            out.body = self.block(node.body, copies, level)
            if isinstance(node, ast.If):
                out.orelse = self.block(node.orelse, copies, level)
            return [out]
        if isinstance(node, ast.Try):  # (left to CPython: its loops are handed over, jit.frontend.statements)
            out = copy.copy(node)
            out.body = self.block(node.body, copies, level)
            out.handlers = []
            for handler in node.handlers:
                handler = copy.copy(handler)
                handler.body = self.block(handler.body, copies, level)
                out.handlers.append(handler)
            out.orelse = self.block(node.orelse, copies, level)
            out.finalbody = self.block(node.finalbody, copies, level)
            return [out]
        if isinstance(node, _SIMPLE_WITH_COMPREHENSIONS):
            return self.comprehensions(node)
        return [node]  # a simple statement, or a compound one holding no loop the front end compiled

    def comprehensions(self, node: ast.stmt) -> list[ast.stmt]:
        """The statements replacing simple statement `node`, which may hold comprehensions CPython hands over
        whole once hot (outside every instrumented loop: each appears once, in two copies of its statement, with
        three copies of the comprehension in the second). A statement with an assignment expression (``:=``) stays
        as written: the locals the hand-off passes would not be those the comprehension reads, and one it binds
        would not come back."""
        keys = self.comprehension_loops.keys()
        found = [c for c in _outer_comprehensions(node, keys) if (c.lineno, c.col_offset) in keys]
        if not found or any(isinstance(sub, ast.NamedExpr) for sub in ast.walk(node)):
            return [node]
        loops = [self.comprehension_loops[(c.lineno, c.col_offset)] for c in found]
        if any(loop.index in self.parked for loop in loops):
            return [node]  # (one per statement is the usual case: the parked one's statement stays as written)
        bound = self.bound_at.get((node.lineno, node.col_offset), frozenset())
        reads: list[ast.stmt] = []
        temps: list[str] = []
        read_slots: dict[int, str] = {}
        parts: dict[str, list[ast.stmt]] = {part: [] for part in _COMPREHENSION_PARTS}
        tests: list[ast.expr] = []
        hot: dict[int, ast.expr] = {}
        # the statement's second copy (the user's AST is shared by every instrumentation of the function: it is never
        # changed), its comprehensions in the same order
        second = copy.deepcopy(node)
        in_second = [c for c in _outer_comprehensions(second, keys) if (c.lineno, c.col_offset) in keys]
        for number, (found_node, loop) in enumerate(zip(found, loops)):
            self.single_copy.add(loop.index)  # (handed over at its header only)
            self.handed_comprehensions.add(loop.index)
            names = {n: self.hidden(f"c{n}", number) for n in ("S", "C", "I", "O", "R", "F")}
            # (a generator expression a builtin consumes, jit.frontend.consumers: the call is handed over, its
            # callee in F)
            call = found_node if isinstance(found_node, ast.Call) else None
            temps.extend(names[n] for n in ("I", "O", "R", "F") if n != "F" or call is not None)
            comprehension = found_node.args[0] if isinstance(found_node, ast.Call) else found_node
            index = {"L": ast.Constant(loop.index), "NEVER": ast.Constant(NEVER)}
            for part, template in _COMPREHENSION_PARTS.items():
                if part == "SETUP" and len(found) == 1:
                    template = "if S:\n    C = RT.ticks[L]()"  # (the statement's second copy runs only when S >= 0)
                parts[part].extend(_Fill(comprehension, names, index).fill(_template(template)))
            tests.append(_Fill(node, names).fill(_template("S < 0"))[0].value)  # type: ignore[attr-defined]
            args: list[ast.expr] = []
            read = self.comprehension_reads(comprehension)
            for slot, name in enumerate(self.local_names):
                if name in self.cell_names:
                    args.append(self.cell(name, comprehension))
                elif name not in read:  # (the comprehension's own loop never reads it: the marker is enough)
                    args.append(ast.Attribute(ast.Constant(_PLACEHOLDER_VALUES["RT"]), "unbound", ast.Load()))
                elif name in bound:
                    args.append(ast.Name(name, ast.Load()))
                else:
                    if slot not in read_slots:
                        temp = read_slots[slot] = self.hidden("cv", slot)
                        temps.append(temp)
                        reads.extend(_Fill(node, {"V": temp, "NAME": name}).fill(_template(_READ)))
                    args.append(ast.Name(read_slots[slot], ast.Load()))
            counted = copy.deepcopy(comprehension)
            count = _Fill(comprehension, names, index).fill(_template(_COUNT_ITERATION))[0].value  # type: ignore[attr-defined]
            counted.generators[0].ifs.insert(0, count)
            rest = copy.deepcopy(comprehension)
            rest.generators[0].iter = ast.copy_location(ast.Name(names["I"], ast.Load()), comprehension)
            exprs = {
                **index,
                "PLAIN_COPY": in_second[number],
                "COUNTED_COPY": counted,
                "ITERABLE": copy.deepcopy(comprehension.generators[0].iter),
                "ARGS": ast.Tuple(args, ast.Load()),
                "REST": rest,
            }
            template = _COMPREHENSION_HANDOFF
            if call is not None:
                counted_call = copy.deepcopy(call)
                counted_call.args[0] = counted
                assert loop.consumer is not None
                exprs.update(
                    COUNTED_COPY=counted_call,
                    K=ast.Constant(loop.consumer),
                    CALLEE=copy.deepcopy(call.func),
                    GENERATOR=copy.deepcopy(comprehension),
                )
                template = _CONSUMER_HANDOFF
            handoff = _Fill(found_node, names, exprs).fill(_template(template))
            hot[id(in_second[number])] = handoff[0].value  # type: ignore[attr-defined]
        test = tests[0] if len(tests) == 1 else ast.copy_location(ast.BoolOp(ast.And(), tests), node)
        clear = [ast.Assign([ast.Name(t, ast.Store()) for t in temps], ast.Constant(None))]
        for sub in ast.walk(clear[0]):
            ast.copy_location(sub, node)
        stmts = {
            "STATEMENT": [node],
            "PLAIN": parts["PLAIN"],
            "SETUP": parts["SETUP"],
            "READS": reads,
            "HOT": [_Replace(hot).visit(second)],
            "CLEAR": clear,
            "COUNTED": parts["COUNTED"],
            "CLEAR_AFTER": copy.deepcopy(clear),
        }
        names = {"E": self.hidden("ce", 0)}
        statement = _Fill(node, names, {"TEST": test}, stmts).fill(_template(_COMPREHENSION_STATEMENT))
        return parts["READ"] + statement

    def cell(self, name: str, at: ast.AST) -> ast.expr:
        """The cell of cell variable name: ``RT.cell`` of a lambda reading it (its parameter, a hidden name, tells
        its code from any of the user's: ``_users_nested_code``)."""
        text = f"RT.cell(lambda {self.prefix}cell: {name})"
        return _Fill(at, {}).fill(_template(text))[0].value  # type: ignore[attr-defined,no-any-return]

    def comprehension_reads(self, comprehension: ast.expr) -> frozenset[str]:
        """The function's locals (mangled) a comprehension may read in its own scope (all but its first iterable)."""
        first = comprehension.generators[0].iter  # type: ignore[attr-defined]
        skip = {id(sub) for sub in ast.walk(first)}
        return frozenset(
            self.source.mangle(sub.id)
            for sub in ast.walk(comprehension)
            if isinstance(sub, ast.Name) and id(sub) not in skip
        ) & frozenset(self.local_names)

    def loop(self, node: ast.For | ast.While, loop: LoopInfo, copies: int, level: int) -> list[ast.stmt]:
        """The statements replacing loop statement `node`; `copies`: how many times it appears."""
        # a for loop's body appears 3 times (plain, counted, plain again after the JIT gave the loop back
        # mid-way: the first plain copy iterates the iterable itself, the cheapest start), a while loop's twice
        factor = 3 if isinstance(node, ast.For) else 2
        single = factor * copies > MAX_COPIES
        if single:
            self.single_copy.add(loop.index)
        self.levels[loop.index] = level
        body = self.block(node.body, copies if single else factor * copies, level + 1)
        orelse = self.block(node.orelse, 2 * copies if single else factor * copies, level + 1)
        if loop.index in self.parked:
            # the user's statement, one copy; its inner loops as in the other copies (so a loop's counter
            # means the same in every version of the code: see runtime.parking)
            plain = copy.copy(node)
            plain.body = body
            plain.orelse = orelse
            return [plain]
        is_for = isinstance(node, ast.For)
        head = _head_position(node)
        bound = self.bound_at[(node.lineno, node.col_offset)]
        targets = _assigned_names(node.target, self.source) if isinstance(node, ast.For) else frozenset()
        targets -= self.bound_at[_DELETED]
        exprs: dict[str, ast.expr] = {
            "L": ast.Constant(loop.index),
            "NEVER": ast.Constant(NEVER),
            # (not a loop with loops in it: its counted copy is where a loop nested in it boosts it)
            "BY_LENGTH": ast.Constant(NEVER_BY_LENGTH if loop.index in self.outer_loops else COUNT_BY_LENGTH),
            "SKIP": ast.Constant(WARMUP_SKIP),
        }
        if isinstance(node, ast.For):
            exprs.update(ITERABLE=node.iter, TARGET=node.target)
            template = _FOR_SINGLE if single else _FOR
        else:
            exprs["TEST"] = node.test
            template = _WHILE_SINGLE if single else _WHILE if loop.index in self.outer_loops else _WHILE_LEAF
        stmts = {
            "BODY": body,
            "ORELSE": orelse,
            "HANDOFF_HEADER": self.handoff(
                loop, level, False, "HOW", is_for, head, bound, self.unbound_at[(node.lineno, node.col_offset)]
            ),
            "HANDOFF_BODY": self.handoff(loop, level, True, "H", is_for, head, bound | targets),
        }
        # the copies' for/while statements keep the original's position: CPython then places their
        # GET_ITER and FOR_ITER exactly as in the user's code
        template = template.replace("CHARGE_AHEAD", "False" if loop.index in self.outer_loops else _CHARGE_AHEAD)
        return _Fill(head, self.loop_names(level), exprs, stmts, loop_at=node).fill(_template(template))

    def loop_names(self, level: int) -> dict[str, str]:
        names = {n: self.hidden(n, level) for n in ("IT", "S", "OWN", "HOW", "C", "H", "R", "E", "W", "N", "K", "Q")}
        return names

    def handoff(
        self,
        loop: LoopInfo,
        level: int,
        at_body: bool,
        result: str,
        is_for: bool,
        head: ast.AST,
        bound: frozenset[str],
        unbound: frozenset[str] = frozenset(),
    ) -> list[ast.stmt]:
        """The statements of one hand-off; the outcome goes to hidden local `result`; `bound`: the locals
        surely bound there, `unbound`: those surely unbound there (the marker is passed for them: reading
        them would raise, which costs more than the rest of the hand-off)."""
        reads: list[ast.stmt] = []
        args: list[ast.expr] = []
        deletes: list[ast.stmt] = []
        temps: list[str] = []
        for slot, name in enumerate(self.local_names):
            if name in self.cell_names:  # (its cell, which comes back as it went)
                args.append(self.cell(name, head))
                continue
            if name in bound:
                args.append(ast.Name(name, ast.Load()))
                continue
            if name in unbound:
                args.append(ast.Attribute(ast.Constant(_PLACEHOLDER_VALUES["RT"]), "unbound", ast.Load()))
                deletes.extend(_Fill(head, {"NAME": name}).fill(_template(_DELETE)))
                continue
            temp = self.hidden("v", slot)
            temps.append(temp)
            local = {"V": temp, "NAME": name}
            reads.extend(_Fill(head, local).fill(_template(_READ)))
            deletes.extend(_Fill(head, local).fill(_template(_DELETE)))
            args.append(ast.Name(temp, ast.Load()))
        clear: list[ast.stmt] = []
        cell_target = self.hidden("cellv", level)  # (where the cells that come back go)
        if any(name in self.cell_names for name in self.local_names):
            temps.append(cell_target)
        if temps:  # the temporaries must not keep the values alive
            clear = [ast.Assign([ast.Name(t, ast.Store()) for t in temps], ast.Constant(None))]
        names = self.loop_names(level)
        names["RESULT"] = names[result]
        exprs: dict[str, ast.expr] = {
            "VALUES": ast.Tuple(
                [ast.Name(cell_target if name in self.cell_names else name, ast.Store()) for name in self.local_names],
                ast.Store(),
            ),
            "L": ast.Constant(loop.index),
            "AT_BODY": ast.Constant(at_body),
            "ARGS": ast.Tuple(args, ast.Load()),
        }
        if not is_for:
            exprs.update(IT=ast.Constant(None), OWN=ast.Constant(None))
        # a hand-off at the body: the counted copy's counter (0) is the loop's, the runtime may change it
        save: list[ast.stmt] = []
        reload: list[ast.stmt] = []
        if at_body:
            index = {"L": ast.Constant(loop.index)}
            save = _Fill(head, names, index).fill(_template("RT.counters[L] = C"))
            reload = _Fill(head, names, index).fill(_template("C = RT.counters[L]"))
        boost: list[ast.stmt] = []
        parent = loop.parent
        if parent is not None and parent not in self.single_copy and self.levels.get(parent) == level - 1:
            counter = {"P": ast.Constant(parent)}
            boost = _Fill(head, {"CP": self.hidden("C", level - 1)}, counter).fill(_template(_BOOST))
        unwound = _Fill(head, names, exprs, {"DELETES": copy.deepcopy(deletes)}).fill(
            _template(_UNWOUND_DELETES if deletes else _UNWOUND)
        )
        stmts = {
            "READS": reads,
            "SAVE": save,
            "CLEAR": clear,
            "DELETES": deletes,
            "RELOAD": reload,
            "BOOST": boost,
            "UNWOUND": unwound,
        }
        if clear:
            ast.copy_location(clear[0], head)
            for sub in ast.walk(clear[0]):
                ast.copy_location(sub, head)
        return _Fill(head, names, exprs, stmts).fill(_template(_HANDOFF + (_DELETES if deletes else "")))


#: the statements whose comprehensions CPython may hand over (those of a compound statement's header, such as a
#: for loop's iterable or an if's test, run as written)
_SIMPLE_WITH_COMPREHENSIONS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp)
_OWN_SCOPES = (ast.Lambda, ast.GeneratorExp, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _outer_comprehensions(node: ast.AST, consumers: Collection[tuple[int, int]] = ()) -> list[ast.expr]:
    """The list, set and dict comprehensions in node that no other comprehension (nor a nested scope) holds, in
    source order, and the calls consuming a generator expression (``jit.frontend.consumers``) at the positions
    consumers (the call whole: what it holds runs as written). (One in another's first iterable is left to run as
    written, inside the copies of that one.)"""
    found: list[ast.expr] = []
    pending = [node]
    while pending:
        sub = pending.pop()
        if isinstance(sub, _COMPREHENSIONS):
            found.append(sub)
        elif (
            isinstance(sub, ast.Call)
            and sub.args
            and isinstance(sub.args[0], ast.GeneratorExp)
            and (sub.lineno, sub.col_offset) in consumers
        ):
            found.append(sub)
        elif not isinstance(sub, _OWN_SCOPES):
            pending.extend(reversed(list(ast.iter_child_nodes(sub))))
    return found


class _Replace(ast.NodeTransformer):
    """Put expressions in place of nodes (by id); a replacement is not visited."""

    def __init__(self, by_id: dict[int, ast.expr]) -> None:
        self.by_id = by_id

    def visit(self, node: ast.AST) -> Any:
        replacement = self.by_id.get(id(node))
        return replacement if replacement is not None else self.generic_visit(node)


def _head_position(node: ast.For | ast.While) -> ast.AST:
    """Where the generated bookkeeping of a loop sits: where CPython puts the loop's GET_ITER (so that a
    non-iterable fails at the same source text), i.e. the whole statement or its iterable."""
    if isinstance(node, ast.For) and LOOP_HEAD_AT_ITERABLE:
        return node.iter
    return node


def _find_code(code: types.CodeType, name: str, firstlineno: int) -> types.CodeType | None:
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == name and const.co_firstlineno == firstlineno:
                return const
            found = _find_code(const, name, firstlineno)
            if found is not None:
                return found
    return None


def _future_flags(source: FunctionSource) -> int:
    import __future__

    mask = 0
    for feature in __future__.all_feature_names:
        mask |= getattr(__future__, feature).compiler_flag
    return source.func.__code__.co_flags & mask


def _identifiers(node: ast.AST) -> set[str]:
    names: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            names.add(sub.id)
        elif isinstance(sub, ast.arg):
            names.add(sub.arg)
    return names


def _hidden_prefix(source: FunctionSource) -> str:
    """A prefix no name of the function starts with (as written, or mangled in its class)."""
    names = _identifiers(source.node)
    names |= {source.mangle(n) for n in names}
    names |= set(source.func.__code__.co_varnames) | set(source.func.__code__.co_names)
    n = 0
    while True:
        prefix = f"_tj{n or ''}_"
        if not any(name.startswith(prefix) for name in names):
            return prefix
        n += 1


def _has_docstring(body: list[ast.stmt]) -> bool:
    first = body[0] if body else None
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)


def _assigned_names(target: ast.expr, source: FunctionSource) -> frozenset[str]:
    """The locals an assignment to target binds (mangled)."""
    if isinstance(target, ast.Name):
        return frozenset({source.mangle(target.id)})
    if isinstance(target, (ast.Tuple, ast.List)):
        return frozenset().union(*(_assigned_names(e, source) for e in target.elts))
    return frozenset()  # an attribute or item


def _bound_at_loops(source: FunctionSource, params: set[str]) -> dict[tuple[int, int], frozenset[str]]:
    """For each statement (by position), the locals surely bound when it starts: the parameters and
    what every path assigns before, except any local the function deletes somewhere (a simple, conservative
    definite-assignment analysis over the statements the front end accepts)."""
    deleted: set[str] = set()
    for sub in ast.walk(source.node):
        if isinstance(sub, ast.Delete):
            for target in sub.targets:
                deleted |= {source.mangle(n.id) for n in ast.walk(target) if isinstance(n, ast.Name)}
    found: dict[tuple[int, int], frozenset[str]] = {}

    def walk(stmts: list[ast.stmt], bound: frozenset[str]) -> frozenset[str]:
        for stmt in stmts:
            found[(stmt.lineno, stmt.col_offset)] = bound - deleted  # (loops' and simple statements' hand-offs)
            if isinstance(stmt, (ast.For, ast.While)):
                inner = bound | _assigned_names(stmt.target, source) if isinstance(stmt, ast.For) else bound
                walk(stmt.body, inner)
                walk(stmt.orelse, bound)
            elif isinstance(stmt, ast.If):
                bound = walk(stmt.body, bound) & walk(stmt.orelse, bound)
            elif isinstance(stmt, ast.With):
                walk(stmt.body, bound)  # (after it, as before it: __exit__ may have swallowed an exception)
            elif isinstance(stmt, ast.Try):
                # (an exception may have left the body anywhere; what surely runs adds nothing after the try)
                walk(stmt.orelse, walk(stmt.body, bound))
                for handler in stmt.handlers:
                    walk(handler.body, bound)
                walk(stmt.finalbody, bound)
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    bound |= _assigned_names(target, source)
            elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and (
                not isinstance(stmt, ast.AnnAssign) or stmt.value is not None
            ):
                bound |= _assigned_names(stmt.target, source)
        return bound - deleted

    walk(source.node.body, frozenset(params) - deleted)
    found[_DELETED] = frozenset(deleted)
    return found


def _binds(node: ast.AST, source: FunctionSource) -> list[tuple[tuple[int, int], str]]:
    """Every place in node that may bind a name, with the name (mangled): an over-approximation (the
    targets of comprehensions and the names of nested scopes count too)."""
    found: list[tuple[tuple[int, int], str]] = []
    for sub in ast.walk(node):
        names: list[str] = []
        if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Load):
            names = [sub.id]
        elif isinstance(sub, ast.alias):
            names = [(sub.asname or sub.name).split(".")[0]]
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [sub.name]
        elif isinstance(sub, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and sub.name:
            names = [sub.name]
        elif isinstance(sub, ast.MatchMapping) and sub.rest:
            names = [sub.rest]
        elif isinstance(sub, ast.arg):
            names = [sub.arg]
        at = (getattr(sub, "lineno", 0), getattr(sub, "col_offset", 0))
        found.extend((at, source.mangle(name)) for name in names)
    return found


def _unbound_at_loops(source: FunctionSource, params: set[str]) -> dict[tuple[int, int], frozenset[str]]:
    """For each loop statement (by position), the locals surely unbound when it starts: no parameter, and
    nothing that could bind them runs before. Without jumps, what runs before a statement is text before it,
    what an enclosing loop runs in an earlier iteration, and (for a for loop, at its hand-off) its iterable."""
    everything = _binds(source.node, source)
    found: dict[tuple[int, int], frozenset[str]] = {}

    def walk(node: ast.AST, enclosing: frozenset[str]) -> None:
        for sub in ast.iter_child_nodes(node):
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue  # (a nested scope's loops are not this function's)
            inner = enclosing
            if isinstance(sub, (ast.For, ast.While)):
                at = (sub.lineno, sub.col_offset)
                before = {name for where, name in everything if where < at}
                if isinstance(sub, ast.For):
                    before |= {name for _, name in _binds(sub.iter, source)}
                found[at] = frozenset(enclosing | before | params)
                inner = enclosing | {name for _, name in _binds(sub, source)}
            walk(sub, inner)

    walk(source.node, frozenset())
    return {at: frozenset(name for _, name in everything) - maybe for at, maybe in found.items()}


_DELETED = (0, -1)  # (a key of _bound_at_loops' result no statement has: the locals deleted somewhere)
