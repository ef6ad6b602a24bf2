"""`for i, x in enumerate(seq)` and `for x, y in zip(xs, ys)` over lists and tuples in native loops: native code
advances the enumerate, zip and list/tuple iterator objects themselves, so that code holding them afterwards
finds them where CPython leaves them. Differential against CPython, native through jit.stats."""

from __future__ import annotations

import sys

import pytest
from helpers import TEST_OPTIONS, check

import jit


def weighted(a):
    s = 0
    for i, x in enumerate(a):
        s += i * x
    return s


def numbered_from(a, start):
    last = None
    total = 0
    for i, x in enumerate(a, start):
        total += x
        last = i
    return last, total


def search(a, limit):
    for i, x in enumerate(a):
        if x > limit:
            return i
    return -1


def resumed(a):
    numbered = enumerate(a)
    s = 0
    for i, x in numbered:
        if x < 0:
            break
        s += i * x
    return s, next(numbered, None), list(numbered)


def growing(a):
    for i, x in enumerate(a):
        if i < 60 and x % 3 == 0:
            a.append(x + 1)
    return len(a)


def dot(xs, ys):
    s = 0.0
    for x, y in zip(xs, ys):
        s += x * y
    return s


def three(xs, ys, zs):
    s = 0
    for x, y, z in zip(xs, ys, zs):
        s += x * y - z
    return s


def rises(a):
    n = 0
    for x, y in zip(a, a[1:]):
        if y > x:
            n += 1
    return n


def consumed(a, b):
    first = iter(a)
    s = 0
    for x, y in zip(first, b):
        s += x * y
    return s, list(first)


def strict(a, b):
    s = 0
    for x, y in zip(a, b, strict=True):
        s += x - y
    return s


def grouped(a):
    it = iter(a)
    s = 0
    for x, y in zip(it, it):
        s += x - y
    return s


@pytest.mark.parametrize(
    "a",
    [list(range(50)), tuple(range(50)), [k * 0.5 for k in range(50)], [True, False, 3] * 15, list(range(40)) + [1.5]],
)
def test_enumerate(a):
    check(weighted, (a,), native=True)


@pytest.mark.parametrize("start", [0, 7, -20, 2**62, 2**63 - 30])
def test_enumerate_start(start):
    """A count about to pass 2**63 leaves native code, and CPython's enumerate goes on with int objects."""
    check(numbered_from, (list(range(50)), start), (tuple(range(60)), start), native=True)


def test_enumerate_count_past_64_bits_is_exact():
    check(numbered_from, (list(range(100)), 2**63 - 30))


def test_search_returns_from_the_loop():
    check(search, (list(range(100)), 70), (list(range(100)), 500), ([5.0] * 40 + [9.5], 8), native=True)


def test_the_enumerate_object_is_left_where_cpython_leaves_it():
    check(resumed, (list(range(40)) + [-1, 7, 8],), (tuple(range(45)) + (-3,),), (list(range(50)),), native=True)


def test_a_list_growing_while_enumerated():
    check(growing, (list(range(30)),), native=True)


@pytest.mark.parametrize(
    "xs, ys",
    [
        ([k * 0.25 for k in range(60)], [k * 1.5 for k in range(60)]),
        (tuple(range(60)), [k * 0.5 for k in range(50)]),
        ([k * 0.5 for k in range(40)], tuple(range(60))),
        ([1.0] * 40, [2.0] * 30 + [3]),
    ],
)
def test_zip(xs, ys):
    check(dot, (xs, ys), native=True)


def test_zip_of_three():
    check(three, (list(range(50)), tuple(range(60)), list(range(55))), native=True)


def test_zip_of_a_list_and_its_slice():
    check(rises, ([k % 7 for k in range(80)],), native=True)


def test_zip_advances_the_first_iterator_when_the_second_ends():
    """CPython takes an item of the first iterator before it finds the second exhausted: it is lost."""
    check(consumed, (list(range(50)), list(range(40))), (list(range(40)), list(range(40))), native=True)


def test_strict_zip():
    check(strict, (list(range(50)), list(range(50))), (list(range(50)), list(range(45))), native=True)


def test_the_same_iterator_twice_is_exact():
    check(grouped, (list(range(60)),), (list(range(61)),))


def test_reference_counts_stay_flat():
    a = list(range(100))
    b = [k * 0.5 for k in range(100)]
    f = jit.jit(**TEST_OPTIONS)(dot)
    g = jit.jit(**TEST_OPTIONS)(weighted)
    for _ in range(3):
        f(a, b)
        g(a)
    before = sys.getrefcount(a), sys.getrefcount(b), [sys.getrefcount(x) for x in b[:5]]
    for _ in range(200):
        f(a, b)
        g(a)
    assert (sys.getrefcount(a), sys.getrefcount(b), [sys.getrefcount(x) for x in b[:5]]) == before
    assert jit.stats(f)["native_entries"] > 0 and jit.stats(g)["native_entries"] > 0


def numbered_keys(d):
    s = 0
    for i, k in enumerate(d):
        s += i * d[k]
    return s


