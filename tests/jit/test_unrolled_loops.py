"""Short inner range loops recorded through, unrolled into the outer loop's trace (``Recorder.unroll``): a
range of at most ``unroll_max_trips`` iterations, constant start and step, a bound that is a constant or a
variable the outer loop leaves unchanged. Differential tests against CPython (arrays of every layout the
kernels meet: views, negative strides, aliasing, zero-size; another trip count at run time; a bound the outer
loop changes; a `break`; ints past 64 bits in an unrolled iteration), each asserting through jit.stats that the
outer loop ran natively without calling a tree of the inner loop where it was unrolled."""

from __future__ import annotations

import pytest
from helpers import check as _check
from helpers import define

import jit as jit_module
from jit.aborts import Reason

SOURCE = """
def pairs(points, out):
    n, d = points.shape[0], points.shape[1]
    for i in range(n):
        for j in range(n):
            s = 0.0
            for k in range(d):
                t = points[i, k] - points[j, k]
                s += t * t
            out[i, j] = s
    return out[n - 1, 0] if n else 0.0


def weights(xs, d):
    total = 0
    for x in xs:
        for k in range(d):
            total += x * (k + 1)
    return total


def triangle(n):
    total = 0
    for j in range(n):
        for k in range(j):
            total += k * j + 1
    return total


def growing(n):
    total = 0
    m = 1
    for j in range(n):
        for k in range(m):
            total += k + j
        m = 3 - m
    return total


def first_big(xs, d):
    hits = 0
    for x in xs:
        for k in range(d):
            if x * (k + 1) > 10:
                hits += k
                break
    return hits


def wide(xs):
    total = 0
    for x in xs:
        for k in range(3):
            total += x * 2**40 + k
    return total
"""


def check(func, *calls, options=None, native=None):
    """helpers.check with unrolling on (unroll_max_trips=4, the default, whatever the tests' options say)."""
    return _check(func, *calls, options={"unroll_max_trips": 4, **(options or {})}, native=native)


def _outer_tree(jitted, line_of):
    """The trees of the loop at line line_of (of the jitted function) and the trees they call."""
    stats = jit_module.stats(jitted)
    return [tree for tree in stats["trees"] if tree["loop_line"] == line_of]


def _unrolled(jitted, outer_line: int) -> bool:
    """The outer loop at outer_line ran natively and its root traces call no tree (its inner loop was recorded
    through; a side trace from inside an unrolled iteration may call the inner loop's tree for the rest)."""
    trees = _outer_tree(jitted, outer_line)
    roots = [trace for tree in trees for trace in tree["traces"] if trace["kind"] == "root"]
    return any(t["native_iterations"] > 0 for t in trees) and bool(roots) and all(not t["calls"] for t in roots)


def _line(func, text: str) -> int:
    import inspect

    lines, start = inspect.getsourcelines(func)
    return start + next(k for k, line in enumerate(lines) if text in line)


def test_short_inner_loop_over_python_values_is_unrolled():
    f = define(SOURCE, "weights")
    jitted = check(f, (list(range(60)), 3), (list(range(60)), 0), ([1.5, -2.0] * 30, 4), native=True)
    assert _unrolled(jitted, _line(f, "for x in xs"))


def test_another_trip_count_at_run_time_leaves_through_a_guard():
    f = define(SOURCE, "weights")
    # recorded with 3 trips, then called with 2, 4 and 5 (past the limit: no longer unrolled there)
    jitted = check(
        f, (list(range(60)), 3), (list(range(60)), 2), (list(range(60)), 4), (list(range(60)), 30), native=True
    )
    for variant in (jitted, jitted.cpython_baseline):
        stats = jit_module.stats(variant)
        # (a side trace from inside the unrolled loop's iteration finishes it, then calls the inner loop's tree)
        assert set(stats["aborts_by_code"]) <= {"LOOP_ENDED"}, stats["aborts"]
        assert stats["side_traces"] > 0


def test_ints_past_64_bits_in_an_unrolled_iteration():
    f = define(SOURCE, "wide")
    jitted = check(f, [1, 2, 3] * 20, [2**23, 2**24] * 30, native=True)
    assert jit_module.stats(jitted)["native_entries"] > 0


