"""Issue 8, item 7: once warm, a call of ordinary code whose loops run natively through the generic object path
enters native code once per loop nest and leaves it at most twice, at one and two loop levels (under 2**14
iterations per call: a loop holding borrowed objects leaves at each periodic check by design, README "Frame
buffer and the exit protocol"). Results differential against CPython (``check``), counts through jit.stats."""

from __future__ import annotations

import pytest
from helpers import check, define, warm_call

SOURCE = """
import math


def helper(x, y):
    return (x * x + y * y) ** 0.5


def formatted(n):
    out = []
    for i in range(n):
        out.append(f"{i}:{i * 0.5:.2f}")
    return len(out), out[-1]


def counted_words(words):
    counts = {}
    for w in words:
        counts[w] = counts.get(w, 0) + 1
    return sorted(counts.items())


def string_methods(words):
    n = 0
    for w in words:
        if w.upper().startswith("W1"):
            n += len(w.strip())
    return n


def helper_ints_then_floats(n):
    total = 0.0
    for i in range(n):
        total += helper(i, i + 1) if i % 3 else helper(i * 0.5, 1.5)
    return total


def big_and_back(n):
    h = 1
    total = 0
    for i in range(n):
        h = h * 1_000_003 + i
        if h > 2**100:
            h %= 2**61 - 1
        total += h % 7
    return total


def rows_of_strings(rows):
    found = 0
    for row in rows:
        for w in row:
            if w == "stop":
                break
            found += len(w)
    return found


def nested_dicts(rows):
    seen = {}
    for r, row in enumerate(rows):
        for w in row:
            seen[w] = seen.get(w, 0) + r
    return sorted(seen.items())
"""

WORDS = [f"w{i % 37}" for i in range(3000)]
ROWS = [[f"w{(i * j) % 11}" if (i + j) % 17 else "stop" for j in range(20)] for i in range(300)]
CASES = [
    ("formatted", (3000,)),
    ("counted_words", (WORDS,)),
    ("string_methods", (WORDS,)),
    ("helper_ints_then_floats", (3000,)),
    ("big_and_back", (3000,)),
    ("rows_of_strings", (ROWS,)),
    ("nested_dicts", (ROWS,)),
]


@pytest.mark.parametrize("name, args", CASES, ids=[name for name, _ in CASES])
def test_a_warm_call_enters_once_and_leaves_at_most_twice(name, args):
    func = define(SOURCE, name)
    jitted = check(func, args, native=True).cpython_baseline
    for _ in range(3):
        jitted(*args)
    result, entries, exits = warm_call(jitted, *args)
    assert result == func(*args)
    assert entries == 1 and exits <= 2, (name, entries, exits)
