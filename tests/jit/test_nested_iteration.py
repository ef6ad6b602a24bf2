"""Inner loops over iterators the outer loop makes (issue 8): `for k, v in d.items()`, `for i, x in
enumerate(row)`, `for a, b in zip(xs, ys)`, `for ch in s`, `for k in d`, `for x in a_set` inside a loop. The outer
trace makes the iterator (a new object it owns, in the inner loop's hidden iterator slot), hands it to the inner
tree with the buffer, and finishes it where the inner loop ends as CPython's FOR_ITER does; so a nest of two or
three levels runs with one native entry and at most two exits per warm call. Differential against CPython;
native through jit.stats (never timed); reference counts and memory checked over 100,000 inner iterations."""

from __future__ import annotations

import gc
import sys
import tracemalloc

import pytest
from helpers import check, no_binding_waits

import jit as jit_module
from jit import jit

# --- two levels ---------------------------------------------------------------------------------------------


def items_sum(ds):
    total = 0
    for d in ds:
        for k, v in d.items():
            total += v * len(k)
    return total


def values_sum(ds):
    total = 0.0
    for d in ds:
        for v in d.values():
            total += v
    return total


def keys_len(ds):
    n = 0
    for d in ds:
        for k in d:
            n += len(k)
    return n


def keys_method(ds):
    n = 0
    for d in ds:
        for k in d.keys():
            if k == "k3":
                n += 1
    return n


def numbered(rows):
    total = 0
    for row in rows:
        for i, x in enumerate(row):
            total += i * x
    return total


def numbered_from(rows, start):
    total = 0
    for row in rows:
        for i, x in enumerate(row, start):
            total += i - x
    return total


def zipped(pairs):
    total = 0.0
    for xs, ys in pairs:
        for a, b in zip(xs, ys):
            total += a * b
    return total


def zipped3(rows):
    total = 0
    for row in rows:
        for a, b, c in zip(row, row, row):
            total += a * b - c
    return total


def letters(words):
    n = 0
    for w in words:
        for ch in w:
            if ch == "a" or ch == "é":
                n += 1
    return n


def members(sets):
    total = 0
    for s in sets:
        for x in s:
            total += x
    return total


def dict_of_dicts(table):
    total = 0
    for name in table:
        for k, v in table[name].items():
            total += v
    return total


# --- breaks on some outer iterations --------------------------------------------------------------------------


def first_over(rows, limit):
    total = 0
    for row in rows:
        for i, x in enumerate(row):
            if x > limit:
                total += i
                break
            total += x
    return total


def first_pair(pairs, limit):
    total = 0
    for xs, ys in pairs:
        for a, b in zip(xs, ys):
            if a + b > limit:
                break
            total += a * b
    return total


def find_key(ds, wanted):
    hits = 0
    for d in ds:
        for k, v in d.items():
            if v == wanted:
                hits += len(k)
                break
    return hits


def first_vowel(words):
    total = 0
    for w in words:
        for ch in w:
            if ch in "aeiou":
                total += 1
                break
        else:
            total += 100
    return total


def returns_inside(rows, x):
    for row in rows:
        for i, y in enumerate(row):
            if y == x:
                return i
    return -1


# --- three levels ---------------------------------------------------------------------------------------------


def cube(grid):
    total = 0
    for plane in grid:
        for j, row in enumerate(plane):
            for i, x in enumerate(row):
                total += i * j * x
    return total


def nested_dicts(outer):
    total = 0
    for group in outer:
        for name, inner in group.items():
            for k, v in inner.items():
                total += v * len(name)
    return total


def words_of_lines(pages):
    n = 0
    for page in pages:
        for line in page:
            for ch in line:
                if ch == "e":
                    n += 1
    return n


def zipped_rows(pairs_of_grids):
    total = 0
    for a, b in pairs_of_grids:
        for ra, rb in zip(a, b):
            for x, y in zip(ra, rb):
                total += x * y
    return total


def three_with_break(grid, limit):
    total = 0
    for plane in grid:
        for row in plane:
            for i, x in enumerate(row):
                if x > limit:
                    break
                total += x
    return total


def mapping(k: int, n: int) -> dict:
    return {f"k{i}": i * (k + 1) for i in range(n)}


