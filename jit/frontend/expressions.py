"""Compiling expressions, one function per construct, dispatched on the AST node's class."""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable

from jit.frontend import instructions as I
from jit.frontend.builder import FunctionBuilder, Label, at_line
from jit.frontend.folding import NOT_CONSTANT, constant_value
from jit.frontend.nested_code import NestedFunction, generator_function, nested_function, string_annotations
from jit.frontend.operators import AST_BINOPS, AST_CMPOPS, AST_UNARYOPS, CompareOp, UnaryOp
from jit.frontend.unsupported import Unsupported


def compile_expr(b: FunctionBuilder, node: ast.expr) -> None:
    """Emit code that pushes the value of node."""
    handler = _HANDLERS.get(type(node))
    if handler is None:
        raise Unsupported(_describe(node), getattr(node, "lineno", None))
    with at_line(b, node):
        handler(b, node)


def _describe(node: ast.AST) -> str:
    names = {
        ast.Await: "await",
        ast.Yield: "yield",
        ast.YieldFrom: "yield from",
        ast.Starred: "starred expression (*x)",
    }
    return names.get(type(node), f"{type(node).__name__} expression")


def _constant(b: FunctionBuilder, node: ast.Constant) -> None:
    b.emit(I.LOAD_CONST, b.constant(node.value))


def _name(b: FunctionBuilder, node: ast.Name) -> None:
    if node.id == "__debug__":
        b.emit(I.LOAD_CONST, not sys.flags.optimize)
        return
    slot = b.lookup(node.id)
    if slot is not None:
        pc = b.load_local(slot)
        if b.comprehension_scopes and slot < len(b.source.local_names):
            b.comprehension_loads.add(pc)
    else:
        name = b.source.mangle(node.id)
        if b.source.class_cell and name in ("super", "__class__"):
            # (zero-argument super() reads the class cell and the first argument of the frame calling it)
            raise Unsupported("super() or __class__ (a closure over the enclosing class)", node.lineno)
        if name in b.source.free_names:  # (a callee to inline: a variable of an enclosing function, in its cell)
            b.emit(I.LOAD_FREE, (b.source.free_names.index(name), name))
            return
        if name in FRAME_BUILTINS:
            # called from tracejit's interpreter, these would see the interpreter's frame, not the function's
            raise Unsupported(f"{name}() (looks at the calling frame)", node.lineno)
        b.emit(I.LOAD_GLOBAL, name)


#: builtins that look at the frame calling them
FRAME_BUILTINS = frozenset({"globals", "locals", "vars", "dir", "eval", "exec", "breakpoint"})


def _named_expr(b: FunctionBuilder, node: ast.NamedExpr) -> None:
    """`target := value`: the value stays pushed. Inside a comprehension the target is the enclosing
    function's local (CPython forbids rebinding an iteration variable), which is what lookup finds."""
    compile_expr(b, node.value)
    b.emit(I.COPY, 1)
    slot = b.lookup(node.target.id)
    name = b.source.mangle(node.target.id)
    if slot is not None:
        b.store_local(slot)
    elif name in b.source.free_names:  # (a callee to inline: `nonlocal name`)
        b.emit(I.STORE_FREE, (b.source.free_names.index(name), name))
    else:  # declared global
        b.emit(I.STORE_GLOBAL, b.source.mangle(node.target.id))


def _binop(b: FunctionBuilder, node: ast.BinOp) -> None:
    if _folded(b, node):
        return
    compile_expr(b, node.left)
    compile_expr(b, node.right)
    b.emit(I.BINARY_OP, AST_BINOPS[type(node.op)])


def _unaryop(b: FunctionBuilder, node: ast.UnaryOp) -> None:
    if _folded(b, node):  # (a negative literal among them: one constant, the same object on every run)
        return
    compile_expr(b, node.operand)
    b.emit(I.UNARY_OP, AST_UNARYOPS[type(node.op)])


def _folded(b: FunctionBuilder, node: ast.expr) -> bool:
    """Push node's value as one constant if CPython's compiler folds it into one (``jit.frontend.folding``)."""
    value = constant_value(node)
    if value is NOT_CONSTANT:
        return False
    b.emit(I.LOAD_CONST, b.constant(value))
    return True