def test_break_in_an_unrolled_loop():
    f = define(SOURCE, "first_big")
    jitted = check(f, (list(range(40)), 3), ([1, 20, 3, 11] * 10, 4), native=True)
    assert _unrolled(jitted, _line(f, "for x in xs"))


def test_a_bound_the_outer_loop_changes_is_not_unrolled():
    f = define(SOURCE, "growing")
    jitted = check(f, 200, 3, 0, native=True)
    reasons = jit_module.stats(jitted)["aborts_by_code"]
    assert reasons.get(Reason.UNROLLED_BOUND_CHANGES.name, 0) >= 1
    # (the outer loop's trace calls the inner loop's tree once the recording is retried)
    assert any(t["nested_calls"] for t in _outer_tree(jitted, _line(f, "for j in range(n)")))


def test_a_bound_from_the_outer_loops_variable_is_not_unrolled():
    f = define(SOURCE, "triangle")
    jitted = check(f, 100, 5, 0, native=True)
    assert not _unrolled(jitted, _line(f, "for j in range(n)"))


def test_unroll_max_trips_0_calls_the_tree():
    f = define(SOURCE, "weights")
    jitted = check(f, (list(range(300)), 3), options={"unroll_max_trips": 0}, native=True)
    assert not _unrolled(jitted, _line(f, "for x in xs"))


np = pytest.importorskip("numpy")


def _points(n, d=3):
    return ((np.arange(n * d, dtype=np.float64).reshape(n, d) * 7919) % 101) * 0.1


@pytest.mark.parametrize(
    "make",
    [
        lambda: (_points(30), np.zeros((30, 30))),
        lambda: (_points(30)[::-1], np.zeros((30, 30))),  # negative stride
        lambda: (_points(30, 6)[:, ::2], np.zeros((30, 30))),  # a view: non-unit strides, d = 3
        lambda: (_points(30, 6)[:, 3:], np.zeros((30, 30))),  # a view: offset, not C-contiguous
        lambda: (np.asfortranarray(_points(30)), np.zeros((30, 30), order="F")),
        lambda: (_points(0), np.zeros((0, 0))),  # zero-size
        lambda: (_points(30, 0), np.zeros((30, 30))),  # the inner loop has no trips
        lambda: (_points(30, 2), np.zeros((30, 30))),  # 2 trips
        lambda: (_points(30, 5), np.zeros((30, 30))),  # past unroll_max_trips: the inner tree is called
        lambda: (_points(30).astype(np.float32), np.zeros((30, 30), dtype=np.float32)),
        lambda: (np.arange(90, dtype=np.int64).reshape(30, 3) * 2**20, np.zeros((30, 30), dtype=np.int64)),
    ],
    ids=["c", "negative_stride", "strided_view", "offset_view", "fortran", "zero_size", "d0", "d2", "d5", "f32", "i64"],
)
def test_pairs_over_arrays(make):
    f = define(SOURCE, "pairs")
    args = make()
    jitted = check(f, args, native=args[0].shape[0] > 0)
    if args[0].shape[0] > 0 and args[0].shape[1] <= 4:
        assert _unrolled(jitted, _line(f, "for j in range(n)"))


def test_pairs_with_aliasing_arrays():
    """out is a view of the very array the points are read from: every write is seen by later reads."""
    f = define(SOURCE, "pairs")

    def call():
        buffer = _points(40, 10)[:, :]  # rows of 10: points are columns 0..2 of rows 0..9, out overlaps them
        return buffer[:10, :3], buffer[:10, :10]

    points, out = call()
    assert np.shares_memory(points, out)
    jitted = check(f, call())
    assert _unrolled(jitted, _line(f, "for j in range(n)"))


def test_pairs_with_another_trip_count_later():
    f = define(SOURCE, "pairs")
    check(
        f,
        (_points(30), np.zeros((30, 30))),
        (_points(30, 2), np.zeros((30, 30))),
        (_points(30, 4), np.zeros((30, 30))),
        native=True,
    )


