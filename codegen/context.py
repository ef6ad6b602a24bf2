"""What lowering one trace needs: the LLVM module and function being built, the values of trace values, the
frame buffer, guards and their exit stubs.

An exit stub writes the interpreter's state at the guard (``materialize``), records which exit was taken,
bumps the exit's counter, and either tail-jumps into the side trace linked to the exit (a per-exit function
pointer, null until a side trace is compiled) or returns the exit's number.
"""

from __future__ import annotations

import functools
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from llvmlite import ir

from codegen import abi, capi
from codegen.capi import DOUBLE, I1, I8, I32, I64, I128, PTR
from codegen.ownership import ENTRY, OWNED_KINDS, Ownership
from codegen.symbols import ObjectSymbols
from jit import arrays, numpy_errstate
from jit.kinds import DIRTY, KIND_BITS, MAY_BE_OWNED, OWNED, Kind
from jit.resume import FrameResume, Hold, exit_resume, written_with_reference
from jit.trace import ExitPoint, Snapshot, Trace, TraceKind, Uop, Value

TRACE_FN = ir.FunctionType(I64, [PTR])

# reference counts changed in place, as CPython's own Py_INCREF/Py_DECREF do (the refcount is the object's first
# word), where that is all they do: before 3.12's immortal objects, with the GIL
INLINE_REFCOUNTS = sys.version_info < (3, 12) and not abi.FREE_THREADED


FLOAT32 = ir.FloatType()


def llvm_type(kind: Kind) -> ir.Type:
    if kind == Kind.NP_FLOAT32:
        return FLOAT32
    if kind.is_double:
        return DOUBLE
    if kind in (Kind.BOOL, Kind.NP_BOOL):
        return I1
    if kind.is_pointer:
        return PTR
    if kind == Kind.WIDE_INT:
        return I128
    return I64


#: the branch weights of a guard whose side trace is joined with a fast copy of its loop (the loop's way, the side
#: trace's): the way the loop was recorded in is the more frequent one as a rule (its side trace was recorded
#: after the other was taken some times), and a mild weight is enough for LLVM to lay that way out straight, the
#: side trace's body apart, without making it cold. Measured on the histogram (one value in seven out of range, in
#: one process): no weights 208 us (the in-range way out of line: three taken branches an iteration), 2:1 165 us,
#: 4:1 164 us, 16:1 175 us
RECORDED_WAY = (3, 1)
#: the weights of a guard's branch: on, or out through its exit
GUARD_WEIGHTS = (1000, 1)
#: (``speculated``) the least magnitude of the ints a guard fails on for it to be checked on both ways of an
#: if-converted iteration: ints that large choose neither way of a loop's branch in any program seen
HUGE_INT = 1 << 40
#: (``speculated``) a product by a constant below this in magnitude overflows only past ``HUGE_INT``
INT_FACTOR_LIMIT = (1 << 63) // HUGE_INT
#: int operations whose guard fails only where the exact result is past 64 bits: an operand past 2**62
_OVERFLOW_ONLY = frozenset({"_BINARY_OP_ADD_INT", "_BINARY_OP_SUBTRACT_INT"})


def speculated(uop: Uop) -> bool:
    """Does uop's guard fail only on ints at least ``HUGE_INT`` in magnitude (an int range guard with bounds that
    wide, an addition's or a subtraction's overflow check, a product's by a constant below ``INT_FACTOR_LIMIT``)?
    Such a guard is checked on both ways of an if-converted iteration and leaves before its branch
    (``LowerContext._guard_before_branch``): on the way not taken it fails only on an int that large, which the
    way taken is about as likely to meet."""
    if uop.name in _OVERFLOW_ONLY:
        return True
    if uop.name == "_GUARD_INT_RANGE":
        return all(type(arg.const) is int and abs(arg.const) >= HUGE_INT for arg in uop.args[1:])
    if uop.name == "_BINARY_OP_MULTIPLY_INT":
        return any(
            arg.is_const and type(arg.const) is int and 0 < abs(arg.const) < INT_FACTOR_LIMIT for arg in uop.args
        )
    return False


