"""A jitted function in an importable module, for the tests that run it in worker processes
(``tests/jit/test_workers.py``): a worker unpickles it by reference, importing this module."""

from __future__ import annotations

import os

import jit as jit_module
from jit import jit


@jit(threshold=2)
def collatz_steps(limit: int) -> int:
    total = 0
    for start in range(1, limit):
        n = start
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            total += 1
    return total


def task(limit: int) -> tuple[int, int, int, int]:
    """The jitted result, and what the JIT of the worker that ran it did: (result, pid, traces, native entries)."""
    result = collatz_steps(limit)
    stats = jit_module.stats(collatz_steps)
    return result, os.getpid(), stats["traces_compiled"], stats["native_entries"]
