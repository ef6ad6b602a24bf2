"""Handlers of control flow: branches become guards, loop headers close or nest, returns end side traces."""

from __future__ import annotations

from typing import Any

from jit.aborts import Abort, Reason
from jit.frontend import instructions as I
from jit.recorder import generic
from jit.recorder.recorder import Recorder, _EndHere, _handles
from jit.trace import TraceEnd, TraceKind, Value, WhenHot
from runtime.frame import Frame


@_handles(I.POP_JUMP_IF_FALSE, I.POP_JUMP_IF_TRUE)
def _pop_jump_if(r: Recorder, frame: Frame, target: int) -> None:
    condition = _truth(r, r.pop(objects=True), frame.stack[-1])  # (an int past 64 bits: compared with 0)
    jump_when = r.code.ops[r.pc] == I.POP_JUMP_IF_TRUE
    if generic.runs_code(r, condition):  # (the user's __bool__ runs once: its answer is seen where it went)
        generic.branch_later(r, condition, jump_when, target, pops=True)
        return
    truth = bool(frame.stack[-1])
    jumps = truth == jump_when
    r.guard_branch(condition, truth, r.pc + 1 if jumps else target)


@_handles(I.JUMP_IF_FALSE_OR_POP, I.JUMP_IF_TRUE_OR_POP)
def _jump_if_or_pop(r: Recorder, frame: Frame, target: int) -> None:
    value = r.abstract.peek()
    condition = _truth(r, value, frame.stack[-1])
    jump_when = r.code.ops[r.pc] == I.JUMP_IF_TRUE_OR_POP
    if generic.runs_code(r, condition):
        generic.branch_later(r, condition, jump_when, target, pops=False)
        return
    truth = bool(frame.stack[-1])
    jumps = truth == jump_when
    r.guard_branch(condition, truth, r.pc + 1 if jumps else target)
    if not jumps:
        r.pop(objects=True)  # (discarded: an int past 64 bits stays one)


def _truth(r: Recorder, value: Value, actual: Any) -> Value:
    return generic.truth_of(r, value, actual)


@_handles(I.JUMP)
def _jump(r: Recorder, frame: Frame, target: int) -> None:
    pass


@_handles(I.JUMP_BACKWARD)
def _jump_backward(r: Recorder, frame: Frame, target: int) -> None:
    loop = r.code.loops[r.code.args[target]]
    if loop.index != r.trace.loop.index:
        if loop.index in r.finishing_inner:  # the end of an iteration its tree left midway
            r.finishing_inner.discard(loop.index)
            return
        if loop.index in r.unrolled:  # a short inner loop recorded through (Recorder.unroll)
            return
        # (INNER_FIRST: the monitor lets the inner loop record at its next header, the outer loop after it)
        raise Abort(r.host.why_no_tree(loop.index), line=loop.line, loop=loop.index)


@_handles(I.LOOP_HEADER)
def _loop_header(r: Recorder, frame: Frame, index: int) -> None:
    if index == r.trace.loop.index:
        r.close_at_header(frame)
        return
    try:
        r.inner_header(frame, r.code.loops[index])
    except _EndHere:
        r.trace.end = TraceEnd.EXIT
        r.trace.end_snapshot = r.snapshots.take(empty_stack=True)
        r.emit("_EXIT_TRACE", operand=r.pc)
        r.trace.uops[-1].exit.when_hot = WhenHot.NEVER  # type: ignore[union-attr]  # the inner loop's tree takes over
        r.finish(frame)


@_handles(I.RETURN_VALUE)
def _return_value(r: Recorder, frame: Frame, arg: Any) -> None:
    """A side trace ends here, leaving to the interpreter with the value on the stack, which returns it. A
    root trace whose iteration returns has no loop to compile: it is recorded again at the next chance."""
    if r.inlined:  # an inlined callee returns to the caller's trace
        r.inlined[-1].result = r.pop(objects=True)  # (an int past 64 bits: returned as it is)
        return
    if r.trace.kind is TraceKind.ROOT:
        raise Abort(Reason.RETURN_IN_LOOP)
    r.end_with_exit(frame)


@_handles(I.RAISE)
def _raise(r: Recorder, frame: Frame, arg: Any) -> None:
    """A `raise` statement: a side trace ends here, leaving to the interpreter, which raises (a validation that
    fails often, caught by the caller, stays one exit of native code); a root trace whose iteration raises has no
    loop to compile: it is recorded again at the next chance (RAISES, a retry, not counted towards blacklisting)."""
    if r.inlined:  # (an inlined body that raises: the call is made for real)
        raise Abort(Reason.NOT_INLINED, name=r.inlined[-1].function.__qualname__, why="it raises")
    if r.trace.kind is TraceKind.ROOT:
        raise Abort(Reason.RAISES, what="a raise statement", exception="its exception")
    r.end_with_exit(frame)
