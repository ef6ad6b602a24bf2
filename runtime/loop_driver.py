"""The loop driver: ``RT`` of the instrumented code (``jit.frontend.instrument``), running a loop that CPython
hands over in the tier-1 interpreter, where the JIT hooks of ``jit.function.JitFunction`` enter native code
at hot loop headers and record traces, and handing it back.

Policy (a reference for now): CPython counts a loop's iterations; after ``threshold`` of them (as the
interpreter counts back-edges; the first time, after its warm-up: ``warmup_count``) the loop is hot and is handed over at the start of the next one's body; from then on each start of the loop is handed over at its header. At
the loop's own header the monitor is asked: if it enters native code or starts recording, the driver goes on;
otherwise CPython takes the loop back (CONTINUE) and counts again for the monitor's cooldown (or the
threshold). A loop blacklisted without a tree runs plain for a number of loop starts that doubles each time (up
to ``MAX_BACKOFF``), then is reprobed: handed over again, it may record once more (``Monitor.reprobe``), so
no decision not to compile is for good. Loops nested in the handed-over loop run inside the driver (and the JIT).

Entries that pay: a hand-off and a native entry cost microseconds, which a loop's native iterations must win
back. Over every ``PAY_WINDOW`` hand-offs that entered native code without recording anything (so side traces
have had their chance; nor while another thread records or compiles the loop: its own tree is on its way), or
fewer hand-offs that made ``PAY_ENTRIES`` native entries between them (a loop whose every iteration leaves native
code and enters it again: one such hand-off is evidence enough), the driver counts the iterations native code ran
per native entry (the monitor counts them exactly, from the fuel; never wall time, so tests stay deterministic).
Fewer than the option
``min_native_iterations`` on average: the loop runs plain in CPython for a number of loop starts that doubles
each time it is found not to pay (up to ``MAX_PAY_BACKOFF``, never for good: a change of behaviour wins it back);
a window that pays resets the back-off. ``min_native_iterations=0`` turns this off.

Parking: once either back-off has been at its longest, the loop is parked instead (``runtime.parking``): new
calls run a version of the code in which the loop has no counter at all, until enough garbage collections
have passed for the loop to be tried again.
"""

from __future__ import annotations

import itertools
import operator
import sys
import types
import weakref
from typing import Any

from jit.frontend.instructions import FOR_ITER, FOR_RANGE, POP_JUMP_IF_FALSE, POP_JUMP_IF_TRUE, LoopInfo
from jit.frontend.instrument import BREAK, CONTINUE, COUNT_BY_LENGTH, EXHAUSTED, NEVER, RETURN
from jit.lifecycle import Phase
from jit.trace import WhenHot
from runtime import consumers, parking
from runtime.errors import (
    HANDOFF_NOTE,
    fix_handoff_traceback,
    generator_raised,
    internal,
    loop_driver,
    own_frame_entries,
    own_frame_loops,
    own_frames_at,
    raise_in_comprehension,
    unwind_handoff,
)
from runtime.frame import UNBOUND, Frame
from runtime.handoff import enter, leave
from runtime.interpreter import loop_view, range_exhausted, resume_loop, run_loop, sequence_exhausted

FIRST_BACKOFF = 16  # loop starts a blacklisted loop runs plain before it is probed again
MAX_BACKOFF = 2**10  # the longest back-off of a blacklisted loop, in loop starts; the next one parks it
MIN_COUNTED = 32  # iterations CPython counted, at least, before their number per start says a loop's starts are short
MIN_STARTS = 4  # ended loop starts CPython counted, at least, before their iterations per start say they are short
PAY_WINDOW = 8  # hand-offs with native entries judged together by the policy of entries that pay
PAY_ENTRIES = 64  # native entries that end a window early (however few hand-offs made them)
MAX_PAY_BACKOFF = 2**10  # the longest back-off of a loop whose entries did not pay; the next one parks it
#: what a hand-off that ends in an exception costs more than one that ends at the loop's end, in native entries
#: (``count_raised``): 3.2-5.5 us more than under CPython (native code's exit, the interpreter running the failing
#: instruction again, the traceback and locals made CPython's; measured on tuple_setitem, type_error_add,
#: first_bad, int_parse of the probe), over the 0.8 us of a hand-off's round trip that min_native_iterations is for
EXCEPTION_ENTRIES = 7

_UNBOUND_ID = id(UNBOUND)
# where native code leaves a for loop at its end (the instruction after its header), by that instruction's opcode:
# the test that the loop has ended there
#: iterators that give no item once their ``__length_hint__`` (which does not move them) is 0: those of str, bytes,
#: dicts and sets (exhausted for good once their next has found so, or raising again what it raised: a dict or set
#: that changed size), of lists and tuples (whose length hint is what is left of them now) and of ranges
_DONE_WHEN_HINTED = frozenset(
    type(it)
    for it in (
        *(iter(""), iter("\u0101"), iter(b""), iter({}), iter({}.values()), iter({}.items()), iter(set())),
        *(iter([]), iter(()), iter(range(0)), reversed([])),
    )
)
_DONE = object()


def surely_done(it: Any) -> bool:
    """Can iterator it's next give no item now (it may still raise)? One of ``_DONE_WHEN_HINTED`` whose length
    hint is 0, an enumerate of such an iterator, a zip of which one is such (its next takes from each in turn, and
    stops at that one at the latest)."""
    kind = type(it)
    if kind in _DONE_WHEN_HINTED:
        return not it.__length_hint__()
    if kind is enumerate:
        return surely_done(it.__reduce__()[1][0])
    if kind is zip:
        return any(surely_done(part) for part in it.__reduce__()[1])
    return False


def for_exhausted(slots: list[Any], base: int) -> bool:
    """Has the for loop whose hidden slots start at base ended, where native code left it at its FOR_ITER by an
    exit that ends the loop where it has ended? A list or tuple walked by index: ``sequence_exhausted``. An iterator
    (a str's, a dict's, an enumerate or zip of lists) that ``surely_done`` says gives no item: FOR_ITER's next, asked
    here (ended where it gives nothing; what it raises, it raises: the loop driver shows it at the FOR_ITER, with the
    locals as they are); any other iterator: not ended (the interpreter runs FOR_ITER, which asks it)."""
    it = slots[base + 2]
    if it is None:
        return sequence_exhausted(slots, base)
    if not surely_done(it):
        return False
    return next(it, _DONE) is _DONE


_END_TESTS: dict[int, Any] = {FOR_RANGE: range_exhausted, FOR_ITER: for_exhausted}


