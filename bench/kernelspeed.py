"""The kernels section of the benchmark: the numeric kernels of ``bench/kernels.py`` as plain CPython, under
``@jit`` (and ``@jit(nesting=False)`` for nested loops) and under ``numba.njit``, timed in the same pyperf run.

Goal (issue 9): tracejit's steady state at least 0.7x Numba's speed on every kernel. Numba's time excludes its
compilation (its first call, reported on its own, compiles). Numba gets each kernel exactly as written: where it
cannot compile one, the table says "-" and why; where its answer differs from CPython's (its ints wrap around
at 64 bits), the cell says so.
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass, field
from typing import Any

import harness
import kernels
import tables
import variants
from variants import JIT, NESTING_OFF, NUMBA, PLAIN

from jit import jit

#: sizes chosen so that plain CPython takes roughly 10-100 ms per call
SIZES = {
    "nested_int": 600,
    "mandelbrot": 120,
    "collatz": 5000,
    "float_sum": 300_000,
    "nested2_branchy": 600,
    "nested3": 70,
    "primes_break": 30_000,
    "helper_calls": 400,
    "big_ints": 300_000,
    "list_swaps": 20_000,
    "list_of_lists": 600,
    "word_counts": 200_000,
    "letter_stats": 300_000,
    "pair_walk": 300_000,
}
#: --quick: small sizes for a smoke run (~1-5 ms of plain CPython per call)
QUICK_SIZES = {
    "nested_int": 100,
    "mandelbrot": 30,
    "collatz": 500,
    "float_sum": 20_000,
    "nested2_branchy": 100,
    "nested3": 20,
    "primes_break": 3000,
    "helper_calls": 60,
    "big_ints": 20_000,
    "list_swaps": 2000,
    "list_of_lists": 60,
    "word_counts": 20_000,
    "letter_stats": 20_000,
    "pair_walk": 20_000,
}
NUMBA_GOAL = 0.7


@dataclass
class JitFacts:
    first_call_ms: float
    traces_compiled: int
    compile_ms_median: float
    exits_per_call: int
    native_entries_per_call: int
    aborts: dict[str, int]
    mode: str


@dataclass
class NumbaFacts:
    first_call_ms: float = 0.0
    #: why Numba could not compile or run the kernel ("" if it did)
    failure: str = ""
    #: "wraps" / "differs" if its result is not CPython's ("" if it is)
    discrepancy: str = ""
    result: Any = None
    #: one steady-state call
    seconds: float = 0.0


@dataclass
class KernelRow:
    name: str
    size: int
    nested: bool
    plain_result: Any = None
    facts: dict[str, JitFacts] = field(default_factory=dict)
    numba: NumbaFacts | None = None
    times: dict[str, Any] = field(default_factory=dict)  # variant -> pyperf result
    estimates: dict[str, float] = field(default_factory=dict)  # variant -> seconds of one call, from prepare

    @property
    def key(self) -> str:
        return f"kernels/{self.name}"

    def jit_variants(self) -> tuple[str, ...]:
        return (JIT, NESTING_OFF) if self.nested else (JIT,)


def llvm_warmup_kernel(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def warm_llvm() -> None:
    """Initialize LLVM once, so that the first kernel's first-call time does not include it."""
    f = jit(warmup=0)(llvm_warmup_kernel)  # (a short loop: compiled at once, without the warm-up)
    harness.check("llvm_warmup_kernel", JIT, "warm-up", f(1000), llvm_warmup_kernel(1000))


def measure_jit(row: KernelRow, variant: str, repeats: int) -> JitFacts:
    func, _ = kernels.KERNELS[row.name]
    n = row.size
    first_ms, made = harness.first_call_ms(lambda: variants.make_variant(func, variant), lambda f: f(n), repeats)
    for _, result in made:
        harness.check(row.name, variant, "first call", result, row.plain_result)
    instance = made[0][0]
    harness.check(row.name, variant, "warm-up", harness.warm_up(lambda: instance(n), instance), row.plain_result)
    call = harness.steady_call(instance, lambda: instance(n))
    harness.check(row.name, variant, "steady state", call.result, row.plain_result)
    row.estimates[variant] = call.seconds
    after = call.after
    per_trace = after["compile_ms_per_trace"]
    facts = JitFacts(
        first_call_ms=first_ms,
        traces_compiled=after["traces_compiled"],
        compile_ms_median=statistics.median(per_trace) if per_trace else 0.0,
        exits_per_call=call.delta("exits_to_interpreter"),
        native_entries_per_call=call.delta("native_entries"),
        aborts=after["aborts"],
        mode=after["mode"],
    )
    if facts.mode != "tier1" or after["native_entries"] == 0:
        print(
            f"WARNING: {row.name} ({variant}) does not run natively (mode {facts.mode!r}, "
            f"{after['native_entries']} native entries):\n{jit.explain(instance)}",
            file=sys.stderr,
        )
    return facts


