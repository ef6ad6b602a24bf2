"""A loop's iterator between CPython and tier 1 (runtime/handoff.py): the hidden slots made from CPython's
iterator hold what tier 1's own RANGE_SETUP/GET_ITER and FOR_RANGE/FOR_ITER would hold at that point, and
CPython's iterator resumes exactly where tier 1 left it."""

import itertools

import pytest
from helpers import define

from jit.frontend import compile_to_tier1
from runtime import handoff
from runtime.frame import UNBOUND

RANGE_LOOP = "def f(a, b, c):\n    for i in range(a, b, c):\n        pass\n"
ITER_LOOP = "def f(xs):\n    for x in xs:\n        pass\n"


def loop_of(source):
    code = compile_to_tier1(define(source, "f"))
    (loop,) = code.loops
    return loop, [UNBOUND] * code.nslots


def advanced(it, k):
    for _ in range(k):
        next(it)
    return it


RANGES = [
    (0, 10, 1),
    (10, -10, -3),
    (-5, 5, 2),
    (7, 7, 1),
    (2**70, 2**70 + 50, 7),
    (2**64 + 3, -(2**64), -(2**62)),
    (-(2**63), 2**63, 2**61),
    (0, 10**30, 10**28),
]


@pytest.mark.parametrize("start, stop, step", RANGES, ids=repr)
@pytest.mark.parametrize("fetched", [0, 1, 3])
@pytest.mark.parametrize("tier1_steps", [0, 1, 2, 5])
def test_range_iterator_round_trip(start, stop, step, fetched, tier1_steps):
    loop, slots = loop_of(RANGE_LOOP)
    r = range(start, stop, step)
    fetched = min(fetched, len(r))
    it = advanced(iter(r), fetched)
    handoff.enter(loop, it, r, slots)
    base = loop.hidden[0]
    # what RANGE_SETUP then `fetched` FOR_RANGEs leave in the slots
    assert slots[base : base + 4] == [start + fetched * step, stop, step, None]
    steps = min(tier1_steps, len(r) - fetched)
    slots[base] += steps * step  # tier 1 runs `steps` iterations
    handoff.leave(loop, it, r, slots)
    assert list(it) == list(r[fetched + steps :])


@pytest.mark.parametrize("make", [list, tuple], ids=["list", "tuple"])
@pytest.mark.parametrize("fetched", [0, 2])
@pytest.mark.parametrize("tier1_steps", [0, 3])
def test_sequence_iterator_round_trip(make, fetched, tier1_steps):
    loop, slots = loop_of(ITER_LOOP)
    seq = make(range(10))
    it = advanced(iter(seq), fetched)
    handoff.enter(loop, it, seq, slots)
    base = loop.hidden[0]
    assert slots[base] is seq and slots[base + 1 : base + 3] == [fetched, None]
    slots[base + 1] += tier1_steps
    handoff.leave(loop, it, seq, slots)
    assert list(it) == list(seq[fetched + tier1_steps :])


def test_list_mutated_while_tier1_iterates():
    # tier 1 walks (list, index) as list_iterator does: appends are seen, and CPython goes on from the index
    loop, slots = loop_of(ITER_LOOP)
    data = [0, 1, 2]
    it = advanced(iter(data), 1)
    handoff.enter(loop, it, data, slots)
    base = loop.hidden[0]
    data.extend([3, 4, 5])
    slots[base + 1] = 4  # tier 1 took 3 more items (1, 2, 3)
    del data[0]  # [1, 2, 3, 4, 5]: index 4 is now the 5
    handoff.leave(loop, it, data, slots)
    reference = advanced(iter([1, 2, 3, 4, 5]), 4)
    assert list(it) == list(reference) == [5]


def test_list_shrunk_below_the_index():
    loop, slots = loop_of(ITER_LOOP)
    data = list(range(6))
    it = advanced(iter(data), 2)
    handoff.enter(loop, it, data, slots)
    slots[loop.hidden[0] + 1] = 5
    del data[3:]
    handoff.leave(loop, it, data, slots)
    assert list(it) == []


def test_exhausted_list_iterator():
    loop, slots = loop_of(ITER_LOOP)
    data = [1]
    it = iter(data)
    list(it)
    handoff.enter(loop, it, data, slots)
    base = loop.hidden[0]
    data.append(2)  # an exhausted list iterator stays exhausted: so does tier 1's state
    assert base < len(slots) and len(slots[base]) <= slots[base + 1]
    assert list(it) == []


def gen(n):
    yield from range(n)


class MyList(list):
    def __getitem__(self, index):  # an iterator over it must not go through this
        raise AssertionError("list_iterator does not call __getitem__")


@pytest.mark.parametrize(
    "make, first",
    [
        (lambda: gen(5), 0),  # iter(generator) is the generator: shared
        (lambda: iter([1, 2, 3]), 1),  # the user's own iterator: both sides must see every next()
        (lambda: MyList([1, 2, 3]), 1),  # a list subclass: its own methods could differ
        (lambda: {1: 2}, 1),
        (lambda: reversed([1, 2, 3]), 3),
        (lambda: itertools.count(), 0),
    ],
    ids=["generator", "user-list-iterator", "list-subclass", "dict", "reversed", "count"],
)
def test_other_iterators_are_shared(make, first):
    loop, slots = loop_of(ITER_LOOP)
    iterable = make()
    it = iter(iterable)
    handoff.enter(loop, it, None if it is iterable else iterable, slots)
    base = loop.hidden[0]
    assert slots[base : base + 3] == [None, None, it]
    handoff.leave(loop, it, None if it is iterable else iterable, slots)  # nothing to move
    assert next(it) == first


def test_range_rebound_to_something_else():
    # `range` names a user function returning a list: tier 1 iterates its iterator itself
    loop, slots = loop_of(RANGE_LOOP)
    data = [1, 2]
    it = iter(data)
    handoff.enter(loop, it, data, slots)
    base = loop.hidden[0]
    assert slots[base : base + 4] == [None, None, None, it]


@pytest.mark.parametrize(
    "seq", [range(5), range(2**64, 2**64 + 5), range(10, 0, -2), [0, 1, 2, 3, 4], (0, 1, 2, 3, 4)], ids=repr
)
def test_move_forward(seq):
    # __setstate__ means an index or an advance depending on the type and version (probed): moving works either way
    it = advanced(iter(seq), 1)
    _, index = handoff._position(it)
    handoff._move(it, index, index + 2)
    assert next(it) == seq[3]
