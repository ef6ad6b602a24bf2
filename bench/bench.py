"""tracejit's benchmark: plain CPython against ``@jit`` on the kernels of ``bench/kernels.py``, timed with pyperf.

    python bench/bench.py                 # default: 3 worker processes x 3 values per benchmark (~2-3 minutes)
    python bench/bench.py --quick         # CI smoke run: small sizes, 1 process x 1 value
    python bench/bench.py --fast          # pyperf's --fast, relative to the defaults above
    python bench/bench.py --rigorous      # pyperf's own defaults (20 processes), doubled: slow
    python bench/bench.py -p 6 --values 5 # any pyperf option passes through (see --help)

Every kernel runs as plain CPython and under ``@jit`` (nesting on, the default); kernels with nested loops also
under ``@jit(nesting=False)``. pyperf times the steady state: each worker process makes its own ``jit(f)``,
calls it until no more traces get compiled (untimed), then pyperf's warm-up value runs before the timed ones.

The main process (never a pyperf worker) also checks that every jitted result equals plain CPython's (and
exits with an error if not), times the first call of fresh ``jit(f)`` instances (recording and compiling
included), and reads ``jit.stats`` around one extra steady-state call. At the end it prints a markdown table
and writes it to ``bench/results/latest.md``.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyperf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import kernels  # noqa: E402  (lives next to this file)
import noslowdown  # noqa: E402
import ordinary  # noqa: E402

from jit import jit  # noqa: E402
from jit.environment import jit_disabled  # noqa: E402

#: sizes chosen so that plain CPython takes roughly 10-100 ms per call
SIZES = {
    "nested_int": 600,
    "mandelbrot": 120,
    "collatz": 5000,
    "float_sum": 300_000,
    "nested2_branchy": 600,
    "nested3": 70,
}
#: --quick: small sizes for a smoke run (~1-5 ms of plain CPython per call)
QUICK_SIZES = {
    "nested_int": 100,
    "mandelbrot": 30,
    "collatz": 500,
    "float_sum": 20_000,
    "nested2_branchy": 100,
    "nested3": 20,
}

VARIANTS = ("plain", "jit", "nesting-off")
FIRST_CALL_REPEATS = 3  # fresh jit(f) instances whose first call is timed (median); 1 with --quick
MAX_WARMUP_CALLS = 20
STABLE_CALLS = 3  # warm-up ends after this many calls that compiled nothing new


# --- the functions being timed ---------------------------------------------------------------------------
def make_variant(func: Callable[[int], Any], variant: str) -> Callable[[int], Any]:
    """A fresh callable for one variant: the plain function, or a new jit instance of it."""
    if variant == "plain":
        return func
    if variant == "jit":
        return jit(func)
    if variant == "nesting-off":
        return jit(nesting=False)(func)
    raise ValueError(variant)


def is_jitted(f: Any) -> bool:
    return hasattr(f, "py_func")


def warm_up(f: Callable[[int], Any], n: int) -> Any:
    """Call f until the JIT has compiled nothing new for a few calls (an outer loop with few iterations per
    call gets hot only after several calls; side traces grow after a few exits); returns the last result."""
    result = f(n)
    if not is_jitted(f):
        return result
    seen = None
    stable = 0
    for _ in range(MAX_WARMUP_CALLS):
        s = jit.stats(f)
        key = (s["traces_compiled"], s["aborts_total"], s["invalidated_trees"])
        stable = stable + 1 if key == seen else 0
        if stable >= STABLE_CALLS:
            break
        seen = key
        result = f(n)
    return result


def make_time_func(func: Callable[[int], Any], variant: str, n: int) -> Callable[[int], float]:
    """pyperf's time_func(loops). The jit instance is made and warmed up lazily, untimed, on the first
    call, so that only the worker process that runs this benchmark pays for it."""
    holder: list[Callable[[int], Any]] = []

    def time_func(loops: int) -> float:
        if not holder:
            f = make_variant(func, variant)
            warm_up(f, n)
            holder.append(f)
        f = holder[0]
        timer = time.perf_counter
        t0 = timer()
        for _ in range(loops):
            f(n)
        return timer() - t0

    return time_func


# --- measurements in the main process --------------------------------------------------------------------
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
class KernelRow:
    name: str
    size: int
    nested: bool
    plain_result: Any = None
    facts: dict[str, JitFacts] = field(default_factory=dict)
    times: dict[str, Any] = field(default_factory=dict)  # variant -> pyperf.Benchmark


class WrongResult(AssertionError):
    pass


def check(name: str, variant: str, what: str, got: Any, expected: Any) -> None:
    if type(got) is not type(expected) or got != expected:
        raise WrongResult(
            f"JIT BUG: {name} ({variant}, {what}) returned {got!r} ({type(got).__name__}), "
            f"plain CPython returned {expected!r} ({type(expected).__name__})"
        )


def llvm_warmup_kernel(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def warm_llvm() -> None:
    """Initialize LLVM once, so that the first kernel's first-call time does not include it."""
    f = jit(llvm_warmup_kernel)
    check("llvm_warmup_kernel", "jit", "warm-up", f(1000), llvm_warmup_kernel(1000))


