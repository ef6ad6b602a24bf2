"""The recorder: follows the interpreter through one iteration of a hot loop and writes it down as uops.

It is the interpreter's trace hook: before each tier-1 instruction runs, ``Recorder.__call__`` sees it with the
real operands on the frame, and keeps an abstract copy of the operand stack and slots made of trace values
(``jit.trace.Value``) in a ``jit.resume.FrameState``; a guard asks ``jit.resume`` for the snapshot of the state
the instruction started with (taken only then, shared with the previous one when nothing changed). Operations are specialized on the kinds seen (``jit.specialize``); branches become
guards in the direction taken. Recording ends when the loop's header comes round again (a root trace), or when
a side trace reaches a loop header it can jump into; it aborts, with a reason, on anything native code cannot
do. A root trace begins just after its ``LOOP_HEADER``; a side trace begins at the pc of the exit it hangs
from, with the state that exit wrote.

Inner loops are never inlined: reaching the header of an inner loop that has a compiled tree records one
``_CALL_TREE`` (the interpreter runs the tree meanwhile, so recording sees its result), and reaching one that
has none aborts, so the inner loop compiles first. Recording goes on from whichever exit the inner tree took
(its loop's end, a `break`, a `return`, a guard in the middle of an iteration, whose iteration the trace then
finishes). Two exceptions record an inner loop's iterations into the outer trace: a short range loop is unrolled
(``Recorder.unroll``), and a first iteration that changes a slot's kind, which its tree would run alone before
jumping into another (a bridge), is peeled (``Recorder.peel``), the tree for the kinds after it called. A side
trace ends with an exit where it leaves its loop or returns.

The Recorder is in ``jit.recorder.recorder``; each other module handles one kind of instruction and
registers its handlers when this package is imported.
"""

from jit.recorder import (  # noqa: F401  (each registers its handlers)
    array_access,
    calls,
    cells,
    control,
    generic,
    iteration,
    names,
    operators,
    stack_and_slots,
    subscripts,
    super_calls,
    unpacking,
)
from jit.recorder.recorder import Recorder

__all__ = ["Recorder"]
