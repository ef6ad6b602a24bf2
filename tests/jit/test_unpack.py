"""Unpacking into names in a native loop (`for x, y in pairs`, `a, b = pair`): a list, a tuple or a tuple subclass
iterated as one (a namedtuple) by a guard on the length (a wrong one leaves, and the interpreter raises CPython's
ValueError), then the items as element reads; anything else (a str, a generator, a set, a user's sequence) by
CPython's own unpacking, called (jit.recorder.unpacking). Differential against CPython, native through jit.stats,
reference counts over many iterations."""

from __future__ import annotations

import collections
import sys
import traceback

import pytest
from helpers import check, warm_call

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


# --- tuple subclasses: a namedtuple unpacks as a tuple ---------------------------------------------------------

Point = collections.namedtuple("Point", "x y")
Point3 = collections.namedtuple("Point3", "x y z")
Single = collections.namedtuple("Single", "x")


def products(pts, n):
    t = 0
    for i in range(n):
        x, y = pts[i % 50]
        t += x * y
    return t


def sum_points(pts):
    total = 0.0
    for x, y in pts:
        total += x - y
    return total


def weighted(items):
    total = 0
    for (x, y), w in items:
        total += (x - y) * w
    return total


def warm(func, *args):
    f = jit.jit(threshold=2, side_exit_threshold=2, min_native_iterations=0)(func)
    for _ in range(6):
        assert f(*args) == func(*args)
    return f


def test_a_namedtuple_unpacks_natively():
    pts = [Point(i, i + 1) for i in range(50)]
    f = check(products, (pts, 1000), native=True)
    assert jit.stats(f)["aborts_by_code"] == {}
    assert "_GUARD_CLASS_VERSION" in jit.dump(f, "uops")  # (its __iter__ could be assigned: hoisted)
    assert "_CALL_GENERIC" not in jit.dump(f, "uops")
    f = warm(products, pts, 1000)
    _, entries, exits = warm_call(f, pts, 1000)
    assert entries == 1 and exits <= 2


@pytest.mark.parametrize(
    "pts",
    [
        [Point(1.5, 2.0), Point(3.0, -1.0)] * 20,
        [Point(1, 2), (3, 4), [5, 6]] * 15,  # (three kinds at one site: a side trace each)
        [Point(2**70, 3)] * 5 + [Point(1.0, 2.0)] * 20,
        [Point(1, 2)] * 30 + [Point3(1, 2, 3)],  # too many values
        [Point(1, 2)] * 30 + [Single(1)],  # not enough
        [Point(1, 2)] * 30 + [Point("a", "b")],  # a TypeError further on
    ],
)
def test_namedtuples_like_cpython(pts):
    check(sum_points, (pts,), native=True)


def test_nested_namedtuples():
    items = [(Point(k, 2 * k), k % 3) for k in range(40)]
    check(weighted, (items,), native=True)


def test_wrong_lengths_raise_cpythons_messages():
    for bad, message in (
        (Point3(1, 2, 3), "too many values to unpack (expected 2)"),
        (Single(1), "not enough values to unpack (expected 2, got 1)"),
    ):
        pts = [Point(k, k) for k in range(30)] + [bad]
        f = check(sum_points, (pts,), native=True)
        with pytest.raises(ValueError) as caught:
            f(pts)
        assert str(caught.value) == message


class Reversed(tuple):
    """A tuple subclass with an __iter__ of its own: unpacked as CPython does, calling it."""

    def __iter__(self):
        return iter(tuple(reversed(self)))


class Plain(tuple):
    pass


def test_a_tuple_subclass_with_its_own_iter_is_unpacked_generically():
    pts = [Reversed((k, 2 * k)) for k in range(40)]
    f = check(sum_points, (pts,), native=True)
    assert jit.stats(f)["aborts_by_code"] == {}
    assert "_CALL_GENERIC" in jit.dump(f, "uops")


def test_a_tuple_subclass_whose_iter_is_assigned_between_calls():
    pts = [Plain((k, 2 * k)) for k in range(40)]
    f = warm(sum_points, pts)
    assert "_GUARD_CLASS_VERSION" in jit.dump(f, "uops")
    try:
        Plain.__iter__ = lambda self: iter(tuple(reversed(self)))
        assert f(pts) == sum_points(pts) == sum(k for k in range(40))
    finally:
        del Plain.__iter__
    assert f(pts) == sum_points(pts) == -sum(k for k in range(40))


class Flipper:
    """Assigns __iter__ to Plain when called (Python code the loop runs: a barrier)."""

    def __call__(self, k):
        if k == 20:
            Plain.__iter__ = lambda self: iter(tuple(reversed(self)))
        return k


