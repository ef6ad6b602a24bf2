"""A tree's loop and the side traces that come back to it, in one LLVM function (issue 9).

A side trace ends by tail-jumping into a tree's root. Where that is its own tree's root, compiled apart it costs,
at every iteration that takes it: a whole exit of the root (its loop's state written to the buffer, the exit's
tail, a jump through the links table), the side trace's loads from the buffer, and a new entry into the root's
function (its prologue, its loads, its hoisted guards, the fast copy's warm-up again). A loop whose branch goes
one way at every other iteration (collatz, ``if (i + j) & 1``, a histogram's values out of range) paid that at
every other iteration, and LLVM never saw the two ways of the loop together.

So such a side trace's function (its symbol is where the parent exit's link points) is built as::

    entry:       the side trace as compiled apart (its state from the buffer), whose end, instead of the
                 tail-jump, writes its state to the buffer and tail-calls the loop's function (``<symbol>_loop``,
                 of the same module), which is
    root_entry:  the root trace's entry (the fuel and slots from the buffer, its hoisted guards), then
    loop:        a copy of the root's loop, in which the guard whose exit the side trace hangs from branches,
                 when it fails, to a copy of the side trace's body that starts from the loop's values (SSA: no
                 buffer) and ends where the loop's iteration ends (``LowerContext.loop_latch``: at its top, its
                 values flowing into the loop's phis);
    fast copy:   (``_joined_fast``, ``<symbol>_fast``) where the root's loop has a fast copy that checks its
                 iterations, the same loop again as that fast copy, each side trace's body where its guard fails;
                 the loop's function goes on in it after a warm-up, and it hands an entry back to the loop's
                 function (not the side trace's entry: the state at the loop's top is in the buffer).

The parent exit is taken once per entry of the tree at most (from the root's function into this one); then both
ways of the loop run in one CFG, with the values in registers. The side traces of the same tree that were
installed before and come back the same way (``joinable``) are joined into the copy too, each as a copy of its
body at its own parent guard, so that the last side trace's function holds every way of the loop; each keeps its
own exits, exit counters and links (another side trace's are declared here and defined in its module, which the
linker finds by name). An exit inside a joined body writes the loop's state at the parent exit first, then the
side trace's own (``LowerContext.before_state``): the interpreter gets exactly the state it got from the parent
exit's stub followed by the side trace's exit. Exits of the root's copy are the root's (its numbers, counters
and links). What is not counted: the parent exit's counter, where the copy takes the side trace's way (it is no
exit any more).

What is joined (``joinable``): a side trace hanging from an exit of the root's loop body (not a hoisted guard, not
the periodic check, not an exit after an inner tree's call), that ends by a tail-jump into its own tree with an
empty stack, assigns only slots the root's loop carries (their values flow into the loop's phis) or never reads nor
assigns (values that are no pointer, which its end writes to the buffer, as compiled apart: the side trace reads
them from there), reads slots whose values the loop has at the exit with the kinds the side trace expects; neither
trace owns a reference (``codegen.ownership``) or makes a call that may run Python code (a barrier). Anything else
is compiled apart, as before. ``@jit(join_side_traces=False)`` turns it off (to compare the two).

Side traces under side traces (``JoinedSide.under``). A loop's third way is a side trace of its second where the
root was recorded on the first (an ``if``/``elif``/``else`` that went the ``if`` way then; a histogram whose sorted
values start below its bins: in range is the root's side trace, past them that one's). Such a side trace is joined
where the one it hangs from is, in that one's body, where its guard fails: it starts from that body's values at
the exit (the slots the side trace above assigned before it; any other as that one started: the loop's, or the
buffer's), its exits write the loop's state at the root's exit, then each side trace's above at its own exit, then
their own, as the interpreter got them from the traces apart, and it ends at the loop's top as any joined side
trace does. It is joinable on the same terms, and where the side traces above it are joined, none of them
assigned a slot the loop does not carry before the exit the next one hangs from (compiled apart, that exit writes
it to the buffer; joined, only a side trace's end writes such slots there), and the whole iteration on its way,
the root's part, each part above and its own, adds no more to each of the root's counters than its step
(``jit.optimizer.counters.joined_additions``). Before, the third way left the joined loop at every iteration that
took it, into a function of its own that tail-jumped into the root's, whose next exit that way went back into the
joined loop's function.

The fast copy (``codegen.function``: the root's loop without overflow or bounds checks while conditions hold; a
counted one with NumPy float operations checked once per run, ``codegen.function._guarded_run``) runs both ways of
the loop in one run: a histogram's loop (one value in seven out of range) ran in the checked copy alone before,
and went there at every call (257 us, Numba 118 us; now 166 us, with the runs checked at their end). Where the
root's loop has no fast copy with guards (none at all; or one with no guard, which the root's function enters
at once, or a merged one: ``_merged_fast``), the copy has none either, and goes back to the root's function
after ``QUIET`` iterations without a joined side trace (``codegen.function._check_quiet``): a way taken at every
few iterations stays joined, one taken once in a while costs an exit each time, as apart, and the loop runs in
its fast copy between.

If-converted (``if_convertible``): where one side trace is joined, hanging from a branch guard, and both ways are
plain int arithmetic and guards, taken each in at least ``IF_CONVERT_SHARE`` of the iterations so far, both ways
are computed in the loop's block: each way's guards leave only where that way is taken (``LowerContext.
predicate``), and the iteration's end selects each slot's next value, which LLVM makes a ``cmov`` (collatz's
parity: no branch to mispredict). Where the root has one copy of its loop, the loop's function is also an entry
of the tree that outer trees call (``loop_entry``).

Cost: the side trace's module holds a copy of the root's loop, compiled again (about the root's compile time;
``jit.stats``: ``compile_phases_ms``), once per side trace joined, and a second copy, its fast copy, where it has
one. Measured in one process (median of 3, loaded machine): LLVM's time for the side traces of collatz 64 -> 122
ms, nested2_branchy 65 -> 239 ms, the histogram's two 118 -> 571 ms; the whole function's compile time +12%, +17%
and +51%. The joined fast copy, in one process on the histogram: its whole compile time 160 -> 324 ms (its two
side traces 24 and 24 -> 87 and 126 ms, its root 42 -> 67 ms: its fast copy's runs checked at their end).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from llvmlite import ir

from codegen.context import LowerContext
from codegen.function import _build_fast, _guard_free, _lower, _Top, build, vectorizable
from codegen.ownership import Ownership
from jit.kinds import Kind
from jit.optimizer.counters import joined_additions
from jit.optimizer.merge import merged
from jit.resume import Hold, SlotResume, assigned_late, exit_resume, slots_at
from jit.trace import ExitPoint, Trace, TraceEnd, TraceKind, Uop, Value
from jit.uops import UOPS

#: uops whose exits never lead into a joined side trace: the periodic check (its exit is also the handlers'
#: exception), an inner tree's exit (its state is the inner tree's)
_NOT_JOINED = frozenset({"_CHECK_PERIODIC", "_GUARD_TREE_EXIT"})


@dataclasses.dataclass(frozen=True)
class JoinedSide:
    """A side trace of the tree, hanging from the root's exit parent (its index in ``root.exits()``), or, under
    another side trace of the plan (its symbol), from that one's exit parent (an index in its exits)."""

    trace: Trace
    symbol: str
    parent: int
    under: str | None = None


