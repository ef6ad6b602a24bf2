"""Which values a trace uses, and replacing one value by another everywhere."""

from __future__ import annotations

from jit.resume import needed_values, substitute
from jit.trace import Snapshot, Trace, Value
from jit.uops import TreeCall


def snapshots(trace: Trace) -> list[Snapshot]:
    out = [u.exit.snapshot for u in trace.uops if u.exit is not None]
    out += [u.operand.snapshot for u in trace.uops if isinstance(u.operand, TreeCall)]
    if trace.end_snapshot is not None:
        out.append(trace.end_snapshot)
    return out


def live_at_exits(trace: Trace) -> set[int]:
    """Ids of the values needed to rebuild the interpreter's state at an exit, an inner tree's call or the
    trace's end (the operand stack, and the slots the trace assigns)."""
    return {v.id for v in needed_values(trace, snapshots(trace))}


def replace(trace: Trace, mapping: dict[int, Value]) -> None:
    """Replace values (by id) in uop arguments and snapshots."""
    if not mapping:
        return

    def sub(v: Value) -> Value:
        while v.id in mapping:
            v = mapping[v.id]
        return v

    for uop in trace.uops:
        if uop.args:
            uop.args = tuple(sub(v) for v in uop.args)
    substitute(snapshots(trace), sub)
