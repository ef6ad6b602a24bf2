"""``jit.explain``: what runs where, and why not."""

from __future__ import annotations

from jit.frontend.instrument import NEVER
from jit.function import Baseline, JitFunction, Mode
from runtime.loop_driver import EXCEPTION_ENTRIES
from runtime.parking import collections_left


def explain_report(state: JitFunction) -> str:
    state.ensure_prepared()
    func = state.py_func
    code = func.__code__
    lines = [f"tracejit: {func.__qualname__} ({code.co_filename}:{code.co_firstlineno})"]
    if state.mode is Mode.DISABLED:
        lines.append("  runs as plain CPython: JIT_DISABLE is set in the environment")
        return "\n".join(lines)
    if state.mode is Mode.PLAIN:
        assert state.reason is not None
        where = f" at line {state.reason.line}" if state.reason.line is not None else ""
        lines.append(f"  runs as plain CPython: {state.reason.what}{where}: {state.reason.reason}")
        lines.extend(_strict_lines(state))
        return "\n".join(lines)
    t1 = state.code
    assert t1 is not None
    cpython = state.baseline is Baseline.CPYTHON
    if state.gave_up is not None and (not cpython or state.jit_unavailable is not None):
        lines.append(f"  runs as plain CPython from now on: {state.gave_up}")
        where = "tier-1 code"
    elif cpython and state.loop_runtime is None:
        lines.append(
            "  runs as plain CPython: no for or while statement, comprehension nor generator expression consumed by"
            " a builtin to hand to the JIT"
        )
        where = "tier-1 code"
    elif cpython:
        where = "CPython runs it and hands hot loops to the JIT; tier-1 code"
    else:
        where = "runs in the tracejit interpreter"
    lines.append(
        f"  {where}: {len(t1.ops)} tier-1 instructions, "
        f"{t1.nslots} slots ({t1.nlocals} locals), {len(t1.loops)} loop(s)"
    )
    for line, reason, how in t1.cpython_only:
        lines.append(f"  line {line}: left to CPython ({how}): {reason}")
    if state.jit_unavailable is not None:
        lines.append(f"  native code is not available: {state.jit_unavailable}")
        lines.extend(_strict_lines(state))
    elif not state.options.threshold:
        lines.append(
            f"  compiling is off (threshold=0): {'everything is interpreted' if not cpython else 'plain CPython'}"
        )
    for loop in t1.loops:
        status = _loop_status(state, loop.index)
        if state.loop_runtime is not None:
            status = f"{status}; {_cpython_status(state, loop.index)}"
        lines.append(f"  loop {loop.index} ({loop.kind}) at line {loop.line}: {status}")
    monitor = state.monitor
    if monitor is not None and monitor.cache is not None:
        counts = monitor.cache.counts()
        where = monitor.cache.used_directory or "not used yet"
        lines.append(
            f"  code cache ({where}): {counts['hits']} module(s) found, {counts['misses']} not found, "
            f"{counts['rejects']} rejected, {counts['stores']} stored; LLVM compiled {monitor.llvm_compiles} trace(s)"
        )
    if monitor is not None and monitor.abort_reasons:
        lines.append("  recordings that gave up:")
        for reason, count in monitor.abort_reasons.most_common(10):
            lines.append(f"    {count}x {reason}")
    return "\n".join(lines)


