"""Generator expressions consumed at once by a builtin (`any(x > t for x in row)`, `sum(v * v for v in vec)`,
`"".join(str(d) for d in digits)`): the expression's loops inlined as tier-1 loops producing the consumer's
result, in hidden slots of the function, as the comprehensions of ``jit.frontend.loops`` are.

The callee is a plain name (``any``, ``all``, ``sum``, ``list``, ``tuple``, ``set``, ``frozenset``,
``sorted``, ``min``, ``max``) or `<expr>.join`, and the generator expression its only positional argument (``sum``
may take a start, positionally or as ``start=``; ``sorted`` any keywords, which CPython passes on to
``list.sort``; ``min`` and ``max`` ``key=`` and ``default=``). Tier-1
code evaluates what CPython evaluates, in its order: the callee, then the first iterable and iter() of it, then
the other arguments. Between the callee and the iterable it checks, without running any user code, that the
callee is the builtin (for `.join`: that the object is an exact ``str``, whose `join` is ``str.join``). If so,
the expression runs inlined:

* ``any``/``all`` test each element's truth once (as the builtin does the value the generator yields) and leave
  the loops at the first true/false one, having pulled from the iterators exactly what CPython pulls;
* ``sum`` is a left fold with ``+`` from the start (0 by default), which is the builtin's result on every type up
  to Python 3.11; from 3.12 on the builtin sums floats with compensated summation, so ``sum`` is not inlined
  there. A start that is a str, bytes or bytearray raises the builtin's TypeError before anything is pulled;
* ``list`` and ``set`` build their container as a list or set comprehension does; ``tuple``, ``frozenset``,
  ``sorted`` and `.join` build a list (a set for ``frozenset``), as CPython's builtins do first, then the builtin
  itself is called on it (``sorted`` with the keywords evaluated before the loop: its key function and its errors
  are CPython's);
* ``min``/``max`` take the first element, then each whose value (its key's, with a key) compares less (greater)
  than the best one's, the comparison's truth tested once, as the builtin does; with no element, the default or the
  builtin's ValueError.

Otherwise (the name rebound in the globals, a str subclass's `join`) the real generator is made from iter() of
the iterable and the callee called with it, as ``expressions._generator_expression`` does. The iterable and the
other arguments are compiled on both paths; neither runs both.

CPython runs a generator expression in a frame of its own, on every version (PEP 709 inlines comprehensions
only): the first loop's ``LoopInfo.frame_name`` is ``<genexpr>`` and its ``frame_pc`` an instruction at the
call, so an error in the body shows that frame in the traceback (``runtime.errors``), and a StopIteration raised
there becomes CPython's ``RuntimeError("generator raised StopIteration")`` (PEP 479). What the builtin does with
each element (its truth test, `+`, a set's hash, min's key and comparison: ``LoopInfo.consumer_pcs``) runs in the
caller's frame, not the generator's: an error there shows at the call, and a StopIteration stays one. The expression's variables
live in hidden slots, cleared when it ends, as its frame is under CPython.

Left as CPython's generator: an expression holding ``:=``, ``await`` or ``yield``, or another comprehension,
generator expression or lambda in its first iterable or the consumer's other arguments (compiled twice, they
would be two loops or functions of one position). Outside every loop, CPython hands the call over whole
(``jit.frontend.instrument``, ``runtime.consumers``) where it has no argument but the expression and the consumer
is not ``min``/``max``.
"""

from __future__ import annotations

import ast
import builtins
import sys
from typing import Any

from jit.frontend import instructions as I
from jit.frontend.builder import FunctionBuilder, Label, LoopContext, at_line
from jit.frontend.expressions import compile_expr, comprehension_names
from jit.frontend.loops import open_comprehension_loops
from jit.frontend.nested_code import generator_function
from jit.frontend.operators import BinOp, CompareOp, UnaryOp