def _boolop(b: FunctionBuilder, node: ast.BoolOp) -> None:
    jump = I.JUMP_IF_FALSE_OR_POP if isinstance(node.op, ast.And) else I.JUMP_IF_TRUE_OR_POP
    end = Label()
    for value in node.values[:-1]:
        compile_expr(b, value)
        b.emit_jump(jump, end)
    compile_expr(b, node.values[-1])
    b.place(end)


def _compare(b: FunctionBuilder, node: ast.Compare) -> None:
    compile_expr(b, node.left)
    if len(node.ops) == 1:
        compile_expr(b, node.comparators[0])
        b.emit(I.COMPARE_OP, AST_CMPOPS[type(node.ops[0])])
        return
    # a < b < c: each middle operand is evaluated once; the result is the first false comparison's value
    cleanup, end = Label(), Label()
    _compile_chain(b, node, I.JUMP_IF_FALSE_OR_POP, cleanup)
    b.emit_jump(I.JUMP, end)
    b.place(cleanup)
    b.emit(I.SWAP, 2)
    b.emit(I.POP_TOP)
    b.place(end)


def _compile_chain(b: FunctionBuilder, node: ast.Compare, on_false: int, cleanup: Label) -> None:
    """The comparisons of a chain after its left operand: every comparison but the last jumps to cleanup
    with on_false when false (its middle operand still under the result); the last one's result is pushed."""
    for op, right in zip(node.ops[:-1], node.comparators[:-1]):
        compile_expr(b, right)
        b.emit(I.SWAP, 2)
        b.emit(I.COPY, 2)
        b.emit(I.COMPARE_OP, AST_CMPOPS[type(op)])
        b.emit_jump(on_false, cleanup)
    compile_expr(b, node.comparators[-1])
    b.emit(I.COMPARE_OP, AST_CMPOPS[type(node.ops[-1])])


def _ifexp(b: FunctionBuilder, node: ast.IfExp) -> None:
    orelse, end = Label(), Label()
    compile_jump_if(b, node.test, orelse, False)
    compile_expr(b, node.body)
    b.emit_jump(I.JUMP, end)
    b.place(orelse)
    compile_expr(b, node.orelse)
    b.place(end)


def compile_jump_if(b: FunctionBuilder, node: ast.expr, label: Label, when: bool) -> None:
    """Jump to label if the truth of node is `when`, else fall through; `and`/`or`/`not` short-circuit
    without materializing booleans, each operand's truth tested once as CPython does."""
    with at_line(b, node):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            compile_jump_if(b, node.operand, label, not when)
            return
        if isinstance(node, ast.BoolOp):
            is_and = isinstance(node.op, ast.And)
            if is_and != when:
                # `a and b` jumping when false (or `a or b` when true): any operand decides alone
                for value in node.values:
                    compile_jump_if(b, value, label, when)
                return
            skip = Label()
            for value in node.values[:-1]:
                compile_jump_if(b, value, skip, not when)
            compile_jump_if(b, node.values[-1], label, when)
            b.place(skip)
            return
        if isinstance(node, ast.Compare) and len(node.ops) > 1:
            _jump_if_chained_compare(b, node, label, when)
            return
        if isinstance(node, ast.IfExp):
            # `if (x if c else y):` tests x or y in jump form too, so `and`/`or` inside stay single-tested
            orelse, end = Label(), Label()
            compile_jump_if(b, node.test, orelse, False)
            compile_jump_if(b, node.body, label, when)
            b.emit_jump(I.JUMP, end)
            b.place(orelse)
            compile_jump_if(b, node.orelse, label, when)
            b.place(end)
            return
        compile_expr(b, node)
        b.emit_jump(I.POP_JUMP_IF_TRUE if when else I.POP_JUMP_IF_FALSE, label)


