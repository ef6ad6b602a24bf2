"""The nested-call cost section: ``two_level_nest(n, m)`` with inner trip counts m = 0, 1, 2, 4, 8, 16, 64 and
n chosen so that every call does about the same work (n * max(m, 1) inner iterations), in nanoseconds per outer
iteration, as plain CPython, ``@jit`` (nested trees: each outer iteration calls the inner loop's tree),
``@jit(nesting=False)`` (each outer iteration leaves native code) and ``numba.njit``.

Goal (issue 9 item 1): tracejit within 1.5x of Numba from m = 8 up, within 3x below (where Numba has inlined
the inner loop): tracejit / Numba (Numba's time / @jit's time) at least 0.67x, and 0.33x below m = 8.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

import harness
import kernels
import tables
import variants
from variants import JIT, NESTING_OFF, NUMBA, PLAIN

from jit import jit

TRIP_COUNTS = (0, 1, 2, 4, 8, 16, 64)
#: inner iterations per call (n * max(m, 1)): plain CPython takes 15-50 ms per call, and @jit's cost per call
#: (entering and leaving native code, today about 20 us) is spread thin
WORK = 2**18
QUICK_WORK = 2**12
#: the same for @jit(nesting=False), which leaves native code twice per outer iteration (about 10 us each time)
NESTING_OFF_WORK = 2**12
QUICK_NESTING_OFF_WORK = 2**8
#: (smallest m, slowest allowed tracejit / Numba speed ratio), largest m first
GOALS = ((8, 1 / 1.5), (0, 1 / 3))
KEY = "nest"


def goal_for(m: int) -> float:
    return next(goal for least, goal in GOALS if m >= least)


@dataclass
class NestRow:
    m: int
    #: outer iterations per call, and those of @jit(nesting=False)
    n: int
    n_off: int
    plain_result: Any = None
    plain_result_off: Any = None
    #: exits to the interpreter and native entries per call, per jit variant, from jit.stats
    exits: dict[str, int] = field(default_factory=dict)
    entries: dict[str, int] = field(default_factory=dict)
    numba_discrepancy: str = ""
    numba_result: Any = None
    times: dict[str, Any] = field(default_factory=dict)
    estimates: dict[str, float] = field(default_factory=dict)  # variant -> seconds of one call, from prepare

    def args(self, variant: str) -> tuple[int, int]:
        return (self.n_off if variant == NESTING_OFF else self.n), self.m


class NestSection:
    name = "nest"
    title = "Nested-call cost"

    def __init__(self, quick: bool, numba_skip: frozenset[str] = frozenset()) -> None:
        work, off_work = (QUICK_WORK, QUICK_NESTING_OFF_WORK) if quick else (WORK, NESTING_OFF_WORK)
        self.rows = [NestRow(m, max(1, work // max(m, 1)), max(1, off_work // max(m, 1))) for m in TRIP_COUNTS]
        self.numba_missing = "" if variants.numba_installed() else "Numba is not installed"
        #: why Numba could not compile the kernel ("" if it did)
        self.numba_failure = ""
        self.numba_skip = numba_skip

    def prepare(self, repeats: int) -> None:
        func = kernels.two_level_nest
        if not self.numba_missing:
            self.numba_missing = variants.numba_import_problem() or ""
        dispatcher = None if self.numba_missing else variants.make_variant(func, NUMBA)
        for row in self.rows:
            row.plain_result, row.estimates[PLAIN] = harness.timed(lambda: func(*row.args(PLAIN)))  # noqa: B023
            row.plain_result_off = func(*row.args(NESTING_OFF))
            for variant in (JIT, NESTING_OFF):
                measure_jit(row, variant)
            if dispatcher is not None and not self.numba_failure:
                try:
                    row.numba_result = variants.numba_call(dispatcher, row.args(NUMBA))
                    _, row.estimates[NUMBA] = harness.timed(lambda: dispatcher(*row.args(NUMBA)))  # noqa: B023
                except variants.NumbaCannotRun as exc:
                    self.numba_failure = str(exc)
                else:
                    row.numba_discrepancy = variants.numba_discrepancy(row.numba_result, row.plain_result) or ""
        print("checked two_level_nest: jitted results equal plain CPython's", flush=True)

    def numba_skipped(self) -> list[str]:
        return [KEY] if self.numba_missing or self.numba_failure else []

    def timings(self) -> list[harness.Timing]:
        timed = [PLAIN, JIT, NESTING_OFF]
        if not self.numba_missing and KEY not in self.numba_skip:
            timed.append(NUMBA)
        out = []
        for row in self.rows:
            for variant in timed:
                out.append(
                    harness.Timing(
                        f"nest/m={row.m}/{variant}",
                        harness.lazy_time_func(make_builder(variant, row.args(variant))),
                        harness.store_in(row.times, variant),
                        metadata={"kernel_size": "n={},m={}".format(*row.args(variant))},
                        seconds_per_run=row.estimates.get(variant),
                    )
                )
        return out

    def table(self) -> str:
        header = [
            "inner trips m",
            "outer n",
            "n (nesting off)",
            "plain CPython",
            "@jit",
            "nesting off",
            "numba.njit",
            "tracejit / Numba",
            "goal",
            "exits/call",
            "exits/call (nesting off)",
        ]
        body = []
        for row in self.rows:
            numba_bench = row.times.get(NUMBA)
            versus = tables.speed(numba_bench, row.times.get(JIT))
            goal = goal_for(row.m)
            if versus is None or row.numba_discrepancy:
                verdict = f">= {goal:.2f}x: -"
            else:
                verdict = f">= {goal:.2f}x: {'yes' if versus >= goal else 'no'}"
            numba_cell = self.per_outer(row, NUMBA)
            if row.numba_discrepancy:
                numba_cell += f" (wrong: {row.numba_discrepancy})"
            body.append(
                [
                    str(row.m),
                    str(row.n),
                    str(row.n_off),
                    self.per_outer(row, PLAIN),
                    self.per_outer(row, JIT),
                    self.per_outer(row, NESTING_OFF),
                    numba_cell,
                    tables.fmt_ratio(None if row.numba_discrepancy else versus),
                    verdict,
                    str(row.exits.get(JIT, "-")),
                    str(row.exits.get(NESTING_OFF, "-")),
                ]
            )
        lines = tables.markdown(header, "r" * len(header), body)
        lines += [
            "",
            "`two_level_nest(n, m)`: `for i in range(n): for j in range(m): total += (i ^ j) & 7`, with n * max(m, 1) "
            f"= {self.rows[0].n} inner iterations per call ({self.rows[0].n_off} with nesting off, which is much "
            "slower). Times are nanoseconds per outer iteration (pyperf median of the steady state / n, ± relative "
            "standard deviation), per-call costs included (spread over n). tracejit / Numba = Numba's time / "
            "@jit's time (above 1: tracejit is faster). Goal (issue 9): at least 0.67x (within 1.5x of Numba) "
            "from m = 8 up, 0.33x (within 3x) below. exits/call: `exits_to_interpreter` around one steady-state "
            "call.",
        ]
        if self.numba_missing:
            lines += ["", f"Numba column empty: {self.numba_missing}."]
        elif self.numba_failure:
            lines += ["", f"Numba column empty: Numba cannot compile two_level_nest as written: {self.numba_failure}"]
        wrong = [row for row in self.rows if row.numba_discrepancy]
        for row in wrong:
            lines.append(f"- m={row.m}: numba.njit returned {row.numba_result!r}, CPython {row.plain_result!r}.")
        return "\n".join(lines)

    @staticmethod
    def per_outer(row: NestRow, variant: str) -> str:
        return tables.fmt_per_unit(row.times.get(variant), row.args(variant)[0], 1e9, "ns")


def measure_jit(row: NestRow, variant: str) -> None:
    """Check a warmed-up jit instance's result and count its exits and native entries in one call."""
    f = variants.make_variant(kernels.two_level_nest, variant)
    args = row.args(variant)
    expected = row.plain_result_off if variant == NESTING_OFF else row.plain_result
    label = f"m={row.m}"
    harness.check("two_level_nest", variant, label, harness.warm_up(lambda: f(*args), f), expected)
    call = harness.steady_call(f, lambda: f(*args))
    harness.check("two_level_nest", variant, label, call.result, expected)
    row.exits[variant] = call.delta("exits_to_interpreter")
    row.entries[variant] = call.delta("native_entries")
    row.estimates[variant] = call.seconds
    if call.after["native_entries"] == 0:
        print(f"WARNING: two_level_nest ({variant}, {label}) does not run natively:\n{jit.explain(f)}", file=sys.stderr)


def make_builder(variant: str, args: tuple[int, int]) -> Any:
    def build() -> tuple[Any, tuple[int, int]]:
        f = variants.make_variant(kernels.two_level_nest, variant)
        harness.warm_up(lambda: f(*args), f)
        return f, args

    return build
