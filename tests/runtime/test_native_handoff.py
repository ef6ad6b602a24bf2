"""A loop's hand-off from CPython into native code in one call (codegen.entry.build_handoff, through
``NativeRunner.handoff_calls``): the locals come as the instrumented code's tuple, a range loop's hidden slots are
read from the range iterator's fields, the tree's entry stub runs on the slots built, and the locals go back
as one tuple, with whether the loop has ended (its header's test, made natively).

Checked: the slots it builds are those the Python hand-off (runtime.handoff.enter) builds, for range
iterators at every position; results equal CPython's with values of every kind and unbound locals
(``check``), with ``jit.stats`` showing the one-call hand-off ran (``handoff_entries``); states it cannot
build (a range past a C long, a `range` that is not the builtin) go through Python; reference counts stay
flat.
"""

from __future__ import annotations

import sys
import traceback

import pytest
from helpers import check, define

import jit as jit_module
from codegen import abi
from jit import jit
from jit.api import state_of
from jit.frontend.instrument import BREAK, EXHAUSTED, RETURN
from runtime import loop_driver as runtime_loop_driver
from runtime.frame import UNBOUND
from runtime.handoff import enter
from runtime.interpreter import range_exhausted, sequence_exhausted
from runtime.loop_driver import LoopRuntime

pytestmark = pytest.mark.skipif(abi.RANGE_ITERATOR is None, reason="range iterator layout unknown: no native hand-off")

ALWAYS = {"threshold": 2, "side_exit_threshold": 2, "min_native_iterations": 0}


def handoff_entries(jitted):
    return jit_module.stats(jitted.cpython_baseline)["handoff_entries"]


def stepping(start, stop, step, scale):
    total = 0
    for i in range(start, stop, step):
        total += i * scale
    return total


def _hand_over(f, values, it, iterable):
    """The tree of f's only loop run through the native hand-off and through the Python hand-off on the same
    state: (the native result, its slots), (the Python result, its slots)."""
    state = state_of(f)
    monitor = state.monitor
    (tree,) = monitor.registry.trees[0]
    if not tree.handoff:
        tree.handoff = monitor.runner.make_handoff(tree, tree.root.entry_address)
    out = tree.handoff(values, it, iterable, [])
    code = state.code
    slots = [*values, *(UNBOUND,) * (code.nslots - code.nlocals)]
    enter(code.loops[0], it, iterable, slots)
    return out, (tree.entry(slots), slots)


@pytest.mark.parametrize(
    "start, stop, step",
    [(0, 10, 1), (5, 100, 7), (10, -10, -3), (-(2**40), 2**40, 2**37), (0, 0, 1), (3, 9, 2)],
)
def test_range_iterator_at_every_position_gives_the_python_hand_offs_slots(start, stop, step):
    f = jit(**ALWAYS)(stepping)
    for _ in range(4):
        f(0, 5, 1, 3)
    rng = range(start, stop, step)
    for taken in range(len(rng) + 2):  # (past its end too: an exhausted iterator)
        it = iter(rng)
        for _ in range(taken):
            next(it, None)
        values = (start, stop, step, 3, 0, UNBOUND if taken == 0 else 11)  # (start stop step scale total i)
        native, python = _hand_over(f, values, it, rng)
        assert native is not None and native is not NotImplemented
        result, slots, local_values, unbound, ended = native
        assert (result, slots) == python
        assert local_values == tuple(slots[: len(local_values)])
        assert unbound == any(value is UNBOUND for value in local_values)
        # the loop's end test after the exit, natively: what the interpreter's says
        assert ended is range_exhausted(slots, state_of(f).code.loops[0].hidden[0])


def summing(items, scale):
    total = 0
    for x in items:
        total += x * scale
    return total


