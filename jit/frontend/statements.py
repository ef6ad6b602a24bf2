"""Compiling statements, one function per construct, dispatched on the AST node's class."""

from __future__ import annotations

import ast
import sys
import types
from collections.abc import Callable

from jit.frontend import instructions as I
from jit.frontend.builder import FunctionBuilder, Label, LoopContext, at_line
from jit.frontend.consumers import compile_consumed
from jit.frontend.expressions import (
    FRAME_BUILTINS,
    compile_expr,
    compile_jump_if,
    compile_subscript_key,
    comprehension_names,
    push_function,
)
from jit.frontend.instructions import T1Code
from jit.frontend.loops import compile_comprehension, compile_loop_head, compile_store, store_or_delete
from jit.frontend.nested_code import NestedFunction, cell_variables, nested_function
from jit.frontend.operators import AST_INPLACE
from jit.frontend.source import FunctionSource
from jit.frontend.unsupported import Unsupported

_UNSUPPORTED_STATEMENTS = {
    ast.Try: "try/except/finally",
    ast.With: "with statement",
    ast.AsyncWith: "async with",
    ast.AsyncFor: "async for",
    ast.AsyncFunctionDef: "nested async function definition",
    ast.ClassDef: "class definition inside the function",
    ast.Import: "import statement",
    ast.ImportFrom: "import statement",
    ast.Nonlocal: "nonlocal statement",
    ast.Match: "match statement",
}
_UNSUPPORTED_STATEMENTS[ast.TryStar] = "try/except*"


def compile_function(source: FunctionSource, partial: bool = False, inlined: bool = False) -> T1Code:
    """Compile a located function to tier-1 code; raises Unsupported for constructs outside the subset.

    partial: code for the loops only, which CPython hands over one at a time (the CPython baseline): a statement
    outside every loop that the front end refuses is left out of the code and listed in ``T1Code.cpython_only``
    (CPython runs it), and the loops in it (a ``try`` or a ``with`` around a loop) are compiled on their own;
    so is a loop statement holding such a statement (it runs as plain CPython, never handed over), whose nested
    loops are then compiled on their own (``_compile_loop``); unless a lambda, nested def or class, or generator
    expression of the function captures one of its variables (``_cells_may_outlive_their_statement``). Variables
    that nested scopes read and the function may rebind are cell variables
    (``jit.frontend.nested_code.cell_variables``), their cells made at entry (``MAKE_CELL``); a callee to inline
    (``inlined``) with any is refused (the trace would have to make its cells). A function whose own code calls a builtin that shows its frame's locals is refused (``_frame_builtin``). A generator
    function compiles only as partial code (its yields left to CPython), and only where a loop is left to hand
    over."""
    if source.generator_line is not None and not partial:
        # (the tier-1 interpreter runs a call to its end: a generator's frame is suspended at each yield)
        raise Unsupported("generator function (yield)", source.generator_line)
    frame_builtin = _frame_builtin(source)
    if frame_builtin is not None:
        name, line = frame_builtin
        raise Unsupported(f"{name}() (looks at the calling frame)", line)
    b = FunctionBuilder(source, lower_comprehension=compile_comprehension, lower_consumed=compile_consumed)
    cells = cell_variables(source)
    if cells and inlined:
        raise Unsupported(f"a call inlined making cells ({', '.join(sorted(cells))})", source.node.lineno)
    b.set_cells(cells)
    for slot in sorted(b.cells):  # (CPython's MAKE_CELL: a parameter's cell holds the argument)
        b.emit(I.MAKE_CELL, slot)
    if partial and not _cells_may_outlive_their_statement(source, cells):
        b.cpython_only = []
    body = source.node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        if isinstance(body[0].value.value, str):
            body = body[1:]  # the docstring
    compile_block(b, body)
    left = [(reason, line) for line, reason, how in b.cpython_only or () if how != I.OUTSIDE_LOOPS]
    handed_over = any(loop.statement is not None for loop in b.loops)
    if source.generator_line is not None and not handed_over:
        raise Unsupported("generator function (yield)", source.generator_line)  # (its loops all yield, or none)
    if left and not handed_over:
        raise Unsupported(*left[0])  # (every loop statement left to CPython: nothing to hand over)
    b.emit(I.LOAD_CONST, None)
    b.emit(I.RETURN_VALUE)
    return b.finish()


