"""The no-slowdown section of the benchmark: ordinary Python (``bench/ordinary.py``) as plain CPython and under
``@jit``, timed in the same pyperf run.

Goals (issue 7): after warm-up every function runs at least 0.95x plain CPython's speed; a first call costs at
most 1.5x plain CPython's first call, plus the front end's time and the compile time that ``jit.stats``
reports. The table says, per function, whether both hold.

Each function gets three pyperf benchmarks: ``plain`` and ``jit`` (one variant per worker process: each
variant's time) and ``paired``, whose worker processes build both variants and alternate their calls, one pair
at a time (``harness.paired_time_func``): its values are @jit's time over plain's, pair by pair in the same
process. The speed goal is judged on ``paired``: on this shared machine two workers minutes apart differ by more
than the goal's 5% margin (whole rows moved from 0.68x to 1.5x between runs of the same code), and a
pair's two calls share whatever load the machine had at that moment.
"""

from __future__ import annotations

import statistics
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import harness
import ordinary
import tables

from jit import jit

VARIANTS = ("plain", "jit")
PAIRED = "paired"  # the benchmark of @jit / plain alternating in one process
SPEED_GOAL = 0.95
FIRST_CALL_GOAL = 1.5
#: the early calls (after the first) of a fresh instance: until plain CPython's have taken this long, at least
#: EARLY_MIN_CALLS and at most EARLY_MAX_CALLS
EARLY_SECONDS = 0.2
EARLY_SECONDS_QUICK = 0.02  # (--quick: the CI's smoke run)
EARLY_MIN_CALLS = 10
EARLY_MAX_CALLS = 2000


def fresh_plain(func: Callable[..., Any]) -> Callable[..., Any]:
    """A copy of func with a new code object: its first call pays what a first call pays in CPython (the
    specializing interpreter's warm-up), not a warm function's cost."""
    copy = types.FunctionType(func.__code__.replace(), func.__globals__, func.__name__, func.__defaults__)
    copy.__kwdefaults__ = func.__kwdefaults__
    return copy


def make_variant(case: ordinary.Case, variant: str) -> Callable[..., Any]:
    """The callable under test: the plain function or a fresh jit instance. A recursive function gets a
    namespace of its own in which its name refers to that instance, as it would under a decorator."""
    func = case.func
    if variant == "plain":
        return func
    if not case.recursive:
        return jit(func)
    namespace = dict(func.__globals__)
    clone = types.FunctionType(func.__code__, namespace, func.__name__, func.__defaults__)
    jitted = jit(clone)
    namespace[func.__name__] = jitted
    return jitted


def warm_up(case: ordinary.Case, f: Callable[..., Any], n: int, calls: int = 8) -> Any:
    """`calls` calls, then more while a loop of a jit instance counts its warm-up (``harness.warm_up``'s limit)."""
    result = None
    for _ in range(calls):
        result = case.run(f, n)
    if harness.is_jitted(f):
        deadline = time.perf_counter() + harness.MAX_WARMING_SECONDS
        while jit.stats(f)["warming_loops"] and time.perf_counter() < deadline:
            result = case.run(f, n)
    return result


def make_builder(case: ordinary.Case, variant: str, n: int) -> Callable[[], tuple[Callable[..., Any], tuple[Any, ...]]]:
    def build() -> tuple[Callable[..., Any], tuple[Any, ...]]:
        f = make_variant(case, variant)
        warm_up(case, f, n)
        return case.run, (f, n)

    return build


def make_pair_builder(case: ordinary.Case, n: int) -> Callable[[], tuple[Callable[[], Any], Callable[[], Any]]]:
    def build() -> tuple[Callable[[], Any], Callable[[], Any]]:
        plain, jitted = make_variant(case, "plain"), make_variant(case, "jit")
        warm_up(case, plain, n)
        warm_up(case, jitted, n)
        return (lambda: case.run(plain, n)), (lambda: case.run(jitted, n))

    return build


def paired_speed(paired: Any) -> float | None:
    """plain / @jit from the paired benchmark: the inverse of the median of its (@jit / plain) values."""
    if paired is None:
        return None
    return 1.0 / paired.median()