def test_other_iterators_run_through_the_generic_path():
    # (an enumerate of a dict's iterator: each next() is one PyIter_Next, jit.recorder.generic)
    d = {f"k{n}": n for n in range(40)}
    check(numbered_keys, (d,), native=True)
    jitted = jit.jit(**TEST_OPTIONS)(numbered_keys)
    jitted(d)
    assert "enumerate of other than list or tuple iterators" not in jit.explain(jitted)


# --- str, dict and set iterators: each item through the iterator's own tp_iternext ------------------------------


def vowels(text):
    n = 0
    for c in text:
        if c in "aeiouéà":
            n += 1
    return n


def char_counts(text):
    counts = {}
    for c in text:
        counts[c] = counts.get(c, 0) + 1
    return counts


def value_total(d):
    s = 0
    for v in d.values():
        s += v
    return s


def weighted_keys(d):
    s = 0
    for k in d:
        s += len(k) * d[k]
    return s


def long_key_total(d):
    s = 0.0
    for k, v in d.items():
        if len(k) > 2:
            s += v
    return s


def member_total(xs):
    s = 0
    for x in xs:
        s += x
    return s


def grows_while_iterated(d):
    n = 0
    for k in d:
        n += 1
        if n == 30:
            d[k + "!"] = 1
    return n


def set_grows(xs):
    n = 0
    for x in xs:
        n += 1
        if n == 30:
            xs.add(-1)
    return n


def rest_of_iterator(d):
    it = iter(d)
    s = 0
    for k in it:
        s += d[k]
        if s > 500:
            break
    return s, list(it)


def literal_dict_keys():
    n = 0
    for k in {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6}:
        n += len(k)
    return n


TEXT = "the quick brown fox jumps over the lazy dog, déjà vu " * 20
WORDS = {f"k{n}": n for n in range(200)}


def test_str():
    check(vowels, (TEXT,), ("",), ("x" * 100,), native=True)
    check(char_counts, (TEXT,), native=True)


def test_str_past_latin_1_is_exact():
    check(vowels, ("aé€" * 50,), ("🙂" * 40 + "ae",))


def test_dict_values_keys_and_items():
    check(value_total, (WORDS,), ({k: v * 0.5 for k, v in WORDS.items()},), native=True)
    check(weighted_keys, (WORDS,), native=True)
    check(long_key_total, ({k: v * 1.5 for k, v in WORDS.items()},), native=True)


def test_items_changing_type_midway():
    mixed = {**{f"k{n}": n for n in range(60)}, **{f"f{n}": n * 0.5 for n in range(60)}, "z": True}
    check(value_total, (mixed,), native=True)
    check(long_key_total, ({**{f"k{n}": n * 0.5 for n in range(60)}, **{n: 1.0 for n in range(40)}},))


def test_set():
    check(member_total, (set(range(300)),), (frozenset(range(100)),), native=True)


def test_a_dict_growing_while_iterated_raises_cpythons_error():
    check(grows_while_iterated, (dict(WORDS),), native=True)


def test_a_set_growing_while_iterated_raises_cpythons_error():
    check(set_grows, (set(range(100)),), native=True)


def test_the_iterator_is_left_where_cpython_leaves_it():
    check(rest_of_iterator, (WORDS,), native=True)


def test_a_dict_only_its_iterator_holds_is_exact():
    check(literal_dict_keys, (), (), ())


def test_reference_counts_of_iterated_items_stay_flat():
    import tracemalloc

    text = TEXT
    words = dict(WORDS)
    pairs = {k: v * 0.5 for k, v in WORDS.items()}
    f, g, h = (jit.jit(**TEST_OPTIONS)(fn) for fn in (vowels, weighted_keys, long_key_total))
    for _ in range(3):
        f(text), g(words), h(pairs)
    keys = list(words)[:5]
    before = [sys.getrefcount(x) for x in (text, words, pairs, *keys, *pairs.values())][:12]
    tracemalloc.start()
    for _ in range(300):
        f(text), g(words), h(pairs)
    first = tracemalloc.get_traced_memory()[0]
    for _ in range(300):
        f(text), g(words), h(pairs)
    grown = tracemalloc.get_traced_memory()[0] - first
    tracemalloc.stop()
    assert [sys.getrefcount(x) for x in (text, words, pairs, *keys, *pairs.values())][:12] == before
    assert grown < 20_000
    assert all(jit.stats(fn)["native_entries"] > 0 for fn in (f, g, h))


def test_iterator_layouts_not_checked_are_never_run_natively(monkeypatch):
    """Where the import-time check of the iterators' layouts failed, their guards always leave."""
    import codegen.abi

    monkeypatch.setattr(codegen.abi, "ITERATORS_OK", False)
    f = jit.jit(**TEST_OPTIONS)(weighted)
    g = jit.jit(**TEST_OPTIONS)(value_total)
    for _ in range(5):
        assert f(list(range(50))) == weighted(list(range(50)))
        assert g(WORDS) == value_total(WORDS)
    assert jit.stats(f)["native_iterations"] == jit.stats(g)["native_iterations"] == 0
    assert jit.stats(f)["traces_compiled"] > 0 and jit.stats(g)["traces_compiled"] > 0