#: the builtins that show a frame's locals to the code calling them: partial code's frame has hidden locals too
_FRAME_LOCALS_BUILTINS = frozenset(FRAME_BUILTINS - {"globals"})


def _frame_builtin(source: FunctionSource) -> tuple[str, int] | None:
    """The first use, in the function's own code (not a nested function's), of a builtin that shows its frame's
    locals (``locals()``, ``vars()`` and ``dir()`` without an argument, ``eval``/``exec`` without a namespace,
    ``breakpoint()``, or any of these names not called where it is named), and its line; None if none. The front
    end compiles no such name (tracejit's interpreter would show its own frame), and partial code may not leave it
    to CPython either: the instrumented copy of the function that CPython then runs holds tracejit's hidden locals
    beside the user's (``jit.frontend.instrument``), which these would show (``sorted(locals())`` would differ from
    CPython's). So the function stays plain, for this reason, whatever else it holds. (A local variable of that
    name is no builtin; ``vars(obj)``, ``dir(obj)`` and ``eval(text, namespace)`` look at no frame.)"""
    local_names = set(source.local_names)
    found: list[tuple[int, int, str]] = []
    harmless: set[int] = set()  # (the ids of names called with what keeps them off the frame)
    pending: list[ast.AST] = list(source.node.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not _looks_at_frame(node):
            harmless.add(id(node.func))
        if (
            isinstance(node, ast.Name)
            and node.id in _FRAME_LOCALS_BUILTINS
            and node.id not in local_names
            and id(node) not in harmless
        ):
            found.append((node.lineno, node.col_offset, node.id))
        if isinstance(node, _LASTING_SCOPES):  # (code of its own frame: a builtin there sees that frame)
            pending.extend(_evaluated_outside(node))
        else:
            pending.extend(ast.iter_child_nodes(node))
    if not found:
        return None
    line, _, name = min(found)
    return name, line


def _looks_at_frame(call: ast.Call) -> bool:
    """Does this call of a frame builtin (by its name) read the calling frame's locals?"""
    assert isinstance(call.func, ast.Name)
    name = call.func.id
    if any(isinstance(arg, ast.Starred) for arg in call.args) or any(k.arg is None for k in call.keywords):
        return True  # (what it is given is not known here)
    given = len(call.args) + len(call.keywords)
    if name in ("vars", "dir"):
        return given == 0
    if name in ("eval", "exec"):
        return len(call.args) < 2 and not any(k.arg in ("globals", "locals") for k in call.keywords)
    return True


def _evaluated_outside(node: ast.AST) -> list[ast.AST]:
    """The parts of a function, lambda, class or generator expression that the frame making it evaluates: its
    decorators and defaults, its bases and keywords, its first iterable."""
    if isinstance(node, ast.GeneratorExp):
        return [node.generators[0].iter]
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *node.keywords]
    parts: list[ast.AST] = []
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        parts += [*node.decorator_list, *(a for a in (node.returns,) if a is not None)]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        arguments = node.args
        parts += [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]
    return parts


#: nested scopes whose closures may live on after the statement that makes them: a lambda, a def, a class, a
#: generator expression (not a list, set or dict comprehension: a nested function of its own on Python 3.11,
#: capturing the variables it reads, but run to its end where it is made). Also the scopes whose code runs in a
#: frame of its own on every Python tracejit supports (comprehensions are inlined into the function's frame from
#: 3.12 on): ``_frame_builtin``
_LASTING_SCOPES = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.GeneratorExp)


