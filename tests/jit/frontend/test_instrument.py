"""The instrumented code (jit/frontend/instrument.py): the user's function as CPython compiles it, every loop
statement with a plain and a counted copy and hand-offs to the JIT.

Checked here on the generated code itself: its shape (a golden listing of the debug view), what CPython sees
(name, file, lines and columns, signature, no free variables), the bytecode of each copy's iteration, hidden
names that cannot clash, the literals, and the bound on code growth. How it runs: tests/runtime/test_baseline.py.
"""

import ast
import dis
import os
import types
import warnings
from pathlib import Path

import pytest
from helpers import define

from jit.frontend import compile_to_tier1
from jit.frontend.instrument import MAX_COPIES, PLACEHOLDERS, instrument
from jit.frontend.source import locate

GOLDEN = Path(__file__).parent.parent / "golden"
UPDATE = os.environ.get("TRACEJIT_UPDATE_GOLDEN", "").strip() not in ("", "0")


def instrumented(func):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # CPython must have nothing to say about the generated code
        return instrument(locate(func), compile_to_tier1(func))


SHAPES = """
def shapes(n, items, flag=None):
    total = 0
    for i in range(n):
        if i == flag:
            break
        total += i
    else:
        total = -total
    while total > 10:
        total //= 2
    for a, b in items:
        if a:
            continue
        late = b
    return total, late
"""


def test_golden_debug_view():
    text = instrumented(define(SHAPES, "shapes")).source() + "\n"
    path = GOLDEN / "instrumented_shapes.txt"
    if UPDATE:
        path.write_text(text)
    assert path.exists(), "run with TRACEJIT_UPDATE_GOLDEN=1 to create the golden listing"
    assert text == path.read_text(), f"the instrumented code changed (TRACEJIT_UPDATE_GOLDEN=1 rewrites it):\n{text}"


def test_debug_view_is_python():
    text = instrumented(define(SHAPES, "shapes")).source()
    # placeholders show as <RT>; with a name in their place the view parses
    ast.parse(text.replace("<RT>", "RT"))


def test_code_is_the_functions_own_to_cpython():
    func = define(SHAPES, "shapes")
    code = instrumented(func).code
    original = func.__code__
    for attr in ("co_name", "co_qualname", "co_filename", "co_firstlineno", "co_argcount", "co_kwonlyargcount"):
        assert getattr(code, attr) == getattr(original, attr), attr
    assert code.co_posonlyargcount == original.co_posonlyargcount
    assert code.co_varnames[: original.co_argcount] == original.co_varnames[: original.co_argcount]
    assert code.co_freevars == () and code.co_cellvars == ()
    assert code.co_flags == original.co_flags


def test_every_source_position_of_the_function_is_kept():
    # every instruction of the plain function has its twin, same line and columns, in the instrumented code
    func = define(SHAPES, "shapes")
    code = instrumented(func).code
    original = {p for p in func.__code__.co_positions() if p[0] is not None}
    assert original <= set(code.co_positions())
    assert {line for _, _, line in func.__code__.co_lines() if line} <= {line for _, _, line in code.co_lines() if line}


def _loop_bodies(code):
    """The opcodes one iteration of each for loop copy runs: from FOR_ITER to the back-edge, following
    conditional jumps (in TIGHT, the only one is the counted copy's test, taken when no hand-off is due)."""
    instructions = list(dis.get_instructions(code))
    at = {ins.offset: k for k, ins in enumerate(instructions)}
    bodies = []
    for start, ins in enumerate(instructions):
        if ins.opname != "FOR_ITER":
            continue
        body, k = [], start
        while True:
            ins = instructions[k]
            body.append(ins.opname)
            if "JUMP_BACKWARD" in ins.opname:
                break
            k = at[ins.argval] if ins.opname.startswith("POP_JUMP") else k + 1
        bodies.append(body)
    return bodies


TIGHT = """
def tight(n):
    total = 0
    for i in range(n):
        total += i
    return total
"""


def test_plain_copy_iterates_exactly_like_the_original():
    func = define(TIGHT, "tight")
    (original,) = _loop_bodies(func.__code__)
    bodies = _loop_bodies(instrumented(func).code)
    assert len(bodies) == 3  # plain over the iterable, counted, plain over the iterator given back by the JIT
    assert bodies.count(original) == 2  # the plain copies: the same instructions per iteration, not one more


def test_counted_copy_adds_one_decrement_and_one_test():
    func = define(TIGHT, "tight")
    (original,) = _loop_bodies(func.__code__)
    counted = next(b for b in _loop_bodies(instrumented(func).code) if b != original)

    def count(body, *kinds):
        return sum(1 for op in body if any(kind in op for kind in kinds))

    # per iteration: one more arithmetic operation (the decrement) and one more test, on locals only
    assert count(counted, "BINARY_OP") == count(original, "BINARY_OP") + 1
    assert count(counted, "POP_JUMP") == count(original, "POP_JUMP") + 1
    for kind in ("CALL", "SUBSCR", "ATTR", "GLOBAL", "COMPARE"):
        assert count(counted, kind) == count(original, kind), kind
    assert len(counted) <= len(original) + 6


