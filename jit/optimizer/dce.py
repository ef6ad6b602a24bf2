"""Dead-code elimination: pure uops whose results nothing uses. Constants are operands of the uops that use
them (codegen materializes them in place), so their own uops always go."""

from __future__ import annotations

from jit.optimizer.uses import used_values
from jit.trace import Trace


def run(trace: Trace) -> None:
    while True:
        used = used_values(trace)
        kept = [
            u
            for u in trace.uops
            if u.name != "_LOAD_CONST_INLINE" and not (u.op.pure and u.out is not None and u.out.id not in used)
        ]
        if len(kept) == len(trace.uops):
            return
        trace.uops = kept
