"""Threads sharing one jitted function: each gets CPython's result, while one of them records and compiles a
trace (LLVM runs without the GIL) and the others interpret, then enter the compiled code.
"""

import sys
import threading

import pytest

from jit import jit

THREADS = 8
JOIN_TIMEOUT = 60.0


def kernel(n, k):
    total = 0
    x = 0.5
    for i in range(n):
        total += (i * k) % 7 - 3
        x = x * 0.75 + i / (k + 1)
    return total, x


def overflowing(n, start):
    total = start
    for i in range(n):
        total += i * i
    return total


def branchy(n, flip):
    total = 0
    for i in range(n):
        if i < flip:
            total += i
        else:
            total -= 3
    return total


def typed(values):
    total = values[0] * 0
    for v in values:
        total += v * 2
    return total


def nested(n, k):
    total = 0
    for i in range(n):
        for j in range(k):
            total += i ^ j
    return total


@pytest.fixture(autouse=True)
def fast_switching():
    """Switch threads often, so they interleave inside the interpreter as much as possible."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


def run_threads(target, args_per_thread):
    """Start one thread per argument list at once (a barrier), each calling target on its arguments in order;
    return each thread's results, or re-raise the first failure."""
    barrier = threading.Barrier(len(args_per_thread))
    results = [None] * len(args_per_thread)
    errors = []

    def work(index, calls):
        try:
            barrier.wait(timeout=JOIN_TIMEOUT)
            results[index] = [target(*args) for args in calls]
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k, calls), daemon=True) for k, calls in enumerate(args_per_thread)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_TIMEOUT)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise errors[0]
    return results


def jitted(func, **options):
    # (these tests count native entries: short loops must keep being entered)
    options = {"min_native_iterations": 0, **options}
    return jit(threshold=2, side_exit_threshold=2, **options)(func)


def assert_native(f):
    s = jit.stats(f)
    assert s["traces_compiled"] >= 1 and s["native_entries"] >= 1, s


@pytest.mark.parametrize("repeat", range(3))
def test_threads_share_one_function(repeat):
    f = jitted(kernel)
    calls = [[(300 + 7 * t + r, t + 1) for r in range(5)] for t in range(THREADS)]
    # all threads at once on a function not compiled yet: they race to record its loop
    results = run_threads(f, calls)
    for thread_calls, thread_results in zip(calls, results):
        assert thread_results == [kernel(*args) for args in thread_calls]
    assert_native(f)
    # compiled now: every call of every thread enters native code
    entries = jit.stats(f)["native_entries"]
    results = run_threads(f, calls)
    for thread_calls, thread_results in zip(calls, results):
        assert thread_results == [kernel(*args) for args in thread_calls]
    assert jit.stats(f)["native_entries"] >= entries + THREADS * 5


def test_threads_record_a_loop_once():
    """Regression: the loop's recording flag was cleared before compiling, and LLVM runs without the GIL, so
    every thread reaching the header meanwhile recorded and compiled the same root trace again."""
    counts = []
    for _ in range(3):
        f = jitted(kernel)
        run_threads(f, [[(300, t + 1)] for t in range(THREADS)])
        counts.append(jit.stats(f)["root_traces"])
    assert counts == [1, 1, 1]


def test_one_thread_compiles_while_others_enter():
    """The root trace is compiled; one thread takes a new branch (its side trace records and compiles, LLVM
    without the GIL) while the others keep entering the root tree."""
    f = jitted(branchy)
    assert f(500, 500) == branchy(500, 500)
    assert_native(f)
    entries_before = jit.stats(f)["native_entries"]
    started = threading.Event()
    results = {}

    def compiler():
        started.set()
        results["compiler"] = [f(3000, k) for k in (1000, 2000, 1500)]

    def enterer(t):
        started.wait(JOIN_TIMEOUT)
        results[t] = [f(200 + t, 10**6) for _ in range(30)]

    threads = [threading.Thread(target=compiler, daemon=True)]
    threads += [threading.Thread(target=enterer, args=(t,), daemon=True) for t in range(THREADS - 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_TIMEOUT)
    assert not any(t.is_alive() for t in threads)
    assert results["compiler"] == [branchy(3000, k) for k in (1000, 2000, 1500)]
    for t in range(THREADS - 1):
        assert results[t] == [branchy(200 + t, 10**6)] * 30
    s = jit.stats(f)
    assert s["side_traces"] >= 1, s
    assert s["native_entries"] >= entries_before + 3 + 30 * (THREADS - 1)


@pytest.mark.parametrize(
    "func, make_args",
    [
        (overflowing, lambda t: (400, 2**63 - 10**9 * (t + 1) ** 3)),  # overflows mid-loop in some threads
        (branchy, lambda t: (600, 100 * t)),  # the branch flips at a different point in each thread
        (nested, lambda t: (30 + t, 20 + 2 * t)),
    ],
    ids=["overflow", "branch", "nested"],
)
def test_threads_taking_different_exits(func, make_args):
    f = jitted(func)
    calls = [[make_args(t)] * 4 for t in range(THREADS)]
    results = run_threads(f, calls)
    for thread_calls, thread_results in zip(calls, results):
        assert thread_results == [func(*args) for args in thread_calls]
    assert_native(f)


def test_threads_with_different_kinds():
    f = jitted(typed)
    data = {
        "int": list(range(200)),
        "float": [k * 0.5 for k in range(200)],
        "bool": [k % 3 == 0 for k in range(200)],
        "mixed": list(range(100)) + [k * 0.25 for k in range(100)],
    }
    kinds = sorted(data)
    calls = [[(data[kinds[(t + r) % len(kinds)]],) for r in range(6)] for t in range(THREADS)]
    results = run_threads(f, calls)
    for thread_calls, thread_results in zip(calls, results):
        expected = [typed(*args) for args in thread_calls]
        assert [(type(v), v) for v in thread_results] == [(type(v), v) for v in expected]
    assert_native(f)
    assert len(jit.stats(f)["trees"]) >= 2  # int and float entry kinds


def divide(n, zero_at):
    total = 0
    for i in range(n):
        total += 100 // (i - zero_at)
    return total


def test_threads_raise_their_own_errors():
    f = jitted(divide)

    def call(n, zero_at):
        try:
            return f(n, zero_at)
        except ZeroDivisionError as exc:
            return str(exc)

    calls = [[(500, 250 if t % 2 else 1000)] * 3 for t in range(THREADS)]
    results = run_threads(call, calls)
    for t, thread_results in enumerate(results):
        if t % 2:
            assert thread_results == ["integer division or modulo by zero"] * 3
        else:
            assert thread_results == [divide(500, 1000)] * 3
    assert_native(f)
