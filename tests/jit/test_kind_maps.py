"""How traces link to trees when a slot's kind differs from what the tree expects (TraceMonkey's type-specialized
trees: one root per entry type map).

- A side trace that reaches an inner loop's tree with an int past 64 bits it holds as a plain object (its parent
  did not know the slot) passes it as the int object the tree's map names (a guard of its type, a reference of
  its own), instead of aborting (``SLOT_KIND_CHANGED``).
- A trace ending at its loop's header with a state no tree's entry type map takes (an owned int object in a slot
  the trees do not name, an int where the tree holds an int object) does not grow a side trace there, which would
  end there the same way (a chain of side traces, one per iteration): the header records a root tree for that
  state (``WhenHot.ROOT``: ``jit.monitor.Monitor.wants_root``), and the exit then jumps into it. Where the state
  differs from a tree's map only in how an int is held, the link converts it (boxed, or narrowed where it fits).
- A str or dict a trace carries across its back-edge goes into an inner tree's call owned
  (``LINKED_OWNED_KINDS``: a nested str-building loop failed to compile, "no _TAKE_BACK").

Each case is differential against CPython (values past 2**63, negatives, the result's type), asserted native
with no abort through ``jit.stats``, with the exits a warm call takes, and checked for leaks (tracemalloc,
reference counts).
"""

import gc
import sys
import tracemalloc

import pytest
from helpers import check, warm_call

import jit as jit_module
from jit import jit

BIG = 2**70
OPTIONS = {"threshold": 2, "side_exit_threshold": 2}


def inner_on_some_iterations(n, m, h):
    c = 0
    for i in range(n):
        if i % 4 == 3:  # (the outer root is recorded on the other way: it does not know h)
            for x in range(m):
                h = (h * 31 + x) % 618970019642690137449562111
        c += 1
    return h, c


def small_then_past_64_bits(n, m, h):
    c = 0
    for i in range(n):
        if i % 4 == 3:
            for x in range(m):
                h = h * 3 + x
                if h > 2**80:
                    h = h % 2**80 - 2**79
        c += 1
    return h, c


def int_or_int_object(n):
    t = BIG
    c = 0
    for i in range(n):
        if i % 7 == 6:
            t = i  # (an int where the loop's tree holds an int object)
        else:
            t = t * 3 + BIG
        c += t % 7
    return t, c


def grows_and_shrinks(n):
    t = 0
    for i in range(n):
        if i % 3 == 0:
            t = t + 2**64
        else:
            t = t % 1000 + i
    return t


def discarded_operand(b, n):
    a = 0
    c = 0
    for i in range(n):
        a = (b + i) and (b - i)
        c += 1
    return a, c


def strings_in_nested_loops(n, m, piece):
    s = ""
    for i in range(n):
        for j in range(m):
            if j % 2 == 0:
                s += piece
            else:
                s = s + "y"
        if len(s) > 200:
            s = s[-50:]
    return s


def dicts_in_nested_loops(n, m):
    d = {}
    total = 0
    for i in range(n):
        for j in range(m):
            d[j] = d.get(j, 0) + i
        if i % 3 == 2:
            total += len(d)
            d = {}
    return total, d


def list_on_some_iterations(n):
    acc = []
    out = 0
    for i in range(n):
        if i % 7 == 6:  # (the root is recorded on the other way: its map does not name acc)
            acc = [i, i + 1]
        out += 1
    return acc, out


def str_on_some_iterations(n, piece):
    s = ""
    out = 0
    for i in range(n):
        if i % 7 == 6:
            s = str(i) + piece
        out += 1
    return s, out


def isinstance_dispatch(n):
    data = [1, 2.5, "x", (1, 2), None, 7, 3.25, "yz"]
    score = 0.0
    for i in range(n):
        v = data[i % len(data)]
        if isinstance(v, int):
            score += v
        elif isinstance(v, float):
            score += v * 2
        elif isinstance(v, str):
            score += len(v)
        else:
            score -= 1
    return score, v  # (v after the loop: whatever exit ended it hands the last item back)


def big_in(data, n):
    found = 0
    for i in range(n):
        if data[i % len(data)] * 3 in data:
            found += 1
        if data[i % len(data)] not in (1, 2):
            found += 2
    return found


def _jumps(f):
    """The exits that jump into a root tree recorded for their state (jit.stats: ``jumps_to``)."""
    return [
        exit["jumps_to"]
        for tree in jit_module.stats(f)["trees"]
        for trace in tree["traces"]
        for exit in trace["exits"]
        if exit["jumps_to"] is not None
    ]


@pytest.mark.parametrize(
    "args",
    [
        (40, 10, BIG),
        (40, 10, -BIG),
        (40, 10, 5),
        (40, 10, 2**63 - 1),
        (40, 10, -(2**63)),
        (3, 0, 2**64),
        (0, 10, BIG),
    ],
)
def test_a_side_trace_passes_an_int_object_it_did_not_know_to_the_inner_tree(args):
    native = True if args[0] > 4 else None  # (the loop gets hot)
    check(inner_on_some_iterations, args, native=native)
    check(small_then_past_64_bits, args, native=native)


