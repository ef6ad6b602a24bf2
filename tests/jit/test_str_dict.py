"""Strings and dicts in native loops (a first piece of issue 8 item 2): exact strs read from lists and dicts,
compared, measured; dicts with str keys read (`d[k]`, `d.get`, `in`), measured and written with numbers and
strs. Every result, exception and mutation is CPython's, and the loops run natively."""

from __future__ import annotations

import sys
import traceback
import tracemalloc

import pytest
from helpers import check, define

import jit as jit_module
from jit import jit

SOURCE = """
def count_words(words, n):
    counts = {}
    for i in range(n):
        word = words[(i * 7 + i // 3) % len(words)]
        counts[word] = counts.get(word, 0) + 1
    return counts


def lookups(table, keys):
    total = 0
    for key in keys:
        total += table[key]
    return total


def membership(table, keys):
    hits = 0
    misses = 0
    for key in keys:
        if key in table:
            hits += len(key)
        if key not in table:
            misses += 1
    return hits, misses, len(table)


def compare_strs(words, pivot):
    less = equal = greater = 0
    longest = 0
    for w in words:
        if w < pivot:
            less += 1
        elif w == pivot:
            equal += 1
        elif w != pivot and w > pivot:
            greater += 1
        if len(w) > longest:
            longest = len(w)
    return less, equal, greater, longest


def defaults(table, keys):
    total = 0.0
    for key in keys:
        total += table.get(key, 0.5)
        value = table.get(key)
        if value is None:
            total -= 1
    return total


def store_strs(keys):
    names = {}
    for key in keys:
        names[key] = key
    return names


def truth_and_substrings(words, table):
    found = 0
    empty = 0
    for w in words:
        if not w:
            empty += 1
        if "a" in w:
            found += 1
        if w not in "alphabet soup":
            found += 2
        if table:
            table[w] += 1
    return found, empty


def overwrite(table, keys):
    for key in keys:
        table[key] = 1.5
    return table
"""

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "ünï", "日本", ""]
TABLE = {w: i for i, w in enumerate(WORDS)}


def fn(name):
    return define(SOURCE, name)


@pytest.mark.parametrize(
    "name, calls",
    [
        ("count_words", [(WORDS, 0), (WORDS, 5), (WORDS, 500), (["x"], 300)]),
        ("lookups", [(TABLE, WORDS * 20), (TABLE, WORDS * 20 + ["missing"]), ({"a": 1.5, "b": 2}, ["a", "b"] * 50)]),
        ("membership", [(TABLE, WORDS * 10 + ["nope", "also"] * 10), ({}, ["a"] * 40)]),
        ("compare_strs", [(WORDS * 20, "delta"), (WORDS * 20, ""), (WORDS * 20, "日本"), (["b", "a", "c"] * 30, "b")]),
        ("defaults", [(TABLE, WORDS * 10 + ["gone"] * 20), ({"a": None, "b": 2.5}, ["a", "b", "c"] * 30)]),
        ("store_strs", [(WORDS * 20,)]),
        ("truth_and_substrings", [(WORDS * 20, dict.fromkeys(WORDS, 0)), (WORDS * 20, {})]),
        ("overwrite", [(dict(TABLE), WORDS * 20), ({"a": "str", "b": 1}, ["a", "b"] * 40)]),
    ],
)
def test_same_as_cpython_and_native(name, calls):
    jitted = check(fn(name), *calls, native=True)
    aborts = jit_module.stats(jitted)["aborts_by_code"]
    assert not {"LEN_OF", "OPERATOR", "ATTRIBUTE", "SUBSCRIPT"} & set(aborts), aborts


def test_a_missing_key_raises_cpythons_key_error():
    f = jit(threshold=2, side_exit_threshold=2)(fn("lookups"))
    f(TABLE, WORDS * 20)
    with pytest.raises(KeyError) as info:
        f(TABLE, WORDS * 20 + ["missing"])
    assert info.value.args == ("missing",)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert frames[-1].name == "lookups" and frames[-1].line == "total += table[key]"  # the line that failed
    assert jit_module.stats(f)["native_iterations"] > 0


def test_word_counts_keep_reference_counts_and_memory():
    f = jit(threshold=2, min_native_iterations=0)(fn("count_words"))
    words = [w + "!" for w in WORDS]  # new str objects, held by the list only
    f(words, 1000)
    before = [sys.getrefcount(w) for w in words]
    tracemalloc.start()
    f(words, 100_000)
    current, _ = tracemalloc.get_traced_memory()
    f(words, 100_000)
    grown, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    after = [sys.getrefcount(w) for w in words]  # (outside an assert: pytest's rewriting holds references)
    assert after == before
    assert grown - current < 10_000
    assert jit_module.stats(f)["native_iterations"] >= 200_000


BUMP = """
def bump(keys, table):
    for key in keys:
        seen = table.get(key, 0)
        table[key] = seen + 1
    return table


def reset(keys, table):
    for key in keys:
        table[key] = 0
    return table
"""


def test_a_store_over_an_entry_the_trace_read_skips_the_check():
    bump = define(BUMP, "bump")
    keys = ["a", "bb", "a", "c"] * 20
    check(bump, (keys, {}), (keys, {"a": 1.5, "c": True}), (keys, {"bb": 2**70}), native=True)
    jitted = jit(threshold=2, side_exit_threshold=2)(bump)
    jitted(keys, {})
    # (given the object read, which takes the new value where only the dict holds it: tests/jit/test_reuse_in_place)
    assert "_STORE_SUBSCR_DICT_STR_OVER_READ" in jit_module.dump(jitted, "uops")


def test_a_store_over_an_entry_not_read_checks_what_it_replaces():
    """The interpreter makes a store that would free an object whose finalizer could run Python code."""
    reset = define(BUMP, "reset")
    keys = ["a", "bb", "c"] * 20
    marker = [1, 2]
    check(reset, (keys, {}), (keys, {"a": 3, "bb": marker, "c": "s"}), native=True)
    jitted = jit(threshold=2, side_exit_threshold=2)(reset)
    table = {"bb": marker}
    jitted(keys, {})
    before = sys.getrefcount(marker)
    jitted(keys, table)
    assert sys.getrefcount(marker) == before - 1 and table == {"a": 0, "bb": 0, "c": 0}
    listing = jit_module.dump(jitted, "uops")
    assert "_STORE_SUBSCR_DICT_STR " in listing and "_OVER_NUMBER" not in listing
