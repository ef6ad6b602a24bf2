"""Where a trace's compile time goes, in process (CPU) time, per benchmark kernel (issue 9: compile time).

    python bench/compilesplit.py [--no-warm] [--profile FILE] [--opt-level N] [kernel ...]

``bench/compilephases.py`` prints ``jit.stats``'s ``compile_phases_ms``: wall-clock time, which on the shared
2-core machine is often twice the CPU time, so the same code measures differently from one run to the next. This
script runs each kernel's first call (a fresh ``jit(f)``, sizes as in the kernels section) with process-time
timers around each part of compiling: the trace optimizer, the lowering to LLVM IR (building llvmlite's objects,
then printing the module's text: build_ir, ir_text), LLVM's parsing and verifying, its IR passes (the trace pipeline and the
vectorizing one), machine-code generation and linking, and what the rest of the first call took (the front end,
recording, the interpreter and the native code running). Figures are ms per trace (sums over the kernel's traces
divided by their number). With --profile FILE, a cProfile of the first calls goes to FILE (sorted by own time).
A diagnostic, not the benchmark: its numbers are single runs.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import io
import pstats
import statistics
import time
from collections.abc import Callable
from typing import Any

import kernels
import llvmlite.binding as llvm
import llvmlite.ir as llvm_ir
from kernelspeed import SIZES, warm_llvm

import codegen.function
import jit.monitor
from jit import jit as make_jit

COLUMNS = ("rest", "compile", "optimize", "build_ir", "ir_text", "parse", "verify", "passes", "codegen", "link")

_spent: dict[str, float] = {}
_originals: list[tuple[Any, str, Any]] = []  # (what instrument replaced, to put back)


def _timed(owner: Any, name: str, column: str) -> None:
    """Wrap owner.name so that its process time adds up in column."""
    original: Callable[..., Any] = getattr(owner, name)
    _originals.append((owner, name, original))

    @functools.wraps(original)
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            _spent[column] = _spent.get(column, 0.0) + (time.process_time() - start) * 1e3

    setattr(owner, name, timed)


def instrument() -> None:
    """Timers around the parts of compiling (the monitor's names for them, and llvmlite's calls)."""
    _timed(jit.monitor, "optimize", "optimize")
    _timed(jit.monitor, "lower_trace", "lower")
    _timed(llvm_ir.Module, "__str__", "ir_text")  # (the entry stubs' support library, once)
    _timed(codegen.function, "module_text", "ir_text")  # (a trace's module: codegen.text)
    _timed(llvm, "parse_assembly", "parse")
    _timed(llvm.ModuleRef, "verify", "verify")
    _timed(llvm.ModulePassManager, "run", "passes")
    _timed(llvm.TargetMachine, "emit_object", "codegen")
    _timed(llvm.JITLibraryBuilder, "link", "link")
    _timed(jit.monitor.Monitor, "_compile_and_install", "install")


def uninstrument() -> None:
    """Put back what instrument replaced."""
    while _originals:
        owner, name, original = _originals.pop()
        setattr(owner, name, original)


def measure(
    name: str, profile: cProfile.Profile | None, options: dict[str, Any] | None = None
) -> tuple[int, float, dict[str, float]]:
    """One fresh instance's first call (options: of ``jit``): its traces, its wall time in ms and the CPU ms per
    trace of COLUMNS."""
    func, _ = kernels.KERNELS[name]
    instance = make_jit(func, **(options or {}))
    _spent.clear()
    start, cpu = time.perf_counter(), time.process_time()
    if profile is not None:
        profile.enable()
    instance(SIZES[name])
    if profile is not None:
        profile.disable()
    wall = (time.perf_counter() - start) * 1e3
    cpu = (time.process_time() - cpu) * 1e3
    traces = make_jit.stats(instance)["traces_compiled"]
    spent = dict(_spent)
    compiled = spent.get("optimize", 0.0) + spent.get("lower", 0.0) + spent.get("install", 0.0)
    spent["compile"] = compiled
    spent["rest"] = cpu - compiled
    spent["build_ir"] = spent.get("lower", 0.0) - spent.get("ir_text", 0.0)
    return traces, wall, {column: spent.get(column, 0.0) / max(traces, 1) for column in COLUMNS}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", metavar="FILE", help="write a cProfile of the first calls to FILE")
    parser.add_argument("--opt-level", type=int, default=None, help="the jit option opt_level (default: its default)")
    parser.add_argument("kernels", nargs="*", help="kernel names (default: all of KERNELS)")
    args = parser.parse_args(argv)
    names = args.kernels or list(kernels.KERNELS)
    warm_llvm()
    profile = cProfile.Profile() if args.profile else None
    print("CPU ms per trace (first call: wall ms)")
    print(f"{'kernel':16} {'traces':>6} {'first':>6} " + " ".join(f"{c:>9}" for c in COLUMNS))
    per_trace = []
    instrument()
    try:
        for name in names:
            options = {} if args.opt_level is None else {"opt_level": args.opt_level}
            traces, wall, split = measure(name, profile, options)
            per_trace.append(split["compile"])
            print(f"{name:16} {traces:6d} {wall:6.0f} " + " ".join(f"{split[c]:9.2f}" for c in COLUMNS), flush=True)
    finally:
        uninstrument()
    if per_trace:
        print(f"median over kernels of the CPU compile ms per trace: {statistics.median(per_trace):.2f}")
    if profile is not None:
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(80)
        with open(args.profile, "w") as file:
            file.write(out.getvalue())


if __name__ == "__main__":
    main()
