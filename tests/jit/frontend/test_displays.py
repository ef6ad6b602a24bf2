"""Differential tests of list/tuple/dict/set displays."""

import pytest
from helpers import Args
from tier1_check import check_t1 as check


def lists(a, b):
    return [], [a], [a, b, a + b], [[a], [b, [a]]], [a, b][1]


def tuples(a, b):
    return (), (a,), (a, b), ((a, b), (b,)), (1, 2, 3), (1, (2, 3)), (a, b)[0]


def dicts(a, b):
    return {}, {a: b}, {a: b, b: a}, {"x": [a], "y": {"z": b}}, {(a, b): 1}


def sets(a, b):
    return {a}, {a, b}, {a, b, a}, {(a, b)}


def dict_duplicate_keys(a, b):
    return {a: 1, b: 2, a: 3}, {1: "int", 1.0: "float", True: "bool"}, {"k": 1, "k": 2}  # noqa: F601, F602


def set_equal_elements(n):
    s1 = {1, 1.0}
    s2 = {1.0, 1}
    s3 = {True, 1, 1.0}
    s4 = {0, False, 0.0, -0.0}
    return [type(x).__name__ for x in s1], [type(x).__name__ for x in s2], [repr(x) for x in s3], [repr(x) for x in s4]


def dict_key_first_type(n):
    d = {1: "a", 1.0: "b"}  # noqa: F601
    return [(repr(k), v) for k, v in d.items()]


def displays_in_loop(n):
    out = []
    for i in range(n):
        out.append([i, (i, i * 2), {i: i}, {i % 3}])
    return out


def display_evaluation_order(log):
    def_ = [note(log, 1), note(log, 2)], {note(log, "k1"): note(log, "v1"), note(log, "k2"): note(log, "v2")}
    s = {note(log, "s1"), note(log, "s2")}
    return def_, s, log


def note(log, value):
    log.append(value)
    return value


def unhashable_in_set(x):
    return {1, x}


def unhashable_dict_key(x):
    return {x: 1}


def error_inside_display(x):
    return [1, 2, x + 1, 4]


def display_identity(n):
    a = [n]
    b = [n]
    t = (n, n)
    return a is b, a == b, type(t), len({n: n, -n: -n})


def constant_tuple_shared(n):
    out = []
    for _ in range(n):
        out.append((1, 2, 3))
    out[0] = out[0] + (4,)  # a constant tuple is immutable: the others are unchanged
    return out


def nested_mutation(n):
    rows = [[0, 0], [0, 0]]
    rows[0][1] = n
    pair = ([], [])
    pair[1].append(n)
    return rows, pair


@pytest.mark.parametrize(
    "func, calls",
    [
        (lists, [(1, 2), ("a", "b")]),
        (tuples, [(1, 2), (None, 2.5)]),
        (dicts, [(1, 2), ("a", "a")]),
        (sets, [(1, 2), (1, 1), (1, True)]),
        (dict_duplicate_keys, [(1, 2), (1, 1), (1.0, True)]),
        (set_equal_elements, [0]),
        (dict_key_first_type, [0]),
        (displays_in_loop, [0, 12]),
        (display_evaluation_order, [Args([])]),
        (unhashable_in_set, [[1], {}, 2]),
        (unhashable_dict_key, [[1], {1}, "ok"]),
        (error_inside_display, [1, "s"]),
        (display_identity, [3]),
        (constant_tuple_shared, [11]),
        (nested_mutation, [5]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_displays(func, calls):
    # building a display is not compiled; a loop over a constant tuple is
    check(func, *calls, native=True if func is constant_tuple_shared else None)
