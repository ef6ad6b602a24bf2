"""Entry stubs (codegen.entry): a tree entered from Python through one builtin call that checks the types of
the slots, unboxes them, runs the tree and boxes the exit's state into the slots list in native code.

Differential tests (``check``) of loops entered many times with short trip counts, with values of every
kind at entry and exits of every kind; ``jit.stats`` says the stubs ran (``stub_entries``) or refused a
value the entry type map does not allow (``stub_refusals``: the Python path takes the entry). Reference
counts of objects passed through many entries stay flat.
"""

from __future__ import annotations

import math
import sys

import pytest
from helpers import check

import jit as jit_module
from jit import jit
from jit.api import state_of
from runtime.frame import UNBOUND

# enter native code at every loop start, however few iterations it runs
ALWAYS = {"min_native_iterations": 0}
OPTIONS = {"threshold": 2, "side_exit_threshold": 2, **ALWAYS}


def stub_counts(jitted):
    """(stub entries, stub refusals) of the CPython baseline of check's result."""
    stats = jit_module.stats(jitted.cpython_baseline)
    return stats["stub_entries"], stats["stub_refusals"]


def repeat(calls, times=4):
    return [call for call in calls for _ in range(times)]


def every_kind(n, i, x, flag, nothing, lst, s, d, obj):
    total = 0
    acc = 0.0
    for k in range(n):
        total += i + k
        acc += x
        if flag:
            total += 1
        if nothing is None:
            total += 2
        total += lst[k % 3] + len(s) + len(d)
        other = obj
        last = k
    return total, acc, i, x, flag, nothing, lst, s, d, other, last


BASE = (3, 5, 1.5, True, None, [1, 2, 3], "abc", {"a": 1}, 2**70)


def with_(**changes):
    names = ("n", "i", "x", "flag", "nothing", "lst", "s", "d", "obj")
    values = dict(zip(names, BASE))
    values.update(changes)
    return tuple(values[name] for name in names)


def test_every_kind_at_entry():
    calls = repeat(
        [
            BASE,
            with_(x=-0.0),
            with_(x=math.nan),
            with_(x=math.inf),
            with_(x=-math.inf),
            with_(flag=False),
            with_(i=-(2**62)),
            with_(s="", d={}),
            with_(lst=[7, -8, 9, 10]),
            with_(obj=None),
            with_(obj="an object"),
            with_(obj=2**63),
        ]
    )
    jitted = check(every_kind, *calls, options=OPTIONS, native=True)
    entries, _ = stub_counts(jitted)
    assert entries >= len(calls)


def test_ints_near_and_beyond_64_bits():
    """An int that fits in 64 bits enters natively (an overflow inside leaves through a guard); one that does
    not is refused by the stub, and the Python path decides (its own tree, or the interpreter)."""
    calls = repeat(
        [
            BASE,
            with_(i=2**63 - 10),  # i + k fits, total overflows: a guard exit
            with_(i=-(2**63)),
            with_(i=2**63 - 1),
            with_(i=2**63),  # beyond: refused
            with_(i=-(2**63) - 1),
            with_(i=2**100),
            BASE,
        ]
    )
    jitted = check(every_kind, *calls, options=OPTIONS, native=True)
    entries, refusals = stub_counts(jitted)
    assert entries > 0 and refusals > 0


def test_kinds_that_differ_from_the_tree_are_refused():
    """Values of another kind than the tree's entry type map (None for a float, an int for a bool, a tuple
    for a list, a subclass of str) fall back cleanly, however often."""

    class MyStr(str):
        pass

    calls = repeat(
        [
            BASE,
            with_(x=2),
            with_(flag=1),
            with_(nothing=0),
            with_(lst=(1, 2, 3)),
            with_(s=MyStr("xyz")),
            with_(d=[("a", 1)]),
            BASE,
        ],
        times=6,
    )
    jitted = check(every_kind, *calls, options=OPTIONS, native=True)
    entries, refusals = stub_counts(jitted)
    assert entries > 0 and refusals > 0


