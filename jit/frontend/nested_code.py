"""Generator expressions: CPython makes and runs the generator; the code around it stays tier-1 code.

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
never rebinds, or a local bound once, by an assignment among the function's top-level statements before the one
holding the expression (it has run, and nothing binds the name again: no other assignment, `del`, loop target,
walrus, import, `nonlocal` in a nested function...); any other is refused, and jit.explain names it. To find the
free variables, the expression is compiled inside a stand-in of the enclosing function in which every local name
of the function (and of the comprehensions around the expression) is assigned: a name the expression reads from
the function is then a free variable of the code object. The stand-in sits in a class of the same name as the
function's own, so that private names are mangled as CPython mangles them there.
"""

from __future__ import annotations

import ast
import copy
import types
from collections.abc import Iterable

from jit.frontend.source import FunctionSource
from jit.frontend.unsupported import Unsupported

_ITERABLE = "_tracejit_iterable"


def generator_function(
    source: FunctionSource, node: ast.GeneratorExp, enclosing: Iterable[str] = ()
) -> tuple[types.FunctionType, tuple[str, ...]]:
    """The generator function of node and the function's variables it reads (mangled), which it takes after the
    iterator, each bound for good when node is evaluated; raises Unsupported where the expression reads another
    variable of the function, or one of the comprehensions around it (``enclosing``: their mangled names)."""
    if node.generators[0].is_async or any(isinstance(n, ast.Await) for n in ast.walk(node)):
        raise Unsupported("async generator expression", node.lineno)
    expression = copy.deepcopy(node)
    expression.generators[0].iter = ast.Name(_ITERABLE, ast.Load())
    own = _own_code(source, node, expression, enclosing)
    changing = [name for name in own.co_freevars if name in enclosing or not _fixed(source, node, name)]
    if changing:
        raise Unsupported(
            f"generator expression reading a variable of the function that may change ({', '.join(changing)})",
            node.lineno,
        )
    body = [_loops(copy.deepcopy(node), 0)]
    made = _compiled(source, node, _GENERATOR, [_ITERABLE, *own.co_freevars], body, _GENERATOR)
    made = made.replace(
        co_name="<genexpr>",
        co_qualname=own.co_qualname,
        co_varnames=(".0", *made.co_varnames[1:]),  # (as CPython names the iterator it is given)
    )
    return types.FunctionType(made, source.func.__globals__), own.co_freevars


def _own_code(
    source: FunctionSource, node: ast.GeneratorExp, expression: ast.GeneratorExp, enclosing: Iterable[str]
) -> types.CodeType:
    """The generator expression's code object (of expression, node's copy reading the iterator), compiled inside a stand-in of the function in which every local of the
    function and of the comprehensions around node (``enclosing``) is assigned, within comprehensions of the
    kinds around node (CPython names their scopes in the qualified name, where they have one): its free
    variables are the function's variables it reads, its qualified name CPython's."""
    func = source.func
    code = func.__code__
    names = {*source.local_names, *code.co_varnames, *code.co_cellvars, *code.co_freevars, *enclosing}
    names.discard(_ITERABLE)
    for comprehension in reversed(_comprehensions_around(source, node)):
        loop = ast.comprehension(ast.Name(_ITERABLE, ast.Store()), ast.Tuple([], ast.Load()), [], 0)
        if isinstance(comprehension, ast.DictComp):
            expression = ast.DictComp(expression, ast.Constant(None), [loop])
        else:
            expression = type(comprehension)(expression, [loop])
    body: list[ast.stmt] = []
    if names:  # (each assigned: a local of the stand-in, as of the function)
        targets: list[ast.expr] = [ast.Name(local, ast.Store()) for local in sorted(names)]
        body.append(ast.Assign(targets, ast.Constant(None)))
    body.append(ast.Return(expression))
    own = _compiled(source, node, func.__name__, [_ITERABLE], body, "<genexpr>")
    stand_in = f"{source.class_name}.{func.__name__}" if source.class_name is not None else func.__name__
    assert own.co_qualname.startswith(stand_in + "."), own.co_qualname
    return own.replace(co_qualname=func.__qualname__ + own.co_qualname[len(stand_in) :])


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
    node: ast.expr,
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
    return _code_named(compile(module, source.filename, "exec", dont_inherit=True), wanted)


def _fixed(source: FunctionSource, node: ast.expr, name: str) -> bool:
    """Is the function's variable name bound once for all before node is evaluated: a parameter never bound
    again, or a local bound only by one top-level assignment before the top-level statement holding node?"""
    body = source.node.body
    sites = _bindings(source, name)
    params = source.node.args
    parameters = [*params.posonlyargs, *params.args, *params.kwonlyargs, params.vararg, params.kwarg]
    if any(p is not None and source.mangle(p.arg) == name for p in parameters):
        return not sites
    if len(sites) != 1 or not isinstance(sites[0], (ast.Assign, ast.AnnAssign)) or sites[0] not in body:
        return False
    holding = next(i for i, stmt in enumerate(body) if any(n is node for n in ast.walk(stmt)))
    return body.index(sites[0]) < holding


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
