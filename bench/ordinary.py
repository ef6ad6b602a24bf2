"""Ordinary Python that tracejit cannot make faster: the no-slowdown benchmark.

These functions were written the way Python is usually written (classes, strings, dicts and sets, exceptions,
generators, recursion, small helpers), not for the JIT. ``bench/bench.py`` times each one as plain CPython and
under ``@jit`` in the same run; the goal is that ``@jit`` is never the slower one (at least 0.95x after warm-up).

Each entry of ``ORDINARY`` is ``name -> Case``: ``func`` is what gets ``@jit`` applied, ``run(f, n)`` is how the
benchmark calls it (by default ``f(n)``; a plain-Python driver for "a small function called many times").
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterator
from typing import Any

# --- object-oriented code with method calls ----------------------------------------------------------------


class Particle:
    __slots__ = ("vx", "vy", "x", "y")

    def __init__(self, x: float, y: float, vx: float, vy: float) -> None:
        self.x = x
        self.y = y
        self.vx = vx
        self.vy = vy

    def step(self, dt: float) -> None:
        self.x += self.vx * dt
        self.y += self.vy * dt
        if self.x < 0.0 or self.x > 100.0:
            self.vx = -self.vx
        if self.y < 0.0 or self.y > 100.0:
            self.vy = -self.vy

    def energy(self) -> float:
        return 0.5 * (self.vx * self.vx + self.vy * self.vy)


def particles(n: int) -> float:
    """A small simulation: objects, attribute access and method calls in a loop nest."""
    swarm = [Particle(i % 97, (i * 7) % 89, (i % 5) - 2.0, (i % 3) - 1.0) for i in range(50)]
    total = 0.0
    for _ in range(n):
        for p in swarm:
            p.step(0.1)
        total += sum(p.energy() for p in swarm)
    return round(total, 6)


class Account:
    def __init__(self) -> None:
        self.balance = 0
        self.moves = 0

    def deposit(self, amount: int) -> int:
        self.balance += amount
        self.moves += 1
        return self.balance


def method_loop(n: int) -> tuple[int, int]:
    """One loop of method calls and attribute reads and writes (no nest, no generator: the loop itself is hot)."""
    account = Account()
    total = 0
    for i in range(n):
        total += account.deposit(i % 7)
        account.last = i
        total += account.moves
    return total, account.last


class Shape:
    def __init__(self, name: str) -> None:
        self.name = name

    def area(self) -> float:
        return 0.0


class Rect(Shape):
    def __init__(self, w: float, h: float) -> None:
        super().__init__("rect")
        self.w = w
        self.h = h

    def area(self) -> float:
        return self.w * self.h


class Square(Rect):
    def __init__(self, side: float) -> None:
        super().__init__(side, side)
        self.name = "square"


class Framed(Rect):
    def area(self) -> float:
        return super().area() + 2.0 * (self.w + self.h)


def shapes(n: int) -> tuple[float, int]:
    """A class hierarchy: constructors chained by super().__init__, a method extending its parent's by super()."""
    total = 0.0
    squares = 0
    for i in range(n):
        k = i % 3
        if k == 0:
            s: Rect = Rect(i % 7 + 1.0, 2.0)
        elif k == 1:
            s = Square(i % 5 + 1.0)
        else:
            s = Framed(1.5, i % 4 + 0.5)
        total += s.area()
        squares += s.name == "square"
    return round(total, 6), squares


# --- string building and parsing ---------------------------------------------------------------------------


def csv_roundtrip(n: int) -> int:
    """Build a CSV text line by line, then parse it back and add up a column."""
    lines = []
    for i in range(n):
        lines.append(f"{i},item-{i % 17},{(i * 37) % 1000 / 10:.1f}")
    text = "\n".join(lines)
    total = 0
    for line in text.split("\n"):
        fields = line.split(",")
        if fields[1].endswith("3"):
            total += int(fields[0])
        total += len(fields[1])
    return total


def title_words(n: int) -> str:
    """String methods in a loop: normalise a sentence many times."""
    sentence = "  the quick brown fox jumps over the lazy dog  "
    out = ""
    for i in range(n):
        words = sentence.strip().split()
        word = words[i % len(words)]
        out = word.capitalize() if len(out) > 200 else out + word[0].upper()
    return out


