"""Loops storing other objects than numbers into module globals (`global last; last = "x"`, `cache = []`): a str
over a number, None or a str is stored natively (``_STORE_GLOBAL``, no Python code runs); anything else, or a store
over anything else, is a barrier (``_STORE_GLOBAL_GENERIC``: freeing what it replaces may run a finalizer, after
which the hoisted guards are checked again). Differential against CPython through both baselines (``check``; each
function resets the globals it stores, so that every run starts alike), native through jit.stats (a warm call
enters native code once and leaves at most twice), finalizers run where CPython runs them, reference counts."""

from __future__ import annotations

import sys

import pytest
from helpers import check, define, warm_call

import jit as jit_module
from jit import jit

MODULE = """
last = None
cache = []
word = ""
best = None
table = {}
holder = None
mixed = 0
log = []


def alternate(n):
    global last
    last = None
    for i in range(n):
        last = "x" if i % 2 else "y"
    return last


def rebuilt(n):
    global cache
    cache = []
    for i in range(n):
        if i % 100 == 0:
            cache = []
        cache.append(i)
    return len(cache), cache[:3]


def read_back(n):
    global word
    word = ""
    t = 0
    for i in range(n):
        word = "ab" if i % 3 else "c"
        t += len(word)
    return t, word


def pairs(n):
    global best
    best = None
    for i in range(n):
        if best is None or i % 7 == 3:
            best = (i, i * 2)
    return best


def tables(n):
    global table
    table = {}
    t = 0
    for i in range(n):
        if i % 10 == 0:
            table = {"k": i}
        t += table["k"]
    return t


class Box:
    def __init__(self, v):
        self.v = v


def boxes(n, items):
    global holder
    holder = None
    t = 0
    for i in range(n):
        holder = items[i % 3]
        t += holder.v
    result = holder
    holder = None
    return t, result.v


def reader():
    return word


def read_by_a_call(n, words):
    global word
    word = ""
    t = 0
    for i in range(n):
        word = words[i % 3]
        t += len(reader())
    return t


def str_then_number(n):
    global mixed
    mixed = 0
    t = 0
    for i in range(n):
        x = mixed + 1
        mixed = "tmp"
        t += len(mixed)
        mixed = x
    return t, mixed


def sometimes_a_str(n):
    global mixed
    mixed = 0
    t = 0
    for i in range(n):
        if i % 5 == 0:
            mixed = "s"
        else:
            mixed = i
        t += 1 if mixed == "s" else mixed
    return t


def kept_then_rebound(n, words):
    global word
    word = words[0] + "!"
    out = []
    for i in range(n):
        s = word
        word = words[i % 3] + "?"
        out.append(s + ".")
    return out


def rebound_by_an_inner_loop(n, m, words):
    global word
    word = "start"
    out = []
    for i in range(n):
        s = word
        for j in range(m):
            word = words[(i + j) % 3] + "!"
        out.append(s + "?")
        out.append(len(s))
    return out


class Noisy:
    def __init__(self, k):
        self.k = k

    def __del__(self):
        log.append(self.k)


def make(k):
    return [Noisy(k)]


def finalizers(n):
    global holder, log
    log = []
    holder = None
    t = 0
    for i in range(n):
        holder = make(i)  # (the list it replaces frees its Noisy: its __del__ runs here, as under CPython)
        t += len(log)
    holder = None
    return t, log[:5], len(log)
"""


def module():
    namespace: dict = {}
    define(MODULE, "alternate", namespace)
    return namespace


WORDS = ["alpha", "beta", "gamma"]


@pytest.mark.parametrize(
    "name, calls",
    [
        ("alternate", [0, 3, 500]),
        ("rebuilt", [5, 1000]),
        ("read_back", [2, 300]),
        ("pairs", [3, 300]),
        ("tables", [4, 300]),
        ("read_by_a_call", [(3, WORDS), (200, WORDS)]),
        ("str_then_number", [3, 300]),
        ("sometimes_a_str", [3, 300]),
        ("kept_then_rebound", [(3, WORDS), (300, WORDS)]),
        ("rebound_by_an_inner_loop", [(3, 20, WORDS), (200, 20, WORDS), (200, 1, WORDS)]),
    ],
)
def test_object_stores_run_natively_like_cpython(name, calls):
    jitted = check(module()[name], *calls, native=True)
    for variant in (jitted, jitted.cpython_baseline):
        stats = jit_module.stats(variant)
        # (a retry: the loop ended while recorded, or a number guard the loop's own store of a str would fail)
        assert set(stats["aborts_by_code"]) <= {"LOOP_ENDED", "GLOBAL_NOT_NUMBER"}, stats["aborts"]
        assert stats["native_iterations"] > 100


