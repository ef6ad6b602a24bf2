"""Bitwise operators (& | ^ ~ << >>) and their augmented forms, differentially against CPython."""

import pytest
from tier1_check import check_t1


def band(a, b):
    return a & b


def bor(a, b):
    return a | b


def bxor(a, b):
    return a ^ b


def lshift(a, b):
    return a << b


def rshift(a, b):
    return a >> b


def invert(a):
    return ~a


LOGIC_PAIRS = [
    (12, 10),
    (-12, 10),
    (12, -10),
    (-12, -10),
    (0, -1),
    (2**64 + 5, 2**63 + 3),
    (-(2**100), 2**99 - 1),
    (-(2**63), -1),
    (True, False),
    (True, True),
    (False, False),
    (True, 3),
    (1.5, 1),
    ({1, 2}, {2, 3}),
    ("a", 1),
]


@pytest.mark.parametrize("op", [band, bor, bxor], ids=lambda f: f.__name__)
@pytest.mark.parametrize("a, b", LOGIC_PAIRS, ids=repr)
def test_logic_matrix(op, a, b):
    check_t1(op, (a, b), (b, a))


SHIFT_PAIRS = [
    (1, 100),
    (-1, 200),
    (5, 0),
    (-5, 1),
    (2**64, 64),
    (2**63, -1),
    (1, -1),
    (-1, 2**70),
    (0, 10**20),
    (True, 3),
    (3, True),
    (1.0, 2),
    (1, 2.0),
    (-(2**100) - 1, 37),
]


@pytest.mark.parametrize("op", [lshift, rshift], ids=lambda f: f.__name__)
@pytest.mark.parametrize("a, b", SHIFT_PAIRS, ids=repr)
def test_shift_matrix(op, a, b):
    check_t1(op, (a, b))


@pytest.mark.parametrize("a", [0, 1, -1, 2**63 - 1, 2**63, -(2**64), True, False, 1.5, "x", None], ids=repr)
def test_invert(a):
    check_t1(invert, a)


def bool_ops(a, b):
    return a & b, a | b, a ^ b, ~a, a << b, a >> b


def test_bool_stays_bool_for_logic_only():
    check_t1(bool_ops, (True, True), (True, False), (False, True), (False, False))


def iand(a, b):
    a &= b
    return a


def ior(a, b):
    a |= b
    return a


def ixor(a, b):
    a ^= b
    return a


def ilshift(a, b):
    a <<= b
    return a


def irshift(a, b):
    a >>= b
    return a


@pytest.mark.parametrize("op", [iand, ior, ixor, ilshift, irshift], ids=lambda f: f.__name__)
def test_augmented(op):
    check_t1(op, (-6, 3), (2**70 + 1, 5), (True, False), (3, -1), (1.5, 1))


def set_update_in_place(s, t):
    s |= t
    s &= {1, 2, 3, 4}
    s ^= {4}
    return s


def test_augmented_set_mutates_argument():
    check_t1(set_update_in_place, ({1, 9}, {2, 4}), ({1}, set()), (frozenset({1}), {4, 5}), ({1}, [2]))


# --- loops ---------------------------------------------------------------------------------------------


def popcount(x):
    count = 0
    while x:
        count += x & 1
        x >>= 1
    return count


def xorshift64(seed, n):
    x = seed
    out = 0
    for i in range(n):
        x ^= (x << 13) & 0xFFFFFFFFFFFFFFFF
        x ^= x >> 7
        x ^= (x << 17) & 0xFFFFFFFFFFFFFFFF
        out ^= x
    return x, out


def xorshift32(seed, n):
    x = seed
    out = 0
    for i in range(n):
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        out ^= x
    return x, out


def shift_up(n, x):
    for i in range(n):
        x <<= 1
    return x


def shift_by_countdown(n, k, x):
    for i in range(n):
        x = (x >> (k - i)) | (1 << i)
    return x


def reverse_bits(x, width):
    r = 0
    for i in range(width):
        r = (r << 1) | ((x >> i) & 1)
    return r


def masks(n):
    out = []
    for i in range(n):
        out.append(((1 << i) - 1) ^ ~i & -(1 << (i // 2)))
    return out


def test_popcount():
    check_t1(popcount, 0, 1, 255, 2**64 - 1, 2**100 + 2**63, True, native=True)


def test_xorshift_masks_to_64_bits():
    check_t1(xorshift64, (88172645463325252, 100), (1, 10), (2**64 - 1, 50))
    # within 64 bits throughout: compiled
    check_t1(xorshift32, (2463534242, 100), (1, 10), (2**32 - 1, 50), native=True)


def test_shifts_grow_past_64_bits():
    check_t1(shift_up, (70, 1), (130, -3), (64, 1), (10, True), (3, 1.5), native=True)


def test_negative_shift_count_after_iterations():
    check_t1(shift_by_countdown, (20, 10, 2**80), (5, 10, 12345), (12, 10, -1), native=True)


def test_reverse_bits_and_masks():
    check_t1(reverse_bits, (1, 8), (0b1011, 4), (2**63 + 1, 64), (2**64 - 2, 64), native=True)
    check_t1(masks, 0, 1, 70, native=True)