def measure_facts(row: KernelRow, variant: str, repeats: int) -> JitFacts:
    func, _ = kernels.KERNELS[row.name]
    n = row.size
    first_ms: list[float] = []
    instance = None
    for _ in range(repeats):
        f = make_variant(func, variant)
        t0 = time.perf_counter()
        result = f(n)
        first_ms.append((time.perf_counter() - t0) * 1e3)
        check(row.name, variant, "first call", result, row.plain_result)
        instance = instance or f
    assert instance is not None
    check(row.name, variant, "warm-up", warm_up(instance, n), row.plain_result)
    before = jit.stats(instance)
    result = instance(n)
    after = jit.stats(instance)
    check(row.name, variant, "steady state", result, row.plain_result)
    per_trace = after["compile_ms_per_trace"]
    facts = JitFacts(
        first_call_ms=statistics.median(first_ms),
        traces_compiled=after["traces_compiled"],
        compile_ms_median=statistics.median(per_trace) if per_trace else 0.0,
        exits_per_call=after["exits_to_interpreter"] - before["exits_to_interpreter"],
        native_entries_per_call=after["native_entries"] - before["native_entries"],
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


# --- the table -------------------------------------------------------------------------------------------
def plural(count: int, word: str, suffix: str = "s") -> str:
    return f"{count} {word}{'' if count == 1 else suffix}"


def fmt_time(seconds: float) -> str:
    ms = seconds * 1e3
    if ms >= 100:
        return f"{ms:.0f} ms"
    if ms >= 10:
        return f"{ms:.1f} ms"
    if ms >= 1:
        return f"{ms:.2f} ms"
    return f"{ms * 1e3:.0f} us"


def fmt_bench(bench: Any) -> str:
    if bench is None:
        return "-"
    values = bench.get_values()
    spread = f" ± {statistics.stdev(values) / statistics.median(values) * 100:.0f}%" if len(values) > 1 else ""
    return fmt_time(bench.median()) + spread


def ratio(plain: Any, other: Any) -> str:
    if plain is None or other is None:
        return "-"
    return f"{plain.median() / other.median():.1f}x"


def make_table(rows: list[KernelRow], header_note: str) -> str:
    lines = [
        header_note,
        "",
        "| kernel | n | plain CPython | @jit | speedup | @jit first call | nesting off | speedup (nesting off) "
        "| traces | compile ms/trace | exits/call | exits/call (nesting off) | aborts |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        plain = row.times.get("plain")
        jitted = row.times.get("jit")
        off = row.times.get("nesting-off")
        facts = row.facts["jit"]
        off_facts = row.facts.get("nesting-off")
        aborts = sum(facts.aborts.values())
        native = "" if facts.native_entries_per_call else " (not native!)"
        lines.append(
            f"| {row.name}{native} | {row.size} | {fmt_bench(plain)} | {fmt_bench(jitted)} | {ratio(plain, jitted)} "
            f"| {facts.first_call_ms:.0f} ms | {fmt_bench(off) if row.nested else '-'} "
            f"| {ratio(plain, off) if row.nested else '-'} | {facts.traces_compiled} "
            f"| {facts.compile_ms_median:.1f} | {facts.exits_per_call} "
            f"| {off_facts.exits_per_call if off_facts else '-'} | {aborts} |"
        )
    lines += [
        "",
        "Times are pyperf medians (± relative standard deviation) of the steady state; speedup = plain / jit "
        "from the same run. First call: median over fresh `jit(f)` instances of the first call, recording "
        "and compilation included (LLVM initialized beforehand). traces, compile ms/trace (median), exits/call "
        "(`exits_to_interpreter` around one steady-state call) and aborts come from `jit.stats` of the @jit "
        "(nesting on) instance.",
    ]
    aborted = [(row.name, v, f.aborts) for row in rows for v, f in row.facts.items() if f.aborts]
    if aborted:
        lines += ["", "Aborted recordings:", ""]
        for name, variant, aborts in aborted:
            for reason, count in aborts.items():
                lines.append(f"- {name} ({variant}): {count} x {reason}")
    return "\n".join(lines)


# --- main ------------------------------------------------------------------------------------------------
def add_cmdline_args(cmd: list[str], args: Any) -> None:
    """Forward our own options to pyperf's worker processes."""
    if args.quick:
        cmd.append("--quick")


def make_runner() -> pyperf.Runner:
    argv = sys.argv[1:]
    if "--quick" in argv:
        kwargs: dict[str, Any] = {"processes": 1, "values": 1, "warmups": 1, "min_time": 0.02}
    elif "--rigorous" in argv:
        kwargs = {}  # pyperf's defaults, which --rigorous doubles
    else:
        kwargs = {"processes": 3, "values": 3, "warmups": 1}
    runner = pyperf.Runner(add_cmdline_args=add_cmdline_args, **kwargs)
    runner.argparser.add_argument(
        "--quick", action="store_true", help="small sizes and a single process/value, for a CI smoke run"
    )
    runner.metadata["description"] = "tracejit: plain CPython vs @jit"
    return runner


def main() -> int:
    runner = make_runner()
    args = runner.parse_args()
    sizes = QUICK_SIZES if args.quick else SIZES
    rows = [KernelRow(name, sizes[name], nested) for name, (_, nested) in kernels.KERNELS.items()]
    in_main = not args.worker

    if in_main:
        if jit_disabled():
            print("WARNING: JIT_DISABLE is set: @jit runs plain CPython", file=sys.stderr)
        warm_llvm()
        repeats = 1 if args.quick else FIRST_CALL_REPEATS
        for row in rows:
            func, _ = kernels.KERNELS[row.name]
            row.plain_result = func(row.size)
            for variant in VARIANTS[1:] if row.nested else ("jit",):
                row.facts[variant] = measure_facts(row, variant, repeats)
            print(f"checked {row.name}({row.size}): jitted results equal plain CPython's", flush=True)

    ordinary_rows = [
        noslowdown.OrdinaryRow(name, case, case.quick_size if args.quick else case.size)
        for name, case in ordinary.ORDINARY.items()
    ]
    if in_main:
        for orow in ordinary_rows:
            noslowdown.measure_first_calls(orow, 1 if args.quick else FIRST_CALL_REPEATS, check)
        print("checked the ordinary functions: jitted results equal plain CPython's", flush=True)

    for row in rows:
        func, _ = kernels.KERNELS[row.name]
        for variant in VARIANTS if row.nested else VARIANTS[:2]:
            bench = runner.bench_time_func(
                f"{row.name}/{variant}",
                make_time_func(func, variant, row.size),
                metadata={"kernel_size": str(row.size)},
            )
            row.times[variant] = bench
    for orow in ordinary_rows:
        for variant in noslowdown.VARIANTS:
            orow.times[variant] = runner.bench_time_func(
                f"ordinary/{orow.name}/{variant}",
                noslowdown.make_time_func(orow.case, variant, orow.size),
                metadata={"kernel_size": str(orow.size)},
            )

    timed = [*(b for row in rows for b in row.times.values()), *(b for r in ordinary_rows for b in r.times.values())]
    if not in_main or any(b is None for b in timed):
        return 0  # a worker, or a pyperf mode that does not return results (--compare-to, ...)

    mode = "quick" if args.quick else "rigorous" if args.rigorous else "fast" if args.fast else "default"
    note = (
        f"tracejit benchmark ({mode}: {plural(args.processes, 'process', 'es')} x {plural(args.values, 'value')}), "
        f"Python {sys.version.split()[0]}, {time.strftime('%Y-%m-%d %H:%M')}"
    )
    table = make_table(rows, note)
    table += "\n\n## Ordinary Python: never slower\n\n" + noslowdown.make_table(ordinary_rows, fmt_bench)
    print()
    print(table)
    results_dir = os.path.join(HERE, "results")
    os.makedirs(results_dir, exist_ok=True)
    with open(os.path.join(results_dir, "latest.md"), "w") as fp:
        fp.write(table + "\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except WrongResult as exc:
        print(f"\nFAILED: {exc}", file=sys.stderr)
        sys.exit(2)
