"""Finding a function's source: its AST node and its scope (from ``symtable``).

The front end works from source, not from CPython's bytecode, so it needs the function's ``def`` in the file it
came from. That file may be missing (REPL, ``exec`` without ``linecache``) or may have changed since the
function was defined (``source_match`` proves the text found compiles to the function's code); both make the
function run as plain CPython, with the reason in ``jit.explain``.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import linecache
import symtable
import types
from collections.abc import Iterator

from jit.frontend.source_match import source_matches
from jit.frontend.unsupported import Unsupported

_CO_GENERATOR = inspect.CO_GENERATOR
_CO_COROUTINE = inspect.CO_COROUTINE
_CO_ASYNC_GENERATOR = inspect.CO_ASYNC_GENERATOR
_CO_ITERABLE_COROUTINE = inspect.CO_ITERABLE_COROUTINE
_CHANGED = "the source file changed since the function was defined"


@dataclasses.dataclass
class FunctionSource:
    func: types.FunctionType
    node: ast.FunctionDef
    filename: str
    local_names: tuple[str, ...]  # parameters first (in order), then other locals; all mangled
    class_name: str | None  # the class whose private names get mangled in this function
    # a generator function's first yield (its line): compiled only as partial code (jit.frontend.statements)
    generator_line: int | None = None
    # a method using super() or __class__ (its only free variable is the class cell): those stay CPython's
    class_cell: bool = False
    # (a closure) the variables of enclosing functions it reads, in the order of its code's co_freevars (of its
    # ``__closure__``)
    free_names: tuple[str, ...] = ()

    def mangle(self, name: str) -> str:
        return mangle(self.class_name, name)


def mangle(class_name: str | None, name: str) -> str:
    """CPython's private name mangling (``__x`` inside ``class C`` becomes ``_C__x``)."""
    if class_name is None or not name.startswith("__") or name.endswith("__") or "." in name:
        return name
    stripped = class_name.lstrip("_")
    if not stripped:
        return name
    return f"_{stripped}{name}"


_parsed: dict[tuple[str, int], tuple[ast.Module, symtable.SymbolTable]] = {}


def _parse(filename: str, text: str) -> tuple[ast.Module, symtable.SymbolTable]:
    key = (filename, hash(text))
    cached = _parsed.get(key)
    if cached is None:
        cached = (ast.parse(text, filename), symtable.symtable(text, filename, "exec"))
        if len(_parsed) > 64:
            _parsed.clear()
        _parsed[key] = cached
    return cached


def locate(func: types.FunctionType, inlined: bool = False) -> FunctionSource:
    """Find ``func``'s definition and scope, or raise Unsupported saying why not. func may be a closure reading
    variables of enclosing functions (its tier-1 code reads its cells, ``LOAD_FREE``; assigning them, ``nonlocal``,
    only a callee to inline: ``STORE_FREE``). inlined: a callee to inline (``jit.inline``), which may also be a lambda (found where it is
    the only one starting on its line; its node is then a ``def`` returning its body); else lambdas are
    refused."""
    code = func.__code__
    line = code.co_firstlineno
    flags = code.co_flags
    if flags & (_CO_COROUTINE | _CO_ITERABLE_COROUTINE):
        raise Unsupported("async function", line)
    if flags & _CO_ASYNC_GENERATOR:
        raise Unsupported("async generator", line)
    if code.co_name == "<lambda>" and not inlined:
        raise Unsupported("lambda", line)
    if flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        raise Unsupported("star-args in the signature (*args/**kwargs)", line)
    filename = code.co_filename
    lines = linecache.getlines(filename, func.__globals__)
    if not lines:
        raise Unsupported(f"source code is not available ({filename})", line, source=True)
    text = "".join(lines)
    try:
        module, table = _parse(filename, text)
    except (SyntaxError, ValueError) as exc:
        raise Unsupported(f"source of {filename} cannot be parsed: {exc}", line, source=True) from None

    lambda_node = None
    if code.co_name == "<lambda>":
        found = _find_lambda(module, line)
        if found is None:
            raise Unsupported("lambda: not the only one starting on its line, or not found there", line, source=True)
        lambda_node, scopes = found
        node: ast.AST = _as_def(lambda_node)
    else:
        found = _find_def(module, code.co_name, line)
        if found is None:
            raise Unsupported(f"{_CHANGED}: its definition is no longer at line {line}", line, source=True)
        node, scopes = found
    # (a callee to inline may assign its closure's variables, ``nonlocal``: STORE_FREE, made at the call's return)
    nonlocal_ok = inlined or not _first_line_of(node, ast.Nonlocal, 0)
    class_cell = code.co_freevars == ("__class__",) and not _first_line_of(node, ast.Nonlocal, 0)
    free = "__class__" not in code.co_freevars and nonlocal_ok
    if code.co_freevars and not class_cell and not free:
        _closure(node, code.co_freevars, line)  # (before the match: the recompiled def has no enclosing cells)
    free_names = code.co_freevars if free else ()
    written = lambda_node if lambda_node is not None else node  # (what the text holds: compiled again to match)
    matched = isinstance(node, ast.FunctionDef) and source_matches(
        code, written, scopes, table, filename, hash(text), free_names
    )
    if not matched:
        raise Unsupported(
            f"{_CHANGED}: its text no longer compiles to the function's code (edited after the module was"
            " imported, or rewritten on import by a tool such as pytest's assertion rewriting)",
            line,
            source=True,
        )
    class_name = next((name for kind, name in reversed(scopes) if kind == "class"), None)
    generator_line = _first_line_of(node, (ast.Yield, ast.YieldFrom), line) if flags & _CO_GENERATOR else None

    params = [a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)]
    params = [mangle(class_name, p) for p in params]

    fn_table = _find_table(table, "lambda" if lambda_node is not None else code.co_name, node.lineno)
    if fn_table is None:
        raise Unsupported("no symbol table for the function", line, source=True)
    local_names = list(params)
    for sym in fn_table.get_symbols():
        name = sym.get_name()
        if sym.is_nonlocal() and not (inlined and name in free_names):
            raise Unsupported(f"nonlocal statement ({name})", _first_line_of(node, ast.Nonlocal, line))
        if sym.is_free() and not (class_cell and name == "__class__") and name not in free_names:
            raise Unsupported(f"closure: uses variable {name!r} of an enclosing function", line)
        if sym.is_local() and name not in local_names:
            local_names.append(name)
    return FunctionSource(
        func, node, filename, tuple(local_names), class_name, generator_line, class_cell, tuple(free_names)
    )