@pytest.mark.parametrize("make", [list, tuple], ids=["list", "tuple"])
def test_sequence_iterator_at_every_position_gives_the_python_hand_offs_slots(make):
    f = jit(**ALWAYS)(summing)
    for _ in range(4):
        f(make([1, 2, 3]), 2)
    sequence = make([5, 6, 7, 8])
    for taken in range(len(sequence) + 2):  # (past its end too: an exhausted iterator forgets its sequence)
        it = iter(sequence)
        for _ in range(taken):
            next(it, None)
        values = (sequence, 2, 0, UNBOUND if taken == 0 else 9)  # (items scale total x)
        native, python = _hand_over(f, values, it, sequence)
        assert native is not NotImplemented
        if native is None:  # exhausted: an empty tuple in its slots, which a tree that walks a list refuses
            assert taken > len(sequence) and make is list and python[0] is None and python[1][4] == ()
            continue
        result, slots, local_values, unbound, ended = native
        assert (result, slots) == python
        assert local_values == tuple(slots[: len(local_values)])
        assert ended is sequence_exhausted(slots, state_of(f).code.loops[0].hidden[0])


def test_the_users_own_iterator_is_shared():
    """No iterable: the iterator may be the user's, so native code must call its next (the Python hand-off
    puts it in the loop's iterator slot; the tree's entry type map then decides)."""
    f = jit(**ALWAYS)(summing)
    for _ in range(4):
        f([1, 2, 3], 2)
    state = state_of(f)
    (tree,) = state.monitor.registry.trees[0]
    it = iter([1, 2, 3])
    out = tree.handoff(([1, 2, 3], 2, 0, UNBOUND), it, None, [])
    assert out is None  # (built, then refused: the tree walks a list by index, not an iterator)
    assert next(it) == 1  # untouched


def test_results_and_hand_offs_through_one_call():
    calls = [(0, 10, 1, 2), (5, 100, 7, 3), (10, -10, -3, 1), (4, 4, 1, 5), (0, 3, 1, 1)] * 4
    jitted = check(stepping, *calls, options=ALWAYS, native=True)
    assert handoff_entries(jitted) > 0


def unbound_after(n, flag):
    if flag:
        before = 1.5
    for i in range(n):
        seen = before if flag else 0.0
    if n:
        return i, seen
    return flag


def test_unbound_locals_in_and_out():
    calls = [(3, True), (0, True), (2, True), (4, True), (1, False), (0, False)] * 4
    jitted = check(unbound_after, *calls, options=ALWAYS)
    assert handoff_entries(jitted) > 0


def kinds(n, i, x, flag, nothing, lst, s, d, obj):
    total = 0
    acc = 0.0
    for k in range(n):
        total += i + k + len(lst) + len(s) + len(d)
        acc += x
        if flag and nothing is None:
            total += 1
        other = obj
    return total, acc, other


def test_every_kind_of_local():
    base = (3, 5, 1.5, True, None, [1, 2, 3], "abc", {"a": 1}, 2**70)
    calls = [base, (2, -7, -0.0, False, None, [], "", {}, "x"), (4, 2**62, 1e300, True, None, [0], "é", {1: 2}, 1.5)]
    jitted = check(kinds, *(calls * 4), options=ALWAYS, native=True)
    assert handoff_entries(jitted) > 0


def counting_while(n, step):
    total = 0
    while n > 0:
        total += n
        n -= step
    return total


def test_for_loops_over_lists_and_tuples():
    calls = [([1, 2, 3], 2), ((4, 5), 3), ([], 1), ((), 2), ([7] * 50, 1)] * 4
    jitted = check(summing, *calls, options=ALWAYS, native=True)
    assert handoff_entries(jitted) > 0


def test_a_while_loop():
    jitted = check(counting_while, *([(10, 3), (0, 1), (7, 7), (5, 1)] * 4), options=ALWAYS, native=True)
    assert handoff_entries(jitted) > 0


