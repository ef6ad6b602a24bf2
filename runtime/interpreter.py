"""The tier-1 interpreter: runs tier-1 code with CPython's exact semantics.

Every operation is delegated to Python itself (``operator`` functions, ``getattr``, calls), so values,
exception types and messages are CPython's. The JIT meets the interpreter in three places only:

* ``JUMP_BACKWARD`` counts back-edges per loop; when a loop passes the threshold, the function's JIT is told
  (``function.loop_is_hot``) and from then on the loop's ``LOOP_HEADER`` consults it;
* ``LOOP_HEADER`` of such a loop calls ``function.at_loop_header(frame, loop, pc)``: the one place where
  compiled code is entered. It returns the pc to go on from; after running native code this is the pc of
  the side exit taken, with ``frame.slots`` and ``frame.stack`` rebuilt to the exact tier-1 state there;
* while a trace is being recorded, ``frame.trace_hook(frame, pc)`` sees every instruction before it runs.

``run(frame, pc)`` may start at any instruction with any stack in ``frame.stack``: that is how execution
resumes after a side exit.

``run_loop(frame, loop, pc)`` runs one loop only (CPython runs the rest of the function) and stops when
execution leaves it. It runs ``run`` on a per-loop copy of the instructions in which the loop's exit and
break target are replaced by a private LEAVE opcode and its own LOOP_HEADER by OWN_HEADER, which asks
``function.at_own_header`` whether to go on; leaving a loop always takes a jump, so the whole-function hot
path pays nothing for this.
"""

from __future__ import annotations

from types import CellType
from typing import Any

from jit.aborts import Abort, Reason
from jit.frontend import instructions as I
from jit.frontend import instrument as instrument_protocol
from jit.frontend.instructions import (  # opcodes as plain globals: the dispatch compares them often
    BINARY_OP,
    BINARY_SUBSCR,
    BUILD_LIST,
    BUILD_MAP,
    BUILD_SET,
    BUILD_SLICE,
    BUILD_STRING,
    BUILD_TUPLE,
    CALL,
    CALL_KW,
    CLEAR_SLOTS,
    COMPARE_OP,
    COPY,
    DELETE_ATTR,
    DELETE_DEREF,
    DELETE_FAST,
    DELETE_GLOBAL,
    DELETE_SUBSCR,
    FOR_ITER,
    FOR_RANGE,
    FORMAT_VALUE,
    GET_ITER,
    JUMP,
    JUMP_BACKWARD,
    JUMP_IF_FALSE_OR_POP,
    JUMP_IF_TRUE_OR_POP,
    LIST_APPEND,
    LOAD_ATTR,
    LOAD_CONST,
    LOAD_DEREF,
    LOAD_FAST,
    LOAD_FAST_AND_CLEAR,
    LOAD_FREE,
    LOAD_GLOBAL,
    LOAD_SUPER_ATTR,
    LOOP_HEADER,
    MAKE_CELL,
    MAP_ADD,
    NOP,
    POP_JUMP_IF_FALSE,
    POP_JUMP_IF_TRUE,
    POP_TOP,
    RAISE,
    RANGE_SETUP,
    RETURN_VALUE,
    SET_ADD,
    STORE_ATTR,
    STORE_DEREF,
    STORE_FAST,
    STORE_FREE,
    STORE_GLOBAL,
    STORE_SUBSCR,
    SWAP,
    UNARY_OP,
    UNPACK_SEQUENCE,
    LoopInfo,
    T1Code,
)
from jit.kinds import by_index
from jit.unpacking import unpacker
from runtime import messages
from runtime.errors import enter_own_frames, generator_raised, internal, own_frames_at, raise_at
from runtime.frame import UNBOUND, Frame

_MISSING = object()

# what run_loop returns (the protocol of the instrumented code: jit.frontend.instrument)
CONTINUE, EXHAUSTED, BREAK, RETURN = (
    instrument_protocol.CONTINUE,
    instrument_protocol.EXHAUSTED,
    instrument_protocol.BREAK,
    instrument_protocol.RETURN,
)

# private opcodes of run_loop's instruction copies (after every tier-1 opcode)
_LEAVE = len(I.OPS)  # arg: the _Left to return
_OWN_HEADER = len(I.OPS) + 1  # arg: the loop's index


class _Left:
    """run() returns one of these when the loop run_loop runs is left (never a user value: private)."""

    __slots__ = ("how",)

    def __init__(self, how: int) -> None:
        self.how = how


_LEFT = {how: _Left(how) for how in (CONTINUE, EXHAUSTED, BREAK)}


