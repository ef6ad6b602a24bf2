"""Array bounds checks merged: the checks of indices ``base + c`` (``a[i - 1, j]``, ``a[i + 1, j]``, ``a[i, j]``,
...) against one dimension become one guard on base, ``low <= base < dimension - high``, placed where the first
of those checks, or of the additions computing their indices, was. It checks exactly what the checks it replaces
checked together (``_ARRAY_INDEX_IN_RANGE``: 0 <= base + c < dimension for each offset c), only earlier: it
leaves with that first uop's exit and state, and the interpreter redoes the iteration from there (raising
NumPy's IndexError where an index is out of range, or counting a negative one from the end). After it the indices
need no check, and computing them cannot overflow (``_BINARY_OP_ADD_INT_IN_RANGE``).

A lone check becomes such a guard too (with low and high 0), so that one on values the same throughout the
trace can be hoisted.

An index negative when recorded is checked by itself (``_ARRAY_INDEX``, NumPy's wrap-around), so a side trace
recorded where a merged guard failed on a negative index checks that one alone and merges no guard that would
fail there again.

It runs after ``jit.optimizer.hoist`` (so every array's header is read at the entry and each guard can check
an index against the dimensions of all the arrays it indexes), then hoists its own guards on values the same
throughout the trace (an outer loop's index) to the entry (index guards are ``transient``: failing there, for
one run of the loop, grows a side trace from the entry, which checks that index by itself).

The stencil's five reads of ``a`` and its write into ``out``: 4 guards an iteration instead of 12 checks (each a
compare and a branch after counting a negative index from the end) and 4 overflow checks."""

from __future__ import annotations

import dataclasses

from jit.kinds import Kind
from jit.optimizer import hoist
from jit.optimizer.uses import replace
from jit.trace import Trace, Uop, Value
from jit.uops import UOPS

_SIGN = {"_BINARY_OP_ADD_INT": 1, "_BINARY_OP_SUBTRACT_INT": -1}
_IN_RANGE = {
    "_BINARY_OP_ADD_INT": "_BINARY_OP_ADD_INT_IN_RANGE",
    "_BINARY_OP_SUBTRACT_INT": "_BINARY_OP_SUBTRACT_INT_IN_RANGE",
}
_LIMIT = 2**31  # the largest offset merged


@dataclasses.dataclass
class _Check:
    uop: Uop
    offset: int
    addition: Uop | None  # the uop computing base + offset (None: the index is base)


def _split(index: Value, made_by: dict[int, Uop]) -> tuple[Value, int, Uop | None]:
    """index as base + offset, with the addition computing it (None: the index is its own base)."""
    maker = made_by.get(index.id)
    if maker is None or maker.name not in _SIGN:
        return index, 0, None
    x, y = maker.args
    if y.is_const and not x.is_const and abs(y.const) < _LIMIT:
        return x, _SIGN[maker.name] * y.const, maker
    if x.is_const and not y.is_const and maker.name == "_BINARY_OP_ADD_INT" and abs(x.const) < _LIMIT:
        return y, x.const, maker
    return index, 0, None


def run(trace: Trace) -> None:
    made_by = {u.out.id: u for u in trace.uops if u.out is not None}
    position = {id(u): k for k, u in enumerate(trace.uops)}

    def defined_at(v: Value) -> int:
        maker = made_by.get(v.id)
        return -1 if maker is None else position[id(maker)]

    by_base: dict[int, tuple[Value, list[_Check]]] = {}
    for uop in trace.uops:
        if uop.name == "_ARRAY_INDEX_IN_RANGE":
            base, offset, addition = _split(uop.args[1], made_by)
            by_base.setdefault(base.id, (base, []))[1].append(_Check(uop, offset, addition))
    guards: dict[int, Uop] = {}  # id(uop) -> the guard that goes before it
    dropped: set[int] = set()
    forward: dict[int, Value] = {}
    for base, checks in by_base.values():
        additions = [c.addition for c in checks if c.addition is not None and c.addition.exit is not None]
        at = min(position[id(u)] for u in [*(c.uop for c in checks), *additions])
        merged = [c for c in checks if defined_at(c.uop.args[0]) < at]
        if not merged:  # (the first is an addition before a dimension is read: start at the first check)
            at = min(position[id(c.uop)] for c in checks)
            merged = [c for c in checks if defined_at(c.uop.args[0]) < at]
        unchecked = {id(c.addition): c.addition for c in merged if c.addition is not None}
        unchecked = {k: a for k, a in unchecked.items() if a.exit is not None and position[id(a)] >= at}
        first = trace.uops[at]
        highs: dict[int, tuple[Value, int]] = {}
        for c in merged:
            dim = c.uop.args[0]
            highs[dim.id] = (dim, max(c.offset, highs.get(dim.id, (dim, c.offset))[1]))
        low = trace.new_value(Kind.INT, -min(c.offset for c in merged))
        inputs = [base, low]
        for dim, high in highs.values():
            inputs += [dim, trace.new_value(Kind.INT, high)]
        guard = Uop(UOPS["_GUARD_INDEX_RANGE"], tuple(inputs), None, None, first.pc, first.line)
        guard.exit = first.exit
        guards[id(first)] = guard
        for addition in unchecked.values():
            addition.op = UOPS[_IN_RANGE[addition.name]]
            addition.exit = None
        for c in merged:
            dropped.add(id(c.uop))
            forward[c.uop.out.id] = c.uop.args[1]  # type: ignore[union-attr]
    if guards:
        kept: list[Uop] = []
        for uop in trace.uops:
            if id(uop) in guards:
                kept.append(guards[id(uop)])
            if id(uop) not in dropped:
                kept.append(uop)
        trace.uops = kept
        replace(trace, forward)
        hoist.run(trace)  # (the guards on invariant values)
