"""The frame buffer seen from Python (runtime.native): the planned fast paths of pack and unpack give exactly
what the slot-by-slot paths give, whatever the values (big ints, bools, None, unbound, objects)."""

from __future__ import annotations

import struct
import sys

from hypothesis import given
from hypothesis import strategies as st

from codegen import abi
from jit.kinds import DIRTY, OWNED, Kind
from runtime.frame import UNBOUND
from runtime.native import NativeBuffer, Plans

LIST = [1, 2]
OBJECTS = [LIST, (3, 4), "text", range(5), 2**70, UNBOUND, None]

values = st.one_of(
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(allow_nan=False),
    st.booleans(),
    st.sampled_from(OBJECTS),
)


def words_and_tags(buffer: NativeBuffer, n: int) -> tuple[list[int], bytes]:
    """The slot words that matter (None's and unbound's do not) and the tags."""
    tags = bytes(buffer.tags[:n])
    words = [buffer.words[abi.SLOTS + i] if tags[i] not in (Kind.NONE, Kind.UNBOUND) else None for i in range(n)]
    return words, tags


@given(st.lists(st.lists(values, min_size=3, max_size=3), min_size=1, max_size=6))
def test_planned_pack_equals_pack_each(frames):
    """Frames of one function (same length) packed in turn: the plan made from the first of a shape serves
    the others, or gives way to the per-slot path (a big int where an int was)."""
    layout = abi.Layout(3, 1)
    plans = Plans()
    for slots in frames:
        fast, reference = NativeBuffer(layout, plans), NativeBuffer(layout)
        fast_tags = fast.pack(list(slots))
        fast_again = NativeBuffer(layout, plans)
        again_tags = fast_again.pack(list(slots))  # now planned, if it can be
        assert fast_tags == again_tags == reference.pack_each(list(slots))
        assert words_and_tags(fast, 3) == words_and_tags(reference, 3) == words_and_tags(fast_again, 3)


def test_a_big_int_where_the_plan_had_an_int():
    layout = abi.Layout(2, 1)
    plans = Plans()
    buffer = NativeBuffer(layout, plans)
    assert buffer.pack([1, 2.5]) == bytes([Kind.INT, Kind.FLOAT])
    assert (int, float) in plans.pack
    big = 2**64
    # (an int object: a tree whose entry type map takes it gets a reference of the buffer's own, see
    # test_take_references; any other tree an object it only moves)
    assert buffer.pack([big, 2.5]) == bytes([Kind.INT_OBJECT, Kind.FLOAT])
    assert buffer.words[abi.SLOTS] == id(big)


def test_take_references():
    buffer = NativeBuffer(abi.Layout(3, 1), Plans())
    big, other = 2**70 + 5, -(2**80) - 7
    slots = [big, 1, other]
    before = sys.getrefcount(big), sys.getrefcount(other)
    buffer.pack(slots)
    buffer.take_references(slots, (0,))
    assert bytes(buffer.tags[:3]) == bytes([Kind.INT_OBJECT | OWNED, Kind.INT, Kind.OBJECT])
    assert (sys.getrefcount(big), sys.getrefcount(other)) == (before[0] + 1, before[1])
    buffer.release_references(slots, (0,))  # (not written by native code: the buffer's reference goes)
    assert (sys.getrefcount(big), sys.getrefcount(other)) == before


def test_objects_travel_as_addresses():
    buffer = NativeBuffer(abi.Layout(3, 1), Plans())
    for _ in range(2):  # the first packs slot by slot and plans; the second follows the plan
        assert buffer.pack([LIST, "s", range(3)]) == bytes([Kind.LIST, Kind.STR, Kind.OBJECT])
        assert list(buffer.words[abi.SLOTS : abi.SLOTS + 2]) == [id(LIST), id("s")]


def write(buffer: NativeBuffer, index: int, kind: Kind, value: object) -> None:
    """What an exit stub writes: a word and a dirty tag."""
    word = abi.SLOTS + index
    if kind is Kind.FLOAT:
        buffer.doubles[word] = value
    elif kind in (Kind.INT, Kind.BOOL):
        buffer.words[word] = int(value)
    elif kind in (Kind.NONE, Kind.UNBOUND):
        buffer.words[word] = 12345  # (garbage: the tag says it all)
    else:
        buffer.words[word] = id(value)
    buffer.tags[index] = int(kind) | DIRTY


def test_unpack_rebuilds_dirty_slots_and_the_stack():
    layout = abi.Layout(6, 3)
    plans = Plans()
    for _ in range(2):  # planned the first time, from the cache the second
        buffer = NativeBuffer(layout, plans)
        buffer.pack([0, 0, 0, 0, 0, 0])
        write(buffer, 0, Kind.INT, -(2**63))
        write(buffer, 2, Kind.FLOAT, -0.0)
        write(buffer, 3, Kind.BOOL, True)
        write(buffer, 5, Kind.LIST, LIST)
        write(buffer, 6, Kind.NONE, None)  # the stack's first entry
        write(buffer, 7, Kind.APPEND_METHOD, LIST)
        write(buffer, 8, Kind.UNBOUND, None)
        slots = ["a", "b", "c", "d", "e", "f"]
        stack = buffer.unpack(slots, 3)
        assert slots[0] == -(2**63) and type(slots[0]) is int
        assert slots[1] == "b" and slots[4] == "e"  # not dirty: untouched
        assert repr(slots[2]) == "-0.0"
        assert slots[3] is True
        assert slots[5] is LIST
        assert stack[0] is None and stack[1] == LIST.append and stack[2] is UNBOUND
    assert len(plans.unpack) == 1


def test_unpack_without_dirty_slots_or_stack():
    buffer = NativeBuffer(abi.Layout(2, 1), Plans())
    buffer.pack([1, 2])
    slots = [1, 2]
    assert buffer.unpack(slots, 0) == []
    assert slots == [1, 2]


def test_unpack_keeps_objects_alive():
    obj = object()
    buffer = NativeBuffer(abi.Layout(1, 1), Plans())
    slots = [obj]
    before = sys.getrefcount(obj)
    for _ in range(1000):
        buffer.pack(slots)
        write(buffer, 0, Kind.OBJECT, obj)
        buffer.unpack(slots, 0)
    assert slots[0] is obj
    assert sys.getrefcount(obj) == before


def test_words_are_native_order():
    buffer = NativeBuffer(abi.Layout(1, 1), Plans())
    buffer.pack([7])
    buffer.pack([7])
    assert struct.unpack_from("=q", buffer.raw, abi.SLOTS * abi.WORD) == (7,)