def unbound_until_assigned(n, flag):
    if flag:
        before = 1.5
    for k in range(n):
        last = k
        seen = before if flag else 0.0
    if n:
        return last, seen
    return flag


def test_unbound_locals_at_entry_and_exit():
    calls = repeat([(3, True), (0, True), (2, True), (4, True), (1, False)])
    jitted = check(unbound_until_assigned, *calls, options=OPTIONS)
    assert stub_counts(jitted)[0] > 0


def ends_every_way(n, stop, how, data):
    total = 0
    scale = 2.5
    for k in range(n):
        if k == stop:
            if how == 0:
                break
            if how == 1:
                return total, k, "returned"
            if how == 2:
                total += 10 // (k - stop)  # ZeroDivisionError in the hot loop
        total += data[k % len(data)] * 3
        scale = scale * 0.5
    return total, scale, "ended"


@pytest.mark.parametrize(
    "calls",
    [
        pytest.param([(3, 9, 0, [1, 2])], id="end"),
        pytest.param([(5, 2, 0, [1, 2])], id="break"),
        pytest.param([(5, 2, 1, [1, 2])], id="return"),
        pytest.param([(5, 2, 2, [1, 2])], id="exception"),
        pytest.param([(4, 9, 0, [1, 2]), (4, 9, 0, [1, 2.5]), (4, 9, 0, [1, "x"])], id="guard"),
        pytest.param([(4, 9, 0, [1, 2**62]), (4, 9, 0, [2**62, 2**62])], id="overflow"),
    ],
)
def test_exits_of_every_kind(calls):
    # the loop compiles on the first calls, which end normally; then each kind of exit, many times
    warm = [(3, 9, 0, [1, 2])] * 4
    jitted = check(ends_every_way, *warm, *repeat(calls, 6), options=OPTIONS, native=True)
    assert stub_counts(jitted)[0] > 0


def exit_with_a_stack(values, n):
    total = 0
    for k in range(n):
        total = total + values[k] * 2 + 1  # a guard on values[k] leaves with total (and more) on the stack
    return total


def test_exits_with_an_operand_stack():
    calls = repeat([([1, 2, 3], 3), ([1, 2, 3.5], 3), ([1, "a", 3], 2), ([4, 5, 6], 3)])
    jitted = check(exit_with_a_stack, *calls, options=OPTIONS, native=True)
    assert stub_counts(jitted)[0] > 0


def moves_objects(lst, s, d, obj, x, n):
    a, b, c, o, y = obj, lst, s, d, x  # (the stub replaces each with a new reference, releasing the old one)
    for k in range(n):
        a = lst
        b = s
        c = d
        o = obj
        y = x + k
    return a is lst, b is s, c is d, o is obj, y


def test_reference_counts_stay_flat():
    f = jit(**OPTIONS)(moves_objects)
    lst, s, d, obj, x = [1, 2], "a str" * 3, {"k": 1}, object(), 2.5
    for _ in range(10):
        f(lst, s, d, obj, x, 3)
    before = [sys.getrefcount(v) for v in (lst, s, d, obj, x)]
    stats_before = jit_module.stats(f)["stub_entries"]
    for _ in range(500):
        assert f(lst, s, d, obj, x, 3) == (True, True, True, True, 4.5)
    assert jit_module.stats(f)["stub_entries"] - stats_before == 500
    assert [sys.getrefcount(v) for v in (lst, s, d, obj, x)] == before


def test_reference_counts_of_refused_entries_stay_flat():
    f = jit(**OPTIONS)(moves_objects)
    lst, s, d, obj = [1, 2], "a str" * 3, {"k": 1}, object()
    for _ in range(10):
        f(lst, s, d, obj, 2.5, 3)
    before = [sys.getrefcount(v) for v in (lst, s, d, obj)]
    refusals = jit_module.stats(f)["stub_refusals"]
    for _ in range(100):
        f(lst, s, d, obj, 7, 3)  # an int where the tree has a float
    assert jit_module.stats(f)["stub_refusals"] > refusals
    assert [sys.getrefcount(v) for v in (lst, s, d, obj)] == before