def prepare_args(code: T1Code) -> tuple[Any, ...]:
    """Instruction arguments in the form the interpreter uses: operators as their functions."""
    out = []
    for op, arg in zip(code.ops, code.args):
        if op in (I.BINARY_OP, I.UNARY_OP, I.COMPARE_OP):
            arg = arg.fn
        out.append(arg)
    return tuple(out)


def loop_view(code: T1Code, exec_args: tuple[Any, ...], loop: LoopInfo) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    """The instructions and arguments run_loop runs for loop: leaving it returns, its header asks."""
    ops = list(code.ops)
    args = list(exec_args)
    ops[loop.header_pc] = _OWN_HEADER
    if loop.break_pc is not None:
        ops[loop.break_pc] = _LEAVE
        args[loop.break_pc] = _LEFT[BREAK]
    ops[loop.exit_pc] = _LEAVE  # (after the break target: where they coincide, nothing follows the loop)
    args[loop.exit_pc] = _LEFT[EXHAUSTED]
    return tuple(ops), tuple(args)


@internal
def run_loop(frame: Frame, loop: int, pc: int) -> tuple[int, Any]:
    """Run loop `loop` of frame's code from pc until execution leaves it: (EXHAUSTED, None) at its exit,
    (BREAK, None) at its break target, (RETURN, value) when the function returns, (CONTINUE, None) when
    ``function.at_own_header`` says so at the loop's header. An exception propagates with
    ``frame.error_pc`` set to the pc of the instruction that raised it."""
    function = frame.function
    info = frame.code.loops[loop]
    if pc == info.header_pc:
        # the usual hand-off: enter native code at once, and see whether it left the loop, without
        # dispatching the header and the exit through the interpreter's chain of opcodes
        pc = function.at_own_header(frame, loop, pc)
        if pc < 0:
            return CONTINUE, None
        return resume_loop(frame, loop, pc)
    result = run(frame, pc, function.loop_views[loop])
    if type(result) is _Left:
        return result.how, None
    return RETURN, result


@internal
def resume_loop(frame: Frame, loop: int, pc: int) -> tuple[int, Any]:
    """run_loop from pc, where native code entered at the loop's header left it: seen at once if that is
    the loop's end or its break target, else interpreted from there."""
    info = frame.code.loops[loop]
    if pc == info.exit_pc or (pc == info.header_pc + 1 and range_ended(frame, pc)):
        return EXHAUSTED, None
    if pc == info.header_pc and frame.trace_hook is None and loop_ended(frame, pc + 1):
        # (a side trace's last iteration changed a local's type: the hand-off would look for a tree of the new
        # types, whose recording ends at once, and send the loop back to CPython's counted copy at every call;
        # not while recording, which must see the loop end)
        return EXHAUSTED, None
    if pc == info.break_pc:
        return BREAK, None
    result = run(frame, pc, frame.function.loop_views[loop])
    if type(result) is _Left:
        return result.how, None
    return RETURN, result


def range_ended(frame: Frame, pc: int) -> bool:
    """If pc is a FOR_RANGE over a range whose end is reached, execute it (native code leaves a range loop
    there at its end): whether it did. Saves starting the dispatch loop for one instruction."""
    code = frame.code
    if code.ops[pc] != FOR_RANGE:
        return False
    base = code.args[pc][0]
    slots = frame.slots
    if not range_exhausted(slots, base):
        return False
    slots[base] = slots[base + 1] = slots[base + 2] = slots[base + 3] = UNBOUND  # as FOR_RANGE leaves them
    return True


def loop_ended(frame: Frame, pc: int) -> bool:
    """range_ended, or the same for a FOR_ITER over a list or tuple by index."""
    code = frame.code
    if code.ops[pc] != FOR_ITER:
        return range_ended(frame, pc)
    base = code.args[pc][0]
    slots = frame.slots
    if not sequence_exhausted(slots, base):
        return False
    slots[base] = slots[base + 1] = slots[base + 2] = UNBOUND  # as FOR_ITER leaves them
    return True


def sequence_exhausted(slots: list[Any], base: int) -> bool:
    """Has the for loop over a list or tuple by index whose hidden slots start at base reached its end (what its
    FOR_ITER would test)? (False for a loop over an iterator: only its next can tell.)"""
    return slots[base + 2] is None and slots[base + 1] >= len(slots[base])


def range_exhausted(slots: list[Any], base: int) -> bool:
    """Has the range loop whose hidden slots start at base reached its end (what its FOR_RANGE would test)?"""
    step = slots[base + 2]
    if step is None or step is UNBOUND:
        return False
    cur = slots[base]
    return cur >= slots[base + 1] if step > 0 else cur <= slots[base + 1]


