"""Benchmark kernels: plain functions taking a size argument and returning a checkable result.

Each kernel is plain Python; ``bench/bench.py`` times it as plain CPython, under ``@jit`` and under
``numba.njit``, and ``tests/test_bench.py`` checks that the jitted result equals the plain one. ``KERNELS`` are
the kernels section's (``bench/kernelspeed.py``); ``two_level_nest`` and ``twelve_locals`` are those of the
nested-call and entry/exit sections (``bench/nestcost.py``, ``bench/handoff.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable


def nested_int(n: int) -> int:
    """Two nested ``range`` loops over integer bit operations."""
    total = 0
    for i in range(n):
        for j in range(n):
            total += (i ^ j) & 7
    return total


def mandelbrot(n: int) -> int:
    """Escape-time Mandelbrot on an n x n grid (floats); returns the total iteration count."""
    maxit = 50
    count = 0
    for py in range(n):
        ci = -1.5 + 3.0 * py / n
        for px in range(n):
            cr = -2.0 + 3.0 * px / n
            x = 0.0
            y = 0.0
            it = 0
            while it < maxit and x * x + y * y <= 4.0:
                x, y = x * x - y * y + cr, 2.0 * x * y + ci
                it += 1
            count += it
    return count


def collatz(n: int) -> int:
    """Sum of the Collatz sequence lengths of 1..n: a while loop with a data-dependent branch."""
    total = 0
    for start in range(1, n + 1):
        m = start
        steps = 0
        while m != 1:
            if m % 2 == 0:
                m //= 2
            else:
                m = 3 * m + 1
            steps += 1
        total += steps
    return total


@functools.lru_cache(maxsize=8)
def float_data(n: int) -> list[float]:
    """Deterministic input of the float-sum kernel, built once per size (outside the timed loops)."""
    return [((i * 7919) % 1000) * 0.001 + 0.5 for i in range(n)]


def float_sum(n: int) -> float:
    """Sum over a list of n floats: once by iteration, once by indexing."""
    data = float_data(n)
    total = 0.0
    for x in data:
        total += x
    for k in range(len(data)):
        total += data[k] * 0.5
    return total


def nested2_branchy(n: int) -> int:
    """Two nested loops with an if/else in the inner loop taken about 50/50 (alternating with j)."""
    total = 0
    for i in range(n):
        for j in range(n):
            if (i + j) & 1:
                total += i * j & 255
            else:
                total -= (i + j) & 15
    return total


def nested3(n: int) -> int:
    """Three nested ``range`` loops."""
    s = 0
    for a in range(n):
        for b in range(n):
            for c in range(n):
                s += (a * b + c) & 15
    return s


# --- code written without knowing tracejit: the constructs that used to leave native code (issue 8) ---------


def primes_break(n: int) -> int:
    """Count primes below n by trial division: an inner ``while`` that ends by ``break`` or by its ``else``."""
    count = 0
    for k in range(2, n):
        d = 2
        while d * d <= k:
            if k % d == 0:
                break
            d += 1
        else:
            count += 1
    return count


def _dist(x: float, y: float) -> float:
    return (x * x + y * y) ** 0.5


def helper_calls(n: int) -> float:
    """A small helper function called from an inner loop."""
    total = 0.0
    for i in range(n):
        for j in range(n):
            total += _dist(i * 0.5, j * 0.25)
    return total


def big_ints(n: int) -> int:
    """Modular arithmetic whose intermediate products leave 64 bits (a hash with a large prime modulus)."""
    modulus = (1 << 61) - 1
    h = 0
    for i in range(n):
        h = (h * 1_000_003 + i) % modulus
    return h


def list_swaps(n: int) -> int:
    """Reverse a list in place, many times, with ``a[i], a[j] = a[j], a[i]``."""
    a = list(range(n))
    for _ in range(20):
        i = 0
        j = n - 1
        while i < j:
            a[i], a[j] = a[j], a[i]
            i += 1
            j -= 1
    return a[0] * 1000 + a[-1]


def list_of_lists(n: int) -> int:
    """Build a list of lists (rows of a multiplication table), then sum it."""
    rows = []
    for i in range(n):
        row = []
        for j in range(n):
            row.append(i * j % 7)
        rows.append(row)
    total = 0
    for row in rows:
        for x in row:
            total += x
    return total


def word_counts(n: int) -> int:
    """Count words in a dict (the generic object path: strings and a dict)."""
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"]
    counts: dict[str, int] = {}
    for i in range(n):
        word = words[(i * 7 + i // 3) % len(words)]
        counts[word] = counts.get(word, 0) + 1
    total = 0
    for word in counts:
        total += len(word) * counts[word]
    return total


@functools.lru_cache(maxsize=8)
def text_data(n: int) -> str:
    """Deterministic text of about n characters for letter_stats, built once per size."""
    words = ("lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed", "do")
    return " ".join(words[(i * 7 + i // 5) % len(words)] for i in range(n // 6 + 1))


def letter_stats(n: int) -> tuple[str, int]:
    """The most frequent letter of a text: a loop over a str counting into a dict, then over its items."""
    text = text_data(n)
    counts: dict[str, int] = {}
    for c in text:
        if c != " ":
            counts[c] = counts.get(c, 0) + 1
    best, best_count = "", 0
    for letter, count in counts.items():
        if count > best_count or (count == best_count and letter < best):
            best, best_count = letter, count
    return best, best_count


def pair_walk(n: int) -> float:
    """Positions and neighbours in a list of floats, as ordinary Python writes them: enumerate and zip."""
    data = float_data(n)
    total = 0.0
    for i, x in enumerate(data):
        if i % 3 == 0:
            total += x
    previous = data[0]
    for x, y in zip(data, data[1:]):  # noqa: RUF007  (as ordinary code often writes it)
        total += abs(y - x) * 0.5 + (x > previous)
        previous = x
    return total


#: name -> (kernel, whether it is a nested-loop kernel that is also run with nesting=False)
KERNELS = {
    "nested_int": (nested_int, True),
    "mandelbrot": (mandelbrot, True),
    "collatz": (collatz, True),
    "float_sum": (float_sum, False),
    "nested2_branchy": (nested2_branchy, True),
    "nested3": (nested3, True),
    "primes_break": (primes_break, True),
    "helper_calls": (helper_calls, True),
    "big_ints": (big_ints, False),
    "list_swaps": (list_swaps, False),
    "list_of_lists": (list_of_lists, True),
    "word_counts": (word_counts, False),
    "letter_stats": (letter_stats, False),
    "pair_walk": (pair_walk, False),
}


# --- kernels of the other sections (not in KERNELS) ----------------------------------------------------------


def two_level_nest(n: int, m: int) -> int:
    """The nested-call cost kernel (bench/nestcost.py): n outer iterations, each running an inner loop of m."""
    total = 0
    for i in range(n):
        for j in range(m):
            total += (i ^ j) & 7
    return total


def twelve_locals(k: int) -> int:
    """The entry/exit cost kernel (bench/handoff.py): a dozen live locals around one loop of k iterations."""
    a = k + 1
    b = a * 2
    c = b - 3
    d = c ^ 5
    e = 0.5 * a
    f = e + 1.0
    g = a & 3
    h = b | 8
    p = 1
    q = 2
    s = 0
    t = 0.0
    for i in range(k):
        s += a * i + b - c + (d & i) + g + h + p * q
        t += e * i + f
    return s + int(t)


def call_many(f: Callable[[int], int], calls: int, k: int) -> int:
    """Plain Python calling f(k) ``calls`` times: how twelve_locals is driven."""
    total = 0
    for _ in range(calls):
        total += f(k)
    return total
