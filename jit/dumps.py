"""``jit.dump``: the text of what the JIT compiled, for debugging (also printed by ``JIT_DUMP=...``).

Kinds: ``"uops"`` (the optimized trace, CPython tier-2 style, one uop a line with its source line),
``"ir"`` (LLVM IR as generated), ``"opt-ir"`` (after LLVM's passes), ``"asm"`` (machine code), ``"trees"``
(root traces per loop header, side traces hanging from exits, nested calls).
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any

from jit.kinds import Kind
from jit.trace import Trace, TraceEnd, TraceKind, Uop, Value

if TYPE_CHECKING:
    from jit.monitor import Monitor
    from runtime.trees import CompiledTrace, Tree

KINDS = ("uops", "ir", "opt-ir", "asm", "trees")


def format_operand(code: Any, uop: Uop) -> str:
    operand = uop.operand
    name = uop.name
    if name in ("_LOAD_SLOT", "_RELOAD_SLOT"):
        return f"{operand} ({code.slot_names[operand]})"
    if name == "_GUARD_SLOT_KIND":
        slot, kind = operand
        return f"{slot} ({code.slot_names[slot]}) is {kind.short}"
    if name == "_GUARD_GLOBAL":
        return f"{operand[0]} is {_describe(operand[1])}"
    if name == "_GUARD_MODULE_ATTR":
        return f"{operand[0].__name__}.{operand[1]} is {_describe(operand[2])}"
    if name in ("_CALL_TREE",):
        return f"tree {operand[0].symbol} (loop at line {operand[0].loop.line})"
    if name == "_JUMP_TO_TREE":
        return f"tree {operand.symbol} (loop at line {operand.loop.line})"
    if name == "_GUARD_TREE_EXIT":
        return f"exit {operand[1]} of {operand[0].symbol}"
    if name == "_LOAD_CONST_INLINE":
        return _describe(operand)
    if name == "_CALL_BUILTIN_FLOAT":
        return f"{getattr(operand, '__module__', '') or ''}.{operand.__name__}".lstrip(".")
    if isinstance(operand, Kind):
        return operand.short
    return "" if operand is None else str(operand)


def _describe(value: Any) -> str:
    if isinstance(value, types.ModuleType):
        return f"<module {value.__name__}>"
    if isinstance(value, (types.BuiltinFunctionType, types.FunctionType, type)):
        return f"<{type(value).__name__} {getattr(value, '__qualname__', value)}>"
    if isinstance(value, (int, float, bool, str, type(None))):
        return repr(value)
    return f"<{type(value).__name__}>"


def _value(v: Value) -> str:
    return f"v{v.id}" if not v.is_const else f"{v.const!r}"


def format_uop(code: Any, index: int, uop: Uop) -> str:
    parts = [_value(v) for v in uop.args]
    parts.append(f"target={uop.pc}")
    operand = format_operand(code, uop)
    if operand:
        parts.append(f"operand={operand}")
    if uop.exit is not None:
        parts.append(f"exit={uop.exit.id}")
    text = f"{index:4d} {uop.name} ({', '.join(parts)})"
    if uop.out is not None:
        text += f" -> v{uop.out.id}:{uop.out.kind.short}"
    return f"{text:<88} # line {uop.line}"


def format_trace(code: Any, trace: Trace, title: str) -> str:
    lines = [title]
    index = 0
    for slot, value in sorted(trace.entry_slots.items()):
        lines.append(
            f"{index:4d} _LOAD_SLOT (target={trace.start_pc}, operand={slot} ({code.slot_names[slot]}))"
            f" -> v{value.id}:{value.kind.short}"
        )
        index += 1
    for k, value in trace.entry_stack.items():
        lines.append(f"{index:4d} _LOAD_STACK (target={trace.start_pc}, operand={k}) -> v{value.id}:{value.kind.short}")
        index += 1
    for uop in trace.hoisted:
        lines.append(format_uop(code, index, uop) + " (hoisted to the entry)")
        index += 1
    for uop in trace.uops:
        lines.append(format_uop(code, index, uop))
        index += 1
    if trace.end is TraceEnd.LOOP and trace.end_snapshot is not None:
        carried = ", ".join(
            f"{code.slot_names[s]}={_value(trace.end_snapshot.outer.slots[s])}"
            for s in sorted(trace.entry_slots)
            if s in trace.end_snapshot.outer.slots
        )
        lines.append(f"     loop-carried: {carried}")
    lines.append(f"     ({trace.removed_uops} uops removed by the optimizer)")
    return "\n".join(lines)


def title(monitor: Monitor, compiled: CompiledTrace) -> str:
    trace = compiled.trace
    code = monitor.code
    loop = trace.loop
    kinds = ", ".join(f"{code.slot_names[s]}:{k.short}" for s, k in trace.entry_kinds.items())
    if trace.kind is TraceKind.ROOT:
        what = f"root trace of the loop at line {loop.line}"
    else:
        parent = compiled.parent or trace.parent_exit
        what = f"side trace from exit {parent.id} (line {parent.line}) of the loop at line {loop.line}"
    return f"# {compiled.symbol}: {what}; entry kinds {{{kinds}}}"


def dump_trace(monitor: Monitor, compiled: CompiledTrace, kinds: list[str]) -> str:
    out = []
    for kind in kinds:
        if kind == "trees":
            continue
        out.append(f"{title(monitor, compiled)} [{kind}]\n{trace_text(monitor, compiled, kind)}\n")
    if "trees" in kinds:
        out.append(trees_text(monitor) + "\n")
    return "".join(out)


def trace_text(monitor: Monitor, compiled: CompiledTrace, kind: str) -> str:
    if kind == "uops":
        return format_trace(monitor.code, compiled.trace, f"uops of {compiled.symbol}:")
    if kind == "ir":
        return compiled.ir
    if kind == "opt-ir":
        return compiled.module.opt_ir
    if kind == "asm":
        from codegen.engine import engine

        return engine().assembly(compiled.module.opt_ir, monitor.options.opt_level)
    raise ValueError(f"unknown dump kind {kind!r}; choose from {', '.join(KINDS)}")


def trees_text(monitor: Monitor) -> str:
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


def _tree_lines(monitor: Monitor, tree: Tree, indent: str) -> list[str]:
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
                lines.append(
                    f"{indent}  exit {exit.id} (line {exit.line}) of {compiled.symbol}: side trace {side.symbol}{target}"
                )
    return lines
