"""A method bound and called with calls in its arguments stays one method call (jit.recorder.generic.PendingMethod)
where those calls run no Python code: a str method (jit.recorder.pure_methods, ``_CALL_METHOD_PURE``) or an inlined
function. `idx.setdefault(w.upper(), []).append(pos)` was bound apart (``_LOAD_ATTR_GENERIC``: a bound method made
and called at every iteration, 0.93x plain CPython). Every guard and every failing call between the method's
LOAD_ATTR and its CALL leaves before the LOAD_ATTR, where the interpreter binds the method again; where Python code
runs in between, the method is bound apart, as CPython binds it. Each checked against CPython (results, exceptions
and their messages, calls made, reference counts), and through jit.stats that the loop runs natively."""

from __future__ import annotations

import gc
import sys
import traceback

import pytest
from helpers import check, warm_call

import jit as jit_module
from jit import jit


def word_index(words):
    idx = {}
    for pos, w in enumerate(words):
        idx.setdefault(w.upper(), []).append(pos)
    return idx


def lower_key(x):
    return x.lower()


def grouped_by_helper(words):
    d = {}
    for x in words:
        d.setdefault(lower_key(x), []).append(x)
    return d


def counted_lower(words):
    seen = set()
    counts = {}
    for w in words:
        seen.add(w.strip().lower())
        counts[w] = counts.get(w.lower(), 0) + len(w.split(","))
    return sorted(seen), counts


def _stats_of(jitted):
    return jit_module.stats(jitted), jit_module.stats(jitted.cpython_baseline)


WORDS = [f" w{i % 7}," if i % 3 else f"W{i % 5}" for i in range(300)]


@pytest.mark.parametrize("func", [word_index, grouped_by_helper, counted_lower], ids=lambda f: f.__name__)
def test_a_method_around_str_method_calls_is_one_call_run_natively(func):
    jitted = check(func, (WORDS,), (WORDS[:3],), native=True)
    for stats in _stats_of(jitted):
        assert "METHOD_NOT_CALLED" not in stats["aborts_by_code"], stats["aborts"]
        assert stats["aborts_total"] == 0, stats["aborts"]
    listing = jit_module.dump(jitted.cpython_baseline, "uops")
    assert "_CALL_METHOD_PURE" in listing and "_LOAD_ATTR_GENERIC" not in listing, listing
    assert "_CALL_GENERIC" not in listing, listing
    # warm: one native entry runs the whole loop, and leaves only at its end
    f = jit(threshold=2, min_native_iterations=0)(func)
    f(WORDS)
    result, entries, exits = warm_call(f, WORDS * 10)
    assert result == func(WORDS * 10)
    assert entries == 1 and exits == 1, (entries, exits)


class Loud(str):
    def upper(self):  # (Python code: the str subclass's method; the type guard on w leaves, the interpreter runs it)
        return "LOUD"


def index_of(words, probe):
    idx = {}
    for w in words:
        idx.setdefault(w.index(probe), []).append(w)  # (ValueError where probe is missing)
    return idx


def test_exceptions_of_the_call_in_between_are_cpythons():
    words = ["abc", "bcd", "xbz"] * 100
    check(index_of, (words, "b"), (words + ["zzz"], "b"), (words[:50] + ["q"] + words, "b"), native=True)
    f = jit(threshold=2)(index_of)
    f(words, "b")
    with pytest.raises(ValueError, match="substring not found") as info:
        f(words + ["zzz"], "b")
    frames = traceback.extract_tb(info.value.__traceback__)
    assert frames[-1].name == "index_of" and "w.index(probe)" in frames[-1].line
    # items of another type mid-loop: None (AttributeError), a str subclass whose method is Python code
    check(word_index, (WORDS + [None] + WORDS,), (WORDS + [Loud("x")] + WORDS,), native=True)
    # an argument of another kind: join of a tuple with an int in it (TypeError raised in C, CPython's message)
    check(joined, ([("a", "b")] * 100 + [("a", 1)] + [("c", "d")] * 10,), native=True)


def joined(pairs):
    out = set()
    for p in pairs:
        out.add("-".join(p))
    return sorted(out)


LOG: list = []


class Sink:
    def __init__(self):
        self.items = []

    def add(self, item, limit=10**9):
        for _ in range(1):  # (a loop: not inlined, one generic method call)
            LOG.append(item)
        if len(LOG) > limit:
            raise KeyError(f"full at {item}")
        return len(LOG)


class OtherSink(Sink):
    def add(self, item, limit=10**9):
        for _ in range(1):
            LOG.append(("other", item))
        return -len(LOG)


