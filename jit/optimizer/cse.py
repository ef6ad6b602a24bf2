"""Common-subexpression elimination: a uop that computes what an earlier uop already computed from the same
inputs goes, its uses taking the earlier result.

Only the uops that compute a value from their inputs alone (those declared with a ``fold``: CPython's own
operation on numbers, and its checked forms) are merged: they read no memory a store could change, so the
earlier result is the same value wherever the later one was. A checked one (an overflow check) that repeats
an earlier check on the same inputs cannot fail where that one passed, so the later one goes with its exit."""

from __future__ import annotations

import struct
from typing import Any

from jit.optimizer.uses import replace
from jit.trace import Trace, Value


def run(trace: Trace) -> None:
    seen: dict[tuple[Any, ...], Value] = {}
    mapping: dict[int, Value] = {}
    kept = []
    for uop in trace.uops:
        if uop.args and mapping:
            uop.args = tuple(_resolve(v, mapping) for v in uop.args)
        if uop.op.fold is None or uop.out is None or uop.op.inline_const or uop.fast is not None:
            kept.append(uop)
            continue
        key = (uop.name, _operand_key(uop.operand), *(_value_key(v) for v in uop.args))
        earlier = seen.get(key)
        if earlier is None or earlier.kind != uop.out.kind:
            seen[key] = uop.out
            kept.append(uop)
            continue
        mapping[uop.out.id] = earlier
    trace.uops = kept
    replace(trace, mapping)


def _resolve(v: Value, mapping: dict[int, Value]) -> Value:
    while v.id in mapping:
        v = mapping[v.id]
    return v


def _value_key(v: Value) -> Any:
    """An input, told apart from others: by id, or a constant int, bool or float by its kind and exact value (the
    recorder makes a new value for each constant it meets: `a[i + 1]` read and stored are one `i + 1`)."""
    if v.is_const and type(v.const) in (int, bool):
        return (v.kind, type(v.const), v.const)
    if v.is_const and type(v.const) is float:
        return (v.kind, float, struct.pack("<d", v.const))  # (-0.0 and 0.0, NaNs: by their bits)
    return v.id


def _operand_key(operand: Any) -> Any:
    try:
        hash(operand)
    except TypeError:
        return id(operand)
    return operand