def _cells_may_outlive_their_statement(source: FunctionSource, cells: frozenset[str]) -> bool:
    """Does a nested scope that may outlive its statement capture a variable of the function (a cell) that a loop
    statement of the function, or such a scope itself (a walrus in a generator expression), may bind? A loop
    handed over keeps the variable in a slot of its own until it hands the loop back, which would hide its
    changes from that closure, which CPython's code may call meanwhile (and the closure's from the loop): partial
    code is refused. A parameter the function never rebinds, captured by a generator expression, is no risk.
    (Conservative: a name such a scope uses may be its own local, a name bound in a loop may be a nested scope's.)
    A cell variable of the tier-1 code (``cells``) is none: the loop handed over gets CPython's cell itself."""
    captured_cells = set(source.func.__code__.co_cellvars) - cells
    if not captured_cells:
        return False
    scopes = [node for node in ast.walk(source.node) if node is not source.node and isinstance(node, _LASTING_SCOPES)]
    captured = {source.mangle(name) for scope in scopes for name in _names_in(scope)} & captured_cells
    if not captured:
        return False
    loops = [node for node in ast.walk(source.node) if isinstance(node, (ast.For, ast.While, ast.AsyncFor))]
    bound = {source.mangle(name) for node in [*loops, *scopes] for name in _names_bound_in(node)}
    return bool(captured & bound)


def _names_in(node: ast.AST) -> set[str]:
    """The names node uses (loads, stores, deletes, nonlocal declarations)."""
    names: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            names.add(sub.id)
        elif isinstance(sub, ast.Nonlocal):
            names.update(sub.names)
    return names


def _names_bound_in(node: ast.AST) -> set[str]:
    """The names node may bind or delete: assignment targets (a for loop's, a walrus's), except-as names, imports,
    match captures, nested definitions, nonlocal declarations (an over-approximation)."""
    names: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Load):
            names.add(sub.id)
        elif isinstance(sub, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and sub.name:
            names.add(sub.name)
        elif isinstance(sub, ast.alias):
            names.add((sub.asname or sub.name).split(".")[0])
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and sub is not node:
            names.add(sub.name)
        elif isinstance(sub, ast.Nonlocal):
            names.update(sub.names)
        elif isinstance(sub, ast.MatchMapping) and sub.rest:
            names.add(sub.rest)
    return names


def compile_block(b: FunctionBuilder, stmts: list[ast.stmt]) -> None:
    for stmt in stmts:
        compile_stmt(b, stmt)


def compile_stmt(b: FunctionBuilder, node: ast.stmt) -> None:
    if b.cpython_only is None or b.loop_stack:
        _compile_stmt(b, node)
    elif isinstance(node, (ast.For, ast.While)):
        _compile_loop(b, node)
    else:
        # (a statement holding loops, a try or a with around them: CPython runs it, its loops are handed over)
        _compile_or_leave(b, node, I.OUTSIDE_LOOPS)


def _compile_loop(b: FunctionBuilder, node: ast.For | ast.While) -> None:
    """(Partial code) A loop statement outside every loop compiled (a loop left to CPython counts as none). If
    the front end refuses something in it (a ``try``, a ``with``, a ``class``: the whole loop, since its
    code would run that), the loop is left to CPython: CPython runs it plain, never handing it over
    (``jit.frontend.instrument``), and the loop statements nested in it, or in its ``if``, ``try`` and ``with``
    statements, are compiled on their own, each handed over by itself when hot, as loops outside every loop are.
    (A nested loop's ``else`` clause may ``break`` or ``continue`` the loop left to CPython: CPython runs that
    clause, the hand-off ending where the nested loop does, so the statement is left out of the code as one
    outside every loop.)"""
    _compile_or_leave(b, node, I.PLAIN_LOOP.format(line=node.lineno))


def _compile_or_leave(b: FunctionBuilder, node: ast.stmt, how: str) -> None:
    """(Partial code) Compile node, a statement outside every loop; where the front end refuses something in it,
    leave it to CPython (listed with how: ``T1Code.cpython_only``) and compile the loops in its blocks on their
    own (``_compile_loop``)."""
    assert b.cpython_only is not None
    mark = b.mark()
    try:
        _compile_stmt(b, node)
    except Unsupported as exc:
        b.rollback(mark)
        b.cpython_only.append((exc.line if exc.line is not None else node.lineno, exc.reason, how))
        for inner in _nested_loops(_blocks(node)):
            _compile_loop(b, inner)


def _nested_loops(stmts: list[ast.stmt]) -> list[ast.For | ast.While]:
    """The loop statements in stmts, or reached from them through ``if``, ``try`` and ``with`` statements (the
    compound statements whose blocks the instrumented code instruments: ``jit.frontend.instrument``)."""
    found: list[ast.For | ast.While] = []
    for stmt in stmts:
        if isinstance(stmt, (ast.For, ast.While)):
            found.append(stmt)
        else:
            found.extend(_nested_loops(_blocks(stmt)))
    return found


def _blocks(stmt: ast.stmt) -> list[ast.stmt]:
    """The statements of a loop, ``if``, ``try`` or ``with`` statement's blocks, in order ([] for any other)."""
    if isinstance(stmt, (ast.If, ast.For, ast.While)):
        return stmt.body + stmt.orelse
    if isinstance(stmt, ast.Try):
        return [*stmt.body, *(s for handler in stmt.handlers for s in handler.body), *stmt.orelse, *stmt.finalbody]
    if isinstance(stmt, ast.With):
        return stmt.body
    return []


def _compile_stmt(b: FunctionBuilder, node: ast.stmt) -> None:
    handler = _HANDLERS.get(type(node))
    if handler is None:
        reason = _UNSUPPORTED_STATEMENTS.get(type(node), f"{type(node).__name__} statement")
        raise Unsupported(reason, node.lineno)
    with at_line(b, node):
        assert b.depth == 0
        handler(b, node)


# --- assignment --------------------------------------------------------------------------------------------


def _assign(b: FunctionBuilder, node: ast.Assign) -> None:
    if _swap_assign(b, node) or _recursive_lambda(b, node):
        return
    compile_expr(b, node.value)
    for target in node.targets[:-1]:
        b.emit(I.COPY, 1)
        compile_store(b, target)
    compile_store(b, node.targets[-1])


def _swap_assign(b: FunctionBuilder, node: ast.Assign) -> bool:
    """`a, b = b, a` without building a tuple, as CPython does; keeps loops like this traceable."""
    if len(node.targets) != 1:
        return False
    target, value = node.targets[0], node.value
    if not isinstance(target, (ast.Tuple, ast.List)) or not isinstance(value, ast.Tuple):
        return False
    n = len(target.elts)
    if n not in (2, 3) or len(value.elts) != n:
        return False
    if any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts)):
        return False
    for elt in value.elts:
        compile_expr(b, elt)
    b.emit(I.SWAP, n)  # reverses 2 or 3 items, so the first value is on top
    for elt in target.elts:
        compile_store(b, elt)
    return True


