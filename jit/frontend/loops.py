"""Loop lowering shared by for statements and comprehensions (mypyc's ``for_helpers`` idea): a for loop's
head (its iterable, hidden slots and FOR_RANGE/FOR_ITER), storing into an assignment target, and the inlined
comprehensions. Built on ``expressions``; ``statements`` builds on this module. Expressions reach the
comprehensions through the builder (``FunctionBuilder.lower_comprehension``), so no import goes back up.
"""

from __future__ import annotations

import ast
import opcode
from collections.abc import Callable

from jit.frontend import instructions as I
from jit.frontend.builder import FunctionBuilder, Label, LoopContext, at_line
from jit.frontend.expressions import compile_expr, compile_jump_if, compile_subscript_key
from jit.frontend.unsupported import Unsupported


def compile_store(b: FunctionBuilder, target: ast.expr) -> None:
    """Pop the top of the stack into target."""
    with at_line(b, target):
        if isinstance(target, (ast.Name, ast.Attribute, ast.Subscript)):
            store_or_delete(b, target, I.STORE_FAST, I.STORE_ATTR, I.STORE_SUBSCR)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in target.elts):
                raise Unsupported("starred assignment target (a, *b = ...)", target.lineno)
            b.emit(I.UNPACK_SEQUENCE, len(target.elts))
            for elt in target.elts:
                compile_store(b, elt)
        else:
            raise Unsupported(f"assignment to {type(target).__name__}", target.lineno)


def store_or_delete(b: FunctionBuilder, target: ast.expr, fast: int, attr: int, item: int) -> None:
    """Store to or delete a local, an attribute or an item (the op of each kind is given)."""
    if isinstance(target, ast.Name):
        slot = b.lookup(target.id)
        if slot is not None and slot in b.cells:
            b.emit(I.STORE_DEREF if fast == I.STORE_FAST else I.DELETE_DEREF, slot)
        elif slot is not None:
            b.emit(fast, slot)
        elif b.source.mangle(target.id) in b.source.free_names:  # (a callee to inline: `nonlocal name`)
            name = b.source.mangle(target.id)
            if fast != I.STORE_FAST:
                raise Unsupported(f"del of the nonlocal variable {name}", target.lineno)
            b.emit(I.STORE_FREE, (b.source.free_names.index(name), name))
        else:  # a name the function declares global
            b.emit(I.STORE_GLOBAL if fast == I.STORE_FAST else I.DELETE_GLOBAL, b.source.mangle(target.id))
    elif isinstance(target, ast.Attribute):
        compile_expr(b, target.value)
        b.emit(attr, b.source.mangle(target.attr))
    else:
        assert isinstance(target, ast.Subscript)
        compile_expr(b, target.value)
        compile_subscript_key(b, target.slice)
        b.emit(item)


def _is_range_call(b: FunctionBuilder, node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "range"
        and b.lookup("range") is None
        and 1 <= len(node.args) <= 3
        and not node.keywords
        and not any(isinstance(a, ast.Starred) for a in node.args)
    )


def loop_head_at_iterable() -> bool:
    """Where CPython places a for statement's GET_ITER and FOR_ITER: at the iterable (3.13) or at the
    whole statement (3.11, 3.12)."""
    code = compile("for x in y:\n    pass\n", "<probe>", "exec")
    get_iter = opcode.opmap["GET_ITER"]
    for unit, position in enumerate(code.co_positions()):
        if code.co_code[2 * unit] == get_iter:
            return position == (1, 1, 9, 10)
    raise AssertionError("no GET_ITER in a for statement")


LOOP_HEAD_AT_ITERABLE = loop_head_at_iterable()


def compile_loop_head(
    b: FunctionBuilder,
    iterable: ast.expr,
    target: ast.expr,
    statement: ast.For | None = None,
    before_loop: Callable[[], None] | None = None,
) -> LoopContext:
    """Evaluate a for loop's iterable, open the loop and emit its FOR_RANGE/FOR_ITER (which pushes the next
    item); the caller stores the item into its target. statement: the for statement (None in a
    comprehension). before_loop: emits what runs after iter() of the iterable and before the loop's header (a
    consumer's other arguments, ``jit.frontend.consumers``)."""
    line = iterable.lineno
    head = statement if statement is not None and not LOOP_HEAD_AT_ITERABLE else None
    if _is_range_call(b, iterable):
        compile_expr(b, iterable)  # calls whatever `range` names at run time; RANGE_SETUP checks the result
        base = b.new_hidden(".range.cur")
        b.new_hidden(".range.stop")
        b.new_hidden(".range.step")
        b.new_hidden(".range.iter")
        with at_line(b, iterable, head):
            b.emit(I.RANGE_SETUP, base)
        if before_loop is not None:
            before_loop()
        ctx = b.begin_loop(I.LoopKind.RANGE, line, (base, base + 1, base + 2, base + 3), statement)
        ctx.info.unit_step = len(iterable.args) <= 2  # type: ignore[attr-defined]
        with at_line(b, iterable, head):
            b.emit_jump(I.FOR_RANGE, ctx.exit, slot=base)
    else:
        compile_expr(b, iterable)
        base = b.new_hidden(".seq")
        b.new_hidden(".index")
        b.new_hidden(".iter")
        with at_line(b, iterable, head):
            b.emit(I.GET_ITER, base)
        if before_loop is not None:
            before_loop()
        ctx = b.begin_loop(I.LoopKind.ITER, line, (base, base + 1, base + 2), statement)
        with at_line(b, iterable, head):
            b.emit_jump(I.FOR_ITER, ctx.exit, slot=base)
    return ctx


