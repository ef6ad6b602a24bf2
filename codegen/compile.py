"""From an optimized trace to linked machine code. The backend returns what it built (``NativeCode``); the
layer above installs it (``runtime.trees.CompiledTrace.install``, called by the monitor)."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
from collections.abc import Iterator
from typing import Any

from codegen import abi
from codegen.context import LowerContext
from codegen.engine import NO_PEEL, VECTOR_MODULE, CompiledModule, ObjectCache, engine
from codegen.entry import build_entry, can_build, numpy_objects_known, support
from codegen.function import build, call_entry_symbol, module_texts, proven_entry_symbol
from codegen.joined import JoinPlan, build_joined, joined_parts, loop_entry, loop_symbol
from jit.resume import assigned_late
from jit.trace import Trace, TraceEnd, TraceKind


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
    vectorized: bool = False  # its loop's fast copy went through the vectorizing pipeline (codegen.engine)
    joined: tuple[str, ...] = ()  # a side trace's: the side traces joined with its tree's loop (codegen.joined)
    #: what it was compiled from: compiled again at another optimization level (``jit.tiering``) without lowering
    #: the trace again
    lowered: LoweredTrace | None = None
    #: the JIT libraries it was linked against (its calls and jumps by symbol go there)
    libraries: tuple[str, ...] = ()


@dataclasses.dataclass(eq=False)
class LoweredTrace:
    """A trace lowered to LLVM IR, not compiled yet (the part of compiling that runs Python code)."""

    symbol: str
    ir: str
    exports: list[str]
    dependencies: list[str]  # the JIT libraries of the trees it calls or jumps into
    keepalive: list[Any]
    imports: dict[str, int]  # the addresses of its symbols (codegen.symbols), for the linker
    entry: str = ""  # a root trace's entry stub (codegen.entry), if it has one
    vectorized: bool = False  # (ir holds a second module: codegen.engine.VECTOR_MODULE)
    joined: tuple[str, ...] = ()  # (codegen.joined)
    #: the time its making took, in ms: the trace optimizer's ("optimize") and the lowering's ("lower")
    phases: dict[str, float] = dataclasses.field(default_factory=dict)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while a trace is lowered. Lowering makes tens of thousands of
    llvmlite objects, all in reference cycles (each instruction points to its block, each block to its
    function) and all garbage once the module's text is printed. With the collector on, they outlive the young
    generations' collections while the module is built, count towards the old generation, and set off full
    collections of every object of the process: measured on the benchmark kernels, arrays and ordinary
    functions' first calls, a third of the lowering's time (four full collections of 30-40 ms in 77 traces), and
    6% of the first calls' process time. Paused, they are still young when the text is done, and the first young
    collection after it frees them. (Put back only if it was on: the program may have turned it off itself. Two
    threads lowering at once leave it on, as the first found it; a program turning it off from another thread
    while a trace is lowered finds it on again: not guarded.)"""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@_collector_paused()
def lower_trace(
    trace: Trace,
    *,
    symbol: str,
    layout: abi.Layout,
    globals_: dict[str, Any],
    builtins_: dict[str, Any],
    active_address: int,
    cache: ObjectCache | None = None,
    join: JoinPlan | None = None,
) -> LoweredTrace:
    """Lower trace to the text of an LLVM module. Its exit points are numbered already (``ExitPoint.id``: what
    the code returns). A root's entry stub counts its calls in progress at active_address (``codegen.entry``).
    cache: where the entry stubs' support library is looked for if this process has not compiled it yet. join:
    (a side trace) its tree's loop and side traces, which it is joined with where it can be (``codegen.joined``)."""
    llvm = engine()
    numpy_objects_known()  # (a trace that met NumPy's scalars may leave with one: the entry stubs box it)
    ctx = LowerContext(trace, layout, symbol, llvm.triple, llvm.data_layout)
    ctx.globals = globals_
    ctx.builtins = builtins_
    joined: list[str] = []
    if join is not None and any(part.trace is trace for part, _, _ in joined_parts(join)):
        joined = build_joined(ctx, join)
    else:
        build(ctx)
    exports = [symbol, f"{symbol}_counts", f"{symbol}_links"]
    if f"{symbol}_fast_runs" in ctx.module.globals:  # (a versioned loop's: codegen.function)
        exports.append(f"{symbol}_fast_runs")
    if call_entry_symbol(symbol) in ctx.module.globals:  # (a root whose callers enter it there: codegen.function)
        exports.append(call_entry_symbol(symbol))
    if proven_entry_symbol(symbol) in ctx.module.globals:  # (and the one callers enter where they know its guards hold)
        exports.append(proven_entry_symbol(symbol))
    if joined and join is not None and loop_entry(join.root, joined):  # (a tree's entry: codegen.joined)
        exports.append(loop_symbol(symbol))
    dependencies = []
    entry = ""
    if trace.kind is TraceKind.ROOT and can_build(trace.entry_kinds):
        ctx.function.attributes.add("noinline")  # (the stub calls it; others call it by name)
        support(cache)  # (compiled once: the stub imports its functions)
        entry = build_entry(ctx, active_address)
        exports.append(entry)
    lowered_traces = [trace]
    if joined:  # (the root's loop and the other side traces joined: what they call, their exits' globals)
        assert join is not None
        lowered_traces += [join.root, *(side.trace for side in join.sides if side.symbol in joined)]
        dependencies.extend(join.libraries)
    for uop in (uop for lowered_trace in lowered_traces for uop in lowered_trace.uops):
        if uop.name == "_CALL_TREE":  # (the library of the function it calls: runtime.trees.Tree.call_symbol)
            dependencies.append(uop.operand.tree.call_library)
        elif uop.name == "_JUMP_TO_TREE":
            dependencies.append(uop.operand.library)
    main_text, fast_text = module_texts(ctx)
    looping = trace if not joined else join.root  # type: ignore[union-attr]
    if looping.end is not TraceEnd.LOOP or not assigned_late(looping):
        main_text = NO_PEEL + main_text  # (no flags of slots assigned late: no first iteration to peel)
    return LoweredTrace(
        symbol=symbol,
        ir=main_text + VECTOR_MODULE + fast_text if fast_text else main_text,
        exports=exports,
        dependencies=sorted(set(dependencies)),
        keepalive=ctx.keepalive,
        imports=ctx.symbols.addresses,
        entry=entry,
        vectorized=bool(fast_text),
        joined=tuple(joined),
    )


def compile_lowered(
    lowered: LoweredTrace,
    opt_level: int,
    cache: ObjectCache | None = None,
    dependencies: list[str] | None = None,
) -> NativeCode:
    """Optimize, compile and link a lowered trace against the trees it calls or jumps into (LLVM: releases the
    GIL); with a cache (``codegen.cache``), its object code is taken from there if it holds it (the key has the
    optimization level). dependencies: the JIT libraries to link against instead of ``lowered.dependencies``
    (compiled again at another level: those libraries' newer code, which exports the same symbols)."""
    libraries = lowered.dependencies if dependencies is None else dependencies
    module = engine().compile(lowered.ir, lowered.exports, libraries, opt_level, lowered.imports, cache)
    return NativeCode(
        symbol=lowered.symbol,
        module=module,
        ir=lowered.ir,
        links_address=module.addresses[f"{lowered.symbol}_links"],
        keepalive=lowered.keepalive,
        entry_address=module.addresses[lowered.entry] if lowered.entry else 0,
        vectorized=lowered.vectorized,
        joined=lowered.joined,
        lowered=lowered,
        libraries=tuple(libraries),
    )
