"""The processor's floating-point status flags as the event check of a whole run of a counted fast copy.

NumPy reports a float operation's events (division by zero, overflow, underflow, invalid) by reading the
processor's sticky status flags after the operation (``npy_get_floatstatus``). A counted fast copy whose run is
checked once at its end (``codegen.function``: a rollback redoes the run in the checked copy, which leaves at
the exact operation) may do the same: clear the flags where its function starts, leave its NumPy float
operations as bare arithmetic, and read the flags where a run ends. Any flag set there sends the run to its
rollback, so the checked copy, exact as ever, decides; a flag raised by something else (a comparison with a
NaN, a Python float that overflows) only costs that run twice. So the loop does what Numba's does, plus one
read of the flags per run, instead of computing a mark per operation (``codegen.lower.numpy_values``).

Where they are cleared: not where the fast copy starts (each read waits for the float operations in flight: an
inner loop's tree called per outer iteration paid it at every call, a matrix product 4%), but where a run is
rolled back (``codegen.function._rollback``), the one place they are written. A flag left set before the fast
copy (by Python code, an outer trace, NumPy's own warnings) sends its first run there too: cleared, the run is
done again once by the fast copy entered anew, its hoisted operations computed again, so that an event of one of
them (computed once, before the runs) sets the flags again; set again at that run's end, the event was the
run's own, and the checked copy redoes it, leaving where the event is. (Clearing them and going on in the same
function instead was measured before, a matrix product 15% slower, and is not exact: an operation LLVM computes
before the first run would not raise its event again.)

Exact only where the operation surely executes in the run: LLVM treats float arithmetic as having no effect,
so it deletes an operation whose result is unused, computes once after the loop a value only the loop's exit
reads, and sinks an operand of a select into the branch that takes it. ``covered`` keeps the operations whose
result something that stays in every iteration needs (an element store, a recurrence such as a sum, the
condition of a select); the others keep their marks. x86-64 only (its MXCSR; elsewhere the marks stay).

The events NumPy's error state ignored when the trace was recorded (by default underflow; jit.numpy_errstate)
are not read: their flags may stay set from run to run (``ignorable``).

The flags are cleared, not saved and restored: nothing reads them across a Python-level call (NumPy clears
them before each operation it checks), and the checked copy's exits leave NumPy to raise its own.

A run with guards (``codegen.function._guarded_run``: a branch, an overflow check, int() of a float) reads them
also where a guard fails, before its exit: set, the run so far had an event (or something raised a flag) and is
rolled back instead; the operations of the guard's own iteration, which LLVM may compute after the guard's branch,
are checked there by their marks, computed on that way out (``LowerContext.note_covered``). There int() of a float
(``CONVERSIONS``) is covered too: x86-64's truncating conversion raises the invalid operation flag for a NaN, an
infinity or a value past 64 bits, exactly where int() leaves, and gives the "integer indefinite" (INT64_MIN),
which the iteration goes on with until the run's end or a guard rolls the run back. Uops that set or clear the
flags themselves on a result Python or NumPy accepts (``OWN_FLAGS``) never run in such a run.

A pathological case costs more than before: an outer loop that sets a flag before every call of an inner loop's
tree (a Python float overflowing at each outer iteration) now runs each call's first run twice.
tests/codegen/test_float_status.py has these cases.
"""

from __future__ import annotations

from llvmlite import ir

from codegen.capi import I32, PTR
from jit import numpy_errstate
from jit.trace import Trace, Uop, Value

#: MXCSR's sticky flags: invalid, denormal operand, division by zero, overflow, underflow, precision
_ALL_FLAGS = 0x3F
#: the four NumPy reports (its "invalid", "divide", "over", "under"); not precision, not a denormal operand
_REPORTED = 0x01 | 0x04 | 0x08 | 0x10
#: uops whose code handles the status flags itself: a NumPy inner loop clears and tests them (as NumPy does), libm
#: may raise them for a result Python accepts (math.exp's underflow to a denormal: a rollback at every run); never
#: in a run with guards whose end reads them (codegen.function._checks_only)
OWN_FLAGS = frozenset({"_NP_UFUNC_LOOP", "_CALL_MATH_UNARY", "_BINARY_OP_POWER_FLOAT"})
#: conversions whose check is the invalid operation flag: x86-64's truncation of a double to an i64 (cvttsd2si)
#: raises it for a NaN, an infinity and a value past 64 bits, exactly where int() leaves (``_CALL_FLOAT_TO_INT``)
CONVERSIONS = frozenset({"_CALL_FLOAT_TO_INT"})
#: uops of which only the first argument (the condition) is surely computed: LLVM may branch on a select
_CONDITION_ONLY = frozenset({"_SELECT", "_SELECT_INT_OBJECT"})