def open_comprehension_loops(
    b: FunctionBuilder,
    generators: list[ast.comprehension],
    first: Callable[[LoopContext], None],
    before_loop: Callable[[], None] | None = None,
) -> tuple[list[tuple[LoopContext, Label]], dict[str, int]]:
    """Open the loops of a comprehension or generator expression inlined in hidden slots: its variables' slots (its
    scope, pushed on ``b.comprehension_scopes`` once the first iterable, which the enclosing scope evaluates, is
    compiled; the caller pops it), each loop's head (first called on the first loop's context, before_loop given
    to its head), target and conditions. Returns each loop's context with the label of its next item (where a
    condition that fails goes), outermost first, and the scope."""
    scope: dict[str, int] = {}
    for gen in generators:
        for target in ast.walk(gen.target):
            if isinstance(target, ast.Name) and b.source.mangle(target.id) not in scope:
                scope[b.source.mangle(target.id)] = b.new_hidden(target.id)
    contexts = []
    for i, gen in enumerate(generators):
        # the first iterable is evaluated in the enclosing scope, the others in the comprehension's
        ctx = compile_loop_head(b, gen.iter, gen.target, before_loop=before_loop if i == 0 else None)
        if i == 0:
            b.comprehension_scopes.append(scope)
            first(ctx)
        with at_line(b, gen.target):
            compile_store(b, gen.target)
        next_item = Label()
        contexts.append((ctx, next_item))
        for cond in gen.ifs:
            compile_jump_if(b, cond, next_item, False)
    return contexts, scope


def compile_comprehension(b: FunctionBuilder, node: ast.expr) -> None:
    """A list, set or dict comprehension, inlined: its loops run in hidden slots of the function."""
    kind = {ast.ListComp: "list", ast.SetComp: "set", ast.DictComp: "dict"}[type(node)]
    generators: list[ast.comprehension] = node.generators  # type: ignore[attr-defined]
    for gen in generators:
        if gen.is_async:
            raise Unsupported("async comprehension", node.lineno)
    # loop headers need an empty operand stack: park pending operands in hidden slots meanwhile
    spills = [b.new_hidden(f".spill{i}") for i in range(b.depth)]
    for slot in reversed(spills):
        b.emit(I.STORE_FAST, slot)
    acc = b.new_hidden(f".{kind}comp")
    build = {"list": I.BUILD_LIST, "set": I.BUILD_SET, "dict": I.BUILD_MAP}[kind]
    built_at = b.emit(build, 0)
    b.emit(I.STORE_FAST, acc)

    def first(ctx: LoopContext) -> None:
        ctx.info.frame_name, ctx.info.frame_pc = f"<{kind}comp>", built_at
        if ctx.info.parent is None:  # (outside every loop: CPython may hand the comprehension over whole)
            ctx.info.comprehension = (node.lineno, node.col_offset)
            ctx.info.accumulator = acc
            ctx.info.builds = {"list": list, "set": set, "dict": dict}[kind]

    contexts, _ = open_comprehension_loops(b, generators, first)
    if kind == "dict":
        compile_expr(b, node.key)  # type: ignore[attr-defined]
        compile_expr(b, node.value)  # type: ignore[attr-defined]
        b.emit(I.MAP_ADD, acc)
    else:
        compile_expr(b, node.elt)  # type: ignore[attr-defined]
        b.emit(I.LIST_APPEND if kind == "list" else I.SET_ADD, acc)
    for ctx, next_item in reversed(contexts):
        b.place(next_item)
        b.end_loop_body(ctx)
        b.place(ctx.exit)
    b.comprehension_scopes.pop()
    for slot in spills:
        b.emit(I.LOAD_FAST_AND_CLEAR, slot)
    b.emit(I.LOAD_FAST_AND_CLEAR, acc)
