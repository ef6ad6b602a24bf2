"""From an optimized trace to linked machine code. The backend returns what it built (``NativeCode``); the
layer above installs it (``runtime.trees.CompiledTrace.install``, called by the monitor)."""

from __future__ import annotations

import dataclasses
from typing import Any

from codegen import abi
from codegen.context import LowerContext
from codegen.engine import CompiledModule, engine
from codegen.entry import build_entry, can_build
from codegen.function import build
from jit.trace import Trace, TraceKind


@dataclasses.dataclass(eq=False)
class NativeCode:
    """One trace's compiled, linked function ``i64 symbol(i8* buffer)``, with its per-exit counters
    (``symbol_counts``) and link pointers (``symbol_links``); a root trace's entry stub (``codegen.entry``)
    at ``entry_address`` (0: none, its entry type map has kinds a stub cannot check)."""

    symbol: str
    module: CompiledModule
    ir: str  # as generated
    links_address: int  # the array of per-exit link pointers
    keepalive: list[Any]  # objects the code points to
    entry_address: int = 0


def compile_trace(
    trace: Trace,
    *,
    symbol: str,
    layout: abi.Layout,
    globals_: dict[str, Any],
    builtins_: dict[str, Any],
    opt_level: int,
) -> NativeCode:
    """Lower trace to an LLVM module, optimize it, compile it and link it against the trees it calls or
    jumps into. Its exit points are numbered already (``ExitPoint.id``: what the code returns)."""
    llvm = engine()
    ctx = LowerContext(trace, layout, symbol, llvm.triple, llvm.data_layout)
    ctx.globals = globals_
    ctx.builtins = builtins_
    build(ctx)
    exports = [symbol, f"{symbol}_counts", f"{symbol}_links"]
    if trace.kind is TraceKind.ROOT and can_build(trace.entry_kinds):
        ctx.function.attributes.add("noinline")  # (the stub calls it; others call it by name)
        exports.append(build_entry(ctx))
    ir_text = str(ctx.module)
    dependencies = []
    for uop in trace.uops:
        if uop.name == "_CALL_TREE":
            dependencies.append(uop.operand.tree.library)
        elif uop.name == "_JUMP_TO_TREE":
            dependencies.append(uop.operand.library)
    module = llvm.compile(ir_text, exports, sorted(set(dependencies)), opt_level)
    return NativeCode(
        symbol=symbol,
        module=module,
        ir=ir_text,
        links_address=module.addresses[f"{symbol}_links"],
        keepalive=ctx.keepalive,
        entry_address=module.addresses[exports[3]] if len(exports) > 3 else 0,
    )