def _tree_of(f):
    (tree,) = state_of(f).monitor.registry.trees[0]
    assert tree.entry is not None
    return tree


def test_stub_refuses_without_changing_anything():
    f = jit(**OPTIONS)(moves_objects)
    for _ in range(10):
        f([1], "s", {}, None, 1.5, 2)
    tree = _tree_of(f)
    nslots = state_of(f).code.nslots
    assert tree.entry([]) is None
    assert tree.entry((None,) * nslots) is None  # not a list
    assert tree.entry([UNBOUND] * (nslots + 1)) is None
    wrong = [object() for _ in range(nslots)]
    copy = list(wrong)
    assert tree.entry(wrong) is None
    assert all(a is b for a, b in zip(wrong, copy))


def test_entry_stubs_off_enters_in_python():
    """entry_stubs=False: the same native code, entered by unboxing and boxing the frame in Python."""
    calls = repeat([BASE, with_(x=-0.0), with_(i=2**63), with_(lst=[4, 5, 6])])
    jitted = check(every_kind, *calls, options={**OPTIONS, "entry_stubs": False}, native=True)
    assert stub_counts(jitted) == (0, 0)


def hands_over(n, m):
    last = 0
    for i in range(n):
        last = (i * m) // 7  # past 64 bits: the exit hands the int object over (tag bit OWNED)
    return last


def test_owned_objects_handed_over_at_an_exit_are_not_leaked():
    import tracemalloc

    f = jit(**OPTIONS)(hands_over)
    for _ in range(10):
        assert f(3, 2**62) == hands_over(3, 2**62)
        assert f(20, 2**62) == hands_over(20, 2**62)
    entries = jit_module.stats(f)["stub_entries"]
    tracemalloc.start()
    try:
        for _ in range(2000):
            f(20, 2**62)
        first = tracemalloc.get_traced_memory()[0]
        for _ in range(2000):
            f(20, 2**62)
        second = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert second - first < 10_000
    assert jit_module.stats(f)["stub_entries"] >= entries + 4000
    result = f(20, 2**62)
    assert result == hands_over(20, 2**62) and sys.getrefcount(result) == 2


def wide_difference(n, m):
    last = 0
    for i in range(n):
        last = i * m - m  # an i128 (a product); leaves native code, with it, where it does not fit in 64 bits
    return last


def test_an_i128_on_the_stack_at_an_exit_is_boxed_exactly():
    calls = repeat([(3, 2**62), (4, 2**62), (5, 2**62 + 7), (5, -(2**62)), (6, 2**62), (2, 5)])
    jitted = check(wide_difference, *calls, options=OPTIONS, native=True)
    assert stub_counts(jitted)[0] > 0


SCALE = 1


def uses_a_global(n):
    total = 0
    for i in range(n):
        total += SCALE * i
    return total


def test_invalidated_trees_are_freed_after_stub_entries():
    """The stubs count their calls in progress (natively); once none is running, invalidated code is freed."""
    global SCALE
    f = jit(**OPTIONS)(uses_a_global)
    runner = None
    try:
        for scale in (1, 2, 3):
            SCALE = scale
            for _ in range(40):
                assert f(3) == uses_a_global(3)
            runner = state_of(f).monitor.runner
            assert runner.stubs_active.value == 0
    finally:
        SCALE = 1
    stats = jit_module.stats(f)
    assert stats["invalidated_trees"] >= 1 and stats["stub_entries"] > 0
    assert runner.registry.graveyard == []


def test_holds_unbound_compares_identity_only():
    from runtime.native import holds_unbound

    class Touchy:
        def __eq__(self, other):
            raise AssertionError("compared")

        __hash__ = object.__hash__

    scan = holds_unbound()
    assert scan(()) is False and scan((1, 2.5, None)) is False
    assert scan((1, UNBOUND)) is True and scan((UNBOUND,)) is True
    assert scan((Touchy(), 3)) is False and scan((Touchy(), UNBOUND)) is True