@dataclass
class OrdinaryRow:
    name: str
    case: ordinary.Case
    size: int
    plain_result: Any = None
    plain_first_ms: float = 0.0
    jit_first_ms: float = 0.0
    frontend_ms: float = 0.0
    compile_ms: float = 0.0
    early_calls: int = 0
    early_speed: float = 0.0  # plain / @jit over the early calls (median of the fresh instances)
    early_compile_ms: float = 0.0  # compile ms during them (median)
    mode: str = ""
    times: dict[str, Any] = field(default_factory=dict)
    estimates: dict[str, float] = field(default_factory=dict)  # variant -> seconds of one call, from prepare


def early_calls(row: OrdinaryRow, plain: Callable[..., Any], jitted: Callable[..., Any]) -> float:
    """plain / @jit over the calls after the first of two fresh instances, alternating (``row.early_calls`` of
    each): what a new function costs while it warms up (its loops counted by CPython, or compiled meanwhile)."""
    case, n = row.case, row.size
    spent = [0.0, 0.0]
    for _ in range(row.early_calls):
        for index, f in enumerate((plain, jitted)):
            t0 = time.perf_counter()
            result = case.run(f, n)
            spent[index] += time.perf_counter() - t0
        harness.check(row.name, "jit", "early call", result, row.plain_result)
    return spent[0] / spent[1]


def measure_first_calls(row: OrdinaryRow, repeats: int, early_seconds: float = EARLY_SECONDS) -> None:
    """First-call times (median of fresh instances), the early calls' speed after them, and the JIT's own costs
    from jit.stats; then one warmed-up instance's result is checked and one steady-state call of each variant timed
    (for pyperf's loops)."""
    case, n = row.case, row.size
    row.plain_result = case.run(case.func, n)
    _, row.estimates["plain"] = harness.timed(lambda: case.run(case.func, n))
    row.early_calls = min(EARLY_MAX_CALLS, max(EARLY_MIN_CALLS, int(early_seconds / row.estimates["plain"]) + 1))
    plain_ms, jit_ms, frontend, compile_ms, early, early_compile = [], [], [], [], [], []
    jitted = None
    for _ in range(repeats):
        plain = fresh_plain(case.func) if not case.recursive else case.func
        t0 = time.perf_counter()
        case.run(plain, n)
        plain_ms.append((time.perf_counter() - t0) * 1e3)
        jitted = make_variant(case, "jit")
        t0 = time.perf_counter()
        result = case.run(jitted, n)
        jit_ms.append((time.perf_counter() - t0) * 1e3)
        harness.check(row.name, "jit", "first call", result, row.plain_result)
        stats = jit.stats(jitted)
        frontend.append(stats.get("frontend_ms", 0.0))
        compile_ms.append(stats["compile_ms"])
        row.mode = stats["mode"]
        early.append(early_calls(row, plain, jitted))
        early_compile.append(jit.stats(jitted)["compile_ms"] - stats["compile_ms"])
    row.plain_first_ms = statistics.median(plain_ms)
    row.jit_first_ms = statistics.median(jit_ms)
    row.frontend_ms = statistics.median(frontend)
    row.compile_ms = statistics.median(compile_ms)
    row.early_speed = statistics.median(early)
    row.early_compile_ms = statistics.median(early_compile)
    harness.check(row.name, "jit", "warm", warm_up(case, jitted, n, calls=3), row.plain_result)
    result, row.estimates["jit"] = harness.timed(lambda: case.run(jitted, n))
    harness.check(row.name, "jit", "steady state", result, row.plain_result)


