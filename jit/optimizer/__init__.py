"""The uop optimizer: a pipeline of passes over a recorded trace, one pass per module.

LLVM optimizes the machine-level code afterwards (register allocation, GVN, loop-invariant code motion); these
passes do what LLVM cannot know about Python: which guards are already proven, which values are constants,
which guards only need checking when the trace is entered.
"""

from __future__ import annotations

from jit.optimizer import affine, bounds, constfold, counters, cse, dce, guards, hoist, moves, ranges
from jit.trace import Trace

PASSES = (
    guards.run,
    constfold.run,
    cse.run,
    moves.run,
    hoist.run,
    bounds.run,
    dce.run,
    ranges.run,
    counters.run,
    affine.run,
)


def optimize(trace: Trace) -> None:
    before = len(trace.uops)
    for run in PASSES:
        run(trace)
    trace.removed_uops = before - len(trace.uops) - len(trace.hoisted)
