"""The NumPy array section (issue 10): the kernels of ``array_kernels.py`` (a 1-D reduction, a 2-D stencil, a
matrix multiply with explicit loops, all-pairs distances, a histogram, a Gaussian kernel density whose np.exp
terms mostly underflow) as plain CPython, ``@jit`` and
``numba.njit``, timed by pyperf in the steady state, with tracejit / Numba (Numba's time / @jit's time; goal:
at least 0.7x on each, exactly). Every jitted result (and Numba's) is checked against plain CPython's first, on
fresh arguments. Without NumPy the section says so and times nothing.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass, field
from typing import Any

import harness
import tables
import variants
from variants import JIT, NUMBA, PLAIN

from jit import jit

KEY = "arrays"
GOAL = 0.7
#: kernel -> size for --quick
QUICK_SIZES = {
    "sum_of_squares": 3000,
    "stencil": 30,
    "matmul": 12,
    "distances": 12,
    "histogram": 3000,
    "gaussian_sums": 200,
}


@dataclass
class ArrayRow:
    name: str
    n: int
    plain_result: Any = None
    numba_discrepancy: str = ""
    exits: int = 0
    traces: int = 0
    times: dict[str, Any] = field(default_factory=dict)
    estimates: dict[str, float] = field(default_factory=dict)


def _kernels() -> Any:
    import array_kernels  # (imports NumPy: only where the section runs)

    return array_kernels


class ArraySection:
    name = "arrays"
    title = "NumPy arrays"

    def __init__(self, quick: bool, numba_skip: frozenset[str] = frozenset()) -> None:
        self.numpy_missing = "" if importlib.util.find_spec("numpy") is not None else "NumPy is not installed"
        self.rows: list[ArrayRow] = []
        if not self.numpy_missing:
            for name, (_, size) in _kernels().ARRAY_KERNELS.items():
                self.rows.append(ArrayRow(name, QUICK_SIZES.get(name, size) if quick else size))
        self.numba_missing = "" if variants.numba_installed() else "Numba is not installed"
        self.numba_failures: dict[str, str] = {}
        self.numba_skip = numba_skip

    def prepare(self, repeats: int) -> None:
        if not self.numba_missing:
            self.numba_missing = variants.numba_import_problem() or ""
        for row in self.rows:
            kernel = _kernels().ARRAY_KERNELS[row.name][0]
            row.plain_result, row.estimates[PLAIN] = harness.timed(lambda: kernel(*self.args(row)))  # noqa: B023
            f = jit(kernel)
            harness.check(row.name, JIT, f"n={row.n}", harness.warm_up(lambda: f(*self.args(row)), f), row.plain_result)  # noqa: B023
            call = harness.steady_call(f, lambda: f(*self.args(row)))  # noqa: B023
            harness.check(row.name, JIT, f"n={row.n}", call.result, row.plain_result)
            row.exits = call.delta("exits_to_interpreter")
            row.traces = call.after["traces_compiled"]
            row.estimates[JIT] = call.seconds
            if call.after["native_entries"] == 0:
                print(f"WARNING: {row.name} does not run natively:\n{jit.explain(f)}", file=sys.stderr)
            if not self.numba_missing:
                dispatcher = variants.make_variant(kernel, NUMBA)
                try:
                    got = variants.numba_call(dispatcher, self.args(row))
                    _, row.estimates[NUMBA] = harness.timed(lambda: dispatcher(*self.args(row)))  # noqa: B023
                except variants.NumbaCannotRun as exc:
                    self.numba_failures[row.name] = str(exc)
                else:
                    row.numba_discrepancy = "" if same_number(got, row.plain_result) else "differs"
        print("checked array kernels: jitted results equal plain CPython's", flush=True)

    @staticmethod
    def args(row: ArrayRow) -> tuple[Any, ...]:
        return _kernels().inputs(row.name, row.n)

    def numba_skipped(self) -> list[str]:
        if self.numba_missing:
            return [KEY]
        return [f"{KEY}/{name}" for name in self.numba_failures]

    def timings(self) -> list[harness.Timing]:
        out = []
        for row in self.rows:
            timed = [PLAIN, JIT]
            if not self.numba_missing and KEY not in self.numba_skip and f"{KEY}/{row.name}" not in self.numba_skip:
                timed.append(NUMBA)
            for variant in timed:
                out.append(
                    harness.Timing(
                        f"arrays/{row.name}/{variant}",
                        harness.lazy_time_func(make_builder(row, variant)),
                        harness.store_in(row.times, variant),
                        metadata={"kernel_size": f"n={row.n}"},
                        seconds_per_run=row.estimates.get(variant),
                    )
                )
        return out

    def table(self) -> str:
        if self.numpy_missing:
            return f"Not run: {self.numpy_missing}."
        header = ["kernel", "n", "plain CPython", "@jit", "speedup", "numba.njit", "tracejit / Numba", "goal"]
        header += ["traces", "exits/call"]
        body = []
        for row in self.rows:
            versus = tables.speed(row.times.get(NUMBA), row.times.get(JIT))
            if row.numba_discrepancy:
                versus = None
            numba_cell = tables.fmt_bench(row.times.get(NUMBA))
            if row.numba_discrepancy:
                numba_cell += f" (wrong: {row.numba_discrepancy})"
            verdict = f">= {GOAL}x: " + ("-" if versus is None else "yes" if versus >= GOAL else "no")
            body.append(
                [
                    row.name,
                    str(row.n),
                    tables.fmt_bench(row.times.get(PLAIN)),
                    tables.fmt_bench(row.times.get(JIT)),
                    tables.fmt_ratio(tables.speed(row.times.get(PLAIN), row.times.get(JIT))),
                    numba_cell,
                    tables.fmt_ratio(versus),
                    verdict,
                    str(row.traces),
                    str(row.exits),
                ]
            )
        lines = tables.markdown(header, "l" + "r" * (len(header) - 1), body)
        lines += [
            "",
            "Kernels of `bench/array_kernels.py` on float64 arrays (histogram: int64 counts), the same arguments "
            "for every timed call (pyperf median ± relative standard deviation). Numba returns Python numbers where "
            "CPython returns NumPy scalars: its results are compared by value. tracejit / Numba = Numba's time "
            "/ @jit's time (above 1: tracejit is faster); goal (issue 10): at least 0.7x. exits/call: "
            "`exits_to_interpreter` around one steady-state call.",
        ]
        if self.numba_missing:
            lines += ["", f"Numba column empty: {self.numba_missing}."]
        for name, reason in self.numba_failures.items():
            lines.append(f"- {name}: Numba cannot compile it as written: {reason}")
        return "\n".join(lines)


def same_number(got: Any, expected: Any) -> bool:
    """Numba returns Python numbers where CPython returns NumPy scalars (numpy.float64, numpy.int64): the same
    value, exactly (floats by repr)?"""
    if isinstance(expected, float):  # (numpy.float64 is a float)
        return isinstance(got, float) and repr(float(got)) == repr(float(expected))
    return int(got) == int(expected)


def make_builder(row: ArrayRow, variant: str) -> Any:
    def build() -> tuple[Any, tuple[Any, ...]]:
        kernel = _kernels().ARRAY_KERNELS[row.name][0]
        f = variants.make_variant(kernel, variant)
        args = ArraySection.args(row)
        if variant != PLAIN:
            harness.warm_up(lambda: f(*args), f if variant == JIT else None)
        return f, args

    return build
