"""Handlers of for loops: over ranges (virtual range objects), lists, tuples, arrays, enumerate and zip, and
strs, dicts and sets through their iterators."""

from __future__ import annotations

from typing import Any

from jit import specialize, specialize_numpy
from jit.aborts import Abort, Reason
from jit.frontend import instructions as I
from jit.frontend.operators import BinOp, CompareOp
from jit.kinds import SEQUENCE_ITERATOR, Kind, kind_of
from jit.recorder.recorder import Recorder, _handles
from jit.recorder.subscripts import _unbox
from jit.trace import FrameSnapshot, Snapshot, Value, WhenHot
from runtime.frame import UNBOUND, Frame


@_handles(I.FOR_RANGE)
def _for_range(r: Recorder, frame: Frame, arg: tuple[int, int]) -> None:
    base, _exit_pc = arg
    step_slot = r.read_slot(frame, base + 2)
    if step_slot.kind == Kind.NONE:
        raise Abort(Reason.RANGE_REBOUND)
    cur, stop = r.read_slot(frame, base), r.read_slot(frame, base + 1)
    for v in (cur, stop, step_slot):
        if v.kind not in (Kind.INT, Kind.INT_OBJECT):
            raise Abort(Reason.RANGE_BEYOND_64_BITS)
    actual_cur, actual_stop, actual_step = frame.slots[base], frame.slots[base + 1], frame.slots[base + 2]
    if Kind.INT_OBJECT in (cur.kind, stop.kind, step_slot.kind):
        _for_range_objects(r, base, (cur, stop, step_slot), (actual_cur, actual_stop, actual_step))
        return
    more = actual_cur < actual_stop if actual_step > 0 else actual_cur > actual_stop
    own = r.trace.loop.header_pc == r.pc - 1
    if actual_step == 1 and not step_slot.is_const and r.trace.entry_slots.get(base + 2) is step_slot:
        if any(loop.unit_step and loop.hidden[0] == base for loop in frame.code.loops):
            step_slot = _unit_step(r, step_slot)
    if more:
        specialize.observe("the range's next value", lambda: actual_cur + actual_step, Kind.INT)
        r.emit("_GUARD_NOT_EXHAUSTED_RANGE", (cur, stop, step_slot), leaves_loop=own)
        following = r.emit("_ITER_NEXT_RANGE", (cur, step_slot))
        r.push(cur)
        r.write_slot(base, following)
    else:
        if own:
            raise Abort(Reason.LOOP_ENDED)
        r.emit("_GUARD_EXHAUSTED_RANGE", (cur, stop, step_slot))
        for slot in range(base, base + 4):
            r.write_slot(slot, r.const(UNBOUND))


def _unit_step(r: Recorder, step: Value) -> Value:
    """A range's step read at the trace's entry, 1 as recorded, of a call of one or two arguments: a guard that
    it is 1, after which the trace uses the constant. The guard is loop-invariant (hoisted to the entry; it
    fails only where `range` names another callable, and then invalidates the tree, whose next recording
    keeps the step it reads), and a known step spares the loop's fast copy its trip count's division and its
    vector code the multiplication of a step by the lanes' numbers (a nested loop's entry: 15% of its cost)."""
    r.emit("_GUARD_UNIT_STEP", (step,))
    return r.const(1)


def _for_range_objects(r: Recorder, base: int, parts: tuple[Value, ...], actual: tuple[Any, ...]) -> None:
    """A range whose bounds or step are past 64 bits (its hidden slots hold int objects): CPython's comparison
    and addition of ints, the next value an int object while it does not fit in 64 bits as recorded."""
    cur, stop, step = parts
    actual_cur, actual_stop, actual_step = actual
    ascending = actual_step > 0
    if not step.is_const:  # (which way the range runs: a guard on its step's sign)
        sign = _compare(r, CompareOp.GT, step, r.const(0))
        r.emit("_GUARD_IS_TRUE_POP" if ascending else "_GUARD_IS_FALSE_POP", (sign,))
    more = actual_cur < actual_stop if ascending else actual_cur > actual_stop
    own = r.trace.loop.header_pc == r.pc - 1
    if not more and own:
        raise Abort(Reason.LOOP_ENDED)
    going_on = _compare(r, CompareOp.LT if ascending else CompareOp.GT, cur, stop)
    if not more:
        r.emit("_GUARD_IS_FALSE_POP", (going_on,))
        for slot in range(base, base + 4):
            r.write_slot(slot, r.const(UNBOUND))
        return
    r.emit("_GUARD_IS_TRUE_POP", (going_on,), leaves_loop=own)
    following_actual = actual_cur + actual_step
    following = specialize.binary(r, BinOp.ADD, cur, step, actual_cur, actual_step)
    if following.kind in specialize.BEYOND_64_BITS:
        if specialize.fits_int64(following_actual):
            following = specialize.narrow(r, following, following_actual, "the range's next value")
        else:
            following = specialize.as_int_object(r, following)
    r.push(cur)
    r.write_slot(base, following)


