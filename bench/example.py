"""A small example: run a function under @jit and as plain CPython, and print both results."""

from __future__ import annotations

import time

import jit as jit_module
from jit import jit


def kernel(n: int) -> int:
    total = 0
    for i in range(n):
        for j in range(n):
            total += (i ^ j) & 7
    return total


def main() -> None:
    fast = jit(kernel)
    n = 300
    t0 = time.perf_counter()
    plain = kernel(n)
    t1 = time.perf_counter()
    jitted = fast(n)
    t2 = time.perf_counter()
    print(f"plain CPython: kernel({n}) = {plain}  ({(t1 - t0) * 1e3:.1f} ms)")
    print(f"@jit:          kernel({n}) = {jitted}  ({(t2 - t1) * 1e3:.1f} ms, first call)")
    print("same result:", plain == jitted)
    print(jit_module.explain(fast))


if __name__ == "__main__":
    main()