@dataclasses.dataclass(frozen=True)
class JoinPlan:
    """What a side trace's function may be joined with: its tree's root trace (symbol: its function's, whose
    counters and links the copy uses) and the side traces of the tree coming back to it, the one being
    compiled among them; libraries: the JIT libraries of the other side traces (their exits' globals)."""

    root: Trace
    root_symbol: str
    sides: tuple[JoinedSide, ...]
    libraries: tuple[str, ...] = ()
    #: the share of the root's iterations that took the way of the side trace being compiled, so far (its parent
    #: exit's count over the iterations of the tree's entries; None: not known), which ``if_convertible`` weighs
    taken_share: float | None = None


def parent_point(root: Trace, index: int) -> ExitPoint | None:
    exits = root.exits()
    return exits[index] if 0 <= index < len(exits) else None


def _stores_pinned_global(root: Trace, side: Trace) -> bool:
    """Does side store a global (an inlined helper's: ``jit.recorder.names``) that root's hoisted guards pin? The
    root was recorded before the global was read at each use; compiled apart, side tail-jumps into the root's
    function, whose entry checks its hoisted guards again."""
    stored = {uop.operand.name for uop in side.uops if uop.name == "_STORE_GLOBAL_CHECKED"}
    return bool(stored) and any(
        uop.name in ("_GUARD_GLOBAL", "_GUARD_MODULE_ATTR") and uop.operand.name in stored for uop in root.hoisted
    )