FROM_A_GLOBAL = """
def from_a_global(n, a):
    s = 0.0
    x = None
    k = np.int32(3)
    flag = None
    for i in range(n):
        x = TABLE[i % 64]
        s += x + a[i % 5]
        k = k + np.int32(1)
        flag = x > 1.0
    return s, x, k, flag, a[0] * 2
"""


def test_numpy_scalars_and_arrays_go_through_the_stub():
    """An entry type map with an array and NumPy scalars: the stub checks their types and unboxes them; an exit
    boxes the NumPy scalars the trees wrote (numpy.float64, numpy.int32, numpy.bool) with their types and values."""
    np = pytest.importorskip("numpy")
    from helpers import define

    plain = define(FROM_A_GLOBAL, "from_a_global", {"TABLE": np.linspace(0.0, 2.0, 64), "np": np})
    f = jit(**OPTIONS)(plain)
    a = np.arange(5, dtype=np.float32)
    for n in (5, 40, 300, 41, 0):
        for _ in range(4):
            got, want = f(n, a), plain(n, a)
            assert [(type(v), repr(v)) for v in got] == [(type(v), repr(v)) for v in want], n
    stats = jit_module.stats(f)
    assert stats["stub_entries"] + stats["handoff_entries"] > 0
    # (a list of another dtype, a scalar of another type: the stub refuses or the traces' guards leave)
    b = np.arange(5, dtype=np.int64)
    assert repr(f(300, b)) == repr(plain(300, b))
    assert repr(f(300, [1.0] * 5)) == repr(plain(300, [1.0] * 5))


def test_a_kind_the_stub_cannot_box_raises_instead_of_crashing(monkeypatch):
    """A stub with no table of NumPy's objects (as if NumPy's kinds were not known: the process's table not filled
    in, ``codegen.entry.numpy_objects_known``) that meets a NumPy scalar at an exit never reads its bits as a
    pointer: it raises SystemError."""
    np = pytest.importorskip("numpy")
    from helpers import define

    from codegen import entry

    monkeypatch.setattr(entry, "NUMPY_SCALARS", {})  # (no stub built meanwhile fills the table in)
    monkeypatch.setattr(entry._NUMPY_OBJECTS_AT, "value", None)  # (put back after the test)
    source = """
def from_a_global(n):
    s = 0.0
    x = None
    for i in range(n):
        x = TABLE[i % 64]
        s += x
    return s, x
"""
    f = jit(**OPTIONS)(define(source, "from_a_global", {"TABLE": np.linspace(0.0, 2.0, 64)}))
    with pytest.raises(SystemError, match="cannot box"):
        for _ in range(50):
            f(5)
    assert jit_module.stats(f)["traces_compiled"] > 0


SCALARS = """
def scalars(n, f64, f32, i64, i32, u8, flag):
    for i in range(n):
        f64 = f64 * 0.5 + 1.0
        f32 = f32 + np.float32(0.25)
        i64 = i64 + 3
        i32 = i32 - np.int32(2)
        u8 = u8 + np.uint8(1)
        flag = i64 > 1000
    return f64, f32, i64, i32, u8, flag
"""


def test_numpy_scalars_of_every_kind_at_the_entry_and_the_exit():
    np = pytest.importorskip("numpy")
    from helpers import define

    plain = define(SCALARS, "scalars", {"np": np})
    f = jit(**OPTIONS)(plain)
    start = (np.float64(1.5), np.float32(0.1), np.int64(-7), np.int32(2**31 - 1000), np.uint8(3), np.bool_(True))
    for n in (300, 600, 5, 0):
        for _ in range(4):
            with np.errstate(all="ignore"):  # (u8 wraps past 255: NumPy's own behaviour, warned or not)
                got, want = f(n, *start), plain(n, *start)
            assert [(type(v), repr(v)) for v in got] == [(type(v), repr(v)) for v in want], n
    stats = jit_module.stats(f)
    assert stats["stub_entries"] + stats["handoff_entries"] > 0 and stats["native_iterations"] > 0
