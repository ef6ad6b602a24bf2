"""Unpacking a list or tuple into names in a native loop (`for x, y in pairs`, `a, b = pair`): a guard on the
length (a wrong one leaves, and the interpreter raises CPython's ValueError), then the items as element reads.
Differential against CPython, native through jit.stats."""

from __future__ import annotations

import pytest
from helpers import check

import jit


def sum_pairs(pairs):
    total = 0.0
    for x, y in pairs:
        total += x * y
    return total


def triples(rows):
    best = 0
    for row in rows:
        a, b, c = row
        if a + b > c:
            best = max(best, a * b - c)
    return best


def nested_unpack(points):
    count = 0
    for p in points:
        (x, y), w = p
        count += (x - y) * w
    return count


def names_and_numbers(items):
    total = 0
    longest = 0
    for name, count in items:
        total += count
        longest = max(longest, len(name))
    return total, longest


@pytest.mark.parametrize(
    "pairs",
    [
        [(1.5, 2.0), (3.0, -1.0)] * 20,
        [[1, 2], [3, 4]] * 20,
        [(1, 2.5), (True, 3)] * 20,
        [(2**62, 3)] * 5 + [(1.0, 2.0)] * 20,
    ],
)
def test_pairs(pairs):
    check(sum_pairs, (pairs,), native=True)


def test_wrong_length_raises_cpythons_error():
    good = [(1, 2)] * 30
    check(sum_pairs, (good,), (good + [(1, 2, 3)],), (good + [(1,)],), (good + [[4, 5]],), native=True)


def test_not_a_sequence_raises_cpythons_error():
    check(sum_pairs, ([(1, 2)] * 30 + [5],), ([(1, 2)] * 30 + [{"a": 1, "b": 2}],), native=True)


def test_triples_and_lists():
    rows = [(k, k + 1, 2 * k - 3) for k in range(50)]
    check(triples, (rows,), ([list(r) for r in rows],), native=True)


def test_nested_unpacking():
    points = [((k, k * 2), k % 3) for k in range(40)]
    check(nested_unpack, (points,), native=True)


def test_strings_and_numbers():
    items = [("apple", 3), ("kiwi", 5), ("banana", 7)] * 15
    f = check(names_and_numbers, (items,), native=True)
    assert "UNPACK" not in str(jit.stats(f)["aborts_by_code"])