# --- dicts and sets ----------------------------------------------------------------------------------------

_TEXT = (
    "it was the best of times it was the worst of times it was the age of wisdom "
    "it was the age of foolishness it was the epoch of belief it was the epoch of incredulity"
).split()


def word_stats(n: int) -> tuple[int, int, str]:
    """Count words and pairs with dicts and sets."""
    counts: dict[str, int] = {}
    seen_pairs = set()
    for i in range(n):
        word = _TEXT[i % len(_TEXT)]
        counts[word] = counts.get(word, 0) + 1
        pair = (word, _TEXT[(i + 1) % len(_TEXT)])
        if pair not in seen_pairs:
            seen_pairs.add(pair)
    best = max(counts, key=counts.get)
    return len(counts), len(seen_pairs), best


def word_count(n: int) -> list[tuple[str, int]]:
    """Count words of a text by a normalised prefix: `split`, `lower`, a slice, `dict.get` (the first few
    words are new keys, then nearly every key is found)."""
    text = " ".join(_TEXT[(i * 7) % len(_TEXT)].capitalize() for i in range(n))
    counts: dict[str, int] = {}
    for word in text.split():
        key = word.lower()[:3]
        counts[key] = counts.get(key, 0) + len(word)
    return sorted(counts.items())


# --- exceptions raised and caught --------------------------------------------------------------------------


def interruptible(n: int) -> tuple[float, float, int]:
    """A damped oscillator stepped in a loop inside `try`/`except KeyboardInterrupt` (so that Ctrl-C keeps the
    state reached): the try runs in CPython, the loop in it natively (a function with a `try` around its loop
    ran wholly as plain CPython before)."""
    x, v = 1.0, 0.0
    steps = 0
    try:
        for steps in range(n):  # noqa: B007 (read after the loop: where Ctrl-C stopped it)
            a = -x * 0.01 - v * 0.001
            v += a
            x += v
    except KeyboardInterrupt:
        print("interrupted at step", steps)
    return x, v, steps


def parse_then_scan(n: int) -> tuple[int, int, float]:
    """Readings parsed with try/except (the ones that are not numbers counted and skipped), then a scan of each
    reading's next 15: the parsing loop runs as plain CPython (a loop holding a `try`), the scan after it is
    handed to the JIT (a function with a `try` in a loop ran wholly as plain CPython before)."""
    texts = [f"{(i * 7919) % 1000 / 10}" if i % 9 else "n/a" for i in range(n)]
    values = []
    bad = 0
    for text in texts:
        try:
            values.append(float(text))
        except ValueError:
            bad += 1
    close = 0
    spread = 0.0
    for i in range(len(values)):
        for j in range(i + 1, min(i + 16, len(values))):
            d = values[i] - values[j]
            if -1.0 < d < 1.0:
                close += 1
            spread += abs(d)
    return bad, close, spread


def parse_numbers(n: int) -> int:
    """int() on strings, some of which are not numbers: ValueError raised and caught in the loop."""
    total = 0
    bad = 0
    for i in range(n):
        text = str(i) if i % 4 else f"x{i}"
        try:
            total += int(text)
        except ValueError:
            bad += 1
    return total + bad


# --- generators consumed in a loop --------------------------------------------------------------------------


def _evens(limit: int):
    for i in range(limit):
        if i % 2 == 0:
            yield i * i


def sum_generated(n: int) -> int:
    """A for loop over a generator."""
    total = 0
    for value in _evens(n):
        total += value % 1000
    return total


def sieve_primes(n: int) -> Iterator[int]:
    """A generator function: a sieve fills its list, then a loop yields the primes. The loops that do not yield
    are handed to the JIT, the one that yields runs in CPython (a generator function ran wholly as plain CPython
    before)."""
    sieve = [True] * (n + 1)
    for i in range(2, n + 1):
        if sieve[i]:
            for k in range(i * i, n + 1, i):
                sieve[k] = False
    for i in range(2, n + 1):
        if sieve[i]:
            yield i


def _sum_of(f: Callable[[int], Iterator[int]], n: int) -> int:
    return sum(f(n))


# --- recursion ------------------------------------------------------------------------------------------------


