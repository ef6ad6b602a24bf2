"""Compiling in the background (``@jit(sync_compile=False)``, ``jit/background.py``) against the default
synchronous compile, per benchmark row (issue 9).

    python bench/background.py [--quick] [--repeats N] [--calls N] [--steady N] [--section S ...] [row ...]

Rows: the kernels of ``bench/kernels.py`` and ``bench/array_kernels.py`` (sizes as in their sections) and the
rows of ``bench/ordinary.py``. For each row, fresh ``jit`` instances of both modes, alternating in one process
(the background compiler drained, untimed, between two instances, so that one's compilations do not run during
the other's calls): the first call's wall and process time, and those of the first --calls calls together (process
time counts every thread: the background compiler's work is in it, up to the last call's end). Then the last
instance of each mode is warmed up until ``jit.stats`` shows no new trace for three calls in a row, and the steady
state is the best of --steady calls of each, alternating: bg / sync. ``same`` says whether both modes' trees
(``jit.dump(f, "trees")``, symbols and exit numbers aside: they follow the order of compilation) are the same.
Best of --repeats for first-call times (each mode first in every other repeat). A diagnostic, not the benchmark: the machine is shared, ratios are what
to read.
"""

from __future__ import annotations

import argparse
import re
import time
import types
from collections.abc import Callable
from typing import Any

import array_kernels
import kernels
import ordinary
from kernelspeed import QUICK_SIZES, SIZES, warm_llvm

from jit import background, jit

MODES = {"sync": {}, "bg": {"sync_compile": False}}


class Row:
    """One benchmark row: how to make a jit instance with options, and how to call it once."""

    def __init__(
        self,
        func: Callable[..., Any],
        call: Callable[[Callable[..., Any]], Any],
        recursive: bool = False,
    ) -> None:
        self.func = func
        self.call = call
        self.recursive = recursive

    def make(self, options: dict[str, Any]) -> Callable[..., Any]:
        """A fresh instance (a recursive function gets a namespace in which its name refers to it)."""
        if not self.recursive:
            return jit(self.func, **options)
        func = self.func
        namespace = dict(func.__globals__)
        clone = types.FunctionType(func.__code__, namespace, func.__name__, func.__defaults__)
        jitted = jit(clone, **options)
        namespace[func.__name__] = jitted
        return jitted


