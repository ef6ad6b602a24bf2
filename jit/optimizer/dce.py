"""Dead-code elimination in one backward sweep: a pure uop goes when nothing after it uses its result.

The values the interpreter's state is rebuilt from at an exit, at an inner tree's call or at the trace's end
are live from the start; walking back from the end, a kept uop makes its inputs live. A trace is straight-line
SSA (the loop's back-edge carries values through the end snapshot, not through uop inputs), so one sweep
finds every dead uop. Constants are operands of the uops that use them (codegen materializes them in place),
so the uops naming them (``inline_const``) always go."""

from __future__ import annotations

from jit.optimizer.uses import live_at_exits
from jit.trace import Trace


def run(trace: Trace) -> None:
    live = live_at_exits(trace)
    kept = []
    for uop in reversed(trace.uops):
        op = uop.op
        if op.inline_const or (op.pure and uop.out is not None and uop.out.id not in live):
            continue
        live.update(v.id for v in uop.args)
        kept.append(uop)
    kept.reverse()
    trace.uops = kept
