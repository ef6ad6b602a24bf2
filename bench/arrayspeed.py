"""Array kernels (``bench/array_kernels.py``) as plain CPython, under ``@jit`` and under ``numba.njit`` (when
installed), timed in one process: the best of a few steady-state calls each (after warm-up: tracejit's traces
and Numba's compilation are done), with the ratios that issue 10's goal is about (tracejit / Numba = Numba's
time / @jit's time; goal: at least 0.7x). Every jitted result is checked against plain CPython's first.

    python bench/arrayspeed.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import array_kernels  # noqa: E402
import variants  # noqa: E402

import jit as jit_module  # noqa: E402
from jit import jit  # noqa: E402


def best_of(call: Callable[[], Any], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and repr(a) == repr(b)


def measure(name: str, repeats: int) -> dict[str, Any]:
    kernel, n = array_kernels.ARRAY_KERNELS[name]
    args = array_kernels.inputs(name, n)
    expected = kernel(*array_kernels.inputs(name, n))
    row: dict[str, Any] = {"name": name, "n": n}
    row["plain"] = best_of(lambda: kernel(*args), repeats)
    jitted = jit(kernel)
    for _ in range(3):  # warm-up: record and compile every trace
        result = jitted(*array_kernels.inputs(name, n))
    if not _same(result, expected):
        raise SystemExit(f"{name}: @jit returned {result!r}, plain CPython {expected!r}")
    before = jit_module.stats(jitted)
    row["jit"] = best_of(lambda: jitted(*args), repeats)
    after = jit_module.stats(jitted)
    row["exits/call"] = (after["exits_to_interpreter"] - before["exits_to_interpreter"]) / repeats
    row["traces"] = after["traces_compiled"]
    row["aborts"] = after["aborts"]
    problem = variants.numba_import_problem()
    if problem is None:
        import numba

        dispatcher = numba.njit(kernel)
        got = dispatcher(*array_kernels.inputs(name, n))
        row["numba_same"] = float(got) == float(expected)
        row["numba"] = best_of(lambda: dispatcher(*args), repeats)
    else:
        row["numba_missing"] = problem
    return row


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| kernel | n | plain CPython | @jit | speedup | numba.njit | tracejit / Numba | traces | exits/call |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        numba_cell, versus = "-", "-"
        if "numba" in row:
            numba_cell = f"{row['numba'] * 1e3:.3f} ms" + ("" if row["numba_same"] else " (differs)")
            versus = f"{row['numba'] / row['jit']:.2f}x"
        lines.append(
            f"| {row['name']} | {row['n']} | {row['plain'] * 1e3:.2f} ms | {row['jit'] * 1e3:.3f} ms | "
            f"{row['plain'] / row['jit']:.1f}x | {numba_cell} | {versus} | {row['traces']} | {row['exits/call']:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    options = parser.parse_args()
    rows = [measure(name, options.repeats) for name in array_kernels.ARRAY_KERNELS]
    print(table(rows))
    for row in rows:
        if row["aborts"]:
            print(f"{row['name']}: aborts {row['aborts']}")


if __name__ == "__main__":
    main()
