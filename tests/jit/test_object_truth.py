"""The truth of an object whose class defines `__bool__` or `__len__` in Python, in a hot loop (`if obj:`,
`while obj:`, `not obj`, `a and b`): ``_TO_BOOL_GENERIC``, a barrier (jit.recorder.generic.truth). The user's
method runs exactly as often as under CPython (a branch guard on its answer resumes where the other direction
goes, never testing again), what it raises propagates with CPython's traceback, and a `__bool__` returning a
non-bool raises CPython's TypeError. Each case checked against CPython and asserted native through jit.stats."""

import gc
import sys
import traceback
import tracemalloc

import pytest
from helpers import check

import jit as jit_module
from jit import jit
from jit.aborts import Reason

LOG = []


class Flag:
    def __init__(self, v):
        self.v = v

    def __bool__(self):
        LOG.append(self.v)
        return self.v % 3 != 0


class Sized:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n % 4


class RaisesAt:
    def __init__(self, v, k):
        self.v = v
        self.k = k

    def __bool__(self):
        if self.v == self.k:
            raise ValueError(f"no truth at {self.v}")
        return self.v % 2 == 0


class ReturnsInt:
    def __init__(self, v):
        self.v = v

    def __bool__(self):
        return self.v if self.v > 200 else self.v % 2 == 0


class NegativeLen:
    def __init__(self, v):
        self.v = v

    def __len__(self):
        return 1 - self.v // 100


def _no_aborts(jitted):
    """Native, and no recording gave up but for bad timing (the loop ended while recorded, an inner loop first)."""
    for f in (jitted, jitted.cpython_baseline):
        stats = jit_module.stats(f)
        assert not [code for code in stats["aborts_by_code"] if not Reason[code].retry], stats["aborts"]
        assert stats["native_entries"] > 0 and stats["native_iterations"] > 0


def if_object(n):
    t = 0
    for i in range(n):
        o = Flag(i)
        if o:
            t += 1
        else:
            t -= 2
    return t


def not_object(n):
    t = 0
    s = Sized(0)
    for i in range(n):
        s.n = i
        if not s:
            t += i
        x = not s
        t += x
    return t, type(x)


def while_object(n):
    t = 0
    for i in range(n):
        s = Sized(i)
        while s:
            s.n -= 1
            t += 1
    return t


def and_or_objects(n):
    out = []
    for i in range(n):
        a = Sized(i)
        b = Sized(i + 1)
        x = a and b
        y = a or b
        out.append((x is a, y is a))
    return out[-8:]


def test_if_on_a_python_bool_is_native_and_calls_it_once_per_test():
    for n in (10, 300):
        LOG.clear()
        expected = if_object(n)
        plain_log = list(LOG)
        for variant in (jit(threshold=2, side_exit_threshold=2), jit(threshold=2, interpreter=True)):
            f = variant(if_object)
            for _ in range(2):
                LOG.clear()
                assert f(n) == expected
                assert LOG == plain_log  # (never tested twice: a branch guard resumes past the test)
    jitted = check(if_object, 300, 1000, native=True)
    _no_aborts(jitted)


def test_not_while_and_or_of_python_truth_are_native():
    for func in (not_object, while_object, and_or_objects):
        jitted = check(func, 5, 300, native=True)
        stats = jit_module.stats(jitted)
        assert stats["native_iterations"] > 0
        assert not [m for m in stats["aborts"] if "truth" in m], stats["aborts"]


def raises_in_bool(n, k, out):
    t = 0
    for i in range(n):
        out.append(i)
        if RaisesAt(i, k):
            t += i
    return t


def test_an_exception_from_bool_propagates_with_cpythons_traceback():
    jitted = check(raises_in_bool, (300, 250, []), (300, -1, []), native=True)
    _no_aborts(jitted)
    for variant in (jitted, jitted.cpython_baseline):
        for k in (150, 280):
            out = []
            with pytest.raises(ValueError, match=f"no truth at {k}") as info:
                variant(300, k, out)
            assert out == list(range(k + 1))
            frames = traceback.extract_tb(info.value.__traceback__)
            assert [f.name for f in frames[-2:]] == ["raises_in_bool", "__bool__"]
            assert frames[-2].line == "if RaisesAt(i, k):"
        assert jit_module.stats(variant)["native_iterations"] >= 200


def bool_not_a_bool(n):
    t = 0
    for i in range(n):
        if ReturnsInt(i):
            t += 1
    return t


def len_negative(n):
    t = 0
    for i in range(n):
        while NegativeLen(i):
            t += 1
            break
    return t


def test_bool_returning_an_int_and_a_negative_len_raise_cpythons_errors():
    jitted = check(bool_not_a_bool, 150, 300, native=True)  # TypeError: __bool__ should return bool, returned int
    _no_aborts(jitted)
    with pytest.raises(TypeError, match="__bool__ should return bool, returned int"):
        jitted(300)
    jitted = check(len_negative, 150, 300, native=True)  # ValueError: __len__() should return >= 0
    with pytest.raises(ValueError, match=r"__len__\(\) should return >= 0"):
        jitted(300)


def test_the_objects_tested_are_not_leaked():
    s = Sized(3)

    def tests(obj, n):
        t = 0
        for i in range(n):
            obj.n = i
            if obj:
                t += 1
            if not Sized(i):
                t += 2
        return t

    f = jit(threshold=2, min_native_iterations=0)(tests)
    assert f(s, 1000) == tests(s, 1000)
    gc.collect()
    before = sys.getrefcount(s)
    tracemalloc.start()
    try:
        f(s, 1000)
        gc.collect()
        start, _ = tracemalloc.get_traced_memory()
        f(s, 100_000)
        gc.collect()
        end, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sys.getrefcount(s) == before
    assert end - start < 100_000  # (100,000 leaked Sized objects would be megabytes)
    stats = jit_module.stats(f)
    assert stats["native_iterations"] >= 100_000
    assert not [code for code in stats["aborts_by_code"] if not Reason[code].retry], stats["aborts"]