def available(module: ir.Module) -> bool:
    """Does module's target have status flags this module reads (x86-64's MXCSR)?"""
    return str(module.triple).startswith("x86_64")


def _mxcsr(module: ir.Module, name: str) -> ir.Function:
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR]), name)
    return fn


def _read(builder: ir.IRBuilder, module: ir.Module, slot: ir.Value) -> ir.Value:
    builder.call(_mxcsr(module, "llvm.x86.sse.stmxcsr"), [builder.bitcast(slot, PTR)])
    return builder.load(slot)


def clear(builder: ir.IRBuilder, module: ir.Module, slot: ir.Value) -> None:
    """Clear the sticky flags (slot: an i32 alloca); the control bits (rounding, masks) stay as they are. The
    write (which waits for the float operations in flight) happens only where a flag NumPy reports is set: not
    for precision, which almost every run sets and ``raised`` ignores. (Where a run is rolled back.)"""
    word = _read(builder, module, slot)
    with builder.if_then(
        builder.icmp_unsigned("!=", builder.and_(word, ir.Constant(I32, _REPORTED)), ir.Constant(I32, 0))
    ):
        builder.store(builder.and_(word, ir.Constant(I32, ~_ALL_FLAGS & 0xFFFFFFFF)), slot)
        builder.call(_mxcsr(module, "llvm.x86.sse.ldmxcsr"), [builder.bitcast(slot, PTR)])


def raised(builder: ir.IRBuilder, module: ir.Module, slot: ir.Value, ignored: frozenset[str] = frozenset()) -> ir.Value:
    """Is one of the flags NumPy reports set (since ``clear``), but those of the events ignored (``ignorable``)?"""
    word = _read(builder, module, slot)
    reported = _REPORTED & ~sum(numpy_errstate.MXCSR_FLAG[event] for event in ignored)
    return builder.icmp_unsigned("!=", builder.and_(word, ir.Constant(I32, reported)), ir.Constant(I32, 0))


def ignorable(trace: Trace, ignored: frozenset[str], conversions: bool) -> frozenset[str]:
    """Of the events the trace's NumPy float operations ignore (NumPy's error state ignored them when it was
    recorded: jit.numpy_errstate), those whose flags a run's check may ignore: not the invalid operation's where
    the flags check conversions too (conversions: CONVERSIONS covered) and the trace has one (int() of a NaN
    raises whatever NumPy's state says)."""
    if conversions and "invalid" in ignored and any(uop.name in CONVERSIONS for uop in trace.uops):
        return ignored - {"invalid"}
    return ignored


def covered(trace: Trace, deferring: frozenset[str]) -> frozenset[int]:
    """The ids of the results of a counted fast copy's NumPy float operations (uops named in deferring) that
    its every iteration surely computes, so that the status flags cover their events: needed by an element
    store or another effect, by a recurrence (a slot whose new value depends on its old one: LLVM cannot
    compute a float chain's end without each step), by the condition of a select, or by such a value in
    this iteration or, through a slot, the next; not an operation whose operands are all constants (LLVM
    folds it)."""
    assert trace.end_snapshot is not None
    body = []
    for uop in trace.uops[2:]:
        if uop.name == "_JUMP_TO_TOP":
            break
        body.append(uop)
    producer = {uop.out.id: uop for uop in body if uop.out is not None}
    entry = trace.entry_slots
    end = trace.end_snapshot.outer.slots
    slot_of = {value.id: slot for slot, value in entry.items()}
    needed: set[int] = set()
    work: list[Value] = []

    def need(value: Value) -> None:
        if value.id not in needed:
            needed.add(value.id)
            work.append(value)

    for uop in body:
        op = uop.fast if uop.fast is not None else uop.op
        if uop.name not in deferring and not (op.pure and not op.owns):
            for arg in uop.args:
                need(arg)
    for slot, value in end.items():
        if slot in entry and value is not entry[slot] and _depends_on(value, entry[slot], producer):
            need(value)
    while work:
        value = work.pop()
        uop = producer.get(value.id)
        if uop is not None:
            for arg in uop.args[:1] if uop.name in _CONDITION_ONLY else uop.args:
                need(arg)
        slot = slot_of.get(value.id)
        if slot is not None and slot in end and end[slot].id in producer:
            need(end[slot])
    return frozenset(
        uop.out.id
        for uop in body
        if uop.name in deferring
        and uop.out is not None
        and uop.out.id in needed
        and not all(arg.is_const for arg in uop.args)
    )


def _depends_on(value: Value, source: Value, producer: dict[int, Uop]) -> bool:
    seen: set[int] = set()
    stack = [value]
    while stack:
        current = stack.pop()
        if current is source:
            return True
        uop = producer.get(current.id)
        if uop is None or current.id in seen:
            continue
        seen.add(current.id)
        stack.extend(uop.args)
    return False