class NoSlowdownSection:
    name = "ordinary"
    title = "Ordinary Python: never slower"

    def __init__(self, quick: bool, numba_skip: frozenset[str] = frozenset()) -> None:
        self.rows = [
            OrdinaryRow(name, case, case.quick_size if quick else case.size) for name, case in ordinary.ORDINARY.items()
        ]
        self.numba_skip = numba_skip  # no Numba variant here
        self.early_seconds = EARLY_SECONDS_QUICK if quick else EARLY_SECONDS

    def prepare(self, repeats: int) -> None:
        for row in self.rows:
            measure_first_calls(row, repeats, self.early_seconds)
        print("checked the ordinary functions: jitted results equal plain CPython's", flush=True)

    def numba_skipped(self) -> list[str]:
        return []

    def timings(self) -> list[harness.Timing]:
        timings = []
        for row in self.rows:
            metadata = {"kernel_size": str(row.size)}
            timings += [
                harness.Timing(
                    f"ordinary/{row.name}/{variant}",
                    harness.lazy_time_func(make_builder(row.case, variant, row.size)),
                    harness.store_in(row.times, variant),
                    metadata=metadata,
                    seconds_per_run=row.estimates.get(variant),
                )
                for variant in VARIANTS
            ]
            pair_seconds = [row.estimates.get(variant) for variant in VARIANTS]
            timings.append(
                harness.Timing(
                    f"ordinary/{row.name}/{PAIRED}",
                    harness.paired_time_func(make_pair_builder(row.case, row.size)),
                    harness.store_in(row.times, PAIRED),
                    metadata=metadata,
                    seconds_per_run=None if None in pair_seconds else sum(pair_seconds),
                )
            )
        return timings

    def table(self) -> str:
        header = [
            "function",
            "what",
            "n",
            "plain CPython",
            "@jit",
            "separate workers",
            "@jit speed, paired",
            "first call plain",
            "first call @jit",
            "front end + compile",
            "early calls: @jit speed",
            "goals met",
        ]
        body = []
        for row in self.rows:
            plain, jitted, paired = row.times.get("plain"), row.times.get("jit"), row.times.get(PAIRED)
            separate = tables.speed(plain, jitted)
            speed = paired_speed(paired)
            overhead = row.frontend_ms + row.compile_ms
            first_ok = row.jit_first_ms <= FIRST_CALL_GOAL * row.plain_first_ms + overhead
            speed_ok = speed is not None and speed >= SPEED_GOAL
            verdict = "yes" if speed_ok and first_ok else ("no: speed" if not speed_ok else "no: first call")
            body.append(
                [
                    row.name,
                    row.case.what,
                    str(row.size),
                    tables.fmt_bench(plain),
                    tables.fmt_bench(jitted),
                    f"{separate:.2f}x" if separate is not None else "-",
                    f"{speed:.2f}x{tables.spread(paired)}" if speed is not None else "-",
                    f"{row.plain_first_ms:.1f} ms",
                    f"{row.jit_first_ms:.1f} ms",
                    f"{overhead:.1f} ms",
                    f"{row.early_speed:.2f}x ({row.early_calls}; {row.early_compile_ms:.0f} ms)",
                    verdict,
                ]
            )
        lines = tables.markdown(header, "lllrrrrrrrrl", body)
        lines += [
            "",
            f"Goals: @jit speed, paired, at least {SPEED_GOAL}x after warm-up: plain / @jit from the `paired` pyperf "
            "benchmark, whose worker processes alternate a plain call and an @jit call and record @jit's time over "
            "plain's (its median over all values, ± their relative standard deviation); `separate workers` is "
            "plain / @jit from the medians of the two variants timed in separate worker processes, shown for "
            "reference (it carries the machine's load differences between workers). First call"
            f" at most {FIRST_CALL_GOAL}x plain CPython's first call plus tracejit's front end and compile "
            "time (from `jit.stats`). Functions that take a size n are called as f(n); `digit_sum`, `clamp` and "
            "`describe_order` are called n times from a plain Python loop. Early calls: plain / @jit over the calls "
            f"after the first of fresh instances (in brackets: how many, plain's taking about "
            f"{self.early_seconds * 1e3:.0f} ms, and the compile time in them), alternating, the median of the instances "
            "whose first calls are timed: what a new function costs while CPython counts its loops' warm-up, or "
            "while they compile (no goal: shown so that the warm-up's cost is seen).",
        ]
        return "\n".join(lines)
