"""Type propagation: drop the type guards the recorder emits (as CPython's specializer does) wherever the
kinds of their inputs are already proven, and guards on constant conditions."""

from __future__ import annotations

from jit.kinds import Kind
from jit.trace import Trace

_TYPE_GUARDS = {"_GUARD_BOTH_INT": Kind.INT, "_GUARD_BOTH_FLOAT": Kind.FLOAT}


def run(trace: Trace) -> None:
    kept = []
    for uop in trace.uops:
        expected = _TYPE_GUARDS.get(uop.name)
        if expected is not None:
            if all(v.kind == expected for v in uop.args):
                continue
            raise AssertionError(f"{uop.name} on {[v.kind for v in uop.args]}: the recorder lost track of kinds")
        if uop.name in ("_GUARD_IS_TRUE_POP", "_GUARD_IS_FALSE_POP") and uop.args[0].is_const:
            if bool(uop.args[0].const) == (uop.name == "_GUARD_IS_TRUE_POP"):
                continue
        kept.append(uop)
    trace.uops = kept
