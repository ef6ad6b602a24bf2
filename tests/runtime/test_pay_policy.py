"""Entries that pay (runtime.loop_driver): a loop CPython hands to the JIT keeps being handed over only while its
native entries run at least ``min_native_iterations`` iterations each on average; otherwise CPython runs it,
with a back-off that lets a change of behaviour win it back. Counted in iterations (never time): exact here."""

from __future__ import annotations

import gc
import random

import pytest

from jit import jit
from runtime.loop_driver import FIRST_BACKOFF, PAY_ENTRIES, PAY_WINDOW, _Window


def short_sum(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


def nested_sum(n, m):
    s = 0
    for i in range(n):
        for j in range(m):
            s += i ^ j
    return s


def digits(n):
    total = 0
    while n:
        total += n % 10
        n //= 10
    return total


def jitted(func, **options):
    return jit(threshold=2, side_exit_threshold=2, **options)(func)


LOOP_LINE = short_sum.__code__.co_firstlineno + 2


# --- counting iterations -------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 5, 16383, 16384, 16385, 40000])
def test_native_iterations_count_each_header_visit(n):
    """An entry at the loop's header counts each pass through it, the one that finds the range done included,
    across the periodic checks (every 2**14 iterations) too."""
    f = jitted(short_sum, min_native_iterations=0)
    f(100)
    f(100)  # warm: the next call enters the tree at the header
    before = jit.stats(f)
    assert f(n) == short_sum(n)
    after = jit.stats(f)
    assert after["native_entries"] - before["native_entries"] == 1
    assert after["native_iterations"] - before["native_iterations"] == n + 1
    assert sum(t["native_iterations"] for t in after["trees"]) == after["native_iterations"]


def test_native_iterations_of_a_nest_include_the_inner_trees():
    f = jitted(nested_sum, min_native_iterations=0)
    for _ in range(4):
        f(10, 10)
    before = jit.stats(f)
    assert f(10, 10) == nested_sum(10, 10)
    after = jit.stats(f)
    assert after["native_entries"] - before["native_entries"] == 1
    assert after["native_iterations"] - before["native_iterations"] == 11 + 10 * 11


def _calls_no_tree(f, line):
    """The root traces of the loop at line call no inner tree: its inner loop was unrolled into them."""
    trees = [tree for tree in jit.stats(f)["trees"] if tree["loop_line"] == line]
    roots = [trace for tree in trees for trace in tree["traces"] if trace["kind"] == "root"]
    return bool(roots) and all(not trace["calls"] for trace in roots)


OUTER_LINE = nested_sum.__code__.co_firstlineno + 2


@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_native_iterations_of_a_nest_include_the_unrolled_inner_loop(m):
    """An inner loop unrolled into the outer trace (unroll_max_trips) counts each visit of its header, as its
    tree would (the one that finds the range done included): the same count as with the tree called."""
    counts = []
    for unroll in (4, 0):
        f = jitted(nested_sum, min_native_iterations=0, unroll_max_trips=unroll)
        for _ in range(4):
            f(10, m)
        assert _calls_no_tree(f, OUTER_LINE) == (unroll > 0)
        before = jit.stats(f)
        assert f(10, m) == nested_sum(10, m)
        after = jit.stats(f)
        assert after["native_entries"] - before["native_entries"] == 1
        counts.append(after["native_iterations"] - before["native_iterations"])
    assert counts == [11 + 10 * (m + 1)] * 2


def test_native_iterations_count_unrolled_visits_across_periodic_checks():
    """Enough iterations that the fuel passes several multiples of the periodic check's period, stepping by 4
    per outer iteration (3 header visits of the unrolled loop and its own): counted exactly still."""
    f = jitted(nested_sum, min_native_iterations=0, unroll_max_trips=4)
    for _ in range(4):
        f(10, 2)
    assert _calls_no_tree(f, OUTER_LINE)
    before = jit.stats(f)
    assert f(40000, 2) == nested_sum(40000, 2)
    after = jit.stats(f)
    assert after["native_iterations"] - before["native_iterations"] == 40001 + 40000 * 3


# --- the policy ----------------------------------------------------------------------------------------------


def run_until_not_paying(f, args, limit=200):
    for calls in range(1, limit + 1):
        assert f(*args) == f.py_func(*args)
        if jit.stats(f)["not_paying_loops"]:
            return calls
    raise AssertionError(f"the loop kept being entered: {jit.stats(f)}")


def test_a_short_loop_goes_back_to_cpython():
    f = jitted(short_sum)
    calls = run_until_not_paying(f, (4,))
    assert calls <= 2 + PAY_WINDOW + 2  # warm-up, recording, then one window
    s = jit.stats(f)
    assert s["not_paying_loops"] == [LOOP_LINE]
    assert s["traces_compiled"] == 1  # the tree stays; it is just not entered from CPython
    text = jit.explain(f)
    assert (
        f"runs plain in CPython for {FIRST_BACKOFF} more loop start(s): its native code ran 5.0 iterations per "
        "entry, fewer than would pay for entering it (min_native_iterations=192, 115 for this loop's body)"
    ) in text
    entries = s["native_entries"]
    for _ in range(FIRST_BACKOFF):  # the first back-off: that many loop starts in plain CPython
        assert f(4) == short_sum(4)
    assert jit.stats(f)["native_entries"] == entries
    f(4)  # the back-off is over: handed over again, to see whether it pays now
    assert jit.stats(f)["native_entries"] == entries + 1


def test_a_long_loop_keeps_being_entered():
    f = jitted(short_sum)
    for _ in range(3 * PAY_WINDOW):
        assert f(1000) == short_sum(1000)
    s = jit.stats(f)
    assert s["not_paying_loops"] == []
    entries = s["native_entries"]
    for _ in range(PAY_WINDOW):
        f(1000)
    assert jit.stats(f)["native_entries"] == entries + PAY_WINDOW


def test_the_option_off_keeps_entering_short_loops():
    f = jitted(short_sum, min_native_iterations=0)
    for _ in range(4 * PAY_WINDOW):
        assert f(3) == short_sum(3)
    entries = jit.stats(f)["native_entries"]
    for _ in range(10):
        f(3)
    assert jit.stats(f)["native_entries"] == entries + 10
    assert jit.stats(f)["not_paying_loops"] == []


def test_a_change_of_behaviour_wins_the_loop_back():
    f = jitted(short_sum)
    run_until_not_paying(f, (4,))
    # now the loop's trip count is long: after the back-off, one window that pays puts it back for good
    for _ in range(FIRST_BACKOFF + PAY_WINDOW):
        assert f(2000) == short_sum(2000)
    s = jit.stats(f)
    assert s["not_paying_loops"] == []
    entries = s["native_entries"]
    for _ in range(5):
        f(2000)
    assert jit.stats(f)["native_entries"] == entries + 5


def test_a_while_loop_with_few_iterations_goes_back_to_cpython():
    f = jitted(digits)
    for n in range(1, 200):
        assert f(n * 7919) == digits(n * 7919)
    assert jit.stats(f)["not_paying_loops"] == [digits.__code__.co_firstlineno + 2]


def test_an_inner_loop_run_by_its_outer_tree_is_judged_with_it():
    """A short inner loop inside a long outer loop: the hand-off is the outer loop's, and it pays."""
    f = jitted(nested_sum)
    for _ in range(3 * PAY_WINDOW):
        assert f(100, 3) == nested_sum(100, 3)
    assert jit.stats(f)["not_paying_loops"] == []


@pytest.mark.parametrize("unroll", [4, 0])
def test_a_short_outer_loop_with_its_short_inner_loop_unrolled_is_judged_by_all_its_iterations(unroll):
    """100 outer iterations (fewer than min_native_iterations=192) of 3 inner ones: with the inner loop
    unrolled into the outer trace, its visits count as its tree's would (101 + 100 * 4 per entry): it pays."""
    f = jitted(nested_sum, unroll_max_trips=unroll)
    for _ in range(3 * PAY_WINDOW):
        assert f(100, 3) == nested_sum(100, 3)
    assert _calls_no_tree(f, OUTER_LINE) == (unroll > 0)
    assert jit.stats(f)["not_paying_loops"] == []
    entries = jit.stats(f)["native_entries"]
    f(100, 3)
    assert jit.stats(f)["native_entries"] == entries + 1


def test_a_short_outer_loop_with_a_short_unrolled_inner_loop_that_does_not_pay_goes_back_to_cpython():
    """The count is of iterations native code ran, unrolled or not: 21 + 20 * 3 per entry still does not pay."""
    f = jitted(nested_sum, unroll_max_trips=4)
    run_until_not_paying(f, (20, 2))
    assert _calls_no_tree(f, OUTER_LINE)
    assert jit.stats(f)["not_paying_loops"] == [OUTER_LINE]
    assert "its native code ran 81.0 iterations per entry" in jit.explain(f)


def test_the_interpreter_baseline_has_no_such_policy():
    f = jit(threshold=2, side_exit_threshold=2, interpreter=True)(short_sum)
    for _ in range(4 * PAY_WINDOW):
        assert f(4) == short_sum(4)
    entries = jit.stats(f)["native_entries"]
    f(4)
    assert jit.stats(f)["native_entries"] == entries + 1


def test_option_is_validated():
    with pytest.raises(ValueError, match="min_native_iterations"):
        jit(min_native_iterations=-1)
    with pytest.raises(TypeError, match="min_native_iterations"):
        jit(min_native_iterations=1.5)


# --- loops whose starts are too short to record at all -------------------------------------------------------


def test_a_loop_whose_starts_are_short_in_cpython_is_never_recorded():
    """Counted in CPython before it is hot: a few iterations per start cannot pay for a native entry, so the loop
    goes back to CPython unrecorded (nothing compiled, no monitor even), with the back-off of loops that do not
    pay, and is parked in the end."""
    f = jit(digits)  # (the default threshold: the loop is hot after many starts)
    gc.disable()  # (collections are the parking clock: none may wake the loop before the stats are read)
    try:
        for n in range(3000):
            assert f(n) == digits(n)
        s = jit.stats(f)
    finally:
        gc.enable()
    assert s["traces_compiled"] == 0 and s["native_entries"] == 0 and s["aborts_total"] == 0
    line = digits.__code__.co_firstlineno + 2
    assert s["not_paying_loops"] == [line]
    assert s["parked_loops"] == [line]
    assert "iterations each in CPython, fewer than would pay for entering native code" in jit.explain(f)


def test_a_loop_with_long_starts_is_recorded_as_before():
    f = jit(short_sum)
    for _ in range(3):
        assert f(1000) == short_sum(1000)
    assert jit.stats(f)["traces_compiled"] >= 1 and jit.stats(f)["native_entries"] >= 1


def test_short_starts_are_recorded_with_the_option_off():
    f = jit(min_native_iterations=0)(digits)
    for n in range(300):
        assert f(n * 7919) == digits(n * 7919)
    assert jit.stats(f)["traces_compiled"] >= 1 and jit.stats(f)["not_paying_loops"] == []


def test_a_loop_found_short_in_cpython_is_won_back_by_long_starts():
    f = jit(short_sum)
    for _ in range(40):
        assert f(3) == short_sum(3)
    assert jit.stats(f)["not_paying_loops"] and jit.stats(f)["traces_compiled"] == 0
    for _ in range(FIRST_BACKOFF + 4):  # the back-off, then counting again: the starts are long now
        assert f(5000) == short_sum(5000)
    s = jit.stats(f)
    assert s["traces_compiled"] >= 1 and s["native_entries"] >= 1


def test_an_inner_loop_with_short_starts_is_still_recorded():
    """Its tree pays inside the outer loop's tree, which calls it: a warm call enters native code once."""
    f = jit(nested_sum)
    for _ in range(6):
        assert f(300, 3) == nested_sum(300, 3)
    before = jit.stats(f)["native_entries"]
    assert f(300, 3) == nested_sum(300, 3)
    s = jit.stats(f)
    assert s["native_entries"] - before == 1 and s["not_paying_loops"] == []


def alternating(n):
    s = 0
    for i in range(n):
        if i % 2:
            s += 1
        else:
            s -= 3
    return s


def test_one_hand_off_of_many_short_entries_is_judged_at_once():
    """Without side traces (max_side_traces=0), every other iteration leaves native code: one hand-off makes
    hundreds of native entries of two iterations each, enough (PAY_ENTRIES) to send the loop back to CPython
    after it, without waiting for PAY_WINDOW hand-offs."""
    f = jitted(alternating, max_side_traces=0)
    calls = run_until_not_paying(f, (1000,))
    assert calls <= 3
    assert jit.stats(f)["native_entries"] >= PAY_ENTRIES


def list_sum(rows, k, n):
    check = 0
    for j in range(n):
        check += rows[k][j]
    return check


def dict_count(words):
    d = {}
    for w in words:
        d[w] = d.get(w, 0) + 1
    return d


def test_an_iteration_of_a_bigger_body_counts_for_more():
    """``s += i`` (5 tier-1 instructions with the jump back) pays from 192 iterations an entry; ``s += i * i % 7``
    (9) from 115, its root trace's weight (5 uops that native code makes cheap: 5/3 of ``s += i``'s 3, less than
    its body's 9/5); ``check += rows[k][j]`` (9) from 107: 150 iterations an entry keep the last two native, not the
    first."""
    from jit.frontend import compile_to_tier1
    from runtime.loop_driver import body_weight

    def plain_sum(n):
        s = 0
        for i in range(n):
            s += i
        return s

    assert body_weight(compile_to_tier1(plain_sum), 0) == 1.0
    assert body_weight(compile_to_tier1(short_sum), 0) == 9 / 5
    assert body_weight(compile_to_tier1(list_sum), 0) == 9 / 5
    # (an outer loop's iterations include its inner loop's: its weight is the smaller of its own body's and theirs)
    nest = compile_to_tier1(nested_sum)
    assert body_weight(nest, 1) == 7 / 5 and body_weight(nest, 0) == 1.0
    rows = [list(range(300))] * 3
    for func, args, pays in ((plain_sum, (150,), False), (short_sum, (150,), True), (list_sum, (rows, 1, 150), True)):
        f = jitted(func)
        for _ in range(3 * PAY_WINDOW):
            assert f(*args) == func(*args)
        assert (jit.stats(f)["not_paying_loops"] == []) == pays, func.__name__


def test_an_iteration_counts_for_what_its_trace_saves():
    """``d[w] = d.get(w, 0) + 1``: 11 tier-1 instructions with the jump back (11/5 by its body), but native code
    does its dict lookup and store as CPython does (a quarter of its cost saved, where ``s += i`` saves nearly all):
    its root trace's uops but those and the guards (5: the list's step, the unboxing, the add, the jump back) make its
    weight 5/3, so it pays from 115 iterations an entry, not 87: 100 go back to CPython, 140 stay native."""
    from jit.frontend import compile_to_tier1
    from runtime.loop_driver import body_weight

    assert body_weight(compile_to_tier1(dict_count), 0) == 11 / 5
    for n, pays in ((100, False), (140, True)):
        words = [str(i % 7) for i in range(n)]
        f = jitted(dict_count)
        for _ in range(3 * PAY_WINDOW):
            assert f(words) == dict_count(words)
        assert (jit.stats(f)["not_paying_loops"] == []) == pays, n
        if not pays:
            assert "(min_native_iterations=192, 115 for this loop's body)" in jit.explain(f)


def test_window_counts_inline_hand_offs_as_judge_counted_them():
    # loop counts a hand-off of one native entry inline (room and iterations only) while the window has room;
    # judge's count adds them to the hand-offs and entries: at every step, the same windows, ended at the same
    # hand-offs with the same figures, as counting each hand-off in full ([hand-offs, entries, iterations])
    rng = random.Random(7)
    for _ in range(200):
        window, full, ends = _Window(), [0, 0, 0], []
        for step in range(300):
            entries, iterations = rng.choice((1, 1, 1, rng.randint(1, 40))), rng.randint(0, 9)
            if rng.random() < 0.02:
                window.reset()
                full = [0, 0, 0]
                continue
            full = [full[0] + 1, full[1] + entries, full[2] + iterations]
            expected = full[0] >= PAY_WINDOW or full[1] >= PAY_ENTRIES
            if entries == 1 and window.room:  # (loop's inline count: never where the full count ends the window)
                assert not expected
                window.room -= 1
                window.iterations += iterations
                continue
            assert window.count(entries, iterations) == expected
            if expected:
                assert (window.handoffs, window.entries, window.iterations) == tuple(full)
                ends.append(step)
                window.reset()
                full = [0, 0, 0]
        assert ends  # (windows ended along the way)
