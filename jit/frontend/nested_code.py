"""Nested scopes whose code CPython compiles: generator expressions, lambdas and nested defs. The code around
them stays tier-1 code.

In CPython a generator expression is a scope of its own: a code object run as a generator, called with an
iterator over its first iterable, which the enclosing scope evaluates (``iter()`` of it) when the expression is
evaluated; the rest (the element, the conditions, the other iterables) runs lazily in the generator's frame.
The front end does the same: it compiles the expression's own code object with CPython and emits what CPython's
bytecode does around it, a call of ``iter`` on the first iterable, then of the generator function made from that
code object and the function's globals. The generator is then CPython's own (its laziness, its exceptions and
its traceback frame exactly as CPython's), and a loop that evaluates one (`total += sum(p.energy() for p in
swarm)`) is still compiled: native code makes the two calls through the generic path and gives the generator to
whatever consumes it.

Variables of the enclosing function the expression reads (its code object's free variables) are read by CPython
through cells, which tier-1 code does not keep: the generator function is compiled as a `def` with a `for` per
clause, an `if` per condition and `yield` of the element, taking those variables' values after the iterator,
given when the expression is evaluated. That is exact only where the
variable cannot change afterwards while the generator may still run, so each must be a parameter the function
never rebinds, or a local bound once, by an assignment (or a def) among the function's top-level statements
before the one holding the expression (it has run, and nothing binds the name again: no other assignment,
`del`, loop target, walrus, import, `nonlocal` in a nested function...); any other is refused, and jit.explain
names it. To find the free variables, the expression is compiled inside a stand-in of the enclosing function in
which every local name of the function (and of the comprehensions around the expression) is assigned: a name the
expression reads from the function is then a free variable of the code object. The stand-in sits in a class of
the same name as the function's own, so that private names are mangled as CPython mangles them there, and is
compiled under the function's own ``from __future__`` imports.

A lambda or nested def is compiled the same way, in the stand-in, and its code object is CPython's own for it
(name, qualified name, lines, docstring, free variables). Where it is evaluated, tier-1 code calls a
``FunctionMaker`` with the defaults, keyword-only defaults and annotations it evaluated (in CPython's order), and
the values of the variables the function reads, under the same rule: the maker makes the function with a closure
of real cells holding those values (``types.CellType``), as CPython's MAKE_FUNCTION would (the recorder records
that call as ``_MAKE_FUNCTION``, native code). One exception to the rule makes recursion work: a def reading its
own name, where the def is a top-level statement of the function and the name's only binding, gets an empty cell
that the def statement fills with what it binds (after its decorators), as CPython's is.

A variable read under no such rule (a loop variable a lambda reads, one a nested def rebinds with ``nonlocal``,
a parameter the function rebinds) is a cell variable of the function's tier-1 code, as it is CPython's
(``cell_variables``): its slot holds a cell made at the function's entry (``MAKE_CELL``, holding a parameter's
argument), the function reads and writes the variable through it (``LOAD_DEREF``, ``STORE_DEREF``,
``DELETE_DEREF``), and a lambda, nested def or generator expression reading it gets that cell itself in its
closure: it sees the function's later rebinding, and the function sees its ``nonlocal`` stores. (Only a variable
of a comprehension around the nested scope stays refused: CPython keeps its cell in the comprehension's frame.)
"""

from __future__ import annotations
import __future__

import ast
import copy
import dataclasses
import functools
import operator
import types
from collections.abc import Iterable
from typing import Any

from jit.frontend.source import FunctionSource
from jit.frontend.unsupported import Unsupported

_ITERABLE = "_tracejit_iterable"