#: up to 3.11 builtin sum is a left fold with `+`; 3.12 adds compensated summation of floats
SUM_IS_LEFT_FOLD = sys.version_info < (3, 12)

#: the consumers called by name, and what each does with the elements: "any"/"all" (stop early), "sum"
#: (fold), "list"/"set" (the container is the result), "call" (build a list or set, then call the builtin on it)
_BY_NAME = {
    "any": "any",
    "all": "all",
    "sum": "sum",
    "list": "list",
    "set": "set",
    "tuple": "call",
    "frozenset": "call",
    "sorted": "call",
    "min": "min",
    "max": "max",
}


#: what the loop of each consumer builds in its accumulator, where CPython hands it over whole (the loop driver
#: makes it: ``LoopInfo.builds``): any/all whether an element decided, sum its total, the others a list or set
_BUILDS: dict[str, type] = {
    "any": bool,
    "all": bool,
    "sum": int,
    "list": list,
    "set": set,
    "frozenset": set,
    "tuple": list,
    "sorted": list,
    "join": list,
}


def consumer_kind(b: FunctionBuilder, node: ast.Call) -> str | None:
    """What node, a call, consumes inline: a name of ``_BY_NAME`` or "join"; None where the call is not a generator
    expression consumed by a builtin that the front end inlines (see the module's docstring)."""
    if not node.args or not isinstance(node.args[0], ast.GeneratorExp):
        return None
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return None
    func = node.func
    if isinstance(func, ast.Name):
        name = func.id
        if name not in _BY_NAME or b.lookup(name) is not None or b.source.mangle(name) in b.source.free_names:
            return None
        if name == "sum":
            if not SUM_IS_LEFT_FOLD or len(node.args) + len(node.keywords) > 2:
                return None
            if node.keywords and node.keywords[0].arg != "start":
                return None
        elif name == "sorted":
            if len(node.args) != 1:
                return None
        elif name in ("min", "max"):
            if len(node.args) != 1 or any(k.arg not in ("key", "default") for k in node.keywords):
                return None
        elif len(node.args) != 1 or node.keywords:
            return None
    elif isinstance(func, ast.Attribute) and func.attr == "join":
        if len(node.args) != 1 or node.keywords:
            return None
        name = "join"
    else:
        return None
    genexp = node.args[0]
    assert isinstance(genexp, ast.GeneratorExp)
    if any(gen.is_async for gen in genexp.generators):
        return None
    if any(isinstance(n, (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)) for n in ast.walk(genexp)):
        return None
    twice = [genexp.generators[0].iter, *node.args[1:], *(k.value for k in node.keywords)]
    if any(isinstance(n, _NESTED) for part in twice for n in ast.walk(part)):
        return None
    return name


#: what may not be compiled twice (``consumer_kind``): each would be two loops or functions of one position
_NESTED = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda, ast.NamedExpr)


def check_sum_start(start: Any) -> Any:
    """start, or builtin sum's TypeError where it is a str, bytes or bytearray (which sum refuses before it pulls
    anything)."""
    if isinstance(start, str):
        raise TypeError("sum() can't sum strings [use ''.join(seq) instead]")
    if isinstance(start, bytes):
        raise TypeError("sum() can't sum bytes [use b''.join(seq) instead]")
    if isinstance(start, bytearray):
        raise TypeError("sum() can't sum bytearray [use b''.join(seq) instead]")
    return start


#: what min/max hold before the first element
NO_ITEM = object()


def _empty_message() -> str:
    """builtin min's error where it gets no element and no default, its name a field (probed: the text differs
    across versions)."""
    try:
        min(iter(()))
    except ValueError as exc:
        return str(exc).replace("min()", "{name}()")
    raise AssertionError("min of nothing did not raise")


EMPTY_MESSAGE = _empty_message()


def key_function(key: Any) -> Any:
    """min's and max's key: None is no key (each element its own value)."""
    return _itself if key is None else key


def _itself(value: Any) -> Any:
    return value


