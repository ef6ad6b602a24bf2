"""Range analysis: intervals of a trace's int values, and the overflow and bounds checks they make needless.

Each int value gets an interval whose bounds are expressions (``jit.versions.Expr``) over values known at the
loop's top, valid under conditions on those values (``Interval.needs``). Where the intervals of a checked
uop's inputs prove its check cannot fail, the uop gets its ``unchecked`` form (``jit.uops``): in place where
the proof needs no condition (constants alone), else as its ``fast`` form, lowered in the loop's fast copy,
which runs while the conditions hold (``trace.versioning``; codegen checks them where the loop is entered and
after each periodic check: ``codegen.function``). Every condition is exact: an expression that overflows
i64 while it is evaluated makes the condition fail, so the fast copy never runs where a check could fail.

Where intervals come from:

* constants; values the loop does not change (read at the entry, never assigned: a range's stop, an outer
  loop's counter): the value itself, ``[v, v]``;
* the loop's counter (a ``for ... in range``: ``_GUARD_NOT_EXHAUSTED_RANGE`` on the loop-carried ``cur``,
  ``_ITER_NEXT_RANGE`` its next value): after the guard, between its value at the loop's top and ``stop``;
  the loop runs at most ``T = |stop - cur|`` more iterations from the top;
* an accumulator (a loop-carried int whose next value is ``s + t`` or ``s - t``, after the range guard,
  with ``t`` bounded): within ``[s + T * min(lo, 0), s + T * max(hi, 0)]`` for the ``T`` iterations left,
  so one condition at the loop's top replaces an overflow check per iteration (LuaJIT's and LLVM's reasoning
  on counted loops); the bounds of ``t`` are found with ``s`` unknown, so they hold whatever ``s`` is;
* a loop-carried int the loop only adds a constant to: bounded on one side by its value at the loop's top;
* a guard on a comparison of ints (``i < j``): after it, each side's bounds narrowed by the other's (a side
  with no interval yet gets the bound the other gives: ``0 <= k`` bounds any k from below);
* an array's dimensions read at the entry: the value itself; a sequence's index (``for x in a``): bounded
  below by its value at the loop's top, as a counter that only grows;
* arithmetic on intervals (``+ - *``, ``& | ^`` of non-negative values, ``%`` by a positive bound, lengths).

A list's bounds check goes only where the list is the same object throughout the loop and nothing in the
trace can change a list's length (no append, no inner tree call, no store but of list items and array
elements); a periodic check, after which signal handlers may have run Python code, checks the conditions
again (lengths included) before the fast copy goes on. A tuple's length never changes.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

from jit import versions as vx
from jit.kinds import Kind
from jit.trace import Trace, TraceEnd, TraceKind, Uop, Value
from jit.uops import UOPS
from jit.versions import Condition, Expr, Versioning

_ADD, _SUB, _MUL = "_BINARY_OP_ADD_INT", "_BINARY_OP_SUBTRACT_INT", "_BINARY_OP_MULTIPLY_INT"
#: uops that store into a container without changing any list's length (the element they replace is a number)
_ELEMENT_STORES = frozenset(
    {
        "_STORE_SUBSCR_LIST_INT",
        "_STORE_SUBSCR_LIST_OBJECT",
        "_STORE_SUBSCR_LIST_INT_IN_BOUNDS",
        "_STORE_SUBSCR_LIST_OBJECT_IN_BOUNDS",
        "_ARRAY_STORE",
        "_MOVE_LIST_ITEMS",
        "_MOVE_LIST_ITEMS_DISTINCT",
        "_MOVE_LIST_ITEMS_IN_BOUNDS",
        "_MOVE_LIST_ITEMS_DISTINCT_IN_BOUNDS",
    }
)
#: the moves of list items (jit.optimizer.moves): inputs the list, then k indices, then k items
_MOVES = frozenset({"_MOVE_LIST_ITEMS", "_MOVE_LIST_ITEMS_DISTINCT"})
#: the index input of the uops with a bounds check, and their sequence input
_INDEXED = {
    "_BINARY_SUBSCR_LIST_INT": (1, 0),
    "_BINARY_SUBSCR_TUPLE_INT": (1, 0),
    "_STORE_SUBSCR_LIST_INT": (2, 1),
    "_STORE_SUBSCR_LIST_OBJECT": (2, 1),
}
#: the uops computing a sum, difference or product of ints (checked or not), and which
_ARITHMETIC = {
    "_BINARY_OP_ADD_INT": "add",
    "_BINARY_OP_ADD_INT_IN_RANGE": "add",
    "_ITER_NEXT_RANGE": "add",
    "_ITER_NEXT_RANGE_NO_OVERFLOW": "add",
    "_BINARY_OP_SUBTRACT_INT": "sub",
    "_BINARY_OP_SUBTRACT_INT_IN_RANGE": "sub",
    "_BINARY_OP_MULTIPLY_INT": "mul",
    "_BINARY_OP_MULTIPLY_INT_IN_RANGE": "mul",
    "_ITER_INCREMENT": "inc",
}
_LENGTHS = frozenset({"_LEN_LIST", "_LEN_TUPLE", "_LEN_STR", "_LEN_DICT"})


@dataclasses.dataclass(frozen=True)
class Interval:
    """lo <= value <= hi wherever the value is computed, if every condition of needs holds (a bound of None:
    none known, as for a counter that only grows; most rules need both)."""

    lo: Expr | None
    hi: Expr | None
    needs: frozenset[Condition] = frozenset()

    @property
    def bounded(self) -> bool:
        return self.lo is not None and self.hi is not None


def point(expr: Expr) -> Interval:
    return Interval(expr, expr)


def run(trace: Trace) -> None:
    _Analysis(trace).run()


class _Analysis:
    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        looping = trace.end is TraceEnd.LOOP and trace.end_snapshot is not None
        self.end = trace.end_snapshot.outer.slots if looping else {}  # type: ignore[union-attr]
        entries = trace.entry_slots.items() if looping else ()
        self.carried = {v.id: slot for slot, v in entries if self.end.get(slot) is not v}
        self.invariant = {v.id for slot, v in entries if self.end.get(slot) is v}
        # the fast copy's conditions are checked at the loop's top: where the loop starts, and after the
        # periodic check (which must come first, so that the values there are the loop-carried ones). A loop
        # that calls an inner loop's tree gets none: its iterations' time is the inner loop's, and a second
        # copy of it would only take compile time
        self.versioned = (
            looping
            and trace.kind is TraceKind.ROOT
            and bool(trace.uops)
            and trace.uops[0].name == "_CHECK_PERIODIC"
            and not any(u.name == "_CALL_TREE" for u in trace.uops)
            and not _owns_across_iterations(trace)
        )
        self.lengths_fixed = not any(_may_change_lengths(u) for u in trace.uops)
        # values read at the entry (an array's dimensions): the same throughout the loop
        self.entry_values = trace.entry_values()
        self.producer = {u.out.id: u for u in trace.uops if u.out is not None}
        self.counter: tuple[int, Value, Interval, Expr, frozenset[Condition]] | None = None
        self.accumulators: dict[int, tuple[Uop, Interval]] = {}  # the loop-carried value -> (its sum, interval)
        self.accumulating: dict[int, Interval] = {}  # id of the uop computing an accumulator's next value
        self.chosen: dict[int, Interval] = {}  # (find_chosen_accumulators) the other sums of an accumulator

    # --- the loop's counter and accumulators -------------------------------------------------------------
    def find_counter(self) -> None:
        """The range loop's counter: (the guard's position, cur, its interval after the guard, the trip count
        T from the loop's top, T's conditions)."""
        found = self.trace.range_counter()
        if found is not None:
            position, cur, stop, step = found
            c, s = vx.value(cur), vx.value(stop)
            if step.is_const and step.const > 0:
                interval = self.interval(c, vx.sub(s, vx.const(1)))
            elif step.is_const and step.const < 0:
                interval = self.interval(vx.add(s, vx.const(1)), c)
            else:  # either direction: within the hull of both
                lo = vx.minimum(c, vx.add(s, vx.const(1)))
                interval = self.interval(lo, vx.maximum(c, vx.sub(s, vx.const(1))))
            trips = vx.maximum(vx.sub(s, c), vx.sub(c, s))
            if interval is not None:
                self.counter = (position, cur, interval, trips, _needs(trips))
            return

    def find_accumulators(self, first: dict[int, Interval]) -> None:
        """Loop-carried ints whose next value adds a bounded term, after the counter's guard."""
        if self.counter is None:
            return
        guard_at, _, _, trips, trip_needs = self.counter
        for position, uop in enumerate(self.trace.uops):
            if position <= guard_at or uop.name not in (_ADD, _SUB) or uop.out is None:
                continue
            for index, acc in enumerate(uop.args):
                if uop.name == _SUB and index == 1:
                    break
                slot = self.carried.get(acc.id)
                if slot is None or self.end.get(slot) is not uop.out or acc.kind != Kind.INT:
                    continue
                term = self.get(uop.args[1 - index], first)
                if term is None:
                    continue
                lo, hi = term.lo, term.hi
                if uop.name == _SUB:
                    lo, hi = vx.sub(vx.const(0), term.hi), vx.sub(vx.const(0), term.lo)
                start = vx.value(acc)
                low = vx.add(start, vx.mul(trips, vx.minimum(lo, vx.const(0))))
                high = vx.add(start, vx.mul(trips, vx.maximum(hi, vx.const(0))))
                needs = _combine(term.needs, trip_needs, _needs(low), _needs(high))
                if needs is not None:
                    self.accumulators[acc.id] = (uop, Interval(low, high, needs))
                break
        self.find_chosen_accumulators(first)

    def find_chosen_accumulators(self, first: dict[int, Interval]) -> None:
        """Loop-carried ints whose next value is one of two, chosen by a _SELECT after the counter's guard, each
        the value at the top plus or minus a bounded term, or that value itself (a loop's two ways in one
        iteration, ``jit.optimizer.merge``): within the bounds of an accumulator whose term is the hull of the
        terms and 0. Both sums get that interval: each is the value at the top of one of the T iterations plus
        its term, so within it, also where it is computed and not chosen."""
        assert self.counter is not None
        guard_at, _, _, trips, trip_needs = self.counter
        positions = {id(uop): position for position, uop in enumerate(self.trace.uops)}
        for acc_id, slot in self.carried.items():
            select = self.producer.get(self.end[slot].id)
            if acc_id in self.accumulators or select is None or select.name != "_SELECT":
                continue
            if positions[id(select)] <= guard_at or select.out.kind != Kind.INT:  # type: ignore[union-attr]
                continue
            sums: list[Uop] = []
            lows, highs, needs = [vx.const(0)], [vx.const(0)], [trip_needs]
            for choice in select.args[1:]:
                if choice.id == acc_id:
                    continue
                uop = self.producer.get(choice.id)
                if uop is None or uop.name not in (_ADD, _SUB) or positions[id(uop)] <= guard_at:
                    break
                if uop.args[0].id == acc_id:
                    term_value = uop.args[1]
                elif uop.name == _ADD and uop.args[1].id == acc_id:
                    term_value = uop.args[0]
                else:
                    break
                term = self.get(term_value, first)
                if term is None:
                    break
                if uop.name == _SUB:
                    lows.append(vx.sub(vx.const(0), term.hi))
                    highs.append(vx.sub(vx.const(0), term.lo))
                else:
                    lows.append(term.lo)
                    highs.append(term.hi)
                needs.append(term.needs)
                sums.append(uop)
            else:
                if not sums:
                    continue
                start = vx.value(next(v for v in self.trace.entry_slots.values() if v.id == acc_id))
                low = vx.add(start, vx.mul(trips, functools.reduce(vx.minimum, lows)))
                high = vx.add(start, vx.mul(trips, functools.reduce(vx.maximum, highs)))
                combined = _combine(*needs, _needs(low), _needs(high))
                if combined is not None:
                    interval = Interval(low, high, combined)
                    self.accumulators[acc_id] = (sums[0], interval)
                    self.chosen.update({id(uop): interval for uop in sums[1:]})

    def is_invariant(self, v: Value) -> bool:
        return v.is_const or v.id in self.invariant

    def known_at_top(self, v: Value) -> bool:
        """Is v the same throughout the loop: invariant, or read at the entry (an array's dimension)?"""
        return self.is_invariant(v) or v.id in self.entry_values

    # --- intervals ---------------------------------------------------------------------------------------
    def interval(self, lo: Expr | None, hi: Expr | None, *needs: frozenset[Condition] | None) -> Interval | None:
        if lo is None and hi is None:
            return None
        combined = _combine(*needs, *(_needs(bound) for bound in (lo, hi) if bound is not None))
        return None if combined is None else Interval(lo, hi, combined)

    def get(self, v: Value, env: dict[int, Interval]) -> Interval | None:
        """v's interval if both its bounds are known."""
        known = self.get_partial(v, env)
        return known if known is not None and known.bounded else None

    def get_partial(self, v: Value, env: dict[int, Interval]) -> Interval | None:
        if v.kind not in (Kind.INT, Kind.BOOL):
            return None
        if v.is_const:
            return point(vx.const(int(v.const)))
        return env.get(v.id)

    def monotone(self) -> dict[int, Interval]:
        """Loop-carried ints the loop only adds a constant to (once per iteration): bounded on one side by
        their value at the loop's top."""
        out = {}
        for v_id, slot in self.carried.items():
            producer = self.producer.get(self.end[slot].id)
            if producer is not None and producer.name == "_ITER_INCREMENT" and producer.args[0].id == v_id:
                out[v_id] = Interval(vx.value(producer.args[0]), None)  # (a sequence's index: for x in a)
                continue
            if producer is None or producer.name not in (_ADD, _SUB) or v_id not in (a.id for a in producer.args):
                continue
            other = next((a for a in producer.args if a.id != v_id), None)
            if other is None or not other.is_const or (producer.name == _SUB and producer.args[0].id != v_id):
                continue
            grows = (other.const > 0) == (producer.name == _ADD)
            top = vx.value(producer.args[0] if producer.args[0].id == v_id else producer.args[1])
            out[v_id] = Interval(top, None) if grows else Interval(None, top)
        return out

    def refine(self, uop: Uop, env: dict[int, Interval]) -> None:
        """After a guard on a comparison of ints, the comparison holds: narrow both sides' intervals."""
        compare = self.producer.get(uop.args[0].id)
        if compare is None or compare.name != "_COMPARE_OP_INT":
            return
        op = compare.operand.symbol if uop.op.condition else _NEGATED.get(compare.operand.symbol)
        a, b = compare.args
        if op in (">", ">="):
            a, b, op = b, a, {">": "<", ">=": "<="}[op]
        if op not in ("<", "<=", "=="):
            return
        x, y = self.get_partial(a, env), self.get_partial(b, env)
        if x is None and y is None:
            return
        # (a side not known yet is unbounded: `0 <= k` bounds k from below whatever k is)
        unknown = Interval(None, None, frozenset())
        x, y = x if x is not None else unknown, y if y is not None else unknown
        gap = vx.const(1 if op == "<" else 0)
        # a <= b - gap: a's upper bound is at most b's, less the gap; b's lower bound at least a's, plus it
        if op == "==":
            lo, hi = _tighter(x.lo, y.lo, vx.maximum), _tighter(x.hi, y.hi, vx.minimum)
            new_a = new_b = self.interval(lo, hi, x.needs, y.needs)
        else:
            new_a = self.interval(x.lo, _tighter(x.hi, _shifted(y.hi, gap, vx.sub), vx.minimum), x.needs, y.needs)
            new_b = self.interval(_tighter(y.lo, _shifted(x.lo, gap, vx.add), vx.maximum), y.hi, x.needs, y.needs)
        for value, new in ((a, new_a), (b, new_b)):
            if new is not None and not value.is_const:
                env[value.id] = new

    def analyze(self, accumulate: bool) -> tuple[dict[int, Interval], dict[int, frozenset[Condition]]]:
        """Intervals of the values, and per uop (by position) the conditions under which its check goes."""
        env: dict[int, Interval] = {}
        for v in self.trace.entry_slots.values():
            if v.id in self.invariant and v.kind == Kind.INT:
                env[v.id] = point(vx.value(v))
        for u in self.trace.hoisted:  # (an array's dimensions, read at the entry: the same throughout the loop)
            if u.out is not None and u.out.id in self.entry_values and u.out.kind == Kind.INT:
                env[u.out.id] = point(vx.value(u.out))
        env.update(self.monotone())
        if accumulate:
            for acc_id, (_, interval) in self.accumulators.items():
                env[acc_id] = interval
        self.accumulating = {id(uop): interval for uop, interval in self.accumulators.values()}
        self.accumulating.update(self.chosen)
        removable: dict[int, frozenset[Condition]] = {}
        for position, uop in enumerate(self.trace.uops):
            if self.counter is not None and position == self.counter[0]:
                env[self.counter[1].id] = self.counter[2]
            if uop.op.condition is not None:
                self.refine(uop, env)
            out, needs = self.step(uop, env, accumulate)
            if self.counter is not None and position == self.counter[0]:
                needs = None  # (the counter's interval assumes its guard: no proof of the guard itself)
            if out is not None and uop.out is not None:
                env[uop.out.id] = out
            if needs is not None and uop.op.unchecked is not None:
                removable[position] = needs
        return env, removable

    def step(
        self, uop: Uop, env: dict[int, Interval], accumulate: bool
    ) -> tuple[Interval | None, frozenset[Condition] | None]:
        """The interval of uop's output, and the conditions under which its check cannot fail (None: none)."""
        name = uop.name
        if accumulate and id(uop) in self.accumulating:
            interval = self.accumulating[id(uop)]
            return interval, interval.needs
        if name in _INDEXED:
            return None, self.in_bounds(uop, env)
        if name in _MOVES:  # (the same conditions as the reads of those items: each index within the list)
            count = (len(uop.args) - 1) // 2
            return None, _combine(*(self.index_in(uop.args[0], index, env) for index in uop.args[1 : 1 + count]))
        if name == "_GUARD_INDEX_RANGE":
            return None, self.index_range_holds(uop, env)
        if name == "_ARRAY_INDEX":
            return self.from_end(uop, env)
        if name in ("_GUARD_NOT_EXHAUSTED_RANGE", "_GUARD_EXHAUSTED_RANGE"):
            return None, self.range_guard_holds(uop, env)
        if name == "_GUARD_INT_RANGE":  # (jit.optimizer.affine's, in a merged loop analysed again)
            x, lo, hi = uop.args
            known = self.get(x, env)
            if known is None:
                return None, None
            return None, _combine(
                known.needs,
                _check(Condition(vx.const(lo.const), known.lo)),
                _check(Condition(known.hi, vx.const(hi.const))),
            )
        args = [self.get_partial(a, env) for a in uop.args]
        base = _ARITHMETIC.get(name)
        if base is not None:
            if base == "inc":
                args.append(point(vx.const(1)))
            a, b = args[0], args[1]
            if a is None or b is None:
                return None, None
            if base == "sub":
                out = self.interval(_both(a.lo, b.hi, vx.sub), _both(a.hi, b.lo, vx.sub), a.needs, b.needs)
            elif base == "mul":
                out = _multiply(self, a, b) if a.bounded and b.bounded else None
            else:
                out = self.interval(_both(a.lo, b.lo, vx.add), _both(a.hi, b.hi, vx.add), a.needs, b.needs)
            return out, (out.needs if out is not None and out.bounded else None)
        if name in ("_UNARY_NEGATIVE_INT", "_UNARY_NEGATIVE_INT_IN_RANGE"):
            a = args[0]
            if a is None:
                return None, None
            zero = vx.const(0)
            out = self.interval(_both(zero, a.hi, vx.sub), _both(zero, a.lo, vx.sub), a.needs)
            return out, (out.needs if out is not None and out.bounded else None)
        return self.plain(name, [x if x is not None and x.bounded else None for x in args]), None

    def plain(self, name: str, args: list[Interval | None]) -> Interval | None:
        """The interval of an int uop that has no check to remove."""
        zero = vx.const(0)
        if name == "_CONVERT_BOOL_TO_INT":
            return Interval(zero, vx.const(1))
        if name in _LENGTHS:
            return Interval(zero, vx.const(vx.INT64_MAX))
        if name == "_UNARY_INVERT_INT" and args[0] is not None:
            minus_one = vx.const(-1)
            return self.interval(vx.sub(minus_one, args[0].hi), vx.sub(minus_one, args[0].lo), args[0].needs)
        if name == "_SELECT" and len(args) == 3 and args[1] is not None and args[2] is not None:
            a, b = args[1], args[2]
            return self.interval(vx.minimum(a.lo, b.lo), vx.maximum(a.hi, b.hi), a.needs, b.needs)
        if len(args) != 2:
            return None
        a, b = args
        if name == "_BINARY_OP_AND_INT":
            # for y >= 0: x & y is within [0, y], whatever x is
            known = [x for x in (a, b) if x is not None and x.lo.is_const and x.lo.const >= 0]
            known.sort(key=lambda x: (not x.hi.is_const, x.hi.const if x.hi.is_const else 0, len(x.needs)))
            if known:
                return Interval(zero, known[0].hi, known[0].needs)
            some = a if a is not None else b
            if some is None:
                return None
            return self.interval(zero, some.hi, some.needs, _needs_non_negative(some.lo))
        if name in ("_BINARY_OP_OR_INT", "_BINARY_OP_XOR_INT"):
            if a is None or b is None:
                return None
            # for a, b >= 0: a | b and a ^ b are within [0, a + b]
            return self.interval(
                zero, vx.add(a.hi, b.hi), a.needs, b.needs, _needs_non_negative(a.lo), _needs_non_negative(b.lo)
            )
        if name == "_BINARY_OP_REMAINDER_INT" and b is not None:
            # Python's %: the sign of the divisor, smaller in size
            if b.lo.is_const and b.lo.const >= 1:
                return self.interval(zero, vx.sub(b.hi, vx.const(1)), b.needs)
            if b.hi.is_const and b.hi.const <= -1:
                return self.interval(vx.add(b.lo, vx.const(1)), zero, b.needs)
            return None
        if name in ("_BINARY_OP_FLOOR_DIVIDE_INT", "_BINARY_OP_RSHIFT_INT"):
            if a is not None and b is not None and a.lo.is_const and a.lo.const >= 0 and b.lo.is_const:
                if b.lo.const >= (1 if name == "_BINARY_OP_FLOOR_DIVIDE_INT" else 0):
                    return Interval(zero, a.hi, a.needs)
            return None
        return None

    def in_bounds(self, uop: Uop, env: dict[int, Interval]) -> frozenset[Condition] | None:
        """The conditions under which the index of a list or tuple access is within it."""
        index_at, sequence_at = _INDEXED[uop.name]
        return self.index_in(uop.args[sequence_at], uop.args[index_at], env)

    def index_in(self, sequence: Value, index_value: Value, env: dict[int, Interval]) -> frozenset[Condition] | None:
        """The conditions under which index_value is an index within sequence (0 <= index < len)."""
        if not self.is_invariant(sequence) or sequence.kind not in (Kind.LIST, Kind.TUPLE):
            return None
        if sequence.kind is Kind.LIST and not self.lengths_fixed:
            return None
        index = self.get(index_value, env)
        if index is None:
            return None
        last = vx.sub(vx.length(sequence), vx.const(1))
        return _combine(index.needs, _needs_non_negative(index.lo), _check(Condition(index.hi, last)))

    def index_range_holds(self, uop: Uop, env: dict[int, Interval]) -> frozenset[Condition] | None:
        """The conditions under which an array index guard (jit.optimizer.bounds) holds: low <= base and base <
        dimension - high for each dimension, from base's interval; the dimensions are read at the entry (the
        periodic check leaves where one changed) or the same throughout the loop."""
        base, low, *pairs = uop.args
        interval = self.get(base, env)
        if interval is None or not low.is_const:
            return None
        needs = _combine(interval.needs, _check(Condition(vx.const(low.const), interval.lo)))
        for dim, high in zip(pairs[::2], pairs[1::2]):
            if not high.is_const or not self.known_at_top(dim):
                return None
            last = vx.sub(vx.sub(vx.value(dim), vx.const(high.const)), vx.const(1))
            needs = _combine(needs, _check(Condition(interval.hi, last)))
        return needs

    def from_end(self, uop: Uop, env: dict[int, Interval]) -> tuple[Interval | None, frozenset[Condition] | None]:
        """(NumPy's negative index: ``a[-i]``) the interval of the index it gives, within [0, dimension - 1]
        after its check, and the conditions under which the index is negative and counts from the end, within
        the dimension (read at the entry or the same throughout the loop): -dimension <= index <= -1."""
        dim, index_value = uop.args
        if not self.known_at_top(dim):
            return None, None
        out = Interval(vx.const(0), vx.sub(vx.value(dim), vx.const(1)))
        index = self.get(index_value, env)
        if index is None:
            return out, None
        lowest = vx.sub(vx.const(0), vx.value(dim))
        return out, _combine(
            index.needs, _check(Condition(lowest, index.lo)), _check(Condition(index.hi, vx.const(-1)))
        )

    def range_guard_holds(self, uop: Uop, env: dict[int, Interval]) -> frozenset[Condition] | None:
        """The conditions under which a range guard whose range the loop does not change holds (an inner loop
        unrolled into the trace, jit.recorder.Recorder.unroll: cur within an interval from a constant start, a
        constant step, a bound read at the entry): that the bound is one its recorded trip count allows."""
        cur, stop, step = uop.args
        interval = self.get(cur, env)
        if interval is None or not (step.is_const and step.const != 0 and self.is_invariant(stop)):
            return None
        bound, more, one = vx.value(stop), uop.name == "_GUARD_NOT_EXHAUSTED_RANGE", vx.const(1)
        if step.const > 0:  # cur < stop goes on; cur >= stop ends
            condition = Condition(vx.add(interval.hi, one), bound) if more else Condition(bound, interval.lo)
        else:  # cur > stop goes on; cur <= stop ends
            condition = Condition(bound, vx.sub(interval.lo, one)) if more else Condition(interval.hi, bound)
        return _combine(interval.needs, _check(condition))

    # --- the pass ----------------------------------------------------------------------------------------
    def run(self) -> None:
        self.find_counter()
        first, _ = self.analyze(accumulate=False)
        self.find_accumulators(first)
        _, removable = self.analyze(accumulate=True)
        conditions: dict[Condition, None] = {}
        for position, needs in removable.items():
            uop = self.trace.uops[position]
            unchecked = UOPS[uop.op.unchecked]  # type: ignore[index]
            if not needs:
                uop.op = unchecked
                if not unchecked.is_guard:
                    uop.exit = None
            elif self.versioned:
                uop.fast = unchecked
                conditions.update(dict.fromkeys(sorted(needs, key=str)))
        if conditions:
            self.trace.versioning = Versioning(_pruned(list(conditions)))