def _compare(r: Recorder, op: CompareOp, a: Value, b: Value) -> Value:
    """a op b of ints, one maybe an int object (CPython's comparison of ints)."""
    if specialize.compares_int_objects(op, a, b):
        return specialize.compare_int_objects(r, op, a, b)
    return specialize.compare(r, op, a, b)


def range_object(r: Recorder, virtual: Value) -> Value:
    """A range used as a value (`r = range(n)`, `f(range(n))`): a real range object the trace owns, made of the
    virtual range's parts (no Python code runs)."""
    start, stop, step = r.virtual_ranges[virtual.id]
    return r.emit("_BUILD_RANGE", (start, stop, step))


_RANGE_ITERATOR = type(iter(range(0)))


def _for_iter_range_iterator(r: Recorder, base: int, iterator: Value, actual: Any) -> None:
    """`for i in r` over a range object (kept in a variable, an argument): its iterator, advanced in place by
    native code (``_ITER_NEXT_RANGE_ITERATOR``: the item an int in registers), so whoever else holds it finds it
    where CPython leaves it."""
    left = actual.__length_hint__()
    if not left:
        _ended(r)
    own = r.trace.loop.header_pc == r.pc - 1
    r.emit("_GUARD_BUILTIN_ITERATOR", (iterator,), operand=_RANGE_ITERATOR)
    if not left:
        _finish(r, base, iterator, actual)
        return
    r.push(r.emit("_ITER_NEXT_RANGE_ITERATOR", (iterator,), leaves_loop=own))


@_handles(I.RANGE_SETUP)
def _range_setup(r: Recorder, frame: Frame, base: int) -> None:
    value = r.abstract.pop()
    parts = r.virtual_ranges.get(value.id)
    if parts is None:
        raise Abort(Reason.RANGE_ELSEWHERE)
    for offset, part in enumerate(parts):
        r.write_slot(base + offset, part)
    r.write_slot(base + 3, r.const(None))


@_handles(I.FOR_ITER)
def _for_iter(r: Recorder, frame: Frame, arg: tuple[int, int]) -> None:
    base, _exit_pc = arg
    iterator = r.read_slot(frame, base + 2)
    if iterator.kind != Kind.NONE:
        if type(frame.slots[base + 2]) in (enumerate, zip):
            _for_iter_combined(r, base, iterator, frame.slots[base + 2])
            return
        if type(frame.slots[base + 2]) is _RANGE_ITERATOR:
            _for_iter_range_iterator(r, base, iterator, frame.slots[base + 2])
            return
        if type(frame.slots[base + 2]) in _BUILTIN_ITERATORS:
            _for_iter_builtin(r, base, iterator, frame.slots[base + 2])
            return
        raise Abort(Reason.FOR_OVER, what=type(frame.slots[base + 2]).__name__)
    sequence, index = r.read_slot(frame, base), r.read_slot(frame, base + 1)
    if sequence.kind == Kind.ARRAY and index.kind == Kind.INT:
        _for_iter_array(r, frame, base, sequence, index)
        return
    if sequence.kind not in (Kind.LIST, Kind.TUPLE) or index.kind != Kind.INT:
        raise Abort(Reason.FOR_OVER, what=sequence.kind.short)
    suffix = "LIST" if sequence.kind == Kind.LIST else "TUPLE"
    actual_sequence, actual_index = frame.slots[base], frame.slots[base + 1]
    own = r.trace.loop.header_pc == r.pc - 1
    if actual_index >= len(actual_sequence):
        if own:
            raise Abort(Reason.LOOP_ENDED)
        r.emit(f"_GUARD_EXHAUSTED_{suffix}", (sequence, index))
        for slot in range(base, base + 3):
            r.write_slot(slot, r.const(UNBOUND))
        return
    r.emit(f"_GUARD_NOT_EXHAUSTED_{suffix}", (sequence, index), leaves_loop=own)
    boxed = r.emit(f"_ITER_NEXT_{suffix}", (sequence, index))
    value = _unbox(r, boxed, actual_sequence[actual_index])
    r.write_slot(base + 1, r.emit("_ITER_INCREMENT", (index,)))
    r.push(value)


