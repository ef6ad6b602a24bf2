"""Attribute stores into plain instances made natively (jit.instances.find_store, jit.recorder.attributes.store,
codegen.lower.attributes): each function checked against CPython (values, types, exceptions and their messages,
the instances afterwards) with the class, the instance or the value replaced changed in the middle of a loop, and
through jit.stats and the uop listing that the loop ran natively with the specialized store (no barrier)."""

import dataclasses
import gc
import sys
import weakref

import pytest
from helpers import check

import jit as jit_module
from jit import jit

N = 300  # (iterations: the loops get hot, and a change at k = N // 2 lands in native code)


def _listing(jitted):
    return "\n".join(jit_module.dump(f, "uops") for f in (jitted, jitted.cpython_baseline))


def _stored_natively(jitted, generic_too=False):
    listing = _listing(jitted)
    assert "_STORE_ATTR_INSTANCE" in listing
    if not generic_too:
        assert "_STORE_ATTR_GENERIC" not in listing


class Counter:
    def __init__(self):
        self.count = 0
        self.total = 0.0
        self.label = "start"
        self.last = None


class Slotted:
    __slots__ = ("count", "total")

    def __init__(self):
        self.count = 0
        self.total = 0.0


def counts(n):
    c = Counter()
    for i in range(n):
        c.count += i & 3
        c.total += i * 0.25
    return c.count, c.total


def slot_counts(n):
    s = Slotted()
    for i in range(n):
        s.count += i & 3
        s.total += i * 0.25
    return s.count, s.total


@pytest.mark.parametrize("func", [counts, slot_counts])
def test_number_stores(func):
    jitted = check(func, 0, 5, N, native=True)
    _stored_natively(jitted)


def objects_stored(n):
    c = Counter()
    words = ["a", "bb", "ccc"]
    for i in range(n):
        c.label = words[i % 3]
        c.last = None if i % 2 else (i, i + 1)
    return c.label, c.last


def test_objects_and_none_stored():
    # (a tuple only the instance holds, replaced by None, is freed by the generic path: its freeing could run
    # Python code in general; strs and None are replaced natively)
    jitted = check(objects_stored, N, native=True)
    _stored_natively(jitted, generic_too=True)


def big_values(n):
    c = Counter()
    for i in range(n):
        c.count = (i * 2**40) * (i * 2**30)  # (past 64 bits from i = 8: an int object)
        c.total = -0.0 if i % 2 else float("nan")
    return c.count, repr(c.total)


def test_big_ints_and_special_floats():
    check(big_values, N, native=True)


def kept_floats(n):
    """The float object replaced is still held elsewhere sometimes: it must not be overwritten in place."""
    c = Counter()
    kept = []
    for i in range(n):
        c.total += 1.5
        if i % 10 == 0:
            kept.append(c.total)
    return kept, c.total


def test_a_value_held_elsewhere_is_not_overwritten_in_place():
    check(kept_floats, N, native=True)


class Noisy:
    log: list = []

    def __init__(self, k):
        self.k = k

    def __del__(self):
        Noisy.log.append(self.k)


def replaces_objects_with_finalizers(n):
    Noisy.log = []
    c = Counter()
    c.last = Noisy(-1)
    made = [Noisy(k) for k in range(n)]
    for i in range(n):
        c.last = made[i]  # (the object replaced: only c held the first; the others the list holds too)
    del made
    c.last = None
    gc.collect()
    return Noisy.log[:3], len(Noisy.log)


def test_the_value_replaced_is_freed_as_cpython_frees_it():
    check(replaces_objects_with_finalizers, N, native=True)


def deleted_then_stored(n):
    c = Counter()
    total = 0
    for i in range(n):
        if i % 50 == 49:
            del c.count  # (the next store adds it again: CPython's work, in the interpreter)
            c.count = 0
        c.count += i
        total += c.count
    return total


def test_attribute_deleted_mid_loop_is_added_back():
    jitted = check(deleted_then_stored, N, native=True)
    _stored_natively(jitted, generic_too=True)


def dict_made_mid_loop(n):
    c = Counter()
    for i in range(n):
        if i == n // 2:
            c.__dict__["extra"] = 1  # (the instance gets a real dict: its values are gone)
        c.count += i
    return c.count, sorted(c.__dict__)


def test_instance_dict_made_mid_loop():
    check(dict_made_mid_loop, N, native=True)


def minus_one(self):
    return -1


def setter(self, value):
    self.__dict__["seen"] = value * 10


def gains_property(n):
    c = Counter()
    for i in range(n):
        if i == n // 2:
            Counter.count = property(minus_one, setter)  # (a data descriptor takes the stores)
        c.count = i
    del Counter.count
    return c.__dict__.get("seen"), c.__dict__.get("count")


def test_property_added_to_the_class_mid_loop():
    check(gains_property, N, native=True)


class Watched:
    def __init__(self):
        self.writes = 0
        self.value = 0

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if name == "value":
            object.__setattr__(self, "writes", self.writes + 1)


def watched(n):
    w = Watched()
    for i in range(n):
        w.value = i
    return w.value, w.writes


def test_a_class_with_setattr_takes_the_generic_path():
    jitted = check(watched, N, native=True)
    assert "_STORE_ATTR_INSTANCE" not in _listing(jitted)


@dataclasses.dataclass(frozen=True)
class Frozen:
    x: int


def frozen_store(n):
    f = Frozen(1)
    total = 0
    for i in range(n):
        total += f.x
        if i == n // 2:
            f.x = 5  # (FrozenInstanceError, as CPython raises it)
    return total


def test_frozen_dataclass_raises_as_cpython():
    check(frozen_store, N, native=True)


def class_reassigned(n):
    c = Counter()
    for i in range(n):
        if i == n // 2:
            c.__class__ = Sub
        c.count += 1
    return c.count, type(c).__name__


class Sub(Counter):
    pass


def test_instance_class_assigned_mid_loop():
    check(class_reassigned, N, native=True)


def stores_three(c, n, stored, other):
    for i in range(n):
        c.label = stored if i % 2 else other
        c.total += 0.5
        c.count += 1


def test_no_reference_leaks_over_100000_iterations():
    stored = object()
    other = "an object held elsewhere"

    f = jit(threshold=2)(stores_three)
    c = Counter()
    f(c, 1000, stored, other)
    before = sys.getrefcount(stored), sys.getrefcount(other)
    f(c, 100_000, stored, other)
    assert (sys.getrefcount(stored), sys.getrefcount(other)) == before
    assert (c.count, c.total, c.label) == (101_000, 50_500.0, stored)
    assert jit_module.stats(f)["native_iterations"] >= 100_000
    ref = weakref.ref(c)
    del c
    gc.collect()
    assert ref() is None
