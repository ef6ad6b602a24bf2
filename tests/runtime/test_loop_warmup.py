"""The warm-up of a loop (option ``warmup``, ``runtime.loop_driver.warmup_count``): CPython runs a loop for the
warm-up's worth of iterations before its first hand-off, so that code whose loops run only briefly never pays for
recording and compiling. The suite runs with ``TRACEJIT_WARMUP=0`` (tests/conftest.py); these tests pass the option.
Every decision is a count (``jit.stats``), never a time; every result is compared with CPython's."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest
from helpers import define

import jit as jit_module
from jit import jit
from jit.api import state_of
from jit.frontend.instrument import COUNT_BY_LENGTH, WARMUP_SKIP
from jit.options import DEFAULT_WARMUP, Options
from runtime.loop_driver import LONGEST_COUNT, WARMUP_CHECK, warmup_count

SUM = """
def total(n):
    s = 0
    for i in range(n):
        s += i
    return s
"""

# the same loop with a body nine times as big
BIG = """
def total(n):
    s = 0
    for i in range(n):
        s += i
        s += i
        s += i
        s += i
        s += i
        s += i
        s += i
        s += i
        s += i
    return s
"""

NEST = """
def nest(n, m):
    s = 0
    for i in range(n):
        for j in range(m):
            s += i * j
    return s
"""

COMPREHENSION = """
def squares(n):
    return [i * i for i in range(n)]
"""


def calls_to_first_handoff(f, plain, arg, limit):
    """Call f(arg) until CPython first hands a loop over; the number of calls (each result checked)."""
    for calls in range(1, limit + 1):
        assert f(arg) == plain(arg)
        if jit_module.stats(f)["handoffs"]:
            return calls
    return None


def test_a_loop_is_handed_over_only_after_its_warm_up():
    plain = define(SUM, "total")
    f = jit(warmup=20_000)(plain)
    for _ in range(19):  # 19000 iterations: still warming up
        assert f(1000) == plain(1000)
    stats = jit_module.stats(f)
    assert stats["handoffs"] == 0 and stats["traces_compiled"] == 0
    assert stats["warming_loops"] == [4]
    assert "CPython counts its warm-up (option warmup=20000): hot in 1000 iterations" in jit_module.explain(f)
    for _ in range(3):
        assert f(1000) == plain(1000)
    stats = jit_module.stats(f)
    assert stats["handoffs"] > 0 and stats["traces_compiled"] >= 1 and stats["native_entries"] >= 1
    assert stats["warming_loops"] == []
    assert "warm-up" not in jit_module.explain(f)


def test_without_warm_up_the_threshold_alone_decides():
    plain = define(SUM, "total")
    f = jit(warmup=0)(plain)
    assert f(1000) == plain(1000)
    stats = jit_module.stats(f)
    assert stats["handoffs"] == 1 and stats["traces_compiled"] >= 1 and stats["warming_loops"] == []


def test_a_threshold_above_the_warm_up_wins():
    plain = define(SUM, "total")
    f = jit(warmup=100, threshold=500)(plain)
    assert f(400) == plain(400)
    assert jit_module.stats(f)["handoffs"] == 0
    assert f(400) == plain(400)
    assert jit_module.stats(f)["handoffs"] == 1
    assert jit_module.stats(f)["warming_loops"] == []  # (a count no longer than the threshold is no warm-up)


def test_an_iteration_of_a_bigger_body_counts_for_more():
    small, big = define(SUM, "total"), define(BIG, "total")
    calls_small = calls_to_first_handoff(jit(warmup=30_000)(small), small, 500, 100)
    calls_big = calls_to_first_handoff(jit(warmup=30_000)(big), big, 500, 100)
    assert calls_small == 60  # 30000 iterations of the smallest body: the 60th call ran the last of them
    assert calls_big is not None and calls_big <= calls_small // 5


def test_warmup_count_follows_the_option_and_its_limits():
    plain = define(SUM, "total")
    for warmup, expected in ((0, 64), (10, 64), (64, 64), (5000, 5000), (2**40, LONGEST_COUNT)):
        f = jit(warmup=warmup)(plain)
        f(1)  # (the instrumented code and its runtime are made at the first call)
        state = state_of(f)
        assert warmup_count(state, state.code.loops[0]) == expected
        # (a loop with no loop in it counts WARMUP_CHECK first, then the rest; the first call ran one iteration)
        runtime = state.loop_runtime
        assert runtime.counters[0] == min(expected, WARMUP_CHECK) - 1
        assert runtime.warmup_left[0] == max(expected - WARMUP_CHECK, 0)


def test_an_outer_loop_gets_hot_once_its_inner_loop_runs_natively():
    plain = define(NEST, "nest")
    f = jit(warmup=50_000)(plain)
    for _ in range(30):
        assert f(100, 100) == plain(100, 100)  # (each call: 10000 inner iterations, 100 outer ones)
    state = state_of(f)
    loops = state.monitor.loops
    assert loops[0] is not None and loops[0].trees, jit_module.explain(f)  # the outer loop has a tree of its own
    assert loops[1] is not None and loops[1].trees
    stats = jit_module.stats(f)
    assert stats["warming_loops"] == []
    before = stats["native_iterations"]
    assert f(100, 100) == plain(100, 100)
    assert jit_module.stats(f)["native_iterations"] - before >= 100 * 100


def test_a_comprehension_warms_up_too():
    plain = define(COMPREHENSION, "squares")
    f = jit(warmup=20_000)(plain)
    assert f(1000) == plain(1000)
    state = state_of(f)
    count = warmup_count(state, state.code.loops[0])
    assert 64 < count < 20_000  # (a comprehension's iteration is worth more than the smallest body's)
    assert jit_module.stats(f)["warming_loops"] == [3]
    # hot in the call that runs its count's last iteration, handed over at the next one's start; the check of its
    # starts (WARMUP_CHECK) lets CPython build up to two of its calls uncounted
    calls = calls_to_first_handoff(f, plain, 1000, 100) + 1
    assert -(-count // 1000) + 1 <= calls <= -(-count // 1000) + 3
    assert jit_module.stats(f)["warming_loops"] == []


def test_a_loop_whose_starts_are_short_is_judged_at_its_warm_up_check():
    source = """
