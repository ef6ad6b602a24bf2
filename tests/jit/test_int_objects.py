"""Ints past 64 bits in native code: an int operation whose result leaves 64 bits computes in i128 where the
recorder proves the magnitudes stay below 2**127 (Kind.WIDE_INT), else on int objects through CPython's own int
type (Kind.INT_OBJECT, owned by the trace: codegen.ownership); either is narrowed back to an int where it is
stored or used as one. Differential against CPython, native through jit.stats, with the references counted."""

from __future__ import annotations

import sys
import traceback
import tracemalloc

import pytest
from helpers import check

import jit
from codegen import capi

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
    check(keeps_it, (50, 3), (50, 2**62), (50, 2**70), (50, -(2**66)), native=True)
    check(sometimes_big, (100, 3), (100, 2**62), (100, 2**64), native=True)


def test_truth_of_an_int_object():
    check(truth_of_product, (50, 3, 5), (50, 2**40, 2**40), (50, 0, 2**70), native=True)


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


def test_an_int_past_64_bits_passed_in_keeps_its_count():
    """A parameter past 64 bits is an int object in a local (the buffer and the trace each hold a reference to
    it while native code runs: codegen.ownership): the count of that object stays as it was after many calls."""
    big = 2**70 + 12345
    f = jit.jit(threshold=2, side_exit_threshold=2)(keeps_it)
    before = sys.getrefcount(big)
    for _ in range(20):
        assert f(300, big) == keeps_it(300, big)
    assert sys.getrefcount(big) == before
    assert jit.stats(f)["native_entries"] > 0


def test_the_int_object_an_exit_hands_over_has_one_reference():
    """Recorded where (i * m) // 7 fits; from i == 15 on it does not: native code leaves with the int object it
    made, and the interpreter holds the only reference to what the function returns."""
    f = jit.jit(threshold=2, side_exit_threshold=2)(keeps_it)
    for _ in range(3):
        assert f(10, 2**62) == keeps_it(10, 2**62)
    entries = jit.stats(f)["native_entries"]
    result = f(300, 2**62)
    assert result == keeps_it(300, 2**62)
    assert sys.getrefcount(result) == 2
    assert jit.stats(f)["native_entries"] > entries


def chained_products(n, a, b, m):
    total = 0
    for i in range(n):
        total = (total + (a + i) * (b - i) * (a - b + i)) % m
    return total


def difference_of_products(n, m):
    last = 0
    for i in range(n):
        last = i * m - i
    return last


def uops_of(f):
    return jit.dump(f, "uops")


def test_the_hash_loop_computes_in_i128():
    f = check(hash_loop, (300,), native=True)
    text = uops_of(f)
    assert "_BINARY_OP_MULTIPLY_WIDE" in text and "_BINARY_OP_REMAINDER_WIDE" in text
    assert "_BINARY_OP_INT_OBJECT" not in text


@pytest.mark.parametrize(
    "a, b, m", [(2**62, 2**61, 2**61 - 1), (-(2**62), 2**62 + 5, 1_000_000_007), (3, -(2**63), -(2**40 + 3))]
)
def test_products_past_i128_go_through_int_objects(a, b, m):
    """Three factors near 2**62 exceed what an i128 holds: the i128 product is boxed and CPython's ints take
    over."""
    f = check(chained_products, (40, a, b, m), native=True)
    assert "_BOX_WIDE" in uops_of(f)


def test_an_i128_that_does_not_fit_where_it_is_stored_leaves_exactly():
    """Recorded where the difference fits (i == 2: 2**63 - 2); at i == 3 it does not: native code leaves with
    the i128 (its high word in the buffer's wide area) and CPython's result comes out."""
    f = check(difference_of_products, (40, 2**62), (3, 2**62), (40, 2**62 + 7), (40, -(2**62)), native=True)
    assert "_NARROW_WIDE" in uops_of(f)


def test_without_i128_division_the_remainder_goes_through_ints(monkeypatch):
    monkeypatch.setattr(capi, "WIDE_DIVISION_ADDRESSES", {})
    check(hash_loop, (300,), native=True)
    check(divides, (100, 7), (100, -(2**40)), (100, 0))