class LowerContext:
    def __init__(
        self,
        trace: Trace,
        layout: abi.Layout,
        symbol: str,
        triple: str,
        data_layout: str,
        sibling_of: LowerContext | None = None,
        host: LowerContext | None = None,
    ) -> None:
        """sibling_of: a context whose module gets this function too (an internal one, with the same exits,
        exit counters, links and declarations: a versioned loop's fast copy, ``codegen.function``). host: a
        context whose function this trace is lowered into, as a part of it (``codegen.joined``: a tree's loop
        and the side traces that come back to it, in one function); the trace's exit counters and links are the
        host's if it is the host's own trace, else those of the trace's own module (symbol), declared here."""
        self.trace = trace
        self.layout = layout
        self.symbol = symbol
        if host is not None:
            self.module = host.module
            self.function = host.function
            self.buf = host.buf
            self.entry = host.entry
            self.builder = host.builder
            self._addresses: dict[tuple[Any, ...], ir.Value] = host._addresses
            self.words = host.words
        else:
            if sibling_of is None:
                self.module = ir.Module(name=symbol)
                self.module.triple = triple
                self.module.data_layout = data_layout
            else:
                self.module = sibling_of.module
            self.function = ir.Function(self.module, TRACE_FN, name=symbol)
            self.function.attributes.add("nounwind")
            if sibling_of is not None:
                self.function.linkage = "internal"
            self.buf = self.function.args[0]
            self.entry = self.function.append_basic_block("entry")
            self.builder = ir.IRBuilder(self.entry)
            self._addresses = {}  # (what, ...) -> an address computed in entry
            self.words = self.builder.bitcast(self.buf, I64.as_pointer(), name="words")  # the buffer as words
        sibling_of = sibling_of or host
        # the prefix of the names of the module's own globals this context makes (codegen.lower.global_names),
        # and their count: a part's are its host's, so that two parts never make the same name
        self.local_prefix: str = host.local_prefix if host is not None else symbol
        if host is not None:
            self.__dict__["_dict_guard_words"] = host.__dict__.setdefault("_dict_guard_words", [0])
        self.values: dict[int, ir.Value] = {}
        self.fuel: ir.Value | None = None
        self.call_result: ir.Value | None = None  # the last inner tree's exit number
        self.valid: dict[int, tuple[ir.Value, ir.Value]] = {}  # slot -> (written-yet flag, previous value)
        self.valid_kinds: dict[int, Kind] = {}
        # the objects (and runtime variables) the code refers to, as symbols of the module bound when it is linked
        self.symbols = ObjectSymbols(self.module, symbol) if sibling_of is None else sibling_of.symbols
        self.keepalive: list[Any] = self.symbols.keepalive  # the objects the code points to
        self.exit_points: list[ExitPoint] = trace.exits()
        self.exit_index = {id(e): i for i, e in enumerate(self.exit_points)}
        for index, point in enumerate(self.exit_points):
            assert point.id == self.exit_points[0].id + index, "a trace's exits are numbered consecutively"
        if host is not None and trace is not host.trace:
            # (another trace's exits: its counters and links are its own module's)
            self.callees = host.callees
            self.counts = self._declared(f"{symbol}_counts", ir.ArrayType(I64, max(len(self.exit_points), 1)))
            self.links = self._declared(f"{symbol}_links", ir.ArrayType(PTR, max(len(self.exit_points), 1)))
        elif sibling_of is not None:
            self.callees = sibling_of.callees
            self.counts = sibling_of.counts
            self.links = sibling_of.links
        else:
            self.callees = {}
            self.counts = ir.GlobalVariable(
                self.module, ir.ArrayType(I64, max(len(self.exit_points), 1)), f"{symbol}_counts"
            )
            self.counts.initializer = ir.Constant(self.counts.value_type, None)
            # per exit: the side trace to jump to (patched when one is compiled; only growable exits ever are)
            self.links = ir.GlobalVariable(
                self.module, ir.ArrayType(PTR, max(len(self.exit_points), 1)), f"{symbol}_links"
            )
            self.links.initializer = ir.Constant(self.links.value_type, None)
        self.tail: ir.Block | None = None
        # a versioned loop's fast copy when LLVM's loop vectorizer gets it (codegen.function.vectorizable)
        self.vectorized: ir.Function | None = None
        # functions that go into the vectorized copy's module with it (codegen.function: the single-run entry)
        self.vectorized_too: list[ir.Function] = []
        self.tail_index: Any = None
        self.tail_fuel: Any = None
        # per state to write (``state_key``: what the interpreter gets, by the IR values that give it; codegen.function
        # starts over at the loop): the block that writes it, shared by every exit that leaves that state, with
        # phis of their number and fuel (less IR per guard, and less for LLVM to compile)
        self.state_writers: dict[tuple[Any, ...], tuple[ir.Block, ir.PhiInstr, ir.PhiInstr]] = {}
        self.state_writes = 0  # exits whose state went through a writer (shared or not), for tests and dumps
        # the module's branch-weight metadata nodes, by weights (weigh)
        self._weights: dict[tuple[int, ...], Any] = {}
        # the state at each snapshot asked for (resume), by its id (with the snapshot, which keeps the id its own)
        self._resumes: dict[int, tuple[Snapshot, FrameResume]] = {}
        self.globals: dict[str, Any] = host.globals if host is not None else {}
        self.builtins: dict[str, Any] = host.builtins if host is not None else {}
        # a tree's loop lowered with side traces that come back to it (codegen.joined): per exit point (its id()),
        # what lowers that side trace in place of the exit; what a part lowers instead of its end's tail-jump
        # into the tree; what writes the state a part's exits start from (the loop's, at the side's exit); and the
        # phis and block of the loop's top (codegen.function)
        self.joined: dict[int, Callable[[], None]] = {}
        # (a fast copy of a loop joined with side traces: codegen.joined) each guard a joined side trace hangs from
        # branches with the weights RECORDED_WAY
        self.recorded_way = False
        # (a loop joined with one side trace computed both ways, codegen.joined: if-converted) per exit point, what
        # lowers the side trace in the loop's own block, given the guard's condition (the root's way); and, while
        # one way of such an iteration is lowered, the condition under which it is the way taken: a guard leaves
        # only where it fails on that way
        self.if_converted: dict[int, Callable[[ir.Value], None]] = {}
        self.predicate: ir.Value | None = None
        # (while such a way is lowered) the context and exit point of the branch that chooses the way: a guard that
        # fails only on huge ints (``speculated``) is checked on both ways and leaves there, before the branch
        self.branch_exit: tuple[LowerContext, ExitPoint, int] | None = None
        self.rejoin: Callable[[Uop], None] | None = None
        self.before_state: Callable[[], None] | None = None
        self.loop_top: tuple[Any, ir.Block] | None = None
        # (a loop being lowered: codegen.function) what ends an iteration, given the next one's state at the loop's
        # top: on there, or (a counted fast copy) at its run's end to the dispatch; a joined side trace ends by it
        self.loop_latch: Callable[[Any], None] | None = None
        # (a copy of a root's loop joined with side traces) the root's function, which it goes back to where no
        # joined side trace ran for a while and the root has a fast copy (codegen.function._check_quiet)
        self.back_to_root: str | None = None
        # the values that own their reference (codegen.ownership), and the position (index in trace.uops) of
        # the uop being lowered
        self.ownership = Ownership(trace)
        self.position = ENTRY
        self._objects_in_slots: frozenset[int] | None = None
        self.call_handed: Counter[int] = Counter()  # the owned values the last inner tree's call handed over
        # NumPy floating-point event checks not made yet (check_deferred): the conjunction of their "no event"
        # conditions, and the first of their uops, whose exit the one guard for all of them takes
        self.deferred: tuple[ir.Value, Uop] | None = None
        # (a counted fast copy whose run's checks are one flag: codegen.function) called with the address of each
        # array element about to be stored, to log its old value for the run's rollback; None elsewhere
        self.undo: Callable[..., None] | None = None
        # (such a copy on a processor whose status flags check its runs: codegen.float_status) the results of the
        # NumPy float operations the flags cover, which need no mark, and the word the flags are read into
        self.status_covered: frozenset[int] = frozenset()
        self.status_word: ir.Value | None = None
        # the NumPy floating-point events this trace's float operations ignore (NumPy's error state ignored them
        # when the trace was recorded, and its guard at the entry checks it still does: jit.numpy_errstate)
        self.ignored_events = numpy_errstate.ignored_by(trace)
        self.status_ignored: frozenset[str] = frozenset()  # (of those, the ones whose status flags a run ignores)
        # (a counted fast copy checked once per run whose body has guards: codegen.function) what a failing guard
        # does before its exit: where the run so far had a floating-point event, its rollback instead (a joined
        # side trace's body is lowered with its host's); and, per covered operation of the iteration so far, what
        # computes its mark there (note_covered)
        self.exit_check: Callable[[], None] | None = host.exit_check if host is not None else None
        self.covered_marks: list[Callable[[], ir.Value]] | None = None
        # (such a copy) the entries of its run's compact log so far (codegen.function._logger)
        self.log_position: ir.Value = ir.Constant(I64, 0)
        self.call_snapshot: Snapshot | None = None  # the state that call wrote to the buffer

    def _declared(self, name: str, type_: ir.Type) -> ir.GlobalVariable:
        """A global of another module (linked by name), declared in this one once."""
        known = self.module.globals.get(name)
        if known is None:
            known = ir.GlobalVariable(self.module, type_, name)
        return known  # type: ignore[return-value]

    # --- values ----------------------------------------------------------------------------------------
    def value(self, v: Value) -> ir.Value:
        known = self.values.get(v.id)
        if known is not None:
            return known
        if not v.is_const:
            raise KeyError(f"value v{v.id} ({v.kind.short}) used before it is defined")
        return self.constant(v.kind, v.const)

    def constant(self, kind: Kind, value: Any) -> ir.Value:
        if kind == Kind.INT or kind.is_numpy_int:
            return ir.Constant(I64, int(value))
        if kind.is_double:
            return ir.Constant(DOUBLE, float(value))
        if kind == Kind.NP_FLOAT32:
            return ir.Constant(FLOAT32, float(value))
        if kind in (Kind.BOOL, Kind.NP_BOOL):
            return ir.Constant(I1, int(bool(value)))
        if kind == Kind.WIDE_INT:
            return ir.Constant(I128, int(value))
        if kind.is_pointer:
            return self.pointer(value)
        return ir.Constant(I64, 0)  # None and unbound have no payload

    def pointer(self, obj: Any) -> ir.Value:
        """An ``i8*`` to obj: a symbol of the module (``codegen.symbols``), never its address as a constant."""
        return self.symbols.pointer(obj)

    # --- the frame buffer ------------------------------------------------------------------------------
    def _in_entry(self, key: tuple[Any, ...], make: Callable[[ir.IRBuilder], ir.Value]) -> ir.Value:
        """An address computed once, in the entry block (which every block is dominated by), and reused: less
        IR per exit (each state store used to compute its own address), less to print, parse and fold."""
        address = self._addresses.get(key)
        if address is None:
            b = self.builder
            with b.goto_block(self.entry):
                address = make(b)
            self._addresses[key] = address
        return address

    def word(self, index: int, type_: ir.Type = I64) -> ir.Value:
        """The address of buffer word index, as a pointer to type_."""
        if type_ is not I64:
            word = self.word(index)
            return self._in_entry(("word", index, str(type_)), lambda b: b.bitcast(word, type_.as_pointer()))
        return self._in_entry(("word", index), lambda b: b.gep(self.words, [ir.Constant(I64, index)], inbounds=True))

    def load_word(self, index: int, kind: Kind) -> ir.Value:
        b = self.builder
        if kind.is_double:
            return b.load(self.word(index, DOUBLE))
        if kind == Kind.NP_FLOAT32:  # (its double in the buffer: exact)
            return b.fptrunc(b.load(self.word(index, DOUBLE)), FLOAT32)
        if kind in (Kind.BOOL, Kind.NP_BOOL):
            return b.trunc(b.load(self.word(index)), I1)
        if kind.is_pointer:
            return b.load(self.word(index, PTR))
        return b.load(self.word(index))

    def store_word(self, index: int, kind: Kind, value: ir.Value) -> None:
        b = self.builder
        if kind.is_double:
            b.store(value, self.word(index, DOUBLE))
        elif kind == Kind.NP_FLOAT32:
            b.store(b.fpext(value, DOUBLE), self.word(index, DOUBLE))
        elif kind in (Kind.BOOL, Kind.NP_BOOL):
            b.store(b.zext(value, I64), self.word(index))
        elif kind.is_pointer:
            b.store(value, self.word(index, PTR))
        elif kind == Kind.INT or kind.is_numpy_int:
            b.store(value, self.word(index))
        else:
            b.store(ir.Constant(I64, 0), self.word(index))

    def store_stack(self, index: int, kind: Kind, value: ir.Value) -> None:
        """Operand stack entry index (an i128 in two words: its low word there, its high word in the wide area)."""
        b = self.builder
        if kind == Kind.WIDE_INT:
            b.store(b.trunc(value, I64), self.word(self.layout.stack_word_of(index)))
            b.store(b.trunc(b.ashr(value, ir.Constant(I128, 64)), I64), self.word(self.layout.wide_word_of(index)))
        else:
            self.store_word(self.layout.stack_word_of(index), kind, value)

    def load_stack(self, index: int, kind: Kind) -> ir.Value:
        b = self.builder
        if kind == Kind.WIDE_INT:
            low = b.zext(b.load(self.word(self.layout.stack_word_of(index))), I128)
            high = b.zext(b.load(self.word(self.layout.wide_word_of(index))), I128)
            return b.or_(b.shl(high, ir.Constant(I128, 64)), low)
        return self.load_word(self.layout.stack_word_of(index), kind)

    def tag_address(self, offset: int) -> ir.Value:
        return self._in_entry(("tag", offset), lambda b: b.gep(self.buf, [ir.Constant(I64, offset)], inbounds=True))

    def store_slot(self, slot: int, kind: Kind, value: ir.Value, owned: bool = False) -> None:
        self.store_word(self.layout.slot_word(slot), kind, value)
        tag = int(kind) | DIRTY | (OWNED if owned else 0)
        self.builder.store(ir.Constant(I8, tag), self.tag_address(self.layout.slot_tag(slot)))

    def store_slot_if(self, written: ir.Value, slot: int, kind: Kind, value: ir.Value, owned: bool = False) -> None:
        """store_slot if written (an i1), else leave the slot's word and tag as they are. Branchless: on an exit
        path, where this is used, a branch per slot made two more blocks, and LLVM's instruction selection works
        block by block (issue 9: compile time)."""
        b = self.builder
        word = self.word(self.layout.slot_word(slot))
        b.store(b.select(written, self._word_bits(kind, value), b.load(word)), word)
        address = self.tag_address(self.layout.slot_tag(slot))
        tag = int(kind) | DIRTY | (OWNED if owned else 0)
        b.store(b.select(written, ir.Constant(I8, tag), b.load(address)), address)

    def _word_bits(self, kind: Kind, value: ir.Value) -> ir.Value:
        """value as the i64 store_word writes for kind."""
        b = self.builder
        if kind.is_double:
            return b.bitcast(value, I64)
        if kind == Kind.NP_FLOAT32:
            return b.bitcast(b.fpext(value, DOUBLE), I64)
        if kind in (Kind.BOOL, Kind.NP_BOOL):
            return b.zext(value, I64)
        if kind.is_pointer:
            return b.ptrtoint(value, I64)
        if kind == Kind.INT or kind.is_numpy_int:
            return value
        return ir.Constant(I64, 0)

    def load_slot(self, slot: int, kind: Kind) -> ir.Value:
        return self.load_word(self.layout.slot_word(slot), kind)

    def slot_kind_matches(self, slot: int, kind: Kind) -> ir.Value:
        """Does the slot hold a value of kind, as its tag says? An array counts where the tag says an object: a
        tree's entry stub tags the arrays outside its entry type map as objects (its support library knows
        nothing of NumPy: ``codegen.entry``), and both hold the array's address; without that, a side trace that
        reads an array its root never did failed this guard at every iteration, and so did each side trace
        grown from it (a histogram's counts, written only on one branch, where the trees started on the
        other)."""
        b = self.builder
        tag = b.load(self.tag_address(self.layout.slot_tag(slot)))
        kind_bits = b.and_(tag, ir.Constant(I8, KIND_BITS))
        same = b.icmp_unsigned("==", kind_bits, ir.Constant(I8, int(kind)))
        if kind is not Kind.ARRAY:
            return same
        before = b.block
        object_tagged = self.function.append_basic_block("slot_object_tagged")
        done = self.function.append_basic_block("slot_kind_known")
        b.cbranch(b.icmp_unsigned("==", kind_bits, ir.Constant(I8, int(Kind.OBJECT))), object_tagged, done)
        b.position_at_end(object_tagged)
        obj = self.load_slot(slot, Kind.OBJECT)
        obj_type = b.load(b.bitcast(b.gep(obj, [ir.Constant(I64, abi.OB_TYPE)], inbounds=True), PTR.as_pointer()))
        is_array = b.icmp_unsigned("==", obj_type, self.pointer(arrays.numpy_module().ndarray))
        b.branch(done)
        b.position_at_end(done)
        matches = b.phi(I1, name="slot_is_array")
        matches.add_incoming(same, before)
        matches.add_incoming(is_array, object_tagged)
        return matches

    def load_fuel(self) -> None:
        self.fuel = self.builder.load(self.word(abi.FUEL))

    def store_fuel(self) -> None:
        assert self.fuel is not None
        self.builder.store(self.fuel, self.word(abi.FUEL))

    # --- the interpreter's state -----------------------------------------------------------------------
    def materialize(self, snapshot: Snapshot, stack: bool = True, pin: bool = True) -> int:
        """Write what the interpreter needs at snapshot (as ``jit.resume`` works it out): the slots whose
        values the buffer lacks, and the stack (unless not stack); return the stack's depth. A slot of an owned
        kind always goes with a reference of its own (a constant's taken here), and the buffer's reference to
        the value a slot held where the trace started, if of an owned kind, is released
        (``codegen.ownership``). Unless not pin, an object that depends on an owned value (an item of a list
        the trace built: ``Ownership.pinned``) goes with a reference of its own too: that owned value may be
        released once the state is written."""
        b = self.builder
        pinned = {v.id for v in self.ownership.pinned(self.trace, snapshot)[0]} if pin else set()
        if self.before_state is not None:  # (a side trace inside its tree's loop: the loop's state first)
            self.before_state()
        frame = self.resume(snapshot)
        handed: set[int] = set()  # owned values handed over already: one more reference for each other place
        replaced: list[ir.Value] = []  # the buffer's references to the slots' former values
        for state in frame.slots:
            if state.hold is Hold.VALUE:
                assert state.value is not None
                old = self.owned_by_buffer(state.slot) if self.buffer_may_own(state.slot, state.value.kind) else None
                owned = self.hand_over(state.value, handed)
                if not owned and (
                    state.value.kind in OWNED_KINDS
                    or state.value.id in pinned
                    or written_with_reference(self.trace, state.slot, state.value)
                ):
                    self.incref(self.value(state.value))  # (a constant, a pinned object, one borrowed elsewhere)
                    owned = True
                self.store_slot(state.slot, state.value.kind, self.value(state.value), owned)
                if old is not None and not owned and state.value.kind.is_pointer:
                    old = self._keep_if_same(state.slot, state.value.kind, old, self.value(state.value))
                if old is not None:
                    replaced.append(old)
            elif state.hold is Hold.PREVIOUS:
                flag = self.valid.get(state.slot)
                if flag is not None:  # the previous iteration's value, once there was one
                    written, previous = flag
                    kind = self.valid_kinds[state.slot]
                    assert kind not in OWNED_KINDS, "an owned kind in a slot assigned late (jit.recorder reads it)"
                    old = self.store_previous(state.slot, kind, written, previous)
                    if old is not None:
                        replaced.append(old)
        for index, value in enumerate(frame.stack if stack else ()):
            owned = self.hand_over(value, handed)
            if not owned and value.id in pinned:
                self.incref(self.value(value))
                owned = True
            self.store_stack(index, value.kind, self.value(value))
            tag = self.tag_address(self.layout.stack_tag(index))
            b.store(ir.Constant(I8, int(value.kind) | DIRTY | (OWNED if owned else 0)), tag)
        if replaced:
            # (NULL-safe Py_DecRef: NULL where the buffer held no reference.) Usually all are NULL, as at a nested
            # tree's exit that returns to its caller (once per call): one test then skips the calls (issue 9:
            # nested-call cost), one block for all of them (compile time)
            some = functools.reduce(b.or_, (b.icmp_unsigned("!=", old, ir.Constant(PTR, None)) for old in replaced))
            with b.if_then(some, likely=False):
                for old in replaced:
                    self.capi("Py_DecRef", old)
        return len(frame.stack)

    def store_loop_state(
        self,
        values: dict[int, tuple[Kind, ir.Value]],
        previous: dict[int, tuple[Kind, ir.Value, ir.Value]] | None = None,
    ) -> None:
        """Write slots where native code goes on from the buffer (the loop's state at its top, handed from one
        function of a trace to another: its fast copy, back to the trace's function; a joined side trace's slots):
        values, slot -> (kind, value); previous, slot -> (kind, written, value) of slots assigned late
        (store_previous). An object goes with a reference of its own, as jit.resume.written_with_reference says (an owned kind:
        the caller's plan, as before), and the buffer's references to what the slots held are released once every
        slot is written, as materialize does (`box, keep = keep, box`: the object one slot gives up may be the
        one the next takes)."""
        replaced: list[ir.Value] = []
        for slot, (kind, value) in values.items():
            if kind not in MAY_BE_OWNED or kind in OWNED_KINDS:
                self.store_slot(slot, kind, value)
                continue
            if self.buffer_may_own(slot, kind):
                replaced.append(self.owned_by_buffer(slot))
            self.incref(value)
            self.store_slot(slot, kind, value, owned=True)
        for slot, (kind, written, value) in (previous or {}).items():
            old = self.store_previous(slot, kind, written, value)
            if old is not None:
                replaced.append(old)
        for old in replaced:
            self.capi("Py_DecRef", old)  # (NULL-safe)

    def store_previous(self, slot: int, kind: Kind, written: ir.Value, previous: ir.Value) -> ir.Value | None:
        """Write a slot assigned late (``jit.resume.assigned_late``) with the previous iteration's value, if written
        (an i1): an object with a reference of its own, as jit.resume.written_with_reference says (the previous iteration's
        item of a list may be stored over by the side trace linked to this exit). Returns the buffer's reference
        to what the slot held, to release once the state is written (NULL where none), or None."""
        b = self.builder
        old = None
        if self.buffer_may_own(slot, kind):  # (what an outer trace or an exit handed over there: released)
            old = b.select(written, self.owned_by_buffer(slot), ir.Constant(PTR, None))
        owned = kind in MAY_BE_OWNED
        if owned:
            with b.if_then(written):
                self.incref(previous)
        self.store_slot_if(written, slot, kind, previous, owned=owned)
        return old

    def _keep_if_same(self, slot: int, kind: Kind, old: ir.Value, value: ir.Value) -> ir.Value:
        """(A slot written with a value the trace holds no reference of its own to, where the buffer owned a
        reference to what the slot held: old, else NULL) if that is the very object written, the buffer keeps
        its reference and the tag OWNED: the value is borrowed from that reference. (A tree entered by a link,
        whose jump handed over a list the trace then reads at its entry without a reference of its own: releasing
        the buffer's freed the object the slot still pointed to.) Returns what is to be released: old, or NULL."""
        b = self.builder
        same = b.icmp_unsigned("==", old, b.bitcast(value, PTR))
        tag = int(kind) | DIRTY
        b.store(
            b.select(same, ir.Constant(I8, tag | OWNED), ir.Constant(I8, tag)),
            self.tag_address(self.layout.slot_tag(slot)),
        )
        return b.select(same, ir.Constant(PTR, None), old)

    def buffer_may_own(self, slot: int, writing: Kind) -> bool:
        """May the buffer hold a reference of its own (tag OWNED) to what slot held where the trace started, which
        writing a value of kind writing there must release? (A kind an exit may hand over owned there; or, in a
        root of a nested loop, a slot it does not read first: an outer trace calling the tree may have handed
        over an int object or a list it owns there. Entered from its stub, a tree has every slot's tag set, OWNED
        only where its type map takes an int object: the test at run time finds no reference there. Otherwise, a
        slot the trace does not read first may hold an object a side trace jumping into the tree, or an exit
        before it, wrote there with a reference of its own: tested where an object is written over it, which is
        what such a variable holds, and where the trace's own states hold an object in the slot (an inner loop's
        hidden slots, cleared where the outer loop's body ends). One that goes from an object to a number there
        otherwise keeps that reference: a leak, not a crash; a test per exit for every number, or every
        clearing, made the code a tenth bigger and doubled some traces' compile time.)"""
        trace = self.trace
        if trace.kind is TraceKind.ROOT:
            value = trace.entry_slots.get(slot)
            kind = value.kind if value is not None else None
        else:
            kind = trace.known_kinds.get(slot)
        if kind is not None:
            return kind in MAY_BE_OWNED
        nested = trace.loop is not None and trace.loop.parent is not None
        return nested or writing in MAY_BE_OWNED or slot in self._object_slots()

    def _object_slots(self) -> frozenset[int]:
        """The slots that hold an object (a kind of MAY_BE_OWNED) in some state this trace writes: an exit's, an
        inner tree call's, its end's (an inner loop's hidden slots, deleted where the outer loop's body ends)."""
        if self._objects_in_slots is None:
            snapshots = [self.trace.end_snapshot] if self.trace.end_snapshot is not None else []
            for uop in self.trace.uops:
                if uop.exit is not None:
                    snapshots.append(uop.exit.snapshot)
                if uop.name == "_CALL_TREE":
                    snapshots.append(uop.operand.snapshot)
            self._objects_in_slots = frozenset(
                slot
                for snapshot in snapshots
                for frame in snapshot.frames
                for slot, value in frame.slots.items()
                if value.kind in MAY_BE_OWNED
            )
        return self._objects_in_slots

    def take_over(self, obj: ir.Value, address: ir.Value) -> ir.Value:
        """obj, read from the buffer entry whose tag is at address, with a reference of the trace's own: the
        buffer's, if the tag says it holds one (OWNED: cleared, the trace takes it over), else a new one."""
        b = self.builder
        tag = b.load(address)
        owned = b.icmp_unsigned("!=", b.and_(tag, ir.Constant(tag.type, OWNED)), ir.Constant(tag.type, 0))
        with b.if_else(owned) as (taken, shared):
            with taken:
                b.store(b.and_(tag, ir.Constant(tag.type, 0xFF & ~OWNED)), address)
            with shared:
                self.incref(obj)
        return obj

    def owned_by_buffer(self, slot: int) -> ir.Value:
        """The object slot's word points to if its tag says the buffer owns a reference to it, else NULL."""
        b = self.builder
        tag = b.load(self.tag_address(self.layout.slot_tag(slot)))
        owns = b.icmp_unsigned("!=", b.and_(tag, ir.Constant(I8, OWNED)), ir.Constant(I8, 0))
        return b.select(owns, self.load_slot(slot, Kind.OBJECT), ir.Constant(PTR, None))

    def take_back(self, handed: Counter[int], snapshot: Snapshot, written: set[int]) -> None:
        """After an inner tree's call at snapshot returned the recorded way: the buffer's references to the owned
        values the call handed over (one per slot holding one), in the slots that still hold them with the tag
        OWNED, are released and the tags lose OWNED (the trace kept a reference of its own across the call). A
        slot the inner tree's exit wrote (written) holds what it wrote, with the reference the exit gave it, even
        where that is the object handed over (`box, keep = keep, box` run an even number of times): the exit
        released the one handed over itself, and the trace may read the slot back borrowed."""
        b = self.builder
        frame = self.resume(snapshot)
        for state in frame.slots:
            value = state.value
            if state.slot in written:
                continue
            if state.hold is Hold.VALUE and value is not None and value.id in handed:
                obj = self.value(value)
                address = self.tag_address(self.layout.slot_tag(state.slot))
                tag = b.load(address)
                owned = b.icmp_unsigned("!=", b.and_(tag, ir.Constant(I8, OWNED)), ir.Constant(I8, 0))
                same = b.icmp_unsigned("==", self.load_slot(state.slot, Kind.OBJECT), obj)
                with b.if_then(b.and_(owned, same)):
                    b.store(ir.Constant(I8, int(value.kind) | DIRTY), address)
                    self.decref(obj)

    def hand_over(self, value: Value, handed: set[int]) -> bool:
        """Whether value, written into the interpreter's state, goes with a reference of its own (taking one
        more if the state holds it somewhere already)."""
        if value.id not in self.ownership.defined:
            return False
        if value.id in handed:
            self.incref(self.value(value))
        handed.add(value.id)
        return True

    def release(self, values: list[Value], cold: bool = False) -> None:
        """Py_DECREF of each value's object; cold (an exit path): by calling Py_DecRef, no branch of its own
        (fewer blocks for LLVM to compile: issue 9)."""
        for value in values:
            if cold:
                self.capi("Py_DecRef", self.value(value))
            else:
                self.decref(self.value(value))

    def incref(self, obj: ir.Value) -> None:
        """Py_INCREF of an object (never NULL)."""
        if not INLINE_REFCOUNTS:
            self.capi("Py_IncRef", obj)
            return
        b = self.builder
        count = b.bitcast(obj, I64.as_pointer())
        b.store(b.add(b.load(count), ir.Constant(I64, 1)), count)

    def decref(self, obj: ir.Value) -> None:
        """Py_DECREF of an object (never NULL): freed when its count reaches zero."""
        if not INLINE_REFCOUNTS:
            self.capi("Py_DecRef", obj)
            return
        b = self.builder
        count = b.bitcast(obj, I64.as_pointer())
        left = b.sub(b.load(count), ir.Constant(I64, 1))
        b.store(left, count)
        last = b.icmp_signed("==", left, ir.Constant(I64, 0))
        with b.if_then(last, likely=False):
            self.capi("_Py_Dealloc", obj)

    # --- guards and exits ------------------------------------------------------------------------------
    def guard(self, ok: ir.Value, uop: Uop, before_exit: Callable[[], None] | None = None) -> None:
        """Continue if ok, else leave through uop's exit. (A guard with nothing to do before its exit, no
        owned value to release, branches straight to the block that writes its exit's state.)"""
        b = self.builder
        assert uop.exit is not None
        exit = uop.exit
        converted = self.if_converted.get(id(exit))
        if converted is not None and before_exit is None:
            converted(ok)  # (both ways, in this block: codegen.joined)
            return
        if self.predicate is not None and self.branch_exit is not None and before_exit is None and speculated(uop):
            self._guard_before_branch(ok, uop)
            return
        if self.predicate is not None:  # (a way computed whether or not it is taken: it leaves only if taken)
            ok = b.select(self.predicate, ok, ir.Constant(I1, 1))
        cont = self.function.append_basic_block()
        joined = self.joined.get(id(exit))
        if joined is not None and before_exit is None:
            # its side trace, in place: no branch weights (a side path taken as often as the loop's own), but in a
            # fast copy (recorded_way)
            side = self.function.append_basic_block(f"side_{uop.name.lower()}")
            branch = b.cbranch(ok, cont, side)
            if self.recorded_way:
                self.weigh(branch, RECORDED_WAY)
            b.position_at_end(side)
            joined()
            b.position_at_end(cont)
            return
        if (
            before_exit is None
            and self.exit_check is None
            and not exit.propagate
            and not self.ownership.live_at(self.position)
        ):
            target, number, fuel = self._exit_target(exit)
            branch = b.cbranch(ok, cont, target)
            number.add_incoming(ir.Constant(I64, self.exit_index[id(exit)]), b.block)
            fuel.add_incoming(self._fuel(), b.block)
        else:
            fail = self.function.append_basic_block(f"exit_{uop.name.lower()}")
            branch = b.cbranch(ok, cont, fail)
            b.position_at_end(fail)
            if self.exit_check is not None:
                self.exit_check()
            if before_exit is not None:
                before_exit()
            self.exit_stub(exit)
        self.weigh(branch, GUARD_WEIGHTS)
        b.position_at_end(cont)

    def _guard_before_branch(self, ok: ir.Value, uop: Uop) -> None:
        """(A guard on one way of an if-converted iteration that fails only on huge ints) continue if ok, on
        either way, else leave through the exit of the branch that chooses the way, which is exact whichever
        way is taken (nothing on a way has an effect) and is linked to the side trace compiled apart, whose own
        guards then decide. Predicated on its way instead (``select``), the guard's test waits for the way's
        condition and costs an ``or`` and a ``setcc`` per iteration: collatz's loop 1.4x slower."""
        assert self.branch_exit is not None
        owner, point, position = self.branch_exit
        b = self.builder
        cont = self.function.append_basic_block()
        fail = self.function.append_basic_block(f"exit_{uop.name.lower()}_before_branch")
        self.weigh(b.cbranch(ok, cont, fail), GUARD_WEIGHTS)
        b.position_at_end(fail)
        if owner.exit_check is not None:
            owner.exit_check()
        here, owner.position = owner.position, position  # (what it owns there, not after the branch)
        owner.exit_stub(point)
        owner.position = here
        b.position_at_end(cont)

    def resume(self, snapshot: Snapshot) -> FrameResume:
        """The interpreter's state at snapshot (``jit.resume.exit_resume``'s one frame), worked out once: a guard's
        exit asks for it to name the state (state_key), then to write it (materialize)."""
        known = self._resumes.get(id(snapshot))
        if known is not None:
            return known[1]
        (frame,) = exit_resume(self.trace, snapshot)
        self._resumes[id(snapshot)] = (snapshot, frame)
        return frame

    def weigh(self, branch: ir.Instruction, weights: tuple[int, ...]) -> None:
        """``branch.set_weights(weights)``, the same metadata node: llvmlite makes the node's operands anew at each
        call and looks them up among the module's nodes, 7 microseconds, for each guard; here it is looked up once
        per weights."""
        node = self._weights.get(weights)
        if node is None:
            branch.set_weights(list(weights))
            self._weights[weights] = branch.metadata["prof"]
        else:
            branch.set_metadata("prof", node)

    def check_deferred(self, mark: ir.Value, uop: Uop) -> None:
        """Leave through uop's exit unless mark (a double) is 0, checked later: the marks of the checks deferred
        after it add up, and one guard where the next uop that is not pure is lowered (flush_deferred) tests
        their sum, leaving through the exit of the first of them (a mark is 0 or NaN, so the sum is 0 where
        every one is). Exact only for checks of a uop that has no effect but its result, whose exit redoes it
        (a NumPy float operation: the interpreter redoes it and every pure uop after it, and reports the event
        where NumPy would); the caller flushes before anything with an effect, a guard, or the end of an
        iteration (codegen.function). Owned values live here: checked at once (their hand-over is the exit's)."""
        assert uop.exit is not None and not uop.exit.propagate
        if self.deferred is None and self.ownership.live_at(self.position):
            self.guard(self.builder.fcmp_ordered("==", mark, ir.Constant(mark.type, 0.0)), uop)
        elif self.deferred is None:
            self.deferred = (mark, uop)
        else:
            self.deferred = (self.builder.fadd(self.deferred[0], mark), self.deferred[1])

    def status_covers(self, uop: Uop) -> bool:
        """Do the processor's status flags check uop's floating-point events in this run (codegen.float_status),
        so that it needs no mark?"""
        return uop.out is not None and uop.out.id in self.status_covered

    def note_covered(self, mark: Callable[[], ir.Value]) -> None:
        """(An operation the status flags cover: status_covers) mark computes, where it is called, the operation's
        mark (as check_deferred takes it): where a guard fails later in the iteration, the flags cannot tell
        whether the operation ran yet (LLVM may compute it after the guard's branch), its mark can."""
        if self.covered_marks is not None:
            self.covered_marks.append(mark)

    def flush_deferred(self) -> None:
        """The one guard of the checks deferred so far (check_deferred), if any."""
        if self.deferred is not None:
            mark, first = self.deferred
            self.deferred = None
            self.guard(self.builder.fcmp_ordered("==", mark, ir.Constant(mark.type, 0.0)), first)

    def hand_over_end(self, snapshot: Snapshot) -> None:
        """The end of a trace that goes on in other code (a tail-jump into a tree, a join into the loop): write
        the state at snapshot, then release the owned values the state does not hold that are needed up to
        here (objects in the state depended on them)."""
        self.materialize(snapshot)
        in_state = self.ownership.state(self.trace, snapshot)
        released = self.ownership.released.get(self.position, [])
        self.release([value for value in released if value.id not in in_state], cold=True)

    def exit_stub(self, exit: ExitPoint) -> None:
        """Leave through exit: write the interpreter's state, then go to the trace's shared exit tail."""
        b = self.builder
        joined = self.joined.get(id(exit))
        if joined is not None:
            joined()
            return
        index = self.exit_index[id(exit)]
        live = self.ownership.live_at(self.position)
        after: list[Value] = []
        if live:
            # owned values the exit's state does not hold are released here (the others are handed over; after
            # an inner tree's call that left another way, the state is the buffer's: the call handed them over),
            # or, if an object in the state depends on them, once the state is written
            if exit.propagate or exit.prewritten is not None:
                in_state = Counter()  # (the state is the buffer's: the trace kept its own references across the call)
                late: set[int] = set()
            else:
                in_state = self.ownership.state(self.trace, exit.snapshot)
                late = self.ownership.pinned(self.trace, exit.snapshot)[1]
            gone = [value for value in live if value.id not in in_state]
            self.release([value for value in gone if value.id not in late], cold=True)
            after = [value for value in gone if value.id in late]
        if exit.propagate:
            counter = b.gep(self.counts, [ir.Constant(I32, 0), ir.Constant(I32, index)], inbounds=True)
            b.store(b.add(b.load(counter), ir.Constant(I64, 1)), counter)
            assert self.call_result is not None
            b.ret(self.call_result)
            return
        target, number, fuel = self._exit_target(exit, after)
        number.add_incoming(ir.Constant(I64, index), b.block)
        fuel.add_incoming(self._fuel(), b.block)
        b.branch(target)

    def _fuel(self) -> ir.Value:
        return self.fuel if self.fuel is not None else ir.Constant(I64, 0)

    def _exit_target(self, exit: ExitPoint, after: Sequence[Value] = ()) -> tuple[ir.Block, ir.PhiInstr, ir.PhiInstr]:
        """Where a (not propagating) exit goes, with the phis of its number and fuel there: the shared exit
        tail if the state is in the buffer already, else the block that writes its snapshot's state and then
        releases after (shared by the exits that resume there and release the same)."""
        if exit.prewritten is not None:
            return self.exit_tail(), self.tail_index, self.tail_fuel
        key = self.state_key(exit.snapshot, after)
        self.state_writes += 1
        writer = self.state_writers.get(key)
        if writer is None:
            b = self.builder
            here = b.block
            block = self.function.append_basic_block("exit_state")
            b.position_at_end(block)
            number, fuel_phi = b.phi(I64, name="exit_number"), b.phi(I64, name="exit_fuel_in")
            depth = self.materialize(exit.snapshot)
            # (a prewritten exit's depth is in the buffer already, written by the inner tree's exit with its state)
            b.store(ir.Constant(I64, depth), self.word(abi.DEPTH))
            self.release(list(after), cold=True)
            tail = self.exit_tail()
            self.tail_index.add_incoming(number, b.block)
            self.tail_fuel.add_incoming(fuel_phi, b.block)
            b.branch(tail)
            writer = (block, number, fuel_phi)
            self.state_writers[key] = writer
            b.position_at_end(here)
        return writer

    def state_key(self, snapshot: Snapshot, after: Sequence[Value] = ()) -> tuple[Any, ...]:
        """What ``materialize(snapshot)`` followed by releasing after writes, as a key: equal keys write the same
        IR. Snapshots of different points of the trace often leave the same state (guards of one instruction, or
        before anything of an iteration is assigned): their exits share one writer. A value is named by itself
        (what it owns, pins or hands over goes by its id: two values of one IR value, a guard's input and output,
        may differ there) and by the IR value it stands for here (``values`` changes at the loop's top and in a
        versioned loop's copies), a slot assigned late by its flag and previous value, so a key never names
        values of another copy of the loop; each IR value named dominates every exit that has the key (it is
        used there), hence the writer."""
        frame = self.resume(snapshot)
        slots = []
        for state in frame.slots:
            if state.hold is Hold.VALUE:
                assert state.value is not None
                slots.append((state.slot, self._value_key(state.value)))
            elif state.hold is Hold.PREVIOUS:
                flag = self.valid.get(state.slot)
                slots.append((state.slot, None if flag is None else (id(flag[0]), id(flag[1]))))
        stack = tuple(self._value_key(value) for value in frame.stack)
        return (tuple(slots), stack, tuple(self._value_key(value) for value in after), id(self.before_state))

    def _value_key(self, value: Value) -> tuple[int, int]:
        known = self.values.get(value.id)
        return (value.id, 0 if known is None else id(known))  # (None: a constant, made where it is used)

    def exit_tail(self) -> ir.Block:
        """One block for the end of every exit of the trace: count it, record its number (and the fuel left),
        and tail-jump into the side trace linked to it if there is one, else return its number. (Sharing it
        keeps the module, and LLVM's work on it, small.)"""
        if self.tail is not None:
            return self.tail
        b = self.builder
        here = b.block
        self.tail = self.function.append_basic_block("exit_tail")
        b.position_at_end(self.tail)
        self.tail_index = b.phi(I64, name="exit_index")
        self.tail_fuel = b.phi(I64, name="exit_fuel")
        index = self.tail_index
        counter = b.gep(self.counts, [ir.Constant(I64, 0), index], inbounds=True)
        b.store(b.add(b.load(counter), ir.Constant(I64, 1)), counter)
        first = self.exit_points[0].id
        number = b.add(index, ir.Constant(I64, first))
        b.store(number, self.word(abi.EXIT))
        # the fuel left tells the runtime how many iterations this entry ran (its policy of entries that pay)
        b.store(self.tail_fuel, self.word(abi.FUEL))
        target = b.load(b.gep(self.links, [ir.Constant(I64, 0), index], inbounds=True))
        jump = self.function.append_basic_block("exit_linked")
        leave = self.function.append_basic_block("exit_return")
        b.cbranch(b.icmp_unsigned("!=", target, ir.Constant(PTR, None)), jump, leave)
        b.position_at_end(jump)
        b.ret(b.call(b.bitcast(target, TRACE_FN.as_pointer()), [self.buf], tail="musttail"))
        b.position_at_end(leave)
        b.ret(number)
        b.position_at_end(here)
        return self.tail

    # --- calls -----------------------------------------------------------------------------------------
    def capi(self, name: str, *args: ir.Value) -> ir.Value:
        fn = self.callees.get(name)
        if fn is None:
            ret, params = capi.SIGNATURES[name]
            fn = ir.Function(self.module, ir.FunctionType(ret, params), name)
            self.callees[name] = fn
        return self.builder.call(fn, list(args))

    def libm(self, name: str, *args: ir.Value) -> ir.Value:
        fn = self.callees.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(DOUBLE, [DOUBLE] * len(args)), name)
            self.callees[name] = fn
        return self.builder.call(fn, list(args))

    def intrinsic(self, name: str, ret: ir.Type, *args: ir.Value) -> ir.Value:
        fn = self.callees.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ret, [a.type for a in args]), name)
            self.callees[name] = fn
        return self.builder.call(fn, list(args))

    def tree_function(self, symbol: str) -> ir.Function:
        fn = self.callees.get(symbol)
        if fn is None:
            fn = ir.Function(self.module, TRACE_FN, symbol)
            fn.attributes.add("noinline")
            self.callees[symbol] = fn
        return fn