ROWS = [list(range(j, j + 30)) for j in range(40)]
DICTS = [mapping(j, 25) for j in range(40)]
CASES = [
    (items_sum, (DICTS,)),
    (values_sum, ([{f"v{i}": i * 0.5 + j for i in range(25)} for j in range(40)],)),
    (keys_len, (DICTS,)),
    (keys_method, (DICTS,)),
    (numbered, (ROWS,)),
    (numbered, ([tuple(r) for r in ROWS],)),
    (numbered_from, (ROWS, 7)),
    (numbered_from, (ROWS, -(2**40))),
    (zipped, ([([k * 0.5 for k in range(30)], [k + j for k in range(25 + j % 10)]) for j in range(40)],)),
    (zipped3, (ROWS,)),
    (letters, (["banana split " * 3 + str(j) for j in range(40)],)),
    (letters, (["café au lait " * 3 + str(j) for j in range(40)],)),
    (members, ([set(range(j, j + 30)) for j in range(40)],)),
    (members, ([frozenset(range(j, j + 30)) for j in range(40)],)),
    (dict_of_dicts, ({f"t{j}": mapping(j, 20) for j in range(40)},)),
    (first_over, (ROWS, 50)),
    (first_pair, ([(list(range(30)), list(range(j, j + 30))) for j in range(40)], 50)),
    (find_key, (DICTS, 40)),
    (first_vowel, ([("xyz" * (j % 7)) + ("a" if j % 2 else "") + "q" * 20 for j in range(40)],)),
    (returns_inside, (ROWS, 60)),
    (cube, ([[list(range(12)) for _ in range(8)] for _ in range(10)],)),
    (nested_dicts, ([{f"n{j}": mapping(j, 12) for j in range(6)} for _ in range(10)],)),
    (words_of_lines, ([["the quick brown fox" + "e" * j for j in range(8)] for _ in range(10)],)),
    (zipped_rows, ([([list(range(12))] * 8, [list(range(k, k + 12)) for k in range(8)]) for _ in range(10)],)),
    (three_with_break, ([[list(range(k, k + 20)) for k in range(8)] for _ in range(10)], 14)),
]
IDS = [f"{func.__name__}-{k}" for k, (func, _) in enumerate(CASES)]


# what warming up a nest may meet (recorded again at the next chance): no abort of what the loops do
WARM_UP = {"LOOP_ENDED", "INNER_FIRST", "INNER_BUSY", "INNER_COMPILING"}


def warm_call(f, args):
    before = jit_module.stats(f)
    result = f(*args)
    after = jit_module.stats(f)
    return (
        result,
        after["native_entries"] - before["native_entries"],
        after["exits_to_interpreter"] - before["exits_to_interpreter"],
    )


@pytest.mark.parametrize("func, args", CASES, ids=IDS)
def test_same_results_as_cpython(func, args):
    check(func, args, args, native=True)


@pytest.mark.parametrize("func, args", CASES, ids=IDS)
def test_a_warm_call_enters_native_code_once(func, args):
    f = jit(func)
    for _ in range(6):
        assert f(*args) == func(*args)
    result, entries, exits = warm_call(f, args)
    assert result == func(*args)
    assert entries == 1 and exits <= 2, jit_module.explain(f)
    aborts = set(jit_module.stats(f)["aborts_by_code"]) - WARM_UP
    assert not aborts, jit_module.stats(f)["aborts"]


def test_breaking_on_some_outer_iterations_stays_native():
    """Rows where the inner loop breaks and rows where it runs to its end, in every order: both ways after the
    inner tree's call are branches of the one outer tree."""
    rows = [list(range(30)) if j % 3 else list(range(j, j + 30)) for j in range(60)]
    f = jit(first_over)
    for limit in (20, 40, 70, 20):
        for _ in range(4):
            assert f(rows, limit) == first_over(rows, limit)
        result, entries, exits = warm_call(f, (rows, limit))
        assert result == first_over(rows, limit)
        assert entries == 1 and exits <= 2, jit_module.explain(f)


# --- containers changed while iterated ---------------------------------------------------------------------------


def grows(ds, at):
    total = 0
    for d in ds:
        for k, v in d.items():
            total += v
            if v == at:
                d["new"] = 1
    return total


def keys_change(ds, at):
    total = 0
    for d in ds:
        for k in d:
            total += d[k]
            if d[k] == at:
                d.pop("k0")
                d["zz"] = 5
    return total


def set_grows(ss, at):
    total = 0
    for s in ss:
        for x in s:
            total += x
            if x == at:
                s.add(-1)
    return total


def strict_zip(pairs):
    total = 0
    for xs, ys in pairs:
        for a, b in zip(xs, ys, strict=True):
            total += a * b
    return total


@pytest.mark.parametrize("at", [-5, 3 * 24, 30 * 24, 39 * 24])
def test_a_dict_growing_while_iterated_raises_as_in_cpython(at):
    check(grows, ([mapping(j, 25) for j in range(40)], at), native=True)


@pytest.mark.parametrize("at", [-5, 23, 20 * 24, 39 * 24])
def test_a_dict_whose_keys_change_raises_as_in_cpython(at):
    check(keys_change, ([mapping(j, 25) for j in range(40)], at), native=True)


