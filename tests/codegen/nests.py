"""The two-level nest the tests of inner trees' entries share (``test_fast_entry``, ``test_run_entry``), and how
they find the inner tree's traces in ``jit.stats``."""

from __future__ import annotations

import jit as jit_module


def two_level(start, n, m):
    total = start
    for i in range(n):
        for j in range(m):
            total += (i ^ j) & 7
    return total


def inner_traces(f) -> list[dict]:
    """The traces of the trees that another tree calls (a nest's inner loop)."""
    trees = jit_module.stats(f)["trees"]
    called = {symbol for tree in trees for trace in tree["traces"] for symbol in trace["calls"]}
    return [trace for tree in trees if tree["symbol"] in called for trace in tree["traces"]]