def tree_sum(n: int) -> int:
    """Recursion over a nested list, with a short loop in every call."""
    node = _tree(n)

    def visit(t: Any) -> int:
        if isinstance(t, int):
            return t
        return sum(visit(child) for child in t)

    return visit(node) + _depth(node)


def _depth(t: Any) -> int:
    if isinstance(t, int):
        return 0
    best = 0
    for child in t:
        d = _depth(child)
        if d > best:
            best = d
    return best + 1


@functools.lru_cache(maxsize=4)
def _tree(n: int) -> Any:
    def build(size: int, seed: int) -> Any:
        if size <= 1:
            return seed % 10
        return [build(size // 3, seed + 1), build(size // 3, seed * 2), build(size - 2 * (size // 3) - 1, seed + 3)]

    return build(n, 1)


def fib(n: int) -> int:
    """Plain recursion, no loop."""
    return n if n < 2 else fib(n - 1) + fib(n - 2)


# --- a cold prologue and a short loop -----------------------------------------------------------------------


def describe_order(n: int) -> str:
    """Mostly straight-line code with a short loop: what a typical business function looks like."""
    order = {"id": n, "items": [("apple", 3, 0.5), ("pear", 2, 0.75), ("plum", 6, 0.2)], "discount": 0.1}
    customer = f"customer-{n % 13}"
    lines = [f"order {order['id']} for {customer}"]
    total = 0.0
    for name, count, price in order["items"]:
        cost = count * price
        total += cost
        lines.append(f"  {name:<6} x{count} = {cost:.2f}")
    total *= 1 - order["discount"]
    lines.append(f"  total {total:.2f}")
    return "\n".join(lines)


def _describe_orders(f: Callable[[int], str], n: int) -> int:
    return sum(len(f(i)) for i in range(n))


# --- small functions called many times from plain Python ----------------------------------------------------


def digit_sum(n: int) -> int:
    """A tiny helper with a short while loop."""
    total = 0
    while n:
        total += n % 10
        n //= 10
    return total


def clamp(x: float, lo: float, hi: float) -> float:
    """A tiny helper without a loop."""
    return lo if x < lo else hi if x > hi else x


def _call_digit_sum(f: Callable[[int], int], n: int) -> int:
    total = 0
    for i in range(n):
        total += f(i)
    return total


def _call_clamp(f: Callable[[float, float, float], float], n: int) -> float:
    total = 0.0
    for i in range(n):
        total += f(i * 0.01 - 5.0, -1.0, 1.0)
    return total


def row_stats(row: list[float]) -> tuple[float, float]:
    """Mean and variance of one row: a helper whose loop runs 150 iterations a call."""
    s = 0.0
    s2 = 0.0
    for x in row:
        s += x
        s2 += x * x
    mean = s / len(row)
    return mean, s2 / len(row) - mean * mean


_ROWS = [[((i * 31 + j * 17) % 101) * 0.5 for j in range(150)] for i in range(64)]


def _call_row_stats(f: Callable[[list[float]], tuple[float, float]], n: int) -> float:
    total = 0.0
    for k in range(n):
        mean, variance = f(_ROWS[k % 64])
        total += mean + variance
    return total


def stock_value(stock: dict[str, int], prices: dict[str, float]) -> float:
    """The value of a stock of 200 items: a loop over a dict's items, a call at a time."""
    total = 0.0
    for name, count in stock.items():
        if count > 0:
            total += count * prices[name]
    return total


_STOCKS = [{f"item{j}": (i * 7 + j * 3) % 11 - 2 for j in range(200)} for i in range(16)]
_PRICES = {f"item{j}": 0.25 + j % 13 for j in range(200)}


def _call_stock_value(f: Callable[[dict[str, int], dict[str, float]], float], n: int) -> float:
    total = 0.0
    for k in range(n):
        total += f(_STOCKS[k % 16], _PRICES)
    return total


# --- a function passed as an argument ----------------------------------------------------------------------


def integrate(f: Callable[[float], float], a: float, b: float, n: int) -> float:
    """The midpoint rule: a function passed as an argument, called in the loop."""
    h = (b - a) / n
    total = 0.0
    for k in range(n):
        total += f(a + (k + 0.5) * h)
    return total * h


def _bell(x: float) -> float:
    return math.exp(-x * x / 2)


def _integrate_both(f: Callable[..., float], n: int) -> float:
    return f(_bell, -3.0, 3.0, n) + f(math.cos, 0.0, 1.0, n)


# --- a search loop ------------------------------------------------------------------------------------------


def first_duplicate(n: int) -> int:
    """Search with an early return, over a list built by a comprehension."""
    values = [(i * 7919) % (n // 2 + 1) for i in range(n)]
    seen = set()
    for index, value in enumerate(values):
        if value in seen:
            return index
        seen.add(value)
    return -1


def first_matches(n: int) -> list[int]:
    """Per row of a table, where the first item equal to a target is: an inner `for j, v in enumerate(row)` that
    ends with `break` (or its `else`), started once per row, about 24 iterations a start."""
    rows = _table(n)
    found = []
    for row in rows:
        for j, v in enumerate(row):
            if v == 33:
                found.append(j)
                break
        else:
            found.append(-1)
    return found


def _table(n: int) -> list[list[int]]:
    """n rows of 40 small ints (made once per size, outside the timed function's work)."""
    key = ("table", n)
    if key not in _DATA:
        _DATA[key] = [[(i * 7 + j) % 50 for j in range(40)] for i in range(n)]
    return _DATA[key]


# --- a str built in a loop, a comprehension with a filter in a loop ---------------------------------------------


def hyphenated(n: int) -> int:
    """A str built with += and, every tenth character, a second += (a side trace appending too)."""
    s = ""
    for i in range(n):
        s += chr(97 + i % 26)
        if i % 10 == 9:
            s += "-"
    return len(s) + s.count("-")


def filtered_squares(n: int) -> int:
    """List comprehensions in a loop, one with a filter (its side trace appends to the outer loop's list)."""
    total = 0
    for i in range(n):
        squares = [j * j for j in range(i % 20)]
        even = [v for v in squares if v % 2 == 0]
        total += len(even) + (even[-1] if even else 0)
    return total


# --- comprehensions outside any loop statement: the function's hot work ---------------------------------------

_DATA: dict[tuple[str, int], Any] = {}


def _readings(n: int) -> list[float]:
    """n sensor readings (made once per size, outside the timed function's work)."""
    key = ("readings", n)
    if key not in _DATA:
        _DATA[key] = [20.0 + 15.0 * math.sin(i * 0.37) + (i % 7) * 0.25 for i in range(n)]
    return _DATA[key]


def normalize(values: list[float]) -> list[float]:
    """Scale readings to [0, 1]: min and max, then one list comprehension, at the function's top level."""
    lo = min(values)
    span = (max(values) - lo) or 1.0
    return [(v - lo) / span for v in values]


def _call_normalize(f: Callable[..., Any], n: int) -> float:
    values = _readings(n)
    return sum(f(values)[-1] for _ in range(20))


def _records(n: int) -> list[tuple[str, int, str]]:
    key = ("records", n)
    if key not in _DATA:
        kinds = ("book", "film", "game")
        _DATA[key] = [(f"item{i}", (i * 7919) % 1000, kinds[i % 3]) for i in range(n)]
    return _DATA[key]


def best_of_kind(records: list[tuple[str, int, str]], kind: str, floor: int) -> tuple[int, int]:
    """Filter records with a dict comprehension (name -> score of one kind, scores above a floor), then a set
    comprehension of the kept scores' hundreds: both at the function's top level."""
    kept = {name: score for name, score, what in records if what == kind and score > floor}
    bands = {score // 100 for score in kept.values()}
    return len(kept), len(bands)


def _call_best_of_kind(f: Callable[..., Any], n: int) -> int:
    records = _records(n)
    total = 0
    for kind in ("book", "film", "game") * 5:
        kept, bands = f(records, kind, 250)
        total += kept + bands
    return total


# --- objects made in a loop, a helper updating a global ---------------------------------------------------------


class Vec:
    def __init__(self, x: float, y: float) -> None:
        self.x = x
        self.y = y

    def add(self, o: Vec) -> Vec:
        return Vec(self.x + o.x, self.y + o.y)

    def scale(self, k: float) -> Vec:
        return Vec(self.x * k, self.y * k)

    def dot(self, o: Vec) -> float:
        return self.x * o.x + self.y * o.y


def vector_walk(n: int) -> tuple[float, float, float]:
    """Small immutable vectors: two new objects an iteration, methods calling methods."""
    p = Vec(0.0, 0.0)
    step = Vec(0.5, -0.25)
    total = 0.0
    for i in range(n):
        p = p.add(step.scale(1 + i % 3))
        total += p.dot(step)
    return round(total, 6), p.x, p.y


CALLS = 0


def _count_call(k: int) -> int:
    global CALLS
    CALLS += k
    return CALLS


def global_counter(n: int) -> int:
    """A helper that counts its calls in a module global (the loop itself never names it)."""
    global CALLS
    CALLS = 0
    total = 0
    for i in range(n):
        total += _count_call(1 + i % 2) & 7
    return total + CALLS


def type_dispatch(n: int) -> tuple[int, float, int, int]:
    """A loop over mixed values that dispatches on their types with isinstance."""
    values: list[Any] = [i if i % 3 == 0 else i * 0.5 if i % 3 == 1 else f"v{i}" for i in range(n)]
    values[::97] = [None] * len(values[::97])
    ints, floats, chars, others = 0, 0.0, 0, 0
    for v in values:
        if isinstance(v, int):
            ints += v
        elif isinstance(v, float):
            floats += v
        elif isinstance(v, str):
            chars += len(v)
        else:
            others += 1
    return ints, floats, chars, others


def word_index(n: int) -> tuple[int, int]:
    """An index of words to their positions: dict.setdefault, a str method, list.append, in one line."""
    text = " ".join(f"w{i % 97}" for i in range(n))
    index: dict[str, list[int]] = {}
    for pos, word in enumerate(text.split()):
        index.setdefault(word.upper(), []).append(pos)
    return len(index), sum(len(v) for v in index.values())


# --- a lambda key, a helper def inside the function -----------------------------------------------------------


def ranked_rows(n: int) -> int:
    """Short rows sorted by a lambda key in a loop: `sorted(row, key=lambda t: t[1])`."""
    rows = [[(j, (i * 31 + j * 17) % 23) for j in range(5)] for i in range(64)]
    total = 0
    for i in range(n):
        ranked = sorted(rows[i % 64], key=lambda t: t[1])
        total += ranked[0][0] + ranked[-1][1]
    return total


def column_best(n: int) -> int:
    """The best row by each column in turn: a lambda reading the loop's variable (a cell variable)."""
    rows = [(i, (i * 31) % 23, (i * 17) % 29, -i) for i in range(12)]
    total = 0
    for k in range(n):
        col = k % 4
        best = max(rows, key=lambda r: r[col])
        total += best[0]
    return total


def tally_nonlocal(n: int) -> tuple[int, int]:
    """A nested def counting with `nonlocal`, called in the loop (the function reads the count there too)."""
    count = 0
    odd = 0

    def bump(i: int) -> None:
        nonlocal count, odd
        count += 1
        if i & 1:
            odd += 1

    total = 0
    for i in range(n):
        bump(i)
        total += count % 7
    return total, odd


def nearest_distance(n: int) -> tuple[float, float]:
    """A small helper def at the top of the function (reading two of its locals), called in its loop."""
    ox, oy = 0.5, -0.25

    def dist(x: float, y: float) -> float:
        dx = x - ox
        dy = y - oy
        return (dx * dx + dy * dy) ** 0.5

    total = 0.0
    best = math.inf
    for i in range(n):
        d = dist((i % 17) * 0.25, (i % 13) * 0.5)
        total += d
        if d < best:
            best = d
    return round(total, 6), best


# --- generator expressions consumed by any() and sum() ---------------------------------------------------------


def flagged_rows(n: int) -> tuple[int, int]:
    """Rows tested with any() and totalled with sum() of generator expressions, in a loop: `if any(x > t for x in
    row):`, `energy += sum(x * x for x in row)` (the threshold changes in the loop)."""
    rows = [[(i * 7 + j * 13) % 101 for j in range(8)] for i in range(64)]
    flagged = 0
    energy = 0
    for i in range(n):
        row = rows[i % 64]
        t = 90 + i % 10
        if any(x > t for x in row):
            flagged += 1
        energy += sum(x * x for x in row)
    return flagged, energy


def _run(f: Callable[[int], Any], n: int) -> Any:
    return f(n)


@dataclasses.dataclass(frozen=True)
class Case:
    func: Callable[..., Any]
    size: int
    quick_size: int
    run: Callable[[Callable[..., Any], int], Any] = _run
    what: str = ""
    #: the function calls itself by its global name: the jitted variant must be what that name refers to
    recursive: bool = False


ORDINARY: dict[str, Case] = {
    "particles": Case(particles, 200, 10, what="classes, methods, a generator expression"),
    "method_loop": Case(method_loop, 100_000, 2000, what="a loop of method calls and attributes"),
    "shapes": Case(shapes, 100_000, 2000, what="a class hierarchy: super().__init__, super().area()"),
    "csv_roundtrip": Case(csv_roundtrip, 20_000, 500, what="f-strings, split, join"),
    "title_words": Case(title_words, 50_000, 1000, what="string methods"),
    "word_stats": Case(word_stats, 100_000, 2000, what="dict and set"),
    "word_count": Case(word_count, 100_000, 2000, what="split, str methods, a slice, dict.get"),
    "parse_numbers": Case(parse_numbers, 50_000, 1000, what="try/except in a loop"),
    "interruptible": Case(interruptible, 300_000, 5000, what="a loop inside try/except KeyboardInterrupt"),
    "parse_then_scan": Case(parse_then_scan, 20_000, 500, what="try/except in a loop, then a nested loop"),
    "sum_generated": Case(sum_generated, 200_000, 4000, what="for over a generator"),
    "sieve_primes": Case(sieve_primes, 200_000, 4000, _sum_of, "a generator function (sum of what it yields)"),
    "tree_sum": Case(tree_sum, 20_000, 500, what="recursion, nested function"),
    "fib": Case(fib, 20, 12, what="recursion without a loop", recursive=True),
    "describe_order": Case(describe_order, 20_000, 500, _describe_orders, "cold prologue, 3-iteration loop"),
    "digit_sum": Case(digit_sum, 20_000, 4000, _call_digit_sum, "tiny jitted helper called from plain code"),
    "clamp": Case(clamp, 50_000, 10_000, _call_clamp, "tiny jitted helper, no loop"),
    "row_stats": Case(row_stats, 4000, 200, _call_row_stats, "a helper's 150-iteration loop, called per row"),
    "stock_value": Case(stock_value, 4000, 200, _call_stock_value, "a loop over a 200-item dict's items, per call"),
    "first_duplicate": Case(first_duplicate, 50_000, 2000, what="search loop with return, enumerate"),
    "first_matches": Case(first_matches, 2000, 60, what="per row, enumerate(row) until a match: break or else"),
    "integrate": Case(integrate, 100_000, 2000, _integrate_both, "a function passed in: Python's, then math.cos"),
    "hyphenated": Case(hyphenated, 200_000, 2000, what="a str built with += on two ways"),
    "filtered_squares": Case(filtered_squares, 8000, 200, what="comprehensions in a loop, one with a filter"),
    "vector_walk": Case(vector_walk, 50_000, 1000, what="objects made in a loop, methods calling methods"),
    "global_counter": Case(global_counter, 200_000, 4000, what="a helper updating a module global"),
    "type_dispatch": Case(type_dispatch, 200_000, 4000, what="isinstance dispatch over mixed values"),
    "word_index": Case(word_index, 100_000, 2000, what="dict.setdefault(str method, []).append"),
    "ranked_rows": Case(ranked_rows, 50_000, 1000, what="sorted(row, key=lambda t: t[1]) in a loop"),
    "column_best": Case(column_best, 50_000, 1000, what="max(rows, key=lambda r: r[col]), col the loop's"),
    "tally_nonlocal": Case(tally_nonlocal, 200_000, 4000, what="a nested def with a nonlocal counter, in a loop"),
    "nearest_distance": Case(nearest_distance, 200_000, 4000, what="a helper def of the function called in its loop"),
    "normalize": Case(normalize, 20_000, 500, _call_normalize, "a top-level list comprehension over floats"),
    "best_of_kind": Case(best_of_kind, 20_000, 500, _call_best_of_kind, "top-level dict and set comprehensions"),
    "flagged_rows": Case(flagged_rows, 50_000, 1000, what="any() and sum() of generator expressions in a loop"),
}