def _augassign(b: FunctionBuilder, node: ast.AugAssign) -> None:
    op = AST_INPLACE[type(node.op)]
    target = node.target
    if isinstance(target, ast.Name):
        compile_expr(b, ast.copy_location(ast.Name(target.id, ast.Load()), target))
        compile_expr(b, node.value)
        b.emit(I.BINARY_OP, op)
        compile_store(b, target)
    elif isinstance(target, ast.Attribute):
        compile_expr(b, target.value)
        b.emit(I.COPY, 1)
        b.emit(I.LOAD_ATTR, b.source.mangle(target.attr))
        compile_expr(b, node.value)
        b.emit(I.BINARY_OP, op)
        b.emit(I.SWAP, 2)
        b.emit(I.STORE_ATTR, b.source.mangle(target.attr))
    elif isinstance(target, ast.Subscript):
        compile_expr(b, target.value)
        compile_subscript_key(b, target.slice)
        b.emit(I.COPY, 2)
        b.emit(I.COPY, 2)
        b.emit(I.BINARY_SUBSCR)
        compile_expr(b, node.value)
        b.emit(I.BINARY_OP, op)
        b.emit(I.SWAP, 3)
        b.emit(I.SWAP, 2)
        b.emit(I.STORE_SUBSCR)
    else:
        raise Unsupported(f"augmented assignment to {type(target).__name__}", node.lineno)