def test_the_side_trace_jumps_into_a_root_recorded_for_its_state():
    f = jit(**OPTIONS)(inner_on_some_iterations)
    for _ in range(6):
        assert f(200, 10, BIG) == inner_on_some_iterations(200, 10, BIG)
    stats = jit_module.stats(f)
    assert stats["aborts"] == {}
    assert _jumps(f), "the side trace's end did not jump into the root tree recorded for it"
    maps = [tree["entry_kinds"] for tree in stats["trees"] if tree["loop_line"] == stats["trees"][-1]["loop_line"]]
    assert any(kinds.get("h") == "int_object" for tree in stats["trees"] for kinds in [tree["entry_kinds"]]), maps
    # no chain of side traces at the header: a handful of traces, and one exit per warm call (the loop's end)
    assert stats["traces_compiled"] <= 6
    assert warm_call(f, 200, 10, BIG)[1:] == (1, 1)
    assert warm_call(f, 200, 10, -BIG)[1:] == (1, 1)


def test_an_int_that_grows_past_64_bits_in_the_inner_loop():
    f = jit(**OPTIONS)(small_then_past_64_bits)
    for _ in range(6):
        assert f(200, 10, 5) == small_then_past_64_bits(200, 10, 5)
    assert jit_module.stats(f)["aborts"] == {}
    assert warm_call(f, 200, 10, 5)[1:] == (1, 1)


@pytest.mark.parametrize("func", [int_or_int_object, grows_and_shrinks])
def test_a_link_converts_between_int_and_int_object(func):
    check(func, 0, 1, 7, 300, native=True)
    f = jit(**OPTIONS)(func)
    for _ in range(6):
        assert f(3000) == func(3000)
    stats = jit_module.stats(f)
    assert stats["aborts"] == {}
    assert stats["traces_compiled"] <= 6
    assert warm_call(f, 3000)[1:] == (1, 1)


def test_a_side_trace_boxes_an_int_to_jump_into_the_int_object_tree():
    # (one tree per loop: no root for the int's map, so the side trace's end boxes it, as the tree holds it)
    options = {**OPTIONS, "max_trees_per_loop": 1}
    check(int_or_int_object, 0, 7, 300, options=options, native=True)
    f = jit(**options)(int_or_int_object)
    for _ in range(6):
        assert f(3000) == int_or_int_object(3000)
    (tree,) = jit_module.stats(f)["trees"]
    assert tree["entry_kinds"]["t"] == "int_object"
    root, *sides = tree["traces"]
    assert sides and all(side["links_to"] == root["symbol"] for side in sides)
    assert warm_call(f, 3000)[1:] == (1, 1)


@pytest.mark.parametrize("func, args", [(list_on_some_iterations, (3000,)), (str_on_some_iterations, (3000, "x"))])
def test_an_owned_list_or_str_the_root_does_not_name_passes_through_it(func, args):
    # (at first: the side trace's end could not hand its list over to the only tree, left there, and grew a side
    # trace from there, which ended there the same way: 33 traces, and the loop given back to CPython; then it got
    # a root of its own; now it jumps into the tree, whose root never assigns the slot: the list passes through)
    check(func, (0, *args[1:]), (6, *args[1:]), (100, *args[1:]), native=True)
    for options in (OPTIONS, {}):
        f = jit(**options)(func)
        for _ in range(20):
            assert f(*args) == func(*args)
        stats = jit_module.stats(f)
        assert stats["aborts"] == {} and stats["traces_compiled"] <= 5
        (tree,) = stats["trees"]
        root, *sides = tree["traces"]
        assert sides and all(side["links_to"] == root["symbol"] for side in sides), tree
        assert warm_call(f, *args)[1:] == (1, 1)
    gc.collect()
    tracemalloc.start()
    try:
        f(*args)
        gc.collect()
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(10):
            f(*args)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert grown < 50_000, grown  # (a leaked list per side-trace iteration: 10 x 430 x 72 bytes or more)


def test_a_kept_alive_item_in_a_slot_the_root_assigns_first_does_not_chain_side_traces():
    # (before: the side traces' ends could not hand v over to the tree, whose map does not name it: 30 empty side
    # traces at the header, one per iteration, 33 traces compiled, and the loop given back to CPython)
    checked = check(isinstance_dispatch, 0, 3, 9, 100, 400, 2000, native=True)
    for variant in (checked, checked.cpython_baseline):
        assert jit_module.stats(variant)["traces_compiled"] <= 8
    for options in (OPTIONS, {}):
        f = jit(**options)(isinstance_dispatch)
        for _ in range(20):
            assert f(3000) == isinstance_dispatch(3000)
        stats = jit_module.stats(f)
        assert stats["aborts"] == {} and stats["traces_compiled"] <= 8
        assert warm_call(f, 3000)[1:] == (1, 1)
        assert jit_module.stats(f)["native_iterations"] - stats["native_iterations"] == 3001


