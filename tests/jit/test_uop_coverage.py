"""Every uop jit/uops.py declares is emitted for some program (the declaration is not dead). Most are by
the rest of the suite; these functions reach the ones it does not, each checked against CPython, and each
uop seen in the listing of the trace that ran natively."""

import pytest
from helpers import check

from jit import jit


def bool_and(n):
    count = 0
    for i in range(n):
        if (i > 3) & (i % 2 == 0):
            count += 1
    return count


def bool_xor(n):
    count = 0
    for i in range(n):
        if (i > 3) ^ (i % 3 == 0):
            count += 1
    return count


def bool_or(n):
    count = 0
    for i in range(n):
        if (i > 30) | (i % 3 == 0):
            count += 1
    return count


def range_with_a_step(n, step):
    total = 0
    for _ in range(3):
        for i in range(0, n, step):
            total += i
    return total


def tuple_length(t, n):
    total = 0
    for _ in range(n):
        total += len(t)
    return total


def tuple_truth(t, n):
    total = 0
    for i in range(n):
        if t:
            total += i
    return total


CASES = [
    (bool_and, [(50,), (7,)], "_BINARY_OP_AND_BOOL"),
    (bool_xor, [(50,), (7,)], "_BINARY_OP_XOR_BOOL"),
    (bool_or, [(50,), (7,)], "_BINARY_OP_OR_BOOL"),
    (range_with_a_step, [(50, 3), (50, -1), (40, 7)], "_GUARD_NONZERO_INT"),
    (tuple_length, [((1, 2, 3), 40), ((), 40)], "_LEN_TUPLE"),
    (tuple_truth, [((1,), 40), ((), 40)], "_TO_BOOL_TUPLE"),
]


@pytest.mark.parametrize(("func", "calls", "uop"), CASES, ids=[c[2] for c in CASES])
def test_uop_is_emitted_and_right(func, calls, uop):
    jitted = check(func, *calls, native=True)
    assert uop in jit.dump(jitted, "uops")
