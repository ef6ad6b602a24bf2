"""``x * c + d`` (c and d constants): one interval check of x instead of two overflow checks.

Both the product and the sum fit i64 exactly where x is within an interval computed here (``bounds``). Where the
product is used by the addition alone (no other uop, no exit's state needs it), a ``_GUARD_INT_RANGE`` on x
takes the multiplication's place and its exit, and both operations become their ``_IN_RANGE`` forms. Where the
guard fails, the trace leaves before the multiplication, with the state from before it, and the interpreter
redoes both (with Python ints): exact whichever of the two would have overflowed. (collatz's ``3 * m + 1``: a
compare and a branch instead of those and an add with its overflow branch.) ``x * c - d`` and ``d + x * c`` too.

It runs after the range analysis (``jit.optimizer.ranges``), on the operations it left checked, and the range
analysis knows the guard (its ``_INT_RANGE_PROVEN`` form), for the merged loops it analyses again
(``jit.optimizer.merge``).
"""

from __future__ import annotations

from jit.kinds import Kind
from jit.resume import needed_values
from jit.trace import Trace, Uop, Value
from jit.uops import UOPS, TreeCall

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_MUL, _ADD, _SUB = "_BINARY_OP_MULTIPLY_INT", "_BINARY_OP_ADD_INT", "_BINARY_OP_SUBTRACT_INT"


def bounds(c: int, d: int) -> tuple[int, int] | None:
    """The interval of the ints x for which x * c and x * c + d both fit i64 (None: none does, or every x does
    for c == 0)."""
    if c == 0:
        return None
    low, high = max(INT64_MIN, INT64_MIN - d), min(INT64_MAX, INT64_MAX - d)  # (of the product)
    if c < 0:
        low, high = high, low
    lo, hi = -(-low // c), high // c  # (ceiling, floor: exact in Python ints)
    lo, hi = max(lo, INT64_MIN), min(hi, INT64_MAX)
    return (lo, hi) if lo <= hi else None


def _factor(uop: Uop) -> tuple[Value, int] | None:
    """(x, c) where uop is a checked x * c, c a constant."""
    if uop.name != _MUL or uop.exit is None or uop.fast is not None:
        return None
    a, b = uop.args
    for x, c in ((a, b), (b, a)):
        if c.is_const and type(c.const) is int and not x.is_const and x.kind == Kind.INT:
            return x, c.const
    return None


def _term(uop: Uop, product: Value) -> int | None:
    """d where uop is a checked product + d (or d + product, or product - d), d a constant."""
    if uop.name not in (_ADD, _SUB) or uop.exit is None or uop.fast is not None:
        return None
    a, b = uop.args
    if a is product and b.is_const and type(b.const) is int:
        return b.const if uop.name == _ADD else -b.const
    if uop.name == _ADD and b is product and a.is_const and type(a.const) is int:
        return a.const
    return None


def run(trace: Trace) -> None:
    uses: dict[int, list[Uop]] = {}
    for uop in [*trace.hoisted, *trace.uops]:
        for arg in uop.args:
            uses.setdefault(arg.id, []).append(uop)
    guards: dict[int, Uop] = {}  # id(multiplication) -> the guard taking its place
    for uop in trace.uops:
        factor = _factor(uop)
        if factor is None or uop.out is None:
            continue
        users = uses.get(uop.out.id, [])
        if len(users) != 1 or users[0].args.count(uop.out) != 1:
            continue
        addition = users[0]
        d = _term(addition, uop.out)
        interval = bounds(factor[1], d) if d is not None else None
        if interval is None or _needed_elsewhere(trace, uop.out, addition):
            continue
        x = factor[0]
        lo, hi = (trace.new_value(Kind.INT, bound) for bound in interval)
        guard = Uop(UOPS["_GUARD_INT_RANGE"], (x, lo, hi), None, None, uop.pc, uop.line, uop.exit)
        guards[id(uop)] = guard
        uop.op, uop.exit = UOPS[uop.op.unchecked], None  # type: ignore[index]
        addition.op, addition.exit = UOPS[addition.op.unchecked], None  # type: ignore[index]
    if guards:
        kept: list[Uop] = []
        for uop in trace.uops:
            if id(uop) in guards:
                kept.append(guards[id(uop)])
            kept.append(uop)
        trace.uops = kept


def _needed_elsewhere(trace: Trace, product: Value, addition: Uop) -> bool:
    """Does the state at an exit other than addition's (or at an inner tree's call, or at the end) need product?"""
    snapshots = [u.exit.snapshot for u in [*trace.hoisted, *trace.uops] if u.exit is not None and u is not addition]
    snapshots += [u.operand.snapshot for u in trace.uops if isinstance(u.operand, TreeCall)]
    if trace.end_snapshot is not None:
        snapshots.append(trace.end_snapshot)
    return any(v.id == product.id for v in needed_values(trace, snapshots))
