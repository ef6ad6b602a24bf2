"""Ints past 64 bits in native code (Kind.INT_OBJECT, codegen.ownership): an int operation whose result leaves
64 bits computes on int objects through CPython's own int type, the trace owns those objects, and the value is
narrowed back to an int where it is stored or used as one. Differential against CPython, native through
jit.stats, with the references counted."""

from __future__ import annotations

import sys
import traceback
import tracemalloc

import pytest
from helpers import check

import jit

MODULUS = (1 << 61) - 1


def hash_loop(n):
    modulus = (1 << 61) - 1
    h = 0
    for i in range(n):
        h = (h * 1_000_003 + i) % modulus
    return h


def mixed_ops(n, k):
    acc = 0
    for i in range(n):
        # (the int objects stay on the operand stack: a local holds only what fits in 64 bits)
        acc += ((i + k) * (1 << 62) >> 61) - ((i + k) * (1 << 62) // (3 << 60)) + ((i + k) * (1 << 62) % 1_000_007)
        acc ^= ((i << 70) | k) >> 68
        acc &= (1 << 40) - 1
    return acc


def subtract_past(n, start):
    out = 0
    for i in range(n):
        out = ((start - i) * (start + i) - start * start) // (i + 1)
    return out


def products(n, a):
    total = 0
    for i in range(n):
        total += (a * (i + 1)) % 97
    return total


def divides(n, d):
    h = 0
    for i in range(n):
        h = (h * 4_000_000_007 + i) % d
    return h


def sometimes_big(n, scale):
    kept = 0
    for i in range(n):
        x = (i * scale) % 1000
        kept += x
    return kept


def keeps_it(n, m):
    last = 0
    for i in range(n):
        last = (i * m) // 7
    return last


def truth_of_product(n, a, b):
    count = 0
    for i in range(n):
        x = (a * b * i) or i
        count += x % 5
    return count


@pytest.mark.parametrize("n", [0, 1, 2, 50, 1000])
def test_hash_loop(n):
    check(hash_loop, (n,), native=True if n >= 50 else None)


def test_hash_loop_enters_once_per_call():
    f = jit.jit(threshold=2, side_exit_threshold=2)(hash_loop)
    for _ in range(4):
        assert f(500) == hash_loop(500)
    before = jit.stats(f)
    assert f(2000) == hash_loop(2000)
    after = jit.stats(f)
    assert after["native_entries"] - before["native_entries"] == 1
    assert after["exits_to_interpreter"] - before["exits_to_interpreter"] == 1
    assert not after["aborts"]


@pytest.mark.parametrize("k", [0, 1, -5, 2**40, -(2**62)])
def test_every_operator_past_64_bits(k):
    check(mixed_ops, (100, k), native=True)


@pytest.mark.parametrize("start", [3, 2**31, 2**62, -(2**62)])
def test_subtraction_and_floor_division_past_64_bits(start):
    check(subtract_past, (60, start), native=True)


@pytest.mark.parametrize("a", [7, 2**62, -(2**63), 2**63 - 1])
def test_products_of_ints_near_the_limit(a):
    check(products, (80, a), native=True)


def test_division_by_zero_raises_at_the_users_line():
    """A ZeroDivisionError from CPython's int remainder, in native code: the interpreter does the instruction
    again and raises it, with the traceback of the plain function."""
    f = check(divides, (200, 1_000_000_007), (200, 0), (200, -3), native=True)

    def failure(func):
        with pytest.raises(ZeroDivisionError) as info:
            func(200, 0)
        entry = traceback.extract_tb(info.value.__traceback__)[-1]
        return str(info.value), entry.lineno, entry.line

    assert failure(f) == failure(divides)
    assert failure(f.cpython_baseline) == failure(divides)


def test_a_result_that_must_fit_and_does_not_leaves_exactly():
    """The value stored must fit in 64 bits: where it does not, native code leaves with the int object (handed
    over to the interpreter) and CPython's result comes out."""
    check(keeps_it, (50, 3), (50, 2**62), (50, 2**70), (50, -(2**66)))
    check(sometimes_big, (100, 3), (100, 2**62), (100, 2**64))


def test_truth_of_an_int_object():
    check(truth_of_product, (50, 3, 5), (50, 2**40, 2**40), (50, 0, 2**70))


def test_no_reference_is_leaked():
    f = jit.jit(threshold=2, side_exit_threshold=2)(mixed_ops)
    f(1000, 5)
    f(1000, 5)
    tracemalloc.start()
    try:
        f(100_000, 5)
        first = tracemalloc.get_traced_memory()[0]
        f(100_000, 5)
        second = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert second - first < 10_000
    assert jit.stats(f)["native_entries"] > 0


def test_the_objects_native_code_reads_keep_their_counts():
    big = 2**70 + 12345
    f = jit.jit(threshold=2, side_exit_threshold=2)(keeps_it)
    before = sys.getrefcount(big)
    for _ in range(20):
        assert f(300, big) == keeps_it(300, big)
    assert sys.getrefcount(big) == before
    # the exit that hands over the int object: the interpreter holds it, native code's reference is gone
    result = f(300, 2**62)
    assert result == keeps_it(300, 2**62)
    assert sys.getrefcount(result) == 2
