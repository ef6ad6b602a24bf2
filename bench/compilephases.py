"""Where compiling a trace goes, per benchmark kernel (issue 9: compile time).

    python bench/compilephases.py [--quick] [--repeats N] [kernel ...]

For each kernel of ``bench/kernels.py`` (``KERNELS``), a fresh ``jit(f)`` instance runs its first call (size as
in the kernels section); ``jit.stats`` gives the traces compiled, their median ``compile ms/trace`` (what the
benchmark's kernels table reports) and ``compile_phases_ms``, the parts of ``compile_ms``: the trace optimizer
and the lowering to LLVM IR (Python), then ``codegen.engine.PHASES`` (LLVM). Phases are printed as ms per
trace (their sum over the kernel's traces divided by the number of traces). With --repeats N each kernel is
compiled N times (fresh instances) and the medians over the repeats are printed. This is a diagnostic: its
times are single measurements on a noisy machine, not the benchmark's.
"""

from __future__ import annotations

import argparse
import statistics

import kernels
from kernelspeed import QUICK_SIZES, SIZES, warm_llvm

from codegen.engine import PHASES
from jit import jit

COLUMNS = ("optimize", "lower", *PHASES)


def measure(name: str, size: int) -> tuple[int, float, dict[str, float]]:
    """One fresh instance's first call: traces compiled, median compile ms/trace, phases in ms per trace."""
    func, _ = kernels.KERNELS[name]
    instance = jit(func)
    instance(size)
    s = jit.stats(instance)
    traces = s["traces_compiled"]
    median = statistics.median(s["compile_ms_per_trace"]) if traces else 0.0
    phases = {phase: s["compile_phases_ms"].get(phase, 0.0) / max(traces, 1) for phase in COLUMNS}
    return traces, median, phases


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("kernels", nargs="*", help="kernel names (default: all of KERNELS)")
    args = parser.parse_args(argv)
    sizes = QUICK_SIZES if args.quick else SIZES
    names = args.kernels or list(kernels.KERNELS)
    warm_llvm()
    header = f"{'kernel':16} {'traces':>6} {'ms/trace':>8} " + " ".join(f"{c:>9}" for c in COLUMNS)
    print(header)
    medians = []
    for name in names:
        runs = [measure(name, sizes[name]) for _ in range(args.repeats)]
        traces = runs[0][0]
        median = statistics.median(r[1] for r in runs)
        medians.append(median)
        phases = {c: statistics.median(r[2][c] for r in runs) for c in COLUMNS}
        print(f"{name:16} {traces:6d} {median:8.2f} " + " ".join(f"{phases[c]:9.2f}" for c in COLUMNS), flush=True)
    if medians:
        print(f"median over kernels of the median compile ms/trace: {statistics.median(medians):.2f}")


if __name__ == "__main__":
    main()