@internal
def run(frame: Frame, pc: int = 0, view: tuple[tuple[int, ...], tuple[Any, ...]] | None = None) -> Any:
    """Interpret frame's code from pc until it returns; return its value or raise its exception.
    view: the instructions and arguments to run instead of the code's own (see run_loop). No local of this loop
    keeps an object after its instruction (an operand, argument or item is cleared once used): an object lives as
    long as CPython's stack would keep it, so its finalizer runs where CPython's does."""
    function = frame.function
    code = frame.code
    ops, args = (code.ops, function.exec_args) if view is None else view
    slots = frame.slots
    stack = frame.stack
    push = stack.append
    pop = stack.pop
    globals_ = function.globals
    builtins_ = function.builtins
    exact_globals = type(globals_) is dict
    counts = function.backedge_counts
    hot = function.hot_loops
    threshold = function.hot_threshold
    hook = frame.trace_hook  # only a loop header's JIT hook sets it, and only the hook itself clears it
    try:
        while True:
            if hook is not None:
                hook(frame, pc)
                hook = frame.trace_hook
            op = ops[pc]
            arg = args[pc]
            pc += 1
            if op == LOAD_FAST:
                push(slots[arg])
                if stack[-1] is UNBOUND:
                    pop()
                    raise _unbound(code, arg, pc - 1)
            elif op == LOAD_CONST:
                push(arg)
            elif op == STORE_FAST:
                slots[arg] = pop()
            elif op == BINARY_OP:
                right = pop()
                stack[-1] = arg(stack[-1], right)
                right = None
            elif op == COMPARE_OP:
                right = pop()
                stack[-1] = arg(stack[-1], right)
                right = None
            elif op == POP_JUMP_IF_FALSE:
                if not pop():
                    pc = arg
            elif op == POP_JUMP_IF_TRUE:
                if pop():
                    pc = arg
            elif op == JUMP:
                pc = arg
            elif op == FOR_RANGE:
                base, exit_pc = arg
                step = slots[base + 2]
                if step is None:  # `range` named something else: plain iteration
                    try:
                        push(next(slots[base + 3]))
                    except StopIteration:
                        slots[base] = slots[base + 1] = slots[base + 2] = slots[base + 3] = UNBOUND
                        pc = exit_pc
                else:
                    cur = slots[base]
                    if cur < slots[base + 1] if step > 0 else cur > slots[base + 1]:
                        push(cur)
                        slots[base] = cur + step
                    else:
                        slots[base] = slots[base + 1] = slots[base + 2] = slots[base + 3] = UNBOUND
                        pc = exit_pc
            elif op == LOOP_HEADER:
                if hot[arg]:
                    pc = function.at_loop_header(frame, arg, pc - 1)
                    hook = frame.trace_hook
            elif op == JUMP_BACKWARD:
                pc = arg
                loop = args[arg]
                count = counts[loop] + 1
                counts[loop] = count
                if count == threshold:
                    function.loop_is_hot(loop)
            elif op == LOAD_GLOBAL:
                if exact_globals:
                    value = globals_.get(arg, _MISSING)
                else:
                    try:
                        value = globals_[arg]
                    except KeyError:
                        value = _MISSING
                if value is _MISSING:
                    value = builtins_.get(arg, _MISSING)
                    if value is _MISSING:
                        raise messages.name_error(arg)
                push(value)
                value = None
            elif op == LOAD_DEREF:  # (a cell variable: its slot holds the cell)
                try:
                    push(slots[arg].cell_contents)
                except ValueError:
                    raise messages.unbound_local(code.slot_names[arg], pc - 1 in code.comprehension_loads) from None
            elif op == STORE_DEREF:
                slots[arg].cell_contents = pop()
            elif op == LOAD_FREE:  # (an inlined callee's: jit.inline.CalleeFunction.closure)
                try:
                    push(function.closure[arg[0]].cell_contents)
                except ValueError:
                    raise messages.unbound_free(arg[1]) from None
            elif op == STORE_FREE:  # (an inlined callee's `nonlocal`)
                function.closure[arg[0]].cell_contents = pop()
            elif op == LOAD_ATTR:
                stack[-1] = getattr(stack[-1], arg)
            elif op == LOAD_SUPER_ATTR:
                first = pop()
                stack[-1] = super_attribute(stack[-1], function.closure[arg[0]], first, arg[1])
                first = None
            elif op == BINARY_SUBSCR:
                key = pop()
                stack[-1] = stack[-1][key]
                key = None
            elif op == CALL:
                if arg == 0:
                    stack[-1] = stack[-1]()
                elif arg == 1:
                    a0 = pop()
                    stack[-1] = stack[-1](a0)
                    a0 = None
                else:
                    call_args = stack[-arg:]
                    del stack[-arg:]
                    stack[-1] = stack[-1](*call_args)
                    call_args = None
            elif op == UNARY_OP:
                stack[-1] = arg(stack[-1])
            elif op == FOR_ITER:
                base, exit_pc = arg
                if slots[base + 2] is None:  # a list or tuple, by index: what its iterator does, step by step
                    index = slots[base + 1]
                    if index < len(slots[base]):
                        push(slots[base][index])
                        slots[base + 1] = index + 1
                    else:
                        slots[base] = slots[base + 1] = slots[base + 2] = UNBOUND
                        pc = exit_pc
                else:
                    try:  # (no local holds the iterator: it must go when its slot is cleared)
                        push(next(slots[base + 2]))
                    except StopIteration:
                        slots[base] = slots[base + 1] = slots[base + 2] = UNBOUND
                        pc = exit_pc
            elif op == RETURN_VALUE:
                return pop()
            elif op == POP_TOP:
                pop()
            elif op == JUMP_IF_FALSE_OR_POP:
                if not stack[-1]:
                    pc = arg
                else:
                    pop()
            elif op == JUMP_IF_TRUE_OR_POP:
                if stack[-1]:
                    pc = arg
                else:
                    pop()
            elif op == COPY:
                push(stack[-arg])
            elif op == SWAP:
                stack[-1], stack[-arg] = stack[-arg], stack[-1]
            elif op == STORE_SUBSCR:
                key = pop()
                container = pop()
                container[key] = pop()
                key = container = None
            elif op == STORE_ATTR:
                obj = pop()
                setattr(obj, arg, pop())
                obj = None
            elif op == CALL_KW:
                n, names = arg
                call_args = stack[len(stack) - n :]
                del stack[len(stack) - n :]
                npos = n - len(names)
                kwargs = dict(zip(names, call_args[npos:]))
                stack[-1] = stack[-1](*call_args[:npos], **kwargs)
                call_args = kwargs = None
            elif op == RANGE_SETUP:
                r = pop()
                if type(r) is range:
                    slots[arg] = r.start
                    slots[arg + 1] = r.stop
                    slots[arg + 2] = r.step
                    slots[arg + 3] = None
                else:
                    slots[arg] = slots[arg + 1] = slots[arg + 2] = None
                    slots[arg + 3] = iter(r)
                r = None
            elif op == GET_ITER:
                if by_index(stack[-1]):
                    slots[arg] = pop()
                    slots[arg + 1] = 0
                    slots[arg + 2] = None
                else:  # (no local holds the iterable: a generator's finally runs when its slot is cleared)
                    slots[arg] = slots[arg + 1] = None
                    slots[arg + 2] = iter(pop())
            elif op == BUILD_TUPLE:
                if arg:
                    stack[-arg:] = (tuple(stack[-arg:]),)
                else:
                    push(())
            elif op == BUILD_LIST:
                if arg:
                    stack[-arg:] = (stack[-arg:],)
                else:
                    push([])
            elif op == LIST_APPEND:
                slots[arg].append(pop())
            elif op == UNPACK_SEQUENCE:
                value = pop()
                if type(value) is tuple and len(value) == arg:
                    stack.extend(value[::-1])
                else:
                    stack.extend(unpacker(arg)(value)[::-1])
                value = None
            elif op == LOAD_FAST_AND_CLEAR:
                push(slots[arg])
                slots[arg] = UNBOUND
            elif op == CLEAR_SLOTS:
                first, n = arg
                for i in range(first, first + n):
                    slots[i] = UNBOUND
            elif op == DELETE_FAST:
                if slots[arg] is UNBOUND:
                    raise messages.unbound_local(code.slot_names[arg])
                slots[arg] = UNBOUND
            elif op == DELETE_DEREF:
                cell = slots[arg]
                try:
                    cell.cell_contents  # noqa: B018  (deleting an empty cell's contents raises nothing: CPython's op does)
                except ValueError:
                    raise messages.unbound_local(code.slot_names[arg]) from None
                del cell.cell_contents
                cell = None
            elif op == MAKE_CELL:  # (at the function's entry: CPython's MAKE_CELL)
                value = slots[arg]
                slots[arg] = CellType() if value is UNBOUND else CellType(value)
                value = None
            elif op == BUILD_SLICE:
                if arg == 2:
                    upper = pop()
                    stack[-1] = slice(stack[-1], upper)
                else:
                    step = pop()
                    upper = pop()
                    stack[-1] = slice(stack[-1], upper, step)
                upper = step = None
            elif op == BUILD_SET:
                items = stack[len(stack) - arg :]
                del stack[len(stack) - arg :]
                push(set(items))
                items = None
            elif op == BUILD_MAP:
                items = stack[len(stack) - 2 * arg :]
                del stack[len(stack) - 2 * arg :]
                mapping = {}
                for i in range(0, len(items), 2):
                    mapping[items[i]] = items[i + 1]
                push(mapping)
                items = mapping = None
            elif op == SET_ADD:
                slots[arg].add(pop())
            elif op == MAP_ADD:
                value = pop()
                key = pop()
                slots[arg][key] = value
                value = key = None
            elif op == FORMAT_VALUE:
                conversion, has_spec = arg
                spec = pop() if has_spec else ""
                value = stack[-1]
                if conversion == "r":
                    value = repr(value)
                elif conversion == "s":
                    value = str(value)
                elif conversion == "a":
                    value = ascii(value)
                stack[-1] = format(value, spec)
                value = spec = None
            elif op == BUILD_STRING:
                items = stack[len(stack) - arg :]
                del stack[len(stack) - arg :]
                push("".join(items))
                items = None
            elif op == STORE_GLOBAL:
                globals_[arg] = pop()
            elif op == DELETE_GLOBAL:
                if arg not in globals_:
                    raise messages.name_error(arg)
                del globals_[arg]
            elif op == DELETE_ATTR:
                delattr(pop(), arg)
            elif op == DELETE_SUBSCR:
                key = pop()
                del stack[-1][key]
                pop()
                key = None
            elif op == RAISE:
                if arg == 2:
                    cause = pop()
                    raise pop() from cause
                raise pop()
            elif op == NOP:
                pass
            elif op == _OWN_HEADER:
                pc = function.at_own_header(frame, arg, pc - 1)
                if pc < 0:
                    return _LEFT[CONTINUE]
                hook = frame.trace_hook
            elif op == _LEAVE:
                return arg
            else:
                raise SystemError(f"tracejit: unknown tier-1 opcode {op}")
    except BaseException as exc:
        where = frame.raised_at  # (native code entered here left with exc at that instruction)
        if where is None:
            where = pc - 1 if pc else 0
        else:
            frame.raised_at = None
        # (the test generator_raised starts with, first: a call less at every exception, StopIteration aside)
        converted = generator_raised(exc, code, where) if isinstance(exc, StopIteration) else None
        if converted is not None:  # (PEP 479: raised in a generator expression's body, consumed inline)
            exc, where = converted
        if view is not None:  # (run_loop: the loop driver points the user's frame at this pc)
            frame.error_pc = where
        try:
            if frame.trace_hook is not None:
                frame.trace_hook.abort(Abort(Reason.EXCEPTION_RAISED))
                frame.trace_hook = None
            if view is None:
                # (after the comprehensions' and generator expressions' own frames, at their call)
                raise_at(exc, code, enter_own_frames(exc, code, where))
        except RecursionError as failed:
            if failed is exc:
                raise
            # no stack left to point at the user's line: exc leaves as it is, with nothing of ours chained to it
        if converted is not None:
            raise exc from exc.__cause__
        raise


