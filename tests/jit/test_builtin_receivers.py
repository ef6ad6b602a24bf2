"""Ordinary code on builtin types, without a side trace or a lookup per call: `d.get(k, 0)` of numbers is one
value whichever way the lookup goes (``_UNBOX_INT_OR_DEFAULT``), a method of an exact str, list, dict, tuple,
int or float is called through the descriptor found when recorded (``_CALL_METHOD_DESCRIPTOR``), and a slice
of constant bounds is made once. Each checked against CPython (results with types, exceptions, mutations) and
through jit.stats that the loop ran natively."""

from __future__ import annotations

import sys

import pytest
from helpers import check

import jit as jit_module
from jit import jit


def word_totals(text):
    counts = {}
    for w in text.split():
        key = w.upper()[:3]
        counts[key] = counts.get(key, 0) + len(w)
    return counts


def float_totals(keys, weights):
    sums = {}
    for i, k in enumerate(keys):
        sums[k] = sums.get(k, 0.5) + weights[i % len(weights)]
    return sums


def mixed_values(d, keys):
    total = 0
    for k in keys:
        total += d.get(k, 7)
    return total


def held_counter(keys):
    counts = {}
    held = []
    for k in keys:
        counts[k] = counts.get(k, 0) + 1
        held.append(counts[k])  # (each count object also held by the list: never changed in place)
    return counts, held


TEXT = " ".join(f"w{i % 97}x" for i in range(3000))


def _no_side_traces(jitted):
    for f in (jitted, jitted.cpython_baseline):
        stats = jit_module.stats(f)
        assert stats["native_iterations"] > 0 and stats["side_traces"] == 0, stats


def test_a_word_count_runs_as_one_trace_found_or_missing():
    jitted = check(word_totals, (TEXT,), ("a bb a ccc " * 400,), native=True)
    _no_side_traces(jitted)
    listing = jit_module.dump(jitted, "uops")
    assert "_UNBOX_INT_OR_DEFAULT" in listing and "_GUARD_MISSING" not in listing and "_GUARD_FOUND" not in listing


def test_float_defaults():
    keys = [f"k{i % 13}" for i in range(2000)]
    check(float_totals, (keys, [0.1, -2.5, 1e300, 3.0]), (keys, [float("nan"), 0.0]), native=True)


@pytest.mark.parametrize(
    "values",
    [
        {"a": 1, "b": 2},
        {"a": 1, "b": 2.5},  # (a float where the default is an int: the interpreter reads it)
        {"a": 1, "b": 2**70},  # (past 64 bits)
        {"a": 1, "b": True},  # (a bool is not an int here: CPython adds True)
        {"a": -(2**63), "b": 2**63 - 1},
    ],
    ids=["ints", "a float", "a big int", "a bool", "the int64 bounds"],
)
def test_values_of_another_type_leave_the_trace(values):
    keys = (["a", "zz", "b", "a"] * 300) + ["b"]
    check(mixed_values, (values, keys), native=True)


def test_a_missing_key_then_an_overflowing_default_sum():
    d = {"a": 2**63 - 1}
    check(mixed_values, (d, ["zz"] * 500 + ["a"]), native=True)


def test_counts_held_elsewhere_are_not_changed_in_place():
    keys = [f"k{i % 5}" for i in range(3000)]
    jitted = check(held_counter, (keys,), native=True)
    counts, held = jitted(keys)
    assert held[-5:] == [600] * 5 and counts == {f"k{i}": 600 for i in range(5)}


def string_methods(words):
    out = []
    for w in words:
        out.append(w.upper().replace("A", "4").center(9, "*") + str(w.startswith("b")))
        out.append(",".join([w, w.lower()]).split(sep=",", maxsplit=1)[-1])
    return out


def list_dict_number_methods(n):
    items = [3, 1, 2]
    d = {"a": 1}
    acc = 0
    for i in range(n):
        items.append(i % 5)
        acc += items.index(i % 5) + items.count(2) + (i * 7).bit_length() + int((i % 3 == 0).bit_length())
        acc += d.setdefault("k" + str(i % 4), i) + len(d.keys()) + (2.5 * i).is_integer()
        if len(items) > 20:
            items.pop(0)
    return acc, items, d


def index_errors(words, probe):
    hits = 0
    for w in words:
        hits += w.index(probe)  # (ValueError where it is missing, CPython's message)
    return hits


def test_methods_of_builtin_receivers_are_their_descriptors():
    words = ["apple", "banana", "cherry", "blue", "Aa"] * 60
    # (str's methods run no Python code on these arguments: no barrier, jit.recorder.pure_methods)
    cases = (
        (string_methods, (words,), "_CALL_METHOD_PURE"),
        (list_dict_number_methods, (400,), "_CALL_METHOD_DESCRIPTOR"),
    )
    for func, args, uop in cases:
        jitted = check(func, args, native=True)
        listing = jit_module.dump(jitted.cpython_baseline, "uops")
        assert uop in listing and "_CALL_METHOD_GENERIC" not in listing, listing


def test_a_method_raising_in_the_loop_raises_as_cpython():
    words = ["abc", "bcd"] * 200 + ["xyz"]
    jitted = check(index_errors, (words, "b"), native=True)
    with pytest.raises(ValueError, match="substring not found"):
        jitted(words, "b")


class Text(str):
    def upper(self):
        return "overridden"


def uppers(words):
    out = []
    for w in words:
        out.append(w.upper())
    return out


def test_a_str_subclass_is_not_called_with_str_method():
    words = ["ab"] * 300 + [Text("cd")] + ["ef"] * 300
    check(uppers, (words,), native=True)


def slices(words, items):
    out = []
    for i, w in enumerate(words):
        out.append(w[:3] + w[1:-1] + w[::2] + w[-2:])
        out.append(items[1:3])
        out.append(items[::-1][: i % 3])
    return out


def test_constant_slices():
    words = ["alpha", "be", "", "gamma delta"] * 100
    jitted = check(slices, (words, (1, 2, 3, 4)), (words, [5, 6]), native=True)
    listing = jit_module.dump(jitted.cpython_baseline, "uops")
    assert "slice(None, 3, None)" in listing and "_BUILD_SLICE" in listing  # (i % 3: a slice made per use)


def test_no_reference_is_leaked_by_descriptor_calls():
    f = jit(threshold=2, min_native_iterations=0)(uppers)
    word = "leak-check"
    words = [word] * 1000
    f(words)
    before = sys.getrefcount(word)
    f(words)
    assert sys.getrefcount(word) == before
    assert jit_module.stats(f)["native_iterations"] >= 1000
