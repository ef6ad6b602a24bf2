"""The JIT really compiles: ``jit.stats`` and ``jit.explain`` report compiled traces, native entries, exits
per trace, compile times, and the reasons recordings gave up."""

import pytest
from helpers import check

from jit import jit


def options(**extra):
    return {"threshold": 2, "side_exit_threshold": 2, **extra}


# --- simple kernels compile and run natively ---------------------------------------------------------------


def int_sum(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def float_sum(n):
    total = 0.0
    for i in range(n):
        total += i * 0.5
    return total


def while_loop(n):
    i = 0
    acc = 0
    while i < n:
        acc = (acc * 31 + i) % 1000003
        i += 1
    return acc


def list_sum(xs):
    total = 0.0
    for x in xs:
        total += x
    return total


def nested(n):
    total = 0
    for i in range(n):
        for j in range(n):
            total += i ^ j
    return total


KERNELS = [
    (int_sum, (1000,)),
    (float_sum, (1000,)),
    (while_loop, (1000,)),
    (list_sum, ([k * 0.5 for k in range(1000)],)),
    (nested, (40,)),
]


@pytest.mark.parametrize("func, args", KERNELS, ids=lambda v: getattr(v, "__name__", None))
def test_kernel_compiles_and_runs_natively(func, args):
    jitted = check(func, args, native=True)
    s = jit.stats(jitted)
    assert s["traces_compiled"] >= 1
    assert s["root_traces"] >= 1
    assert s["native_entries"] >= 1
    assert s["aborts"] == {}, s["aborts"]
    assert s["trees"], s
    assert all(tree["native_entries"] >= 0 for tree in s["trees"])
    assert sum(tree["native_entries"] for tree in s["trees"]) >= 1


def test_default_threshold_compiles_hot_loops():
    jitted = jit(int_sum)
    assert jitted(10_000) == int_sum(10_000)
    s = jit.stats(jitted)
    assert s["traces_compiled"] >= 1 and s["native_entries"] >= 1


def test_short_loop_does_not_compile():
    jitted = jit(int_sum)  # default threshold: far more back-edges than 5
    assert jitted(5) == int_sum(5)
    s = jit.stats(jitted)
    assert s["traces_compiled"] == 0 and s["native_entries"] == 0


def test_threshold_zero_never_compiles():
    jitted = check(int_sum, 1000, options={"threshold": 0}, native=False)
    s = jit.stats(jitted)
    assert s["traces_compiled"] == 0
    assert "compiling is off" in jit.explain(jitted)


def test_nested_loop_calls_inner_tree():
    jitted = check(nested, 40, native=True)
    s = jit.stats(jitted)
    calls = [c for tree in s["trees"] for t in tree["traces"] for c in t["calls"]]
    symbols = {tree["symbol"] for tree in s["trees"]}
    assert calls and set(calls) <= symbols
    assert any(tree["nested_calls"] for tree in s["trees"])
    assert max(tree["depth"] for tree in s["trees"]) == 2


def test_native_entries_grow_with_calls():
    jitted = jit(**options())(int_sum)
    jitted(100)
    first = jit.stats(jitted)["native_entries"]
    for _ in range(3):
        jitted(100)
    s = jit.stats(jitted)
    assert first >= 1
    assert s["native_entries"] >= first + 3
    assert s["traces_compiled"] == 1  # compiled once, reused
    assert s["calls"] == 0  # (counted by the tier-1 interpreter only, which ran none of them)


def test_calls_counted_in_the_interpreter():
    jitted = jit(**options(), interpreter=True)(int_sum)
    for _ in range(4):
        jitted(100)
    assert jit.stats(jitted)["calls"] == 4


# --- aborts: reasons in stats and explain -----------------------------------------------------------------


def calls_python_function(n):
    total = 0
    for i in range(n):
        total += i is n  # (identity of two unboxed ints: not compiled)
    return total


IDENTITY = "identity (is) of int values"


def test_abort_reason_for_python_call():
    """A loop whose recording aborts says why."""
    jitted = check(calls_python_function, 300, native=False)
    s = jit.stats(jitted)
    assert s["traces_compiled"] == 0
    assert s["aborts_total"] >= 1
    reasons = list(s["aborts"])
    assert any(IDENTITY in reason for reason in reasons), reasons
    assert sum(s["aborts"].values()) == s["aborts_total"]
    text = jit.explain(jitted)
    assert IDENTITY in text
    assert "recordings that gave up" in text


def test_abort_blacklists_after_max_aborts():
    jitted = jit(**options(max_aborts=3))(calls_python_function)
    for _ in range(10):
        assert jitted(200) == calls_python_function(200)
    s = jit.stats(jitted)
    assert s["aborts_total"] == 3
    assert s["blacklisted_loops"] == [calls_python_function.__code__.co_firstlineno + 2]
    assert "blacklisted" in jit.explain(jitted)


def test_abort_reason_names_the_line():
    jitted = check(calls_python_function, 300, native=False)
    line = calls_python_function.__code__.co_firstlineno + 3
    assert any(f"at line {line}" in reason for reason in jit.stats(jitted)["aborts"])


def unsupported_then_fine(n):
    total = 0
    for i in range(n):
        total += i is n
    for i in range(n):
        total += i
    return total


def test_one_loop_aborts_the_other_compiles():
    jitted = check(unsupported_then_fine, 300, native=True)
    s = jit.stats(jitted)
    assert s["aborts_total"] >= 1
    assert s["traces_compiled"] >= 1
    text = jit.explain(jitted)
    assert "native:" in text and IDENTITY in text


# --- exits, per trace ---------------------------------------------------------------------------------------


def divides(n, zero_at):
    total = 0
    for i in range(n):
        total += 1000 // (i - zero_at)
    return total


def test_exits_are_counted_per_trace():
    jitted = jit(**options())(int_sum)
    jitted(100)
    s = jit.stats(jitted)
    (tree,) = s["trees"]
    (trace,) = tree["traces"]
    assert trace["kind"] == "root" and trace["ends_with"] == "loop"
    taken = [e for e in trace["exits"] if e["to_interpreter"]]
    assert len(taken) == 1  # the loop's end, once
    assert taken[0]["line"] == int_sum.__code__.co_firstlineno + 2
    assert sum(e["to_interpreter"] for e in trace["exits"]) == s["exits_to_interpreter"] == 1
    jitted(100)
    jitted(50)
    s = jit.stats(jitted)
    assert s["exits_to_interpreter"] == 3
    assert sum(e["to_interpreter"] for e in s["trees"][0]["traces"][0]["exits"]) == 3


def test_exit_of_a_failing_guard_is_counted_at_its_line():
    jitted = jit(**options())(divides)
    with pytest.raises(ZeroDivisionError):
        jitted(1000, 500)
    s = jit.stats(jitted)
    line = divides.__code__.co_firstlineno + 3
    exits = [e for tree in s["trees"] for t in tree["traces"] for e in t["exits"] if e["to_interpreter"]]
    assert [e["line"] for e in exits] == [line]
    assert exits[0]["taken"] >= 1
    assert s["exits_to_interpreter"] == 1


def branchy(n):
    total = 0
    for i in range(n):
        if i % 10 == 0:
            total += 3
        total += i
    return total


def test_side_trace_exits_and_links():
    jitted = check(branchy, 500, native=True)
    s = jit.stats(jitted)
    assert s["side_traces"] >= 1
    traces = [t for tree in s["trees"] for t in tree["traces"]]
    sides = [t for t in traces if t["kind"] == "side"]
    assert sides and all(t["links_to"] is not None for t in sides)
    linked = [e for t in traces for e in t["exits"] if e["side_trace"] is not None]
    assert {e["side_trace"] for e in linked} == {t["symbol"] for t in sides}
    # once the side trace is linked, the exit is taken natively far more often than it reaches the interpreter
    assert all(e["taken"] > e["to_interpreter"] for e in linked)
    total_to_interpreter = sum(e["to_interpreter"] for t in traces for e in t["exits"])
    assert total_to_interpreter == s["exits_to_interpreter"]
    assert s["exits_to_interpreter"] < 20  # 1000 iterations, natively


# --- compile times and code size -----------------------------------------------------------------------------


def test_compile_ms_per_trace_is_populated():
    jitted = check(branchy, 500, native=True)
    s = jit.stats(jitted)
    per_trace = s["compile_ms_per_trace"]
    assert len(per_trace) == s["traces_compiled"] >= 2
    assert all(isinstance(ms, float) and ms > 0 for ms in per_trace)
    assert s["compile_ms"] == pytest.approx(sum(per_trace), abs=0.01)
    assert s["code_bytes"] > 0
    traces = [t for tree in s["trees"] for t in tree["traces"]]
    assert sorted(t["compile_ms"] for t in traces) == sorted(per_trace)
    assert all(t["code_bytes"] > 0 for t in traces)


def test_compile_phases_account_for_the_compile_times():
    from codegen.engine import PHASES

    jitted = check(branchy, 500, native=True)
    s = jit.stats(jitted)
    phases = s["compile_phases_ms"]
    # every trace went through the optimizer, the lowering and LLVM (no cache: parse, passes, codegen, link)
    assert {"optimize", "lower", "parse", "passes", "codegen", "link"} <= set(phases) <= {"optimize", "lower", *PHASES}
    assert all(ms > 0 for phase, ms in phases.items() if phase != "wait")
    assert "vectorize" not in phases  # (no fast copy of branchy's loop is vectorizable)
    # every phase is a part of compile_ms (each rounded to 0.001 ms): the optimizer and the lowering in Python
    # count as compiling, as LLVM's phases do
    assert sum(phases.values()) <= s["compile_ms"] + 0.001 * len(phases)
    assert phases["optimize"] + phases["lower"] < s["compile_ms"]
    traces = [t for tree in s["trees"] for t in tree["traces"]]
    assert sum(t["compile_ms"] for t in traces) == pytest.approx(s["compile_ms"], abs=0.01)


def test_compile_phases_at_opt_level_0_run_no_passes():
    s = jit.stats(check(branchy, 500, options=options(opt_level=0), native=True))
    assert "passes" not in s["compile_phases_ms"] and s["compile_phases_ms"]["codegen"] > 0


def test_stats_of_a_function_that_never_ran():
    jitted = jit(int_sum)
    s = jit.stats(jitted)
    assert s["traces_compiled"] == 0 and s["native_entries"] == 0 and s["aborts"] == {}
    assert s["compile_ms_per_trace"] == [] and s["trees"] == [] and s["compile_phases_ms"] == {}
    assert s["frontend_ms"] == 0.0  # the front end runs at the first call


def test_frontend_ms_is_the_first_calls_front_end_time():
    jitted = jit(int_sum)
    jitted(3)
    first = jit.stats(jitted)["frontend_ms"]
    assert isinstance(first, float) and first > 0
    jitted(3)
    assert jit.stats(jitted)["frontend_ms"] == first  # later calls do not run the front end again


def test_stats_rejects_plain_function():
    with pytest.raises(TypeError):
        jit.stats(int_sum)


# --- regressions ---------------------------------------------------------------------------------------


def true_divide_big(start, n):
    total = 0.0
    for i in range(n):
        total += (start + i) / 3
    return total


def test_failing_guard_does_not_grow_a_chain_of_side_traces():
    """A side trace recorded from a failing guard must not record the same specialized uop again (here
    _BINARY_OP_TRUE_DIVIDE_INT on an operand past 2**53): it would fail at once, and each such exit would
    grow another identical side trace, up to max_side_traces."""
    jitted = check(true_divide_big, (2**53 - 20, 100), native=True)
    s = jit.stats(jitted)
    assert s["side_traces"] <= 2, s["side_traces"]
    assert s["traces_compiled"] <= 4
