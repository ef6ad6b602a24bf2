"""Random programs (tests/programs.py) run as plain CPython and under @jit must agree exactly.

Plus hand-written regression programs in the generator's style, each found by or written for it.
To fuzz longer: ``TRACEJIT_FUZZ_EXAMPLES=20000 python -m pytest tests/test_generated.py -k generated_programs``;
with ``TRACEJIT_FUZZ_LAST=<file>``, each program and its calls are written to that file before they run, so that
the one a crash (a segfault kills the process, and hypothesis with it) stopped at is there to read.
"""

from __future__ import annotations

import math
import os

import pytest
from helpers import TEST_OPTIONS, Args, assert_same_outcome, check, define, outcome
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from programs import PARAMS, Program, arguments, programs

from jit import environment, jit
from jit.api import state_of


def as_call(args: tuple, keywords: int = 0) -> Args:
    """The call f(*args), its last `keywords` arguments passed by keyword."""
    npos = len(args) - keywords
    return Args(*args[:npos], **dict(zip(PARAMS[npos:], args[npos:])))


def run_program(program: Program, calls: list, options: dict | None = None, native: bool | None = None) -> None:
    """Define program fresh, then compare plain CPython and @jit on every call (twice under @jit).

    native=True: also demand (through jit.stats) that compiled code ran."""
    func = define(program.source, program.name)
    calls = [call if isinstance(call, Args) else Args(*call) for call in calls]
    for call in calls:  # the generator promises determinism: check that first
        assert_same_outcome(outcome(func, call), outcome(func, call), "plain CPython twice")
    jitted = check(func, *calls, options=options, native=native)
    if "try:" in program.source or "yield (" in program.source:
        # (a loop holding a try is left to CPython, its nested loops compiled, and a generator function's yield
        # too: partial code, which the tier-1 interpreter baseline does not have, so there the whole function is
        # plain)
        jitted = jitted.cpython_baseline
    state = state_of(jitted)
    assert state.mode == "tier1", jit.explain(jitted)  # a generated program must not fall back to CPython


EXAMPLES = environment.count("TRACEJIT_FUZZ_EXAMPLES", 200)
LAST = os.environ.get("TRACEJIT_FUZZ_LAST")  # (see above)


@settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(
    program=programs(),
    calls=st.lists(st.builds(as_call, arguments(), st.sampled_from([0, 0, 0, 1, 2])), min_size=1, max_size=3),
    opt_level=st.sampled_from([0, 0, 2]),  # LLVM's optimizations take most of the time
)
def test_generated_programs(program: Program, calls: list[Args], opt_level: int) -> None:
    note(f"program:\n{program.source}")
    note(f"calls: {calls!r}")
    if LAST:
        with open(LAST, "w") as last:
            last.write(f"{program.source}\n# calls: {calls!r}\n# opt_level: {opt_level}\n")
    run_program(program, calls, {**TEST_OPTIONS, "opt_level": opt_level})


