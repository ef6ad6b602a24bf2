"""Imports go one way: each module belongs to one layer (the table below, also in the README's Architecture
section) and imports only modules of its own layer or of layers below it, and no modules import each other
in a circle.

Every import counts, wherever it is written: at the top of a module, inside a function (a lazy import), or
under ``if TYPE_CHECKING:``. (Importing ``jit.x`` also runs the package's ``jit/__init__``; those implicit
package edges are not in the graph, since the layers cut across the top-level folders, but ``jit/__init__``
imports only vocabulary at import time, and every module is imported on its own, first, to show that no
circle hides there.)
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("jit", "codegen", "runtime")

#: bottom to top; a module may import modules of its own layer and of the layers before it
LAYERS: dict[str, tuple[str, ...]] = {
    # the shared vocabulary: kinds, uops, traces, tier-1 instructions, operators, the unbound marker, abort
    # reasons, and the options, environment and public errors everything reads
    "vocabulary": (
        "jit.errors",
        "jit.options",
        "jit.environment",
        "jit.aborts",
        "runtime.frame",
        "jit.arrays",
        "jit.numpy_errstate",
        "jit.ufuncs",
        "jit.instances",
        "jit.unpacking",
        "jit.kinds",
        "jit.frontend.operators",
        "jit.frontend.instructions",
        "jit.uops",
        "jit.versions",
        "jit.trace",
    ),
    # Python source to tier-1 instructions and instrumented CPython code
    "front end": (
        "jit.frontend.unsupported",
        "jit.frontend.source_match",
        "jit.frontend.source",
        "jit.frontend.builder",
        "jit.frontend.folding",
        "jit.frontend.nested_code",
        "jit.frontend.expressions",
        "jit.frontend.loops",
        "jit.frontend.consumers",
        "jit.frontend.statements",
        "jit.frontend.instrument",
        "jit.frontend",
    ),
    # recording and optimizing traces, snapshots and resume, the uop listing
    "tracing": (
        "jit.resume",
        "jit.listing",
        "jit.interfaces",
        "jit.specialize",
        "jit.specialize_numpy",
        "jit.specialize_ufunc",
        "jit.specialize_array_new",
        "jit.inline",
        "jit.recorder.recorder",
        "jit.recorder.pure_methods",
        "jit.recorder.generic",
        "jit.recorder.attributes",
        "jit.recorder.array_access",
        "jit.recorder.subscripts",
        "jit.recorder.stack_and_slots",
        "jit.recorder.unpacking",
        "jit.recorder.names",
        "jit.recorder.cells",
        "jit.recorder.operator_methods",
        "jit.recorder.operators",
        "jit.recorder.control",
        "jit.recorder.iteration",
        "jit.recorder.type_checks",
        "jit.recorder.super_calls",
        "jit.recorder.calls",
        "jit.recorder",
        "jit.lifecycle",
        "jit.optimizer.uses",
        "jit.optimizer.constfold",
        "jit.optimizer.dce",
        "jit.optimizer.guards",
        "jit.optimizer.hoist",
        "jit.optimizer.bounds",
        "jit.optimizer.cse",
        "jit.optimizer.moves",
        "jit.optimizer.ranges",
        "jit.optimizer.counters",
        "jit.optimizer.affine",
        "jit.optimizer.merge",
        "jit.optimizer",
    ),
    # traces to machine code (returns what it built; the layers above install it)
    "backend": (
        "codegen.capi",
        "codegen.python_epoch",
        "codegen.abi",
        "codegen.symbols",
        "codegen.engine",
        "codegen.cache",
        "codegen.text",
        "codegen.ownership",
        "codegen.context",
        "codegen.lower.table",
        "codegen.lower.structure",
        "codegen.lower.int_objects",
        "codegen.lower.wide_ints",
        "codegen.lower.objects",
        "codegen.lower.global_names",
        "codegen.lower.ints",
        "codegen.lower.strs_dicts",
        "codegen.lower.floats",
        "codegen.lower.branches",
        "codegen.lower.loops",
        "codegen.lower.lists",
        "codegen.lower.builtins_math",
        "codegen.lower.numpy_values",
        "codegen.lower.numpy_ufuncs",
        "codegen.lower.generic",
        "codegen.lower.cells",
        "codegen.lower.attributes",
        "codegen.lower",
        "codegen.versions",
        "codegen.float_status",
        "codegen.function",
        "codegen.joined",
        "codegen.entry",
        "codegen.compile",
    ),
    # running code: the tier-1 interpreter, hand-offs from CPython, native code, exits, trees
    "runtime": (
        "runtime",
        "runtime.messages",
        "runtime.errors",
        "runtime.consumers",
        "runtime.interpreter",
        "runtime.handoff",
        "runtime.parking",
        "runtime.loop_driver",
        "runtime.exits",
        "runtime.trees",
        "runtime.registry",
        "runtime.native",
        "runtime.runner",
    ),
    # policy and the public API: when to record, enter, grow, blacklist; what the user sees
    "policy": (
        "jit.background",
        "jit.tiering",
        "jit.monitor",
        "jit.dumps",
        "jit.wrapper",
        "jit.function",
        "jit.report",
        "jit.statistics",
        "jit.api",
        "jit",
    ),
}

LAYER_OF = {module: index for index, modules in enumerate(LAYERS.values()) for module in modules}
LAYER_NAMES = list(LAYERS)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def our_modules() -> dict[str, Path]:
    return {module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))}


def imports_of(name: str, path: Path, modules: set[str]) -> set[str]:
    """The modules of ours that module `name` imports anywhere in its text (top level, functions,
    TYPE_CHECKING blocks alike)."""
    found: set[str] = set()
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]

    def ours(dotted: str) -> str | None:
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            # `from jit import uops` imports the module jit.uops; `from jit.kinds import Kind` imports jit.kinds
            targets = [
                f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in modules else origin for alias in node.names
            ]
        for target in targets:
            module = ours(target)
            if module is not None and module != name:
                found.add(module)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = our_modules()
    return {name: imports_of(name, path, set(modules)) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of graph with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_every_module_has_a_layer() -> None:
    modules = set(our_modules())
    assert sorted(modules - set(LAYER_OF)) == [], "add the new module to LAYERS (and to the README's table)"


def test_imports_go_down_the_layers() -> None:
    wrong = []
    for module, imported in sorted(import_graph().items()):
        for other in sorted(imported):
            if module in LAYER_OF and other in LAYER_OF and LAYER_OF[other] > LAYER_OF[module]:
                wrong.append(
                    f"{module} ({LAYER_NAMES[LAYER_OF[module]]}) imports {other} ({LAYER_NAMES[LAYER_OF[other]]})"
                )
    assert wrong == []


def test_no_import_cycles() -> None:
    assert cycles(import_graph()) == []


def test_the_readme_names_each_modules_layer() -> None:
    readme = (ROOT / "README.md").read_text()
    missing = [m for m in LAYER_OF if m in our_modules() and f"`{m}`" not in readme]
    assert missing == []


_IMPORT_EACH_ALONE = """
import importlib, sys
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m.split(".")[0] in ("jit", "codegen", "runtime")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed.append(f"{name}: {type(exc).__name__}: {exc}")
print("\\n".join(failed))
"""


def test_every_module_imports_on_its_own() -> None:
    """Importing any module first works: no circle hides behind a package's __init__ either."""
    names = sorted(our_modules())
    result = subprocess.run(
        [sys.executable, "-c", _IMPORT_EACH_ALONE, *names], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ],
)
def test_cycles_finds_circles(graph: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert cycles(graph) == expected


def test_imports_of_sees_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "from jit import kinds\n"
        "if TYPE_CHECKING:\n    from runtime.trees import Tree\n"
        "def f():\n    import codegen.engine\n    from jit.trace import Trace\n"
    )
    modules = {"jit", "jit.kinds", "jit.trace", "runtime.trees", "codegen.engine"}
    assert imports_of("jit.m", source, modules) == {"jit.kinds", "jit.trace", "runtime.trees", "codegen.engine"}
