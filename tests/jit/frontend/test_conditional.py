"""Conditional expressions and if/elif/else statements: branches taken, evaluation order and side effects,
conditions on any object."""

import pytest
from tier1_check import check_t1

NAN = float("nan")


def note(log, value):
    """Log that an operand was evaluated, and return it."""
    log.append(value)
    return value


class BoolRaises:
    def __bool__(self):
        raise RuntimeError("undecidable")


class Empty:
    def __len__(self):
        return 0


# --- conditional expressions -----------------------------------------------------------------------------


def pick(c, a, b):
    return a if c else b


def nested_pick(c1, c2, a, b, d):
    return a if c1 else b if c2 else d


def nested_in_test(c1, c2, a, b):
    return a if (c1 if c2 else not c1) else b


def pick_logged(log, c, a, b):
    return note(log, a) if note(log, c) else note(log, b)


CONDITIONS = [0, 1, -0.0, NAN, "", "0", [], [[]], None, Empty(), BoolRaises(), 2**64]


@pytest.mark.parametrize("c", CONDITIONS, ids=lambda v: type(v).__name__ + ":" + repr(v)[:12])
def test_condition_on_any_object(c):
    check_t1(pick, (c, "yes", "no"))
    check_t1(pick_logged, ([], c, "a", "b"))


@pytest.mark.parametrize("c1, c2", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_nested_conditional_expressions(c1, c2):
    check_t1(nested_pick, (c1, c2, "a", "b", "d"))
    check_t1(nested_in_test, (c1, c2, "a", "b"))


def untaken_branch_not_evaluated(x):
    return 1 // x if x else 0, (xs_missing if x is None else x)  # noqa: F821


def test_untaken_branch_not_evaluated():
    # the NameError only happens on the branch taken
    check_t1(untaken_branch_not_evaluated, 0, 4, 0.5, None)


def alternating_sum(n):
    total = 0
    for i in range(n):
        total += i if i % 2 else -i
    return total


def mixed_type_branches(n):
    x = 0
    for i in range(n):
        x = x + 1 if i % 3 else x * 0.5
    return x


def test_conditional_expressions_in_loops():
    check_t1(alternating_sum, 0, 1, 11, 100, native=True)
    check_t1(mixed_type_branches, 0, 1, 2, 3, 20, native=True)


# --- if / elif / else ---------------------------------------------------------------------------------------


def classify(x):
    if x < 0:
        kind = "negative"
    elif x == 0:
        kind = "zero"
    elif x < 10:
        kind = "small"
    elif x < 2**63:
        kind = "int64"
    else:
        kind = "big"
    return kind


@pytest.mark.parametrize("x", [-5, 0, 0.0, -0.0, 3, 9.99, 10, 2**63 - 1, 2**63, 2**64, float("inf"), NAN, "a"])
def test_classify(x):
    check_t1(classify, x)


def sign(x):
    if x > 0:
        return 1
    elif x < 0:
        return -1
    elif x == 0:
        return 0
    else:
        return None  # nan


def test_sign():
    check_t1(sign, 5, -5, 0, -0.0, NAN, 2**64, -(2**64), True, float("-inf"))


def elif_order(log, a, b, c):
    if note(log, a):
        return "a"
    elif note(log, b):
        return "b"
    elif note(log, c):
        return "c"
    return "none"


@pytest.mark.parametrize("abc", [(1, 1, 1), (0, 1, 1), (0, 0, 1), (0, 0, 0), ("", [0], None)], ids=repr)
def test_elif_evaluation_order(abc):
    check_t1(elif_order, ([], *abc))


def nested_ifs(a, b):
    out = []
    if a:
        if b:
            out.append("ab")
        else:
            out.append("a")
            if not b:
                pass
    else:
        if b:
            out.append("b")
        elif b is None:
            out.append("none")
    if a and b:
        out.append("and")
    if a or b:
        out.append("or")
    if not a and not b:
        out.append("neither")
    return out


@pytest.mark.parametrize("a, b", [(0, 0), (0, 1), (1, 0), (1, 1), (0, None), ([], "x")], ids=repr)
def test_nested_ifs(a, b):
    check_t1(nested_ifs, (a, b))


def if_raises(c):
    if c:
        return "yes"
    return "no"


def test_condition_raising():
    check_t1(if_raises, BoolRaises(), Empty(), [0])


def if_without_else(x):
    y = "unset"
    if x > 1:
        y = "set"
    return y


def if_unbound(flag):
    if flag:
        value = 1
    return value


def test_if_without_else_and_unbound():
    check_t1(if_without_else, 0, 2, 1.5)
    check_t1(if_unbound, True, False)


def fizzbuzz(n):
    out = []
    for i in range(1, n + 1):
        if i % 15 == 0:
            out.append("FizzBuzz")
        elif i % 3 == 0:
            out.append("Fizz")
        elif i % 5 == 0:
            out.append("Buzz")
        else:
            out.append(i)
    return out


def collatz_steps(n):
    steps = 0
    peak = n
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        if n > peak:
            peak = n
        steps += 1
    return steps, peak


def branchy_accumulate(xs):
    total = 0
    for x in xs:
        if x is None:
            continue
        if isinstance(x, str):
            total = str(total) + x
        elif x > 100:
            total += 0.5
        else:
            total += x
    return total


def branchy_numeric(xs):
    total = 0
    for x in xs:
        if x is None:
            continue
        if x > 100:
            total += 0.5
        elif x < 0:
            break
        else:
            total += x
    return total


def late_failure(n, k):
    total = 0
    for i in range(n):
        if i < k:
            total += i
        else:
            total += 1 // (i - i)
    return total


def test_if_statements_in_loops():
    check_t1(fizzbuzz, 0, 15, 31, native=True)
    check_t1(collatz_steps, 1, 6, 27, 2**64 + 1, 97, native=True)
    check_t1(branchy_accumulate, [], [1, 2, None, 200, 3], [1, "a", "b"], [1, "a", 3])
    check_t1(branchy_numeric, [], [1, 2, None, 200, 3] * 6, [5, None, 7.5, 300] * 8 + [-1, 4], native=True)
    check_t1(late_failure, (20, 15), (10, 15), (3, 0), native=True)


class CountingBool:
    """Truth value logged on each test."""

    def __init__(self, value, log):
        self.value = value
        self.log = log

    def __bool__(self):
        self.log.append(self.value)
        return self.value


def conditional_as_condition(c, a, b):
    out = []
    if (a and b) if c else (b or a):
        out.append("first")
    if not ((a or b) if c else (a and b)):
        out.append("second")
    while (a and b) if c else b:
        out.append("loop")
        break
    x = "t" if ((a and b) if c else a) else "f"
    out.append(x)
    return out


@pytest.mark.parametrize("c", [True, False])
@pytest.mark.parametrize("a, b", [(True, True), (True, False), (False, True), (False, False)])
def test_conditional_expression_as_condition_tests_once(c, a, b):
    log = []
    check_t1(conditional_as_condition, (CountingBool(c, log), CountingBool(a, log), CountingBool(b, log)))