def _both(a: Expr | None, b: Expr | None, op: Callable[[Expr, Expr], Expr]) -> Expr | None:
    """op(a, b), unknown where either is."""
    return None if a is None or b is None else op(a, b)


def _tighter(a: Expr | None, b: Expr | None, pick: Callable[[Expr, Expr], Expr]) -> Expr | None:
    """The tighter of two bounds (pick: minimum for upper bounds), either where the other is unknown."""
    if a is None or b is None:
        return b if a is None else a
    return pick(a, b)


def _shifted(bound: Expr | None, gap: Expr, op: Callable[[Expr, Expr], Expr]) -> Expr | None:
    return None if bound is None else op(bound, gap)


#: a comparison's negation (the condition a _GUARD_IS_FALSE_POP leaves holding)
_NEGATED = {"<": ">=", "<=": ">", "==": "!=", "!=": "==", ">": "<=", ">=": "<"}


def _multiply(analysis: _Analysis, a: Interval, b: Interval) -> Interval | None:
    if a.lo.is_const and b.lo.is_const and a.lo.const >= 0 and b.lo.const >= 0:
        return analysis.interval(vx.mul(a.lo, b.lo), vx.mul(a.hi, b.hi), a.needs, b.needs)
    if b.lo == b.hi and b.lo.is_const:
        a, b = b, a
    if a.lo == a.hi and a.lo.is_const:  # a constant factor: its sign orders the bounds
        c = a.lo
        if c.const >= 0:
            return analysis.interval(vx.mul(b.lo, c), vx.mul(b.hi, c), b.needs)
        return analysis.interval(vx.mul(b.hi, c), vx.mul(b.lo, c), b.needs)
    corners = [vx.mul(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
    lo = vx.minimum(vx.minimum(corners[0], corners[1]), vx.minimum(corners[2], corners[3]))
    hi = vx.maximum(vx.maximum(corners[0], corners[1]), vx.maximum(corners[2], corners[3]))
    return analysis.interval(lo, hi, a.needs, b.needs)


def _static(expr: Expr) -> int | None:
    """The value of an expression of constants (None: it names a value, or it overflows i64 on the way)."""
    if expr.op == "const":
        return expr.const
    if expr.op not in vx.BINARY:
        return None
    a, b = _static(expr.args[0]), _static(expr.args[1])
    if a is None or b is None:
        return None
    result = vx.BINARY[expr.op](a, b)
    return result if vx.INT64_MIN <= result <= vx.INT64_MAX else None


def _leaves(expr: Expr) -> bool:
    return expr.op in ("value", "len") or (expr.op in vx.BINARY and any(_leaves(a) for a in expr.args))


def _check(condition: Condition) -> frozenset[Condition] | None:
    """condition as needs: none if it holds statically, None if it fails statically."""
    if _leaves(condition.lhs) or _leaves(condition.rhs):
        return frozenset({condition})
    lhs, rhs = _static(condition.lhs), _static(condition.rhs)
    if lhs is None or rhs is None or lhs > rhs:
        return None
    return frozenset()


def _needs(expr: Expr) -> frozenset[Condition] | None:
    """That expr evaluates without overflowing."""
    return _check(vx.evaluable(expr))


def _needs_non_negative(expr: Expr) -> frozenset[Condition] | None:
    return _check(Condition(vx.const(0), expr))


def _combine(*needs: frozenset[Condition] | None) -> frozenset[Condition] | None:
    out: set[Condition] = set()
    for n in needs:
        if n is None:
            return None
        out |= n
    return frozenset(out)


def _subexpressions(expr: Expr) -> list[Expr]:
    out = [expr]
    if expr.op in vx.BINARY:
        for arg in expr.args:
            out.extend(_subexpressions(arg))
    return out


def _pruned(conditions: list[Condition]) -> list[Condition]:
    """Without the conditions that only say an expression evaluates where another condition evaluates it."""
    evaluated: set[Expr] = set()
    for c in conditions:
        if c != vx.evaluable(c.lhs):
            evaluated.update(_subexpressions(c.lhs))
            evaluated.update(_subexpressions(c.rhs))
    kept = []
    for c in conditions:
        if c == vx.evaluable(c.lhs) and c.lhs in evaluated:
            continue
        if c == vx.evaluable(c.lhs) and any(
            c.lhs in _subexpressions(o.lhs) and o is not c and o == vx.evaluable(o.lhs) for o in conditions
        ):
            continue
        kept.append(c)
    return kept


def _owns_across_iterations(trace: Trace) -> bool:
    """Does a slot hold an object the trace owns from one iteration to the next (an int object, a list it
    built: codegen.ownership)? The references a handover between the functions of a loop's copies would pass
    on are not worth it: such a loop gets no fast copy."""
    assert trace.end_snapshot is not None
    made = {u.out.id for u in trace.uops if u.out is not None and u.op.owns}
    ends = trace.end_snapshot.outer.slots.values()
    return any(v.kind is Kind.INT_OBJECT for v in [*trace.entry_slots.values(), *ends]) or any(
        v.id in made for v in ends
    )


def _may_change_lengths(uop: Uop) -> bool:
    if uop.name in _ELEMENT_STORES:
        return False
    return uop.name == "_CALL_TREE" or uop.op.mutates or uop.op.drops
