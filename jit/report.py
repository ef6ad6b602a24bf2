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
        lines.append(f"  runs as plain CPython: unsupported construct{where}: {state.reason.reason}")
        return "\n".join(lines)
    t1 = state.code
    assert t1 is not None
    lines.append(
        f"  runs in the tracejit interpreter: {len(t1.ops)} tier-1 instructions, "
        f"{t1.nslots} slots ({t1.nlocals} locals), {len(t1.loops)} loop(s)"
    )
    for loop in t1.loops:
        lines.append(f"  loop {loop.index} ({loop.kind}) at line {loop.line}: {state.loop_status(loop.index)}")
    return "\n".join(lines)