def joinable(root: Trace, side: Trace, parent: int, above: Sequence[tuple[Trace, int]] = ()) -> bool:
    """Can side, hanging from exit parent of root (index in root.exits()), be joined with root's loop? above: (a
    side trace under another one) the joined side traces it hangs under, from the root's down, each with the index
    of the exit it hangs from in the one before (the first: in root's exits); side hangs from exit parent of the
    last of them."""
    hosts = [root, *(trace for trace, _ in above)]
    exits = [*(index for _, index in above), parent]
    host = hosts[-1]
    point = parent_point(host, parent)
    if point is None or point.propagate or point.prewritten is not None:
        return False
    if root.kind is not TraceKind.ROOT or root.end is not TraceEnd.LOOP or root.end_snapshot is None:
        return False
    if side.kind is not TraceKind.SIDE or side.end is not TraceEnd.TREE or side.end_snapshot is None:
        return False
    if side.end_snapshot.outer.stack or not side.uops or side.uops[-1].name != "_JUMP_TO_TREE":
        return False
    if not any(uop.exit is point and uop.name not in _NOT_JOINED for uop in host.uops):
        return False
    if any(uop.exit is point for uop in host.hoisted):
        return False
    for trace in (root, side):
        if Ownership(trace).defined or any(uop.op.barrier for uop in (*trace.hoisted, *trace.uops)):
            return False
    if _stores_pinned_global(root, side):
        return False
    points = [parent_point(trace, index) for trace, index in zip(hosts, exits)]
    # (it would break the proof of root's counters)
    if joined_additions(root, side, points[0], list(zip(hosts[1:], points[1:]))) is None:  # type: ignore[arg-type]
        return False
    root_end = root.end_snapshot.outer.slots
    carried = {slot: v.kind for slot, v in root.entry_slots.items() if root_end.get(slot) is not v}
    late = {slot: v.kind for slot, v in assigned_late(root).items()}
    side_end = side.end_snapshot.outer.slots
    for slot in side.written:
        value = side_end.get(slot)
        if value is None:
            return False
        if slot in carried or slot in late:
            if value.kind != carried.get(slot, late.get(slot)):
                return False
        elif slot in root.entry_slots or value.kind.is_pointer or value.kind == Kind.WIDE_INT:
            return False  # (the loop holds what it read there; a reference the buffer may own; not a word)
    # the state where side starts: at the root's exit, then as each side trace above it left it at the next exit
    holds: dict[int, SlotResume] = {}
    for trace, point in zip(hosts, points):
        at = slots_at(trace, point.snapshot)  # type: ignore[union-attr]
        if trace is not root:
            at = _assigned(trace, at)
            # (a slot the loop does not carry that a side trace above assigned before the exit: compiled apart, the
            # exit wrote it to the buffer; joined, only a side trace's end writes such slots there)
            if any(slot not in carried and slot not in late for slot in at):
                return False
        holds.update(at)
    for slot, kind in late.items():  # (one the side trace leaves as the exit had it: of the loop's kind there too)
        if slot not in side.written:
            value = side_end.get(slot)
            if value is None and slot in holds:
                value = holds[slot].value
            if value is not None and value.kind != kind:
                return False
    for slot, value in side.entry_slots.items():
        state = holds.get(slot)
        if state is not None:
            if state.hold is not Hold.VALUE or state.value is None or state.value.kind != value.kind:
                return False
        elif slot in root.entry_slots and root.entry_slots[slot].kind != value.kind:
            return False
    (frame,) = exit_resume(host, point.snapshot)
    if len(frame.stack) != len(side.start_stack):
        return False
    return all(frame.stack[index].kind == value.kind for index, value in side.entry_stack.items())