def _unbound(code: Any, slot: int, pc: int) -> NameError:
    """The error of reading unbound slot at pc: a local read inside a generator expression is one of its free
    variables on every version (its own frame: PEP 709 inlines comprehensions only), inside a comprehension
    what the running Python raises there, else UnboundLocalError."""
    name = code.slot_names[slot]
    if pc not in code.comprehension_loads:
        return messages.unbound_local(name)
    if any(level.frame_name == "<genexpr>" for level in own_frames_at(code, pc)):
        return messages.unbound_free(name)
    return messages.unbound_local(name, True)


def super_attribute(callable_: Any, cell: Any, first: Any, name: str) -> Any:
    """`super().name` in a method (``LOAD_SUPER_ATTR``), as CPython runs it: callable_ is what the global name
    `super` finds, cell the method's class cell, first its first argument's value. The builtin (or a subclass of
    it, whose zero-argument call reads the same frame) gets the class and the object; anything else the module
    calls `super` is called with no argument."""
    if not (isinstance(callable_, type) and issubclass(callable_, super)):
        return getattr(callable_(), name)
    try:
        klass = cell.cell_contents
    except ValueError:
        raise RuntimeError("super(): empty __class__ cell") from None
    if not isinstance(klass, type):
        raise RuntimeError(f"super(): __class__ is not a type ({type(klass).__name__})")
    return getattr(callable_(klass, first), name)
