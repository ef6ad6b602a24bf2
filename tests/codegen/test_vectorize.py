"""The vectorizing pipeline of a loop's fast copy (``codegen.function.vectorizable``, ``codegen.engine``): which
fast copies get it (``jit.stats``: ``vectorized``), that LLVM's loop vectorizer really takes an int sum the
range analysis proved never overflows, and that results stay exactly CPython's: int sums that reach 2**63 at
the loop's bounds, negative steps, empty ranges, and float sums (never reassociated: -0.0, nan, inf, and
orders of additions whose rounding differs)."""

import math
import re

import pytest
from helpers import TEST_OPTIONS, check

import jit as jit_module
from jit import jit

INT64_MAX = 2**63 - 1
N = 1000


def traces(jitted) -> list[dict]:
    return [trace for tree in jit_module.stats(jitted)["trees"] for trace in tree["traces"]]


def vectorized_runs(jitted) -> int:
    """How often a vectorized fast copy ran."""
    return sum(trace["fast_runs"] for trace in traces(jitted) if trace["vectorized"])


def both(jitted):
    return jitted, jitted.cpython_baseline


def masked_sum(start, n):
    total = start
    for i in range(n):
        total += (i ^ 5) & 7
    return total


def sevens(start, n):
    total = start
    for i in range(n):
        total += (i | 7) & 7  # (7: as much as the range analysis allows, (i | 7) & 7 in [0, 7])
    return total


def stepped(start, stop, step, base):
    total = base
    for i in range(start, stop, step):
        total += i & 1023
        total -= (i ^ 3) & 15
    return total


def nested(n, m):
    total = 0
    for i in range(n):
        for j in range(m):
            total += (i ^ j) & 7
    return total


def float_sum(n, x, start):
    total = start
    for i in range(n):
        total += x * i
    return total


def float_of_ints(n, x):
    total = 0.0
    for i in range(n):
        total += (i & 7) * x
    return total


def branchy(n):
    total = 0
    for i in range(n):
        if i & 1:
            total += i & 255
        else:
            total -= i & 15
    return total


def _fast_function(ir_text: str) -> str:
    """The optimized fast copy's function (its name ends in _fast) of an opt-ir dump."""
    match = re.search(r"^define [^\n]*@\w+_fast\(", ir_text, re.M)
    assert match is not None, ir_text
    return ir_text[match.start() : ir_text.index("\n}", match.start())]


def test_an_int_sum_is_vectorized_and_matches_cpython():
    jitted = check(masked_sum, (0, N), (12345, 3 * N), (-(10**12), N), native=True)
    for f in both(jitted):
        assert vectorized_runs(f) > 0
    fast = _fast_function(jit.dump(jitted, "opt-ir"))
    # LLVM's loop vectorizer took the loop: vector adds of i64 lanes, reduced at the end
    assert re.search(r"add <\d+ x i64>", fast), fast
    assert "llvm.vector.reduce.add" in fast


def test_the_two_modules_are_in_the_ir_dump():
    f = jit(**TEST_OPTIONS)(masked_sum)
    assert f(0, N) == masked_sum(0, N)
    ir_text = jit.dump(f, "ir")
    assert "; tracejit: the fast copy's module (vectorizing pipeline)" in ir_text
    (trace,) = traces(f)
    assert trace["vectorized"] is True and trace["fast_runs"] > 0


@pytest.mark.parametrize("slack", [0, 1, 7, 8, 100])
def test_a_sum_that_reaches_the_limit_at_the_loop_bound(slack):
    # the terms add 7 per iteration, the most their interval allows: from INT64_MAX + 1 - slack - 7 * N the sum
    # passes 2**63 at the last iteration with slack 0, and the fast copy's conditions (checked before the
    # vectorized loop) are exact: they hold from slack 1 on
    start = INT64_MAX + 1 - slack - 7 * N
    jitted = check(sevens, (start, N), native=True)
    for f in both(jitted):
        assert (vectorized_runs(f) > 0) == (slack > 0)


def test_a_sum_past_64_bits_matches_cpython():
    jitted = check(masked_sum, (INT64_MAX - 10, N), (INT64_MAX - 5000, N), native=True)
    assert jitted(INT64_MAX - 10, N) == masked_sum(INT64_MAX - 10, N) > INT64_MAX


@pytest.mark.parametrize(
    "start, stop, step",
    [(N, -N, -3), (0, 5 * N, 7), (N, 0, -1), (0, 0, 1), (5, 5, -1), (3, 4, 1), (0, 37, 1), (0, 36 + 32, 1)],
)
def test_steps_and_trip_counts(start, stop, step):
    # trip counts around the vector width and the interleaving (the remainder runs in the scalar epilogue); the
    # first call compiles the loop (in its direction), the others run it
    warm = (0, 5 * N, 1, 0) if step > 0 else (5 * N, 0, -1, 0)
    check(stepped, warm, (start, stop, step, 0), (start, stop, step, -(2**62)), native=True)