def flipped_in_the_loop(pts, flip):
    total = 0
    for k in range(len(pts)):
        flip(k)
        x, y = pts[k]
        total += x - y
    return total


def test_a_tuple_subclass_whose_iter_is_assigned_in_the_loop():
    pts = [Plain((k, 2 * k)) for k in range(40)]
    plain = flipped_in_the_loop(pts, Flipper())
    del Plain.__iter__
    f = jit.jit(threshold=2)(flipped_in_the_loop)
    for _ in range(3):
        try:
            assert f(pts, Flipper()) == plain
        finally:
            del Plain.__iter__
    assert jit.stats(f)["native_entries"] > 0


def many_classes(rows):
    total = 0
    for row in rows:
        a, b = row
        total += a * b
    return total


def test_a_site_of_many_tuple_classes_unpacks_generically():
    classes = [collections.namedtuple(f"P{k}", "a b") for k in range(6)]
    rows = [classes[k % 6](k, k + 1) for k in range(60)]
    check(many_classes, (rows,), native=True)


# --- anything else: CPython's own unpacking, called -------------------------------------------------------------


def pairs_of(rows):
    count = 0
    for row in rows:
        a, b = row
        count += a == b
    return count


class Sequence:
    """The old iteration protocol: __getitem__ until IndexError."""

    def __init__(self, *items):
        self.items = items

    def __getitem__(self, k):
        return self.items[k]


class Failing:
    def __iter__(self):
        raise KeyError("no iteration today")


@pytest.mark.parametrize(
    "rows",
    [
        ["ab", "cc", "x\u20acz"[:2], "\u20ac\u20ac"] * 10,
        ["ab"] * 30 + ["abc"],  # too many values
        ["ab"] * 30 + ["a"],  # not enough
        [{1, 2}, {3, 4}, frozenset({5, 6})] * 10,
        [range(k, k + 2) for k in range(30)],
        [dict.fromkeys((k, -k - 1)) for k in range(30)],  # (its keys)
        [Sequence(k, k % 2) for k in range(30)] + [Sequence(1)],
        [Sequence(k, "x") for k in range(30)] + [Sequence(1, 2, 3)],
        [Reversed((k, 2)) for k in range(30)] + [Failing()],
    ],
)
def test_other_iterables_like_cpython(rows):
    f = check(pairs_of, (rows,), native=True)
    assert set(jit.stats(f)["aborts_by_code"]) <= {"EXCEPTION_RAISED"}


def from_maps(rows):
    total = 0
    for row in rows:
        a, b = map(abs, row)
        total += a * b
    return total


def test_a_map_unpacked_in_the_loop():
    # the recording sees 2 items; where a row has 3, native code raises CPython's ValueError (the map object is
    # only unpacked: no guard on its length)
    rows = [(k, -k) for k in range(40)]
    longer = rows[:35] + [(1, 2, 3)] + rows[35:]
    f = check(from_maps, (rows,), (longer,), (rows[:35] + [(1,)],), native=True)
    assert "_CALL_GENERIC" in jit.dump(f, "uops")
    assert set(jit.stats(f)["aborts_by_code"]) <= {"EXCEPTION_RAISED"}


def test_the_traceback_of_an_error_in_a_generic_unpacking_is_cpythons():
    rows = [Reversed((k, 2)) for k in range(30)] + [Failing()]
    f = warm(pairs_of, rows[:30])
    for func in (pairs_of, f):
        with pytest.raises(KeyError) as caught:
            func(rows)
        frames = [(frame.name, frame.line) for frame in traceback.extract_tb(caught.value.__traceback__)]
        if func is pairs_of:
            expected = frames
    assert (
        frames[-2:]
        == expected[-2:]
        == [("pairs_of", "a, b = row"), ("__iter__", 'raise KeyError("no iteration today")')]
    )


def unpack_kept(rows):
    firsts = []
    for row in rows:
        a, b = row
        firsts.append(a)
    return len(firsts)


@pytest.mark.parametrize("make", [lambda a, b: Point(a, b), lambda a, b: Sequence(a, b), lambda a, b: Reversed((a, b))])
def test_no_reference_leaks_over_100000_iterations(make):
    values = ["".join(["v", str(k)]) for k in range(4)]
    rows = [make(values[k % 4], values[(k + 1) % 4]) for k in range(1000)]
    f = jit.jit(threshold=2, min_native_iterations=0)(unpack_kept)
    f(rows)
    before = [sys.getrefcount(v) for v in values]
    for _ in range(100):
        f(rows)
    assert [sys.getrefcount(v) for v in values] == before
    assert jit.stats(f)["native_iterations"] > 90_000