def rows(quick: bool, sections: list[str]) -> dict[str, Row]:
    out: dict[str, Row] = {}
    if "kernels" in sections:
        for name, (func, _) in kernels.KERNELS.items():
            size = (QUICK_SIZES if quick else SIZES)[name]
            out[name] = Row(func, lambda f, size=size: f(size))
    if "arrays" in sections:
        for name, (func, size) in array_kernels.ARRAY_KERNELS.items():
            size = max(size // 10, 8) if quick else size
            out[name] = Row(func, lambda f, name=name, size=size: f(*array_kernels.inputs(name, size)))
    if "ordinary" in sections:
        for name, case in ordinary.ORDINARY.items():
            size = case.quick_size if quick else case.size
            out[name] = Row(case.func, lambda f, case=case, size=size: case.run(f, size), case.recursive)
    return out


def first_calls(row: Row, options: dict[str, Any], calls: int) -> dict[str, Any]:
    """A fresh instance's first call and first `calls` calls: wall and process ms (args made outside the timing
    where the row makes them: array kernels time their inputs too, a small part)."""
    f = row.make(options)
    wall, cpu = time.perf_counter(), time.process_time()
    result = row.call(f)
    first_wall, first_cpu = time.perf_counter() - wall, time.process_time() - cpu
    for _ in range(calls - 1):
        row.call(f)
    all_wall, all_cpu = time.perf_counter() - wall, time.process_time() - cpu
    background.compiler().drain()
    return {
        "f": f,
        "result": result,
        "first_wall": first_wall * 1e3,
        "first_cpu": first_cpu * 1e3,
        "all_wall": all_wall * 1e3,
        "all_cpu": all_cpu * 1e3,
    }


def warm_up(row: Row, f: Callable[..., Any], quiet_calls: int = 20, limit: int = 200) -> int:
    """Call f until quiet_calls calls in a row compiled no trace (the background compiler drained after each:
    an exit taken once per call grows its side trace after side_exit_threshold calls); the calls made."""
    quiet = 0
    before = jit.stats(f)["traces_compiled"]
    for calls in range(1, limit + 1):
        row.call(f)
        background.compiler().drain()
        now = jit.stats(f)["traces_compiled"]
        quiet = quiet + 1 if now == before else 0
        before = now
        if quiet >= quiet_calls:
            return calls
    return limit


_SYMBOL = re.compile(r"tj_\w+?_(root|side)(\d+)_\d+_[0-9a-f]{4}")


def tree_shape(f: Callable[..., Any]) -> list[str]:
    """f's trees as ``jit.dump`` lists them, without what depends on the order of compilation or on timing."""
    text = _SYMBOL.sub(r"\1\2", jit.dump(f, "trees"))
    text = re.sub(r"\(depth (\d+), \d+ entries\)", r"(depth \1)", text)
    text = re.sub(r"exit \d+ ", "exit ", text)
    return sorted(line for line in text.splitlines() if not line.endswith(": 0 tree(s)"))


def steady(row: Row, functions: dict[str, Callable[..., Any]], repeats: int) -> dict[str, float]:
    best = dict.fromkeys(functions, float("inf"))
    for _ in range(repeats):
        for name, f in functions.items():
            start = time.perf_counter()
            row.call(f)
            best[name] = min(best[name], (time.perf_counter() - start) * 1e3)
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--repeats", type=int, default=2, help="fresh instances of each mode (first calls)")
    parser.add_argument("--calls", type=int, default=200, help="the first N calls timed together")
    parser.add_argument("--steady", type=int, default=20, help="alternating warm calls of each mode")
    parser.add_argument("--section", action="append", choices=["kernels", "arrays", "ordinary"])
    parser.add_argument("rows", nargs="*", help="row names (default: every row of the sections)")
    args = parser.parse_args(argv)
    every = rows(args.quick, args.section or ["kernels", "arrays", "ordinary"])
    names = args.rows or list(every)
    warm_llvm()
    print(
        f"{'row':16} {'1st wall sync':>13} {'bg':>7} {'1st cpu sync':>12} {'bg':>7} "
        f"{f'{args.calls} wall sync':>14} {'bg':>7} {f'{args.calls} cpu sync':>13} {'bg':>7} "
        f"{'steady sync ms':>14} {'bg/sync':>7} {'same':>5} {'postponed':>9}"
    )
    for name in names:
        row = every[name]
        runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
        for repeat in range(args.repeats):
            # (each mode first in every other repeat: a process's later calls run slower on this machine, its
            # garbage and the load of other work growing, which favoured the mode always measured first)
            order = list(MODES.items())
            for mode, options in order if repeat % 2 == 0 else order[::-1]:
                runs[mode].append(first_calls(row, options, args.calls))
        last = {mode: runs[mode][-1]["f"] for mode in MODES}
        for f in last.values():
            warm_up(row, f)
        best = steady(row, last, args.steady)
        same = tree_shape(last["sync"]) == tree_shape(last["bg"])
        assert repr(runs["sync"][0]["result"]) == repr(runs["bg"][0]["result"]), name
        low = {
            mode: {key: min(r[key] for r in runs[mode]) for key in runs[mode][0] if key not in ("f", "result")}
            for mode in MODES
        }
        s, b = low["sync"], low["bg"]
        print(
            f"{name:16} {s['first_wall']:13.1f} {b['first_wall']:7.1f} {s['first_cpu']:12.1f} {b['first_cpu']:7.1f} "
            f"{s['all_wall']:14.1f} {b['all_wall']:7.1f} {s['all_cpu']:13.1f} {b['all_cpu']:7.1f} "
            f"{best['sync']:14.3f} {best['bg'] / best['sync']:7.3f} {'yes' if same else 'NO':>5} "
            f"{jit.stats(last['bg'])['sides_postponed']:9d}",
            flush=True,
        )
        if not same:
            shapes = {mode: tree_shape(f) for mode, f in last.items()}
            for mode, shape in shapes.items():
                other = shapes["bg" if mode == "sync" else "sync"]
                for line in shape:
                    if line not in other:
                        print(f"    only {mode}: {line.strip()}")


if __name__ == "__main__":
    main()
