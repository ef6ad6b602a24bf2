"""Lowerings on strs and dicts keyed by strs."""

from __future__ import annotations

from llvmlite import ir

from codegen import abi
from codegen.capi import I32, I64, PTR
from codegen.context import LowerContext
from codegen.lower.global_names import _dict_set, _guard_entry_drops_plainly
from codegen.lower.objects import _load_at, _reusable, _same_object, _write_in_place
from codegen.lower.table import (
    _ICMP,
    _args,
    _entry_alloca,
    _i64,
    lowers,
)
from codegen.lower.wide_ints import _phi_if
from jit.frontend.operators import CompareOp
from jit.trace import Uop


@lowers("_LEN_STR")
def _len_str(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.capi("PyUnicode_GetLength", ctx.value(uop.args[0]))


@lowers("_BINARY_OP_ADD_STR")
def _add_str(ctx: LowerContext, uop: Uop) -> ir.Value:
    """str + str. Where the trace gives up its reference(s) to the left str here (its last use: in `s += x` in a
    loop, the s the trace made in the iteration before), PyUnicode_Resize grows it in place if nothing else
    holds it (else copies it), and the right str's characters are copied after its own: CPython's own
    BINARY_OP_INPLACE_ADD_UNICODE, so that a loop building a str stays linear. Either way the reference is the
    trace's until the result exists: a failure (no memory) leaves with the left str intact, the exit's."""
    b = ctx.builder
    left, right = ctx.value(uop.args[0]), ctx.value(uop.args[1])
    if ctx.ownership.stolen.get(ctx.position) != uop.args[0].id:
        result = ctx.capi("PyUnicode_Concat", left, right)
        ctx.guard(b.icmp_unsigned("!=", result, ir.Constant(PTR, None)), uop)
        return result

    def state(obj: ir.Value, shift: int, mask: int) -> ir.Value:
        return b.and_(b.lshr(_load_at(ctx, obj, abi.STR_STATE, I32), ir.Constant(I32, shift)), ir.Constant(I32, mask))

    kind_left, kind_right = state(left, abi.STR_KIND_SHIFT, 7), state(right, abi.STR_KIND_SHIFT, 7)
    # (the characters of right fit in left's storage as they are: a narrower or equal kind, and not a latin-1
    # right after an ascii left; both compact, as every str made since 3.3 but by deprecated APIs)
    fits = b.and_(b.icmp_unsigned("<=", kind_right, kind_left), b.icmp_unsigned("!=", kind_right, ir.Constant(I32, 0)))
    ascii_only = b.icmp_unsigned("<=", state(left, abi.STR_ASCII_BIT, 1), state(right, abi.STR_ASCII_BIT, 1))
    compact = b.and_(state(left, abi.STR_COMPACT_BIT, 1), state(right, abi.STR_COMPACT_BIT, 1))
    grows = b.and_(b.and_(fits, ascii_only), b.trunc(compact, ir.IntType(1)))
    null = ir.Constant(PTR, None)
    cell = _entry_alloca(ctx, PTR)
    # the trace's other reference to left, if it holds two (codegen.ownership: steals_alias): given up first, so
    # that the str may grow in place; taken again if this fails (the exit hands both over)
    alias = ctx.ownership.stolen_aliases.get(ctx.position) is not None
    if alias:
        ctx.capi("Py_DecRef", left)  # (never the last: the stolen reference holds it)
    with b.if_else(grows) as (in_place, copied):
        with in_place:
            b.store(left, cell)
            length_left = _load_at(ctx, left, abi.STR_LENGTH, I64)
            length_right = _load_at(ctx, right, abi.STR_LENGTH, I64)
            resized = ctx.capi("PyUnicode_Resize", cell, b.add(length_left, length_right))
            grown = b.load(cell)
            ok = b.icmp_signed("==", resized, ir.Constant(I32, 0))
            with b.if_then(ok):
                # (cannot fail: the str is new or was the trace's only reference, its hash not computed, and
                # right's characters fit, as checked)
                ctx.capi("PyUnicode_CopyCharacters", grown, length_left, right, _i64(0), length_right)
            grown_result = b.select(ok, grown, null)
            grown_block = b.block
        with copied:
            concatenated = ctx.capi("PyUnicode_Concat", left, right)
            made = b.icmp_unsigned("!=", concatenated, null)
            with b.if_then(made):
                ctx.decref(left)  # (the trace's reference, given up here)
            copied_block = b.block
    result = b.phi(PTR)
    result.add_incoming(grown_result, grown_block)
    result.add_incoming(concatenated, copied_block)
    ok = b.icmp_unsigned("!=", result, null)
    ctx.guard(ok, uop, before_exit=(lambda: ctx.capi("Py_IncRef", left)) if alias else None)
    return result


@lowers("_LEN_DICT")
def _len_dict(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.capi("PyDict_Size", ctx.value(uop.args[0]))


@lowers("_COMPARE_OP_STR")
def _compare_str(ctx: LowerContext, uop: Uop) -> ir.Value:
    b = ctx.builder
    x, y = _args(ctx, uop)
    if uop.operand in (CompareOp.EQ, CompareOp.NE):
        # the same object, or lengths that differ, answer without comparing characters (CPython's own
        # shortcuts: a str's characters are stored in one canonical form); so do hashes both computed that
        # differ (a constant's is computed now: CPython caches it in the str, as any use as a key would)
        same = b.icmp_unsigned("==", x, y)
        differ = b.icmp_unsigned("!=", _load_at(ctx, x, abi.OB_SIZE, I64), _load_at(ctx, y, abi.OB_SIZE, I64))
        if abi.ITERATORS_OK:  # (the str layout checked with the iterators')
            for v in uop.args:
                if v.is_const:
                    hash(v.const)
            hx, hy = _load_at(ctx, x, abi.STR_HASH, I64), _load_at(ctx, y, abi.STR_HASH, I64)
            unknown = b.or_(b.icmp_signed("==", hx, _i64(-1)), b.icmp_signed("==", hy, _i64(-1)))
            differ = b.or_(differ, b.and_(b.not_(unknown), b.icmp_signed("!=", hx, hy)))
        decided = b.or_(same, differ)
        order = _phi_if(
            ctx, b.not_(decided), lambda: ctx.capi("PyUnicode_Compare", x, y), b.zext(differ, I32)
        )  # 0 where equal
    else:
        order = ctx.capi("PyUnicode_Compare", x, y)  # -1, 0 or 1 (exact strs: it cannot fail)
    return b.icmp_signed(_ICMP[uop.operand], order, ir.Constant(I32, 0))


@lowers("_DICT_LOOKUP_STR")
def _dict_lookup_str(ctx: LowerContext, uop: Uop) -> ir.Value:
    mapping, key = _args(ctx, uop)
    return _lookup(ctx, mapping, key)


def _lookup(ctx: LowerContext, mapping: ir.Value, key: ir.Value) -> ir.Value:
    """mapping[key] for an exact str key (borrowed), or NULL if missing. In a combined table of str keys
    (``abi.probe_dict``, checked on live dicts at import), CPython's own probe sequence is followed in place
    while it meets the key itself (or empty and deleted slots); a hash not computed yet, another table, or an
    equal key that is another object (or a collision of hashes) ask PyDict_GetItem."""
    if not abi.DICT_PROBE_OK:
        return ctx.capi("PyDict_GetItem", mapping, key)
    b = ctx.builder
    i8 = ir.IntType(8)
    fn = ctx.function
    keys = _load_at(ctx, mapping, abi.DICT_KEYS, PTR)
    key_hash = _load_at(ctx, key, abi.STR_HASH, I64)
    plain = b.and_(
        b.icmp_unsigned("==", _load_at(ctx, mapping, abi.DICT_VALUES, PTR), ir.Constant(PTR, None)),
        b.icmp_unsigned("==", _load_at(ctx, keys, abi.KEYS_KIND, i8), ir.Constant(i8, abi.KEYS_UNICODE)),
    )
    plain = b.and_(plain, b.icmp_signed("!=", key_hash, _i64(-1)))
    start, probe, step, slow, done = (
        fn.append_basic_block(f"lookup_{name}") for name in ("start", "probe", "step", "slow", "done")
    )
    b.cbranch(plain, start, slow)
    b.position_at_end(start)
    log2_size = b.zext(_load_at(ctx, keys, abi.KEYS_LOG2_SIZE, i8), I64)
    log2_index_bytes = b.zext(_load_at(ctx, keys, abi.KEYS_LOG2_INDEX_BYTES, i8), I64)
    width = b.sub(log2_index_bytes, log2_size)  # 0..3: log2 of the bytes per index slot
    indices = b.gep(keys, [_i64(abi.KEYS_INDICES)], inbounds=True)
    entries = b.gep(indices, [b.shl(_i64(1), log2_index_bytes)], inbounds=True)
    mask = b.sub(b.shl(_i64(1), log2_size), _i64(1))
    first = b.and_(key_hash, mask)
    b.branch(probe)
    b.position_at_end(probe)
    slot = b.phi(I64, name="slot")
    perturb = b.phi(I64, name="perturb")
    slot.add_incoming(first, start)
    perturb.add_incoming(key_hash, start)
    at = b.gep(indices, [b.shl(slot, width)], inbounds=True)
    index = _i64(0)
    for w, bits in enumerate((8, 16, 32, 64)):
        wide = (
            b.sext(b.load(b.bitcast(at, ir.IntType(bits).as_pointer())), I64)
            if bits < 64
            else b.load(b.bitcast(at, I64.as_pointer()))
        )
        index = b.select(b.icmp_unsigned("==", width, _i64(w)), wide, index) if w else wide
    found_block = fn.append_basic_block("lookup_entry")
    empty = b.icmp_signed("==", index, _i64(abi.ENTRY_EMPTY))
    missing_block = b.block
    b.cbranch(b.icmp_signed(">=", index, _i64(0)), found_block, step)
    b.position_at_end(found_block)
    entry = b.gep(entries, [b.shl(index, _i64(4))], inbounds=True)  # (16 bytes per entry)
    entry_key = b.load(b.bitcast(entry, PTR.as_pointer()))
    value = b.load(b.bitcast(b.gep(entry, [_i64(abi.WORD)], inbounds=True), PTR.as_pointer()))
    same = b.icmp_unsigned("==", entry_key, key)
    hit_block = b.block
    other = fn.append_basic_block("lookup_other")
    b.cbranch(same, done, other)
    b.position_at_end(other)
    collides = b.icmp_signed("==", _load_at(ctx, entry_key, abi.STR_HASH, I64), key_hash)
    b.cbranch(collides, slow, step)
    b.position_at_end(step)
    # (reached from the probe with a deleted slot or the end, and from another key): the end, or the next slot
    ended = b.phi(ir.IntType(1))
    ended.add_incoming(empty, missing_block)
    ended.add_incoming(ir.Constant(ir.IntType(1), 0), other)
    next_perturb = b.lshr(perturb, _i64(5))
    next_slot = b.and_(b.add(b.add(b.mul(slot, _i64(5)), next_perturb), _i64(1)), mask)
    step_block = b.block
    slot.add_incoming(next_slot, step_block)
    perturb.add_incoming(next_perturb, step_block)
    b.cbranch(ended, done, probe)
    b.position_at_end(slow)
    called = ctx.capi("PyDict_GetItem", mapping, key)
    slow_block = b.block
    b.branch(done)
    b.position_at_end(done)
    result = b.phi(PTR)
    result.add_incoming(value, hit_block)
    result.add_incoming(ir.Constant(PTR, None), step_block)
    result.add_incoming(called, slow_block)
    return result


@lowers("_GUARD_FOUND")
def _guard_found(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(ctx.builder.icmp_unsigned("!=", ctx.value(uop.args[0]), ir.Constant(PTR, None)), uop)


@lowers("_GUARD_MISSING")
def _guard_missing(ctx: LowerContext, uop: Uop) -> None:
    ctx.guard(ctx.builder.icmp_unsigned("==", ctx.value(uop.args[0]), ir.Constant(PTR, None)), uop)


@lowers("_CONTAINS_DICT_STR")
def _contains_dict_str(ctx: LowerContext, uop: Uop) -> ir.Value:
    mapping, key = _args(ctx, uop)
    return ctx.builder.icmp_unsigned("!=", _lookup(ctx, mapping, key), ir.Constant(PTR, None))


@lowers("_CONTAINS_STR")
def _contains_str(ctx: LowerContext, uop: Uop) -> ir.Value:
    text, part = _args(ctx, uop)
    found = ctx.capi("PyUnicode_Contains", text, part)  # 1 or 0 (exact strs: it cannot fail)
    return ctx.builder.icmp_signed("==", found, ir.Constant(I32, 1))


@lowers("_BIND_DICT_GET")
def _bind_dict_get(ctx: LowerContext, uop: Uop) -> ir.Value:
    return ctx.value(uop.args[0])


@lowers("_CHECK_STORE_SUBSCR_DICT_STR")
def _check_store_subscr_dict_str(ctx: LowerContext, uop: Uop) -> None:
    """An inlined call's d[key] = value, checked where it is (jit.inline): made at the call's return, nothing that
    runs Python code in between, where what it replaces is what was checked or a number a deferred store put."""
    mapping, key = _args(ctx, uop)
    _guard_entry_drops_plainly(ctx, uop, mapping, key, old=_lookup(ctx, mapping, key))


@lowers(
    "_STORE_SUBSCR_DICT_STR",
    "_STORE_SUBSCR_DICT_STR_OVER_NUMBER",
    "_STORE_SUBSCR_DICT_STR_OVER_READ",
    "_STORE_SUBSCR_DICT_STR_CHECKED",
)
def _store_subscr_dict_str(ctx: LowerContext, uop: Uop) -> None:
    """d[key] = value, boxed. The value it replaces must free without running Python code (a number or
    None), else the interpreter makes the store (checked here, unless the trace read it since, or an inlined
    call checked it: then it leaves only where memory runs out, with the MemoryError)."""
    value, mapping, key = _args(ctx, uop)[:3]
    old = None
    if uop.name == "_STORE_SUBSCR_DICT_STR":
        old = _lookup(ctx, mapping, key)  # (borrowed; no Python code runs: exact str keys; one lookup for both)
        _guard_entry_drops_plainly(ctx, uop, mapping, key, old=old)
    raising = uop.name == "_STORE_SUBSCR_DICT_STR_CHECKED"
    v = uop.args[0]
    same = value if v.kind.is_pointer else _same_object(ctx, v, uop)
    if same is not None:
        if old is None:
            _dict_set(ctx, uop, mapping, key, v, value, raising)
            return
        # the very object the entry holds already (`seen[w] = True` again): nothing changes, as in CPython's
        # insertdict, which neither writes it nor moves the dict's version then
        b = ctx.builder
        with b.if_then(b.icmp_unsigned("!=", old, same)):
            _dict_set(ctx, uop, mapping, key, v, value, raising)
        return
    # a number over the int or float object only the dict holds (`d[k] = d.get(k, 0) + 1`): that object takes
    # the value (codegen.lower.objects._reusable), no new one is made, and the dict does not change
    b = ctx.builder
    if uop.name == "_STORE_SUBSCR_DICT_STR_OVER_READ":
        old = ctx.value(uop.args[3])  # (what the dict holds still: NULL if d.get found nothing)
    elif old is None:
        old = _lookup(ctx, mapping, key)  # (borrowed; no Python code runs: exact str keys)
    found = b.icmp_unsigned("!=", old, ir.Constant(PTR, None))
    reusable = _reusable(ctx, v.kind, value, b.select(found, old, ctx.pointer(None)))
    if reusable is None:
        _dict_set(ctx, uop, mapping, key, v, value, raising)
        return
    with b.if_else(b.and_(found, reusable)) as (in_place, replace):
        with in_place:
            _write_in_place(ctx, v.kind, value, old)
        with replace:
            _dict_set(ctx, uop, mapping, key, v, value, raising)
