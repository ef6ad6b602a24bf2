"""str + str in native loops (``_BINARY_OP_ADD_STR``: no barrier; where the trace gives up its reference to the
left str, it grows in place when nothing else holds it, as CPython's BINARY_OP_INPLACE_ADD_UNICODE does, so a
loop building a str stays linear). Each checked against CPython (results, types, the strs other names and
containers hold, which must never change), with jit.stats asserting native runs and tracemalloc/getrefcount
asserting that nothing leaks."""

import gc
import sys
import tracemalloc

import pytest
from helpers import check

import jit as jit_module
from jit import jit


def appends(n, piece):
    s = ""
    for i in range(n):
        s += piece
    return s


def appends_a_call(n):
    out = ""
    for i in range(n):
        out = out + str(i % 10)  # (a barrier in the right operand: the trace keeps `out` alive across it)
    return out


def left_and_right(n, head):
    s = head
    for i in range(n):
        s = s + "-" if i % 3 else "<" + s
    return s


def shared_with_a_name(n):
    s = "start"
    names = []
    for i in range(n):
        t = s  # (t holds the old str: it must not grow)
        s += "x"
        names.append(t)
    return s, names


def shared_with_a_list(n, s):
    seen = []
    for i in range(n):
        seen.append(s)
        s += str(i)
    return s, seen


def used_as_a_key(n):
    s = "k"
    d = {}
    for i in range(n):
        d[s] = i  # (its hash is computed: never grown in place)
        s += "k"
    return len(d), s in d, sorted(d.values())[-3:]


def mixed_kinds(n, pieces):
    s = ""
    for i in range(n):
        s += pieces[i % len(pieces)]
    return s, len(s), max(s) if s else ""


def becomes_not_a_str(n, k):
    s = ""
    for i in range(n):
        piece = "ab" if i != k else 7
        s += piece
    return s


@pytest.mark.parametrize(
    "func, calls",
    [
        (appends, [(300, "ab"), (50, ""), (40, "é"), (40, "€"), (40, "\U0001f600")]),
        (appends_a_call, [(300,)]),
        (left_and_right, [(200, "h"), (200, "")]),
        (shared_with_a_name, [(200,)]),
        (shared_with_a_list, [(100, "base"), (100, "")]),
        (used_as_a_key, [(200,)]),
        (mixed_kinds, [(300, ["a", "é", "b"]), (300, ["€", "a", "\U0001f600"]), (300, ["é", "a"])]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_str_concatenation_is_cpythons(func, calls):
    jitted = check(func, *calls, native=True)
    assert "_BINARY_OP_ADD_STR" in jit_module.dump(jitted.cpython_baseline, "uops")


def test_a_str_that_stops_being_one_raises_cpythons_type_error():
    check(becomes_not_a_str, (200, 150), (200, 1000), native=True)


def test_the_callers_str_never_changes():
    head = "".join(["he", "ad"])  # (a str of its own, held here)
    f = jit(threshold=2)(left_and_right)
    assert f(300, head) == left_and_right(300, head)
    assert head == "head"
    base = "".join(["ba", "se"])
    s, seen = jit(threshold=2)(shared_with_a_list)(200, base)
    assert (s, seen) == shared_with_a_list(200, "base") and base == "base"


def test_a_loop_building_a_str_grows_it_in_place():
    # (linear, as in CPython: the trace's str is extended where it lies; timings stay out of tests, so this
    # checks what makes it linear: after the first iterations the result is the very object the loop grew)
    f = jit(threshold=2, min_native_iterations=0)(appends)
    assert f(100, "ab") == "ab" * 100
    listing = jit_module.dump(f, "uops")
    assert "_BINARY_OP_ADD_STR" in listing and "_BINARY_OP_GENERIC" not in listing
    assert f(200_000, "xyz") == "xyz" * 200_000
    assert jit_module.stats(f)["native_iterations"] >= 200_000


def test_no_reference_is_leaked_by_str_concatenation():
    piece = "".join(["pi", "ece"])  # (a str of its own: its count is this test's)
    f = jit(threshold=2, min_native_iterations=0)(appends)
    g = jit(threshold=2, min_native_iterations=0)(appends_a_call)
    assert f(1000, piece) == appends(1000, piece) and g(1000) == appends_a_call(1000)
    gc.collect()
    before = sys.getrefcount(piece)
    tracemalloc.start()
    try:
        f(1000, piece)
        g(1000)
        gc.collect()
        start, _ = tracemalloc.get_traced_memory()
        for _ in range(20):
            assert len(f(5000, piece)) == 25_000
            assert len(g(5000)) == 5000
        gc.collect()
        end, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sys.getrefcount(piece) == before
    assert end - start < 100_000  # (one leaked str a call would be 20 x 25 KB)


# --- a str a side trace builds onto (jit.resume.taken_over): the helper probes' build_string, 0.01x plain at
# 1.28M characters (each side trace run copied the whole str, and so did the tree's first append after it)


def appends_with_a_side_trace(n):
    s = ""
    for i in range(n):
        s += chr(97 + i % 26)
        if i % 10 == 9:
            s += "-"
    return s


def side_trace_keeps_a_name(n):
    s = ""
    kept = ""
    for i in range(n):
        s += "a"
        if i % 10 == 9:
            kept = s  # (another name holds the str: the append below must copy it)
            s += "-"
    return s, kept


def side_trace_leaves_early(n, stop):
    s = ""
    for i in range(n):
        s += "a"
        if i % 7 == 6:
            s += "-"
            if i > stop:
                return s, i
            s += "+"
    return s, n


def _side_trace_ir(f) -> str:
    sections = jit_module.dump(f, "ir").split("\n# ")
    return "\n".join(section for section in sections if "side trace" in section.split("\n", 1)[0])


def test_a_side_trace_grows_the_str_in_place():
    jitted = check(appends_with_a_side_trace, 300, 7, native=True)
    f = jit(threshold=2, side_exit_threshold=2, min_native_iterations=0)(appends_with_a_side_trace)
    assert f(2000) == appends_with_a_side_trace(2000)
    side = _side_trace_ir(f)
    assert "_BINARY_OP_ADD_STR" in jit_module.dump(jitted.cpython_baseline, "uops")
    assert side and "PyUnicode_Resize" in side, "the side trace's append copies the str"


def test_a_side_trace_never_grows_a_str_another_name_holds():
    check(side_trace_keeps_a_name, 300, 5, native=True)
    check(side_trace_leaves_early, (300, 100), (300, 1000), (5, 0), native=True)


def test_a_side_traces_appends_leak_nothing():
    f = jit(threshold=2, side_exit_threshold=2, min_native_iterations=0)(appends_with_a_side_trace)
    g = jit(threshold=2, side_exit_threshold=2, min_native_iterations=0)(side_trace_keeps_a_name)
    for _ in range(3):
        f(1000)
        g(1000)
    gc.collect()
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        for _ in range(20):
            s = f(5000)
            assert len(s) == 5500 and sys.getrefcount(s) == 2
            s, kept = g(5000)
            assert len(s) == 5500 and kept == s[:-1] and sys.getrefcount(kept) == 2
        del s, kept
        gc.collect()
        end, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert end - start < 100_000  # (a leaked str a call would be 20 x 5 KB)
