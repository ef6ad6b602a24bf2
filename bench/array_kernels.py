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


def distances(points: Any, out: Any) -> Any:
    """All-pairs Euclidean distances of n points in 3-D (rows of points) into out (n x n); returns their sum."""
    n, d = points.shape[0], points.shape[1]
    for i in range(n):
        for j in range(n):
            s = 0.0
            for k in range(d):
                t = points[i, k] - points[j, k]
                s += t * t
            out[i, j] = np.sqrt(s)
    total = 0.0
    for i in range(n):
        total += out[i, n - 1 - i]
    return total


def histogram(data: Any, counts: Any, lo: float, hi: float) -> Any:
    """Counts of data's values in len(counts) equal bins of [lo, hi) (others ignored); returns a checksum."""
    bins = len(counts)
    scale = bins / (hi - lo)
    for x in data:
        k = int((x - lo) * scale)
        if 0 <= k < bins:
            counts[k] += 1
    check = 0
    for k in range(bins):
        check += counts[k] * (k + 1)
    return check


def gaussian_sums(xs: Any, grid: Any, h: float) -> Any:
    """A Gaussian kernel density on a grid: at each grid point the sum of np.exp(-d * d / 2) over the points, most
    terms underflowing to zero (which NumPy ignores by default); returns the densities' total."""
    total = 0.0
    for i in range(len(grid)):
        s = 0.0
        for x in xs:
            d = (grid[i] - x) / h
            s += np.exp(-0.5 * d * d)
        total += s
    return total


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
    if name == "distances":
        points = ((np.arange(n * 3, dtype=np.float64).reshape(n, 3) * 7919) % 101) * 0.1
        return points, np.zeros((n, n))
    if name == "histogram":
        data = (np.arange(n, dtype=np.float64) * 0.6180339887498949) % 1.0 * 12.0 - 1.0
        return data, np.zeros(64, dtype=np.int64), 0.0, 10.0
    if name == "gaussian_sums":
        return np.linspace(0.0, 100.0, n), np.linspace(0.0, 100.0, 50), 0.5
    raise KeyError(name)


#: name -> (kernel, size: plain CPython takes roughly 20-100 ms per call)
ARRAY_KERNELS = {
    "sum_of_squares": (sum_of_squares, 200_000),
    "stencil": (stencil, 250),
    "matmul": (matmul, 60),
    "distances": (distances, 150),
    "histogram": (histogram, 200_000),
    "gaussian_sums": (gaussian_sums, 2000),
}
