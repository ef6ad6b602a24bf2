"""How the tests of joined side traces (``test_joined_trees``, ``test_joined_under``) read ``jit.stats``: the side
traces, the native counts of the exits they hang from, and what one call left."""

from __future__ import annotations

from typing import Any

import jit as jit_module


def side_traces(f: Any) -> list[dict]:
    return [t for tree in jit_module.stats(f)["trees"] for t in tree["traces"] if t["kind"] == "side"]


def parent_exit_counts(f: Any) -> dict[int, int]:
    """The native counts of the exits that side traces hang from."""
    return {
        e["id"]: e["taken"]
        for tree in jit_module.stats(f)["trees"]
        for t in tree["traces"]
        for e in t["exits"]
        if e["side_trace"] is not None
    }


def leaves_of_one_call(f: Any, *args: Any) -> tuple[int, dict[int, int]]:
    """(exits to the interpreter, parent exits taken natively) in one call."""
    stats = jit_module.stats(f)
    exits, parents = stats["exits_to_interpreter"], parent_exit_counts(f)
    f(*args)
    after = parent_exit_counts(f)
    return jit_module.stats(f)["exits_to_interpreter"] - exits, {k: after[k] - parents.get(k, 0) for k in after}
