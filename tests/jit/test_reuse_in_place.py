"""A number stored over an int or float object that only the list or dict holds (reference count 1) is written
into that object instead of a new one (``codegen.lower.objects._reusable``): nothing else can see the old
object, so the program cannot tell. Never where anything else holds it (another list, a variable of the
interpreter's, a copy of the dict), nor for the ints CPython shares (-5..256: the very cached objects must be
stored), nor for ints past one 30-bit digit. Differential against CPython (values, types, arguments after),
native through jit.stats."""

from __future__ import annotations

import sys

import pytest
from helpers import check

import jit


def bump_list(a, step, rounds):
    for _ in range(rounds):
        for i in range(len(a)):
            a[i] = a[i] + step
    return a[0]


def scale_list(a, factor, rounds):
    for _ in range(rounds):
        for i in range(len(a)):
            a[i] = a[i] * factor
    return a[-1]


def count_words(words, counts, rounds):
    for _ in range(rounds):
        for w in words:
            counts[w] = counts.get(w, 0) + 1
    return len(counts)


def add_to_dict(counts, keys, step):
    for k in keys:
        counts[k] += step
    return len(counts)


def halve_dict(values, keys):
    for k in keys:
        values[k] = values[k] * 0.5
    return len(values)


BIG = [10**6 + k for k in range(50)]


@pytest.mark.parametrize(
    "items, step",
    [
        (BIG, 3),
        ([-(10**6) - k for k in range(50)], -7),
        ([300 + k for k in range(50)], -1),  # down into the cache: those must be CPython's own objects
        ([2**30 - 40 + k for k in range(50)], 1),  # up past one digit
        ([-(2**30) + 40 - k for k in range(50)], -1),
        ([2**40 + k for k in range(50)], -(2**39)),  # from two digits to one
        (list(range(-300, 300, 12)), 5),
        ([True, False, 2**35, 7.5, 1000] * 10, 1),
    ],
)
def test_list_items_updated(items, step):
    check(bump_list, (list(items), step, 3), native=True)


@pytest.mark.parametrize("factor", [0.5, -1.0, 0.0, -0.0, float("inf"), float("nan"), 3])
def test_float_items_scaled(factor):
    check(scale_list, ([k / 7 + 0.25 for k in range(60)], factor, 3), native=True)
    check(scale_list, ([float(k) for k in range(-30, 30)], factor, 2), native=True)


def test_items_held_elsewhere_keep_their_values():
    """A copy of the list (the same objects) and a variable of the caller's: their objects must not change."""
    f = jit.jit(threshold=2, side_exit_threshold=2)(bump_list)
    a = [10**6 + k for k in range(200)] + [k / 3 + 1000.5 for k in range(100)]
    copy = list(a)
    first, last = a[0], a[-1]
    f(a, 1, 5)
    assert copy == [10**6 + k for k in range(200)] + [k / 3 + 1000.5 for k in range(100)]
    assert first == 10**6 and last == 99 / 3 + 1000.5
    assert a == [x + 5 for x in copy]
    assert jit.stats(f)["native_entries"] > 0


def test_small_results_are_the_cached_objects():
    f = jit.jit(threshold=2)(bump_list)
    a = [1000 + k for k in range(300)]
    f(a, -800, 1)
    assert jit.stats(f)["native_entries"] > 0
    assert all(a[k] is 200 + k for k in range(57))  # (200..256: CPython's cache)
    assert a[57] == 257


@pytest.mark.parametrize("rounds", [1, 40, 400])
def test_word_counts_in_a_dict(rounds):
    words = ["alpha", "beta", "gamma", "alpha", "delta", "beta", "alpha"] * 30
    check(
        count_words, (words, {}, rounds), (words, {"beta": 2**62}, rounds), (words, {"beta": 1.5}, rounds), native=True
    )


def test_a_copy_of_the_dict_keeps_its_values():
    f = jit.jit(threshold=2, side_exit_threshold=2)(count_words)
    words = [f"w{k % 13}" for k in range(500)]
    counts = {f"w{k}": 10**6 + k for k in range(13)}
    copy = dict(counts)
    held = counts["w3"]
    f(words, counts, 3)
    assert copy == {f"w{k}": 10**6 + k for k in range(13)} and held == 10**6 + 3
    assert counts == {w: v + words.count(w) * 3 for w, v in copy.items()}
    assert jit.stats(f)["native_entries"] > 0


def test_augmented_assignment_on_a_dict():
    keys = [f"k{k % 9}" for k in range(400)]
    check(add_to_dict, ({f"k{k}": 10**5 * k for k in range(9)}, keys, 7), native=True)
    check(add_to_dict, ({f"k{k}": -300 for k in range(9)}, keys, 1), native=True)
    check(halve_dict, ({f"k{k}": 1.5e300 * k for k in range(9)}, keys), native=True)


