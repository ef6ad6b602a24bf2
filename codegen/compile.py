"""From an optimized trace to linked machine code."""

from __future__ import annotations

from typing import Any

from codegen import abi
from codegen.context import LowerContext
from codegen.engine import engine
from codegen.function import build
from jit.trace import Trace
from runtime.exits import ExitDescriptor
from runtime.trees import CompiledTrace


def compile_trace(
    trace: Trace,
    *,
    symbol: str,
    layout: abi.Layout,
    exits: list[ExitDescriptor],
    globals_: dict[str, Any],
    builtins_: dict[str, Any],
    opt_level: int,
) -> CompiledTrace:
    """Lower trace to an LLVM module, optimize it, compile it and link it against the trees it calls or
    jumps into. `exits` are the descriptors of trace.exits(), numbered already."""
    llvm = engine()
    ctx = LowerContext(trace, layout, symbol, llvm.triple, llvm.data_layout)
    ctx.globals = globals_
    ctx.builtins = builtins_
    build(ctx)
    ir_text = str(ctx.module)
    exports = [symbol, f"{symbol}_counts", f"{symbol}_links"]
    dependencies = []
    for uop in trace.uops:
        if uop.name == "_CALL_TREE":
            dependencies.append(uop.operand.tree.library)
        elif uop.name == "_JUMP_TO_TREE":
            dependencies.append(uop.operand.library)
    module = llvm.compile(ir_text, exports, sorted(set(dependencies)), opt_level)
    for index, exit in enumerate(exits):  # both follow trace.exits()
        exit.index = index
    compiled = CompiledTrace(
        trace=trace,
        symbol=symbol,
        module=module,
        ir=ir_text,
        exits=exits,
        links_address=module.addresses[f"{symbol}_links"],
        keepalive=ctx.keepalive,
    )
    for exit in exits:
        exit.trace = compiled
    return compiled
