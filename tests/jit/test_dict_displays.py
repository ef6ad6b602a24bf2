"""Dict displays whose keys are distinct str or int constants (`{"name": n, "age": a}`, ``_BUILD_MAP_CONST_KEYS``):
made with no barrier (hashing and comparing such keys is C code, and no value is replaced), an exact dict whose
entries later uops read natively. Other displays (a key computed, a constant key twice, keys equal across types)
stay the generic ``_BUILD_MAP``. Differential against CPython, native through jit.stats, references counted."""

from __future__ import annotations

import sys

from helpers import check

import jit as jit_module
from jit import jit

N = 300


def records(names, ages):
    out = []
    adults = 0
    for n, a in zip(names, ages):
        rec = {"name": n, "age": a, "adult": a >= 18, "score": a * 0.5, "tags": [n], "none": None}
        adults += rec["adult"]
        out.append(rec)
    return out, adults


def int_keys(n):
    total = 0
    for i in range(n):
        d = {0: i, 1: i * 2, -5: "x", 2**40: i % 3}
        total += d[0] + d[1] + d[2**40]
    return total


def duplicates(n):
    out = []
    for i in range(n):
        out.append({"a": 1, "b": i, "a": i * 3})  # noqa: F601  (the last value wins, as in CPython)
    return out[-1], len(out)


def across_types(n):
    out = []
    for i in range(n):
        out.append({1: "int", True: i, 2: "two", 2.0: i * 2})  # noqa: F601
    return out[-1]


def computed_keys(words):
    out = []
    for w in words:
        out.append({w: len(w), "fixed": w})
    return out


def _listing(jitted):
    return jit_module.dump(jitted, "uops") + jit_module.dump(jitted.cpython_baseline, "uops")


def test_records_are_built_natively():
    names = [f"n{i}" for i in range(N)]
    ages = [i % 90 for i in range(N)]
    jitted = check(records, (names, ages), (names[:3], ages[:3]), native=True)
    listing = _listing(jitted)
    assert "_BUILD_MAP_CONST_KEYS" in listing and "_BUILD_MAP " not in listing, listing


def test_int_keys():
    jitted = check(int_keys, 0, N, native=True)
    assert "_BUILD_MAP_CONST_KEYS" in _listing(jitted)


def test_a_key_given_twice_is_cpythons():
    jitted = check(duplicates, 0, N, native=True)
    listing = _listing(jitted)
    assert "_BUILD_MAP " in listing and "_BUILD_MAP_CONST_KEYS" not in listing, listing


def test_keys_equal_across_types_are_cpythons():
    jitted = check(across_types, 0, N, native=True)
    assert "_BUILD_MAP_CONST_KEYS" not in _listing(jitted)


def test_computed_keys_take_the_generic_display():
    jitted = check(computed_keys, ([f"w{i}" for i in range(N)],), native=True)
    assert "_BUILD_MAP " in _listing(jitted)


def test_no_reference_is_lost_or_leaked():
    names = [f"name-{i}" for i in range(N)]
    ages = [10**6 + i for i in range(N)]
    f = jit(threshold=2)(records)
    f(names, ages)
    before = [sys.getrefcount(x) for x in names + ages]
    for _ in range(3):
        out, _ = f(names, ages)
        assert out == records(names, ages)[0]
        del out
    assert [sys.getrefcount(x) for x in names + ages] == before