def test_states_it_cannot_build_go_through_python():
    source = """
def past_c_long(n):
    total = 0
    for i in range(2**64, 2**64 + n):
        total += i & 7
    return total

def own_range(n):
    total = 0
    for i in range(n):
        total += i
    return total
"""
    past = define(source, "past_c_long")
    jitted = check(past, *([3, 5, 0, 4] * 4), options=ALWAYS)
    assert handoff_entries(jitted) == 0
    own = define(source, "own_range")
    own.__globals__["range"] = lambda n: [n, n + 1, n + 2]  # (a list: a range loop over something else)
    jitted = check(own, *([3, 5, 0, 4] * 4), options=ALWAYS)
    assert handoff_entries(jitted) == 0

    class ByGetitem:  # (CPython's sequence iterator, an ndarray's too: tier 1 may walk it by index)
        def __init__(self, items):
            self.items = items

        def __getitem__(self, i):
            return self.items[i]

    jitted = check(summing, *([(ByGetitem([1, 2]), 3), (ByGetitem([4]), 1)] * 4), options=ALWAYS)
    assert handoff_entries(jitted) == 0


def test_any_other_iterator_is_handed_over_as_it_is():
    """A for loop over a list's subclass, a str, a dict, a set or a generator: tier 1 iterates CPython's iterator
    itself (runtime.handoff.enter), which the one-call hand-off puts in the loop's iterator slot as well."""

    class Items(list):
        pass

    def numbers(n):
        yield from range(n)

    jitted = check(summing, *([(Items([1, 2]), 3), (Items([4]), 1)] * 4), options=ALWAYS)
    assert handoff_entries(jitted) > 0
    for func, items in ((summing, {1: "a", 2: "b"}), (summing, {5, 6}), (summing, b"ab"), (vowels, "abcde")):
        calls = [(items, 2), (items, 3)] * 4
        jitted = check(func, *calls, options=ALWAYS, native=True)
        assert handoff_entries(jitted) > 0, items
    f = jit(**ALWAYS)(summing)
    for n in (3, 5, 0, 4) * 3:
        assert f(numbers(n), 2) == summing(numbers(n), 2)
    assert jit_module.stats(f)["handoff_entries"] > 0


def vowels(text, times):
    n = 0
    for c in text:
        if c in "aeiou":
            n += times
    return n


def moves(lst, s, obj, x, n):
    a, b, c, y = obj, lst, s, x
    for k in range(n):
        a = lst
        b = s
        c = obj
        y = x + k
    return a is lst, b is s, c is obj, y


def test_reference_counts_stay_flat():
    f = jit(**ALWAYS)(moves)
    lst, s, obj, x = [1, 2], "a str" * 3, object(), 2.5
    for _ in range(10):
        f(lst, s, obj, x, 3)
    before = [sys.getrefcount(v) for v in (lst, s, obj, x)]
    entries = jit_module.stats(f)["handoff_entries"]
    for _ in range(300):
        assert f(lst, s, obj, x, 3) == (True, True, True, 4.5)
        assert f(lst, s, obj, x, 0) == (False, False, False, 2.5)  # (a loop that runs no iteration)
    assert jit_module.stats(f)["handoff_entries"] - entries == 600
    assert [sys.getrefcount(v) for v in (lst, s, obj, x)] == before


def test_refused_and_unbuildable_states_leak_nothing():
    f = jit(**ALWAYS)(moves)
    lst, s, obj = [1, 2], "a str" * 3, object()
    for _ in range(10):
        f(lst, s, obj, 2.5, 3)
    state = state_of(f)
    (tree,) = state.monitor.registry.trees[0]
    before = [sys.getrefcount(v) for v in (lst, s, obj)]
    rng = range(3)
    for _ in range(100):
        # an int where the tree has a float: refused
        assert tree.handoff((lst, s, obj, 7, 3, obj, lst, s, 7, UNBOUND), iter(rng), rng, []) is None
        # a tuple of another length, an iterator of another range: not built
        assert tree.handoff((lst, s, obj), iter(rng), rng, []) is NotImplemented
        assert tree.handoff((lst, s, obj, 7, 3, obj, lst, s, 7, UNBOUND), iter([1]), rng, []) is NotImplemented
    assert [sys.getrefcount(v) for v in (lst, s, obj)] == before