@pytest.mark.parametrize("at", [-5, 10, 45])
def test_a_set_growing_while_iterated_raises_as_in_cpython(at):
    check(set_grows, ([set(range(j, j + 30)) for j in range(40)], at), native=True)


def test_a_strict_zip_raises_as_in_cpython():
    even = [(list(range(20)), list(range(20))) for _ in range(30)]
    check(strict_zip, (even,), (even + [(list(range(20)), list(range(19)))],))


# --- references -------------------------------------------------------------------------------------------------


LEAK_CASES = [
    (items_sum, lambda: ([mapping(j, 25) for j in range(40)],)),
    (numbered, lambda: ([list(range(j, j + 25)) for j in range(40)],)),
    (zipped, lambda: ([([k * 0.5 for k in range(25)], [float(k + j) for k in range(25)]) for j in range(40)],)),
    (letters, lambda: (["banana split " * 2 + str(j) for j in range(40)],)),
    (members, lambda: ([set(range(j, j + 25)) for j in range(40)],)),
    (first_over, lambda: ([list(range(j, j + 25)) for j in range(40)], 30)),
    (find_key, lambda: ([mapping(j, 25) for j in range(40)], 40)),
    (cube, lambda: ([[list(range(10)) for _ in range(10)] for _ in range(10)],)),
]


def _references(value):
    """The reference counts of value and of every container inside it (the objects the iterators hold)."""
    counts = []
    stack = [value]
    while stack:
        obj = stack.pop()
        counts.append(sys.getrefcount(obj))
        if isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(x for x in obj if isinstance(x, (list, tuple, dict, set, frozenset)))
        elif isinstance(obj, dict):
            stack.extend(x for x in obj.values() if isinstance(x, (list, tuple, dict, set, frozenset)))
    return counts


@pytest.mark.parametrize("func, make", LEAK_CASES, ids=[func.__name__ for func, _ in LEAK_CASES])
def test_no_reference_leaks(func, make):
    """100 warm calls of 1,000 inner iterations each: every container keeps its reference count, and memory
    does not grow (a leaked iterator would keep its container and itself: some 100 bytes per outer
    iteration)."""
    args = make()
    f = jit(func)
    for _ in range(6):
        f(*args)
    before = _references(args)
    gc.collect()
    tracemalloc.start()
    try:
        f(*args)
        start = tracemalloc.take_snapshot()
        entries = jit_module.stats(f)["native_entries"]
        for _ in range(100):
            f(*args)
        gc.collect()
        grown = sum(stat.size_diff for stat in tracemalloc.take_snapshot().compare_to(start, "filename"))
    finally:
        tracemalloc.stop()
    assert jit_module.stats(f)["native_entries"] - entries == 100
    assert _references(args) == before
    assert grown < 40 * 100, grown


# --- a variable an inner loop assigns, read by the outer loop after it -----------------------------------------


def last_built(n):
    out = 0
    for i in range(n):
        for j in range(3):
            row = [j, i]
        out += row[0] + row[1]
    return out


def last_built_sometimes(n):
    out = 0
    row = [0, 0]
    for i in range(n):
        for j in range(50):
            if j == i % 60:
                row = [j, i]
        out += row[0] + row[1]
    return out


def last_read(grid):
    out = 0
    for i in range(len(grid)):
        for j in range(len(grid)):
            row = grid[j]
        out += row[i]
    return out


@pytest.mark.parametrize("func", [last_built, last_built_sometimes])
def test_a_list_an_inner_loop_builds_and_the_outer_loop_reads(func, monkeypatch):
    """The inner tree's exit hands the list it built over with the buffer's reference, which the outer trace takes
    over where it reads the variable back (it once wrote the slot back at its next call without a reference,
    and the list was freed under it: a segfault)."""
    check(func, (300,), (5,), (0,), native=True)
    no_binding_waits(monkeypatch)
    f = jit(func)
    for _ in range(6):
        assert f(300) == func(300)
    result, entries, exits = warm_call(f, (300,))
    assert result == func(300)
    assert entries == 1 and exits <= 2, jit_module.explain(f)


def test_a_list_an_inner_loop_reads_from_another_stays_native():
    grid = [list(range(k, k + 40)) for k in range(40)]
    f = jit(last_read)
    for _ in range(6):
        assert f(grid) == last_read(grid)
    result, entries, exits = warm_call(f, (grid,))
    assert result == last_read(grid)
    assert entries == 1 and exits <= 2, jit_module.explain(f)


# --- ints past 64 bits ------------------------------------------------------------------------------------------


def hash_rows(rows):
    h = 0
    for row in rows:
        for x in row:
            h = h * 1_000_003 + x
    return h


