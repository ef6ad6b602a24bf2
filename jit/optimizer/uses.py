"""Which values a trace uses, and replacing one value by another everywhere."""

from __future__ import annotations

from jit.resume import needed_values, substitute
from jit.trace import Snapshot, Trace, Value


def snapshots(trace: Trace) -> list[Snapshot]:
    out = [u.exit.snapshot for u in trace.uops if u.exit is not None]
    out += [u.operand[1] for u in trace.uops if u.name == "_CALL_TREE"]
    if trace.end_snapshot is not None:
        out.append(trace.end_snapshot)
    return out


def used_values(trace: Trace) -> set[int]:
    """Ids of values read by a uop or needed to rebuild the interpreter's state somewhere."""
    used: set[int] = set()
    for uop in trace.uops:
        used.update(v.id for v in uop.args)
    used.update(v.id for v in needed_values(trace, snapshots(trace)))
    return used


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
