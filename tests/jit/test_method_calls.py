"""Method calls on the generic path (jit.recorder.generic.PendingMethod): `obj.m(args)` is one uop,
``_CALL_METHOD_GENERIC`` (PyObject_VectorcallMethod: no bound method object, as CPython's LOAD_METHOD), and the
re-check of hoisted guards on globals after a barrier is skipped while their dicts are unchanged. Each checked
against CPython (results, types, exceptions, side effects) and through jit.stats that the loop ran natively."""

import gc
import sys
import traceback
import tracemalloc

import pytest
from helpers import check

import jit as jit_module
from jit import jit


def _native(jitted):
    for f in (jitted, jitted.cpython_baseline):
        stats = jit_module.stats(f)
        assert stats["native_entries"] > 0 and stats["native_iterations"] > 0, stats["aborts"]


class Counter:
    def __init__(self):
        self.count = 0
        self.total = 0

    def add(self, v, scale=1):
        self.count += 1
        self.total += v * scale
        return self.total


class Sub(Counter):
    def twice(self, v):
        return self.add(v) + self.add(v)


def method_loop(n):
    c = Sub()
    acc = 0
    for i in range(n):
        acc += c.add(i % 7)
        acc += c.add(i, scale=2)  # (a keyword)
        acc += c.twice(i) + c.count  # (an inherited method, an attribute)
        c.last = i
    return acc, c.count, c.total, c.last


def builtin_methods(words):
    hits = 0
    out = []
    for w in words:
        if w.startswith("b"):
            hits += 1
        out.append(w.upper().replace("A", "4"))
        hits += out.index(out[-1])
    return hits, out