def generator_function(
    source: FunctionSource,
    node: ast.GeneratorExp,
    enclosing: Iterable[str] = (),
    cells: frozenset[str] = frozenset(),
    enclosing_by_value: bool = False,
) -> tuple[types.FunctionType | GeneratorMaker, tuple[str, ...]]:
    """The generator function of node and the function's variables it reads (mangled), which it takes after the
    iterator, each bound for good when node is evaluated; raises Unsupported where the expression reads another
    variable of the function, or one of the comprehensions around it (``enclosing``: their mangled names; unless
    enclosing_by_value: then it takes their values when it is made, ``jit.frontend.consumers``' generator for a
    callee that is not the builtin expected). Where it reads a cell variable of the function (``cells``), a
    ``GeneratorMaker`` instead, taking that variable's cell in its place."""
    if node.generators[0].is_async or any(isinstance(n, ast.Await) for n in ast.walk(node)):
        raise Unsupported("async generator expression", node.lineno)
    expression = copy.deepcopy(node)
    expression.generators[0].iter = ast.Name(_ITERABLE, ast.Load())
    own = _own_code(source, node, expression, enclosing, "<genexpr>")
    refused = frozenset(() if enclosing_by_value else enclosing)
    if any(name in cells and name not in enclosing for name in own.co_freevars):
        changing = [name for name in own.co_freevars if name in refused]
        if not changing:
            passed = frozenset(i for i, name in enumerate(own.co_freevars) if name in cells and name not in enclosing)
            return GeneratorMaker(own, source.func.__globals__, passed), own.co_freevars
    changing = [
        name
        for name in own.co_freevars
        if name in refused or (name not in cells and name not in enclosing and not _fixed(source, node, name))
    ]
    if changing:
        raise Unsupported(_refusal("generator expression", changing, enclosing), node.lineno)
    body = [_loops(copy.deepcopy(node), 0)]
    made = _compiled(source, node, _GENERATOR, [_ITERABLE, *own.co_freevars], body, _GENERATOR)
    made = made.replace(
        co_name="<genexpr>",
        co_qualname=own.co_qualname,
        co_varnames=(".0", *made.co_varnames[1:]),  # (as CPython names the iterator it is given)
    )
    return types.FunctionType(made, source.func.__globals__), own.co_freevars


class GeneratorMaker:
    """A generator expression reading a cell variable of the function, as CPython makes it: called with the
    iterator over its first iterable, then each variable it reads (the cell of a cell variable, the value of
    another), it makes the function of CPython's code object for the expression, its closure those cells and a
    new cell for each value, and gives the generator of that function called on the iterator."""

    __slots__ = ("code", "globals", "cells")

    def __init__(self, code: types.CodeType, globals_: dict[str, Any], cells: frozenset[int]) -> None:
        self.code = code
        self.globals = globals_
        self.cells = cells

    def __call__(self, iterator: Any, *values: Any) -> Any:
        cells = self.cells
        closure = tuple(value if i in cells else types.CellType(value) for i, value in enumerate(values))
        return types.FunctionType(self.code, self.globals, None, None, closure)(iterator)

    def __repr__(self) -> str:
        return f"<make {self.code.co_qualname} (line {self.code.co_firstlineno})>"


@dataclasses.dataclass(frozen=True)
class NestedFunction:
    """What a lambda or a nested def makes its function from: CPython's code object for it, and the variables of
    the function it reads (its free variables, in the order of its code's co_freevars, mangled), each a cell of
    its closure that the making gives the variable's value; ``own``: the index among them of the def's own name
    (a function calling itself), whose cell the def statement fills with what it binds; ``cells``: the indices
    among them of the function's cell variables, whose cells the closure takes."""

    code: types.CodeType
    reads: tuple[str, ...]
    own: int | None
    #: the function's globals: the nested function's
    globals: dict[str, Any]
    cells: frozenset[int] = frozenset()

    def maker(self) -> FunctionMaker:
        """The callable making the function (``FunctionMaker``)."""
        passed = self.cells | ({self.own} if self.own is not None else set())
        return FunctionMaker(self.code, self.globals, frozenset(passed))


class FunctionMaker:
    """CPython's MAKE_FUNCTION for one lambda or def, as a callable the tier-1 code calls with the function's
    defaults (a tuple or None), its keyword-only defaults (a dict or None), its annotations (a dict or None), then
    the value of each variable it reads (a cell in its place for the indices ``cells``: the own name's, a cell
    variable's): the function, whose name, qualified name, docstring and module come from the code object and
    globals, its closure those cells and a new cell for each value. The recorder records such a call as
    ``_MAKE_FUNCTION``, native code making the function through the C-API."""

    __slots__ = ("code", "globals", "cells")

    def __init__(self, code: types.CodeType, globals_: dict[str, Any], cells: frozenset[int]) -> None:
        self.code = code
        self.globals = globals_
        self.cells = cells

    def __call__(
        self,
        defaults: tuple[Any, ...] | None,
        kwdefaults: dict[str, Any] | None,
        annotations: dict[str, Any] | None,
        *values: Any,
    ) -> types.FunctionType:
        cells = self.cells
        closure = tuple(value if i in cells else types.CellType(value) for i, value in enumerate(values))
        function = types.FunctionType(self.code, self.globals, None, defaults, closure or None)
        if kwdefaults is not None:
            function.__kwdefaults__ = kwdefaults
        if annotations is not None:
            function.__annotations__ = annotations
        return function

    def __repr__(self) -> str:
        return f"<make {self.code.co_qualname} (line {self.code.co_firstlineno})>"