@settings(
    max_examples=max(EXAMPLES // 4, 1),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    program=programs(),
    calls=st.lists(st.builds(as_call, arguments(), st.sampled_from([0, 0, 0, 1, 2])), min_size=1, max_size=3),
)
def test_generated_programs_tiered(program: Program, calls: list[Args]) -> None:
    """Tiered compilation (jit.tiering) at its most eager: every tree compiled again at level 2 and swapped in at
    its first native entry, so that calls run code of both levels, and code of one level linked to the other's."""
    note(f"program:\n{program.source}")
    note(f"calls: {calls!r}")
    if LAST:
        with open(LAST, "w") as last:
            last.write(f"{program.source}\n# calls: {calls!r}\n# tier_up_threshold: 1\n")
    run_program(program, calls, {**TEST_OPTIONS, "tier_up_threshold": 1})


@given(program=programs())
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_programs_are_valid(program: Program) -> None:
    """Every generated program compiles, with the declared signature."""
    note(program.source)
    code = compile(program.source, "<generated>", "exec")
    assert program.name in code.co_names


# --- regressions -------------------------------------------------------------------------------------------

CALLS = [
    (0, 0, 0.0, -0.0, [1]),
    (3, -7, 1.5, math.nan, [1, 2.5, -3]),
    (2**62, -(2**63), math.inf, -math.inf, [2**63 - 1, 0.0]),
    (-1, 10, -2.5, 1e-300, [0, 0, 0, 0, 0, 7]),
]

REGRESSIONS = {
    "nested_loops_early_return": """
def f(a, b, x, y, data):
    n = a
    s = x
    for i in range(5):
        for j in range(i, 10, 3):
            for k in range(3, -(b % 4), -1):
                n = (n * 3 + k) & (2**64 - 1)
                if n % 7 == 3:
                    return (n, i, j, k)
                if k == 1:
                    continue
                s += data[(i + j) % len(data)] * 0.5
            if j > 6:
                break
    return (n, s)
""",
    "while_counter_break_else": """
def f(a, b, x, y, data):
    t = y
    w0 = 0
    while w0 < 12 and (x == x):
        w0 += 2
        t = t * 0.5 + w0
        if t > 100:
            break
    else:
        t = -t
    w1 = 5
    while w1 > 0:
        w1 -= 1
        if w1 % 2:
            continue
        a ^= w1 << 3
    return (t, a, w0, w1)
""",
    "while_true_and_zero_trip_loops": """
def f(a, b, x, y, data):
    i = j = k = 0
    w0 = 0
    while True:
        w0 += 1
        if w0 > 4:
            break
        for i in range(a % 3, 0):
            k += 100
        for j in range(b % 5, -3, -2):
            k -= j
    return (i, j, k, w0)
""",
    "mixed_arithmetic_and_exceptions": """
def f(a, b, x, y, data):
    n = a // (b or 3)
    s = math.sqrt(abs(x)) + y
    m = round(s) if s == s and abs(s) < 1e300 else -1
    t = float(a) / x
    return (n, s, m, t, a % 7 - b ** 2, x // 2.5, min(a, b, n), max(x, y))
""",
    "chained_comparisons_and_boolops": """
def f(a, b, x, y, data):
    n = 0
    for i in range(-3, 8, 2):
        if a < i <= b != x or not (x <= y < i):
            n += i
        elif (a and x) or (b and y):
            n -= 1
        else:
            n ^= i
    s = (x if a > b else y) or 0.25
    return (n, s, a < b < x, not a)
""",
    "data_stores_and_variable_steps": """
def f(a, b, x, y, data):
    for i in range(-3, 6, a % 3 - 1):
        data[i % len(data)] += i * 2
        data[-1 - i % len(data)] = (data[0] * 3) % 97
    return (data[0], data[-1], len(data))
""",
    "int_float_conversions": """
def f(a, b, x, y, data):
    n = int(x) + math.floor(y) - math.ceil(x) + math.trunc(y)
    s = float(a) + round(x, 2) + round(y, -1)
    m = (a << (b % 64)) >> 3
    return (n, s, m, abs(-(2**63)), -a, ~b, +x, a ** 3)
""",
    "int64_overflow_in_loops": """
def f(a, b, x, y, data):
    n = a % 1000
    m = 1
    s = 0.0
    for i in range(30):
        n += 461168601842738790
        m *= -7
        s += n - m
    k = -(b % 1000)
    w0 = 0
    while w0 < 12:
        w0 += 1
        k -= 922337203685477580
    return (n, m, s, k)
""",
    "tuple_and_list_locals": """
def f(a, b, x, y, data):
    tup = (x, a, 2.5)
    acc = []
    s = 0.0
    for i in range(12):
        s += tup[i % 3] * 0.5
        acc.append(s if i % 2 else i)
    for vi in tup:
        s -= vi
    for vi in data:
        acc.append(vi)
    return (s, acc, acc[-1] if acc else 0.5, len(acc))
""",
}


# the regressions whose loops compile (nested_loops_early_return masks a product to 64 bits, past int64)
NATIVE_REGRESSIONS = {
    "chained_comparisons_and_boolops",
    "data_stores_and_variable_steps",
    "while_counter_break_else",
    "while_true_and_zero_trip_loops",
    "int64_overflow_in_loops",
    "tuple_and_list_locals",
}


@pytest.mark.parametrize("tier_up", [0, 1], ids=["", "tiered"])
@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_regression(name: str, tier_up: int) -> None:
    native = True if name in NATIVE_REGRESSIONS else None
    run_program(Program(REGRESSIONS[name].lstrip()), CALLS, {**TEST_OPTIONS, "tier_up_threshold": tier_up}, native)
