"""Which values a trace uses, and replacing one value by another everywhere."""

from __future__ import annotations

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
    for snap in snapshots(trace):
        used.update(v.id for v in snap.stack)
        used.update(v.id for slot, v in snap.slots.items() if slot in trace.written)
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
    seen: set[int] = set()
    for snap in snapshots(trace):
        if id(snap) in seen:
            continue
        seen.add(id(snap))
        snap.stack[:] = [sub(v) for v in snap.stack]
        for slot, v in snap.slots.items():
            snap.slots[slot] = sub(v)