def test_reference_counts_stay_exact():
    f = jit.jit(threshold=2, side_exit_threshold=2)(bump_list)
    a = [10**6 + k for k in range(100)]
    shared = a[10]
    before = sys.getrefcount(shared)
    f(a, 1, 10)
    assert sys.getrefcount(shared) == before - 1 and shared == 10**6 + 10  # (a dropped it: the new item is another)
    assert [sys.getrefcount(x) for x in a] == [sys.getrefcount(x) for x in [10**6 + 10 + k for k in range(100)]]
    assert jit.stats(f)["native_entries"] > 0


def test_the_objects_are_reused_where_ints_have_the_layout_of_3_11():
    """(The optimization itself: the items keep their identity through native updates.)"""
    from codegen import abi

    if not (abi.SMALL_INTS_OK and abi.SMALL_INT_STRIDE):
        pytest.skip("ints of another layout are always boxed anew")
    f = jit.jit(threshold=2)(bump_list)
    a = [10**6 + k for k in range(300)] + [k + 0.5 for k in range(300)]
    ids = [id(x) for x in a]
    f(a, 1, 4)
    assert jit.stats(f)["native_entries"] > 0
    kept = sum(id(x) == i for x, i in zip(a, ids))
    assert kept > 500, kept  # (the first iterations run in the interpreter before the loop compiles)
    g = jit.jit(threshold=2)(count_words)
    counts = {f"w{k}": 10**6 for k in range(5)}
    words = [f"w{k % 5}" for k in range(500)]
    g(words, counts, 2)  # (recorded and compiled: the interpreter made some of the objects)
    ids = {k: id(v) for k, v in counts.items()}
    entries = jit.stats(g)["native_entries"]
    g(words, counts, 2)
    assert jit.stats(g)["native_entries"] > entries
    assert all(id(v) == ids[k] for k, v in counts.items()) and set(counts.values()) == {10**6 + 400}


def read_then_append(counts, keys, out):
    for k in keys:
        v = counts[k]
        counts[k] = v + 1000
        out.append(v)
    return len(out)


def into_another_key(counts, keys):
    for k in keys:
        counts["total"] = counts[k] + counts["total"]
    return counts["total"]


def test_a_value_read_stays_its_old_self_after_the_store():
    """v is the object read; the store writes over that object only where the dict alone holds it: v's
    number, appended after, is what was read."""
    keys = [f"k{k % 5}" for k in range(300)]
    check(read_then_append, ({f"k{k}": 10**6 * (k + 1) for k in range(5)}, keys, []), native=True)
    check(read_then_append, ({f"k{k}": k + 0.5 for k in range(5)}, keys, [1.5]), native=True)


def test_a_store_to_another_key_than_the_one_read():
    keys = [f"k{k % 5}" for k in range(300)]
    check(into_another_key, ({**{f"k{k}": 10**6 + k for k in range(5)}, "total": 10**6}, keys), native=True)


def pair_up(keys, vals):
    d = {}
    for k, v in zip(keys, vals):
        d[k] = v
    return [d[k] is v for k, v in zip(keys, vals)].count(True), len(d)


def pair_up_replacing(keys, vals, d):
    for i in range(len(keys)):
        d[keys[i]] = vals[i]
    return [d[k] is v for k, v in zip(keys, vals)].count(True)


def test_a_number_read_from_a_list_is_stored_in_a_dict_as_itself():
    """`d[k] = v` of an int or float read from a list stores that very object, as CPython does (the store takes
    its own reference before it drops what it replaces), not a new one: the identity test shows it, and no
    object is made per store."""
    keys = [f"k{i}" for i in range(300)]
    vals = [10**6 + i for i in range(150)] + [i * 0.5 for i in range(150)]
    check(pair_up, (keys, vals), native=True)
    check(pair_up_replacing, (keys, vals, {k: 1.5 for k in keys[::2]}), native=True)
    before = [sys.getrefcount(v) for v in vals]
    jitted = jit.jit(threshold=2)(pair_up)
    assert jitted(keys, vals) == (300, 300)
    assert [sys.getrefcount(v) for v in vals] == before


def mark_seen(words, seen):
    for w in words:
        seen[w] = True
        seen["last"] = w
    return list(seen.items())


def test_storing_the_object_an_entry_holds_changes_nothing():
    """`seen[w] = True` over an entry holding True already: nothing to write (CPython's insertdict writes nothing
    then either); other entries, new keys and other values as CPython leaves them."""
    words = [f"w{i % 40}" for i in range(400)]
    check(
        mark_seen, (words, {}), (words, dict.fromkeys(words[:20], True)), (words, dict.fromkeys(words, 1)), native=True
    )