_SEQUENCE_ITERATORS = {type(iter([])): Kind.LIST, type(iter(())): Kind.TUPLE}
_MAX_ZIPPED = 4


def _unpacked_next(r: Recorder, width: int) -> bool:
    """Does the instruction after this FOR_ITER unpack its item into width names?"""
    following = r.pc + 1
    return r.code.ops[following] == I.UNPACK_SEQUENCE and r.code.args[following] == width


def _ended(r: Recorder) -> None:
    """The iterator has nothing left while recording: its own loop's end is retried (an inner loop's end is
    recorded: the caller finishes the iterator, ``_finish``)."""
    if r.trace.loop.header_pc == r.pc - 1:
        raise Abort(Reason.LOOP_ENDED)


def _finish(r: Recorder, base: int, iterator: Value, actual: Any) -> None:
    """An inner loop's iterator, which the guards emitted before found done (the inner tree left at its end):
    its last next(), as CPython's FOR_ITER gives it (``_ITER_FINISH``), and the loop's hidden slots emptied.
    Where the outer trace made the iterator, that was its last use (released there)."""
    r.emit("_ITER_FINISH", (iterator,), operand=type(actual))
    r.trace.uops[-1].exit.when_hot = WhenHot.NEVER  # type: ignore[union-attr]  (the interpreter's FOR_ITER)
    for slot in range(base, base + 3):
        r.write_slot(slot, r.const(UNBOUND))


def _push_unpacked(r: Recorder, items: tuple[Value, ...]) -> None:
    """Push the items of an iterator's next tuple, never built: the UNPACK_SEQUENCE that follows takes them."""
    unpacked = r.trace.new_value(Kind.TUPLE)
    r.virtual_tuples[unpacked.id] = items
    r.push(unpacked)