def test_hidden_names_never_clash():
    source = """
def f(n, _tj_s0):
    _tj_it0 = 0
    for i in range(n):
        _tj_it0 += i + _tj_s0
    return _tj_it0
"""
    result = instrumented(define(source, "f"))
    assert result.prefix == "_tj1_"
    hidden = [n for n in result.code.co_varnames if n.startswith(result.prefix)]
    assert hidden and not set(hidden) & {"n", "_tj_s0", "_tj_it0", "i"}


def test_hidden_names_and_private_names_in_a_class():
    # inside class tj, __x is mangled to _tj__x, which starts like the default prefix
    source = """
class tj:
    def f(self, n):
        __x = 0
        for i in range(n):
            __x += i
        return __x
"""
    func = define(source, "tj").f
    result = instrumented(func)
    assert result.prefix != "_tj_" and "_tj__x" in result.code.co_varnames
    assert result.code.co_qualname == "tj.f"


def test_hidden_names_do_not_shadow_globals():
    # a hidden local named like a global the function reads would make that name local
    source = """
def f(n):
    total = 0
    for i in range(n):
        total += _tj_it0
    return total
"""
    result = instrumented(define(source, "f", {"_tj_it0": 5}))
    assert "_tj_it0" in result.code.co_names and "_tj_it0" not in result.code.co_varnames


def test_literals_are_the_functions_own_objects():
    source = """
def f(n):
    seen = []
    for i in range(n):
        seen.append(123456789)
        seen.append(1.5)
        seen.append((1, 2))
    return seen
"""
    func = define(source, "f")
    code = instrumented(func).code
    originals = {id(c) for c in func.__code__.co_consts}
    for const in (123456789, 1.5, (1, 2)):
        ours = next(c for c in code.co_consts if type(c) is type(const) and c == const)
        assert id(ours) in originals


def _all_consts(code):
    for const in code.co_consts:
        yield const
        if isinstance(const, types.CodeType):
            yield from _all_consts(const)


def test_bind_replaces_placeholders_everywhere():
    source = """
def f(n):
    total = 0
    for i in range(n):
        total += sum([j for j in range(i)])
    return total
"""
    result = instrumented(define(source, "f"))
    marker = object()
    code = result.bind({"RT": marker})
    consts = list(_all_consts(code))
    assert marker in consts
    assert not any(type(c) is frozenset and "tracejit" in repr(c) for c in consts)
    assert list(PLACEHOLDERS) == ["RT"]


def test_code_objects_stay_hashable():
    # debuggers and profilers key tables by code object: no list may sit among the constants
    result = instrumented(define(TIGHT, "tight"))
    hash(result.bind({"RT": object()}))


NEST = """
def nest(n):
    total = 0
    for a in range(n):
        for b in range(n):
            for c in range(n):
                for d in range(n):
                    total += a * b * c * d
    return total
"""


def test_code_growth_is_bounded():
    func = define(NEST, "nest")
    result = instrumented(func)
    t1 = compile_to_tier1(func)
    # two levels of for loops are instrumented fully (a body appears 3 times per level), deeper ones get one copy
    assert result.single_copy == {loop.index for loop in t1.loops if loop.depth >= 2}
    assert result.source().count("total += a * b * c * d") <= MAX_COPIES


def test_values_read_directly_where_surely_bound():
    source = """
def f(n, dropped):
    before = 1
    if n:
        maybe = 2
    gone = 3
    del dropped, gone
    for i in range(n):
        before += i
    return before
"""
    text = instrumented(define(source, "f")).source()
    # a parameter and a local assigned before the loop go straight into the hand-off's tuple; a local
    # assigned in one branch, a deleted parameter and a local deleted after its assignment are read under try
    handoff = next(line for line in text.splitlines() if ".loop(" in line)
    values = handoff[handoff.rindex("(n, ") :]
    assert values.startswith("(n, _tj_v1, before, _tj_v3, _tj_v4, ")  # (slots: n dropped before maybe gone)
    assert "_tj_v2" not in handoff
    assert "except <RT>.name_error" in text


def test_marker_passed_where_surely_unbound():
    source = """
def f(n, m):
    seen = 0
    for i in range(n):
        for j in range((w := m)):
            seen += later if seen > 99 else j
        later = i
    for k in range(n):
        seen += k
    return seen, w
"""
    text = instrumented(define(source, "f")).source()
    headers = [line for line in text.splitlines() if ".loop(" in line and ", False," in line]
    values = {line.split(".loop(")[1].split(",")[0]: line[line.rindex("(n, ") :] for line in headers}
    # slots: n m seen i j w later k. At the first loop's start nothing but the parameters and `seen` can be
    # bound; the inner loop's start follows earlier iterations of the outer loop (j, later) and its iterable's
    # walrus; the last loop's follows both others (only k is new)
    assert values["0"] == "(n, m, seen, <RT>.unbound, <RT>.unbound, <RT>.unbound, <RT>.unbound, <RT>.unbound))"
    assert values["1"] == "(n, m, seen, i, _tj_v4, _tj_v5, _tj_v6, <RT>.unbound))"
    assert values["2"].endswith(", <RT>.unbound))") and values["2"].count("<RT>.unbound") == 1