def fills(sink, words, limit):
    total = 0
    for w in words:
        total += sink.add(w.upper().strip(), limit)
    return total


def test_a_method_raising_is_called_once_with_its_message():
    words = [f"w{i}" for i in range(300)]
    for limit in (40, 250):
        LOG.clear()
        with pytest.raises(KeyError) as plain:
            fills(Sink(), words, limit)
        expected = list(LOG)
        f = jit(threshold=2, side_exit_threshold=2)(fills)
        LOG.clear()
        with pytest.raises(KeyError) as info:
            f(Sink(), words, limit)
        assert LOG == expected and str(info.value) == str(plain.value)  # (never called twice)
        assert traceback.extract_tb(info.value.__traceback__)[-2].line == "total += sink.add(w.upper().strip(), limit)"
        stats = jit_module.stats(f)
        assert stats["native_iterations"] > 0 and "METHOD_NOT_CALLED" not in stats["aborts_by_code"], stats["aborts"]


class Switching(Sink):
    def add(self, item, limit=10**9):
        for _ in range(1):
            LOG.append(item)
        if len(LOG) == 100:
            type(self).add = Sink.add  # (the method rebound on the class mid-loop)
        if len(LOG) == 150:
            self.add = lambda item, limit=0: LOG.append(("instance", item)) or 0  # (shadowed by an instance attribute)
        if len(LOG) == 200:
            del self.add
            self.__class__ = OtherSink  # (the object's class changed mid-loop)
        return len(LOG)


def test_a_method_rebound_shadowed_or_its_class_changed_mid_loop_is_cpythons():
    words = [f"w{i}" for i in range(300)]
    original = Switching.add
    try:
        LOG.clear()
        expected = (fills(Switching(), words, 10**9), list(LOG))
        Switching.add = original
        f = jit(threshold=2, side_exit_threshold=2)(fills)
        LOG.clear()
        assert (f(Switching(), words, 10**9), list(LOG)) == expected
        assert jit_module.stats(f)["native_iterations"] > 0
    finally:
        Switching.add = original


class Rebinder:
    def __init__(self):
        self.calls = 0

    def rebinds(self, w):
        for _ in range(1):  # (not inlined: a generic call, Python code between the load of .add and its call)
            self.calls += 1
        if self.calls == 120:
            Sink.add = OtherSink.add
        return w.lower()


def bound_before_python_code(sink, words, helper):
    total = 0
    for w in words:
        total += sink.add(helper.rebinds(w))  # (CPython binds .add before rebinds() runs: the old one this time)
    return total


def test_python_code_between_the_load_and_the_call_binds_the_method_apart():
    words = [f"W{i}" for i in range(300)]
    original = Sink.add
    try:
        LOG.clear()
        expected = (bound_before_python_code(Sink(), words, Rebinder()), list(LOG))
        Sink.add = original
        f = jit(threshold=2, side_exit_threshold=2)(bound_before_python_code)
        LOG.clear()
        assert (f(Sink(), words, Rebinder()), list(LOG)) == expected
        stats = jit_module.stats(f)
        assert stats["native_iterations"] > 0 and "METHOD_NOT_CALLED" in stats["aborts_by_code"], stats["aborts"]
    finally:
        Sink.add = original


def scaled_keys(values, scale):
    d = {}
    for i in range(len(values)):
        d.setdefault(values[i] * scale, []).append(str(i).zfill(3))
    return d


def test_a_guard_between_the_load_and_the_call_resumes_before_the_load():
    """values[i]'s type guard and the product's overflow check, between the load of .setdefault and its call,
    leave before the load: the interpreter binds it and computes the key again (an int past 64 bits, a float)."""
    values = [*range(100), 2**62, 1.5, *range(100)]
    jitted = check(scaled_keys, (values, 3), (values, 2**40), native=True)
    for stats in _stats_of(jitted):
        assert "METHOD_NOT_CALLED" not in stats["aborts_by_code"], stats["aborts"]


def test_no_reference_is_leaked_by_pending_methods_and_str_methods_over_100000_iterations():
    box = "".join(["Key", "-", "1"])  # (a str of its own: its count is this test's)
    words = [box, " a ", "b,c"] * 1000
    f = jit(threshold=2, min_native_iterations=0)(counted_lower)
    assert f(words) == counted_lower(words)
    g = jit(threshold=2, min_native_iterations=0)(word_index)
    assert g(words) == word_index(words)
    gc.collect()
    before = sys.getrefcount(box)
    for _ in range(33):
        f(words)
        g(words)
    gc.collect()
    assert sys.getrefcount(box) == before
    for h in (f, g):
        stats = jit_module.stats(h)
        assert stats["native_iterations"] >= 100_000 and stats["aborts_total"] == 0, stats["aborts"]


