"""tracejit's benchmark: plain CPython against ``@jit`` and ``numba.njit``, timed with pyperf in one run.

    python bench/bench.py                    # default: 3 worker processes x 3 values per benchmark (~5 minutes)
    python bench/bench.py --quick            # CI smoke run: small sizes, 1 process x 1 value
    python bench/bench.py --sections nest,handoff   # only some sections (default: all)
    python bench/bench.py --fast             # pyperf's --fast, relative to the defaults above
    python bench/bench.py --rigorous         # pyperf's own defaults (20 processes), doubled: slow
    python bench/bench.py -p 6 --values 5    # any pyperf option passes through (see --help)

Sections, one module each (in this order):

- ``kernels`` (``kernelspeed.py``): the numeric kernels of ``kernels.py``: plain CPython, ``@jit``,
  ``@jit(nesting=False)``, ``numba.njit``; first calls, compile times and ``jit.stats`` counts.
- ``nest`` (``nestcost.py``): the nested-call cost, ns per outer iteration of a two-level nest by inner trip count.
- ``handoff`` (``handoff.py``): the cost of entering and leaving native code, from a loop called many times.
- ``ordinary`` (``noslowdown.py``): ordinary Python that tracejit cannot speed up must not get slower.
- ``arrays`` (``arraysection.py``): loops over NumPy arrays (``array_kernels.py``): plain CPython, ``@jit``,
  ``numba.njit``.

pyperf times the steady state: each worker process makes its own variant (a ``jit(f)`` instance, a Numba
dispatcher), calls it until the JIT compiles nothing new (untimed; Numba compiles at its first call), then
pyperf's warm-up value runs before the timed ones. The main process (never a pyperf worker) first prepares every
section: checks that every jitted result equals plain CPython's (exits with status 2 if not), times first calls,
reads ``jit.stats``, compiles with Numba (what Numba cannot compile is not timed, and the table says why). At
the end it prints the tables and writes them to ``bench/results/latest.md`` (``--markdown PATH``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import pyperf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import arraysection  # noqa: E402  (lives next to this file)
import handoff  # noqa: E402
import harness  # noqa: E402
import kernelspeed  # noqa: E402
import nestcost  # noqa: E402
import noslowdown  # noqa: E402
import tables  # noqa: E402

from jit.environment import jit_disabled  # noqa: E402

#: section name -> its class, in the order of the report
SECTIONS: dict[str, Any] = {
    kernelspeed.KernelSection.name: kernelspeed.KernelSection,
    nestcost.NestSection.name: nestcost.NestSection,
    handoff.HandoffSection.name: handoff.HandoffSection,
    noslowdown.NoSlowdownSection.name: noslowdown.NoSlowdownSection,
    arraysection.ArraySection.name: arraysection.ArraySection,
}
FIRST_CALL_REPEATS = 3  # fresh instances whose first call is timed (median); 1 with --quick


def parse_sections(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in SECTIONS]
    if unknown or not names:
        raise SystemExit(
            f"bench.py: unknown section(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(SECTIONS)}"
        )
    return [name for name in SECTIONS if name in names]  # report order, no duplicates


def add_cmdline_args(cmd: list[str], args: Any) -> None:
    """Forward our own options to pyperf's worker processes: each worker must build the same list of timings."""
    if args.quick:
        cmd.append("--quick")
    cmd += ["--sections", args.sections]
    if args.numba_skip:
        cmd += ["--numba-skip", args.numba_skip]


