"""Guard hoisting: the guards declared ``hoistable`` (global and module-attribute guards) move to the trace's
entry.

Inside a trace nothing can rebind a global, since native code calls no Python code, except the trace's own
``_STORE_GLOBAL``; the only other way is a signal handler run by the periodic check, which re-checks the
hoisted guards after it runs. The names a function stores are never guarded by identity with a hoistable
guard (the recorder reads them from the dict every time: ``_LOAD_GLOBAL_VALUE``, ``_CHECK_GLOBAL``), so no
hoisted guard is about a name a store could change, except ``_GUARD_GLOBAL_NUMBER``, which the trace's own stores
keep true (a trace storing another value there is recorded without it: ``Reason.GLOBAL_NOT_NUMBER``; another
trace's native store puts only a number, None or a str there, none of which a store over it frees running Python
code, and anything else is stored by a barrier, after which the hoisted guards are checked again). These guards
are checked once per entry instead of once per iteration; the same guard twice is checked once.

A hoistable guard with inputs (an array's spec, its WRITEABLE flag) moves only when its inputs are the same
at the entry as everywhere in the trace: constants, or slots the trace reads and never assigns. Only Python
code changes an array's dtype, shape, layout or flags, and native code runs none (the periodic check's
signal handlers aside, after which the hoisted guards are checked again). The uops declared ``entry_value``
(an array's data address, dimensions, strides) move with them on the same condition, so a loop reads each
array's header once per entry (the periodic check reads it again and leaves if a signal handler changed it).
Index guards on such inputs (``jit.optimizer.bounds``) move the same way.

In a side trace, an index guard stays where it is: it has no loop to move it out of, and at its entry it would
fail ahead of the branch guards that come first (a histogram's ``if 0 <= k < bins: counts[k] += 1``, its side
trace recorded where k was in range: its check of k against counts' length failed for every k past bins, and left
the loop to a side trace of its entry, never joined into the loop, 1 in 6 iterations). Other guards move in side
traces too: the reads moved with them (an iterator's layout, an array's header) rely on them."""

from __future__ import annotations

import dataclasses
from typing import Any

from jit.resume import entry_snapshot
from jit.trace import Trace, TraceKind, hoisted_when_hot
from jit.uops import PROVEN_BY_CALLERS


def run(trace: Trace) -> None:
    seen: set[tuple] = set()
    kept = []
    invariant = {v.id for slot, v in trace.entry_slots.items() if slot not in trace.written}
    invariant.update(u.out.id for u in trace.hoisted if u.out is not None)  # (hoisted by an earlier run)
    for uop in trace.uops:
        movable = uop.op.hoistable or uop.op.entry_value
        if not movable or not all(v.is_const or v.id in invariant for v in uop.args):
            kept.append(uop)
            continue
        if uop.name in _PASSING and trace.kind is TraceKind.SIDE:
            # (a side trace runs once per entry: moved to its entry, an index guard would fail before the branch
            # guards that precede it, whose side traces are where such data goes, and a side trace grown from
            # the entry is never joined into its tree's loop)
            kept.append(uop)
            continue
        if uop.op.entry_value:
            trace.hoisted.append(uop)
            invariant.add(uop.out.id)  # type: ignore[union-attr]
            continue
        key = (uop.name, *_identity(uop.operand), *(v.id for v in uop.args))
        if key in seen:
            continue
        seen.add(key)
        # at the trace's entry nothing has run yet: leave to the interpreter where the trace starts
        uop.exit.snapshot = entry_snapshot(trace)
        uop.exit.when_hot = hoisted_when_hot(uop.op, trace.kind is TraceKind.ROOT)
        uop.exit.followed = uop.name not in PROVEN_BY_CALLERS
        trace.hoisted.append(uop)
    trace.uops = kept


#: guards that may fail on passing data, which no uop moved to the entry depends on (an iterator's or a global's
#: guard is what the reads of its layout moved with it rely on: those move in a side trace too)
_PASSING = frozenset({"_GUARD_INDEX_RANGE"})


def _identity(operand: Any) -> tuple:
    """The operand's fields, objects by identity (names by value)."""
    if operand is None:
        return ()
    if not dataclasses.is_dataclass(operand):  # a kind
        return (operand,)
    return tuple(
        value if isinstance(value, str) else id(value)
        for value in (getattr(operand, field.name) for field in dataclasses.fields(operand))
    )