def joined_parts(plan: JoinPlan) -> list[tuple[JoinedSide, ExitPoint, Uop]]:
    """The side traces of plan that are joined with its loop (``joinable``; one under another side trace only
    where that one is), each with the exit point it hangs from and that exit's guard, in plan's order."""
    by_symbol = {part.symbol: part for part in plan.sides}
    chains: dict[str, tuple[tuple[Trace, int], ...]] = {}
    out = []
    for part in plan.sides:
        if part.under is None:
            above: tuple[tuple[Trace, int], ...] = ()
            host = plan.root
        elif part.under in chains:
            above = chains[part.under]
            host = by_symbol[part.under].trace
        else:  # (under a side trace that is not joined)
            continue
        point = parent_point(host, part.parent)
        if point is None or not joinable(plan.root, part.trace, part.parent, above):
            continue
        chains[part.symbol] = (*above, (part.trace, part.parent))
        out.append((part, point, next(uop for uop in host.uops if uop.exit is point)))
    return out


def _assigned(side: Trace, holds: dict[int, SlotResume]) -> dict[int, SlotResume]:
    """Of a side trace's state at one of its exits (holds), the slots it assigned before it (another slot holds
    what it held where the side trace started: the buffer's, or the value it read there)."""
    return {
        slot: state
        for slot, state in holds.items()
        if state.hold is Hold.VALUE and state.value is not side.entry_slots.get(slot)
    }


def build_joined(ctx: LowerContext, plan: JoinPlan) -> list[str]:
    """Lower ctx's side trace as the entry of its tree's loop joined with plan's side traces (see the module's
    docstring); return the symbols of the side traces joined (ctx's own among them)."""
    b = ctx.builder
    side = ctx.trace
    # the loop's own function, which the side trace's end goes on in, and which the loop's fast copy hands an
    # entry back to (its state at the loop's top in the buffer, as the side trace's end writes it)
    holder = LowerContext(side, ctx.layout, loop_symbol(ctx.symbol), "", "", sibling_of=ctx)
    holder.globals, holder.builtins = ctx.globals, ctx.builtins

    def into_loop(uop: Uop) -> None:  # (the end of the side trace as it is: its state to the buffer)
        assert side.end_snapshot is not None
        ctx.hand_over_end(side.end_snapshot)
        ctx.store_fuel()
        b.ret(b.call(holder.function, [ctx.buf], tail="musttail"))

    ctx.rejoin = into_loop
    build(ctx)
    ctx.rejoin = None
    loop = LowerContext(plan.root, ctx.layout, plan.root_symbol, "", "", host=holder)
    joined = joined_parts(plan)
    symbols = [part.symbol for part, _, _ in joined]
    enter = _merged_fast(ctx, plan, symbols)
    # (one side trace, both ways plain arithmetic: computed both, in the checked loop and its fast copy)
    converted = (
        enter is None
        and len(joined) == 1
        and IF_CONVERT_SHARE <= (plan.taken_share or 0.0) <= 1 - IF_CONVERT_SHARE
        and if_convertible(plan.root, joined[0][0].trace, joined[0][2])
    )
    warm = _joined_fast(ctx, holder, plan, joined, converted) if enter is None else None
    _join_sides(holder, loop, joined, converted)
    if warm is None and plan.root.versioning is not None and any(uop.fast is not None for uop in plan.root.uops):
        loop.back_to_root = plan.root_symbol  # (its fast copy: codegen.function._check_quiet)
    build(loop, fast_copy=False, enter=enter, warm=warm)
    # (declared in the vectorized copy's module: codegen.function.module_texts; or, a loop of one copy, what an
    # outer tree calls instead of the root's function: ``loop_entry``)
    if ctx.vectorized is not None or loop_entry(plan.root, symbols):
        holder.function.linkage = ""
    return symbols


def loop_symbol(symbol: str) -> str:
    """The loop's function in the module of the side trace named symbol, joined with its tree's loop."""
    return f"{symbol}_loop"