def make_runner() -> pyperf.Runner:
    argv = sys.argv[1:]
    if "--quick" in argv:
        kwargs: dict[str, Any] = {"processes": 1, "values": 1, "warmups": 1, "min_time": 0.02}
    elif "--rigorous" in argv:
        kwargs = {}  # pyperf's defaults, which --rigorous doubles
    else:
        kwargs = {"processes": 3, "values": 3, "warmups": 1}
    runner = pyperf.Runner(add_cmdline_args=add_cmdline_args, **kwargs)
    parser = runner.argparser
    parser.add_argument("--quick", action="store_true", help="small sizes and a single process/value (CI smoke run)")
    parser.add_argument(
        "--sections",
        default=",".join(SECTIONS),
        help=f"comma-separated sections to run (default: {','.join(SECTIONS)})",
    )
    parser.add_argument(
        "--markdown",
        default=os.path.join(HERE, "results", "latest.md"),
        help="where to write the tables (default: bench/results/latest.md)",
    )
    # set by the main process for its workers: the Numba variants it could not compile (comma-separated keys)
    parser.add_argument("--numba-skip", default="", help=argparse.SUPPRESS)
    runner.metadata["description"] = "tracejit: plain CPython vs @jit vs numba.njit"
    return runner


def loops_for(seconds_per_run: float, min_time: float) -> int:
    """pyperf's calibration, from the main process's own measurement: the smallest power of two of runs that
    last at least min_time."""
    loops = 1
    while loops * seconds_per_run < min_time and loops < 2**20:
        loops *= 2
    return loops


def header(args: Any, started: float, durations: dict[str, float]) -> str:
    mode = "quick" if args.quick else "rigorous" if args.rigorous else "fast" if args.fast else "default"
    spent = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in durations.items())
    return (
        f"tracejit benchmark ({mode}: {tables.plural(args.processes, 'process', 'es')} x "
        f"{tables.plural(args.values, 'value')}), Python {sys.version.split()[0]}, {time.strftime('%Y-%m-%d %H:%M')}; "
        f"wall time {time.perf_counter() - started:.0f} s ({spent})"
    )


def main() -> int:
    started = time.perf_counter()
    runner = make_runner()
    args = runner.parse_args()
    names = parse_sections(args.sections)
    args.sections = ",".join(names)
    numba_skip = frozenset(key for key in args.numba_skip.split(",") if key)
    sections = [SECTIONS[name](args.quick, numba_skip) for name in names]
    in_main = not args.worker
    durations: dict[str, float] = {}  # section -> seconds of wall time (prepare and timings)

    if in_main:
        if jit_disabled():
            print("WARNING: JIT_DISABLE is set: @jit runs plain CPython", file=sys.stderr)
        repeats = 1 if args.quick else FIRST_CALL_REPEATS
        for section in sections:
            section_started = time.perf_counter()
            section.prepare(repeats)
            durations[section.name] = time.perf_counter() - section_started
        # the workers must leave out exactly what the main process found Numba cannot compile
        skipped = [key for section in sections for key in section.numba_skipped()]
        args.numba_skip = ",".join(skipped)
        for section in sections:
            section.numba_skip = frozenset(skipped)

    results = []
    loops_given = args.loops
    for section in sections:
        section_started = time.perf_counter()
        for timing in section.timings():
            if in_main and not loops_given and timing.seconds_per_run:
                args.loops = loops_for(timing.seconds_per_run, args.min_time)
            bench = runner.bench_time_func(
                timing.name, timing.time_func, inner_loops=timing.inner_loops, metadata=timing.metadata
            )
            args.loops = loops_given
            timing.store(bench)
            results.append(bench)
        if in_main:
            durations[section.name] += time.perf_counter() - section_started
    if not in_main or any(bench is None for bench in results):
        return 0  # a worker, or a pyperf mode that does not return results (--compare-to, ...)

    report = header(args, started, durations)
    for section in sections:
        report += f"\n\n## {section.title}\n\n{section.table()}"
    print()
    print(report)
    os.makedirs(os.path.dirname(os.path.abspath(args.markdown)), exist_ok=True)
    with open(args.markdown, "w") as fp:
        fp.write(report + "\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except harness.WrongResult as exc:
        print(f"\nFAILED: {exc}", file=sys.stderr)
        sys.exit(2)