def nested_function(
    source: FunctionSource,
    node: ast.Lambda | ast.FunctionDef,
    enclosing: Iterable[str] = (),
    binding: ast.Assign | None = None,
    cells: frozenset[str] = frozenset(),
) -> NestedFunction:
    """The code object of a lambda or nested def and the function's variables it reads, each bound for good
    when node is evaluated, or its own name: the def's, or (binding) the name a statement `name = lambda ...`
    binds, when that statement is a top-level statement of the function and the name's only binding (its cell is
    filled by the statement, as CPython's is), or a cell variable of the function (``cells``: its closure takes
    that cell). Raises Unsupported where it reads another variable of the function, or one of the comprehensions
    around it (``enclosing``)."""
    if isinstance(node, ast.Lambda):
        what, wanted, written = "lambda", "<lambda>", copy.deepcopy(node)
    else:
        what, wanted, written = f"nested function {node.name}", node.name, copy.deepcopy(node)
    own_code = _own_code(source, node, written, enclosing, wanted)
    outer = [name for name in own_code.co_freevars if name in source.func.__code__.co_freevars]
    if outer:  # (the function's own closure: a cell tier-1 code reads, never holds)
        raise Unsupported(f"{what} reading a variable of an enclosing scope ({', '.join(outer)})", node.lineno)
    statement: ast.stmt | None = node if isinstance(node, ast.FunctionDef) else binding
    own_name = None
    if isinstance(statement, ast.FunctionDef):
        own_name = source.mangle(statement.name)
    elif isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
        own_name = source.mangle(statement.targets[0].id)
    own = None
    changing = []
    passed = set()
    for index, name in enumerate(own_code.co_freevars):
        if name in cells and name not in enclosing:
            passed.add(index)
            continue
        if name == own_name and name not in enclosing:
            if _bindings(source, name) == [statement] and statement in source.node.body:
                own = index  # (calls itself: the statement binds the name once, before any call can read it)
                continue
        if name in enclosing or not _fixed(source, node, name):
            changing.append(name)
    if changing:
        raise Unsupported(_refusal(what, changing, enclosing), node.lineno)
    return NestedFunction(own_code, own_code.co_freevars, own, source.func.__globals__, frozenset(passed))


def _refusal(what: str, changing: list[str], enclosing: Iterable[str]) -> str:
    """What jit.explain says of a nested scope reading variables it cannot be given: a comprehension's around it
    (CPython's cell is in the comprehension's frame), else (none where ``cell_variables`` ran on the same scopes)
    the function's that may change."""
    if all(name in enclosing for name in changing):
        return f"{what} reading a variable of a comprehension around it ({', '.join(changing)})"
    return f"{what} reading a variable of the function that may change ({', '.join(changing)})"