def _jump_if_chained_compare(b: FunctionBuilder, node: ast.Compare, label: Label, when: bool) -> None:
    """`a < b < c` as a condition: each comparison's result is tested for truth once, as CPython does (the
    value form would test a false intermediate result twice)."""
    compile_expr(b, node.left)
    cleanup, end = Label(), Label()
    _compile_chain(b, node, I.POP_JUMP_IF_FALSE, cleanup)
    b.emit_jump(I.POP_JUMP_IF_TRUE if when else I.POP_JUMP_IF_FALSE, label)
    b.emit_jump(I.JUMP, end)
    b.place(cleanup)
    b.emit(I.POP_TOP)
    if not when:
        b.emit_jump(I.JUMP, label)
    b.place(end)


def _call(b: FunctionBuilder, node: ast.Call) -> None:
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        raise Unsupported("star-args in a call (*args/**kwargs)", node.lineno)
    if b.lower_consumed is not None and b.lower_consumed(b, node):
        return  # (a generator expression consumed by a builtin: jit.frontend.consumers, inlined)
    compile_expr(b, node.func)
    for arg in node.args:
        compile_expr(b, arg)
    for kw in node.keywords:
        compile_expr(b, kw.value)
    n = len(node.args) + len(node.keywords)
    if node.keywords:
        names = tuple(k.arg for k in node.keywords if k.arg is not None)  # CPython does not mangle these
        b.emit(I.CALL_KW, (n, names))
    else:
        b.emit(I.CALL, n)


def _generator_expression(b: FunctionBuilder, node: ast.GeneratorExp) -> None:
    """As CPython's bytecode: the generator function (``jit.frontend.nested_code``) called with iter() of the first
    iterable, evaluated here (then the values of the function's variables it reads)."""
    made, reads = generator_function(b.source, node, comprehension_names(b), b.cell_names)
    slots = [b.lookup(name) for name in reads]
    if None in slots:  # (a free variable of the function, the class cell of a method using super(): CPython's)
        raise Unsupported(f"generator expression reading {reads[slots.index(None)]}", node.lineno)
    b.emit(I.LOAD_CONST, made)
    b.emit(I.LOAD_CONST, iter)
    compile_expr(b, node.generators[0].iter)
    b.emit(I.CALL, 1)
    for slot in slots:
        b.emit(I.LOAD_FAST, slot)  # (a cell variable's cell: a GeneratorMaker's closure takes it)
    b.emit(I.CALL, 1 + len(reads))


def _lambda(b: FunctionBuilder, node: ast.Lambda) -> None:
    """As CPython's bytecode: the function made of CPython's code object for it (``jit.frontend.nested_code``),
    its defaults evaluated here, its closure's cells holding the values of the function's variables it reads."""
    push_function(b, node, nested_function(b.source, node, comprehension_names(b), cells=b.cell_names), 0)


def comprehension_names(b: FunctionBuilder) -> list[str]:
    """The variables of the comprehensions being compiled (a nested scope there may not read them)."""
    return [name for scope in b.comprehension_scopes for name in scope]