def test_bounds_near_the_limit():
    top = INT64_MAX
    check(stepped, (top - 3 * N, top, 3, 0), native=True)
    check(stepped, (top, top - 2 * N, -2, 0), native=True)
    check(stepped, (-top - 1 + 2 * N, -top - 1, -2, 0), native=True)


@pytest.mark.parametrize("m", [0, 1, 2, 7, 8, 31, 32, 33, 64, 100])
def test_nested_loops_of_every_inner_trip_count(m):
    check(nested, (200, 100), (200, m), native=True)


def test_float_sums_are_not_reassociated():
    # an order of additions whose rounding differs from any other (0.1 * i: the sum of a reordered or
    # vectorized reduction would differ in the last bits)
    jitted = check(float_sum, (N, 0.1, 0.0), (3 * N, 1e-3, 1e16), (N, 1.1, -0.0), native=True)
    assert repr(jitted(3 * N, 1e-3, 1e16)) == repr(float_sum(3 * N, 1e-3, 1e16))
    for f in both(jitted):  # (the loop went through the vectorizing pipeline, and ran there)
        assert vectorized_runs(f) > 0
    fast = _fast_function(jit.dump(jitted, "opt-ir"))
    # no fast-math flag lets LLVM reorder the float additions, and none is vectorized
    assert not re.search(r"\b(reassoc|fast|nnan|ninf|nsz|arcp|contract|afn)\b", fast)
    assert not re.search(r"fadd [^\n]*<\d+ x double>", fast), fast


@pytest.mark.parametrize(
    "x, start",
    [(-0.0, -0.0), (0.0, -0.0), (math.nan, 0.0), (math.inf, 1.0), (-math.inf, math.inf), (1e308, 1e308)],
)
def test_float_sums_with_signed_zeros_nans_and_infinities(x, start):
    jitted = check(float_sum, (N, x, start), native=True)
    assert repr(jitted(N, x, start)) == repr(float_sum(N, x, start))


def test_a_float_sum_of_int_terms_matches_cpython():
    check(float_of_ints, (N, 0.1), (N, -0.0), (N, math.inf), native=True)


def test_a_loop_with_a_branch_is_vectorized_only_with_its_side_trace_merged():
    # the branch's guard is a way out of the root's iteration: the vectorizer could not take the root's loop, so
    # its fast copy keeps the trace pipeline; the side trace's function, which joins both ways, has a fast copy of
    # the merged loop (jit.optimizer.merge) that it can take
    jitted = check(branchy, N, native=True)
    for f in both(jitted):
        (root,) = [t for t in traces(f) if t["kind"] == "root"]
        assert not root["vectorized"]
        (side,) = [t for t in traces(f) if t["kind"] == "side"]
        assert side["vectorized"] and side["fast_runs"] > 0


def test_every_opt_level_gives_cpythons_result():
    for level in (0, 1, 2, 3):
        f = jit(**{**TEST_OPTIONS, "opt_level": level})(masked_sum)
        assert f(7, N) == masked_sum(7, N)
        assert f(INT64_MAX - 10, N) == masked_sum(INT64_MAX - 10, N)


def _function_blocks(ir_text: str, name_pattern: str) -> dict[str, str]:
    """Block label -> its text, in the first function whose name matches name_pattern (unoptimized IR)."""
    match = re.search(rf'^define [^\n]*@"({name_pattern})"\(', ir_text, re.M)
    assert match is not None, name_pattern
    body = ir_text[match.end() : ir_text.index("\n}", match.end())]
    blocks: dict[str, str] = {}
    label = "entry"
    for line in body.splitlines()[2:]:
        found = re.match(r'^"?([\w.]+)"?:$', line)
        if found:
            label = found.group(1)
            blocks[label] = ""
        else:
            blocks[label] = blocks.get(label, "") + line + "\n"
    return blocks


def test_a_versioned_loop_entered_for_an_iteration_at_a_time_pays_nothing_at_entry():
    # branchy's root leaves for its side trace at every other iteration, and the side trace jumps back into
    # it: the root's entry does nothing for the fast copy (no load of its `refused`, no event computed); the
    # checked loop looks at the fuel's low bits once per iteration and decides every EVENT_EVERY iterations,
    # after the periodic check's test
    jitted = check(branchy, N, native=True)
    (root,) = [t for t in traces(jitted) if t["kind"] == "root"]
    assert root["fast_runs"] == 0  # (no entry lasts long enough)
    blocks = _function_blocks(jit.dump(jitted, "ir"), r"tj_branchy_root\d+_\d+_\w+?")
    assert "fast" in jit.dump(jitted, "ir")  # (versioned: it has a fast copy)
    assert "_refused" not in blocks["entry"]
    assert any("_refused" in code for label, code in blocks.items() if label.startswith("periodic_done"))
