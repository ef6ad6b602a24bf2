"""`is` / `is not` between values of different kinds in a hot loop (jit.specialize._identity): the answer from the
kinds where they are two types (an int and a float, a bool and an int, a str and None), and from the very objects
CPython would hold where one side is an object of any type (None, True/False and the shared small ints -5..256
compared as pointers: an untyped call result may be any of them at run time). Each case checked against CPython
and asserted native through jit.stats; two unboxed ints or floats of one kind still abort (their objects'
identity is not kept natively), but for an int against a constant one of -5..256."""

import sys

from helpers import check

import jit as jit_module
from jit import jit
from jit.aborts import Reason


def _no_aborts(jitted):
    """Native, and no recording gave up but for bad timing (the loop ended while recorded, an inner loop first)."""
    for f in (jitted, jitted.cpython_baseline):
        stats = jit_module.stats(f)
        assert not [code for code in stats["aborts_by_code"] if not Reason[code].retry], stats["aborts"]
        assert stats["native_entries"] > 0 and stats["native_iterations"] > 0


def numbers_of_two_types(n, x):
    t = 0
    for i in range(n):
        f = i * 0.5
        if i is True:
            t += 1
        if (i > 3) is True:
            t += 2
        if f is i:
            t += 4
        if f is not x:
            t += 8
        if (i > 5) is not False:
            t += 16
        if (i > 7) is (i > 9):
            t += 32
    return t


def test_numbers_of_two_types_are_never_one_object():
    jitted = check(numbers_of_two_types, (300, 1), (300, True), (300, None), (300, "s"), native=True)
    _no_aborts(jitted)


def slots_that_hold_none_sometimes(words, d):
    t = 0
    last = None
    best = None
    for w in words:
        s = d.get(w)
        if s is None:
            t += 1
        if s is not None and w is not None:
            t += len(s)
        if last is not None:
            t += last
        last = len(w)
        if best is None or len(w) > best:
            best = len(w)
    return t, best


def test_none_against_ints_and_strs():
    words = ["a", "bb", "ccc", "", "dddd"] * 60
    jitted = check(slots_that_hold_none_sometimes, (words, {"a": "x", "ccc": "yy"}), (words, {}), native=True)
    assert jit_module.stats(jitted)["native_iterations"] > 0
    assert not [m for m in jit_module.stats(jitted)["aborts"] if "identity" in m]


def looping_result(i, n):  # (a loop: never inlined; a big int while recording, then None, True or a small int)
    for _ in range(1):
        pass
    if i < 50:
        return 2**70 + i
    if i % 4 == 0:
        return None
    if i % 4 == 1:
        return i % 3 == 0
    return i % 300 - 5


SMALL = 7
SHARED = -5
BIG = 2**70


def untyped_objects(n):
    out = []
    for i in range(n):
        v = looping_result(i, n)
        out.append((v is None, v is not None, v is True, v is False, v is SMALL, v is not SHARED, v is BIG))
    return out


def test_an_untyped_object_against_none_bools_and_small_ints_is_compared_as_cpython_does():
    assert untyped_objects(300).count((False, True, False, False, False, True, False)) < 300  # (it varies)
    jitted = check(untyped_objects, 300, native=True)
    for f in (jitted, jitted.cpython_baseline):
        stats = jit_module.stats(f)
        assert stats["native_iterations"] >= 200
        assert not [m for m in stats["aborts"] if "identity" in m], stats["aborts"]


class Box:
    pass


def floats_and_objects(n, box):
    t = 0
    for i in range(n):
        f = i * 1.5
        if f is box:
            t += 1
        if box is not f:
            t += 2
        if i is box:
            t += 4
        if box is None:
            t += 8
    return t


def test_objects_against_numbers_are_native_and_keep_no_reference():
    box = Box()
    jitted = check(floats_and_objects, (300, box), (300, None), native=True)
    _no_aborts(jitted)
    f = jit(threshold=2, min_native_iterations=0)(floats_and_objects)
    f(1000, box)
    before = sys.getrefcount(box)
    assert f(100_000, box) == floats_and_objects(100_000, box)
    assert sys.getrefcount(box) == before
    assert jit_module.stats(f)["native_iterations"] >= 100_000


def same_kind_ints(n):
    t = 0
    for i in range(n):
        j = i + 0
        if i is j:  # (CPython: True for -5..256, which are shared; an unboxed int has no object of its own)
            t += 1
    return t


def test_two_unboxed_ints_still_abort_with_their_reason():
    f = check(same_kind_ints, 400)
    stats = jit_module.stats(f)
    assert stats["aborts_by_code"].get("IDENTITY"), stats["aborts"]