def loop_entry(root: Trace, joined: list[str]) -> bool:
    """Is the loop's function of a side trace joined with root's loop (the side traces joined: joined) an entry
    of the tree, which an outer tree calls instead of the root's function (``runtime.trees.Tree.call_symbol``)?
    Where the root has one copy of its loop (no fast copy, no tree call entry): the loop's function is then the
    root's loop with the side traces in it, entered as the root's function is (its fuel and slots from the buffer,
    its hoisted guards), and leaving by the root's exits. An inner loop entered at every outer iteration whose
    branch soon takes the side trace's way (collatz: a start's first odd value) otherwise leaves the root's
    function once per entry, into the side trace's function, then this one."""
    return bool(joined) and root.versioning is None and root.range_counter() is None


def _joined_fast(
    ctx: LowerContext,
    holder: LowerContext,
    plan: JoinPlan,
    joined: list[tuple[JoinedSide, ExitPoint, Uop]],
    converted: bool = False,
) -> tuple[ir.Function, ir.GlobalVariable] | None:
    """Where the root's loop has a fast copy that checks each iteration (its body has guards: a branch the side
    traces hang from), a fast copy of the loop joined with them: the root's fast copy (``codegen.function.
    _build_fast``: its range's checks and the proven ones left out), each joined side trace lowered where its
    guard fails, as in the checked loop, and ending where an iteration of the fast copy ends (a counted run goes
    on). A function of ctx's module (its globals named after ctx's function: ``jit.stats`` counts its runs as the
    side trace's ``fast_runs``), whose exits are the root's, and which hands an entry back to the loop's function
    (holder's). The loop's function goes on in it after a warm-up, as a root's in its own fast copy, instead of
    going back to the root's function where no joined side trace ran for a while: a loop whose branch goes
    each way often (a histogram's values out of range, one in seven) ran in the checked copy alone before.
    None where the root has no such fast copy (none at all, or one with no guard, entered at once). converted:
    the one side trace is computed with the root's way, in the same block (``if_convertible``)."""
    root = plan.root
    if not joined or root.versioning is None or not any(uop.fast is not None for uop in root.uops):
        return None
    if _guard_free(root):
        return None
    main = LowerContext(root, ctx.layout, plan.root_symbol, "", "", host=holder)  # (the root's counters and links)
    main.symbol = ctx.symbol

    def join(fast: LowerContext) -> None:
        fast.recorded_way = True
        _join_sides(fast, fast, joined, converted)

    fast, refused = _build_fast(main, join=join, sides=tuple(part.trace for part, _, _ in joined))
    if main.vectorized is not None:  # (its own module: codegen.function.module_texts)
        ctx.vectorized = main.vectorized
    return fast, refused


def _merged_fast(
    ctx: LowerContext, plan: JoinPlan, joined: list[str]
) -> tuple[ir.Function, ir.GlobalVariable, dict[int, Kind]] | None:
    """Where the loop joined with one side trace merges with it (``jit.optimizer.merge``: both ways computed, a
    choice of the values) into a loop whose fast copy is vectorized: that fast copy, a function of ctx's module
    (its globals named after ctx's function: ``jit.stats`` counts its runs as the side trace's ``fast_runs``),
    whose exits are the root's (its exit counters and links) and which hands an entry back to the root's
    function; its ``refused``; the kinds of the slots it reads that the loop does not. Else None."""
    (part,) = [side for side in plan.sides if side.symbol in joined] if len(joined) == 1 else [None]
    point = parent_point(plan.root, part.parent) if part is not None else None
    if part is None or point is None:
        return None
    loop = merged(plan.root, part.trace, point)
    if loop is None or not vectorizable(loop) or not any(uop.fast is not None for uop in loop.uops):
        return None
    main = LowerContext(loop, ctx.layout, plan.root_symbol, "", "", host=ctx)  # (the root's counters and links)
    main.symbol = ctx.symbol
    main.function = ctx.tree_function(plan.root_symbol)
    fast, refused = _build_fast(main)
    if main.vectorized is None:  # (not counted after all: the checks of a run are the joined loop's)
        return None
    ctx.vectorized = main.vectorized
    ctx.trace.merged = loop  # (for jit.dump)
    return fast, refused, loop.extra_slots


