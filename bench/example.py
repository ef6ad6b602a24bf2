"""A small example: one function as plain CPython and under @jit. Prints the results, the time of the first
jitted call and of the calls until the loops have warmed up (CPython runs them for the option warmup's worth of
iterations, then the JIT records and compiles them), and the steady-state time after that, each against plain
CPython; then what jit.explain says."""

from __future__ import annotations

import time
from collections.abc import Callable

import jit as jit_module
from jit import jit


def kernel(n: int) -> int:
    total = 0
    for i in range(n):
        for j in range(n):
            total += (i ^ j) & 7
    return total


def best_ms(call: Callable[[], object], repeats: int = 5) -> float:
    """The fastest of a few calls, in milliseconds (the least disturbed by other work on the machine)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e3)
    return min(times)


def main() -> None:
    n = 300
    fast = jit(kernel)
    plain = kernel(n)
    plain_ms = best_ms(lambda: kernel(n))
    start = time.perf_counter()
    jitted = fast(n)
    first_ms = (time.perf_counter() - start) * 1e3
    calls = 1
    while jit_module.stats(fast)["warming_loops"] and calls < 1000:
        fast(n)
        calls += 1
    warm_ms = (time.perf_counter() - start) * 1e3
    steady_ms = best_ms(lambda: fast(n))
    print(f"plain CPython:          kernel({n}) = {plain}  {plain_ms:8.2f} ms")
    print(f"@jit, first call:       kernel({n}) = {jitted}  {first_ms:8.2f} ms")
    print(
        f"@jit, warm-up:          {calls} call(s) in {warm_ms:.2f} ms (CPython runs the loops for their warm-up, "
        "then the JIT records and compiles them)"
    )
    print(
        f"@jit, after warm-up:    kernel({n}) = {fast(n)}  {steady_ms:8.2f} ms  "
        f"({plain_ms / steady_ms:.0f}x faster than plain CPython)"
    )
    print("same result:", plain == jitted == fast(n))
    print(jit_module.explain(fast))


if __name__ == "__main__":
    main()
