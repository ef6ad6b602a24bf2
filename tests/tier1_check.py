"""``check_t1``: ``helpers.check`` plus a demand that the function really ran in tracejit's interpreter.

A differential test passes trivially if the function fell back to plain CPython, so the statement tests use this
to make sure the construct under test was compiled to tier-1 code.
"""

from __future__ import annotations

from typing import Any

from helpers import check

from jit import explain
from jit.api import state_of


def assert_tier1(jitted: Any) -> None:
    state = state_of(jitted)
    state.ensure_prepared()
    assert state.mode == "tier1", explain(jitted)


def check_t1(func: Any, *calls: Any, options: dict[str, Any] | None = None, native: bool | None = None) -> Any:
    """helpers.check (native passed through: True demands that compiled code ran), then demand tier 1."""
    jitted = check(func, *calls, options=options, native=native)
    assert_tier1(jitted)
    return jitted
