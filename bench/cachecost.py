"""The persistent code cache's effect on a new process's first call: for each kernel of ``kernels.KERNELS``,
the first call of ``@jit`` in a fresh process without the cache, and with ``@jit(cache=True)`` finding every
entry a previous process stored (LLVM skipped), in the same run, interleaved.

    python bench/cachecost.py              # 3 fresh processes per kernel and variant (median)
    python bench/cachecost.py --repeats 5 --quick

Each measurement is its own process: it imports the kernel, starts LLVM (``codegen.engine.engine()``) and
imports the JIT's machinery (timed apart: both variants pay it), then times the first call (recording, lowering, compiling or loading and linking,
running) and checks the result against plain CPython's. A priming process fills the cache first. Entries go to
a temporary directory (``TRACEJIT_CACHE_DIR``), removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

WORKER = """
import importlib, json, sys, time
sys.path[:0] = [{here!r}, {root!r}]
import kernels, kernelspeed
from jit import jit
from codegen import engine

name, n, cache = {name!r}, {n!r}, {cache!r}
start = time.perf_counter()
engine.engine()
importlib.import_module("jit.monitor")  # (the JIT's machinery, imported when a loop first gets hot)
llvm_start_ms = (time.perf_counter() - start) * 1e3
func = kernels.KERNELS[name][0]
f = jit(cache=True)(func) if cache else jit(func)
start = time.perf_counter()
result = f(n)
first_ms = (time.perf_counter() - start) * 1e3
stats = jit.stats(f)
print(json.dumps({{
    "first_ms": first_ms,
    "llvm_start_ms": llvm_start_ms,
    "same": result == func(n),
    "traces": stats["traces_compiled"],
    "llvm_compiles": engine.engine().llvm_compiles,
    "hits": stats["cache"]["hits"],
    "native": stats["native_iterations"] > 0,
}}))
"""


def run(name: str, n: int, cache: bool, directory: str) -> dict:
    env = {**os.environ, "TRACEJIT_CACHE_DIR": directory}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # (modules imported from .pyc files, as a user's are)
    code = WORKER.format(here=HERE, root=ROOT, name=name, n=n, cache=cache)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="the benchmark's small sizes")
    options = parser.parse_args()
    sys.path[:0] = [HERE, ROOT]
    import kernels
    import kernelspeed

    sizes = kernelspeed.QUICK_SIZES if options.quick else kernelspeed.SIZES
    rows = []
    with tempfile.TemporaryDirectory(prefix="tracejit-cachecost-") as directory:
        for name in kernels.KERNELS:
            n = sizes[name]
            primed = run(name, n, True, directory)
            without, with_cache = [], []
            for _ in range(options.repeats):
                without.append(run(name, n, False, directory))
                with_cache.append(run(name, n, True, directory))
            for facts in [primed, *without, *with_cache]:
                if not facts["same"]:
                    sys.exit(f"{name}: the jitted result differs from plain CPython's")
            cold = statistics.median(f["first_ms"] for f in without)
            warm = statistics.median(f["first_ms"] for f in with_cache)
            rows.append(
                (
                    name,
                    with_cache[0]["traces"],
                    cold,
                    warm,
                    cold / warm,
                    max(f["llvm_compiles"] for f in with_cache),
                    statistics.median(f["llvm_start_ms"] for f in without + with_cache),
                )
            )
            print(f"{name}: {cold:.0f} ms -> {warm:.0f} ms", file=sys.stderr)
    print("| kernel | traces | first call, no cache | first call, cache hit | ratio | LLVM compiles with the cache |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, traces, cold, warm, ratio, compiles, _ in rows:
        print(f"| `{name}` | {traces} | {cold:.0f} ms | {warm:.0f} ms | {ratio:.1f}x | {compiles} |")
    starts = statistics.median(row[-1] for row in rows)
    print(
        f"\nMedian of {options.repeats} fresh processes per cell; starting LLVM and importing the JIT in each "
        f"process ({starts:.0f} ms, median) is not in the first call: both variants pay it."
    )


if __name__ == "__main__":
    main()