def _for_iter_combined(r: Recorder, base: int, iterator: Value, actual: enumerate | zip) -> None:
    """`for i, x in enumerate(seq)` and `for x, y in zip(xs, ys)` over lists and tuples. Native code advances
    the iterator objects themselves (the enumerate's count, each list or tuple iterator's index), so whoever else
    holds them finds them where CPython leaves them; every guard comes before the first store, so an exit leaves
    them as they were (the interpreter then runs `next` itself). The tuple of items is never built: the next
    instruction must unpack it."""
    reduced = actual.__reduce__()
    numbered = type(actual) is enumerate
    inner = [reduced[1][0]] if numbered else list(reduced[1])
    kinds = [_walked_kind(it) for it in inner]
    if None in kinds:
        raise Abort(Reason.FOR_OVER, what=f"{type(actual).__name__} of other than list, tuple or 1-D array iterators")
    states = [it.__reduce__() for it in inner]
    if any(len(state) < 3 for state in states) or (numbered and reduced[1][1] >= 2**63 - 1):
        raise Abort(Reason.FOR_OVER, what=f"{type(actual).__name__} past its end or its ssize_t count")
    if len({id(it) for it in inner}) < len(inner) or len(inner) > _MAX_ZIPPED:
        raise Abort(Reason.FOR_OVER, what=f"zip of the same iterator twice, or of more than {_MAX_ZIPPED}")
    width = 2 if numbered else len(inner)
    if not inner or not _unpacked_next(r, width):
        raise Abort(Reason.FOR_OVER, what=f"{type(actual).__name__} whose items are not unpacked into {width} names")
    own = r.trace.loop.header_pc == r.pc - 1
    ended = any(state[2] >= len(state[1][0]) for state in states)
    if ended:
        _ended(r)
    if numbered:
        r.emit("_GUARD_ENUMERATE", (iterator,))
        iterators = [r.emit("_ENUMERATE_ITERATOR", (iterator,))]
    else:
        r.emit("_GUARD_ZIP", (iterator,), operand=len(inner))
        iterators = [r.emit("_ZIP_ITERATOR", (iterator,), operand=k) for k in range(len(inner))]
    if ended:  # (an inner loop's end: the iterators zip asks until the first that has nothing left)
        for it, kind, state in zip(iterators, kinds, states):
            sequence, position, length = _walked(r, it, kind, state[1][0])
            if state[2] >= len(state[1][0]):
                _exhausted(r, kind, sequence, position, length, more=False)
                break
            _exhausted(r, kind, sequence, position, length, more=True)
        _finish(r, base, iterator, actual)
        return
    moves, items = [], []
    for it, kind, state in zip(iterators, kinds, states):
        (actual_sequence,), actual_position = state[1], state[2]
        sequence, position, length = _walked(r, it, kind, actual_sequence)
        _exhausted(r, kind, sequence, position, length, more=True, leaves_loop=own)
        if kind == Kind.ARRAY:
            items.append(specialize_numpy.load(r, sequence, [position], actual_sequence, [actual_position]))
        else:
            boxed = r.emit(f"_ITER_NEXT_{kind.name}", (sequence, position))
            items.append(_unbox(r, boxed, actual_sequence[actual_position]))
        moves.append((it, r.emit("_ITER_INCREMENT", (position,))))
    if numbered:
        count = r.emit("_LOAD_ENUMERATE_COUNT", (iterator,))
        following_count = r.emit("_BINARY_OP_ADD_INT", (count, r.const(1)))  # (leaves where CPython's count grows)
        items.insert(0, count)
    for it, position in moves:  # (no guard from here on)
        r.emit("_STORE_ITERATOR_POSITION", (it, position))
    if numbered:
        r.emit("_STORE_ENUMERATE_COUNT", (iterator, following_count))
    _push_unpacked(r, tuple(items))


def _walked_kind(iterator: Any) -> Kind | None:
    """The kind of what a list, tuple or sequence iterator walks, if native code reads its items: a list, a
    tuple, or a 1-D array (an ndarray's iterator indexes it: a[0], a[1], ...); None: another iterator."""
    kind = _SEQUENCE_ITERATORS.get(type(iterator))
    if kind is not None or type(iterator) is not SEQUENCE_ITERATOR:
        return kind
    state = iterator.__reduce__()
    if len(state) < 3 or kind_of(state[1][0]) != Kind.ARRAY or state[1][0].ndim != 1:
        return None
    return Kind.ARRAY


def _walked(r: Recorder, iterator: Value, kind: Kind, actual: Any) -> tuple[Value, Value, Value | None]:
    """An iterator of an enumerate or zip: guarded (its type, not exhausted), what it walks, its position, and
    (an array's) the length it walks to."""
    r.emit("_GUARD_SEQUENCE_ITERATOR", (iterator,), operand=kind)
    sequence = r.emit("_SEQUENCE_ITERATOR_SEQUENCE", (iterator,), kind=kind)
    position = r.emit("_LOAD_ITERATOR_POSITION", (iterator,))
    if kind != Kind.ARRAY:
        return sequence, position, None
    spec = specialize_numpy.guarded_spec(r, sequence, actual)
    return sequence, position, specialize_numpy.header(r, sequence, spec)[1][0]


def _exhausted(
    r: Recorder,
    kind: Kind,
    sequence: Value,
    position: Value,
    length: Value | None,
    more: bool,
    leaves_loop: bool = False,
) -> None:
    """The guard that an iterator of an enumerate or zip has (more) or has not an item left at position."""
    if length is not None:  # (an array's: by its length, as a range's counter)
        guard = "_GUARD_NOT_EXHAUSTED_RANGE" if more else "_GUARD_EXHAUSTED_RANGE"
        r.emit(guard, (position, length, r.const(1)), leaves_loop=leaves_loop)
    else:
        r.emit(f"_GUARD_{'NOT_' if more else ''}EXHAUSTED_{kind.name}", (sequence, position), leaves_loop=leaves_loop)