def min_max_result(name: str, best: Any, *default: Any) -> Any:
    """What min or max (name) returns having consumed every element: the best one, else the default if given, else
    the builtin's ValueError."""
    if best is NO_ITEM:
        if default:
            return default[0]
        raise ValueError(EMPTY_MESSAGE.format(name=name))
    return best


def compile_consumed(b: FunctionBuilder, node: ast.Call) -> bool:
    """Compile node, a call, if it is a generator expression consumed by a builtin (``consumer_kind``): whether it
    did (else the caller compiles the call as any other)."""
    name = consumer_kind(b, node)
    if name is None:
        return False
    kind = _BY_NAME.get(name, "join")
    genexp = node.args[0]
    assert isinstance(genexp, ast.GeneratorExp)
    # the generator a callee that is not the builtin gets: a cell variable's cell, a comprehension's variable's value
    made, reads = generator_function(b.source, genexp, comprehension_names(b), b.cell_names, enclosing_by_value=True)
    read_slots = [b.lookup(name) for name in reads]
    if None in read_slots:  # (a free variable of the function: CPython's generator, as today)
        return False
    # loop headers need an empty operand stack: park pending operands in hidden slots meanwhile
    spills = [b.new_hidden(f".spill{i}") for i in range(b.depth)]
    for slot in reversed(spills):
        b.emit(I.STORE_FAST, slot)
    callee = b.new_hidden(".consumer")
    generic, end = Label(), Label()
    func = node.func
    if kind == "join":
        assert isinstance(func, ast.Attribute)
        separator = b.new_hidden(".separator")
        compile_expr(b, func.value)
        with at_line(b, func):
            b.emit(I.COPY, 1)
            b.emit(I.STORE_FAST, separator)
            b.emit(I.LOAD_ATTR, "join")
        b.emit(I.STORE_FAST, callee)
        # (type() of the object: no user code; an exact str's join is str.join)
        check_pc = b.emit(I.LOAD_CONST, type)
        b.emit(I.LOAD_FAST_AND_CLEAR, separator)
        b.emit(I.CALL, 1)
        b.emit(I.LOAD_CONST, str)
    else:
        compile_expr(b, func)
        b.emit(I.STORE_FAST, callee)
        assert isinstance(func, ast.Name)
        check_pc = b.emit(I.LOAD_FAST, callee)
        b.emit(I.LOAD_CONST, getattr(builtins, func.id))
    b.emit(I.COMPARE_OP, CompareOp.IS)
    b.emit_jump(I.POP_JUMP_IF_FALSE, generic)
    _inlined(b, node, genexp, kind, callee, check_pc)
    b.emit_jump(I.JUMP, end)

    # the callee is not the builtin: CPython's generator, given to it
    b.place(generic)
    b.emit(I.LOAD_FAST_AND_CLEAR, callee)
    with at_line(b, genexp):
        b.emit(I.LOAD_CONST, made)
        b.emit(I.LOAD_CONST, iter)
        compile_expr(b, genexp.generators[0].iter)
        b.emit(I.CALL, 1)
        for slot in read_slots:
            b.emit(I.LOAD_FAST, slot)
        b.emit(I.CALL, 1 + len(reads))
    for arg in node.args[1:]:
        compile_expr(b, arg)
    for keyword in node.keywords:
        compile_expr(b, keyword.value)
    n = len(node.args) + len(node.keywords)
    if node.keywords:
        b.emit(I.CALL_KW, (n, tuple(k.arg for k in node.keywords)))
    else:
        b.emit(I.CALL, n)
    b.place(end)
    if spills:  # (the result above the parked operands)
        result = b.new_hidden(".result")
        b.emit(I.STORE_FAST, result)
        for slot in spills:
            b.emit(I.LOAD_FAST_AND_CLEAR, slot)
        b.emit(I.LOAD_FAST_AND_CLEAR, result)
    return True


