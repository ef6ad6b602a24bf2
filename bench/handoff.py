"""The entry/exit cost section: what one trip from Python into native code and back costs.

``twelve_locals(k)`` has a dozen live locals around one loop of k = 1, 2, 4 or 16 iterations; plain Python calls
it many times (``call_many``), as plain CPython, under ``@jit`` (whose loop goes back to CPython when its native
entries do not pay: what a user gets) and under ``@jit(min_native_iterations=0, warmup=0)``, which enters native code at
every call. Once its loop has a tree, each call of the latter enters native code at the loop's header and leaves
it at the loop's end, so

    round trip = (its time per call - plain CPython's time per call) / native entries per call

charges everything ``@jit`` adds to a call to its native round trips: an upper bound of the cost of entering
and leaving native code, and that cost itself once the rest of the call runs at CPython's speed. Native entries per call come from
``jit.stats``; where there are none (the loop did not run natively: not compiled, or not entered because it
does not pay), the table says so instead of deriving a number that would measure something else.

The same run times ``@jit(min_native_iterations=0, warmup=0, entry_stubs=False)``, which enters native code as tracejit
did before entry stubs (the frame unboxed into a buffer and boxed back in Python, the tree called through
ctypes), and the table gives both round trips and their ratio: what the native entry stubs
(``codegen/entry.py``) save. Calls per timed run times pyperf's loops and values: the loop is entered about a
million times per variant and trip count in a default run.

Goal (issue 7 item 2): a round trip costs at most about 1.5 us.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

import harness
import kernels
import tables
import variants
from variants import ALWAYS_ENTER, JIT, PLAIN, PYTHON_ENTRY

from jit import jit

TRIP_COUNTS = (1, 2, 3, 4, 16)
#: calls of twelve_locals per timed run (pyperf reports the time per call)
CALLS = 2000
QUICK_CALLS = 200
GOAL_US = 1.5


@dataclass
class HandoffRow:
    k: int
    calls: int
    plain_result: Any = None
    native_entries_per_call: float = 0.0
    exits_per_call: float = 0.0
    mode: str = ""
    times: dict[str, Any] = field(default_factory=dict)
    estimates: dict[str, float] = field(default_factory=dict)  # variant -> seconds of one run, from prepare

    @property
    def args(self) -> tuple[int, int]:
        return self.calls, self.k

    def round_trip_us(self, variant: str = ALWAYS_ENTER) -> float | None:
        """The round trip of variant (ALWAYS_ENTER, or PYTHON_ENTRY: without entry stubs), in us."""
        plain, jitted = self.times.get(PLAIN), self.times.get(variant)
        if plain is None or jitted is None or self.native_entries_per_call <= 0:
            return None
        return (jitted.median() - plain.median()) * 1e6 / self.native_entries_per_call


class HandoffSection:
    name = "handoff"
    title = "Entry/exit cost"

    def __init__(self, quick: bool, numba_skip: frozenset[str] = frozenset()) -> None:
        calls = QUICK_CALLS if quick else CALLS
        self.rows = [HandoffRow(k, calls) for k in TRIP_COUNTS]
        self.numba_skip = numba_skip  # no Numba variant here

    def prepare(self, repeats: int) -> None:
        for row in self.rows:
            measure_jit(row)
        print("checked twelve_locals: jitted results equal plain CPython's", flush=True)

    def numba_skipped(self) -> list[str]:
        return []

    def timings(self) -> list[harness.Timing]:
        return [
            harness.Timing(
                f"handoff/k={row.k}/{variant}",
                harness.lazy_time_func(make_builder(variant, row.args)),
                harness.store_in(row.times, variant),
                inner_loops=row.calls,
                metadata={"kernel_size": f"k={row.k},calls={row.calls}"},
                seconds_per_run=row.estimates.get(variant),
            )
            for row in self.rows
            for variant in (PLAIN, JIT, ALWAYS_ENTER, PYTHON_ENTRY)
        ]

    def table(self) -> str:
        header = [
            "loop trips k",
            "plain CPython",
            "@jit",
            "@jit / plain",
            "always entering",
            "native entries/call",
            "exits/call",
            "round trip",
            "goal",
            "round trip, entry in Python",
            "stubs' speed-up",
        ]
        body = []
        for row in self.rows:
            plain, jitted, always = row.times.get(PLAIN), row.times.get(JIT), row.times.get(ALWAYS_ENTER)
            trip = row.round_trip_us()
            before = row.round_trip_us(PYTHON_ENTRY)
            if trip is None:
                trip_cell = f"- (no native entries; mode {row.mode})" if row.native_entries_per_call == 0 else "-"
                verdict = "-"
            else:
                trip_cell = f"{trip:.2f} us"
                verdict = f"<= {GOAL_US} us: {'yes' if trip <= GOAL_US else 'no'}"
            before_cell = "-" if before is None else f"{before:.2f} us"
            ratio = "-" if before is None or trip is None or trip <= 0 else f"{before / trip:.1f}x"
            body.append(
                [
                    str(row.k),
                    tables.fmt_per_unit(plain, 1, 1e6, "us"),
                    tables.fmt_per_unit(jitted, 1, 1e6, "us"),
                    tables.fmt_ratio(tables.speed(jitted, plain)),
                    tables.fmt_per_unit(always, 1, 1e6, "us"),
                    f"{row.native_entries_per_call:.2f}",
                    f"{row.exits_per_call:.2f}",
                    trip_cell,
                    verdict,
                    before_cell,
                    ratio,
                ]
            )
        lines = tables.markdown(header, "r" * len(header), body)
        lines += [
            "",
            f"`twelve_locals(k)` (a dozen live locals, one loop of k iterations) called {self.rows[0].calls} times "
            "per timed run from a plain Python loop; times are microseconds per call (pyperf medians). @jit / plain: how many "
            "times slower than plain (its loop runs in CPython once its entries are found not to pay); always entering "
            "= `@jit(min_native_iterations=0, warmup=0)`, whose native entries and exits per call come from `jit.stats` around "
            "one such run. Round trip = (always entering - plain) / native entries per call: everything @jit adds to a call, charged to its trips into native code and "
            "back (an upper bound of that cost: the hand-off's Python included). "
            f'Goal (issue 7): at most about {GOAL_US} us. "no native entries": the loop did not run '
            "natively, so there is no round trip to derive. Entry in Python = `@jit(min_native_iterations=0, "
            "warmup=0, entry_stubs=False)`, entering as before the native entry stubs (frame unboxed and boxed in Python, tree "
            "called through ctypes), timed in the same run; speed-up = its round trip / the stubs' round trip.",
        ]
        return "\n".join(lines)


def measure_jit(row: HandoffRow) -> None:
    """Check warmed-up jit instances' results; count the native entries and exits per call of the one that
    always enters native code."""
    row.plain_result, row.estimates[PLAIN] = harness.timed(lambda: kernels.call_many(kernels.twelve_locals, *row.args))
    label = f"k={row.k}"
    entries = {}
    for variant in (JIT, ALWAYS_ENTER, PYTHON_ENTRY):
        f = variants.make_variant(kernels.twelve_locals, variant)
        harness.check(
            "twelve_locals",
            variant,
            label,
            harness.warm_up(lambda f=f: kernels.call_many(f, *row.args), f),
            row.plain_result,
        )
        call = harness.steady_call(f, lambda f=f: kernels.call_many(f, *row.args))
        harness.check("twelve_locals", variant, label, call.result, row.plain_result)
        row.estimates[variant] = call.seconds
        entries[variant] = call
        if variant == ALWAYS_ENTER:
            always = f
    call = entries[ALWAYS_ENTER]
    row.native_entries_per_call = call.delta("native_entries") / row.calls
    row.exits_per_call = call.delta("exits_to_interpreter") / row.calls
    row.mode = call.after["mode"]
    if entries[PYTHON_ENTRY].delta("native_entries") != call.delta("native_entries"):
        print(f"NOTE: twelve_locals ({label}): the two ways of entering made different native entries", file=sys.stderr)
    if row.native_entries_per_call == 0:
        print(f"NOTE: twelve_locals ({label}) made no native entries:\n{jit.explain(always)}", file=sys.stderr)


def make_builder(variant: str, args: tuple[int, int]) -> Any:
    def build() -> tuple[Any, tuple[Any, ...]]:
        f = variants.make_variant(kernels.twelve_locals, variant)
        harness.warm_up(lambda: kernels.call_many(f, *args), f)
        return kernels.call_many, (f, *args)

    return build
