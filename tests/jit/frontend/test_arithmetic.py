"""Arithmetic operators (+ - * / // % **) and their augmented forms, differentially against CPython."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tier1_check import check_t1

INF = float("inf")
NAN = float("nan")


def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b


def truediv(a, b):
    return a / b


def floordiv(a, b):
    return a // b


def mod(a, b):
    return a % b


def power(a, b):
    return a**b


BINARY = [add, sub, mul, truediv, floordiv, mod]

PAIRS = [
    (7, 3),
    (-7, 3),
    (7, -3),
    (-7, -3),
    (7.5, 2),
    (-7.5, 2.0),
    (7, -2.5),
    (-7.25, -0.5),
    (True, True),
    (True, False),
    (False, 3.5),
    (0, -1),
    (3, 0),
    (3.0, 0.0),
    (-0.0, 5),
    (0.0, -0.0),
    (2**63 - 1, 1),
    (2**64 - 1, 2**64 - 1),
    (-(2**63), 2**63 + 1),
    (10**50, 10**25 + 3),
    (10**400, 3),
    (2**1024, 1.5),
    (INF, 2),
    (-INF, INF),
    (NAN, 1.0),
    (-5, INF),
    (1e308, 1e308),
    (5e-324, -0.5),
]


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("a, b", PAIRS, ids=repr)
def test_binary_matrix(op, a, b):
    check_t1(op, (a, b), (b, a))


POWER_CASES = [
    (2, 10),
    (2, 63),
    (2, 64),
    (-2, 63),
    (3, 41),
    (2, -1),
    (-2, -3),
    (0, -1),
    (0.0, -1),
    (-0.0, -1),
    (0, 0),
    (-8, 1 / 3),
    (-8.0, 0.5),
    (-1, 0.5),
    (10.0, 400),
    (1e200, 2),
    (-0.0, 3),
    (NAN, 0),
    (1, NAN),
    (INF, -1),
    (True, True),
    (True, -1),
    (2.5, True),
    (10**20, 3),
    (-(2**63), 2),
    ("ab", 2),
]


@pytest.mark.parametrize("a, b", POWER_CASES, ids=repr)
def test_power(a, b):
    check_t1(power, (a, b))


# --- augmented assignment ----------------------------------------------------------------------------------


def iadd(a, b):
    a += b
    return a


def isub(a, b):
    a -= b
    return a


def imul(a, b):
    a *= b
    return a


def itruediv(a, b):
    a /= b
    return a


def ifloordiv(a, b):
    a //= b
    return a


def imod(a, b):
    a %= b
    return a


def ipow(a, b):
    a **= b
    return a


AUG_PAIRS = [(-7, 2), (7.5, -2), (2**63, 3), (True, True), (5, 0), (-0.0, 1.0)]


@pytest.mark.parametrize("op", [iadd, isub, imul, itruediv, ifloordiv, imod, ipow], ids=lambda f: f.__name__)
@pytest.mark.parametrize("a, b", AUG_PAIRS, ids=repr)
def test_augmented(op, a, b):
    check_t1(op, (a, b))


def extend_in_place(xs, ys):
    xs += ys
    xs *= 2
    return xs


def extend_copy(xs, ys):
    xs = xs + ys
    xs = xs * 2
    return xs


def test_augmented_mutates_list_argument():
    check_t1(extend_in_place, ([1, 2], [3]), ((1, 2), (3,)), ([], "ab"), ([1], 5))
    check_t1(extend_copy, ([1, 2], [3]), ((1, 2), (3,)), ([1], 5))


def augmented_subscript_and_attr(box, key, n):
    for i in range(n):
        box.items[key] += i
        box.total -= i * 0.5
    return box.items, box.total


class Box:
    def __init__(self, items, total):
        self.items = items
        self.total = total


def augmented_list_items(lst, key, n):
    for i in range(n):
        lst[key] += i
        lst[-1] -= i * 0.5
    return lst


def test_augmented_targets_in_loop():
    check_t1(augmented_subscript_and_attr, (Box({"k": 0}, 0), "k", 10), (Box([2**63, 1], 1), 0, 5))
    check_t1(augmented_subscript_and_attr, (Box({}, 0), "missing", 3))
    # list items of numbers compile (attributes and dicts do not)
    check_t1(
        augmented_list_items, ([0, 0.0], 0, 20), ([2**63 - 50, 1], 0, 20), ([1, 2], 5, 20), ([1.5], 0, 20), native=True
    )


# --- loops: overflow past 64 bits, type changes, late exceptions ---------------------------------------


def sum_squares(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def grow(n, start):
    x = start
    for i in range(n):
        x = x * 3 + i
    return x


def doubling(n, x):
    for i in range(n):
        x = x + x
    return x


@pytest.mark.parametrize(
    "func, calls",
    [
        (sum_squares, [0, 1, 10, 1000]),
        (grow, [(50, 1), (50, -1), (50, 1.0), (50, True), (10, 2**62)]),
        (doubling, [(70, 1), (70, -1), (64, 1), (1100, 1.0), (63, -1), (70, 0.5)]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_loops_grow_past_64_bits(func, calls):
    check_t1(func, *calls, native=True)


def halfway_float(n):
    total = 0
    for i in range(n):
        if i == n // 2:
            total += 0.5
        total += i
    return total


def int_then_true_division(n, x):
    for i in range(n):
        if i < 3:
            x = x // 2
        else:
            x = x / 2
    return x


def average_so_far(xs):
    total = 0
    mean = 0
    for i in range(len(xs)):
        total += xs[i]
        mean = total / (i + 1)
    return total, mean


def test_type_changes_mid_loop():
    check_t1(halfway_float, 0, 1, 2, 11, native=True)
    check_t1(int_then_true_division, (10, 1000), (2, 7), (10, -(2**70)), (10, 7.0), native=True)
    check_t1(average_so_far, [1, 2, 3], [1, 2.5, 3], [2**64, 2**64, 1], [True, True, False], [], native=True)


def countdown_floordiv(n, k):
    total = 0
    for i in range(n):
        total += 100 // (k - i)
    return total


def countdown_truediv(n, k):
    total = 0
    for i in range(n):
        total += 100 / (k - i)
    return total


def countdown_mod(n, k):
    total = 0
    for i in range(n):
        total += 1000 % (k - i)
    return total


@pytest.mark.parametrize("func", [countdown_floordiv, countdown_truediv, countdown_mod], ids=lambda f: f.__name__)
def test_zero_division_after_many_iterations(func):
    check_t1(func, (20, 10), (20, 10.0), (5, 10), (30, -5), (30, 25), native=True)


def repeated_square(n, x):
    for i in range(n):
        x = x**2
    return x


def repeated_product(n, x):
    for i in range(n):
        x = x * x
    return x


def test_float_overflow_in_loop():
    # ** overflows with OverflowError, * silently to inf; ints just grow
    check_t1(repeated_square, (12, 2.0), (12, 2), (12, 1.0001), (12, -0.5), (3, 10**30), native=True)
    check_t1(repeated_product, (12, 2.0), (12, -2.0), (12, 2), (12, 1e-200), native=True)


def floor_mod_table(n):
    out = []
    for a in range(-n, n):
        for b in (-3, -2, 2, 3):
            out.append((a // b, a % b, divmod(a, b)))
    return out


def float_floor_mod_table(n):
    out = []
    for a in range(-n, n):
        x = a + 0.5
        for b in (-2.5, -1.0, 1.0, 2.5):
            out.append((x // b, x % b))
    return out


def floor_mod_flat(n):
    out = []
    for a in range(-n, n):
        for b in (-3, -2, 2, 3):
            out.append(a // b)
            out.append(a % b)
    return out


def float_floor_mod_flat(n):
    out = []
    for a in range(-n, n):
        x = a + 0.5
        for b in (-2.5, -1.0, 1.0, 2.5):
            out.append(x // b)
            out.append(x % b)
    return out


def test_floor_and_mod_signs():
    check_t1(floor_mod_table, 0, 7)
    check_t1(float_floor_mod_table, 0, 6)
    # the same signs from compiled code (tuples and divmod are not compiled)
    check_t1(floor_mod_flat, 0, 7, 30, native=True)
    check_t1(float_floor_mod_flat, 0, 6, 30, native=True)


def bool_sum(xs):
    total = False
    for x in xs:
        total += x
    return total


def bool_arith(a, b):
    return a + b, a - b, a * b, a // b if b else -1, a % 3, a**b, -a + b


def test_bool_arithmetic_is_int():
    check_t1(bool_sum, [], [True], [True, True], [True, False, 2.5], [False], native=True)
    check_t1(bool_arith, (True, True), (False, True), (True, False), (False, False))


def constant_expressions():
    return (
        2**63 + 2**63,
        -(2**63) - 1,
        2**64 * 2**64,
        7 // -2,
        -7 % 3,
        2**-1,
        10 / 4,
        -7.5 // 2,
        0.1 + 0.2,
        1e308 * 10,
        -0.0 * 1,
    )


def test_constant_expressions():
    check_t1(constant_expressions, ())


def big_true_division(a, b):
    return a / b, b / a


def test_true_division_of_huge_ints():
    check_t1(
        big_true_division,
        (2**1100, 2**1000 + 1),
        (10**400, 10**399),
        (2**1100, 3),
        (1, 2**1100),
        (-(2**64) - 1, 2**64 + 1),
        (2**53 + 1, 1),
        (10**400, 10**100),
    )


def compound(a, b, c):
    return a * b + c - a / (b - c) + (a + b) ** 2 % (c or 1) // 3


def test_compound_precedence():
    check_t1(compound, (1, 2, 3), (1.5, -2, 7), (2**64, 3, 5), (0, 1, 1), (1, -1, -1), (True, 2, 0))


def mixed_accumulate(xs):
    total = 0
    product = 1
    for x in xs:
        total = total + x
        product = product * x
    return total, product


def test_mixed_accumulate():
    check_t1(
        mixed_accumulate,
        [1, 2, 3],
        [1, 2.0, 3],
        [2**40, 2**40, 2**40],
        [1, NAN, 3],
        [INF, -INF],
        [1, "a"],
        [1j, 2],
        native=True,
    )


def augmented_unbound(flag):
    if flag:
        total = 1
    total += 1
    return total


def augmented_missing_global():
    return undefined_total_name + 1  # noqa: F821


def test_augmented_unbound_and_missing_names():
    check_t1(augmented_unbound, True, False)
    check_t1(augmented_missing_global, ())


NUMBERS = st.one_of(
    st.integers(),
    st.integers(min_value=-(2**130), max_value=2**130),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.sampled_from([0, -1, 2**63, -(2**63), 2**64, 0.0, -0.0]),
)


@settings(max_examples=60, deadline=None)
@given(a=NUMBERS, b=NUMBERS)
def test_random_operands(a, b):
    for op in BINARY:
        check_t1(op, (a, b))
    if isinstance(b, float) or -64 <= b <= 64:
        check_t1(power, (a, b))
