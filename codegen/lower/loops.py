"""Loop iteration: range iterators, for over lists and tuples, enumerate, zip and the builtin iterators, and the
iterators an outer trace makes for its inner loops."""

from __future__ import annotations

from llvmlite import ir

from codegen import abi
from codegen.capi import I1, I32, I64, PTR
from codegen.context import LowerContext
from codegen.lower.generic import _references, _release
from codegen.lower.ints import _no_overflow, _with_overflow
from codegen.lower.objects import _load_at, _type_is
from codegen.lower.table import (
    LOWERINGS,
    _args,
    _entry_alloca,
    _i64,
    _true,
    lowers,
)
from jit.kinds import SEQUENCE_ITERATOR, Kind
from jit.trace import Uop


def _range_has_more(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    cur, stop, step = _args(ctx, uop)
    # (cur < stop going up, cur > stop going down, as one signed compare: xor with all ones, ~x == -x - 1,
    # reverses the order of every int64 without overflow; the mask and stop's side are loop-invariant, so a
    # loop pays an xor and a compare, not two compares and a select on a step it cannot see is 1)
    down = b.sext(b.icmp_signed("<", step, _i64(0)), I64)
    return b.icmp_signed("<", b.xor(cur, down), b.xor(stop, down))


@lowers("_GUARD_NOT_EXHAUSTED_RANGE")
def _guard_range_more(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(_range_has_more(ctx, uop), uop)


@lowers("_GUARD_EXHAUSTED_RANGE")
def _guard_range_done(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(ctx.builder.not_(_range_has_more(ctx, uop)), uop)


@lowers("_RANGE_PROVEN")
def _range_proven(ctx: LowerContext, uop: Uop) -> None:
    """A range guard the range analysis proved (jit.optimizer.ranges): nothing to do."""


LOWERINGS["_ITER_NEXT_RANGE"] = _with_overflow("sadd")
LOWERINGS["_ITER_NEXT_RANGE_NO_OVERFLOW"] = _no_overflow("add")


def _sequence_has_more(ctx: LowerContext, uop: Uop) -> ir.Value:
    sequence, index = _args(ctx, uop)
    return ctx.builder.icmp_signed("<", index, _load_at(ctx, sequence, abi.OB_SIZE, I64))


@lowers("_GUARD_NOT_EXHAUSTED_LIST", "_GUARD_NOT_EXHAUSTED_TUPLE")
def _guard_sequence_more(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(_sequence_has_more(ctx, uop), uop)


@lowers("_GUARD_EXHAUSTED_LIST", "_GUARD_EXHAUSTED_TUPLE")
def _guard_sequence_done(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(ctx.builder.not_(_sequence_has_more(ctx, uop)), uop)


def _item(ctx: LowerContext, sequence: ir.Value, index: ir.Value, is_list: bool) -> ir.Value:
    b = ctx.builder
    if is_list:
        items = b.bitcast(_load_at(ctx, sequence, abi.LIST_ITEMS, PTR), PTR.as_pointer())
    else:
        items = b.bitcast(b.gep(sequence, [_i64(abi.TUPLE_ITEMS)], inbounds=True), PTR.as_pointer())
    return b.load(b.gep(items, [index], inbounds=True))


@lowers("_ITER_NEXT_LIST", "_ITER_NEXT_TUPLE")
def _iter_next(ctx: LowerContext, uop: Uop) -> ir.Value:
    sequence, index = _args(ctx, uop)
    return _item(ctx, sequence, index, uop.name == "_ITER_NEXT_LIST")


@lowers("_ITER_INCREMENT")
def _iter_increment(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.builder.add(ctx.value(uop.args[0]), _i64(1), flags=["nsw"])


_SEQUENCE_ITERATOR_TYPES = {
    Kind.LIST: type(iter([])),
    Kind.TUPLE: type(iter(())),
    Kind.ARRAY: SEQUENCE_ITERATOR,
    None: None,
}
_NULL = ir.Constant(PTR, None)


def _store_at(ctx: LowerContext, pointer: ir.Value, offset: int, value: ir.Value) -> None:
    b = ctx.builder
    b.store(value, b.bitcast(b.gep(pointer, [_i64(offset)], inbounds=True), value.type.as_pointer()))


def _layouts_unknown(ctx: LowerContext, uop: Uop) -> bool:
    """Another layout of iterator objects than the one checked at import (abi.ITERATORS_OK): the guard always
    leaves, so such loops never run natively."""
    if abi.ITERATORS_OK:
        return False
    ctx.guard(ir.Constant(I1, 0), uop)
    return True


@lowers("_GUARD_SEQUENCE_ITERATOR")
def _guard_sequence_iterator(ctx: LowerContext, uop: Uop) -> None:
    iterator = ctx.value(uop.args[0])
    if _layouts_unknown(ctx, uop):
        return
    ctx.guard(_type_is(ctx, iterator, _SEQUENCE_ITERATOR_TYPES[uop.operand]), uop)  # first: then read its fields
    live = _load_at(ctx, iterator, abi.SEQUENCE_ITERATOR_SEQUENCE, PTR)
    ctx.guard(ctx.builder.icmp_unsigned("!=", live, _NULL), uop)


@lowers("_SEQUENCE_ITERATOR_SEQUENCE")
def _sequence_iterator_sequence(ctx: LowerContext, uop: Uop) -> ir.Value:
    return _load_at(ctx, ctx.value(uop.args[0]), abi.SEQUENCE_ITERATOR_SEQUENCE, PTR)


@lowers("_LOAD_ITERATOR_POSITION")
def _load_iterator_position(ctx: LowerContext, uop: Uop) -> ir.Value:
    return _load_at(ctx, ctx.value(uop.args[0]), abi.SEQUENCE_ITERATOR_INDEX, I64)


@lowers("_STORE_ITERATOR_POSITION")
def _store_iterator_position(ctx: LowerContext, uop: Uop) -> None:
    iterator, position = _args(ctx, uop)
    _store_at(ctx, iterator, abi.SEQUENCE_ITERATOR_INDEX, position)


@lowers("_GUARD_ENUMERATE")
def _guard_enumerate(ctx: LowerContext, uop: Uop) -> None:
    numbered = ctx.value(uop.args[0])
    if _layouts_unknown(ctx, uop):
        return
    ctx.guard(_type_is(ctx, numbered, enumerate), uop)
    long_count = _load_at(ctx, numbered, abi.ENUMERATE_LONG_COUNT, PTR)
    ctx.guard(ctx.builder.icmp_unsigned("==", long_count, _NULL), uop)


@lowers("_ENUMERATE_ITERATOR")
def _enumerate_iterator(ctx: LowerContext, uop: Uop) -> ir.Value:
    return _load_at(ctx, ctx.value(uop.args[0]), abi.ENUMERATE_ITERATOR, PTR)


@lowers("_LOAD_ENUMERATE_COUNT")
def _load_enumerate_count(ctx: LowerContext, uop: Uop) -> ir.Value:
    return _load_at(ctx, ctx.value(uop.args[0]), abi.ENUMERATE_COUNT, I64)


@lowers("_STORE_ENUMERATE_COUNT")
def _store_enumerate_count(ctx: LowerContext, uop: Uop) -> None:
    numbered, count = _args(ctx, uop)
    _store_at(ctx, numbered, abi.ENUMERATE_COUNT, count)


_DICT_ITERATOR_TYPES = frozenset({type(iter({})), type(iter({}.values())), type(iter({}.items()))})
_CONTAINER_ITERATOR_TYPES = _DICT_ITERATOR_TYPES | {type(iter(set()))}
_STR_ITERATOR_TYPES = frozenset({type(iter("")), type(iter("é"))})


@lowers("_GUARD_BUILTIN_ITERATOR")
def _guard_builtin_iterator(ctx: LowerContext, uop: Uop) -> None:
    b = ctx.builder
    iterator = ctx.value(uop.args[0])
    if _layouts_unknown(ctx, uop):
        return
    ctx.guard(_type_is(ctx, iterator, uop.operand), uop)
    if uop.operand in _STR_ITERATOR_TYPES:  # its characters are CPython's cached ones: one byte each
        text = _load_at(ctx, iterator, abi.SEQUENCE_ITERATOR_SEQUENCE, PTR)
        text = b.select(b.icmp_unsigned("==", text, _NULL), ctx.pointer(""), text)  # (exhausted: no characters)
        state = _load_at(ctx, text, abi.STR_STATE, I32)
        kind = b.and_(b.lshr(state, ir.Constant(I32, abi.STR_KIND_SHIFT)), ir.Constant(I32, 7))
        ctx.guard(b.icmp_unsigned("==", kind, ir.Constant(I32, 1)), uop)


@lowers("_ITER_NEXT_BUILTIN")
def _iter_next_builtin(ctx: LowerContext, uop: Uop) -> ir.Value:
    """The iterator's own tp_iternext. Before it, what keeps the borrowed items alive: a dict or set iterator's
    container must have another reference (the exhausted iterator drops its own), and a dict iterator must
    expect more (at none left, finding one raises an error that asking again would not raise)."""
    b = ctx.builder
    iterator = ctx.value(uop.args[0])
    if uop.operand in _CONTAINER_ITERATOR_TYPES:
        container = _load_at(ctx, iterator, abi.CONTAINER_ITERATOR_CONTAINER, PTR)
        ctx.guard(b.icmp_unsigned("!=", container, _NULL), uop)
        ctx.guard(b.icmp_signed(">=", _load_at(ctx, container, 0, I64), _i64(2)), uop)
        if uop.operand in _DICT_ITERATOR_TYPES:
            ctx.guard(b.icmp_signed(">", _load_at(ctx, iterator, abi.DICT_ITERATOR_LENGTH, I64), _i64(0)), uop)
    next_type = ir.FunctionType(PTR, [PTR])
    tp = _load_at(ctx, iterator, abi.OB_TYPE, PTR)
    function = b.bitcast(_load_at(ctx, tp, abi.TYPE_ITERNEXT, PTR), next_type.as_pointer())
    item = b.call(function, [iterator])
    ctx.guard(b.icmp_unsigned("!=", item, _NULL), uop, before_exit=lambda: ctx.capi("PyErr_Clear"))
    return item


@lowers("_GUARD_ZIP")
def _guard_zip(ctx: LowerContext, uop: Uop) -> None:
    zipped = ctx.value(uop.args[0])
    if _layouts_unknown(ctx, uop):
        return
    b = ctx.builder
    ctx.guard(_type_is(ctx, zipped, zip), uop)
    size = _load_at(ctx, zipped, abi.ZIP_SIZE, I64)
    ctx.guard(b.icmp_signed("==", size, _i64(uop.operand)), uop)
    # distinct iterators: `zip(it, it)` takes two items of it per step, which reading each once would not
    iterators = _load_at(ctx, zipped, abi.ZIP_ITERATORS, PTR)
    each = [_load_at(ctx, iterators, abi.TUPLE_ITEMS + abi.WORD * k, PTR) for k in range(uop.operand)]
    distinct = _true()
    for k, first in enumerate(each):
        for second in each[k + 1 :]:
            distinct = b.and_(distinct, b.icmp_unsigned("!=", first, second))
    ctx.guard(distinct, uop)


@lowers("_ZIP_ITERATOR")
def _zip_iterator(ctx: LowerContext, uop: Uop) -> ir.Value:
    iterators = _load_at(ctx, ctx.value(uop.args[0]), abi.ZIP_ITERATORS, PTR)
    return _load_at(ctx, iterators, abi.TUPLE_ITEMS + abi.WORD * uop.operand, PTR)


# --- iterators an outer trace makes for its inner loops (jit.recorder.iteration) --------------------------------


@lowers("_GUARD_EXACT_TYPE")
def _guard_exact_type(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(_type_is(ctx, ctx.value(uop.args[0]), uop.operand), uop)


def _made(ctx: LowerContext, uop: Uop, made: ir.Value) -> ir.Value:
    """A new object, or NULL where an allocation failed: then the trace leaves (the interpreter makes it again)."""
    ctx.guard(ctx.builder.icmp_unsigned("!=", made, _NULL), uop, before_exit=lambda: ctx.capi("PyErr_Clear"))
    return made


def _vectorcall(ctx: LowerContext, callable_: object, args: list[ir.Value]) -> ir.Value:
    b = ctx.builder
    array = _entry_alloca(ctx, ir.ArrayType(PTR, max(len(args), 1)))
    for k, arg in enumerate(args):
        b.store(arg, b.gep(array, [ir.Constant(I32, 0), ir.Constant(I32, k)], inbounds=True))
    first = b.bitcast(array, PTR.as_pointer())
    return ctx.capi("PyObject_Vectorcall", ctx.pointer(callable_), first, _i64(len(args)), _NULL)


@lowers("_GET_ITER")
def _get_iter(ctx: LowerContext, uop: Uop) -> ir.Value:
    """iter() of an exact str, dict, set or frozenset: their tp_iter runs no Python code."""
    return _made(ctx, uop, ctx.capi("PyObject_GetIter", ctx.value(uop.args[0])))


@lowers("_GET_ITER_DICT_VIEW")
def _get_iter_dict_view(ctx: LowerContext, uop: Uop) -> ir.Value:
    """iter(d.items()): the view (the method descriptor called on d), its iterator, the view released (the
    iterator holds the dict)."""
    view = _made(ctx, uop, _vectorcall(ctx, uop.operand, [ctx.value(uop.args[0])]))
    iterator = ctx.capi("PyObject_GetIter", view)
    ctx.capi("Py_DecRef", view)
    return _made(ctx, uop, iterator)


@lowers("_NEW_ENUMERATE")
def _new_enumerate(ctx: LowerContext, uop: Uop) -> ir.Value:
    """enumerate(seq, start): made as enumerate(seq), then its count set (what enumerate does with a start that
    fits in a Py_ssize_t, which every i64 does)."""
    sequence, start = _args(ctx, uop)
    numbered = _made(ctx, uop, _vectorcall(ctx, enumerate, [sequence]))
    _store_at(ctx, numbered, abi.ENUMERATE_COUNT, start)
    return numbered


@lowers("_NEW_ZIP")
def _new_zip(ctx: LowerContext, uop: Uop) -> ir.Value:
    return _made(ctx, uop, _vectorcall(ctx, zip, [ctx.value(v) for v in uop.args]))


def _next_raises_nothing(ctx: LowerContext, uop: Uop, iterator: ir.Value) -> None:
    """Give the iterator its last next() (tp_iternext), which the guards before proved finds no item; leave with
    the exception it raised, if any (at the FOR_ITER, whose state the exit rebuilds: CPython's traceback)."""
    b = ctx.builder
    next_type = ir.FunctionType(PTR, [PTR])
    tp = _load_at(ctx, iterator, abi.OB_TYPE, PTR)
    function = b.bitcast(_load_at(ctx, tp, abi.TYPE_ITERNEXT, PTR), next_type.as_pointer())
    item = b.call(function, [iterator])
    ctx.capi("Py_DecRef", item)  # (NULL-safe; never an item after those guards)
    ctx.guard(b.icmp_unsigned("==", ctx.capi("PyErr_Occurred"), _NULL), uop)


_RANGE_ITERATOR_TYPE = type(iter(range(0)))


def _range_iterator_left(ctx: LowerContext, iterator: ir.Value) -> ir.Value:
    """How many items a range iterator has left (abi.RANGE_ITERATOR: 3.11 counts an index up to its length, 3.12
    counts its length down; the length follows the step in both)."""
    index_at, _start_at, step_at = abi.RANGE_ITERATOR  # type: ignore[misc]
    length = _load_at(ctx, iterator, step_at + abi.WORD, I64)
    if index_at < 0:
        return length
    return ctx.builder.sub(length, _load_at(ctx, iterator, index_at, I64))


@lowers("_BUILD_RANGE")
def _build_range(ctx: LowerContext, uop: Uop) -> ir.Value:
    """A new range object of three ints (boxed here, as the C-API takes them): range() of exact ints runs no
    Python code; it fails only on memory (then it leaves raising MemoryError, at the instruction)."""
    refs = _references(ctx, uop, uop.args)
    made = _vectorcall(ctx, range, refs)
    _release(ctx, refs)
    ctx.guard(ctx.builder.icmp_unsigned("!=", made, _NULL), uop)
    return made


@lowers("_ITER_NEXT_RANGE_ITERATOR")
def _iter_next_range_iterator(ctx: LowerContext, uop: Uop) -> ir.Value:
    """What rangeiter_next does, inline: the next item in registers (no int object), the iterator advanced after
    the guard that it has one, so an exit leaves it as it was (the interpreter's FOR_ITER then ends the loop)."""
    b = ctx.builder
    iterator = ctx.value(uop.args[0])
    if abi.RANGE_ITERATOR is None:  # (a layout not probed: never native)
        ctx.guard(ir.Constant(I1, 0), uop)
        return _i64(0)
    index_at, start_at, step_at = abi.RANGE_ITERATOR
    ctx.guard(b.icmp_signed(">", _range_iterator_left(ctx, iterator), _i64(0)), uop)
    start = _load_at(ctx, iterator, start_at, I64)
    step = _load_at(ctx, iterator, step_at, I64)
    if index_at >= 0:  # 3.11: start + index * step (an item of the range: it fits in a C long)
        index = _load_at(ctx, iterator, index_at, I64)
        _store_at(ctx, iterator, index_at, b.add(index, _i64(1)))
        return b.add(start, b.mul(index, step))
    _store_at(ctx, iterator, start_at, b.add(start, step))  # 3.12: the start moves (wrapping past the last item)
    length_at = step_at + abi.WORD
    _store_at(ctx, iterator, length_at, b.sub(_load_at(ctx, iterator, length_at, I64), _i64(1)))
    return start


@lowers("_ITER_FINISH")
def _iter_finish(ctx: LowerContext, uop: Uop) -> None:
    """The inner loop's iterator is done: what CPython's FOR_ITER does before it leaves the loop. An enumerate or
    a zip of list and tuple iterators (one of them exhausted, the guards before say) gets its last next(), which
    lets go of the sequence as CPython's does (a strict zip raises there). A str or set iterator has let go of
    its container already (its tp_iternext found nothing: the inner tree's exit); one that has not leaves. A
    dict iterator that found nothing left to give (its length 0, the dict's size unchanged) gets its last next()
    (which raises if the dict's keys changed meanwhile); one of a changed size leaves, and the interpreter
    raises (the iterator's state is sticky)."""
    b = ctx.builder
    iterator = ctx.value(uop.args[0])
    kind = uop.operand
    if kind in (enumerate, zip):
        _next_raises_nothing(ctx, uop, iterator)
        return
    if kind is _RANGE_ITERATOR_TYPE:  # (its next() on none left changes nothing: only check that none is left)
        ctx.guard(b.icmp_signed("<=", _range_iterator_left(ctx, iterator), _i64(0)), uop)
        return
    held = abi.SEQUENCE_ITERATOR_SEQUENCE if kind in _STR_ITERATOR_TYPES else abi.CONTAINER_ITERATOR_CONTAINER
    container = _load_at(ctx, iterator, held, PTR)
    done = b.icmp_unsigned("==", container, _NULL)
    if kind not in _DICT_ITERATOR_TYPES:
        ctx.guard(done, uop)
        return
    with b.if_then(b.not_(done)):
        shared = b.icmp_signed(">=", _load_at(ctx, container, 0, I64), _i64(2))  # (its freeing runs no code here)
        same_size = b.icmp_signed(
            "==", _load_at(ctx, iterator, abi.DICT_ITERATOR_USED, I64), _load_at(ctx, container, abi.DICT_USED, I64)
        )
        none_left = b.icmp_signed("==", _load_at(ctx, iterator, abi.DICT_ITERATOR_LENGTH, I64), _i64(0))
        ctx.guard(b.and_(shared, b.and_(same_size, none_left)), uop)
        _next_raises_nothing(ctx, uop, iterator)