def push_function(b: FunctionBuilder, node: ast.Lambda | ast.FunctionDef, made: NestedFunction, under: int) -> None:
    """Push the function a lambda or def makes (before its decorators are applied), evaluating what CPython's
    bytecode evaluates where it is made, in its order: the defaults, the keyword-only defaults, the annotations.
    under: the items pushed since the def's own cell (``NestedFunction.own``), which the closure takes."""
    slots = [b.lookup(name) for name in made.reads]
    for index, (name, slot) in enumerate(zip(made.reads, slots)):
        if slot is None and index != made.own:  # (defensive: nested_function refuses what the function has no slot of)
            what = "lambda" if isinstance(node, ast.Lambda) else f"nested function {node.name}"
            raise Unsupported(f"{what} reading {name}, which the function holds no slot of", node.lineno)
    b.emit(I.LOAD_CONST, made.maker())
    arguments = node.args
    if arguments.defaults:
        for default in arguments.defaults:
            compile_expr(b, default)
        b.emit(I.BUILD_TUPLE, len(arguments.defaults))
    else:
        b.emit(I.LOAD_CONST, None)
    keyword_defaults = [(a.arg, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None]
    for name, default in keyword_defaults:
        b.emit(I.LOAD_CONST, b.source.mangle(name))
        compile_expr(b, default)
    if keyword_defaults:
        b.emit(I.BUILD_MAP, len(keyword_defaults))
    else:
        b.emit(I.LOAD_CONST, None)
    _push_annotations(b, node)
    for index, slot in enumerate(slots):
        if index == made.own:
            b.emit(I.COPY, under + 1 + 3 + index + 1)  # (the own cell, under what was pushed since)
        elif index in made.cells:
            b.emit(I.LOAD_FAST, slot)  # (the cell variable's cell itself)
        else:
            assert slot is not None
            b.load_local(slot)
    b.emit(I.CALL, 3 + len(slots))


def _push_annotations(b: FunctionBuilder, node: ast.Lambda | ast.FunctionDef) -> None:
    """Push a def's annotations as a dict (None if it has none), evaluated in CPython's order: the parameters,
    the positional-only ones after them, *args, the keyword-only ones, **kwargs, the return value."""
    if isinstance(node, ast.Lambda):
        b.emit(I.LOAD_CONST, None)
        return
    arguments = node.args
    annotated = [*arguments.args, *arguments.posonlyargs, arguments.vararg, *arguments.kwonlyargs, arguments.kwarg]
    pairs = [(a.arg, a.annotation) for a in annotated if a is not None and a.annotation is not None]
    if node.returns is not None:
        pairs.append(("return", node.returns))
    if not pairs:
        b.emit(I.LOAD_CONST, None)
        return
    strings = string_annotations(b.source, node)
    if strings is not None:  # (nothing evaluated)
        b.emit(I.LOAD_CONST, strings)
        b.emit(I.LOAD_CONST, dict)
        b.emit(I.SWAP, 2)
        b.emit(I.CALL, 1)  # (a dict of its own for each function made)
        return
    for name, annotation in pairs:
        if isinstance(annotation, ast.Starred):
            raise Unsupported("starred annotation (*args: *Ts)", annotation.lineno)
        b.emit(I.LOAD_CONST, b.source.mangle(name))
        compile_expr(b, annotation)
    b.emit(I.BUILD_MAP, len(pairs))


def _attribute(b: FunctionBuilder, node: ast.Attribute) -> None:
    if _is_zero_argument_super(b, node.value):
        _super_attribute(b, node)
        return
    compile_expr(b, node.value)
    b.emit(I.LOAD_ATTR, b.source.mangle(node.attr))


def _is_zero_argument_super(b: FunctionBuilder, node: ast.expr) -> bool:
    """Is node `super()` with no argument, in a method whose class cell the front end may read (an inlined
    callee's: ``jit.frontend.source.FunctionSource.class_cell``)?"""
    return (
        b.source.class_cell
        and isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "super"
        and not node.args
        and not node.keywords
    )


def _super_attribute(b: FunctionBuilder, node: ast.Attribute) -> None:
    """`super().name`: what CPython's zero-argument super() reads, made explicit. CPython's compiler turns the call
    into super(__class__, <first argument>), looking `super` up as a global; if that finds the builtin, the class
    comes from the method's class cell and the object from the frame's first local as it is then (rebound or not).
    The front end emits the same: the global, the first parameter's slot, and LOAD_SUPER_ATTR, which reads the cell
    (the interpreter calls any other `super` the globals hold with no argument, as CPython does)."""
    func = b.source.func
    first = b.source.local_names[0] if func.__code__.co_argcount else None
    if first is None or b.comprehension_scopes or b.lookup("super") is not None or _deletes(b.source.node, first):
        # (CPython raises RuntimeError where the first argument is missing or deleted; a local `super` is no super;
        # in a comprehension, its own frame's first local on Python 3.11)
        raise Unsupported("super() or __class__ (a closure over the enclosing class)", node.lineno)
    b.emit(I.LOAD_GLOBAL, "super")
    slot = b.lookup(first)
    assert slot is not None
    b.load_local(slot)
    b.emit(I.LOAD_SUPER_ATTR, (func.__code__.co_freevars.index("__class__"), b.source.mangle(node.attr)))


def _deletes(tree: ast.AST, name: str) -> bool:
    """Does tree delete the variable name somewhere (`del name`)?"""
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Del) for n in ast.walk(tree))