LONG = """
def long_body(xs, d):
    total = 0.0
    for x in xs:
        for k in range(d):
            y = x * k + 1.5
            y = y * y - x
            y = y / 3.0 + k
            total += y * 0.5 - x
    return total
"""


def test_an_outer_trace_too_long_unrolled_calls_the_inner_tree():
    """Unrolled, the outer trace is longer than max_trace_length: the recording aborts once, and the next one
    calls the inner loop's tree (as without unrolling) instead of aborting until the loop is blacklisted."""
    f = define(LONG, "long_body")
    jitted = check(f, (list(range(100)), 3), (list(range(50)), 3), options={"max_trace_length": 40}, native=True)
    for variant in (jitted, jitted.cpython_baseline):
        stats = jit_module.stats(variant)
        assert set(stats["aborts_by_code"]) <= {"TOO_LONG", "LOOP_ENDED"}, stats["aborts"]
        assert stats["aborts_by_code"].get("TOO_LONG", 0) <= 1
        assert not stats["blacklisted_loops"]
    assert not _unrolled(jitted, _line(f, "for x in xs"))
    assert any(t["nested_calls"] for t in _outer_tree(jitted, _line(f, "for x in xs")))


TWO = """
def two(n):
    total = 0
    for i in range(n):
        for j in range(2):
            total += (i ^ j) & 3
    return total
"""


def test_an_outer_loop_with_an_unrolled_loop_runs_its_fast_copy():
    """An outer iteration visits the unrolled loop's header 3 times, each counted in the fuel (as the inner
    loop's tree would count it): 4 per iteration, an even step, so the fuel at the loop's top never lands on
    some multiples of the checked copy's events. It still goes on in its fast copy (codegen.function._every),
    whose runs stop before the next periodic check is due (the native iterations are exact)."""
    f = define(TWO, "two")
    jitted = jit_module.jit(threshold=2, min_native_iterations=0, unroll_max_trips=4)(f)
    jitted(1000)
    before = jit_module.stats(jitted)
    assert jitted(100_000) == f(100_000)
    after = jit_module.stats(jitted)
    assert _unrolled(jitted, _line(f, "for i in range(n)"))
    assert after["native_iterations"] - before["native_iterations"] == 100_001 + 100_000 * 3
    roots = [t for tree in _outer_tree(jitted, _line(f, "for i in range(n)")) for t in tree["traces"]]
    # (runs of at most abi.PERIOD / 4 iterations: at least 24 of them, and none if the copy is never entered)
    assert sum(t["fast_runs"] for t in roots) >= 100_000 * 4 // 2**14


NEST_SCRIPT = """
import sys
sys.path.append({tests!r})  # (after the project: tests/jit is not jit)
from helpers import define
import jit

SOURCE = '''
def nest(n, m):
    total = 0
    for i in range(n):
        for j in range(m):
            total += (i ^ j) & 7
    return total
'''
plain = define(SOURCE, "nest")
for m in (0, 1, 2):
    f = jit.jit(unroll_max_trips=4)(define(SOURCE, "nest"))
    for n in range(20_000, 20_010):
        assert f(n, m) == plain(n, m), (n, m)
    stats = jit.stats(f)
    assert stats["native_iterations"] > 10 * 20_000, stats
    print(m, sum(t["fast_runs"] for tree in stats["trees"] for t in tree["traces"]), flush=True)
print("done")
"""


def test_fast_copy_of_a_loop_with_unrolled_headers_hands_back_without_livelock():
    """The benchmark's two-level nest with an inner trip count of 0 or 1, unrolled (fuel per iteration 2 or 3):
    its fast copy is vectorized, so the trace's function goes there at each entry; where the periodic check fell
    due within the first iteration the copy's run had no room and handed the entry back without refusing it, and
    the trace's function sent it there again, forever (a native loop with no progress: the benchmark hung). In a
    subprocess, with a timeout: it must finish, with CPython's results."""
    import subprocess
    import sys
    from pathlib import Path

    script = NEST_SCRIPT.format(tests=str(Path(__file__).resolve().parents[1]))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    assert lines[3] == "done", done.stdout
    # (the fast copies ran: the livelock's path is the one taken)
    assert all(int(line.split()[1]) > 0 for line in lines[:3]), done.stdout