def cell_variables(source: FunctionSource) -> frozenset[str]:
    """The variables of the function (mangled) that live in cells in its tier-1 code: those a lambda, nested def
    or generator expression of the function reads (a free variable of its code object: ``nonlocal`` ones too) and
    that are not bound for good before it is evaluated (``_fixed``, nor the own name of a def calling itself),
    as ``nested_function`` and ``generator_function`` would otherwise refuse. A variable of a comprehension around
    the scope, or of an enclosing function, is none (those stay refused)."""
    found: set[str] = set()
    for node, enclosing in _nested_scopes(source):
        if isinstance(node, ast.GeneratorExp):
            written: ast.AST = copy.deepcopy(node)
            written.generators[0].iter = ast.Name(_ITERABLE, ast.Load())  # type: ignore[attr-defined]
            wanted = "<genexpr>"
        elif isinstance(node, ast.Lambda):
            written, wanted = copy.deepcopy(node), "<lambda>"
        else:
            written, wanted = copy.deepcopy(node), node.name
        try:
            free = _own_code(source, node, written, enclosing, wanted).co_freevars
        except (SyntaxError, AssertionError, ValueError):
            continue  # (the front end refuses it where it is compiled)
        for name in free:
            if name in enclosing or name in source.func.__code__.co_freevars or name in found:
                continue
            if isinstance(node, ast.FunctionDef) and source.mangle(node.name) == name:
                if _bindings(source, name) == [node] and node in source.node.body:
                    continue  # (a def calling itself: its own cell, filled by the def statement)
            if not _fixed(source, node, name):
                found.add(name)
    for statement in source.node.body:  # (`name = lambda ...: name(...)`, the name's only binding: its own cell)
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and isinstance(statement.value, ast.Lambda)
        ):
            name = source.mangle(statement.targets[0].id)
            if name in found and _bindings(source, name) == [statement] and _reads_only_itself(source, name, statement):
                found.discard(name)
    return frozenset(found)


def _reads_only_itself(source: FunctionSource, name: str, statement: ast.Assign) -> bool:
    """Does only the lambda statement binds read name among the function's nested scopes?"""
    for node, _ in _nested_scopes(source):
        if node is statement.value:
            continue
        if any(isinstance(n, ast.Name) and source.mangle(n.id) == name for n in ast.walk(node)):
            return False
    return True


