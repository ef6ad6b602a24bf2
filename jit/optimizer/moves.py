"""List items permuted in place: ``a[i], a[j] = a[j], a[i]`` moves the list's own pointers and nothing else.

The recorder reads each item (``_BINARY_SUBSCR_LIST_INT``), guards its type, takes a reference of the trace's
own (``_NEW_REF``: the first store may drop the list's), unboxes it (``_UNBOX_INT``, needed only by the exits
until the stores, whose states hold the number), and stores the very object back (``_STORE_SUBSCR_LIST_OBJECT``:
an incref, and a decref of the item replaced, with a test for freeing it and a guard that it is a number).

Where a run of stores into one list stores items read from that same list (the same SSA value) at exactly the
indices stored to (the same SSA values, as a multiset), the stores together only permute the list's pointers:
every object the list held before it holds after, as often (each item read was in the list, and the positions
written are the positions read). The run becomes one ``_MOVE_LIST_ITEMS`` that writes the pointers read, with
no reference count changed and nothing freed; the items' type guards, references and unboxing go. So the trace
no longer cares what the items are (a list of mixed types moves natively too). Conditions, each needed:

* nothing between the first of the reads and the first store can change a list or run Python code (only pure
  uops and guards that leave to the interpreter; no periodic check, whose signal handlers run Python code):
  the items are still where they were read, and the pointers read are still the list's;
* between the stores only uops that compute a value from their inputs alone, with no exit (an index ``i + 1``),
  so that no exit sees the list half permuted; the uop takes the place of the last store;
* the values read are used by nothing but the uops that go (their guard, reference, unboxing, the stores) and the
  states of exits before the first store: there they are the very objects read, still the list's (borrowed;
  the interpreter resumes with the object CPython would have, instead of a number boxed again). An exit or the
  loop's end after the stores that still needs a value (``x = a[i]`` kept in a variable) keeps the stores as
  they are;
* with two indices naming one item at run time (``i == j``) a swap still stores that item where it was. With
  more than two stores, two indices naming one item would move one object into two positions
  (``_MOVE_LIST_ITEMS_DISTINCT`` leaves before storing anything there, with the first store's state, and the
  interpreter does the statement).

Where ``jit.optimizer.ranges`` proves the indices within the list (as it does for the reads), the move's
``_IN_BOUNDS`` form counts no negative index from the end: four instructions per swap of ``list_swaps``' loop.

Two different list values are never merged, even if they are one list at run time (``between(a, a)``): a
store into one list value and reads of another keep their reference counting.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from jit.optimizer.uses import replace
from jit.trace import Snapshot, Trace, Uop, Value
from jit.uops import UOPS, Guard, TreeCall

_STORES = frozenset({"_STORE_SUBSCR_LIST_OBJECT", "_STORE_SUBSCR_LIST_OBJECT_IN_BOUNDS"})
_READS = frozenset({"_BINARY_SUBSCR_LIST_INT", "_BINARY_SUBSCR_LIST_INT_IN_BOUNDS"})
_REFERENCES = frozenset({"_NEW_REF", "_NEW_INT_OBJECT_REF"})
_UNBOXES = frozenset({"_UNBOX_INT", "_UNBOX_FLOAT", "_UNBOX_BOOL"})


def run(trace: Trace) -> None:
    position = 0
    while position < len(trace.uops):
        if trace.uops[position].name in _STORES and _rewrite(trace, position):
            continue  # (the uops moved: look at this position again)
        position += 1


class _Item:
    """One store of the run and the chain of uops that read the item it stores: read -> guard -> reference
    (and the unboxings of the guarded object)."""

    def __init__(self, store: Uop, read: Uop, guard: Uop | None, reference: Uop) -> None:
        self.store = store
        self.read = read
        self.guard = guard
        self.reference = reference
        self.unboxes: list[Uop] = []

    @property
    def gone(self) -> list[Uop]:
        """The uops that go with the rewrite (the read stays: the move stores its pointer)."""
        return [u for u in (self.guard, self.reference, *self.unboxes, self.store) if u is not None]

    @property
    def values(self) -> list[Value]:
        """The values standing for the item: the object read, guarded, referenced, unboxed."""
        return [u.out for u in (self.read, *self.gone) if u.out is not None]


def _rewrite(trace: Trace, start: int) -> bool:
    """If the run of stores starting at position start permutes items read from its list, replace it by one
    _MOVE_LIST_ITEMS; return whether it did."""
    uops = trace.uops
    target = uops[start].args[1]
    stores = _run_of_stores(uops, start, target)
    producers = {u.out.id: u for u in uops if u.out is not None}
    items = [_chain(producers, store, target) for store in stores]
    if any(item is None for item in items):
        return False
    chains: list[_Item] = [item for item in items if item is not None]
    if len({id(item.read) for item in chains}) != len(chains):
        return False  # (one item stored twice: `a[i], a[j] = a[j], a[j]` drops a[i]'s object)
    if Counter(_key(item.read.args[1]) for item in chains) != Counter(_key(store.args[2]) for store in stores):
        return False  # (the positions written are not the positions read)
    index_of = {id(u): k for k, u in enumerate(uops)}
    first_read = min(index_of[id(item.read)] for item in chains)
    if not all(_keeps_lists(u) for u in uops[first_read + 1 : start]):
        return False
    for item in chains:
        item.unboxes = [u for u in uops if u.name in _UNBOXES and u.args and u.args[0] is (item.guard or item.read).out]
    gone = {id(u) for item in chains for u in item.gone}
    standing = {v.id for item in chains for v in item.values}
    for u in uops:  # only the uops that go use the values standing for the items
        if id(u) not in gone and any(arg.id in standing for arg in u.args):
            return False
    end = index_of[id(stores[-1])]
    for owner, snapshot in _snapshots(trace):
        if owner >= start and not (owner <= end and id(uops[owner]) in gone):
            if any(v.id in standing for v in _values(snapshot)):
                return False
    # the rewrite: the exits before the stores hold the objects read; the run becomes one move
    replace(trace, {v.id: _out(item.read) for item in chains for v in item.values if v is not item.read.out})
    last = stores[-1]
    first = stores[0]
    name = "_MOVE_LIST_ITEMS" if len(stores) <= 2 else "_MOVE_LIST_ITEMS_DISTINCT"
    args: tuple[Value, ...] = (target, *(s.args[2] for s in stores), *(_out(item.read) for item in chains))
    exit = first.exit if name == "_MOVE_LIST_ITEMS_DISTINCT" else None  # (the state before any store)
    move = Uop(UOPS[name], args, None, None, first.pc, first.line, exit)
    kept = []
    for u in uops:
        if u is last:
            kept.append(move)
        elif id(u) not in gone:
            kept.append(u)
    trace.uops = kept
    return True


def _run_of_stores(uops: list[Uop], start: int, target: Value) -> list[Uop]:
    """The stores into target from position start on, with only exit-free computations between them."""
    stores = []
    for u in uops[start:]:
        if u.name in _STORES and u.args[1] is target:
            stores.append(u)
        elif not (u.op.inline_const or (u.op.fold is not None and not u.op.is_guard)):
            break
    return stores


def _chain(producers: dict[int, Uop], store: Uop, target: Value) -> _Item | None:
    """The read, guard and reference of the item store stores, if it was read out of target."""
    reference = producers.get(store.args[0].id)
    if reference is None or reference.name not in _REFERENCES:
        return None
    guard = producers.get(reference.args[0].id)
    if guard is None:
        return None
    read: Uop | None = guard
    if guard.name == "_GUARD_TYPE":
        read = producers.get(guard.args[0].id)
    else:
        guard = None
    if read is None or read.name not in _READS or read.args[0] is not target:
        return None
    return _Item(store, read, guard, reference)


def _out(uop: Uop) -> Value:
    assert uop.out is not None
    return uop.out


def _key(v: Value) -> Any:
    """Tells indices apart: the same value, or constants of the same kind and value."""
    return ("const", v.kind, repr(v.const)) if v.is_const else ("value", v.id)


def _keeps_lists(uop: Uop) -> bool:
    """Can nothing change a list's items, free an object or run Python code at uop?"""
    op = uop.op
    if op.mutates or op.drops or op.barrier or uop.name == "_CALL_TREE":
        return False
    return op.pure or op.guard is Guard.DEOPT


def _snapshots(trace: Trace) -> Iterator[tuple[int, Snapshot]]:
    """Every state the trace may resume at, with the position of the uop it belongs to (the end: past them)."""
    for position, u in enumerate(trace.uops):
        if u.exit is not None:
            yield position, u.exit.snapshot
        for alternative in u.alternatives:
            yield position, alternative.snapshot
        if isinstance(u.operand, TreeCall):
            yield position, u.operand.snapshot
    if trace.end_snapshot is not None:
        yield len(trace.uops), trace.end_snapshot


def _values(snapshot: Snapshot) -> Iterator[Value]:
    for frame in snapshot.frames:
        yield from frame.slots.values()
        yield from frame.stack