def test_instances_stored_into_a_global():
    ns = module()
    items = [ns["Box"](k) for k in range(3)]
    plain = ns["boxes"](300, items)
    jitted = jit(threshold=2)(ns["boxes"])
    for _ in range(3):
        assert jitted(300, items) == plain
    assert jit_module.stats(jitted)["native_iterations"] > 500
    assert jit_module.stats(jitted)["aborts_by_code"] == {}


@pytest.mark.parametrize("name, args", [("alternate", (1000,)), ("rebuilt", (1000,)), ("read_back", (1000,))])
def test_a_warm_call_enters_native_code_once(name, args):
    ns = module()
    plain = ns[name]
    jitted = jit(threshold=2, side_exit_threshold=2, min_native_iterations=0)(plain)
    for _ in range(6):
        assert jitted(*args) == plain(*args)
    result, entries, exits = warm_call(jitted, *args)
    assert result == plain(*args)
    assert entries == 1 and exits <= 2
    stats = jit_module.stats(jitted)
    assert stats["aborts_by_code"] == {} and stats["invalidated_trees"] == 0


def test_which_store_is_a_barrier():
    ns = module()
    for name, args in (("alternate", (100,)), ("rebuilt", (1000,))):
        jitted = jit(threshold=2, side_exit_threshold=2)(ns[name])
        jitted(*args)
        listing = jit_module.dump(jitted, "uops")
        if name == "alternate":  # (a str over a str: no Python code runs)
            assert "_STORE_GLOBAL ('y'" in listing and "_STORE_GLOBAL_GENERIC" not in listing
        else:  # (a list over a list: a barrier, after which the loop reads what the dict holds)
            assert "_STORE_GLOBAL_GENERIC" in listing and "_CHECK_BARRIER" in listing


def test_a_number_guard_the_loop_would_fail_is_recorded_again_without_it():
    jitted = check(module()["str_then_number"], 300, native=True)
    assert "storing a str into the global mixed, which the trace guarded to hold a number" in jit_module.explain(jitted)
    assert "_GUARD_GLOBAL_NUMBER" not in jit_module.dump(jitted, "uops")


def test_finalizers_of_what_a_store_replaces_run_where_cpython_runs_them():
    ns = module()
    plain = ns["finalizers"](200)
    assert plain[1] == [0, 1, 2, 3, 4]
    jitted = jit(threshold=2)(ns["finalizers"])
    for _ in range(3):
        assert jitted(200) == plain
    stats = jit_module.stats(jitted)
    assert stats["native_iterations"] > 300 and stats["aborts_by_code"] == {}


# --- reference counts ----------------------------------------------------------------------------------------

REFCOUNTS = """
marker = None


def cycle(n, values):
    global marker
    for i in range(n):
        marker = values[i % 4]
    marker = None


def made(n, name):
    global marker
    for i in range(n):
        marker = (i, name) if i % 2 else [name]
    marker = None


def strs(n, name):
    global marker
    for i in range(n):
        marker = name + "!" if i % 3 else name
    marker = None
"""


@pytest.mark.parametrize("function", ["cycle", "made", "strs"])
def test_no_reference_leaks_over_100000_iterations(function):
    ns: dict = {}
    define(REFCOUNTS, "cycle", ns)
    jitted = jit(threshold=2, min_native_iterations=0)(ns[function])
    name = "".join(["na", "me"])
    values = [name, [1, 2], ("t", 3), {"k": name}]
    args = (values,) if function == "cycle" else (name,)
    for _ in range(3):  # (every trace compiled: the code holds the module's dict)
        jitted(1000, *args)
    before = [sys.getrefcount(v) for v in [name, *values]] + [sys.getrefcount(ns)]
    jitted(100_000, *args)
    after = [sys.getrefcount(v) for v in [name, *values]] + [sys.getrefcount(ns)]
    assert after == before
    assert jit_module.stats(jitted)["native_iterations"] > 99_000
