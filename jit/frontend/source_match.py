"""Proving that the source the front end compiles is the code the function object holds.

The front end reads a function's ``def`` from its file at the first call. By then the file may have changed
since the module was imported (an editor, a notebook's autoreload, a code generator), or a tool may have
rewritten the code on import (pytest's assertion rewriting). Compiling that text would run something other
than ``py_func``. So the found ``def`` is compiled again by CPython in the same surroundings, and the result is
compared with ``py_func.__code__``; only an exact match lets the front end go on.

The same surroundings are: the enclosing classes and functions, by name (private-name mangling, ``co_qualname``
and ``CO_NESTED`` depend on them; the enclosing functions are empty but for the variables a closure reads, which
the innermost one binds (only a callee to inline is compiled with those: ``locate(func, inlined=True)``),
so every other name resolves the same way); the module's names bound by ``import`` (CPython 3.11 to 3.13 compile ``mod.f(x)`` differently,
without the method-call form, when ``mod`` is imported at module level); the function's ``__future__`` flags,
read off its ``co_flags``; its first line, which the decorators, kept in the recompiled ``def``, give as CPython
does; the running interpreter's ``-O`` level.

What is compared, chosen to be exact yet stable on CPython 3.11 to 3.13 (both sides come from the same
compiler, so nothing version-specific is needed):

- ``co_code`` (from 3.11 it reads back deoptimized, and from 3.12 without ``sys.monitoring`` instrumentation,
  so a function that already ran compares equal) and ``co_exceptiontable``;
- the constants with their types (``1``, ``1.0`` and ``True`` differ; floats and complex numbers by ``repr``,
  so ``-0.0`` and ``nan`` count), nested code objects (comprehensions, lambdas) recursively by the same rules;
- ``co_names``, ``co_varnames``, ``co_cellvars``, ``co_freevars``, the argument counts, ``co_flags``,
  ``co_name``, ``co_qualname``;
- ``co_firstlineno`` and every instruction's line (``co_lines``): tracebacks of the compiled code show them.

Not compared: columns (``co_positions``: an edit that only moves text within its lines cannot change what the
code does, and the front end records lines only), ``co_filename``, and ``co_stacksize`` (follows from the rest).
"""

from __future__ import annotations
import __future__

import ast
import inspect
import symtable
import types
from typing import Any

# the compiler flags of every __future__ feature (nested_scopes' flag is CO_NESTED, a property of the scope)
FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag
FUTURE_FLAGS &= ~inspect.CO_NESTED

#: (filename, hash of the file's text, name, first line, future flags) -> comparison key of the recompiled def
_recompiled: dict[tuple[str, int, str, int, int], tuple[Any, ...] | None] = {}


def source_matches(
    code: types.CodeType,
    node: ast.FunctionDef | ast.Lambda,
    scopes: list[tuple[str, str]],
    module_table: symtable.SymbolTable,
    filename: str,
    text_hash: int,
    free: tuple[str, ...] = (),
) -> bool:
    """Whether compiling ``node`` (the ``def`` or ``lambda`` found for ``code``, inside ``scopes``: the enclosing
    ``("class" | "def", name)`` pairs, outermost first; ``module_table``: the symbol table of its module's
    text) gives exactly ``code``. free: the variables of enclosing functions a closure reads (its co_freevars):
    the innermost enclosing function of the recompiled text binds them."""
    flags = code.co_flags & FUTURE_FLAGS
    key = (filename, text_hash, code.co_name, code.co_firstlineno, flags, free)
    if key not in _recompiled:
        if len(_recompiled) > 1024:
            _recompiled.clear()
        imported = [sym.get_name() for sym in module_table.get_symbols() if sym.is_imported()]
        recompiled = _recompile(node, scopes, imported, filename, flags, code.co_name, code.co_firstlineno, free)
        _recompiled[key] = None if recompiled is None else code_key(recompiled)
    expected = _recompiled[key]
    return expected is not None and expected == code_key(code)


def _recompile(
    node: ast.FunctionDef | ast.Lambda,
    scopes: list[tuple[str, str]],
    imported: list[str],
    filename: str,
    flags: int,
    name: str,
    firstlineno: int,
    free: tuple[str, ...] = (),
) -> types.CodeType | None:
    inner: ast.stmt = node if isinstance(node, ast.FunctionDef) else ast.copy_location(ast.Expr(node), node)
    for kind, scope_name in reversed(scopes):
        # parsed rather than constructed: the parser fills the fields each Python version's AST has
        wrapper = ast.parse(f"{kind} {scope_name}{'' if kind == 'class' else '()'}:\n    pass").body[0]
        assert isinstance(wrapper, (ast.ClassDef, ast.FunctionDef))
        wrapper.body = [inner]
        if free and kind == "def":  # (the closure's variables: cells of the innermost enclosing function)
            wrapper.body = [*ast.parse(f"{' = '.join(free)} = None").body, inner]
            free = ()
        inner = wrapper
    body = ast.parse(f"import {', '.join(imported)}").body if imported else []  # compiled, never run
    module = ast.Module(body=[*body, inner], type_ignores=[])
    try:
        compiled = compile(module, filename, "exec", flags=flags, dont_inherit=True)
    except (SyntaxError, ValueError, TypeError):
        return None
    return _find_code(compiled, name, firstlineno)


def _find_code(root: types.CodeType, name: str, firstlineno: int) -> types.CodeType | None:
    """The outermost code object named ``name`` starting at ``firstlineno`` inside root."""
    pending = [root]
    while pending:
        outer = pending.pop(0)
        for const in outer.co_consts:
            if isinstance(const, types.CodeType):
                if const.co_name == name and const.co_firstlineno == firstlineno:
                    return const
                pending.append(const)
    return None


def code_key(code: types.CodeType) -> tuple[Any, ...]:
    """What two code objects must share to be the same code (see the module docstring)."""
    return (
        code.co_name,
        code.co_qualname,
        code.co_firstlineno,
        code.co_flags,
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_code,
        code.co_exceptiontable,
        tuple(code.co_lines()),
        code.co_names,
        code.co_varnames,
        code.co_cellvars,
        code.co_freevars,
        tuple(_const_key(c) for c in code.co_consts),
    )


def _const_key(value: Any) -> Any:
    if isinstance(value, types.CodeType):
        return ("code", code_key(value))
    if type(value) is tuple:
        return ("tuple", tuple(_const_key(v) for v in value))
    if type(value) is frozenset:
        return ("frozenset", frozenset(_const_key(v) for v in value))
    if isinstance(value, (float, complex)):
        return (type(value), repr(value))
    return (type(value), value)