#: uops computed on a way not taken, in an if-converted loop (``if_convertible``): their lowering reads no memory,
#: has no effect and cannot trap on any input (an overflow's poison goes only into a select), and their guards go
#: through ``LowerContext.guard``; a division or remainder only by a constant other than 0 and -1
_SPECULABLE = frozenset(
    {
        "_BINARY_OP_ADD_INT",
        "_BINARY_OP_SUBTRACT_INT",
        "_BINARY_OP_MULTIPLY_INT",
        "_BINARY_OP_ADD_INT_IN_RANGE",
        "_BINARY_OP_SUBTRACT_INT_IN_RANGE",
        "_BINARY_OP_MULTIPLY_INT_IN_RANGE",
        "_BINARY_OP_AND_INT",
        "_BINARY_OP_OR_INT",
        "_BINARY_OP_XOR_INT",
        "_BINARY_OP_AND_BOOL",
        "_BINARY_OP_OR_BOOL",
        "_BINARY_OP_XOR_BOOL",
        "_BINARY_OP_RSHIFT_INT",
        "_GUARD_INT_RANGE",
        "_INT_RANGE_PROVEN",
        "_COMPARE_OP_INT",
        "_TO_BOOL_INT",
        "_UNARY_NOT",
        "_CONVERT_BOOL_TO_INT",
        "_GUARD_IS_TRUE_POP",
        "_GUARD_IS_FALSE_POP",
        "_GUARD_NONZERO_INT",
        "_UNARY_NEGATIVE_INT",
        "_UNARY_NEGATIVE_INT_IN_RANGE",
        "_UNARY_INVERT_INT",
    }
)
_DIVISIONS = frozenset({"_BINARY_OP_FLOOR_DIVIDE_INT", "_BINARY_OP_REMAINDER_INT"})
#: the least share of the iterations taking each way (the side trace's: ``JoinPlan.taken_share``) for the two ways
#: to be computed both: a branch one way most of the time is predicted, and a select then costs the other way's
#: work and its latency at each iteration (measured in one process: a while loop whose root's way is taken once in
#: 64 iterations 2x slower if-converted, one whose side way is taken once in 256, with three multiplications, 2.6x;
#: collatz, about one in three, 11% faster)
IF_CONVERT_SHARE = 1 / 8
_BRANCHES = frozenset({"_GUARD_IS_TRUE_POP", "_GUARD_IS_FALSE_POP"})


def _speculable(uop: Uop) -> bool:
    if uop.name in _DIVISIONS:
        divisor = uop.args[1]
        return divisor.is_const and type(divisor.const) is int and divisor.const not in (0, -1)
    return uop.name in _SPECULABLE


def if_convertible(root: Trace, side: Trace, guard: Uop) -> bool:
    """Can the loop joined with side alone (hanging from root's branch guard) compute both ways in one block (an
    if-conversion: no branch on the data, where the branch is a coin toss at each iteration, as collatz's
    parity)? Where both ways, the root's after the guard and the side trace's, are plain int arithmetic and
    guards (``_SPECULABLE``), and the side trace assigns only slots the loop carries (no store to the buffer)."""
    if guard.name not in _BRANCHES or side.hoisted:
        return False
    after = root.uops[root.uops.index(guard) + 1 :]
    if not after or after[-1].name != "_JUMP_TO_TOP" or not all(_speculable(uop) for uop in after[:-1]):
        return False
    if not side.uops or side.uops[-1].name != "_JUMP_TO_TREE":
        return False
    if not all(_speculable(uop) for uop in side.uops[:-1]):
        return False
    assert root.end_snapshot is not None
    root_end = root.end_snapshot.outer.slots
    carried = {slot for slot, v in root.entry_slots.items() if root_end.get(slot) is not v}
    return side.written <= carried | set(assigned_late(root))


def _choose(loop: LowerContext, way: ir.Value, root: _Top, side: _Top) -> _Top:
    """The state at the next iteration's top of an if-converted loop: the root's where way holds, else the side's."""
    b = loop.builder

    def pick(a: ir.Value, c: ir.Value) -> ir.Value:
        return a if a is c else b.select(way, a, c)

    values = {slot: pick(value, side.values[slot]) for slot, value in root.values.items()}
    flags = {}
    for slot, (assigned, value) in root.flags.items():
        other_assigned, other = side.flags[slot]
        flags[slot] = (pick(assigned, other_assigned), pick(value, other))
    quiet = root.quiet if root.quiet is None or side.quiet is None else pick(root.quiet, side.quiet)
    return _Top(values, flags, pick(root.fuel, side.fuel), quiet=quiet)