def _annassign(b: FunctionBuilder, node: ast.AnnAssign) -> None:
    if node.value is None:
        if not isinstance(node.target, ast.Name):
            raise Unsupported("annotation of an attribute or subscript without a value", node.lineno)
        return  # a bare local annotation does nothing at run time
    compile_expr(b, node.value)
    compile_store(b, node.target)


def _delete(b: FunctionBuilder, node: ast.Delete) -> None:
    for target in node.targets:
        _delete_target(b, target)


def _delete_target(b: FunctionBuilder, target: ast.expr) -> None:
    with at_line(b, target):
        if isinstance(target, (ast.Name, ast.Attribute, ast.Subscript)):
            store_or_delete(b, target, I.DELETE_FAST, I.DELETE_ATTR, I.DELETE_SUBSCR)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                _delete_target(b, elt)
        else:
            raise Unsupported(f"del of {type(target).__name__}", target.lineno)


def _function_def(b: FunctionBuilder, node: ast.FunctionDef) -> None:
    """A nested def, as CPython's bytecode: its decorators evaluated, the function made (``push_function``), the
    decorators applied, innermost first, and the result bound."""
    made = nested_function(b.source, node, comprehension_names(b), cells=b.cell_names)
    _bind_function(b, node, made, ast.copy_location(ast.Name(node.name, ast.Store()), node))


def _recursive_lambda(b: FunctionBuilder, node: ast.Assign) -> bool:
    """`name = lambda ...: ... name(...)`, a lambda calling itself through the name this statement binds (a
    top-level statement of the function, that name's only binding), made with its own cell: True where so."""
    target, value = node.targets[0], node.value
    if len(node.targets) != 1 or not isinstance(target, ast.Name) or not isinstance(value, ast.Lambda):
        return False
    made = nested_function(b.source, value, comprehension_names(b), binding=node, cells=b.cell_names)
    if made.own is None:
        return False
    _bind_function(b, value, made, target)
    return True


def _bind_function(
    b: FunctionBuilder, node: ast.FunctionDef | ast.Lambda, made: NestedFunction, target: ast.Name
) -> None:
    """Make the function of a def or lambda, apply a def's decorators and bind the result to target. A function
    calling itself by that name (``NestedFunction.own``) gets a new empty cell first, which its closure holds and
    which is filled with the result before it is bound (a decorator calling the function meanwhile finds it empty,
    as under CPython)."""
    decorators = node.decorator_list if isinstance(node, ast.FunctionDef) else []
    if made.own is not None:
        b.emit(I.LOAD_CONST, types.CellType)
        b.emit(I.CALL, 0)
    for decorator in decorators:
        compile_expr(b, decorator)
    with at_line(b, node):
        push_function(b, node, made, len(decorators))
    for decorator in reversed(decorators):
        with at_line(b, decorator):
            b.emit(I.CALL, 1)
    if made.own is not None:
        b.emit(I.COPY, 1)
        b.emit(I.SWAP, 3)
        b.emit(I.STORE_ATTR, "cell_contents")
    compile_store(b, target)


# --- simple statements -------------------------------------------------------------------------------------


def _expr(b: FunctionBuilder, node: ast.Expr) -> None:
    compile_expr(b, node.value)
    b.emit(I.POP_TOP)


def _pass(b: FunctionBuilder, node: ast.Pass) -> None:
    b.emit(I.NOP)


def _nonlocal(b: FunctionBuilder, node: ast.Nonlocal) -> None:
    """`nonlocal name` in a callee to inline (``jit.frontend.source.locate`` refuses it elsewhere): its stores of
    name are STORE_FREE."""
    if not all(b.source.mangle(name) in b.source.free_names for name in node.names):
        raise Unsupported("nonlocal statement", node.lineno)
    b.emit(I.NOP)


def _return(b: FunctionBuilder, node: ast.Return) -> None:
    if node.value is None:
        b.emit(I.LOAD_CONST, None)
    else:
        compile_expr(b, node.value)
    b.emit(I.RETURN_VALUE)


