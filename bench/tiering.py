"""Tiered compilation against compiling once at opt_level 2 (issue 9: compile time), per benchmark kernel.

    python bench/tiering.py [--quick] [--repeats N] [--threshold T ...] [--background] [kernel ...]

For each kernel (``bench/kernels.py``, sizes as in the kernels section, and ``bench/array_kernels.py``), fresh ``jit`` instances of each configuration, alternating in
one process: today's (``tier_up_threshold=0``) and tiered with each threshold T (``tier_up_threshold=T``; with
--background also ``sync_compile=False``). Per configuration: the first call's process (CPU) time and wall time,
the first three calls' CPU time, the compile ms per trace of the first compilations (``compile_ms_per_trace``:
what the user's thread waits for when a trace is recorded) and of the compilations again at level 2
(``tier_up_ms_per_trace``), then the steady state (best of the calls after warm-up, which tier up) as a ratio to
today's. Best of --repeats for times; compile ms are medians over every trace of every repeat. A diagnostic,
not the benchmark: the machine is shared, ratios are what to read.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import array_kernels
import kernels
from kernelspeed import QUICK_SIZES, SIZES, warm_llvm

from jit import background, jit

#: a kernel and what makes its arguments (fresh for each call: array kernels write into theirs)
Case = tuple[Callable[..., Any], Callable[[], tuple[Any, ...]]]


def cases(quick: bool) -> dict[str, Case]:
    """Every kernel of both files, with its arguments."""
    out: dict[str, Case] = {}
    for name, (func, _) in kernels.KERNELS.items():
        size = (QUICK_SIZES if quick else SIZES)[name]
        out[name] = (func, lambda size=size: (size,))
    for name, (func, size) in array_kernels.ARRAY_KERNELS.items():
        size = max(size // 10, 8) if quick else size
        out[name] = (func, lambda name=name, size=size: array_kernels.inputs(name, size))
    return out


def first_calls(func: Any, make_args: Callable[[], tuple[Any, ...]], options: dict[str, Any]) -> dict[str, Any]:
    """A fresh instance's first three calls (CPU ms of the first, wall ms of the first, CPU ms of all three),
    its compile ms per trace at the first level and at the tier-up."""
    f = jit(func, **options)
    args = [make_args() for _ in range(3)]
    cpu, wall = time.process_time(), time.perf_counter()
    f(*args[0])
    first_cpu = (time.process_time() - cpu) * 1e3
    first_wall = (time.perf_counter() - wall) * 1e3
    f(*args[1])
    f(*args[2])
    three = (time.process_time() - cpu) * 1e3
    background.compiler().drain()
    stats = jit.stats(f)
    return {
        "f": f,
        "first_cpu": first_cpu,
        "first_wall": first_wall,
        "three_cpu": three,
        "compile": stats["compile_ms_per_trace"],
        "tier_up": stats["tier_up_ms_per_trace"],
    }


def steady(functions: dict[str, Any], make_args: Callable[[], tuple[Any, ...]], repeats: int) -> dict[str, float]:
    """Best wall ms of a call of each (warmed up: their trees tiered up), alternating."""
    for f in functions.values():
        for _ in range(3):
            f(*make_args())
            background.compiler().drain()
    best = dict.fromkeys(functions, float("inf"))
    for _ in range(repeats):
        for name, f in functions.items():
            args = make_args()
            start = time.perf_counter()
            f(*args)
            best[name] = min(best[name], (time.perf_counter() - start) * 1e3)
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threshold", type=int, action="append", help="tier_up_threshold (repeatable; default 1)")
    parser.add_argument("--background", action="store_true", help="tiered configurations also sync_compile=False")
    parser.add_argument("kernels", nargs="*", help="kernel names (default: all of both files)")
    args = parser.parse_args(argv)
    every = cases(args.quick)
    names = args.kernels or list(every)
    configs: dict[str, dict[str, Any]] = {"today": {}}
    for threshold in args.threshold or [1]:
        options: dict[str, Any] = {"tier_up_threshold": threshold}
        if args.background:
            options["sync_compile"] = False
        configs[f"T={threshold}{' bg' if args.background else ''}"] = options
    warm_llvm()
    compile_ms: dict[str, list[float]] = {name: [] for name in configs}
    tier_up_ms: dict[str, list[float]] = {name: [] for name in configs}
    print(
        f"{'kernel':16} {'config':10} {'first cpu':>9} {'first wall':>10} {'3 calls cpu':>11} "
        f"{'compile/trace':>13} {'tier-up/trace':>13} {'steady':>7}"
    )
    for kernel in names:
        func, make_args = every[kernel]
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in configs}
        for _ in range(args.repeats):
            for name, options in configs.items():
                runs[name].append(first_calls(func, make_args, options))
        best = steady({name: runs[name][-1]["f"] for name in configs}, make_args, max(args.repeats, 5))
        for name in configs:
            rows = runs[name]
            traces = [ms for row in rows for ms in row["compile"]]
            ups = [ms for row in rows for ms in row["tier_up"]]
            compile_ms[name] += traces
            tier_up_ms[name] += ups
            print(
                f"{kernel:16} {name:10} {min(r['first_cpu'] for r in rows):9.1f} "
                f"{min(r['first_wall'] for r in rows):10.1f} {min(r['three_cpu'] for r in rows):11.1f} "
                f"{statistics.median(traces) if traces else 0:13.2f} {statistics.median(ups) if ups else 0:13.2f} "
                f"{best[name] / best['today']:7.3f}",
                flush=True,
            )
    for name in configs:
        traces, ups = compile_ms[name], tier_up_ms[name]
        print(
            f"{name}: median compile ms per trace {statistics.median(traces) if traces else 0:.2f} "
            f"({len(traces)} traces), tier-up {statistics.median(ups) if ups else 0:.2f} ({len(ups)} traces)"
        )


if __name__ == "__main__":
    main()
