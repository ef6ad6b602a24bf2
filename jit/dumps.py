"""``jit.dump``: the text of what the JIT compiled, for debugging (also printed by ``JIT_DUMP=...``).

Kinds: ``"uops"`` (the optimized trace, CPython tier-2 style, one uop a line with its source line),
``"ir"`` (LLVM IR as generated), ``"opt-ir"`` (after LLVM's passes), ``"asm"`` (machine code), ``"trees"``
(root traces per loop header, side traces hanging from exits, nested calls).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from jit.environment import DUMP_KINDS as KINDS
from jit.frontend.instructions import T1Code
from jit.listing import format_body, format_title
from jit.options import Options
from jit.trace import TraceEnd

if TYPE_CHECKING:  # (runtime.trees imports llvmlite, which jit.dump alone does not need)
    from runtime.trees import CompiledTrace, Tree


class Dumped(Protocol):
    """What the dumps read of a function's JIT state (``jit.monitor.Monitor``, which calls them as it compiles)."""

    code: T1Code
    options: Options
    loops: list[Any]  # per loop header, its state (``runtime.trees.LoopState``) or None (never hot)


def title(monitor: Dumped, compiled: CompiledTrace) -> str:
    parent = compiled.parent or compiled.trace.parent_exit
    return format_title(compiled.symbol, compiled.trace, monitor.code.slot_names, parent)


def dump_trace(monitor: Dumped, compiled: CompiledTrace, kinds: list[str]) -> str:
    out = []
    for kind in kinds:
        if kind == "trees":
            continue
        out.append(f"{title(monitor, compiled)} [{kind}]\n{trace_text(monitor, compiled, kind)}\n")
    if "trees" in kinds:
        out.append(trees_text(monitor) + "\n")
    return "".join(out)


def trace_text(monitor: Dumped, compiled: CompiledTrace, kind: str) -> str:
    if kind == "uops":
        text = format_body(monitor.code.slot_names, compiled.trace, f"uops of {compiled.symbol}:")
        merged = compiled.trace.merged
        if merged is not None:  # (codegen.joined: its function's fast copy, vectorized)
            heading = (
                f"its tree's loop merged with it, both ways in one iteration (the fast copy of {compiled.symbol}):"
            )
            text += "\n" + format_body(monitor.code.slot_names, merged, heading)
        return text
    if kind == "ir":
        return compiled.ir
    if kind == "opt-ir":
        return compiled.module.opt_ir
    if kind == "asm":
        from codegen.engine import engine  # (llvmlite: imported once a loop gets hot, not by jit.dump alone)

        return engine().assembly(compiled.module.ir, compiled.module.opt_level)
    raise ValueError(f"unknown dump kind {kind!r}; choose from {', '.join(KINDS)}")


def trees_text(monitor: Dumped) -> str:
    code = monitor.code
    lines = [f"trees of {code.qualname}:"]
    for state in monitor.loops:
        if state is None:
            continue
        loop = state.loop
        status = " (blacklisted)" if state.blacklisted else ""
        lines.append(f"loop {loop.index} at line {loop.line}: {len(state.trees)} tree(s){status}")
        for tree in state.trees:
            lines.extend(_tree_lines(monitor, tree, "  "))
    return "\n".join(lines)


def _tree_lines(monitor: Dumped, tree: Tree, indent: str) -> list[str]:
    code = monitor.code
    kinds = ", ".join(f"{code.slot_names[s]}:{k.short}" for s, k in tree.entry_kinds.items())
    lines = [f"{indent}tree {tree.symbol} (depth {tree.depth}, {tree.entries} entries) entry {{{kinds}}}"]
    for callee in tree.calls:
        lines.append(f"{indent}  calls tree {callee.symbol} (loop at line {callee.loop.line})")
    for compiled in tree.traces():
        for exit in compiled.exits:
            if exit.side is not None:
                side = exit.side
                end = side.trace.end
                target = f" -> jumps to {side.trace.end_tree.symbol}" if end is TraceEnd.TREE else f" -> {end}"
                if side.joined:  # (codegen.joined)
                    target += f", joined with its tree's loop: {', '.join(side.joined)}"
                lines.append(
                    f"{indent}  exit {exit.id} (line {exit.line}) of {compiled.symbol}: side trace {side.symbol}{target}"
                )
            elif exit.linked_tree is not None:  # (a trace's end at its loop's header: WhenHot.ROOT)
                lines.append(
                    f"{indent}  exit {exit.id} (line {exit.line}) of {compiled.symbol} jumps to {exit.linked_tree.symbol}"
                )
    return lines