# --- a str's items and slices: no barrier either (a helper `key(x)`: `return x[:2]`, inlined) ------------------


def prefix(x):
    return x[:2]


def grouped_by_prefix(words, n):
    d = {}
    for i, x in enumerate(words):
        d.setdefault(prefix(x), []).append(x[i % n : -1 : 1] + x[-1] + x[i % 3])  # (IndexError where x is short)
    return d


class Index:
    def __init__(self, i):
        self.i = i
        self.calls = 0

    def __index__(self):  # (Python code: a slice of it is the generic subscript, a barrier)
        self.calls += 1
        return self.i


def sliced_by_an_object(words, start):
    out = []
    for w in words:
        out.append(w[start:])
    return out, start.calls


def test_str_subscripts_run_no_python_code_and_raise_as_cpython():
    words = [f"word{i % 11}" for i in range(300)]
    jitted = check(grouped_by_prefix, (words, 4), (words + ["a", "a"] + words, 3), (words[:9], 1), native=True)
    for stats in _stats_of(jitted):
        assert "METHOD_NOT_CALLED" not in stats["aborts_by_code"], stats["aborts"]
    listing = jit_module.dump(jitted.cpython_baseline, "uops")
    assert "_BINARY_SUBSCR_STR" in listing and "_BINARY_SUBSCR_GENERIC" not in listing, listing
    assert "_LOAD_ATTR_GENERIC" not in listing and "prefix" in jit_module.explain(jitted.cpython_baseline)
    f = jit(threshold=2)(grouped_by_prefix)
    f(words, 4)
    with pytest.raises(IndexError, match="string index out of range"):
        f(words + ["a", "a"], 4)
    jitted = check(sliced_by_an_object, (words, Index(2)), native=True)
    assert "_BINARY_SUBSCR_GENERIC" in jit_module.dump(jitted.cpython_baseline, "uops")


def conventions(words, fill, more):
    out = []
    for w in words:
        a, sep, b = w.partition(",")  # (METH_O)
        out.append((w.upper(), w.strip(), w.strip(" w"), w.replace("w", "v", 1), w.zfill(6)))  # NOARGS, FASTCALL
        out.append((w.split(), w.split(",", 1), w.split(sep=","), w.splitlines(True), "+".join([a, b])))  # KEYWORDS
        out.append((w.startswith(" w"), w.endswith((",", "x")), w.find("w", 1), w.count(" ") + w.rfind(sep)))
        out.append(w.center(10, fill, more) if more else w.center(10, fill))  # (TypeError: a fill of 2, 3 arguments)
    return out


def test_every_calling_convention_of_str_methods_is_cpythons():
    words = [f" w{i % 7}," if i % 2 else f"w{i}\nx" for i in range(200)]
    jitted = check(conventions, (words, "*", ""), (words, "**", ""), (words, "*", "!"), native=True)
    listing = jit_module.dump(jitted.cpython_baseline, "uops")
    assert "_CALL_METHOD_PURE" in listing and "_CALL_METHOD_DESCRIPTOR" not in listing, listing
    f = jit(threshold=2)(conventions)
    f(words, "*", "")
    with pytest.raises(TypeError, match=r"center expected at most 2 arguments, got 3"):
        f(words, "*", "!")  # (the wrong arity: not called directly, PyObject_Vectorcall's TypeError)
    with pytest.raises(TypeError, match=r"The fill character must be exactly one character long"):
        f(words, "**", "")


PATTERN = __import__("re").compile(r"(\d+)-(\d+)")


def regex_sums(strs):
    total = 0
    for s in strs:
        m = PATTERN.match(s)
        if m:
            total += int(m.group(1))
    return total


def test_methods_of_c_heap_types_are_one_call():
    """A C method of a heap type (METH_METHOD: `re.Pattern.match` binds as a `builtin_method`, a subclass of
    builtin_function_or_method) is a method call too, not a bound method made at every iteration."""
    strs = [f"{i}-{i * 2}" if i % 3 else "x" for i in range(300)]
    check(regex_sums, strs, native=True)
    jitted = jit(threshold=2, side_exit_threshold=2)(regex_sums)
    for _ in range(3):
        assert jitted(strs) == regex_sums(strs)
    assert "_LOAD_ATTR_GENERIC" not in jit_module.dump(jitted, "uops")