@pytest.mark.parametrize(
    "func, calls",
    [
        (method_loop, [(300,), (3,)]),
        (builtin_methods, [(["apple", "banana", "cherry", "blue"] * 50,)]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_method_calls_are_one_uop(func, calls):
    jitted = check(func, *calls, native=True)
    _native(jitted)
    assert jit_module.stats(jitted)["aborts_total"] == 0, jit_module.stats(jitted)["aborts"]
    listing = jit_module.dump(jitted, "uops")
    if func is builtin_methods:  # (every attribute there is a method of a str or list called: none is bound)
        assert "_CALL_METHOD_DESCRIPTOR" in listing and "_CALL_METHOD_GENERIC" not in listing
        assert "_LOAD_ATTR_GENERIC" not in listing
    else:  # (Sub.twice calls self.add twice: inlined, as add is, where it was one generic call)
        assert "_CALL_METHOD_GENERIC" not in listing, listing
        assert "Sub.twice" in jit_module.explain(jitted)


def calls_methods_of(c, n):
    acc = 0
    for i in range(n):
        acc += c.add(i % 7)
    return acc


def _has_real_dict(obj):
    # (an object whose attributes are still inline values lists them as its referents; one given a real dict,
    # the dict: reading obj.__dict__ here would make one)
    return any(type(r) is dict for r in gc.get_referents(obj))


def test_recording_a_method_call_leaves_the_instance_attributes_inline():
    # CPython 3.11+ keeps a plain instance's attributes inline until its __dict__ is read; from then on
    # every attribute access of its methods is slower for the object's whole life. Recording must not read it.
    c = Counter()
    assert not _has_real_dict(c)
    f = jit(threshold=2)(calls_methods_of)
    assert f(c, 300) == calls_methods_of(Counter(), 300)
    assert jit_module.stats(f)["native_iterations"] > 0, jit_module.stats(f)["aborts"]
    # (c.add inlined: its body reads and stores c's inline values natively, jit.inline)
    assert "_STORE_ATTR_INSTANCE_CHECKED" in jit_module.dump(f, "uops")
    assert not _has_real_dict(c)


def apply(f, x):
    return f(x)


def bound_method_as_a_value(n):
    c = Counter()
    acc = 0
    for i in range(n):
        m = c.add  # (stored: bound for real)
        acc += m(i)
        acc += apply(c.add, i)  # (passed as an argument)
    return acc, c.count


def test_a_method_bound_and_not_called_right_away_is_bound_for_real():
    jitted = check(bound_method_as_a_value, (300,), (4,), native=True)
    _native(jitted)
    stats = jit_module.stats(jitted)
    assert all("bound and not called right away" in reason for reason in stats["aborts"]), stats["aborts"]
    assert "_LOAD_ATTR_GENERIC" in jit_module.dump(jitted, "uops")


def negate(v, scale=1):
    return -v * scale


def shadowed_mid_loop(n):
    c = Counter()
    acc = 0
    for i in range(n):
        if i == n // 2:
            c.add = negate  # (an instance attribute now shadows the method)
        acc += c.add(i)
    return acc, c.count


class Rebound:
    def value(self, i):
        return i


def rebind_value(i):
    if i == 60:
        Rebound.value = lambda self, i: 1000 + i
    return 0


def class_method_rebound_by_a_callee(n):
    r = Rebound()
    acc = 0
    for i in range(n):
        acc += rebind_value(i) + r.value(i)
    return acc


def test_a_method_shadowed_or_rebound_mid_loop_is_cpythons():
    jitted = check(shadowed_mid_loop, (200,), native=True)
    _native(jitted)
    original = Rebound.value
    try:
        expected = class_method_rebound_by_a_callee(200)
        Rebound.value = original
        f = jit(threshold=2, side_exit_threshold=2)(class_method_rebound_by_a_callee)
        assert f(200) == expected
        assert jit_module.stats(f)["native_iterations"] > 0
    finally:
        Rebound.value = original


LOG = []


class Raiser:
    def step(self, i, k):
        LOG.append(i)
        if i == k:
            raise ValueError(f"step {i}")
        return i


def calls_a_raising_method(n, k, values):
    r = Raiser()
    total = 0
    for i in range(n):
        total += r.step(values[i], k)
    return total


def test_a_raising_method_is_called_once_and_the_traceback_is_the_users():
    values = list(range(300))
    f = jit(threshold=2, side_exit_threshold=2)(calls_a_raising_method)
    for k in (40, 250):
        LOG.clear()
        with pytest.raises(ValueError, match=f"step {k}") as info:
            f(300, k, values)
        assert LOG == list(range(k + 1))  # (never called twice)
        frames = traceback.extract_tb(info.value.__traceback__)
        assert [frame.name for frame in frames[-2:]] == ["calls_a_raising_method", "step"]
        assert frames[-2].line == "total += r.step(values[i], k)"
    stats = jit_module.stats(f)
    # (the inlined method's exit where it raises may grow a side trace: its recording meets the exception)
    assert stats["native_iterations"] > 0 and not set(stats["aborts_by_code"]) - {"EXCEPTION_RAISED"}


def test_a_guard_in_the_arguments_leaves_before_the_method_is_called():
    """values[i] changes type partway: the guard on its type, between the method's LOAD_ATTR and its CALL,
    leaves at the LOAD_ATTR; the interpreter calls the method, once."""
    values = [*range(100), 1.5, 2.5, *range(100)]
    LOG.clear()
    expected = calls_a_raising_method(len(values), -1, values)
    logged = list(LOG)
    f = jit(threshold=2, side_exit_threshold=1000)(calls_a_raising_method)
    LOG.clear()
    assert f(len(values), -1, values) == expected
    assert LOG == logged
    assert jit_module.stats(f)["native_iterations"] > 0


def shadow_abs(i):
    if i == 50:
        globals()["abs"] = lambda x: 1000
    return 0


def builtin_shadowed_by_a_callee(n):
    total = 0
    for i in range(n):
        total += shadow_abs(i) + abs(-i)
    return total


def test_a_builtin_shadowed_by_a_global_a_callee_stores_is_seen_after_the_call():
    """The guard on `abs` (a builtin: globals then builtins) is hoisted; the call changes the globals dict's
    version, so the barrier checks it again."""
    module = sys.modules[__name__]
    try:
        expected = builtin_shadowed_by_a_callee(200)
        del module.abs
        f = jit(threshold=2, side_exit_threshold=2)(builtin_shadowed_by_a_callee)
        assert f(200) == expected
        del module.abs
        assert f(200) == expected
        assert jit_module.stats(f)["native_iterations"] > 0
    finally:
        vars(module).pop("abs", None)


class Item:
    def __init__(self, v):
        self.v = v

    def scaled(self, k, offset=0):
        return Item(self.v * k + offset)


class LoopingItem(Item):
    def scaled(self, k, offset=0):
        for _ in range(1):  # (a loop: not inlined, one generic method call)
            pass
        return LoopingItem(self.v * k + offset)


def fused_calls_with_objects(item, n):
    total = 0
    last = None
    for i in range(n):
        last = item.scaled(2, offset=i).scaled(1)
        total += last.v
    return total, last.v


@pytest.mark.parametrize("made, uop", [(Item, "_NEW_INSTANCE"), (LoopingItem, "_CALL_METHOD_GENERIC")])
def test_no_reference_is_leaked_by_method_calls_over_100000_iterations(made, uop):
    item = made(3)
    f = jit(threshold=2, min_native_iterations=0)(fused_calls_with_objects)
    assert f(item, 1000) == fused_calls_with_objects(item, 1000)
    gc.collect()
    before = sys.getrefcount(item)
    f(item, 100_000)
    gc.collect()
    assert sys.getrefcount(item) == before
    stats = jit_module.stats(f)
    assert stats["native_iterations"] >= 100_000 and stats["aborts_total"] == 0
    assert uop in jit_module.dump(f, "uops")


# --- sets of plain keys: no barrier ----------------------------------------------------------------------


class Key(str):  # (a str subclass: its hash could be Python code; the generic path, a barrier)
    pass


def set_membership(items, frozen):
    seen = set()
    hits = 0
    for index, item in enumerate(items):
        if item in seen or item in frozen:
            hits += index
        seen.add(item)
        if item not in seen:
            hits -= 1
    return hits, sorted(seen, key=repr)


def test_set_membership_and_add_of_plain_keys_run_without_barriers():
    frozen = frozenset({3, "b", 2.5})
    ints = [(i * 7919) % 101 for i in range(400)]
    mixed = [1, "a", 2.5, True, "b", 1, "a", 3, 2.5] * 30
    jitted = check(set_membership, (ints, frozen), (mixed, frozen), native=True)
    _native(jitted)
    assert jit_module.stats(jitted)["aborts_total"] == 0, jit_module.stats(jitted)["aborts"]
    listing = jit_module.dump(jitted, "uops")
    assert "_CONTAINS_SET" in listing and "_SET_ADD" in listing
    keys = [Key("a"), Key("b"), Key("a")] * 50
    check(set_membership, (keys, frozen), native=True)  # (items of another kind: the generic path)


def set_refcounts(box, n):
    seen = set()
    for i in range(n):
        if box in seen:
            seen.discard(box)
        seen.add(i % 1000 + 10**6)  # (a new int each time: the set keeps its own reference)
        seen.add(box)
    return len(seen)


def test_no_reference_is_leaked_by_set_operations_over_100000_iterations():
    box = "".join(["key", "-", "1"])  # (a str of its own: its count is this test's)
    f = jit(threshold=2, min_native_iterations=0)(set_refcounts)
    assert f(box, 1000) == set_refcounts(box, 1000)
    gc.collect()
    before = sys.getrefcount(box)
    tracemalloc.start()
    try:
        f(box, 1000)
        gc.collect()
        start, _ = tracemalloc.get_traced_memory()
        assert f(box, 100_000) == 1001
        gc.collect()
        end, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sys.getrefcount(box) == before
    assert end - start < 100_000  # (100,000 leaked ints would be megabytes)
    stats = jit_module.stats(f)
    assert stats["native_iterations"] >= 100_000 and "_SET_ADD" in jit_module.dump(f, "uops")


# --- dict.get with keys native lookups do not take ------------------------------------------------------------


def sums_by_key(keys, n):
    d = {}
    for i in range(n):
        k = keys[i % len(keys)]
        d[k] = d.get(k, 0) + i
    return sorted(d.items(), key=repr)


def test_dict_get_of_a_key_that_is_not_a_str_is_a_generic_method_call():
    jitted = check(sums_by_key, ([3, -1, 10**12, 7], 300), ([(1, 2), 1.5, None, "s"], 300), native=True)
    stats = jit_module.stats(jitted.cpython_baseline)
    assert set(stats["aborts"]) <= {r for r in stats["aborts"] if "dict.get() with a key of kind" in r}, stats["aborts"]
    assert "_CALL_METHOD_DESCRIPTOR (v" in jit_module.dump(jitted.cpython_baseline, "uops")  # (dict.get itself)