@pytest.mark.parametrize(
    "data", [[2**64, 3 * 2**64, 5, -BIG, 15, 9], [2**63, 1, 2], [-(2**63), 3 * -(2**63), 2], [1, 2, 3]]
)
def test_an_int_past_64_bits_in_a_container(data):
    # (before: `x in data` narrowed x to 64 bits, which it did not fit: an abort, and an exit per iteration)
    jitted = check(big_in, (data, 300), (data, 0), native=True)
    assert jit_module.stats(jitted)["aborts"] == {}
    f = jit(**OPTIONS)(big_in)
    for _ in range(6):
        assert f(data, 3000) == big_in(data, 3000)
    assert warm_call(f, data, 3000)[1:] == (1, 1)


@pytest.mark.parametrize("b", [BIG, -BIG, 2**63, -(2**63) - 1, 0, 5])
def test_a_discarded_operand_of_and_past_64_bits(b):
    jitted = check(discarded_operand, (b, 300), (b, 0), native=True)
    assert jit_module.stats(jitted)["aborts"] == {}


@pytest.mark.parametrize("args", [(30, 20, "x"), (30, 0, "ab"), (200, 7, "é"), (20, 3, "")])
def test_a_str_carried_across_the_back_edge_into_an_inner_tree(args):
    jitted = check(strings_in_nested_loops, args, native=True)
    assert jit_module.stats(jitted)["aborts_by_code"].get("COMPILER_ERROR") is None
    check(dicts_in_nested_loops, (30, 5), (7, 0), native=True)


def test_a_str_building_nest_stays_native_and_leaks_nothing():
    f = jit(**OPTIONS)(strings_in_nested_loops)
    piece = "".join(["pi", "ece"])  # (a str of its own: its count is this test's)
    for _ in range(4):
        assert f(300, 20, piece) == strings_in_nested_loops(300, 20, piece)
    stats = jit_module.stats(f)
    assert stats["aborts"] == {}
    assert warm_call(f, 300, 20, piece)[1:] == (1, 1)
    gc.collect()
    before = sys.getrefcount(piece)
    tracemalloc.start()
    try:
        f(300, 20, piece)
        gc.collect()
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(10):
            assert f(300, 20, piece) == strings_in_nested_loops(300, 20, piece)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert sys.getrefcount(piece) == before
    assert grown < 50_000, grown  # (a leaked str per iteration: 10 x 6000 x 50 bytes or more)


@pytest.mark.parametrize(
    "func, args",
    [(inner_on_some_iterations, (400, 10, BIG)), (int_or_int_object, (3000,)), (grows_and_shrinks, (3000,))],
)
def test_int_objects_handed_between_trees_leak_nothing(func, args):
    f = jit(**OPTIONS, min_native_iterations=0)(func)
    for _ in range(6):
        assert f(*args) == func(*args)
    gc.collect()
    tracemalloc.start()
    try:
        f(*args)
        gc.collect()
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(10):
            f(*args)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert grown < 50_000, grown  # (a leaked int object per iteration: 10 x 1000 x 36 bytes or more)
    assert jit_module.stats(f)["native_iterations"] > 10_000
    h = BIG + 12345
    before = sys.getrefcount(h)
    if func is inner_on_some_iterations:
        for _ in range(3):
            result = f(400, 0, h)  # (h goes through the trees untouched)
            assert result == (h, 400) and result[0] is h
        del result
        assert sys.getrefcount(h) == before


ROWS = [[(i * 7 + j * 13) % 101 for j in range(8)] for i in range(64)]


def rows_tested_by_generator_expressions(n, rows):
    flagged = 0
    energy = 0
    for i in range(n):
        row = rows[i % 64]
        t = 90 + i % 10
        if any(x > t for x in row):  # (an inner tree that leaves two ways: found, or exhausted)
            flagged += 1  # (an entry slot the outer root reads only after the inner call)
        energy += sum(x * x for x in row)
    return flagged, energy


def test_a_side_trace_from_an_inner_trees_other_exit_links_to_the_root_its_state_asks_for():
    """The outer root (recorded before the generator expressions' loops had trees: a long warm-up lets the outer
    loop get hot first) leaves through its `any()` call's other exit; the side trace grown there ends at the
    header holding `row` (a list), which the root does not name, so the header records a second root whose map
    does. The side trace's end knows `flagged` (slot read after the call, which the exit learned only once the
    trace was recorded): it links to that root and warm calls stay native (before: one exit per iteration)."""
    f = jit(warmup=1_000_000)(rows_tested_by_generator_expressions)
    for _ in range(4):
        assert f(50_000, ROWS) == rows_tested_by_generator_expressions(50_000, ROWS)
    result, entries, exits = warm_call(f, 50_000, ROWS)
    assert result == rows_tested_by_generator_expressions(50_000, ROWS)
    stats = jit_module.stats(f)
    assert stats["aborts_total"] <= 2 and entries <= 4 and exits <= 4, (entries, exits, stats["aborts"])
    ends = [t for tree in stats["trees"] for t in tree["traces"] if t["kind"] == "side" and t["ends_with"] == "exit"]
    linked = [e for t in ends for e in t["exits"] if e["jumps_to"]]
    assert linked, ends
