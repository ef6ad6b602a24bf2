"""Type propagation: drop the type guards the recorder emits (as CPython's specializer does) wherever the
kinds of their inputs are already proven, and branch guards on constant conditions that hold."""

from __future__ import annotations

from jit.trace import Trace


def run(trace: Trace) -> None:
    kept = []
    for uop in trace.uops:
        op = uop.op
        if op.proves is not None:
            if all(v.kind == op.proves for v in uop.args):
                continue
            raise AssertionError(f"{uop.name} on {[v.kind for v in uop.args]}: the recorder lost track of kinds")
        if op.condition is not None and uop.args[0].is_const and bool(uop.args[0].const) == op.condition:
            continue
        kept.append(uop)
    trace.uops = kept