# --- each way out of a one-call hand-off, its counters, and its plan -------------------------------------------


def leaving(n, stop, ret, fail):
    total = 0
    i = -1
    for i in range(n):
        if i == stop:
            break
        if i == ret:
            return "returned", total, i
        if i == fail:
            raise ValueError(f"failed at {i} with {total}")
        total += i * 3
    else:
        total = -total  # (the else clause: only when the loop ends)
    return total, i


# (n, stop, ret, fail): the loop ends, ends without an iteration, breaks, returns, raises
WAYS = {
    "end": (6, -1, -1, -1),
    "no iteration": (0, -1, -1, -1),
    "break": (10, 4, -1, -1),
    "return": (10, -1, 6, -1),
    "exception": (10, -1, -1, 3),
}


def _spy_loop(monkeypatch):
    """The loop driver's answers to the instrumented code (how: CONTINUE, EXHAUSTED, ...; or the exception)."""
    seen = []
    original = LoopRuntime.loop

    def spy(self, index, at_body, it, iterable, values, whole=False):
        if whole:  # (a comprehension handed over whole: not a loop statement's hand-off)
            return original(self, index, at_body, it, iterable, values, whole)
        try:
            result = original(self, index, at_body, it, iterable, values)
        except BaseException as exc:
            seen.append(type(exc).__name__)
            raise
        seen.append(result[0])
        return result

    monkeypatch.setattr(LoopRuntime, "loop", spy)
    return seen


def _last_line(exc):
    return traceback.extract_tb(exc.__traceback__)[-1].lineno


def test_each_way_out_continues_exactly(monkeypatch):
    """A loop entered from CPython through the one-call hand-off and left by its end (the else clause runs), an
    end without an iteration, break (the else clause does not), return and an exception: the results,
    exceptions and tracebacks are CPython's, and every call entered native code once, at the loop's header."""
    jitted = check(leaving, *(list(WAYS.values()) * 6), options=ALWAYS, native=True)
    f = jitted.cpython_baseline
    entries = handoff_entries(jitted)
    with pytest.raises(ValueError) as jitted_error:
        f(*WAYS["exception"])
    with pytest.raises(ValueError) as plain_error:
        leaving(*WAYS["exception"])
    assert str(jitted_error.value) == str(plain_error.value)
    assert _last_line(jitted_error.value) == _last_line(plain_error.value)  # (the raise, not the loop's header)
    assert handoff_entries(jitted) == entries + 1
    seen = _spy_loop(monkeypatch)  # (from here on: its frame sits in tracebacks, between the function and the driver)
    expected_how = {"end": EXHAUSTED, "no iteration": EXHAUSTED, "break": BREAK, "return": RETURN}
    for way, args in WAYS.items():
        seen.clear()
        entries = handoff_entries(jitted)
        if way == "exception":
            with pytest.raises(ValueError):
                f(*args)
            assert seen == ["ValueError"]
        else:
            assert f(*args) == leaving(*args)
            assert seen == [expected_how[way]], way
        assert handoff_entries(jitted) == entries + 1, way


def test_one_call_hand_offs_count_exactly():
    """The counters that native code keeps for the one-call hand-off (jit.stats: handoffs, native and stub and
    hand-off entries, exits; per tree: entries and iterations) add up to what was run."""
    f = jit(**ALWAYS)(leaving)
    for _ in range(6):
        for args in WAYS.values():
            try:
                f(*args)
            except ValueError:
                pass
    state = state_of(f)
    trees = state.monitor.registry.trees[0]
    before = jit_module.stats(f)
    tree_before = [(tree.entries, tree.iterations) for tree in trees]
    for _ in range(50):
        assert f(7, -1, -1, -1) == leaving(7, -1, -1, -1)
    after = jit_module.stats(f)
    for key in ("handoffs", "native_entries", "stub_entries", "handoff_entries", "exits_to_interpreter"):
        assert after[key] - before[key] == 50, key
    iterations = after["native_iterations"] - before["native_iterations"]
    # (each entry ran the loop's 7 iterations natively: 7 or 8 passes through its header, counted by the fuel)
    assert iterations in (50 * 7, 50 * 8), iterations
    tree_after = [(tree.entries, tree.iterations) for tree in trees]
    assert sum(a[0] - b[0] for a, b in zip(tree_after, tree_before)) == 50
    assert sum(a[1] - b[1] for a, b in zip(tree_after, tree_before)) == iterations


