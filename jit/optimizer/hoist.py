"""Guard hoisting: global and module-attribute guards move to the trace's entry.

Inside a trace nothing can rebind a global, since native code calls no Python code; the only way is a signal
handler run by the periodic check, which re-checks the hoisted guards after it runs. So these guards are
checked once per entry instead of once per iteration."""

from __future__ import annotations

from jit.resume import entry_snapshot
from jit.trace import Trace, WhenHot

HOISTABLE = frozenset({"_GUARD_GLOBAL", "_GUARD_MODULE_ATTR"})


def run(trace: Trace) -> None:
    seen: set[tuple] = set()
    kept = []
    for uop in trace.uops:
        if uop.name not in HOISTABLE:
            kept.append(uop)
            continue
        key = (uop.name, *(id(x) if not isinstance(x, str) else x for x in uop.operand))
        if key in seen:
            continue
        seen.add(key)
        # at the trace's entry nothing has run yet: leave to the interpreter where the trace starts
        uop.exit.snapshot = entry_snapshot(trace)
        uop.exit.when_hot = WhenHot.INVALIDATE
        trace.hoisted.append(uop)
    trace.uops = kept
