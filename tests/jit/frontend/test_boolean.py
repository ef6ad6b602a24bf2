"""Boolean operators: `and`/`or` return an operand, short-circuit, `not`, and the truth of many kinds of
objects (including __bool__/__len__ that misbehave)."""

import decimal
import fractions

import pytest
from tier1_check import check_t1

NAN = float("nan")


def note(log, value):
    """Log that an operand was evaluated, and return it."""
    log.append(value)
    return value


def and2(a, b):
    return a and b


def or2(a, b):
    return a or b


def and_or(a, b):
    return (a and b or a) or (b or a and b)


def not_(a, b):
    return not a, not not b, not (a and b), not a or b


OPERANDS = [
    (0, 5),
    (3, 5),
    (3, 0.0),
    ("", "x"),
    ("0", ""),
    ([], [1]),
    ([0], None),
    (0.0, -0.0),
    (NAN, 0),
    (None, False),
    (0j, 2**64),
    ((), {}),
]


@pytest.mark.parametrize("func", [and2, or2, and_or, not_], ids=lambda f: f.__name__)
@pytest.mark.parametrize("a, b", OPERANDS, ids=repr)
def test_operands_returned(func, a, b):
    check_t1(func, (a, b), (b, a))


# --- short-circuit ---------------------------------------------------------------------------------------


def and_log(log, a, b, c):
    return note(log, a) and note(log, b) and note(log, c)


def or_log(log, a, b, c):
    return note(log, a) or note(log, b) or note(log, c)


def mixed_log(log, a, b, c):
    return note(log, a) and note(log, b) or note(log, c)


def if_and_or_log(log, a, b, c):
    if note(log, a) and (note(log, b) or note(log, c)):
        return "taken"
    if not (note(log, a) or note(log, b)) and note(log, c):
        return "second"
    return "none"


TRIPLES = [(0, 1, 2), (1, 0, 2), (1, 2, 0), (1, 2, 3), (0, 0, 0), ("", [], "c"), ([1], "", None)]


@pytest.mark.parametrize("func", [and_log, or_log, mixed_log, if_and_or_log], ids=lambda f: f.__name__)
@pytest.mark.parametrize("abc", TRIPLES, ids=repr)
def test_short_circuit_skips_side_effects(func, abc):
    check_t1(func, ([], *abc))


def guarded_division(x):
    return x != 0 and 10 // x > 1, x == 0 or 10 % x


def first_or_default(xs):
    return xs and xs[0], xs or "empty"


def test_short_circuit_avoids_errors():
    check_t1(guarded_division, 0, 3, 20, -4, 0.0)
    check_t1(first_or_default, [], [7, 8], "", "ab", ())


def find_first(data, target):
    i = 0
    while i < len(data) and data[i] != target:
        i += 1
    return i


def count_flags(xs):
    count = 0
    for x in xs:
        if x and x % 2 or x is None:
            count += 1
        elif not x:
            count -= 10
    return count


def test_boolean_conditions_in_loops():
    check_t1(find_first, ([1, 2, 3], 3), ([1, 2, 3], 9), ([], 1), (list(range(30)), 25), ("abc", "b"), native=True)
    check_t1(count_flags, [], [1, 2, 3, None, 0, 0.0], list(range(20)), [2**64 + 1, -1.5, 2.5], [1, "a"], native=True)


# --- truthiness of many types ----------------------------------------------------------------------------


class Empty:
    def __len__(self):
        return 0


class Falsy:
    def __bool__(self):
        return False


class BoolRaises:
    def __bool__(self):
        raise ZeroDivisionError("no truth here")


class BoolReturnsInt:
    def __bool__(self):
        return 1


class LenNegative:
    def __len__(self):
        return -1


class LenHuge:
    def __len__(self):
        return 2**70


class LenFloat:
    def __len__(self):
        return 1.0


class BoolAndLen:
    def __bool__(self):
        return True

    def __len__(self):
        return 0


class Plain:
    pass


def truth(x):
    if x:
        return "T"
    return "F"


def truth_everywhere(x):
    return (not x, x and 1, x or 1, 1 if x else 0, truth(x))


TRUTH_VALUES = [
    0,
    1,
    -1,
    2**64,
    0.0,
    -0.0,
    NAN,
    0j,
    1j,
    "",
    "0",
    b"",
    bytearray(b"x"),
    [],
    [0],
    (),
    (0,),
    {},
    {0: 0},
    set(),
    frozenset({0}),
    range(0),
    range(1),
    None,
    True,
    False,
    fractions.Fraction(0, 3),
    decimal.Decimal("-0"),
    decimal.Decimal("0E-5"),
    Empty(),
    Falsy(),
    BoolAndLen(),
    Plain(),
    BoolRaises(),
    BoolReturnsInt(),
    LenNegative(),
    LenHuge(),
    LenFloat(),
]


@pytest.mark.parametrize("x", TRUTH_VALUES, ids=lambda v: type(v).__name__ + ":" + repr(v)[:20])
def test_truthiness(x):
    check_t1(truth_everywhere, x)


class CountingBool:
    """Truth value logged on each test."""

    def __init__(self, value, log):
        self.value = value
        self.log = log

    def __bool__(self):
        self.log.append(self.value)
        return self.value


def truth_tests(a, b):
    out = []
    if a and b:
        out.append(1)
    if a or b:
        out.append(2)
    if not a:
        out.append(3)
    x = a and b
    y = a or b
    out.append(x is a)
    out.append(y is a)
    while a and not b:
        break
    return out


@pytest.mark.parametrize("a, b", [(True, True), (True, False), (False, True), (False, False)])
def test_each_operand_tested_once(a, b):
    log = []
    check_t1(truth_tests, (CountingBool(a, log), CountingBool(b, log)))
