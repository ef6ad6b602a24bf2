"""A comprehension inside a hot loop is an inner loop like any other: when the outer loop's recording reaches
it before it has a tree (CPython runs comprehensions itself, so they never get hot on their own), the monitor
lets it record first (``Monitor._record_inner_first``), then records the outer loop around a call of its tree;
its result leaves its hidden slot by LOAD_FAST_AND_CLEAR. Differential against CPython, native through
jit.stats, one entry and one exit per warm call."""

from __future__ import annotations

import pytest
from helpers import check, no_binding_waits

import jit


def scaled_rows(data, n):
    total = 0
    for i in range(n):
        row = [x * i for x in data]
        total += row[-1] + len(row)
    return total


def filtered_floats(data, n):
    total = 0.0
    for i in range(n):
        row = [x + i for x in data if x > 0]
        for v in row:
            total += v
    return total


def two_generators(data, n):
    count = 0
    for i in range(n):
        pairs = [x * y for x in data for y in data if x != y]
        count += len(pairs) + pairs[i % len(pairs)]
    return count


def operand_parked(data, n):
    out = []
    for i in range(n):
        out.append(i + len([x for x in data if x < i]))
    return out


def growing(data, n):
    total = 0
    for i in range(n):
        row = [x * (1 << i) for x in data]  # leaves 64 bits as i grows
        total += row[0] % 1000003
    return total


def kinds_change(data, n):
    total = 0.0
    for i in range(n):
        row = [x * 2 for x in data]
        total += row[-1]
        if i == n // 2:
            data = [float(x) for x in data]
    return total


def filtered_squares(n):
    """(The helper probes' comprehension_loop: 0.64x plain, then 6.8x.) The filter's side trace appends to the
    outer trace's list, which the comprehension's tree does not know: it exited at every append, and the outer
    trace called the tree again, a chain of calls that took a side exit for every other count of appends."""
    total = 0
    for i in range(n):
        sq = [j * j for j in range(i % 20)]
        ev = [v for v in sq if v % 2 == 0]
        total += len(ev) + (ev[-1] if ev else 0)
    return total


CASES = [
    (filtered_squares, [(3000,), (7,), (0,)]),
    (scaled_rows, [([1, 2, 3, 4, 5], 300), ([], 10), ([7], 0), ([2**62, -(2**62)], 40)]),
    (filtered_floats, [([1.5, -2.0, 3.0, -0.0, 0.25], 300), ([-1.0], 50)]),
    (two_generators, [([1, 2, 3, 4], 200)]),
    (operand_parked, [([5, 1, 9, 3, 200, 40], 300)]),
    (growing, [([3, -5, 7], 120)]),
    (kinds_change, [([1, 2, 3], 300)]),
]


@pytest.mark.parametrize("func, calls", CASES, ids=[func.__name__ for func, _ in CASES])
def test_same_as_cpython(func, calls):
    check(func, *calls, native=True)


@pytest.mark.parametrize(
    "func, args",
    [
        (filtered_squares, (3000,)),
        (scaled_rows, ([1, 2, 3, 4, 5], 2000)),
        (filtered_floats, ([1.5, -2.0, 3.0] * 3, 2000)),
        (two_generators, ([1, 2, 3, 4], 2000)),
    ],
)
def test_warm_call_stays_native(func, args, monkeypatch):
    """After warm-up a call enters native code once and leaves it once: the comprehension runs as the inner
    loop's tree, called from the outer loop's trace."""
    no_binding_waits(monkeypatch)
    jitted = jit.jit(func)
    expected = func(*args)
    for _ in range(3):
        assert jitted(*args) == expected
    before = jit.stats(jitted)
    assert jitted(*args) == expected
    after = jit.stats(jitted)
    assert after["native_entries"] - before["native_entries"] == 1
    assert after["exits_to_interpreter"] - before["exits_to_interpreter"] == 1
    lines = {tree["loop_line"] for tree in after["trees"]}
    assert len(lines) >= 2, after["trees"]  # the outer loop's tree and the comprehension's
    assert not any("is not compiled" in message for message in after["aborts"]), after["aborts"]


def unsupported_inside(data, n):
    total = 0
    for i in range(n):
        row = [x for x in {(v % 3, v) for v in data}]  # a set comprehension of tuples: SET_ADD is not compiled
        total += len(row) + i
    return total


def test_inner_loop_that_cannot_compile_does_not_hold_the_outer_forever():
    """The outer loop's aborts at such a comprehension count as failures once the inner loop has failed
    itself: the function returns CPython's result and the outer loop stops being recorded."""
    jitted = check(unsupported_inside, ([1, 2, 3, 4, 5, 6], 500), ([1], 500))
    stats = jit.stats(jitted)
    assert stats["aborts_total"] < 60, stats["aborts"]


class Key:
    """A key whose hash and equality are Python code (a dict comprehension's MAP_ADD runs them: a barrier)."""

    def __init__(self, v):
        self.v = v

    def __hash__(self):
        return hash(self.v % 4)

    def __eq__(self, other):
        return isinstance(other, Key) and self.v % 4 == other.v % 4


def dict_comprehensions(words, n):
    total = 0
    for i in range(n):
        lengths = {w: len(w) + i for w in words}
        squares = {k: k * k for k in range(i % 9)}
        total += lengths[words[i % len(words)]] + len(squares) + squares.get(3, -1)
    return total


def set_comprehensions(words, n):
    total = 0
    for i in range(n):
        residues = {k % 5 for k in range(i % 13)}
        initials = {w[0] for w in words}
        total += len(residues) + len(initials) + (2 in residues)
    return total


def keys_run_python(n):
    total = 0
    for i in range(n):
        d = {Key(k): k for k in range(i % 7)}
        total += len(d) + sum(d.values())
    return total


def unhashable_key(n, at):
    total = 0
    for i in range(n):
        d = {(k if i != at else [k]): k for k in range(3)}
        total += len(d)
    return total


@pytest.mark.parametrize(
    "func, calls",
    [
        (dict_comprehensions, [(["a", "bb", "ccc", "bb"], 2000), ([""], 50)]),
        (set_comprehensions, [(["apple", "avocado", "banana"], 2000), (["x"], 50)]),
        (keys_run_python, [(2000,)]),
        (unhashable_key, [(2000, 1500), (200, 5000)]),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_dict_and_set_comprehensions_in_a_loop_run_natively(func, calls):
    """MAP_ADD through PyObject_SetItem on the dict the comprehension builds (a barrier: the key's hash and
    equality may be Python code; an unhashable key raises CPython's TypeError at its line), SET_ADD of ints,
    floats, bools and strs through PySet_Add: NOT_COMPILED stopped the outer loop's recording before."""
    jitted = check(func, *calls, native=True)
    for variant in (jitted, jitted.cpython_baseline):
        assert not any("is not compiled" in message for message in jit.stats(variant)["aborts"])