def first(xs):
    for x in xs:
        if x:
            return x
    return None
"""
    plain = define(source, "first")
    f = jit(warmup=100_000)(plain)
    xs = [0, 0, 7, 1]
    for _ in range(WARMUP_CHECK // 3 + 2):  # three iterations a start: the check's count ends
        assert f(xs) == plain(xs)
    state = state_of(f)
    runtime = state.loop_runtime
    # too short for native entries to pay: back to CPython's plain copy now, not after 100000 counted iterations
    assert runtime.counters[0] < 0 and runtime.not_paying[0] is not None
    assert jit_module.stats(f)["warming_loops"] == [] and jit_module.stats(f)["traces_compiled"] == 0
    # starts of 61 iterations: after its back-off the loop counts enough of them to be judged by them again, not
    # recorded after a start or two (it was, and its native entries judged: a compile wasted)
    g = jit(warmup=100_000)(plain)
    medium = [0] * 60 + [2]
    for _ in range(400):
        assert g(medium) == plain(medium)
    assert jit_module.stats(g)["traces_compiled"] == 0
    assert 55 <= state_of(g).loop_runtime.not_paying[0] <= 70  # (iterations counted per start: about 61)
    long = [0] * 5000 + [3]
    for _ in range(4):
        assert f(long) == plain(long)
    assert runtime.warming[0] is False


def run_out_charges(runtime, index, start):
    """Call start(), which starts loop `index` once, until no charge ahead is due (its last start was counted: the
    next one charges ahead) and the starts charged ahead have run; each of those changes no count."""
    if runtime.began[index] > runtime.counters[index]:
        start()
    while runtime.skips[index]:
        before = runtime.counters[index]
        start()
        assert runtime.counters[index] == before


def test_a_warming_start_counts_its_length_hint_at_once():
    source = """
def until_negative(xs):
    s = 0
    for x in xs:
        if x < 0:
            break
        s += x
    return s