def _join_sides(
    ctx: LowerContext, loop: LowerContext, joined: Sequence[tuple[JoinedSide, ExitPoint, Uop]], converted: bool
) -> None:
    """Lower each joined side trace where the loop's guard of its parent exit fails (loop: the context whose
    guards those are), if-converted or as a branch of its own; one under another side trace where that one's
    guard fails, in its body."""
    for part, point, guard in joined:
        if part.under is None:
            lower = _joined_side(ctx, loop, part, point, guard, joined)
            (loop.if_converted if converted else loop.joined)[id(point)] = lower


@dataclasses.dataclass(frozen=True)
class _Above:
    """(A side trace joined under another) the body of the side trace it hangs from, and how that one's start is
    seen from the loop: the value of a slot it did not read (``start``), and the flag of a slot assigned late
    (``flag``)."""

    body: LowerContext
    start: Callable[[int, object], ir.Value]
    flag: Callable[[int, tuple[ir.Value, ir.Value]], tuple[ir.Value, ir.Value]]
    #: the root's exit the first side trace above hangs from; each side trace above, with the exit of it the
    #: next one hangs from (``joined_additions``)
    first: ExitPoint
    through: tuple[tuple[Trace, ExitPoint], ...]


def _joined_side(
    ctx: LowerContext,
    loop: LowerContext,
    part: JoinedSide,
    point: ExitPoint,
    guard: Uop,
    joined: Sequence[tuple[JoinedSide, ExitPoint, Uop]],
    above: _Above | None = None,
) -> Callable[..., None]:
    """What lowers part's body where the loop's guard of point fails (``LowerContext.joined``). Where that is a
    branch guard, the body knows its input's truth (a side trace starts by guarding it again: LLVM folds that).
    Given the guard's condition (``LowerContext.if_converted``: ``if_convertible``), it lowers the body in the
    loop's block instead, each of its guards leaving only where the guard fails (the side's way is taken), and
    the root's way after it the same where it holds; the iteration's end chooses each slot's next value. above:
    (a side trace under another, ``JoinedSide.under``) the guard is that one's, in its body: part starts from its
    values there, and its exits write the loop's state at the root's exit, then that one's at its exit, then their
    own. The side traces joined under part are lowered in its body the same way (joined: every part)."""
    parent = loop if above is None else above.body  # (the context whose guard the side trace hangs from)
    failed = {}
    if guard.op.condition is not None and guard.args and not guard.args[0].is_const:
        failed[guard.args[0].id] = ir.Constant(ir.IntType(1), int(not guard.op.condition))

    def known(value: Value) -> ir.Value:
        """A value of the loop (or of the side trace above), as the side trace starts from it."""
        constant = failed.get(value.id)
        return constant if constant is not None else parent.value(value)

    def lower(way: ir.Value | None = None) -> None:
        side = part.trace
        here, _ = loop.loop_top  # type: ignore[misc]
        body = LowerContext(side, ctx.layout, part.symbol, "", "", host=ctx)
        branch_position = loop.position
        if way is not None:  # (if-converted: the side's way is taken where the guard fails)
            body.predicate = ctx.builder.not_(way)
            body.branch_exit = (loop, point, branch_position)
        holds = slots_at(parent.trace, point.snapshot)
        if above is not None:  # (the slots the side trace above assigned; the others, as where it started)
            holds = _assigned(parent.trace, holds)

        def start(slot: int, kind: object) -> ir.Value:
            """The value slot holds at the exit: the loop's (or the side trace's above), or (a slot neither
            reads nor assigns) the buffer's."""
            state = holds.get(slot)
            if state is not None:
                assert state.value is not None
                return known(state.value)
            entry = parent.trace.entry_slots.get(slot)
            if entry is not None:
                return known(entry)
            if above is not None:
                return above.start(slot, kind)
            return loop.load_slot(slot, kind)  # type: ignore[arg-type]

        def flag(slot: int, flag: tuple[ir.Value, ir.Value]) -> tuple[ir.Value, ir.Value]:
            """The flag of a slot assigned late as the side trace starts (flag: the loop's at its top)."""
            state = holds.get(slot)
            if state is not None and state.hold is Hold.VALUE:
                assert state.value is not None
                return (ir.Constant(ir.IntType(1), 1), parent.value(state.value))
            return above.flag(slot, flag) if above is not None else flag

        for slot, value in side.entry_slots.items():
            body.values[value.id] = start(slot, value.kind)
        (frame,) = exit_resume(parent.trace, point.snapshot)
        for index, value in side.entry_stack.items():
            body.values[value.id] = known(frame.stack[index])
        body.fuel = parent.fuel if parent.fuel is not None else ir.Constant(ir.IntType(64), 0)
        # an exit of the body: the loop's state at the parent exit first (and the side trace's above at its exit,
        # which writes the loop's first), the side trace's own after
        body.before_state = lambda: parent.materialize(point.snapshot, stack=False)
        for child, child_point, child_guard in joined:
            if child.under == part.symbol:
                first = above.first if above is not None else point
                through = (*(above.through if above is not None else ()), (side, child_point))
                below = _Above(body, start, flag, first, through)
                body.joined[id(child_point)] = _joined_side(ctx, loop, child, child_point, child_guard, joined, below)

        def back(uop: Uop) -> None:
            """The side trace's end: its values into the loop's phis, and on at the loop's top."""
            assert side.end_snapshot is not None
            end = side.end_snapshot.outer.slots
            values = {}
            for slot in here.values:
                value = end.get(slot)
                values[slot] = body.value(value) if value is not None else start(slot, None)
            flags = {}
            for slot, at_top in here.flags.items():
                value = end.get(slot) if slot in side.written else None
                if value is not None:
                    flags[slot] = (ir.Constant(ir.IntType(1), 1), body.value(value))
                else:  # (not assigned by the side trace: as at its start)
                    flags[slot] = flag(slot, at_top)
            # (a slot the loop neither reads nor assigns: in the buffer, as the side trace's end writes it)
            outside = sorted(side.written - set(here.values) - set(here.flags))
            assert not (outside and way is not None), "if-converted with a store"
            body.store_loop_state({slot: (end[slot].kind, body.value(end[slot])) for slot in outside})
            assert body.fuel is not None
            quiet = body.fuel if here.quiet is not None else None  # (a joined side trace ran: codegen.function.QUIET)
            assert loop.loop_latch is not None  # (on as the loop's own iteration ends: a counted run counts it)
            if way is None:
                loop.loop_latch(_Top(values, flags, body.fuel, quiet=quiet))
            else:  # (the root's way goes on in this block; its end chooses between the two: _choose)
                latch = loop.loop_latch
                mine = _Top(values, flags, body.fuel, quiet=quiet)

                def choose(after: _Top) -> None:
                    loop.predicate, loop.branch_exit, loop.loop_latch = None, None, latch
                    latch(_choose(loop, way, after, mine))

                loop.loop_latch = choose
                loop.predicate, loop.branch_exit = way, (loop, point, branch_position)

        body.rejoin = back
        for uop in side.hoisted:  # (checked at each entry of the side trace compiled apart: here too)
            _lower(body, uop)
        # (an addition to a counter of the loop that the loop's guard proves, jit.optimizer.counters: unchecked)
        if above is None:
            proven = joined_additions(loop.trace, side, point) or frozenset()
        else:
            proven = joined_additions(loop.trace, side, above.first, above.through) or frozenset()
        for position, uop in enumerate(side.uops):
            if id(uop) in proven:
                unchecked = UOPS[uop.op.unchecked]  # type: ignore[index]
                uop = Uop(unchecked, uop.args, uop.out, uop.operand, uop.pc, uop.line)
            _lower(body, uop, position)
        assert body.deferred is None
        assert way is None or loop.predicate is way, "an if-converted side trace that did not come back"

    return lower


__all__ = ["JoinPlan", "JoinedSide", "build_joined", "joinable", "joined_parts", "loop_entry", "loop_symbol"]