def test_while_true_has_no_test_in_its_copies():
    source = """
def f(n):
    i = 0
    while True:
        i += 1
        if i >= n:
            break
    return i
"""
    tree = ast.parse(instrumented(define(source, "f")).source().replace("<RT>", "RT"))
    loops = [node for node in ast.walk(tree) if isinstance(node, ast.While)]
    assert len(loops) == 2 and all(isinstance(w.test, ast.Constant) and w.test.value is True for w in loops)


@pytest.mark.parametrize(
    "source, name",
    [
        ("def f(a, /, b, *, c=1):\n    for i in range(a):\n        b += c\n    return b\n", "f"),
        ("def f(n):\n    '''doc'''\n    for i in range(n):\n        pass\n    return n\n", "f"),
        ("def f(n):\n    x = [i for i in range(n)]\n    for y in x:\n        pass\n    return x\n", "f"),
    ],
    ids=["signature", "docstring", "comprehension"],
)
def test_other_shapes_compile(source, name):
    func = define(source, name)
    code = instrumented(func).code
    assert code.co_argcount == func.__code__.co_argcount
    assert code.co_consts[0] == func.__code__.co_consts[0]  # the docstring, or whatever else comes first


NESTED = """
def nested(n):
    total = 0
    for i in range(n):
        for j in range(n):
            total += i * j
    return total
"""


def test_an_inner_hand_off_lets_its_counting_outer_loop_get_hot():
    """Each hand-off of the inner loop (in every copy of the outer body) ends by spending the outer loop's
    boost: the outer loop's counter local set to 1, so that its next iteration hands it over."""
    inst = instrumented(define(NESTED, "nested"))
    text = inst.source()
    counter = f"{inst.prefix}c0"
    boosts = text.count("if <RT>.boost[0]:")
    assert boosts == text.count("<RT>.runtime().loop(1,") == 6  # one per hand-off of the inner loop, in each copy
    assert text.count(f"{counter} = 1") == boosts
    assert "<RT>.boost[1]" not in text  # the outer loop has no enclosing loop to boost


# --- comprehensions outside loop statements, handed over whole ------------------------------------------------

COMPREHENSIONS = """
def comprehensions(xs, k):
    ys = [x * k for x in xs if x % 3]
    return ys, {x: k for x in ys}
"""


def test_golden_comprehension_view():
    text = instrumented(define(COMPREHENSIONS, "comprehensions")).source() + "\n"
    path = GOLDEN / "instrumented_comprehensions.txt"
    if UPDATE:
        path.write_text(text)
    assert path.exists(), "run with TRACEJIT_UPDATE_GOLDEN=1 to create the golden listing"
    assert text == path.read_text(), f"the instrumented code changed (TRACEJIT_UPDATE_GOLDEN=1 rewrites it):\n{text}"


def test_comprehensions_handed_over_are_outermost_in_simple_statements():
    source = """
def f(xs, k):
    a = [x for x in xs]
    b = [[y for y in range(x)] for x in xs]
    c = [y for y in [x for x in xs]]
    if [x for x in xs if x]:
        pass
    for z in [x for x in xs]:
        a.append(z)
    d = [w := x for x in xs]
    e = lambda: [x for x in xs]
    g = sum(x for x in xs)
    h = k + len({x: x for x in xs}) + len({x for x in xs})
    return a, b, c, d, e, g, h
"""
    func = define(source, "f")
    code = compile_to_tier1(func, partial=True)  # (the lambda is left to CPython)
    result = instrument(locate(func), code)
    lines = [code.loops[index].line for index in sorted(result.comprehensions)]
    # a, b (its outer loop), c (its outer comprehension: the inner one is in its first iterable), g (the call of sum,
    # jit.frontend.consumers), h (both)
    assert lines == [3, 4, 5, 12, 13, 13]
    assert result.comprehensions <= result.single_copy  # (handed over at the header only)


def test_instrumenting_leaves_the_users_tree_as_it_was():
    func = define(COMPREHENSIONS, "comprehensions")
    source = locate(func)
    before = ast.dump(source.node, include_attributes=True)
    first = instrument(source, compile_to_tier1(func)).source()
    assert ast.dump(source.node, include_attributes=True) == before
    assert instrument(source, compile_to_tier1(func)).source() == first


def test_plain_comprehension_is_the_users():
    # the statement as written runs when the comprehension is plain: its code is CPython's own, instruction for
    # instruction (it costs a counter read and a test per start, nothing per item)
    func = define(COMPREHENSIONS, "comprehensions")
    nested = [c for c in instrumented(func).code.co_consts if isinstance(c, types.CodeType)]
    for original in (c for c in func.__code__.co_consts if isinstance(c, types.CodeType)):
        assert any(c.co_code == original.co_code and c.co_name == original.co_name for c in nested), original


def test_parked_comprehension_is_as_written():
    func = define(COMPREHENSIONS, "comprehensions")
    result = instrument(locate(func), compile_to_tier1(func), frozenset({0, 1}))
    assert result.comprehensions == frozenset()
    assert "RT" not in result.source()
