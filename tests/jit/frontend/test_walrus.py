"""Differential tests of assignment expressions (`:=`): in conditions, loop tests, expressions, comprehensions
(where the target is the enclosing function's local), with their evaluation order, unbound targets and
native execution of loops that use them."""

import pytest
from helpers import Args
from tier1_check import check_t1 as check

import jit as jit_module
from jit import jit


def in_while_test(n):
    total = 0
    i = 0
    while (i := i + 1) < n:
        if (sq := i * i) % 3 == 0:
            total += sq
    return total, i


def in_expression(n):
    s = 0
    for i in range(n):
        s += (k := i % 5) * k + k
    return s, k


def float_target(n):
    acc = 0.0
    for i in range(n):
        if (half := i / 2) > 3.5:
            acc += half
    return acc, half


def in_comprehension(data):
    out = [y for x in data if (y := x * 2) > 3]
    return out, y


def comprehension_leaves_it_unbound(data):
    out = [x for x in data if (y := x) > 100]
    return out, y  # UnboundLocalError when no element was > 100... or y's last value


def nested_comprehension(rows):
    flat = [[last := v for v in row] for row in rows]
    return flat, last


def in_dict_comprehension(keys):
    d = {k: (seen := k * 3) for k in keys}
    return d, seen


def evaluation_order(items):
    log = []
    result = [(log.append(i), (v := i + 1), v * 2) for i in items]
    return result, log, v


def chained(n):
    a = b = 0
    for i in range(n):
        a = (b := i + 1) + b
    return a, b


def in_condition_and_call(words):
    found = []
    for w in words:
        if (n := len(w)) > 3:
            found.append((w, n))
    return found


def overflowing(n):
    x = 1
    for _ in range(n):
        if (x := x * 3) > 2**70:
            break
    return x


@pytest.mark.parametrize(
    "func, calls",
    [
        (in_while_test, [1, 2, 100, 1000]),
        (in_expression, [1, 7, 500]),
        (float_target, [3, 10, 300]),
        (in_comprehension, [[1, 2, 3], [5]]),
        (comprehension_leaves_it_unbound, [[], [1, 200], [300]]),
        (nested_comprehension, [[[1, 2], [3]], [[4]]]),
        (in_dict_comprehension, [[1, 2, 3]]),
        (evaluation_order, [[1, 2, 3]]),
        (chained, [0, 1, 50]),
        (in_condition_and_call, [["a", "abcd", "xyzzy"], []]),
        (overflowing, [10, 200]),
    ],
)
def test_same_as_cpython(func, calls):
    check(func, *[Args(c) for c in calls])


def test_loops_with_a_walrus_run_natively():
    for func, arg in ((in_while_test, 1000), (in_expression, 500), (float_target, 300)):
        jitted = check(func, Args(arg), native=True)
        stats = jit_module.stats(jitted.cpython_baseline)
        assert stats["native_entries"] >= 1, (func.__name__, stats)


def test_explain_no_longer_refuses_it():
    jitted = jit(in_expression)
    jitted(3)
    text = jit_module.explain(jitted)
    assert ":=" not in text and "runs as plain CPython" not in text