_DICT_ITEMS_ITERATOR = type(iter({}.items()))
_STR_ITERATORS = frozenset({type(iter("")), type(iter("é"))})
_BUILTIN_ITERATORS = _STR_ITERATORS | {type(iter({})), type(iter({}.values())), _DICT_ITEMS_ITERATOR, type(iter(set()))}


def _for_iter_builtin(r: Recorder, base: int, iterator: Value, actual: Any) -> None:
    """`for c in s` (a str of characters below U+0100), `for k in d`, `for v in d.values()`, `for k, v in
    d.items()` (unpacked), `for x in a_set`: the next item through the iterator's own tp_iternext. From there
    on the iterator has moved: every guard until the item is unpacked resumes after FOR_ITER, with the item on
    the stack (handed over), and grows no side trace (which could not take that reference over)."""
    reduced = actual.__reduce__()  # (read without moving it: iter(s) and a position, or a list of what is left)
    if type(actual) in _STR_ITERATORS:
        text, position = (reduced[1][0], reduced[2]) if len(reduced) > 2 else ("", 0)
        if any(ord(c) > 0xFF for c in text):
            raise Abort(Reason.FOR_OVER, what="str with characters past U+00FF (each one a new object)")
        left = text[position : position + 1]
    else:
        left = reduced[1][0]
    pairs = type(actual) is _DICT_ITEMS_ITERATOR
    if pairs and not _unpacked_next(r, 2):
        raise Abort(Reason.FOR_OVER, what="dict items not unpacked into two names")
    if not left:
        _ended(r)
    own = r.trace.loop.header_pc == r.pc - 1
    r.emit("_GUARD_BUILTIN_ITERATOR", (iterator,), operand=type(actual))
    if not left:
        _finish(r, base, iterator, actual)
        return
    kind = Kind.TUPLE if pairs else Kind.OBJECT
    item = r.emit("_ITER_NEXT_BUILTIN", (iterator,), operand=type(actual), kind=kind, leaves_loop=own)
    r.push(item)
    after = Snapshot([FrameSnapshot(r.pc + 1, dict(r.abstract.slots()), list(r.abstract.stack()))])
    first = len(r.trace.uops)
    r.resume_override = after
    try:
        if pairs:
            items = tuple(
                _unbox(r, r.emit("_BINARY_SUBSCR_TUPLE_INT", (item, r.const(k))), part)
                for k, part in enumerate(left[0])
            )
        else:
            unboxed = _unbox(r, item, left[0])
    finally:
        r.resume_override = None
    for uop in r.trace.uops[first:]:
        if uop.exit is not None:
            uop.exit.when_hot = WhenHot.NEVER
    r.abstract.pop()
    if pairs:
        _push_unpacked(r, items)
    else:
        r.push(unboxed)


def _for_iter_array(r: Recorder, frame: Frame, base: int, array: Value, index: Value) -> None:
    """`for x in a` over a 1-D array: a[0], a[1], ... (its iterator indexes it) until its length."""
    actual_array, actual_index = frame.slots[base], frame.slots[base + 1]
    spec = specialize_numpy.guarded_spec(r, array, actual_array)
    if spec.ndim != 1:
        raise Abort(Reason.FOR_OVER, what=f"{spec.ndim}-D array")
    length = specialize_numpy.header(r, array, spec)[1][0]
    own = r.trace.loop.header_pc == r.pc - 1
    # (the index as a range's counter, from where it is up to the length read at the entry, by 1: the loop gets a
    # counted fast copy, as `for i in range(len(a))` does: Trace.range_counter)
    one = r.const(1)
    if actual_index >= len(actual_array):
        if own:
            raise Abort(Reason.LOOP_ENDED)
        r.emit("_GUARD_EXHAUSTED_RANGE", (index, length, one))
        for slot in range(base, base + 3):
            r.write_slot(slot, r.const(UNBOUND))
        return
    r.emit("_GUARD_NOT_EXHAUSTED_RANGE", (index, length, one), leaves_loop=own)
    value = specialize_numpy.load(r, array, [index], actual_array, [actual_index])
    r.write_slot(base + 1, r.emit("_ITER_INCREMENT", (index,)))
    r.push(value)