def adding(values):
    total = values[0] * 0  # (an int or a float: the entry type map of the loop's tree)
    for v in values:
        total += v
    return total


def test_a_new_tree_is_entered_through_the_hand_off():
    """The loop driver plans a loop's hand-offs once for its trees (TreeRegistry.plans); a tree installed since
    (floats after ints: another entry type map) drops the plan, and the new tree is entered in one call too."""
    f = jit(**ALWAYS)(adding)
    ints, floats = [1, 2, 3, 4], [0.5, 1.5, 2.5]
    for _ in range(6):
        assert f(ints) == adding(ints)
    state = state_of(f)
    registry = state.monitor.registry
    assert len(registry.trees[0]) == 1 and registry.plans[0] is not None
    for _ in range(6):
        assert repr(f(floats)) == repr(adding(floats))
    assert len(registry.trees[0]) == 2
    entries = jit_module.stats(f)["handoff_entries"]
    for _ in range(10):
        assert repr(f(floats)) == repr(adding(floats))
        assert f(ints) == adding(ints)
    assert jit_module.stats(f)["handoff_entries"] == entries + 20


SCALED = """
SCALE = 3

def scaled(n):
    total = 0
    for i in range(n):
        total += i * SCALE
    return total
"""


def test_an_invalidated_tree_is_not_entered_again():
    """A global the trees rely on, rebound: the tree is invalidated (its exit says so), the plan made for it is
    dropped, and the results follow the new value (the tree recorded again is entered in one call)."""
    namespace = {}
    scaled = define(SCALED, "scaled", namespace)
    f = jit(**ALWAYS)(scaled)
    for _ in range(6):
        assert f(10) == sum(i * 3 for i in range(10))
    registry = state_of(f).monitor.registry
    assert registry.plans[0] is not None
    namespace["SCALE"] = 5
    for _ in range(8):
        assert f(10) == sum(i * 5 for i in range(10))
    stats = jit_module.stats(f)
    assert stats["invalidated_trees"] >= 1, stats
    assert all(tree.valid for tree in registry.trees[0])
    entries = stats["handoff_entries"]
    for _ in range(5):
        assert f(10) == sum(i * 5 for i in range(10))
    assert jit_module.stats(f)["handoff_entries"] == entries + 5


_EXIT_AFTER_HANDOFFS = """
import gc
from jit import jit

def summed(n):
    items = list(range(n))
    total = 0
    for i in range(n):
        total += items[i]
    return total

g = jit(summed)
for _ in range(3):
    assert g(100_000) == summed(100_000)
    gc.collect()
print("done")
"""


