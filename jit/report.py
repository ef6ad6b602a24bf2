"""``jit.explain``: what runs where, and why not."""

from __future__ import annotations

from jit.function import JitFunction


def explain_report(state: JitFunction) -> str:
    state.ensure_prepared()
    func = state.py_func
    code = func.__code__
    lines = [f"tracejit: {func.__qualname__} ({code.co_filename}:{code.co_firstlineno})"]
    if state.mode == "disabled":
        lines.append("  runs as plain CPython: JIT_DISABLE is set in the environment")
        return "\n".join(lines)
    if state.mode == "plain":
        assert state.reason is not None
        where = f" at line {state.reason.line}" if state.reason.line is not None else ""
        lines.append(f"  runs as plain CPython: {state.reason.what}{where}: {state.reason.reason}")
        lines.extend(_strict_lines(state))
        return "\n".join(lines)
    t1 = state.code
    assert t1 is not None
    if state.gave_up is not None:
        lines.append(f"  runs as plain CPython from now on: {state.gave_up}")
    where = "tier-1 code" if state.gave_up is not None else "runs in the tracejit interpreter"
    lines.append(
        f"  {where}: {len(t1.ops)} tier-1 instructions, "
        f"{t1.nslots} slots ({t1.nlocals} locals), {len(t1.loops)} loop(s)"
    )
    if state.jit_unavailable is not None:
        lines.append(f"  native code is not available: {state.jit_unavailable}")
        lines.extend(_strict_lines(state))
    elif not state.options.threshold:
        lines.append("  compiling is off (threshold=0): everything is interpreted")
    for loop in t1.loops:
        lines.append(f"  loop {loop.index} ({loop.kind}) at line {loop.line}: {_loop_status(state, loop.index)}")
    monitor = state.monitor
    if monitor is not None and monitor.abort_reasons:
        lines.append("  recordings that gave up:")
        for reason, count in monitor.abort_reasons.most_common(10):
            lines.append(f"    {count}x {reason}")
    return "\n".join(lines)


def _loop_status(state: JitFunction, index: int) -> str:
    count = state.backedge_counts[index]
    monitor = state.monitor
    loop_state = monitor.loops[index] if monitor is not None else None
    if loop_state is None:
        return f"interpreted, not hot yet ({count} back-edges)"
    if loop_state.trees:
        sides = sum(len(t.side_traces) for t in loop_state.trees)
        entries = sum(t.entries for t in loop_state.trees)
        return (
            f"native: {len(loop_state.trees)} tree(s), {sides} side trace(s), "
            f"entered {entries} time(s) from the interpreter"
        )
    if loop_state.blacklisted:
        return f"interpreted: blacklisted after {loop_state.aborts} failed recording(s) (see below)"
    return f"interpreted: hot, not compiled yet ({loop_state.aborts} failed recording(s))"


def _strict_lines(state: JitFunction) -> list[str]:
    if state.refusal is None:
        return []
    return [f"  strict=True: every call raises jit.{state.refusal.func.__name__} instead"]