def _nested_scopes(source: FunctionSource) -> list[tuple[ast.AST, list[str]]]:
    """The lambdas, nested defs and generator expressions of the function's own code (not those inside them),
    each with the variables (mangled) of the comprehensions around it."""
    found: list[tuple[ast.AST, list[str]]] = []

    def visit(node: ast.AST, enclosing: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Lambda, ast.FunctionDef, ast.GeneratorExp)):
                found.append((child, enclosing))
                # (its defaults, decorators and first iterable are the function's own code)
                if isinstance(child, ast.GeneratorExp):
                    visit(child.generators[0].iter, enclosing)
                else:
                    outside: list[ast.AST] = [*child.args.defaults, *(d for d in child.args.kw_defaults if d)]
                    if isinstance(child, ast.FunctionDef):
                        outside += child.decorator_list
                    for part in outside:
                        visit(part, enclosing)
                continue
            if isinstance(child, (ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(child, _COMPREHENSIONS):
                names = [
                    source.mangle(n.id)
                    for generator in child.generators  # type: ignore[attr-defined]
                    for n in ast.walk(generator.target)
                    if isinstance(n, ast.Name)
                ]
                visit(child.generators[0].iter, enclosing)  # type: ignore[attr-defined]
                inner = [*enclosing, *names]
                for part in ast.iter_child_nodes(child):
                    if part is not child.generators[0]:  # type: ignore[attr-defined]
                        visit(part, inner)
                first = child.generators[0]  # type: ignore[attr-defined]
                visit(first.target, inner)
                for condition in first.ifs:
                    visit(condition, inner)
                continue
            visit(child, enclosing)

    visit(source.node, [])
    return found


def string_annotations(source: FunctionSource, node: ast.FunctionDef) -> dict[str, str] | None:
    """Under ``from __future__ import annotations``, a nested def's annotations, as the strings CPython's compiler
    makes of them: those of a copy of the def without defaults or decorators, made in an empty namespace (nothing
    is evaluated), under the names mangled as in the function. None without that import (they are evaluated)."""
    if not source.func.__code__.co_flags & __future__.annotations.compiler_flag:
        return None
    bare = copy.deepcopy(node)
    bare.decorator_list = []
    bare.args.defaults = []
    bare.args.kw_defaults = [None for _ in bare.args.kwonlyargs]
    bare.body = [ast.Pass()]
    module = ast.fix_missing_locations(ast.Module([bare], []))
    namespace: dict[str, Any] = {}
    exec(compile(module, source.filename, "exec", __future__.annotations.compiler_flag, dont_inherit=True), namespace)
    return {source.mangle(name): text for name, text in namespace[node.name].__annotations__.items()}


def _own_code(
    source: FunctionSource, node: ast.AST, written: ast.AST, enclosing: Iterable[str], wanted: str
) -> types.CodeType:
    """The code object, named wanted, of the nested scope node (written: its expression or statement as compiled,
    node's copy), compiled inside a stand-in of the function in which every local of the function and of the
    comprehensions around node (``enclosing``) is assigned, within comprehensions of the kinds around node
    (CPython names their scopes in the qualified name, where they have one): its free variables are the
    function's variables it reads, its qualified name CPython's."""
    func = source.func
    code = func.__code__
    names = {*source.local_names, *code.co_varnames, *code.co_cellvars, *code.co_freevars, *enclosing}
    names.discard(_ITERABLE)
    if isinstance(written, ast.expr):
        expression = written
        for comprehension in reversed(_comprehensions_around(source, node)):
            loop = ast.comprehension(ast.Name(_ITERABLE, ast.Store()), ast.Tuple([], ast.Load()), [], 0)
            if isinstance(comprehension, ast.DictComp):
                expression = ast.DictComp(expression, ast.Constant(None), [loop])
            else:
                expression = type(comprehension)(expression, [loop])
        statement: ast.stmt = ast.Return(expression)
    else:
        assert isinstance(written, ast.stmt)
        statement = written
    body: list[ast.stmt] = []
    if names:  # (each assigned: a local of the stand-in, as of the function)
        targets: list[ast.expr] = [ast.Name(local, ast.Store()) for local in sorted(names)]
        body.append(ast.Assign(targets, ast.Constant(None)))
    body.append(statement)
    own = _compiled(source, node, _STAND_IN, [_ITERABLE], body, wanted)
    stand_in = f"{source.class_name}.{_STAND_IN}" if source.class_name is not None else _STAND_IN
    assert own.co_qualname.startswith(stand_in + "."), own.co_qualname
    return own.replace(co_qualname=func.__qualname__ + own.co_qualname[len(stand_in) :])


#: the name of the stand-in of the function a nested scope is compiled in (no nested scope's name: the code object
#: wanted is found by its name inside it)
_STAND_IN = "_tracejit_scope"


def _comprehensions_around(source: FunctionSource, node: ast.expr) -> list[ast.expr]:
    """The comprehensions of the function whose element (or key, value, condition, later iterable) holds node,
    outermost first (a first iterable is evaluated outside its comprehension)."""
    path: list[ast.AST] = []

    def find(at: ast.AST) -> bool:
        if at is node:
            return True
        for child in ast.iter_child_nodes(at):
            path.append(at)
            if find(child):
                return True
            path.pop()
        return False

    find(source.node)
    around = []
    for index, step in enumerate(path):
        first = step.generators[0].iter if isinstance(step, _COMPREHENSIONS) else None
        if first is not None and not any(later is first for later in path[index + 1 :]) and node is not first:
            around.append(step)
    return around


_GENERATOR = "_tracejit_genexpr"


def _loops(node: ast.GeneratorExp, index: int) -> ast.stmt:
    """The generator expression as the statements CPython compiles it to: a for loop per clause (the first over
    the iterator given), its conditions nested ifs, and `yield` of the element innermost."""
    if index == len(node.generators):
        return ast.copy_location(ast.Expr(ast.copy_location(ast.Yield(node.elt), node.elt)), node.elt)
    clause = node.generators[index]
    inner = _loops(node, index + 1)
    for condition in reversed(clause.ifs):
        inner = ast.copy_location(ast.If(condition, [inner], []), condition)
    iterable = ast.Name(_ITERABLE, ast.Load()) if index == 0 else clause.iter
    return ast.copy_location(ast.For(clause.target, iterable, [inner], []), clause.target)


def _compiled(
    source: FunctionSource,
    node: ast.AST,
    name: str,
    parameters: list[str],
    body: list[ast.stmt],
    wanted: str,
) -> types.CodeType:
    """Compile a function of body (in a class of the function's class's name: the same private names) and give
    the code object named wanted inside it."""
    args = [ast.arg(parameter) for parameter in parameters]
    arguments = ast.arguments(posonlyargs=[], args=args, kwonlyargs=[], kw_defaults=[], defaults=[])
    stand_in: ast.stmt = _node(ast.FunctionDef, name=name, args=arguments, body=body, decorator_list=[])
    if source.class_name is not None:
        stand_in = _node(
            ast.ClassDef, name=source.class_name, bases=[], keywords=[], body=[stand_in], decorator_list=[]
        )
    module = ast.Module([stand_in], [])
    for synthetic in ast.walk(module):  # (the expression keeps its own lines: its traceback's)
        if not hasattr(synthetic, "lineno") and "lineno" in getattr(synthetic, "_attributes", ()):
            synthetic.lineno, synthetic.col_offset = node.lineno, node.col_offset
            synthetic.end_lineno, synthetic.end_col_offset = node.lineno, node.col_offset
    flags = source.func.__code__.co_flags & _FUTURE_FLAGS  # (``from __future__ import annotations``: the module's)
    made = _code_named(compile(module, source.filename, "exec", flags, dont_inherit=True), name)
    return made if wanted == name else _code_named(made, wanted)


_FUTURE_FLAGS = functools.reduce(
    operator.or_, (getattr(__future__, feature).compiler_flag for feature in __future__.all_feature_names)
)


def _fixed(source: FunctionSource, node: ast.AST, name: str) -> bool:
    """Is the function's variable name bound once for all before node is evaluated: a parameter never bound
    again, or a local bound only by one top-level assignment or def statement before the top-level statement
    holding node?"""
    body = source.node.body
    sites = _bindings(source, name)
    params = source.node.args
    parameters = [*params.posonlyargs, *params.args, *params.kwonlyargs, params.vararg, params.kwarg]
    if any(p is not None and source.mangle(p.arg) == name for p in parameters):
        return not sites
    if len(sites) != 1 or not isinstance(sites[0], _ONCE) or sites[0] not in body:
        return False
    if isinstance(sites[0], ast.AnnAssign) and sites[0].value is None:
        return False  # (`x: int` binds nothing)
    holding = next(i for i, stmt in enumerate(body) if any(n is node for n in ast.walk(stmt)))
    return body.index(sites[0]) < holding


#: the statements that bind a variable for good, when one of them at the top level of the function is its only binding
_ONCE = (ast.Assign, ast.AnnAssign, ast.FunctionDef)

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _bindings(source: FunctionSource, name: str) -> list[ast.AST]:
    """Where the function binds name in its own scope (each site: the top-level statement of the function for
    a binding there, else the binding node), and every `nonlocal name` of a nested function."""
    sites: list[ast.AST] = []

    def binds(n: ast.AST) -> bool:
        if isinstance(n, ast.Name):
            return not isinstance(n.ctx, ast.Load) and source.mangle(n.id) == name
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler)):
            return n.name is not None and source.mangle(n.name) == name
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            return any(source.mangle(a.asname or a.name.split(".")[0]) == name for a in n.names)
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            return any(source.mangle(held) == name for held in n.names)
        if isinstance(n, (ast.MatchAs, ast.MatchStar)):
            return n.name is not None and source.mangle(n.name) == name
        if isinstance(n, ast.MatchMapping):
            return n.rest is not None and source.mangle(n.rest) == name
        return False

    def visit(n: ast.AST, top: ast.stmt, own: bool, in_comprehension: bool) -> None:
        if own and binds(n) and not (in_comprehension and isinstance(n, ast.Name)):  # (a comprehension's target)
            sites.append(top if isinstance(n, ast.Name) else n)
        elif own and in_comprehension and isinstance(n, ast.NamedExpr) and binds(n.target):  # (the function's)
            sites.append(n)
        elif not own and isinstance(n, ast.Nonlocal) and binds(n):
            sites.append(n)
        comprehension = in_comprehension or isinstance(n, _COMPREHENSIONS)
        inner = [n.body] if isinstance(n, ast.Lambda) else n.body if isinstance(n, _SCOPES) else []
        for child in ast.iter_child_nodes(n):
            visit(child, top, own and not any(child is b for b in inner), comprehension)

    for stmt in source.node.body:
        visit(stmt, stmt, True, False)
    return sites


def _node(cls: type, **fields: object) -> ast.stmt:
    if "type_params" in cls._fields:  # (Python 3.12 on)
        fields["type_params"] = []
    return cls(**fields)


def _code_named(module: types.CodeType, name: str) -> types.CodeType:
    """The first code object named name in module's constants (depth first)."""
    pending = [module]
    while pending:
        code = pending.pop()
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                if const.co_name == name:
                    return const
                pending.append(const)
    raise AssertionError(f"no code object {name} compiled")
