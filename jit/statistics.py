"""``jit.stats``: what the JIT did for one function, as plain data. Counters are cumulative."""

from __future__ import annotations

from typing import Any

from jit.function import JitFunction
from jit.trace import TraceEnd, TraceKind


def stats_of(state: JitFunction) -> dict[str, Any]:
    monitor = state.monitor
    out: dict[str, Any] = {
        "mode": state.mode.value,
        "gave_up": state.gave_up,
        "calls": state.calls,  # calls run by the tier-1 interpreter (interpreter=True)
        # loops CPython handed to the JIT (the CPython baseline), each run from there in the tier-1 interpreter
        # or native code until it gives the loop back
        "handoffs": state.loop_runtime.handoffs if state.loop_runtime is not None else 0,
        "traces_compiled": 0,
        "root_traces": 0,
        "side_traces": 0,
        "native_entries": 0,
        "native_iterations": 0,  # loop iterations run by those entries
        # native entries through a tree's entry stub (codegen.entry: types checked and values unboxed in native
        # code), and entries a stub refused (a value of another kind: the Python path took them)
        "stub_entries": 0,
        "stub_refusals": 0,
        # stub entries made by a loop's hand-off from CPython in one native call (codegen.entry.build_handoff)
        "handoff_entries": 0,
        # loops CPython runs because their native entries did not pay (min_native_iterations), by line
        "not_paying_loops": [],
        # loops CPython still counts the warm-up of (option warmup), never handed to the JIT yet, by line
        "warming_loops": [],
        # hand-offs that ended in an exception after native entries, which that policy counted, each as
        # runtime.loop_driver.EXCEPTION_ENTRIES native entries more
        "raising_handoffs": sum(state.loop_runtime.raised_handoffs) if state.loop_runtime is not None else 0,
        # loops new calls run as the user wrote them, with no counter, until they wake (runtime.parking)
        "parked_loops": sorted(state.code.loops[i].line for i in state.loop_runtime.parked)
        if state.loop_runtime is not None
        else [],
        "exits_to_interpreter": 0,
        "aborts": {},
        "aborts_total": 0,
        "aborts_by_code": {},
        "frontend_ms": round(state.frontend_ms, 3),
        "compile_ms": 0.0,
        "compile_ms_per_trace": [],
        # where compile_ms went, summed over the traces: "optimize" (the trace optimizer), "lower" (LLVM IR built
        # in Python), then LLVM's (codegen.engine.PHASES)
        "compile_phases_ms": {},
        "compiles_pending": 0,  # traces compiling in the background, not installed yet (jit.background)
        # side trace recordings put off because another side trace of the same tree was on its way (compiling in
        # the background, or another thread's): recorded once it is installed, to be joined with it
        "sides_postponed": 0,
        # tiered compilation (option tier_up_threshold, jit.tiering): the optimization level traces were compiled
        # at first (compile_ms is theirs), the tree families compiled again at opt_level and swapped in, families
        # compiled but not swapped (a tree invalidated meanwhile), and the traces compiled again: ms each, summed,
        # and where that time went (LLVM's phases; no lowering: the first compilation's IR is compiled again)
        "first_opt_level": state.options.first_opt_level,
        "tier_ups": 0,
        "tier_ups_dropped": 0,
        "tier_up_ms": 0.0,
        "tier_up_ms_per_trace": [],
        "tier_up_phases_ms": {},
        # traces whose object code LLVM made (the others came from the code cache: option cache)
        "llvm_compiles": 0,
        # the persistent code cache (option cache; codegen.cache): modules whose object code it held (hits), did
        # not hold (misses), held unusable (rejects: damaged, or another key; compiled anew), entries written
        # (stores), entries that could not be (errors), modules never cached because their text holds an address
        # (uncacheable: lowering writes none); and its directory (None: no cache, or not used yet)
        "cache": {"hits": 0, "misses": 0, "rejects": 0, "stores": 0, "errors": 0, "uncacheable": 0, "directory": None},
        "code_bytes": 0,
        "code_bytes_compiled": 0,
        "trees": [],
        "invalidated_trees": 0,
        "limits_hit": {},
        "blacklisted_loops": [],
    }
    runtime = state.loop_runtime
    if runtime is not None:  # (a loop whose starts were too short never made the monitor)
        out["not_paying_loops"] = [
            loop.line for loop, per_entry in zip(state.code.loops, runtime.not_paying) if per_entry is not None
        ]
        out["warming_loops"] = [loop.line for loop, warming in zip(state.code.loops, runtime.warming) if warming]
    if monitor is None:
        return out
    compiled = monitor.compiled
    out["traces_compiled"] = len(compiled)
    out["root_traces"] = sum(1 for kind, _, _ in compiled if kind is TraceKind.ROOT)
    out["side_traces"] = sum(1 for kind, _, _ in compiled if kind is TraceKind.SIDE)
    out["native_entries"] = monitor.native_entries
    out["native_iterations"] = monitor.native_iterations
    out["stub_entries"] = monitor.runner.stub_entries
    out["stub_refusals"] = monitor.runner.stub_refusals
    out["handoff_entries"] = monitor.runner.handoff_entries
    out["exits_to_interpreter"] = monitor.exits_to_interpreter
    out["aborts"] = dict(monitor.abort_reasons)
    out["aborts_total"] = sum(monitor.abort_reasons.values())
    out["aborts_by_code"] = dict(monitor.abort_codes)
    out["compile_ms_per_trace"] = [round(ms, 3) for _, ms, _ in compiled]
    out["compile_ms"] = round(sum(ms for _, ms, _ in compiled), 3)
    out["compile_phases_ms"] = {phase: round(ms, 3) for phase, ms in monitor.compile_phases.items()}
    out["compiles_pending"] = monitor.pending
    out["sides_postponed"] = monitor.sides_postponed
    tiering = monitor.tiering
    if tiering is not None:
        with tiering.lock:
            out["tier_ups"] = tiering.swaps
            out["tier_ups_dropped"] = tiering.dropped
            out["tier_up_ms_per_trace"] = [round(ms, 3) for _, ms, _ in tiering.recompiled]
            out["tier_up_ms"] = round(sum(ms for _, ms, _ in tiering.recompiled), 3)
            out["tier_up_phases_ms"] = {phase: round(ms, 3) for phase, ms in tiering.phases.items()}
    out["llvm_compiles"] = monitor.llvm_compiles
    cache = monitor.cache
    if cache is not None:
        out["cache"] = {**cache.counts(), "directory": cache.used_directory}
    out["code_bytes"] = sum(t.module.code_bytes for t in monitor.traces)  # held now
    out["code_bytes_compiled"] = sum(size for _, _, size in compiled)  # ever
    out["invalidated_trees"] = monitor.invalidated
    out["limits_hit"] = dict(monitor.limits_hit)
    out["blacklisted_loops"] = [s.loop.line for s in monitor.loops if s is not None and s.blacklisted]
    code = monitor.code
    for state_ in monitor.loops:
        if state_ is None:
            continue
        for tree in state_.trees:
            traces_info = []
            for compiled in tree.traces():
                counts = compiled.exit_counts()
                exits = []
                for exit, native_count in zip(compiled.exits, counts):
                    exits.append(
                        {
                            "id": exit.id,
                            "line": exit.line,
                            "taken": native_count,
                            "to_interpreter": exit.taken,
                            "side_trace": exit.side.symbol if exit.side is not None else None,
                            # (a trace's end at its loop's header that jumps into a root tree recorded for it)
                            "jumps_to": exit.linked_tree.symbol if exit.linked_tree is not None else None,
                        }
                    )
                info = {
                    "symbol": compiled.symbol,
                    "kind": compiled.trace.kind.value,
                    "uops": len(compiled.trace.uops),
                    "compile_ms": round(compiled.compile_ms, 3),
                    "opt_level": compiled.opt_level,  # of the code it runs now (jit.tiering)
                    "tier_up_ms": round(compiled.tier_up_ms, 3),
                    "code_bytes": compiled.module.code_bytes,
                    "exits": exits,
                    "fast_runs": compiled.fast_runs(),
                    "vectorized": compiled.vectorized,
                    "joined": list(compiled.joined),
                    "calls": [u.operand.tree.symbol for u in compiled.trace.uops if u.name == "_CALL_TREE"],
                    "links_to": compiled.trace.end_tree.symbol if compiled.trace.end is TraceEnd.TREE else None,
                    "ends_with": compiled.trace.end.value if compiled.trace.end is not None else None,
                }
                traces_info.append(info)
            out["trees"].append(
                {
                    "symbol": tree.symbol,
                    "loop_line": tree.loop.line,
                    "entry_kinds": {code.slot_names[s]: k.short for s, k in tree.entry_kinds.items()},
                    "native_entries": tree.entries,
                    "native_iterations": tree.iterations,
                    "nested_calls": [c.symbol for c in tree.calls],
                    "depth": tree.depth,
                    "opt_level": tree.opt_level,  # the lowest of its traces' (jit.tiering)
                    "side_traces": len(tree.side_traces),
                    "traces": traces_info,
                }
            )
    return out