def _inlined(b: FunctionBuilder, node: ast.Call, genexp: ast.GeneratorExp, kind: str, callee: int, at: int) -> None:
    """The generator expression's loops, consumed as kind does, its result pushed; at: the pc of an instruction at
    the call (the generator's frame's position in the caller's)."""
    acc = b.new_hidden(f".{kind}")
    extras = [b.new_hidden(f".argument{i}") for i in range(len(node.args) - 1 + len(node.keywords))]
    name = node.func.id if isinstance(node.func, ast.Name) else "join"
    by_keyword = {k.arg: slot for slot, k in zip(extras, node.keywords)}
    key, default = by_keyword.get("key"), by_keyword.get("default")
    item = value = best = -1
    if kind in ("min", "max"):  # (the element, and with a key its key's value and the best one's)
        item = b.new_hidden(".item")
        if key is not None:
            value, best = b.new_hidden(".value"), b.new_hidden(".best")

    def before_loop() -> None:  # (after iter() of the first iterable, as CPython evaluates the other arguments)
        if kind == "sum":
            if extras:
                start = node.args[1] if len(node.args) > 1 else node.keywords[0].value
                b.emit(I.LOAD_CONST, check_sum_start)
                compile_expr(b, start)
                b.emit(I.CALL, 1)
            else:
                b.emit(I.LOAD_CONST, 0)
            b.emit(I.STORE_FAST, acc)
            return
        if kind in ("any", "all"):  # (whether an element decided: the loop stops there)
            b.emit(I.LOAD_CONST, False)
            b.emit(I.STORE_FAST, acc)
            return
        for slot, keyword in zip(extras, node.keywords):
            compile_expr(b, keyword.value)
            b.emit(I.STORE_FAST, slot)
        if kind in ("min", "max"):  # (no element yet; a key of None is none, as the builtin takes it)
            if key is not None:
                b.emit(I.LOAD_CONST, key_function)
                b.emit(I.LOAD_FAST, key)
                b.emit(I.CALL, 1)
                b.emit(I.STORE_FAST, key)
            b.emit(I.LOAD_CONST, NO_ITEM)
            b.emit(I.STORE_FAST, acc)
        else:
            b.emit(I.BUILD_SET if name in ("set", "frozenset") else I.BUILD_LIST, 0)
            b.emit(I.STORE_FAST, acc)

    def first(ctx: LoopContext) -> None:
        ctx.info.frame_name, ctx.info.frame_pc = "<genexpr>", at
        # (outside every loop: CPython may hand it over whole)
        if ctx.info.parent is None and not extras and name in _BUILDS:
            ctx.info.comprehension = (node.lineno, node.col_offset)
            ctx.info.accumulator = acc
            ctx.info.builds = _BUILDS[name]
            ctx.info.consumer = name

    contexts, scope = open_comprehension_loops(b, genexp.generators, first, before_loop)
    inner = contexts[-1][0]
    compile_expr(b, genexp.elt)
    consuming = len(b.ops)  # (from here the builtin's work: what raises there shows at the call, not in the frame)
    if kind in ("any", "all"):
        inner.break_label = Label()
        # (the builtin tests the truth of the value yielded: once, whatever the element is)
        b.emit_jump(I.POP_JUMP_IF_FALSE if kind == "any" else I.POP_JUMP_IF_TRUE, contexts[-1][1])
        b.emit(I.LOAD_CONST, True)  # (decided, before the loops are left: a hand-over whole reads it there)
        b.emit(I.STORE_FAST, acc)
        b.emit_jump(I.JUMP, inner.break_label)
    elif kind in ("min", "max"):
        # as the builtin: the first element taken, then each whose value compares less (greater) than the best's
        take = Label()
        b.emit(I.STORE_FAST, item)
        if key is not None:
            b.emit(I.LOAD_FAST, key)
            b.emit(I.LOAD_FAST, item)
            b.emit(I.CALL, 1)
            b.emit(I.STORE_FAST, value)
        b.emit(I.LOAD_FAST, acc)
        b.emit(I.LOAD_CONST, NO_ITEM)
        b.emit(I.COMPARE_OP, CompareOp.IS)
        b.emit_jump(I.POP_JUMP_IF_TRUE, take)
        b.emit(I.LOAD_FAST, item if key is None else value)
        b.emit(I.LOAD_FAST, acc if key is None else best)
        b.emit(I.COMPARE_OP, CompareOp.LT if kind == "min" else CompareOp.GT)
        b.emit_jump(I.POP_JUMP_IF_FALSE, contexts[-1][1])
        b.place(take)
        b.emit(I.LOAD_FAST, item)
        b.emit(I.STORE_FAST, acc)
        if key is not None:
            b.emit(I.LOAD_FAST, value)
            b.emit(I.STORE_FAST, best)
    elif kind == "sum":
        b.emit(I.LOAD_FAST, acc)
        b.emit(I.SWAP, 2)
        b.emit(I.BINARY_OP, BinOp.ADD)
        b.emit(I.STORE_FAST, acc)
    else:
        b.emit(I.SET_ADD if name in ("set", "frozenset") else I.LIST_APPEND, acc)
    contexts[0][0].info.consumer_pcs = range(consuming, len(b.ops))
    for level in range(len(contexts) - 1, -1, -1):
        ctx, next_item = contexts[level]
        b.place(next_item)
        b.end_loop_body(ctx)
        b.place(ctx.exit)
        if ctx.break_label is not None and level > 0:  # (any/all: leave the enclosing loop too)
            outer = contexts[level - 1][0]
            outer.break_label = Label()
            b.emit_jump(I.JUMP, contexts[level - 1][1])
            b.place(ctx.break_label)
            b.emit(I.CLEAR_SLOTS, (ctx.info.hidden[0], len(ctx.info.hidden)))
            b.emit_jump(I.JUMP, outer.break_label)
    b.comprehension_scopes.pop()
    first = contexts[0][0]
    variables = sorted(scope.values())
    done = Label()
    if kind in ("any", "all"):
        decided = Label()
        b.emit_jump(I.JUMP, decided)  # (exhausted)
        assert first.break_label is not None
        b.place(first.break_label)
        b.emit(I.CLEAR_SLOTS, (first.info.hidden[0], len(first.info.hidden)))
        b.place(decided)
        b.emit(I.LOAD_FAST_AND_CLEAR, acc)
        if kind == "all":
            b.emit(I.UNARY_OP, UnaryOp.NOT)
    elif kind in ("min", "max"):
        b.emit(I.LOAD_CONST, min_max_result)
        b.emit(I.LOAD_CONST, name)
        b.emit(I.LOAD_FAST_AND_CLEAR, acc)
        if default is not None:
            b.emit(I.LOAD_FAST_AND_CLEAR, default)
        b.emit(I.CALL, 2 if default is None else 3)
        for slot in (item, value, best, -1 if key is None else key):
            if slot >= 0:
                b.emit(I.CLEAR_SLOTS, (slot, 1))
    elif kind == "call" or kind == "join":
        b.emit(I.LOAD_FAST, callee)
        b.emit(I.LOAD_FAST_AND_CLEAR, acc)
        for slot in extras:
            b.emit(I.LOAD_FAST_AND_CLEAR, slot)
        if node.keywords:
            b.emit(I.CALL_KW, (1 + len(extras), tuple(k.arg for k in node.keywords)))
        else:
            b.emit(I.CALL, 1)
    else:
        b.emit(I.LOAD_FAST_AND_CLEAR, acc)
    b.place(done)
    # (the expression's variables go with it, as its frame's do under CPython; the callee after the call)
    if variables:
        b.emit(I.CLEAR_SLOTS, (variables[0], variables[-1] - variables[0] + 1))
    b.emit(I.CLEAR_SLOTS, (callee, 1))