def measure_numba(func: Any, args: tuple[Any, ...], expected: Any, repeats: int) -> NumbaFacts:
    """Numba's first call (compilation included; median over fresh dispatchers) and whether its result is
    CPython's. Never raises for what Numba cannot do: that goes into ``failure``."""
    try:
        first_ms, made = harness.first_call_ms(
            lambda: variants.make_variant(func, NUMBA), lambda d: variants.numba_call(d, args), repeats
        )
    except variants.NumbaCannotRun as exc:
        return NumbaFacts(failure=str(exc))
    dispatcher, result = made[0]
    _, seconds = harness.timed(lambda: dispatcher(*args))
    return NumbaFacts(first_ms, "", variants.numba_discrepancy(result, expected) or "", result, seconds)


class KernelSection:
    name = "kernels"
    title = "Numeric kernels"

    def __init__(self, quick: bool, numba_skip: frozenset[str] = frozenset()) -> None:
        sizes = QUICK_SIZES if quick else SIZES
        self.rows = [KernelRow(name, sizes[name], nested) for name, (_, nested) in kernels.KERNELS.items()]
        #: why no Numba column at all ("" if numba is installed; set by prepare if it does not import)
        self.numba_missing = "" if variants.numba_installed() else "Numba is not installed"
        self.numba_skip = numba_skip

    def prepare(self, repeats: int) -> None:
        warm_llvm()
        if not self.numba_missing:
            self.numba_missing = variants.numba_import_problem() or ""
            if not self.numba_missing:
                variants.warm_numba()
        for row in self.rows:
            func, _ = kernels.KERNELS[row.name]
            row.plain_result, row.estimates[PLAIN] = harness.timed(lambda: func(row.size))  # noqa: B023
            for variant in row.jit_variants():
                row.facts[variant] = measure_jit(row, variant, repeats)
            print(f"checked {row.name}({row.size}): jitted results equal plain CPython's", flush=True)
            if not self.numba_missing:
                row.numba = measure_numba(func, (row.size,), row.plain_result, repeats)
                row.estimates[NUMBA] = row.numba.seconds

    def numba_skipped(self) -> list[str]:
        return [row.key for row in self.rows if self.numba_missing or (row.numba and row.numba.failure)]

    def numba_timed(self, row: KernelRow) -> bool:
        return not self.numba_missing and row.key not in self.numba_skip

    def timings(self) -> list[harness.Timing]:
        out = []
        for row in self.rows:
            func, _ = kernels.KERNELS[row.name]
            timed = [PLAIN, *row.jit_variants()] + ([NUMBA] if self.numba_timed(row) else [])
            for variant in timed:
                out.append(
                    harness.Timing(
                        f"{row.name}/{variant}",
                        harness.lazy_time_func(make_builder(func, variant, row.size)),
                        harness.store_in(row.times, variant),
                        metadata={"kernel_size": str(row.size)},
                        seconds_per_run=row.estimates.get(variant),
                    )
                )
        return out

    def table(self) -> str:
        header = [
            "kernel",
            "n",
            "plain CPython",
            "@jit",
            "speedup",
            "@jit first call",
            "nesting off",
            "speedup (nesting off)",
            "numba.njit",
            "Numba first call",
            "tracejit / Numba",
            "traces",
            "compile ms/trace",
            "exits/call",
            "exits/call (nesting off)",
            "aborts",
        ]
        body = []
        notes: list[str] = []
        met = total = 0
        for row in self.rows:
            plain, jitted, off = row.times.get(PLAIN), row.times.get(JIT), row.times.get(NESTING_OFF)
            numba_bench = row.times.get(NUMBA)
            facts, off_facts = row.facts[JIT], row.facts.get(NESTING_OFF)
            numba_cell, numba_first, versus = self.numba_cells(row, numba_bench, jitted, notes)
            if versus is not None:
                total += 1
                met += versus >= NUMBA_GOAL
            native = "" if facts.native_entries_per_call else " (not native!)"
            body.append(
                [
                    row.name + native,
                    str(row.size),
                    tables.fmt_bench(plain),
                    tables.fmt_bench(jitted),
                    tables.fmt_ratio(tables.speed(plain, jitted)),
                    f"{facts.first_call_ms:.0f} ms",
                    tables.fmt_bench(off) if row.nested else "-",
                    tables.fmt_ratio(tables.speed(plain, off)) if row.nested else "-",
                    numba_cell,
                    numba_first,
                    tables.fmt_ratio(versus),
                    str(facts.traces_compiled),
                    f"{facts.compile_ms_median:.1f}",
                    str(facts.exits_per_call),
                    str(off_facts.exits_per_call) if off_facts else "-",
                    str(sum(facts.aborts.values())),
                ]
            )
        lines = tables.markdown(header, "lr" + "r" * (len(header) - 2), body)
        lines += [
            "",
            "Times are pyperf medians (± relative standard deviation) of the steady state; speedup = plain / @jit "
            "from the same run. First call: median over fresh `jit(f)` instances of the first call (LLVM "
            "initialized beforehand), with the default warm-up: CPython runs each loop for its warm-up (option "
            "`warmup`), then the JIT records and compiles it, within the call or at a later one. traces, compile ms/trace (median), exits/call "
            "(`exits_to_interpreter` around one steady-state call) and aborts come from `jit.stats` of the @jit "
            "(nesting on) instance.",
        ]
        if self.numba_missing:
            lines += ["", f"Numba column empty: {self.numba_missing} (`pip install -e '.[bench]'` installs it)."]
        else:
            lines += [
                "",
                "numba.njit: the kernel as written, compiled by Numba (default options), timed in the same run; "
                "Numba first call: median over fresh `numba.njit(f)` dispatchers of the first call, which compiles "
                "(Numba initialized beforehand). tracejit / Numba = Numba's time / @jit's time (above 1: tracejit "
                f"is faster). Goal (issue 9): at least {NUMBA_GOAL}x on every kernel; met on {met} of {total} "
                "kernels that Numba computes correctly.",
            ]
            if notes:
                lines += ["", *notes]
        aborted = [(row.name, v, f.aborts) for row in self.rows for v, f in row.facts.items() if f.aborts]
        if aborted:
            lines += ["", "Aborted recordings:", ""]
            for name, variant, aborts in aborted:
                for reason, count in aborts.items():
                    lines.append(f"- {name} ({variant}): {count} x {reason}")
        return "\n".join(lines)

    def numba_cells(self, row: KernelRow, bench: Any, jitted: Any, notes: list[str]) -> tuple[str, str, float | None]:
        """The Numba time cell, Numba's first call and tracejit's speed relative to Numba; footnotes go to
        notes."""
        facts = row.numba
        if self.numba_missing or facts is None:
            return "-", "-", None
        if facts.failure:
            notes.append(f"- [{len(notes) + 1}] {row.name}: Numba cannot compile it as written: {facts.failure}")
            return f"- [{len(notes)}]", "-", None
        cell = tables.fmt_bench(bench)
        if facts.discrepancy:
            cell += f" (wrong: {facts.discrepancy})"
            why = " (its int64 arithmetic wraps around where Python ints grow)" if facts.discrepancy == "wraps" else ""
            notes.append(
                f"- {row.name}: numba.njit returned {facts.result!r}, CPython {row.plain_result!r}{why}; "
                "its time is not comparable and is left out of the goal."
            )
        versus = None if facts.discrepancy else tables.speed(bench, jitted)
        return cell, f"{facts.first_call_ms:.0f} ms", versus


def make_builder(func: Any, variant: str, n: int) -> Any:
    """What lazy_time_func calls in the worker: a fresh variant, warmed up (Numba compiles at its first call)."""

    def build() -> tuple[Any, tuple[Any, ...]]:
        f = variants.make_variant(func, variant)
        harness.warm_up(lambda: f(n), f)
        return f, (n,)

    return build