def _loop_status(state: JitFunction, index: int) -> str:
    count = state.backedge_counts[index]
    monitor = state.monitor
    loop_state = monitor.loops[index] if monitor is not None else None
    interpreted = "interpreted" if state.baseline is Baseline.INTERPRETER else "in CPython"
    if loop_state is None:
        if state.baseline is Baseline.CPYTHON:
            return "in CPython, not hot yet"
        return f"interpreted, not hot yet ({count} back-edges)"
    if loop_state.trees:
        sides = sum(len(t.side_traces) for t in loop_state.trees)
        entries = sum(t.entries for t in loop_state.trees)
        inlined = sorted(
            {
                uop.operand.function.__qualname__
                for tree in loop_state.trees
                for compiled in tree.traces()
                for uop in [*compiled.trace.hoisted, *compiled.trace.uops]
                if uop.name == "_GUARD_CALLEE" or (uop.name == "_GUARD_CALLEE_VALUE" and uop.operand.code is not None)
            }
        )
        calls = f", with the calls of {', '.join(inlined)} inlined" if inlined else ""
        generic = {
            name: why
            for tree in loop_state.trees
            for compiled in tree.traces()
            for name, why in compiled.trace.generic_calls.items()
        }
        if generic:
            listed = "; ".join(f"{name} ({why})" for name, why in sorted(generic.items()))
            calls += f"; calls made through the C-API, not inlined: {listed}"
        return (
            f"native: {len(loop_state.trees)} tree(s), {sides} side trace(s), "
            f"entered {entries} time(s) from the interpreter{calls}"
        )
    if loop_state.blacklisted:
        return f"{interpreted}: blacklisted after {loop_state.aborts} failed recording(s) (see below)"
    return f"{interpreted}: hot, not compiled yet ({loop_state.aborts} failed recording(s))"


def _cpython_status(state: JitFunction, index: int) -> str:
    """What CPython does at the start of a loop of the instrumented code (its LOOPS counter)."""
    runtime = state.loop_runtime
    loop = state.code.loops[index]  # type: ignore[union-attr]
    if loop.statement is None and index not in runtime.comprehensions:
        if loop.frame_name == "<genexpr>":  # (jit.frontend.consumers: inlined where a builtin consumes it)
            return "a generator expression's loop, consumed by a builtin: runs where its statement runs"
        return "a comprehension's loop: runs where its statement runs"
    count = runtime.counters[index]
    # (a comprehension handed over whole is counted as a loop statement is, by iterations: jit.frontend.instrument)
    starts = "loop starts" if index in runtime.single_copy and index not in runtime.comprehensions else "iterations"
    per_entry = runtime.not_paying[index]
    paying = ""
    # (an iteration of a bigger body than the smallest counts for more: runtime.loop_driver.body_weight)
    needed = runtime.min_per_entry[index]
    threshold = f"min_native_iterations={runtime.min_iterations}"
    if needed < runtime.min_iterations:
        threshold += f", {needed:.0f} for this loop's body"
    if per_entry is not None and runtime.unrecorded[index]:
        paying = (
            f": its starts ran {per_entry:.1f} iterations each in CPython, fewer than would pay for entering "
            f"native code ({threshold}), so it was not recorded"
        )
    elif per_entry is not None:
        paying = (
            f": its native code ran {per_entry:.1f} iterations per entry, fewer than would pay for entering it "
            f"({threshold})"
        )
        raised = runtime.raised_handoffs[index]
        if raised:
            # (runtime.loop_driver.LoopRuntime.count_raised)
            paying += (
                f"; {raised} hand-off(s) ended in an exception, each counted as {EXCEPTION_ENTRIES} entries more "
                "(an exception leaving native code costs microseconds more than in CPython)"
            )
    if index in runtime.parked:
        left = collections_left(runtime, index)
        when = f"for {left} more garbage collection(s)" if left is not None else "until it wakes"
        return f"parked: new calls run it as plain CPython, with no counter, {when}{paying}"
    if count > 0 and runtime.warming[index]:
        return f"CPython counts its warm-up (option warmup={state.options.warmup}): hot in {count} {starts}"
    if count > 0:
        return f"CPython counts: hot in {count} {starts}"
    if count == 0:
        return "handed to the JIT at its start"
    if count <= NEVER:
        return "runs plain in CPython for good"
    return f"runs plain in CPython for {-count} more loop start(s){paying}"


def _strict_lines(state: JitFunction) -> list[str]:
    if state.refusal is None:
        return []
    return [f"  strict=True: every call raises jit.{state.refusal.func.__name__} instead"]