"""
    plain = define(source, "until_negative")
    f = jit(warmup=200_000)(plain)
    xs = list(range(600))
    for _ in range(2):  # (the warm-up's check: the first COUNT_BY_LENGTH iterations, counted one by one)
        assert f(xs) == plain(xs)
    runtime = state_of(f).loop_runtime
    assert runtime.warming[0] and runtime.counters[0] > COUNT_BY_LENGTH

    def counted(make):
        before = runtime.counters[0]
        assert f(make()) == plain(make())
        return before - runtime.counters[0]

    def settle():
        run_out_charges(runtime, 0, lambda: counted(lambda: xs))

    settle()
    assert counted(lambda: xs) == 600  # by its length hint, at its start
    # (the next start is charged that length for itself and the starts after it, which run plain: next test)
    assert counted(lambda: (x for x in xs[:20])) == 600 * (1 + runtime.skips[0])
    settle()
    assert counted(lambda: [5, -1] + xs) == 602  # a start that breaks early counts for its whole length
    settle()
    assert counted(lambda: iter(xs)) == 600  # (a list iterator has a hint too)
    settle()
    assert counted(lambda: (x for x in xs[:300])) == 300  # no hint: one by one
    assert counted(lambda: (x for x in xs[:20])) == 300 * (1 + runtime.skips[0])
    settle()
    assert counted(lambda: (x for x in xs[:30])) == 30
    assert counted(lambda: xs) == 30 * (1 + runtime.skips[0])  # (charged: not by its own hint)
    assert jit_module.stats(f)["handoffs"] == 0


UNTIL_STOP = """
def until_stop(rows, stop, log):
    found = []
    for row in rows:
        for j, x in enumerate(row):
            if x == stop:
                found.append(j)
                break
            if x < 0:
                continue
            log.append(10 // x)
        else:
            found.append(-1)
    return found
"""

UNTIL_STOP_WHILE = """
def until_stop(rows, stop, log):
    found = []
    for row in rows:
        j = 0
        while j < len(row):
            x = row[j]
            j += 1
            if x == stop:
                found.append(j)
                break
            if x < 0:
                continue
            log.append(10 // x)
        else:
            found.append(-1)
    return found
"""


@pytest.mark.parametrize("source", [UNTIL_STOP, UNTIL_STOP_WHILE], ids=["enumerate", "while"])
def test_a_start_counted_one_by_one_charges_the_next_starts_ahead(source):
    """Past the warm-up's check, once the counted copy counted a start of a loop with no loop in it one by one (no
    length hint), the next start charges that length for itself and the next WARMUP_SKIP - 1 to 2 * WARMUP_SKIP - 2
    starts at once (``RT.skips``), and they run CPython's plain copy: the count goes down by that many lengths, and
    those starts change no count. Results, what the loops append, `break`, `continue`, `else`, `return` and
    exceptions are CPython's throughout."""
    plain = define(source, "until_stop")
    f = jit(warmup=400_000)(plain)
    rows = [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10] for _ in range(4)]
    for _ in range(WARMUP_CHECK // 40 + 2):  # (the warm-up's check: its first iterations, counted one by one)
        assert f(rows, 0, []) == plain(rows, 0, [])
    runtime = state_of(f).loop_runtime
    inner = 1
    assert runtime.warming[inner] and runtime.counters[inner] > COUNT_BY_LENGTH

    def run(rows, stop):
        mine, theirs = [], []
        assert (f(rows, stop, mine), mine) == (plain(rows, stop, theirs), theirs)

    run_out_charges(runtime, inner, lambda: run([[1]], 0))
    before, started = runtime.counters[inner], runtime.starts[inner]
    run([[5, -1, 7, 3, 9]], 7)  # counted one by one: 3 iterations (break at the third)
    assert before - runtime.counters[inner] == 3 and runtime.starts[inner] == started + 1
    assert runtime.skips[inner] == 0
    run([[2, -3, 5, 2, 1] * 3], 1)  # charged 3 for itself and the starts after it: plain
    charged = runtime.skips[inner] + 1
    assert WARMUP_SKIP <= charged < 2 * WARMUP_SKIP
    assert before - runtime.counters[inner] == 3 * (1 + charged)
    assert runtime.starts[inner] == started + 1 + charged
    after = runtime.counters[inner], runtime.starts[inner]
    for k in range(charged - 2):  # plain starts (one a call): break, continue, else, no count
        run([[2, -3, 5, 2, 1] * (k + 1)], 1 if k % 2 else 9)
        assert runtime.skips[inner] == charged - 2 - k
    with pytest.raises(ZeroDivisionError):  # (the last: an exception)
        f([[3, 0, 1]], 9, [])
    assert runtime.skips[inner] == 0 and (runtime.counters[inner], runtime.starts[inner]) == after
    with pytest.raises(ZeroDivisionError):  # counted again: an exception in its third iteration, counted
        f([[3, 3, 0]], 9, [])
    assert runtime.counters[inner] == after[0] - 3
    run([[2, 2, 2, 2]], 9)  # charged 3 again
    assert runtime.counters[inner] == after[0] - 3 * (2 + runtime.skips[inner])
    assert jit_module.stats(f)["handoffs"] == 0


@pytest.mark.parametrize("source", [UNTIL_STOP, UNTIL_STOP_WHILE], ids=["enumerate", "while"])
def test_a_loop_whose_starts_are_charged_ahead_gets_hot_in_time(source):
    """Charging starts ahead only saves counting: the loop is handed over after about its warm-up's worth of
    iterations, as when every start was counted, and then runs native code."""
    plain = define(source, "until_stop")
    f = jit(warmup=150_000)(plain)
    state = state_of(f)
    rows = [list(range(1, 30)) + [0] + [5] * k for k in range(40)]  # 30 iterations a start: 1200 a call
    count = None
    for calls in range(1, 400):
        mine, theirs = [], []
        assert (f(rows, 0, mine), mine) == (plain(rows, 0, theirs), theirs)
        if count is None:
            count = warmup_count(state, state.code.loops[1])
        if jit_module.stats(f)["native_entries"]:
            break
    assert count is not None and count > 10 * COUNT_BY_LENGTH
    assert count // 1200 <= calls <= count // 1200 + 3, (calls, count)
    assert 1 not in [line - 3 for line in jit_module.stats(f)["warming_loops"]]


WHILE_COUNTED = """
def steps(xs, stop, log):
    i = 0
    s = 0
    while (log.append(i) or i) < len(xs):
        x = xs[i]
        i += 1
        if x == stop:
            break
        if x < 0:
            continue
        s += 10 // x
    else:
        s = -s
    return s, i
"""


@pytest.mark.parametrize("threshold", [1, 2, 3, 7, 64])
def test_a_while_loops_counted_copy_counts_each_iteration_and_keeps_cpythons_order(threshold):
    """The counted copy of a `while` loop counts with an iterator (``jit.frontend.instrument``'s `_WHILE`): its
    test runs once per iteration where CPython's does (the log), `continue`, `break` and `else` as written, an
    exception in the body leaves with the count so far; the iteration after the last counted one hands off."""
    plain = define(WHILE_COUNTED, "steps")
    f = jit(warmup=0, threshold=threshold)(plain)
    assert f([], 0, []) == (0, 0)
    runtime = state_of(f).loop_runtime
    for xs, stop in [([], 0), ([3, -1, 4], 0), ([3, -1, 4, 1, 5], 4), ([2, 0, 5], 9), ([1] * 70, 0), ([5] * 9, 5)]:
        for _ in range(3):
            before, started = runtime.counters[0], runtime.starts[0]
            handoffs = jit_module.stats(f)["handoffs"]
            mine, theirs = [], []
            try:
                got = f(xs, stop, mine)
            except ZeroDivisionError as e:
                got = ("raised", str(e))
            try:
                want = plain(xs, stop, theirs)
            except ZeroDivisionError as e:
                want = ("raised", str(e))
            assert (got, mine) == (want, theirs), (xs, stop)
            if before > 0 and jit_module.stats(f)["handoffs"] == handoffs:  # counted in CPython, no hand-off
                bodies = sum(1 for i in theirs if i < len(xs))  # (the iterations whose test was true)
                assert before - runtime.counters[0] == bodies, (xs, stop, before, runtime.counters[0])
                assert runtime.starts[0] == started + 1


def test_results_while_warming_up_are_cpythons():
    source = """
def mixed(xs):
    total = 0
    for x in xs:
        total += x // 3 if type(x) is int else x * 0.5
    return total
"""
    plain = define(source, "mixed")
    f = jit(warmup=2_000)(plain)
    data = [2**62, -7, 3.5, -0.0, 10**20, 1]
    for k in range(600):
        xs = data[k % 3 :] * 3
        assert repr(f(xs)) == repr(plain(xs))


def test_the_default_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("TRACEJIT_WARMUP", "1234")
    assert Options().warmup == 1234
    monkeypatch.setenv("TRACEJIT_WARMUP", "")
    assert Options().warmup == DEFAULT_WARMUP
    monkeypatch.setenv("TRACEJIT_WARMUP", "lots")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert Options().warmup == DEFAULT_WARMUP
    assert any("TRACEJIT_WARMUP='lots'" in str(w.message) for w in caught)
    assert Options(warmup=7).warmup == 7  # the option itself wins


def test_the_suite_runs_without_warm_up_unless_told():
    assert Options().warmup == int(os.environ["TRACEJIT_WARMUP"])  # (tests/conftest.py: 0 unless set outside)


@pytest.mark.parametrize("value", [-1, 1.5, True])
def test_a_bad_warmup_is_refused(value):
    with pytest.raises((TypeError, ValueError), match="warmup"):
        jit(warmup=value)


def warm_up_in_a_fresh_process(env: dict[str, str]) -> list[str]:
    """A loop of 20000 iterations called once in a fresh process with env: its hand-offs, traces compiled and
    warming loops, and the default warm-up."""
    code = f"""
import linecache, sys
source = {SUM!r}
linecache.cache["<warm>"] = (len(source), None, source.splitlines(True), "<warm>")
ns = {{}}
exec(compile(source, "<warm>", "exec"), ns)
import jit
f = jit.jit(ns["total"])
assert f(20000) == sum(range(20000))
stats = jit.stats(f)
print(stats["handoffs"], stats["traces_compiled"], stats["warming_loops"], jit.options.Options().warmup)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_the_warm_up_set_by_the_environment_in_a_fresh_process():
    # TRACEJIT_WARMUP=1000000: a loop of 20000 iterations called once stays in CPython
    assert warm_up_in_a_fresh_process(dict(os.environ, TRACEJIT_WARMUP="1000000")) == ["0", "0", "[4]", "1000000"]


def test_the_default_warm_up_in_a_fresh_process():
    # without the suite's TRACEJIT_WARMUP=0: the default, which keeps such a loop in CPython too
    assert DEFAULT_WARMUP > 20000
    env = {k: v for k, v in os.environ.items() if k != "TRACEJIT_WARMUP"}
    assert warm_up_in_a_fresh_process(env) == ["0", "0", "[4]", str(DEFAULT_WARMUP)]


SEARCH = """
def search(rows, want, depth):
    hits = 0
    for row in rows:
        for k, x in enumerate(row):
            if x == want:
                if depth and k % 3 == 0:
                    hits += search(rows[:2], want + 1, depth - 1)[0]
                elif k % 5 == 4:
                    return hits, k
                hits += 1
                break
            if x < 0:
                raise ValueError(f"negative at {k}")
    return hits, -1
"""


def test_starts_charged_ahead_keep_cpythons_results_with_return_raise_and_recursion():
    """Through the warm-up's charged starts (a recursive call's loop starts share the counts of its caller's), every
    call returns or raises what CPython does, and the loop is native in the end."""
    plain = define(SEARCH, "search")
    f = jit(warmup=30_000)(plain)
    runtime = None
    charged = 0
    for call in range(300):
        rows = [[(call * 7 + r * 3 + k) % 23 - (call % 50 == 49) for k in range(12 + r % 9)] for r in range(9)]
        args = (rows, call % 17, call % 3)
        try:
            want = ("ok", plain(*args))
        except ValueError as e:
            want = ("raised", str(e))
        try:
            got = ("ok", f(*args))
        except ValueError as e:
            got = ("raised", str(e))
        assert got == want, (call, args)
        runtime = state_of(f).loop_runtime
        charged += runtime.skips[1] > 0
    assert charged >= 5, charged  # (calls that ended with starts charged ahead: 12 here)
    assert jit_module.stats(f)["native_entries"] > 0, jit_module.explain(f)