@_handles(I.GET_ITER)
def _get_iter(r: Recorder, frame: Frame, base: int) -> None:
    iterable = r.abstract.peek(1)
    actual = frame.stack[-1]
    if iterable.kind in (Kind.LIST, Kind.TUPLE, Kind.ARRAY):  # (by index: no iterator)
        r.write_slot(base, r.pop())
        r.write_slot(base + 1, r.const(0))
        r.write_slot(base + 2, r.const(None))
        return
    if iterable.id in r.made_iterators:  # an enumerate, a zip, a dict view's iterator: iter() gives it back
        iterator = iterable
    elif iterable.kind in (Kind.STR, Kind.DICT) or (iterable.kind == Kind.OBJECT and type(actual) in _ITERATED):
        if iterable.kind == Kind.OBJECT:
            r.emit("_GUARD_EXACT_TYPE", (iterable,), operand=type(actual))
        iterator = r.emit("_GET_ITER", (iterable,), operand=type(actual))
    else:
        raise Abort(Reason.FOR_OVER, what=type(actual).__name__)
    # (an inner loop's iterator the trace owns, in the loop's hidden slot: no one else can reach it)
    r.pop()
    r.write_slot(base, r.const(None))
    r.write_slot(base + 1, r.const(None))
    r.write_slot(base + 2, iterator)


_SETS = (set, frozenset)
_ITERATED = (*_SETS, range)  # (objects whose iter() runs no Python code)
_DICT_VIEWS = {"keys": dict.keys, "values": dict.values, "items": dict.items}


def made_dict_view(r: Recorder, frame: Frame, name: str) -> bool:
    """LOAD_ATTR of `d.keys` / `d.values` / `d.items` called at once with no arguments, for a loop's iterable
    (`for k, v in d.items()`): the view's iterator, made now (where an exit resumes with d on the stack) and
    carried through the CALL to the GET_ITER (``made_iterators``). Whether it applied."""
    target = r.abstract.peek(1) if r.abstract.stack() else None
    following = r.pc + 1
    if (
        target is None
        or target.kind != Kind.DICT
        or name not in _DICT_VIEWS
        or r.inlined
        or r.code.ops[following] != I.CALL
        or r.code.args[following] != 0
        or r.code.ops[following + 1] != I.GET_ITER
    ):
        return False
    made = r.emit("_GET_ITER_DICT_VIEW", (target,), operand=_DICT_VIEWS[name])
    r.abstract.pop()
    r.view_calls.add(made.id)
    r.push(made)
    return True


def made_by_call(r: Recorder, frame: Frame, fn: Any, n: int) -> bool:
    """CALL of a dict view's method (``made_dict_view``), or of `enumerate(seq[, start])` or `zip(*seqs)` of
    lists and tuples whose result is a loop's iterable (the next instruction is GET_ITER): a new enumerate or
    zip object the trace owns. Whether it applied (else the CALL is recorded as any other)."""
    callee = r.abstract.peek(n + 1)
    if callee.id in r.view_calls and n == 0:
        r.view_calls.discard(callee.id)
        r.made_iterators.add(callee.id)
        return True
    if (fn is not enumerate and fn is not zip) or r.inlined or r.code.ops[r.pc + 1] != I.GET_ITER:
        return False
    args = [r.abstract.peek(n - k) for k in range(n)]
    sequences = args[:1] if fn is enumerate else args
    if not sequences or any(v.kind not in (Kind.LIST, Kind.TUPLE) for v in sequences):
        return False
    if fn is enumerate:
        if n > 2 or (n == 2 and args[1].kind != Kind.INT):
            return False
        made = r.emit("_NEW_ENUMERATE", (args[0], args[1] if n == 2 else r.const(0)))
    else:
        if n > _MAX_ZIPPED:
            return False
        made = r.emit("_NEW_ZIP", tuple(args))
    for _ in range(n + 1):
        r.abstract.pop()
    r.made_iterators.add(made.id)
    r.push(made)
    return True