def _raise(b: FunctionBuilder, node: ast.Raise) -> None:
    if node.exc is None:
        raise Unsupported("bare raise (re-raise)", node.lineno)
    compile_expr(b, node.exc)
    if node.cause is not None:
        compile_expr(b, node.cause)
        b.emit(I.RAISE, 2)
    else:
        b.emit(I.RAISE, 1)


def _assert(b: FunctionBuilder, node: ast.Assert) -> None:
    if sys.flags.optimize:
        return  # python -O drops asserts
    ok = Label()
    compile_jump_if(b, node.test, ok, True)
    b.emit(I.LOAD_CONST, AssertionError)  # always the builtin, whatever the globals say
    if node.msg is not None:
        compile_expr(b, node.msg)
        b.emit(I.CALL, 1)
    b.emit(I.RAISE, 1)
    b.place(ok)


# --- control flow ------------------------------------------------------------------------------------------


def _if(b: FunctionBuilder, node: ast.If) -> None:
    orelse = Label()
    compile_jump_if(b, node.test, orelse, False)
    compile_block(b, node.body)
    if node.orelse:
        end = Label()
        b.emit_jump(I.JUMP, end)
        b.place(orelse)
        compile_block(b, node.orelse)
        b.place(end)
    else:
        b.place(orelse)


def _close_loop(b: FunctionBuilder, ctx: LoopContext, orelse: list[ast.stmt]) -> None:
    b.end_loop_body(ctx)
    b.place(ctx.exit)
    compile_block(b, orelse)
    if ctx.break_label is not None:
        end = Label()
        if ctx.info.hidden:
            b.emit_jump(I.JUMP, end)
            b.place(ctx.break_label)
            b.emit(I.CLEAR_SLOTS, (ctx.info.hidden[0], len(ctx.info.hidden)))
        else:
            b.place(ctx.break_label)
        b.place(end)


def _for(b: FunctionBuilder, node: ast.For) -> None:
    ctx = compile_loop_head(b, node.iter, node.target, node)
    compile_store(b, node.target)
    ctx.info.body_pc = len(b.ops)
    compile_block(b, node.body)
    _close_loop(b, ctx, node.orelse)


def _while(b: FunctionBuilder, node: ast.While) -> None:
    ctx = b.begin_loop(I.LoopKind.WHILE, node.lineno, (), node)
    always = isinstance(node.test, ast.Constant) and bool(node.test.value)
    if not always:
        compile_jump_if(b, node.test, ctx.exit, False)
    ctx.info.body_pc = len(b.ops)
    compile_block(b, node.body)
    _close_loop(b, ctx, node.orelse)


def _break(b: FunctionBuilder, node: ast.Break) -> None:
    if not b.loop_stack:  # (in the else clause of a loop nested in a loop left to CPython: _compile_loop)
        raise Unsupported("break of a loop that runs as plain CPython", node.lineno)
    ctx = b.loop_stack[-1]
    if ctx.break_label is None:
        ctx.break_label = Label()
    b.emit_jump(I.JUMP, ctx.break_label)


def _continue(b: FunctionBuilder, node: ast.Continue) -> None:
    if not b.loop_stack:  # (in the else clause of a loop nested in a loop left to CPython: _compile_loop)
        raise Unsupported("continue of a loop that runs as plain CPython", node.lineno)
    b.emit_jump(I.JUMP_BACKWARD, b.loop_stack[-1].header)


_HANDLERS: dict[type, Callable[[FunctionBuilder, ast.AST], None]] = {
    ast.Assign: _assign,
    ast.AugAssign: _augassign,
    ast.AnnAssign: _annassign,
    ast.Delete: _delete,
    ast.Expr: _expr,
    ast.Pass: _pass,
    ast.Global: _pass,
    ast.Nonlocal: _nonlocal,  # (symtable has made its names globals: loads, stores and deletes say so)
    ast.Return: _return,
    ast.Raise: _raise,
    ast.Assert: _assert,
    ast.FunctionDef: _function_def,
    ast.If: _if,
    ast.For: _for,
    ast.While: _while,
    ast.Break: _break,
    ast.Continue: _continue,
}