def compile_subscript_key(b: FunctionBuilder, node: ast.expr) -> None:
    if isinstance(node, ast.Slice):
        with at_line(b, node):
            for part in (node.lower, node.upper):
                if part is None:
                    b.emit(I.LOAD_CONST, None)
                else:
                    compile_expr(b, part)
            if node.step is not None:
                compile_expr(b, node.step)
            b.emit(I.BUILD_SLICE, 3 if node.step is not None else 2)
    elif isinstance(node, ast.Tuple) and any(isinstance(e, ast.Slice) for e in node.elts):
        for elt in node.elts:
            compile_subscript_key(b, elt)
        b.emit(I.BUILD_TUPLE, len(node.elts))
    else:
        compile_expr(b, node)


def _subscript(b: FunctionBuilder, node: ast.Subscript) -> None:
    compile_expr(b, node.value)
    compile_subscript_key(b, node.slice)
    b.emit(I.BINARY_SUBSCR)


def _no_starred(elts: list[ast.expr]) -> None:
    for elt in elts:
        if isinstance(elt, ast.Starred):
            raise Unsupported("starred element in a display (*x)", elt.lineno)


def _sequence(op: int) -> Callable[[FunctionBuilder, ast.AST], None]:
    def compile_display(b: FunctionBuilder, node: ast.AST) -> None:
        elts = node.elts  # type: ignore[attr-defined]
        _no_starred(elts)
        for elt in elts:
            compile_expr(b, elt)
        b.emit(op, len(elts))

    return compile_display


def _tuple(b: FunctionBuilder, node: ast.Tuple) -> None:
    if all(isinstance(e, ast.Constant) for e in node.elts):
        b.emit(I.LOAD_CONST, b.constant(tuple(e.value for e in node.elts)))  # type: ignore[attr-defined]
    else:
        _sequence(I.BUILD_TUPLE)(b, node)


def _dict(b: FunctionBuilder, node: ast.Dict) -> None:
    for key, value in zip(node.keys, node.values):
        if key is None:
            raise Unsupported("dict unpacking in a display (**d)", node.lineno)
        compile_expr(b, key)
        compile_expr(b, value)
    b.emit(I.BUILD_MAP, len(node.keys))


def _joined_str(b: FunctionBuilder, node: ast.JoinedStr) -> None:
    for value in node.values:
        compile_expr(b, value)
    if len(node.values) != 1 or not isinstance(node.values[0], ast.FormattedValue):
        b.emit(I.BUILD_STRING, len(node.values))


def _formatted_value(b: FunctionBuilder, node: ast.FormattedValue) -> None:
    compile_expr(b, node.value)
    if node.format_spec is not None:
        compile_expr(b, node.format_spec)
    conversion = {-1: None, ord("s"): "s", ord("r"): "r", ord("a"): "a"}[node.conversion]
    b.emit(I.FORMAT_VALUE, (conversion, node.format_spec is not None))


def _comprehension(b: FunctionBuilder, node: ast.expr) -> None:
    b.lower_comprehension(b, node)  # jit.frontend.loops.compile_comprehension (loops build on expressions)


_HANDLERS: dict[type, Callable[[FunctionBuilder, ast.AST], None]] = {
    ast.Constant: _constant,
    ast.Name: _name,
    ast.NamedExpr: _named_expr,
    ast.BinOp: _binop,
    ast.UnaryOp: _unaryop,
    ast.BoolOp: _boolop,
    ast.Compare: _compare,
    ast.IfExp: _ifexp,
    ast.Call: _call,
    ast.Attribute: _attribute,
    ast.Subscript: _subscript,
    ast.List: _sequence(I.BUILD_LIST),
    ast.Tuple: _tuple,
    ast.Set: _sequence(I.BUILD_SET),
    ast.Dict: _dict,
    ast.JoinedStr: _joined_str,
    ast.FormattedValue: _formatted_value,
    ast.ListComp: _comprehension,
    ast.GeneratorExp: _generator_expression,
    ast.Lambda: _lambda,
    ast.SetComp: _comprehension,
    ast.DictComp: _comprehension,
}

__all__ = ["compile_expr", "compile_jump_if", "compile_subscript_key", "push_function", "CompareOp", "UnaryOp"]
