"""Array kernels (issue 10): explicit loops over NumPy arrays, written as a NumPy user would without a JIT in
mind. Each takes its arrays as arguments (``inputs(name, n)`` builds them, deterministically) and returns a
checkable result; ``bench/arrayspeed.py`` times them as plain CPython, under ``@jit`` and under
``numba.njit``. NumPy is needed only here (the ``bench`` and ``test`` extras install it)."""

from __future__ import annotations

from typing import Any

import numpy as np


def sum_of_squares(a: Any) -> Any:
    """A 1-D float64 reduction: sum of a[i] * a[i], once forward and once from the end (negative indices)."""
    total = 0.0
    n = len(a)
    for i in range(n):
        total += a[i] * a[i]
    for i in range(1, n + 1):
        total -= a[-i] * 0.5
    return total


def stencil(a: Any, out: Any) -> Any:
    """A 2-D five-point stencil over the interior of a, written to out; returns out's sum of a row."""
    rows, cols = a.shape[0], a.shape[1]
    for i in range(1, rows - 1):
        for j in range(1, cols - 1):
            out[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]) - a[i, j]
    check = 0.0
    for j in range(cols):
        check += out[rows // 2, j]
    return check


def matmul(a: Any, b: Any, c: Any) -> Any:
    """c = a @ b with three explicit loops; returns c's trace-like checksum."""
    n, m, p = a.shape[0], a.shape[1], b.shape[1]
    for i in range(n):
        for j in range(p):
            s = 0.0
            for k in range(m):
                s += a[i, k] * b[k, j]
            c[i, j] = s
    check = 0.0
    for i in range(min(n, p)):
        check += c[i, i]
    return check


def inputs(name: str, n: int) -> tuple[Any, ...]:
    """Fresh arguments of kernel name at size n."""
    if name == "sum_of_squares":
        return (np.arange(n, dtype=np.float64) % 97 * 0.01,)
    if name == "stencil":
        grid = (np.arange(n * n, dtype=np.float64).reshape(n, n) % 13) * 0.5
        return grid, np.zeros((n, n))
    if name == "matmul":
        a = (np.arange(n * n, dtype=np.float64).reshape(n, n) % 7) - 3.0
        b = (np.arange(n * n, dtype=np.float64).reshape(n, n) % 5) * 0.25
        return a, b, np.zeros((n, n))
    raise KeyError(name)


#: name -> (kernel, size: plain CPython takes roughly 20-100 ms per call)
ARRAY_KERNELS = {
    "sum_of_squares": (sum_of_squares, 200_000),
    "stencil": (stencil, 250),
    "matmul": (matmul, 60),
}