def factorial_bytes(n):
    f = 1
    total = 0
    for i in range(1, n):
        f *= i
        for j in range(5):
            total += (f >> (j * 8)) & 255
    return total, f


def big_elements(rows):
    total = 0
    for row in rows:
        for x in row:
            total += x
    return total


def powers(n, m):
    total = 0
    for i in range(n):
        total += (i - 7) ** m
    return total


def overflow_and_back(n):
    h = 1
    out = 0
    for i in range(n):
        for j in range(4):
            h = h * 3 + j
            if h > 2**80:
                h = h % 1000
        out += h & 7
    return out, h


def compares(rows, limit):
    hits = 0
    for row in rows:
        for x in row:
            if x > limit or x == 2**70 or -x >= limit:
                hits += 1
    return hits


BIG_ROWS = [[2**70 + k, k, 2**65 - k, -(2**64) * k] * 5 for k in range(30)]
ALL_BIG = [[2**70 + k, 2**65 - k, -(2**64) * (k + 1)] * 10 for k in range(40)]
# whose variables keep one kind each all along (elements all past 64 bits, or all within): one tree per loop
BIG_NATIVE = [
    (hash_rows, ([list(range(j, j + 20)) for j in range(30)],)),
    (factorial_bytes, (300,)),
    (big_elements, (ALL_BIG,)),
    (big_elements, ([[k, 2**63 - 1, 2**62] * 10 for k in range(40)],)),
    (powers, (300, 40)),
    (overflow_and_back, (300,)),
    (compares, (ALL_BIG, 2**66)),
    (compares, (ALL_BIG, -5)),
]
BIG_CASES = [
    *BIG_NATIVE,
    (factorial_bytes, (60,)),
    (big_elements, (BIG_ROWS,)),
    (powers, (300, 3)),
    (compares, (BIG_ROWS, 2**66)),
    (compares, (BIG_ROWS, 5)),
]
BIG_IDS = [f"{func.__name__}-{k}" for k, (func, _) in enumerate(BIG_CASES)]


@pytest.mark.parametrize("func, args", BIG_CASES, ids=BIG_IDS)
def test_ints_past_64_bits_same_results_as_cpython(func, args):
    check(func, args, args, native=True)


@pytest.mark.parametrize("func, args", BIG_NATIVE, ids=BIG_IDS[: len(BIG_NATIVE)])
def test_ints_past_64_bits_in_nests_enter_native_code_once(func, args, monkeypatch):
    """An int object in an inner loop's variables (read, assigned, or both: the outer trace hands its reference
    over and takes back what the inner tree wrote), read from a list, compared, raised to a power: no abort,
    one native entry and at most two exits per warm call (warm: the exit where a variable leaves 64 bits taken
    side_exit_threshold times, so that it grew its side trace into the tree of the other kind)."""
    no_binding_waits(monkeypatch)
    f = jit(func)
    for _ in range(20):
        assert f(*args) == func(*args)
    result, entries, exits = warm_call(f, args)
    assert result == func(*args)
    assert entries == 1 and exits <= 2, jit_module.explain(f)
    aborts = set(jit_module.stats(f)["aborts_by_code"]) - WARM_UP
    assert not aborts, jit_module.stats(f)["aborts"]


def test_a_negative_exponent_leaves_for_the_interpreter():
    def mixed(n):
        total = 0.0
        big = 2**70
        for i in range(n):
            total += big ** (i % 3 - 1)
        return total

    check(mixed, (0,), (50,))


@pytest.mark.parametrize(
    "func, make",
    [
        (hash_rows, lambda: ([list(range(j, j + 25)) for j in range(40)],)),
        (factorial_bytes, lambda: (300,)),
        (big_elements, lambda: ([[2**70 + k, 2**65 - k, -(2**64) * (k + 1)] * 8 for k in range(40)],)),
        (overflow_and_back, lambda: (250,)),
        (last_built, lambda: (300,)),
    ],
    ids=["hash_rows", "factorial_bytes", "big_elements", "overflow_and_back", "last_built"],
)
def test_int_objects_and_lists_across_inner_loops_leak_nothing(func, make, monkeypatch):
    no_binding_waits(monkeypatch)
    args = make()
    f = jit(func)
    for _ in range(20):
        f(*args)
    before = _references(args)
    gc.collect()
    tracemalloc.start()
    try:
        f(*args)
        start = tracemalloc.take_snapshot()
        entries = jit_module.stats(f)["native_entries"]
        for _ in range(100):
            f(*args)
        gc.collect()
        grown = sum(stat.size_diff for stat in tracemalloc.take_snapshot().compare_to(start, "filename"))
    finally:
        tracemalloc.stop()
    assert jit_module.stats(f)["native_entries"] - entries == 100
    assert _references(args) == before
    assert grown < 40 * 100, grown