def test_interpreter_exit_after_handoffs(tmp_path):
    """The hand-off builtins' shared method definition outlives them: at the interpreter's exit a tree (holding
    its hand-off builtin) may be freed by the last garbage collection after runtime.native's globals are
    cleared, and freeing the builtin reads its definition (this program crashed there, reading freed memory)."""
    import subprocess

    program = tmp_path / "exit_after_handoffs.py"  # (a file: the front end reads the function's source)
    program.write_text(_EXIT_AFTER_HANDOFFS)
    proc = subprocess.run(
        [sys.executable, "-X", "faulthandler", str(program)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "done", proc.stderr[-2000:]


# --- a for loop over an iterator, left by native code at its FOR_ITER (loop_driver.for_exhausted) ----------------


def until(items, stop):
    total = 0
    for k in items:
        if k == stop:
            break
        total += k
    else:
        total = -total - 1  # (the else clause: only when the loop ends)
    return total


def item_values(d, stop):
    total = 0
    for k, v in d.items():
        if v == stop:
            break
        total += k * v
    else:
        total = -total - 1
    return total


def zipped(xs, ys):
    s = 0
    for a, b in zip(xs, ys):
        s += a * b
    else:
        s = -s
    return s


def zipped_strictly(xs, ys):
    s = 0
    for a, b in zip(xs, ys, strict=True):
        s += a * b
    return s


def enumerated(xs):
    s = 0
    for i, x in enumerate(xs):
        s += i * x
    else:
        s += 1
    return s


def growing(d, limit):
    total = 0
    try:
        for k in d:
            total += k
            if total > limit:
                d[-total] = 0
    except RuntimeError as exc:
        return str(exc), total, len(d)
    return total


def _count_interpreter_resumes(monkeypatch):
    import runtime.loop_driver as driver

    resumed = []
    original = driver.resume_loop

    def counting(*args):
        resumed.append(args[1])
        return original(*args)

    monkeypatch.setattr(driver, "resume_loop", counting)
    return resumed


@pytest.mark.parametrize(
    "func, calls",
    [
        (until, [({3: 0, 5: 0, 8: 0}, -1), ({3: 0, 5: 0, 8: 0}, 5), ({}, 1)]),
        (until, [({3, 5, 8}, -1), ({3, 5, 8}, 5), (set(), 1)]),
        (until, [(b"abc", -1), (b"abc", 98), (b"", 0)]),
        (item_values, [({1: 2, 3: 4}, -1), ({1: 2, 3: 4}, 4), ({}, 0)]),
        (vowels, [("education", 2), ("rhythm", 3), ("", 1)]),
        (zipped, [([1, 2, 3], [4, 5, 6]), ([1, 2, 3], [4, 5]), ([1], [4, 5, 6]), ([], [])]),
        (enumerated, [([4, 5, 6],), ([],), ([7],)]),
    ],
    ids=["dict", "set", "bytes", "dict items", "str", "zip", "enumerate"],
)
def test_a_loop_over_an_iterator_ends_in_native_code(monkeypatch, func, calls):
    """Native code leaves such a loop at its FOR_ITER where the iterator gave no item (or, an enumerate or zip of
    lists, where a list has none left): the loop driver asks the iterator's next there, as FOR_ITER would, and
    finds the loop has ended (the else clause runs, CPython goes on after the loop) without the interpreter."""
    jitted = check(func, *(calls * 4), options=ALWAYS, native=True)
    f = jitted.cpython_baseline
    resumed = _count_interpreter_resumes(monkeypatch)
    for call in calls * 3:
        assert f(*call) == func(*call)
    assert resumed == []
    assert handoff_entries(jitted) > 0


def test_what_the_iterators_next_raises_there_is_raised_at_the_loop_with_its_locals():
    """A dict that changed size (its iterator raises again what it raised: native code left at FOR_ITER), a zip
    whose longer argument strict=True finds: the exception is CPython's, raised at the loop's line, and a handler
    around the loop sees the locals as they were."""
    check(growing, *[({1: 0, 2: 0, 3: 0, 4: 0}, 100), ({1: 0, 2: 0, 3: 0, 4: 0}, 4), ({5: 0}, 1)] * 4, options=ALWAYS)
    calls = [([1, 2], [3, 4]), ([1, 2], [3, 4, 5]), ([1, 2, 3], [3, 4]), ([], [1])]
    jitted = check(zipped_strictly, *(calls * 4), options=ALWAYS, native=True)
    f = jitted.cpython_baseline
    for xs, ys in calls[1:]:
        with pytest.raises(ValueError) as jitted_error:
            f(xs, ys)
        with pytest.raises(ValueError) as plain_error:
            zipped_strictly(xs, ys)
        assert str(jitted_error.value) == str(plain_error.value)
        assert _last_line(jitted_error.value) == _last_line(plain_error.value)
        assert _last_line(jitted_error.value) == zipped_strictly.__code__.co_firstlineno + 2


def test_a_generator_left_at_its_for_iter_is_asked_by_the_interpreter():
    """An iterator that may still give an item (a generator) is not asked by the loop driver: the interpreter runs
    FOR_ITER. A zip of a generator and a list asks the generator first: an item it gives is dropped where the list
    has none left, as CPython's zip does."""

    def numbers(n, taken):
        for i in range(n):
            taken.append(i)
            yield i

    f = jit(**ALWAYS)(zipped)
    for n, m in ((5, 3), (3, 5), (4, 4), (0, 2)) * 4:
        taken_plain, taken_jit = [], []
        assert f(numbers(n, taken_jit), list(range(m))) == zipped(numbers(n, taken_plain), list(range(m)))
        assert taken_jit == taken_plain
    assert jit_module.stats(f)["native_entries"] > 0


def while_tests(n, cap, big):
    total = 0
    i = 0
    while i < n and total < cap:  # (two tests, each a jump to the loop's exit)
        total += i
        i += 1
    else:
        total = -total  # (the else clause: only when a test ends the loop)
    done = n <= 0
    while not done:  # (the jump to the exit is taken on true)
        n -= 3
        done = n <= 0
    digits = 0
    while big:  # (the truth of an int past 64 bits)
        big, d = divmod(big, 10)
        digits += d
    stack = list(range(i))
    while stack:  # (the truth of a list)
        total += stack.pop()
    return total, i, n, digits


def test_a_while_loop_ended_by_its_test_leaves_without_the_interpreter(monkeypatch):
    """Native code leaving a `while` loop at its test (a failed guard at the conditional jump to the loop's exit,
    the condition on the stack) ends the hand-off as the loop's end does, else clause included: CPython goes on
    after the loop, and the interpreter does not run the jump (runtime.loop_driver.LoopRuntime.jumps_to_exit)."""
    calls = [(40, 10**6, 7**60), (40, 100, 3**50), (0, 5, 0), (7, 0, 2**70), (300, 10**9, 10**40)] * 4
    jitted = check(while_tests, *calls, options=ALWAYS, native=True)
    f = jitted.cpython_baseline
    interpreted = []
    original = runtime_loop_driver.resume_loop

    def spy(frame, index, pc):
        interpreted.append(pc)
        return original(frame, index, pc)

    monkeypatch.setattr(runtime_loop_driver, "resume_loop", spy)
    entries = handoff_entries(jitted)
    for args in calls:
        assert f(*args) == while_tests(*args)
    assert handoff_entries(jitted) > entries
    assert interpreted == []


def last_item_changes_type(values, scale):
    total = 0
    for v in values:
        total += v * scale
    for i in range(len(values)):
        total += i
    return total


def test_a_loop_whose_last_iteration_changes_a_locals_type_ends_at_once(monkeypatch):
    """A side trace whose last iteration changes a local's type (an int sum meets a float at the end) leaves at the
    loop's header, where no tree has those types: the loop has ended there (the list or range is exhausted), so
    the hand-off ends as at the loop's end (runtime.interpreter.loop_ended), without looking for a tree of the new
    types, whose recording would end at once, and each call hands the loop over at its start again (it went back
    to CPython's counted copy, which counted threshold iterations in every call)."""
    ints = list(range(300))
    calls = [(ints + [1.5], 2), (ints + [2], 3), (ints + [0.25], 1), ([2.5], 2), ([], 1), (ints + [7], 2.0)] * 4
    jitted = check(last_item_changes_type, *calls, options=ALWAYS, native=True)
    f = jitted.cpython_baseline
    for args in calls:
        f(*args)
    seen = _spy_loop(monkeypatch)
    for args in calls[:3]:
        seen.clear()
        assert f(*args) == last_item_changes_type(*args)
        assert seen == [EXHAUSTED, EXHAUSTED], args