def _closure(node: ast.AST, freevars: tuple[str, ...], line: int) -> None:
    """Raise Unsupported for a function using variables of an enclosing scope, at the first line using one."""
    names = ", ".join(freevars)
    nonlocal_line = _first_line_of(node, ast.Nonlocal, 0)
    if nonlocal_line:
        raise Unsupported(f"nonlocal statement ({names})", nonlocal_line)
    wanted = set(freevars) | ({"super"} if "__class__" in freevars else set())
    uses = [n.lineno for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in wanted]
    if "__class__" in freevars:
        raise Unsupported("super() or __class__ (a closure over the enclosing class)", min(uses, default=line))
    raise Unsupported(f"closure: uses variables of an enclosing function ({names})", min(uses, default=line))


def _scoped_nodes(module: ast.Module) -> Iterator[tuple[ast.AST, list[tuple[str, str]]]]:
    """Every node of module with its enclosing classes, functions and lambdas (``("class" | "def" | "lambda",
    name)``, outermost first)."""
    stack: list[tuple[ast.AST, list[tuple[str, str]]]] = [(module, [])]
    while stack:
        parent, scopes = stack.pop()
        for child in ast.iter_child_nodes(parent):
            yield child, scopes
            inner = scopes
            if isinstance(child, ast.ClassDef):
                inner = [*scopes, ("class", child.name)]
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = [*scopes, ("def", child.name)]
            elif isinstance(child, ast.Lambda):
                inner = [*scopes, ("lambda", "<lambda>")]
            stack.append((child, inner))


def _find_def(module: ast.Module, name: str, firstlineno: int) -> tuple[ast.AST, list[tuple[str, str]]] | None:
    """The def whose first line (decorators included) is firstlineno, with its enclosing classes and functions
    (``("class" | "def", name)``, outermost first)."""
    for node, scopes in _scoped_nodes(module):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            if min([node.lineno] + [d.lineno for d in node.decorator_list]) == firstlineno:
                return node, scopes
    return None


def _find_lambda(module: ast.Module, firstlineno: int) -> tuple[ast.Lambda, list[tuple[str, str]]] | None:
    """The lambda starting on line firstlineno, with its enclosing classes and functions, if it is the only one
    starting there (two lambdas on one line have code objects nothing tells apart but their columns) and not
    inside another lambda."""
    found = [
        (n, scopes) for n, scopes in _scoped_nodes(module) if isinstance(n, ast.Lambda) and n.lineno == firstlineno
    ]
    if len(found) != 1 or any(kind == "lambda" for kind, _ in found[0][1]):
        return None
    node, scopes = found[0]
    assert isinstance(node, ast.Lambda)
    return node, scopes


def _as_def(node: ast.Lambda) -> ast.FunctionDef:
    """`lambda args: body` as the def the front end compiles: `def <lambda>(args): return body`, at its place."""
    made = ast.parse("def f():\n    return None").body[0]  # (parsed: the fields each Python version's AST has)
    assert isinstance(made, ast.FunctionDef) and isinstance(made.body[0], ast.Return)
    made.name = "<lambda>"
    made.args = node.args
    made.body[0].value = node.body
    ast.copy_location(made.body[0], node.body)
    return ast.copy_location(made, node)


def _find_table(table: symtable.SymbolTable, name: str, lineno: int) -> symtable.SymbolTable | None:
    for child in table.get_children():
        if child.get_type() == "function" and child.get_name() == name and child.get_lineno() == lineno:
            return child
        found = _find_table(child, name, lineno)
        if found is not None:
            return found
    return None


def _first_line_of(node: ast.AST, kind: type | tuple[type, ...], default: int) -> int:
    """The first line of a `kind` node in the function's own body (not in nested functions or classes)."""
    lines = [sub.lineno for sub in _own_nodes(node) if isinstance(sub, kind)]
    return min(lines, default=default)


def _own_nodes(node: ast.AST) -> list[ast.AST]:
    out: list[ast.AST] = []
    pending = list(ast.iter_child_nodes(node))
    while pending:
        sub = pending.pop()
        out.append(sub)
        if not isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            pending.extend(ast.iter_child_nodes(sub))
    return out