# (for judge's usual case, inline in loop: a loop state neither recording nor compiling, without reading the
# property, a Python call)
_IDLE = Phase.IDLE


class _Window:
    """One loop's window of the policy of entries that pay (``LoopRuntime.judge``): the hand-offs, native entries
    and native iterations counted so far, and the hand-offs that ended in an exception (``raised``). ``room``: the
    hand-offs of one native entry each it may still count
    without ending; ``LoopRuntime.loop`` counts those inline, in room and iterations only (two steps where judge
    takes a Python call), and ``count`` adds them to the hand-offs and entries."""

    __slots__ = ("room", "iterations", "handoffs", "entries", "counted_room", "raised")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Start a new window."""
        self.handoffs = self.entries = self.iterations = self.raised = 0
        self.room = self.counted_room = min(PAY_WINDOW, PAY_ENTRIES) - 1

    def count(self, entries: int, iterations: int) -> bool:
        """Count one hand-off (its native entries, at least one, and their iterations): whether the window has
        ended (then its figures are the whole window's)."""
        inline = self.counted_room - self.room  # (hand-offs loop counted inline since: one entry each)
        self.handoffs += inline + 1
        self.entries += inline + entries
        self.iterations += iterations
        self.room = self.counted_room = max(0, min(PAY_WINDOW - 1 - self.handoffs, PAY_ENTRIES - 1 - self.entries))
        return self.handoffs >= PAY_WINDOW or self.entries >= PAY_ENTRIES


class _NoState:
    """A plan's loop state while the monitor has made none: never idle, so that loop asks judge itself."""

    __slots__ = ()
    phase = None
    waiting_on = None


_NO_STATE = _NoState()


class _Plan:
    """A loop's hand-off into native code, planned for its trees as they are (``TreeRegistry.plans``): what the
    per-entry path of ``LoopRuntime.loop`` needs, looked up once. The entries count themselves natively
    (``NativeRunner.handoff_calls``)."""

    __slots__ = (
        "monitor",
        "graveyard",
        "runner",
        "spill",
        "calls",
        "ways",
        "info",
        "builds",
        "boosts",
        "base",
        "ended",
        "tiering",
        "window",
        "state",
    )


def finish_comprehension(built: Any, rest: Any) -> Any:
    """A comprehension handed over and given back part way: what tier 1 built, with what CPython built of the rest
    (a dict's later keys win, in their first place, as in one comprehension)."""
    if type(built) is list:
        built.extend(rest)
    else:
        built.update(rest)
    return built


def cell_of(function: types.FunctionType) -> types.CellType:
    """The cell of a function's one free variable: how the instrumented code passes a cell variable's cell
    (``jit.frontend.instrument``: Python code has no other way to name it)."""
    closure = function.__closure__
    assert closure is not None
    return closure[0]


class CodeHooks:
    """The ``RT`` constant of one function's instrumented code: its loop runtime's counters (``LOOPS``), the
    builtins the code reads, and ``runtime``, a weak reference to the runtime, whose ``loop`` a hand-off calls.

    Why not the runtime itself: CPython's garbage collector does not see a code object's constants (code objects
    are not tracked), so a constant that led back, through the runtime, to the function running that code made
    a cycle the collector could not break: every ``@jit`` function, its trees and their machine code lived as
    long as the process, also after the user dropped the function. These hooks lead nowhere: the function holds
    its runtime, the runtime its code, and the code only these. (The weak reference costs a hand-off one C call;
    a property would add a Python call. Code runs only while its function, and so its runtime, is alive: a frame
    holds its function.)
    """

    __slots__ = ("counters", "starts", "skips", "began", "boost", "ticks", "runtime")

    iter = staticmethod(iter)
    hint = staticmethod(operator.length_hint)
    repeat = staticmethod(itertools.repeat)
    cell = staticmethod(cell_of)
    extend = staticmethod(finish_comprehension)
    consumer_is = staticmethod(consumers.consumer_is)
    consumed = staticmethod(consumers.consumed)
    consume_rest = staticmethod(consumers.consume_rest)
    unbound = UNBOUND
    name_error = NameError
    base_exception = BaseException
    recursion_error = RecursionError
    fix = staticmethod(fix_handoff_traceback)
    unwound = staticmethod(unwind_handoff)

    def __init__(self, runtime: LoopRuntime) -> None:
        # (the same lists as the runtime's: the code and the driver count in them together)
        self.counters = runtime.counters
        self.starts = runtime.starts
        self.skips = runtime.skips
        self.began = runtime.began
        self.boost = runtime.boost
        # per loop: what a comprehension's counted copy counts its iterations with (jit.frontend.instrument)
        self.ticks = [itertools.count(1).__next__ for _ in runtime.counters]
        self.runtime = weakref.ref(runtime)


#: the tier-1 instructions of the smallest loop body (``s += i``, and the jump back): the weight of one
SIMPLEST_BODY = 5


def body_weight(code: Any, index: int) -> float:
    """What an iteration of loop ``index`` is worth in ``min_native_iterations``: the tier-1 instructions of its
    own body (less its inner loops) over those of the smallest body (at least 1), the smallest of it and its inner
    loops' (their iterations count too). An iteration's cost in CPython grows with its body, while a native
    entry's does not: ``check += out[k, j]`` (11 instructions, 87 ns an iteration in CPython, where ``s += j``
    takes 14) counts 11/5 of one (``trace_weight`` may make that less, once the loop has a tree)."""
    loops = code.loops
    family = [index]
    for loop in loops:
        if loop.parent is not None and loop.parent in family:
            family.append(loop.index)

    def own(i: int) -> int:
        loop = loops[i]
        nested = sum(inner.body_end - inner.header_pc for inner in loops if inner.parent == i)
        return loop.body_end - loop.body_pc - nested

    return max(1.0, min(own(i) for i in family) / SIMPLEST_BODY)


#: the iterations after which a warming loop with no loop in it is judged by its starts (``starts_too_short``): a loop
#: whose starts are too short for native entries to pay goes back to CPython's plain copy (and its back-off) then,
#: not after the whole warm-up in the counted copy
WARMUP_CHECK = COUNT_BY_LENGTH  # (where the counted copy's counting by length hints starts: it is all warm-up)

#: the longest count CPython is given (its specialized int operations take one-digit ints, below 2**30)
LONGEST_COUNT = 2**30 - 1


def warmup_count(function: Any, loop: LoopInfo) -> int:
    """The iterations CPython's counted copy runs `loop` before its first hand-off: the option ``warmup`` over
    what an iteration of its body is worth (its tier-1 instructions, inner loops' included once, over the smallest
    body's), or ``threshold`` if that is more. Recording and compiling a trace costs 10-50 ms, an ``s += i``
    iteration in CPython 14 ns: a loop that runs fewer iterations than that in a process never pays for its code
    (ski rental: CPython's time until the JIT starts is at most the compile time the JIT then spends). An outer
    loop need not wait out its own count: once an inner loop runs native code the outer loop gets hot at its next
    iteration (the instrumented code's boost)."""
    threshold = function.hot_threshold
    warmup = function.options.warmup
    if warmup <= threshold:
        return threshold
    weight = max(1.0, (loop.body_end - loop.body_pc) / SIMPLEST_BODY)
    return min(max(threshold, int(warmup / weight)), LONGEST_COUNT)


#: parts of the names of uops whose work native code does much as CPython does (hashing, building str and other
#: objects, calls into C or Python code, a builtin iterator's next, ints past 64 bits): an iteration saves little on
#: them (a dict count loop, ``d[w] = d.get(w, 0) + 1``, 11 tier-1 instructions, saves a quarter of its 50 ns in
#: native code, ``s += i`` nearly all of its 14 ns), so ``trace_weight`` leaves them out; and guards, which are
#: native code's own work, not CPython's
HEAVY_UOPS = (
    "DICT", "STR", "BUILD", "FORMAT", "CALL_METHOD", "CALL_GENERIC", "CONTAINS", "SET_ADD", "SLICE",
    "MAKE_FUNCTION", "NEW_", "WIDE", "GENERIC", "CALL_TREE", "INT_OBJECT", "ITER_NEXT_BUILTIN", "_GUARD", "_CHECK",
)  # fmt: skip
#: uops that are no work of an iteration (a root trace's reads of its entry state)
ENTRY_UOPS = frozenset({"_LOAD_SLOT", "_LOAD_STACK"})
#: the uops of the smallest body's trace that ``trace_weight`` counts: ``s += i``'s range step, add and jump back
SIMPLEST_TRACE = 3


def trace_weight(trace: Any) -> float:
    """What an iteration of a loop whose root trace is `trace` is worth in ``min_native_iterations``, from what
    native code saves on it: its uops but those of ``HEAVY_UOPS`` and barriers, over the smallest body's
    (``SIMPLEST_TRACE``), at least 1."""
    light = 0
    for uop in trace.uops:
        op = uop.op
        if op.name in ENTRY_UOPS or op.barrier or any(part in op.name for part in HEAVY_UOPS):
            continue
        light += 1
    return max(1.0, light / SIMPLEST_TRACE)


class LoopRuntime:
    """The runtime of one function's instrumented code, whose ``RT`` constant is ``hooks`` (``CodeHooks``);
    ``counters`` is its ``LOOPS``."""

    __slots__ = (
        "function",
        "t1",
        "codes",
        "counters",
        "single_copy",
        "comprehensions",
        "backoff",
        "min_iterations",
        "min_per_entry",
        "weighed",
        "windows",
        "pay_backoff",
        "not_paying",
        "waited",
        "boost",
        "padding",
        "handoffs_counted",
        "parked",
        "park_for",
        "busy",
        "warming",
        "warmup_left",
        "rest",
        "loop_end",
        "counted",
        "starts",
        "skips",
        "began",
        "short",
        "unrecorded",
        "_positions",
        "_located",
        "raised_handoffs",
        "_comprehension_loops",
        "plans",
        "ways",
        "hooks",
        "__weakref__",
    )

    def __init__(
        self, function: Any, single_copy: frozenset[int] = frozenset(), comprehensions: frozenset[int] = frozenset()
    ) -> None:
        self.function = function  # jit.function.JitFunction
        self.single_copy = single_copy  # loops instrumented with one copy: their counters count loop starts
        self.comprehensions = comprehensions  # comprehensions' loops CPython hands over whole (``loop``, whole)
        code = function.code
        self.t1 = code
        # the comprehensions and generator expressions (their first loops) that CPython runs in frames of their own,
        # outermost first: where an exception's traceback shows them (_comprehensions_at; once, not at every
        # exception: none, mostly)
        self._comprehension_loops = own_frame_loops(code)
        self.codes: list[types.CodeType] = []  # the versions of the instrumented code bound to this runtime
        start = function.hot_threshold if function.hot_threshold > 0 else NEVER
        # per loop: the warm-up still to count once its first count (starts) has ended (a loop with no loop in it
        # counts WARMUP_CHECK first, so that its starts are judged as when it is hot: starts_too_short), and the
        # count given back to CPython at its header where the warm-up goes on (at_own_header)
        self.warmup_left = [0] * len(code.loops)
        self.rest = [0] * len(code.loops)
        outer = code.outer_loops
        if start != NEVER:  # a loop's first count is its warm-up (warmup_count); a single copy counts starts
            starts = []
            for loop in code.loops:
                if loop.index in single_copy and loop.index not in comprehensions:
                    starts.append(start)
                    continue
                count = warmup_count(function, loop)
                if count > WARMUP_CHECK and loop.index not in outer:
                    self.warmup_left[loop.index] = count - WARMUP_CHECK
                    count = WARMUP_CHECK
                starts.append(count)
        else:
            starts = [start] * len(code.loops)
        self.counters: list[int] = list(starts)  # LOOPS
        # per loop: the iterations CPython was last given to count (counters), and the starts of its counted copy
        # that ended since (the instrumented code's RT.starts); the iterations per start that made the last hot
        # hand-off give the loop back unrecorded (starts_too_short), until at_own_header does
        self.counted: list[int] = list(starts)
        # per loop: still counting its warm-up (a first count longer than the threshold), not handed over yet
        self.warming = [count > start or left > 0 for count, left in zip(starts, self.warmup_left)]
        self.starts: list[int] = [0] * len(code.loops)
        self.short: list[float | None] = [None] * len(code.loops)
        self.unrecorded = [False] * len(code.loops)  # per loop: its not_paying figure is CPython's, per start
        self.backoff = [FIRST_BACKOFF] * len(code.loops)
        self.min_iterations: int = function.options.min_native_iterations
        # per loop: the iterations per native entry that pay, min_iterations for the smallest body (see body_weight)
        self.min_per_entry = [self.min_iterations / body_weight(code, loop.index) for loop in code.loops]
        # per loop: min_per_entry takes its root trace's weight into account (weigh)
        self.weighed = [loop.index in outer for loop in code.loops]
        # per loop: the window of hand-offs being counted (judge)
        self.windows = [_Window() for _ in code.loops]
        self.pay_backoff = [FIRST_BACKOFF] * len(code.loops)
        # per loop: the iterations per native entry of its last window, if that window did not pay
        self.not_paying: list[float | None] = [None] * len(code.loops)
        # per loop: the hand-offs that ended in an exception the policy counted (count_raised)
        self.raised_handoffs = [0] * len(code.loops)
        # per loop: blacklisted, and sent to run plain since (its next hand-off reprobes it)
        self.waited = [False] * len(code.loops)
        self.boost = [0] * len(code.loops)  # the instrumented code's RT.boost
        # per loop: starts charged ahead (jit.frontend.instrument's WARMUP_SKIP) left to run plain, and the count
        # where the counted copy's last start began (the instrumented code's RT.skips and RT.began)
        self.skips = [0] * len(code.loops)
        self.began = [0] * len(code.loops)
        self.padding = (UNBOUND,) * (code.nslots - code.nlocals)
        self.handoffs_counted = 0  # hand-offs (calls of loop) but those that entered native code in one call (handoffs)
        self.parked: set[int] = set()  # loops parked (see runtime.parking)
        self.park_for = [parking.FIRST_PARK] * len(code.loops)  # garbage collections of a loop's next parking
        self.busy = False  # changing the code: not now, says the runtime to the parking clock
        # per version of the code: (position -> offset, line -> offset), for tracebacks
        self._positions: dict[int, tuple[dict[Any, int], dict[int, int]]] = {}
        # per (version of the code, by id; pc): (that version, raise_location's position, whether the pc runs in a
        # comprehension's own frame); the version is kept to tell an id reused
        self._located: dict[tuple[int, int], tuple[types.CodeType, tuple[int, int], bool]] = {}
        # per loop: the pc where native code leaves a for loop at its end (its FOR_RANGE or FOR_ITER, else -2), and
        # the test that it has ended there
        self.loop_end: list[tuple[int, Any]] = [
            (loop.header_pc + 1, _END_TESTS[code.ops[loop.header_pc + 1]])
            if code.ops[loop.header_pc + 1] in _END_TESTS
            else (-2, None)
            for loop in code.loops
        ]
        # per loop: its hand-off into native code as planned (loop, plan), and how CPython goes on after each exit
        # native code took (by exit number: way_out)
        self.plans: list[_Plan | None] = [None] * len(code.loops)
        self.ways: list[dict[int, tuple[Any, int, int]]] = [{} for _ in code.loops]
        function.loop_views = [loop_view(code, function.exec_args, loop) for loop in code.loops]
        function.at_own_header = self.at_own_header
        self.hooks = CodeHooks(self)  # what the instrumented code holds (its RT)

    @loop_driver
    def loop(
        self, index: int, at_body: bool, it: Any, iterable: Any, values: tuple[Any, ...], whole: bool = False
    ) -> tuple[Any, ...]:
        """Run loop `index` from its header (at_body False) or its body's start, from CPython's state: (how,
        the locals, extra) as ``jit.frontend.instrument`` says. With `whole`, the comprehension whose first loop
        is `index`, from its header (CPython evaluated its first iterable and made `it` from it; `values` holds the
        locals it reads, the unbound marker for the others): (True, what it built) once it has ended, (False, what
        it built so far) if the runtime gives it back part way, `it` moved to where tier 1 left it, for CPython to
        build the rest. Both share the per-entry path into native code."""
        # (fix_handoff_traceback reads the local `frame`, the tier-1 frame, once there is one. A comprehension never
        # binds it: an exception shows the user's frame at the comprehension, and the comprehension's own frame at
        # the line that failed, one per nesting level, raise_in_comprehension, as CPython's traceback)
        if not at_body:
            # the usual hand-off: into native code in one call, and back at the loop's end or break (the per-entry
            # path: everything it needs planned once, no Python counting: see _Plan)
            plan = self.plans[index]
            if plan is None:
                plan = self.plan(index)
            if plan is not None:
                for handoff, tree in plan.calls:
                    if (
                        plan.tiering is not None
                    ):  # (a swap drops the plan: this hand-off's code, still linked, runs once more)
                        plan.tiering.before_entry(tree)
                    try:
                        # (an exception from native code, a signal handler's, shows at the hand-off: the header)
                        if whole:  # (with the container the comprehension builds)
                            builds = plan.builds  # (a type in a slot: LOAD_METHOD would not specialize on it)
                            out = handoff(values, it, iterable, plan.spill, builds())
                        else:
                            out = handoff(values, it, iterable, plan.spill)
                    except BaseException as exc:
                        self.handoffs_counted += 1
                        raised = plan.runner.handoff_raised(tree)
                        if raised is not None:  # (the traceback shows the instruction native code left from)
                            pc = raised[0]
                            converted = generator_raised(exc, self.t1, pc)  # (PEP 479)
                            if converted is not None:
                                exc, pc = converted
                            if whole:
                                raise_in_comprehension(exc, self.comprehension_entries(pc))
                            frame = Frame(self.function, self.t1, raised[1][: self.t1.nslots])
                            frame.error_pc = pc
                            try:
                                self.raised(index, exc, frame, 1, raised[1][-1][1], False)
                            except RecursionError:
                                pass  # (no stack left: the handler reads the driver's locals instead)
                            if converted is not None:
                                raise exc from exc.__cause__
                        raise
                    if out is None:
                        continue  # (the tree's entry type map does not match)
                    if out is NotImplemented:
                        break  # (a state only Python builds)
                    # (native code counted the hand-off, its entry and its iterations: see handoffs)
                    result, slots, values, unbound, ended = out
                    try:
                        exit, how, otherwise = plan.ways[result[0]]
                    except KeyError:
                        exit, how, otherwise = self.way_out(index, result[0])
                    exit.taken += 1
                    if plan.graveyard:
                        plan.runner.free_graveyard()
                    if not ended:  # (where the loop has ended, or not: see way_out)
                        if ended is None and how != otherwise:  # (native code could not tell)
                            try:
                                ended = plan.ended(slots, plan.base)
                            except BaseException as exc:  # (FOR_ITER's next, asked there: for_exhausted)
                                if whole:
                                    raise_in_comprehension(exc, self.comprehension_entries(exit.pc))
                                frame = Frame(self.function, self.t1, slots)
                                frame.error_pc = exit.pc
                                try:
                                    self.raised(index, exc, frame, 1, result[1], False)
                                except RecursionError:
                                    pass  # (no stack left: the handler reads the driver's locals instead)
                                raise
                        if not ended:
                            how = otherwise
                    if how:  # (not CONTINUE, 0: the loop has ended, or left)
                        window = plan.window
                        if window is not None:
                            # judge(index, plan.monitor, 1, iterations, False), its usual case inline (the same
                            # tests, cheaper): a hand-off counted towards a window that it does not end (see
                            # _Window), while the trees are not growing (neither recording nor compiling: idle; else
                            # judge itself, which also counts a blacklisted loop's)
                            state = plan.state
                            if (
                                window.room
                                and state.phase is _IDLE
                                and state.waiting_on is None
                                and not plan.monitor.pending
                            ):
                                window.room -= 1
                                window.iterations += result[1]
                            else:
                                self.judge(index, plan.monitor, 1, result[1], False)
                        if plan.boosts is not None:  # (jit.frontend.instrument: the enclosing loop gets hot soon)
                            self.boost[plan.boosts] = 1
                        if whole:
                            return True, slots[plan.info.accumulator]
                        return how, values, unbound
                    # elsewhere: the interpreter goes on from the exit
                    monitor = plan.monitor
                    runner = plan.runner
                    before = (runner.native_entries - 1, runner.native_iterations - result[1], monitor.growth)
                    if whole:
                        t1_frame = Frame(self.function, self.t1, slots)
                        t1_frame.error_pc = plan.info.header_pc
                        if len(result) > 2:
                            t1_frame.stack[:] = result[2:]
                        pc = monitor.exited(t1_frame, exit)
                        return self.run_comprehension(index, it, iterable, t1_frame, pc, before)
                    frame = Frame(self.function, self.t1, slots)
                    frame.error_pc = plan.info.header_pc
                    if len(result) > 2:
                        frame.stack[:] = result[2:]
                    try:
                        how, value = resume_loop(frame, index, monitor.exited(frame, exit))
                    except BaseException as exc:
                        try:
                            self.raised_after(index, exc, frame, before)
                        except RecursionError:
                            pass  # (no stack left: the handler reads the driver's locals instead)
                        raise
                    return self.finish(index, it, iterable, frame, how, value, before)
        if self.warmup_goes_on(index):
            if whole:  # (CPython builds it, counting the rest of the warm-up)
                self.count(index, self.rest[index])
                self.rest[index] = 0
                return False, self.t1.loops[index].builds()  # type: ignore[misc]
        else:
            self.handoffs_counted += 1
        if whole:
            return self.comprehension_in_python(index, it, iterable, values)
        function = self.function
        code = self.t1
        info = code.loops[index]
        monitor = function.monitor
        slots = [*values, *self.padding]
        frame = Frame(function, code, slots)
        frame.error_pc = info.header_pc  # (what a traceback shows if the driver itself is interrupted)
        if info.hidden:
            enter(info, it, iterable, slots)
        if at_body:
            if self.rest[index]:
                pass  # the warm-up goes on: the interpreter runs this iteration, then CPython the loop (at_own_header)
            elif self.starts_too_short(index):
                # not worth recording: the interpreter runs this iteration, then CPython the loop (at_own_header)
                self.short[index] = self.counted[index] / self.starts[index]
            else:
                # CPython ran threshold - 1 iterations: the back-edge ending this one makes the loop hot, as in
                # the interpreter (which then records the next iteration)
                counts = function.backedge_counts
                counts[index] = max(counts[index], function.hot_threshold - 1)
        before = None
        if monitor is not None:
            runner = monitor.runner
            before = (runner.native_entries, runner.native_iterations, monitor.growth)
        try:
            how, value = self.run(frame, index, at_body, monitor)
        except BaseException as exc:
            try:
                self.raised_after(index, exc, frame, before)
            except RecursionError:
                pass  # (no stack left: the handler reads the driver's locals instead)
            raise
        return self.finish(index, it, iterable, frame, how, value, before)

    def raised(self, index: int, exc: BaseException, frame: Frame, entries: int, iterations: int, grew: bool) -> None:
        """A hand-off of loop `index` (the caller: ``loop``) raised exc where the tier-1 frame `frame` was, after
        `entries` native entries that ran `iterations` iterations (grew: the trees grew meanwhile). Notes the
        driver's state on exc for the instrumented frame's handler (``runtime.errors.HANDOFF_NOTE``), and counts
        the hand-off towards the loop's window of the policy of entries that pay (``count_raised``)."""
        exc.__dict__[HANDOFF_NOTE] = (sys._getframe(1), self, frame)
        self.count_raised(index, entries, iterations, grew)

    def raised_after(self, index: int, exc: BaseException, frame: Frame, before: tuple[int, int, int] | None) -> None:
        """``raised``, for a hand-off run in the interpreter (before: the monitor's counts before it, as
        ``finish`` takes them; None without a monitor)."""
        exc.__dict__[HANDOFF_NOTE] = (sys._getframe(1), self, frame)
        if before is not None:
            runner = self.function.monitor.runner
            entries = runner.native_entries - before[0]
            iterations = runner.native_iterations - before[1]
            self.count_raised(index, entries, iterations, self.function.monitor.growth != before[2])

    def count_raised(self, index: int, entries: int, iterations: int, grew: bool) -> None:
        """Judge a hand-off of loop `index` that ended in an exception after `entries` native entries (none: not
        judged, as ``finish`` does), its exception counted as ``EXCEPTION_ENTRIES`` entries more: native code
        gives the exception back through the interpreter and the instrumented code, which costs some
        microseconds where CPython raises in a fraction of one, so a loop that raises after a few hundred
        iterations at most does not pay (the module docstring has the policy)."""
        if self.min_iterations and entries:
            self.raised_handoffs[index] += 1
            self.windows[index].raised += 1
            self.judge(index, self.function.monitor, entries + EXCEPTION_ENTRIES, iterations, grew)

    @internal
    def comprehension_in_python(self, index: int, it: Any, iterable: Any, values: tuple[Any, ...]) -> tuple[bool, Any]:
        """A comprehension's hand-off (loop, whole) that native code did not take (loop counted it): in the
        interpreter, or back to CPython at once while its starts are too short to pay."""
        function = self.function
        info = self.t1.loops[index]
        builds = info.builds
        assert builds is not None
        if function.hot_loops[index] is None and not self.blacklisted(index):
            # (as a loop statement's hand-off at its body: runtime.loop_driver's policy of entries that pay)
            if self.starts[index] == 0:
                self.count(index, max(function.hot_threshold, 1))  # (back from a back-off: CPython counts again)
                return False, builds()
            if self.starts_too_short(index):
                # its starts are too short for native entries to pay: not recorded, CPython runs it for a while
                self.not_paying[index] = self.counted[index] / self.starts[index]
                self.unrecorded[index] = True
                self.starts[index] = 0
                self.back_off(index, self.pay_backoff, MAX_PAY_BACKOFF)
                return False, builds()
        monitor = function.monitor
        slots = [*values, *self.padding]
        t1_frame = Frame(function, self.t1, slots)
        t1_frame.error_pc = info.header_pc  # (what a traceback shows if the driver itself is interrupted)
        enter(info, it, iterable, slots)
        slots[info.accumulator] = builds()
        before = None
        if monitor is not None:
            runner = monitor.runner
            before = (runner.native_entries, runner.native_iterations, monitor.growth)
        return self.run_comprehension(index, it, iterable, t1_frame, None, before)

    @internal
    def run_comprehension(
        self, index: int, it: Any, iterable: Any, frame: Frame, pc: int | None, before: tuple[int, int, int] | None
    ) -> tuple[bool, Any]:
        """comprehension's run in the interpreter: from the loop's header (pc None: as run does, through the entry
        stubs first) or from pc (native code left there); then finish's bookkeeping."""
        info = self.t1.loops[index]
        try:
            if pc is None:
                how, value = self.run(frame, index, False, self.function.monitor)
            else:
                how, value = resume_loop(frame, index, pc)
        except BaseException as exc:
            if frame.error_pc is not None and frame.error_pc != info.header_pc:
                raise_in_comprehension(exc, self.comprehension_entries(frame.error_pc))
            raise
        self.finish(index, it, iterable, frame, how, value, before)  # (leave moves `it` on CONTINUE)
        return how != CONTINUE, frame.slots[info.accumulator]

    @property
    def handoffs(self) -> int:
        """Hand-offs from CPython (calls of loop): those counted in Python, and those that entered native code in
        one call, which native code counted (``NativeRunner.handoff_counts``)."""
        monitor = self.function.monitor
        return self.handoffs_counted + (monitor.runner.handoff_counts[0] if monitor is not None else 0)

    def plan(self, index: int) -> _Plan | None:
        """Plan the hand-offs of loop `index` into native code for its trees as they are now (None: not now: no
        monitor, the loop is not hot, or the monitor enters trees only through Python, ``native_handoffs``).
        The plan holds until the registry drops it (``TreeRegistry.plans``: whenever a tree is installed or
        invalidated, or a side trace installed)."""
        function = self.function
        monitor = function.monitor
        if monitor is None or function.hot_loops[index] is None or not monitor.native_handoffs:
            return None
        registry = monitor.registry
        self.plans = registry.plans  # (the registry's from now on, which it clears)
        dropped = registry.plans_dropped
        info = self.t1.loops[index]
        plan = _Plan()
        plan.monitor = monitor
        plan.graveyard = registry.graveyard
        plan.runner = runner = monitor.runner
        plan.spill = runner.spill
        plan.calls = runner.handoff_calls(index)
        # (jit.tiering: asked before each hand-off while code its trees may run is below the top optimization level;
        # a swap drops the plan, and the next one has none once all of it is at the top)
        tiering = monitor.tiering
        plan.tiering = tiering if tiering is not None and any(tiering.wanted(tree) for _, tree in plan.calls) else None
        plan.ways = self.ways[index]
        plan.info = info
        plan.builds = info.builds  # (a comprehension's: what it builds)
        whole = index in self.comprehensions  # (a comprehension handed over whole: LoopRuntime.loop, whole)
        # the loop whose boost a hand-off that ends natively sets (a comprehension's sets none)
        plan.boosts = info.parent if not whole else None
        plan.base = info.hidden[0] if info.hidden else -1
        plan.ended = self.loop_end[index][1]
        # what judge counts in, for loop's inline counting (None: the pay policy is off), and the loop's state in
        # the monitor, which keeps it once it has made it (_NO_STATE: not made yet, then judge itself, every time)
        plan.window = self.windows[index] if self.min_iterations else None
        plan.state = monitor.loops[index] or _NO_STATE
        with registry.lock:
            if registry.plans_dropped != dropped:
                return None  # (the trees changed while it was made: not this time)
            self.plans[index] = plan
        return plan

    def way_out(self, index: int, number: int) -> tuple[Any, int, int]:
        """How loop `index` goes on in CPython after native code took exit `number` (remembered: an exit's place
        never changes): the exit, how if the loop has ended there, and how if not (the same but at the loop's end
        test, at its header). How: EXHAUSTED (the exit is where the loop ends, or its end test once it has ended),
        BREAK, or CONTINUE (the interpreter resumes from the exit; also at the end test of a comprehension's loop that
        has not ended)."""
        exit = self.function.monitor.registry.exits[number]
        info = self.t1.loops[index]
        how = otherwise = CONTINUE
        if exit.leaves_loop and exit.when_hot is not WhenHot.INVALIDATE:
            if exit.pc == info.exit_pc or self.jumps_to_exit(info, exit):
                how = otherwise = EXHAUSTED
            elif exit.pc == self.loop_end[index][0]:
                how = EXHAUSTED
                if info.break_pc == exit.pc and index not in self.comprehensions:
                    otherwise = BREAK
            elif exit.pc == info.break_pc:
                how = otherwise = BREAK
        way = self.ways[index][number] = (exit, how, otherwise)
        return way

    def jumps_to_exit(self, info: LoopInfo, exit: Any) -> bool:
        """Whether exit (one that leaves the loop) is a failed guard of the branch at a `while` loop's test: it
        leaves at the conditional jump, the condition alone on the stack, and the direction the guard did not
        expect is the jump to the loop's exit (its fall-through stays in the loop). CPython would only pop the
        condition and jump there: the loop has ended, as at its exit, without interpreting that jump (which cost
        a `while` loop's hand-off 1.5 us more than a `for` loop's)."""
        pc = exit.pc
        code = self.t1
        return (
            code.ops[pc] in (POP_JUMP_IF_FALSE, POP_JUMP_IF_TRUE)
            and code.args[pc] == info.exit_pc
            and info.contains(pc + 1)
            and len(exit.stack_kinds) == 1
        )

    def finish(
        self,
        index: int,
        it: Any,
        iterable: Any,
        frame: Frame,
        how: int,
        value: Any,
        before: tuple[int, int, int] | None,
    ) -> tuple[int, Any, Any]:
        """The end of a hand-off run in the interpreter (`before`: the monitor's counts before it, None if there
        was no monitor): the policy's bookkeeping, then what the instrumented code gets back."""
        function = self.function
        info = self.t1.loops[index]
        monitor = function.monitor  # (made if the loop got hot)
        if monitor is not None:
            runner = monitor.runner
            entries = runner.native_entries - (before[0] if before is not None else 0)
            if before is not None and self.min_iterations:
                iterations = runner.native_iterations - before[1]
                self.judge(index, monitor, entries, iterations, monitor.growth != before[2])
            # (see jit.frontend.instrument: the enclosing loop gets hot soon). Also where this hand-off recorded the
            # loop's tree and it is compiling in the background: compiled synchronously, it would have run here,
            # and the enclosing loop would get hot now; later, CPython would have counted its starts meanwhile, and
            # an outer loop of a few iterations per start was then judged too short to record (starts_too_short)
            if info.parent is not None and (entries or monitor.compiling(index)):
                self.boost[info.parent] = 1
        slots = frame.slots
        if how == CONTINUE:
            leave(info, it, iterable, slots)
        values = tuple(slots[: self.t1.nlocals])
        if how == RETURN:
            return how, values, value
        if monitor is not None:
            return how, values, monitor.runner.holds_unbound(values)
        return how, values, _UNBOUND_ID in map(id, values)

    @internal
    def run(self, frame: Frame, index: int, at_body: bool, monitor: Any) -> tuple[int, Any]:
        """run_loop from the loop's header or its body; at the header of a loop that has trees, first through
        their entry stubs, straight from here (what at_own_header would do, in fewer steps)."""
        info = self.t1.loops[index]
        if at_body:
            return run_loop(frame, index, info.body_pc)
        if monitor is not None and self.function.hot_loops[index] is not None:
            exit = monitor.enter_through_stubs(frame, index, count=False)
            if exit is not None:
                return resume_loop(frame, index, monitor.exited(frame, exit))
        return run_loop(frame, index, info.header_pc)

    @internal
    def at_own_header(self, frame: Frame, index: int, pc: int) -> int:
        """The interpreter is at the header of the loop it runs for CPython: the pc to go on from, or -1 to
        give the loop back to CPython."""
        function = self.function
        rest = self.rest[index]
        if rest:
            self.rest[index] = 0
            self.count(index, rest)
            return -1
        short = self.short[index]
        if short is not None:
            self.short[index] = None
            self.not_paying[index] = short
            self.unrecorded[index] = True
            self.back_off(index, self.pay_backoff, MAX_PAY_BACKOFF)
            return -1
        if function.hot_loops[index] is None and self.blacklisted(index) and self.waited[index]:
            # it has run plain for its back-off: what made its recordings fail may be gone
            self.waited[index] = False
            function.monitor.reprobe(index)
        if function.hot_loops[index] is None:
            if function.hot_threshold <= 0 or self.blacklisted(index):
                self.waited[index] = True
                self.plain(index)
                return -1
            # not hot yet (the loop was left before its hot back-edge)
            counts = function.backedge_counts
            if index in self.single_copy:  # counts loop starts: run an iteration here to make it hot
                counts[index] = max(counts[index], function.hot_threshold - 1)
                self.counters[index] = function.hot_threshold
                return pc + 1
            iterations = max(function.hot_threshold - counts[index], 1)
            short = self.not_paying[index]
            if short is not None and self.unrecorded[index]:
                # its starts were too short to pay when last judged: count enough of them to judge them again
                # (starts_too_short) rather than record it after a start or two
                iterations = max(iterations, int(MIN_STARTS * short) + 1)
            self.count(index, iterations)
            return -1
        monitor = function.monitor
        entries = monitor.runner.native_entries
        next_pc: int = function.at_loop_header(frame, index, pc)
        if frame.trace_hook is not None or monitor.runner.native_entries != entries:
            return next_pc  # recording, or native code ran: the JIT goes on
        if function.hot_loops[index] is None:
            self.plain(index)
        else:
            state = monitor.loops[index]
            wait = state.cooldown if state is not None else 0
            if state is not None:
                state.cooldown = 0  # CPython waits it out instead, counting iterations
            self.counters[index] = wait if wait > 0 else max(function.hot_threshold, 1)
        return -1

    def warmup_goes_on(self, index: int) -> bool:
        """Loop `index`'s count has ended (a hand-off): if that was the check of its warm-up (``WARMUP_CHECK``) and
        its starts are not too short to pay (``starts_too_short``: judged now, as when a loop gets hot), the rest of
        the warm-up is to be counted (``rest``), True; otherwise its warm-up is over."""
        if not self.warming[index]:
            return False
        self.warming[index] = False
        left = self.warmup_left[index]
        if not left:
            return False
        self.warmup_left[index] = 0
        if self.starts_too_short(index):
            return False
        self.rest[index] = left
        self.warming[index] = True
        return True

    def count(self, index: int, iterations: int) -> None:
        """Let CPython count `iterations` iterations of loop `index` (its counted copy), and its starts, before
        the loop is hot."""
        self.counters[index] = iterations
        self.counted[index] = iterations
        self.starts[index] = 0
        self.skips[index] = self.began[index] = 0

    def starts_too_short(self, index: int) -> bool:
        """Loop `index` just got hot in CPython's counted copy: were its starts so short that native entries
        could not pay, however fast its code (so that recording and compiling it would be wasted)? Only an
        outermost loop is judged so: an inner loop's tree pays inside its outer loop's tree, which needs it
        first (an outer trace calls the inner tree; it cannot inline the inner loop)."""
        starts = self.starts[index]
        return (
            starts >= MIN_STARTS
            and self.counted[index] >= MIN_COUNTED
            and self.t1.loops[index].parent is None
            and self.min_iterations > 0
            and self.counted[index] < self.min_per_entry[index] * starts
            and self.function.hot_loops[index] is None
            and not self.blacklisted(index)
        )

    def judge(self, index: int, monitor: Any, entries: int, iterations: int, recorded: bool) -> None:
        """Count one hand-off of loop `index` towards its window (the native entries it made, the iterations they
        ran, whether anything was recorded or compiled meanwhile: ``Monitor.growth``); at the window's end, send the loop back to CPython for a
        while if its native entries do not pay (the module docstring has the policy)."""
        window = self.windows[index]
        state = monitor.loops[index]
        if recorded or monitor.pending or (state is not None and (state.recording or state.waiting_on is not None)):
            # the trees are still growing (recorded, or compiling in the background; or another thread records or
            # compiles this loop, or an inner loop it waits for, right now: the entries this hand-off made were the
            # inner loops' only, one per iteration, while the loop's own tree was on its way): judge them once
            # they have
            window.reset()
            return
        if entries == 0:
            return
        if not window.count(entries, iterations):
            return
        per_entry = window.iterations / window.entries
        raised = window.raised
        window.reset()
        self.unrecorded[index] = False
        if not self.weighed[index]:
            self.weigh(index, state)
        if per_entry >= self.min_per_entry[index]:
            self.not_paying[index] = None
            if not raised:
                self.pay_backoff[index] = FIRST_BACKOFF
                self.park_for[index] = parking.FIRST_PARK
            # (else the back-offs stay: how many of a window's few hand-offs raise varies from window to window, so
            # a loop near the line alternated between windows that paid, which put it back at the shortest back-off,
            # and windows that did not; every return to native code after CPython ran the loop costs microseconds
            # more, the code and data cold: attr_error of the probe ran at 0.85-0.91x CPython so, at 1.14x always
            # native, 1.0x parked. Such a loop now ends parked; a window without exceptions that pays resets them)
            return
        self.not_paying[index] = per_entry
        self.back_off(index, self.pay_backoff, MAX_PAY_BACKOFF)

    def weigh(self, index: int, state: Any) -> None:
        """Loop `index` (no loop nested in it) has a tree: count an iteration for what its root trace saves
        (``trace_weight``) where that is less than its tier-1 body's weight (``body_weight``), once."""
        trees = state.trees if state is not None else None
        root = getattr(trees[0], "root", None) if trees else None
        if root is None:
            return
        self.weighed[index] = True
        weight = min(body_weight(self.t1, index), trace_weight(root.trace))
        self.min_per_entry[index] = self.min_iterations / weight

    def blacklisted(self, index: int) -> bool:
        monitor = self.function.monitor
        state = monitor.loops[index] if monitor is not None else None
        return state is not None and state.blacklisted and not state.trees

    def plain(self, index: int) -> None:
        """Run loop `index` plain for a while (for good when the JIT cannot run)."""
        function = self.function
        if function.jit_unavailable is not None or function.hot_threshold <= 0:
            self.counters[index] = NEVER
            return
        self.back_off(index, self.backoff, MAX_BACKOFF)

    def back_off(self, index: int, backoffs: list[int], longest: int) -> None:
        """Run loop `index` plain for its back-off in `backoffs` (in loop starts), which doubles each time; once
        it has been `longest`, park the loop instead."""
        backoff = backoffs[index]
        if backoff > longest:
            self.counters[index] = -longest  # (for frames running a version that counts this loop)
            self.park(index)
            return
        self.counters[index] = -backoff
        backoffs[index] = 2 * backoff

    def park(self, index: int) -> None:
        """Take loop `index` out of the code new calls run, for a while (see runtime.parking). The versions of the
        code that waking each parked loop will run are made here too: the parking clock, a garbage collection
        callback, makes none (``JitFunction.run_version``)."""
        if index in self.parked or not self.function.can_park():
            return
        self.busy = True
        try:
            self.parked.add(index)
            parking.park(self, index, self.park_for[index])
            self.park_for[index] = min(2 * self.park_for[index], parking.MAX_PARK)
            function = self.function
            function.run_version(frozenset(self.parked))
            for parked in self.parked:
                function.make_version(frozenset(self.parked - {parked}))
        finally:
            self.busy = False

    def wake(self, index: int) -> bool:
        """Loop `index` has been parked long enough: back in the code, handed to the JIT at its next start but
        one (called by the parking clock, from a garbage collection: only where that version of the code is made
        already, which park makes; else it stays parked, False)."""
        self.busy = True
        try:
            if not self.function.run_version(frozenset(self.parked - {index}), build=False):
                return False
            self.parked.discard(index)
            self.counters[index] = -1
            return True
        finally:
            self.busy = False

    def _comprehensions_at(self, pc: int | None) -> list[LoopInfo]:
        """The comprehensions and generator expressions (their first loops) whose own frames CPython would run the
        instruction at pc in, outermost first (``runtime.errors.own_frames_at``)."""
        loops = self._comprehension_loops
        if not loops or pc is None:
            return []
        return own_frames_at(self.t1, pc, loops)

    def comprehension_entries(self, pc: int | None) -> list[tuple[types.FrameType, int, int]]:
        """Traceback entries of the comprehensions' and generator expressions' own frames for the instruction at pc
        (``_comprehensions_at``), outermost first, as CPython's traceback shows them."""
        return own_frame_entries(self.t1, pc, self._comprehensions_at(pc))

    def raise_location(
        self, code: types.CodeType, frame: Frame | None
    ) -> tuple[tuple[int, int], list[tuple[types.FrameType, int, int]]] | None:
        """Where the instrumented frame's traceback shows the tier-1 instruction at frame.error_pc that raised:
        ((tb_lasti, tb_lineno) of its entry, the traceback entries of the comprehensions' own frames to follow it,
        ``comprehension_entries``), None where it cannot (no tier-1 frame, or code is not a version of this
        runtime's code). Remembered per version of the code and pc, but the comprehensions' entries (frames of
        their own, made afresh)."""
        if frame is None or frame.error_pc is None:
            return None
        pc = frame.error_pc
        known = self._located.get((id(code), pc))
        if known is None or known[0] is not code:
            position = self.traceback_position(code, frame)
            if position is None:
                return None
            known = self._located[(id(code), pc)] = (code, position, bool(self._comprehensions_at(pc)))
        return known[1], self.comprehension_entries(pc) if known[2] else []

    def traceback_position(self, code: types.CodeType, frame: Frame | None) -> tuple[int, int] | None:
        """(tb_lasti, tb_lineno) for the instrumented frame's traceback entry when the tier-1 instruction at
        frame.error_pc raised: an instruction compiled from the same source text, else one of its line. Where that
        instruction runs in a comprehension's own frame (``comprehension_entries``), the entry shows the outermost
        comprehension, as CPython's shows the call of its frame."""
        if frame is None or frame.error_pc is None or not any(code is version for version in self.codes):
            return None
        levels = self._comprehensions_at(frame.error_pc)
        position = self.t1.positions[levels[0].frame_pc if levels else frame.error_pc]
        known = self._positions.get(id(code))
        if known is None:
            offsets: dict[Any, int] = {}
            line_offsets: dict[int, int] = {}
            for unit, where in enumerate(code.co_positions()):
                offsets.setdefault(where, 2 * unit)
                if where[0] is not None:
                    line_offsets.setdefault(where[0], 2 * unit)
            known = self._positions[id(code)] = (offsets, line_offsets)
        offsets, line_offsets = known
        offset = offsets.get(position)
        if offset is None:
            offset = line_offsets.get(position[0])
            if offset is None:
                return None
        return offset, position[0]
