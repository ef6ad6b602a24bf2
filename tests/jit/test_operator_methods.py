"""`a + b` of an instance of a Python class whose `__add__` is a plain Python function: the method's body inlined
into the trace (jit.recorder.operator_methods) instead of a generic operator (PyNumber_Add). Checked against
CPython: operands of several types, `+=` with and without `__iadd__`, NotImplemented and the reflected method,
a subclass whose reflected method comes first, a method raising or replaced mid-loop, a method with an effect;
and through jit.stats and the uop dump that the body was inlined."""

from helpers import check, warm_call

import jit as jit_module
from jit import jit


class Vec:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, other):
        return Vec(self.x + other.x, self.y + other.y)

    def __sub__(self, other):
        return Vec(self.x - other.x, self.y - other.y)

    def __mul__(self, k):
        if isinstance(k, (int, float)):
            return Vec(self.x * k, self.y * k)
        return NotImplemented

    def __repr__(self):
        return f"Vec({self.x!r}, {self.y!r})"

    def __eq__(self, other):
        return type(other) is Vec and self.x == other.x and self.y == other.y


class Scale:
    """Multiplies a Vec from the right (Vec.__mul__ returns NotImplemented for it)."""

    def __init__(self, k):
        self.k = k

    def __rmul__(self, v):
        return Vec(v.x * self.k, v.y * self.k)


class Money:
    def __init__(self, cents):
        self.cents = cents

    def __add__(self, other):
        if other.cents < 0:
            raise ValueError(f"negative amount: {other.cents}")
        return Money(self.cents + other.cents)

    def __iadd__(self, other):  # (in place: never inlined, CPython's call)
        self.cents += other.cents
        return self

    def __eq__(self, other):
        return type(other) is type(self) and self.cents == other.cents

    def __repr__(self):
        return f"Money({self.cents})"


class Tip(Money):
    def __radd__(self, other):  # (a subclass's reflected method comes first)
        return Money(other.cents + 2 * self.cents)


class Counted:
    adds = 0

    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        Counted.adds += 1
        return Counted(self.v + other)

    def __eq__(self, other):
        return type(other) is Counted and self.v == other.v


class Same:
    def __init__(self, v):
        self.v = v

    def __add__(self, other):  # (returns an object the trace did not make: may be NotImplemented)
        self.v += other
        return self


def walk(n):
    p = Vec(0.0, 0.0)
    d = Vec(0.5, -0.25)
    for i in range(n):
        p = p + d * (i % 3) - Vec(0.125, 0.0)
        p += d
    return p


def mixed_right_operands(values):
    p = Vec(1.0, 2.0)
    out = []
    for k in values:
        out.append(p * k)
    return out


def totals(items):
    total = Money(0)
    running = Money(0)
    for m in items:
        total = total + m
        running += m
    return total, running


def counted(n):
    Counted.adds = 0
    c = Counted(0)
    for i in range(n):
        c = c + i
    return c.v, Counted.adds


def returns_self(n):
    s = Same(0)
    for i in range(n):
        s = s + i
    return s.v


def replaced_midway(n):
    p = Vec(0, 0)
    d = Vec(1, 2)
    for i in range(n):
        if i == n // 2:
            Vec.__add__ = _add_twice
        p = p + d
    Vec.__add__ = _ADD
    return p


_ADD = Vec.__add__


def _add_twice(self, other):
    return Vec(self.x + 2 * other.x, self.y + 2 * other.y)


def test_vector_arithmetic():
    jitted = check(walk, 0, 5, 200, native=True)
    for f in (jitted, jitted.cpython_baseline):
        assert not jit_module.stats(f)["aborts_by_code"], jit_module.stats(f)["aborts"]


def test_right_operands_of_several_types():
    check(mixed_right_operands, [2] * 30 + [0.5] * 30 + [True] * 5, [3] * 40 + [Scale(3)] * 3 + [4] * 20, native=True)
    check(mixed_right_operands, [2] * 40 + ["x"] + [1] * 5)  # (TypeError: NotImplemented both ways, native=True)


def test_raising_in_place_and_a_subclass_reflected():
    items = [Money(i) for i in range(60)]
    check(totals, items, items[:40] + [Money(-1)] + items, items[:30] + [Tip(5)] * 3 + items, native=True)


def test_a_method_with_an_effect():
    check(counted, 0, 7, 100, native=True)


def test_a_method_returning_what_it_did_not_make():
    check(returns_self, 0, 100, native=True)


def test_a_method_replaced_on_the_class():
    check(replaced_midway, 10, 100, native=True)


def test_body_inlined():
    jitted = jit(threshold=2, side_exit_threshold=2)(walk)
    for _ in range(3):
        jitted(200)
    result, entries, exits = warm_call(jitted, 200)
    assert result == walk(200)
    assert entries == 1 and exits <= 1
    uops = jit_module.dump(jitted, "uops")
    assert "_BINARY_OP_GENERIC" not in uops and "_NEW_INSTANCE" in uops
    assert "Vec.__add__" in jit_module.explain(jitted)


class Num:
    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        if isinstance(other, Num):
            return Num(self.v + other.v)
        return Num(self.v + other)

    def __mul__(self, other):
        return Num(self.v * other.v)

    def __truediv__(self, other):
        return Num(self.v / other.v)

    def __eq__(self, other):
        return type(other) is Num and self.v == other.v

    def __repr__(self):
        return f"Num({self.v!r})"


def accumulate(values):
    total = Num(0)
    for v in values:
        total = total + Num(v) * Num(v) + 1
    return total


def divide(pairs):
    out = []
    for a, b in pairs:
        out.append(Num(a) / Num(b))
    return out


def test_exits_inside_the_inlined_bodies():
    """Guards inside the inlined methods fail mid-loop (an attribute's type changes from int to float to an int
    past 64 bits; a division by zero): the exit leaves at the BINARY_OP and the interpreter makes it again."""
    values = list(range(40)) + [0.5, 1.5] + [2**40, 2**62, 7] + list(range(20))
    check(accumulate, values, list(range(60)), native=True)
    pairs = [(i, i % 7 + 1) for i in range(40)] + [(1, 0)] + [(3, 4)] * 10
    check(divide, pairs, [(1.5, 2)] * 30 + [(2, 0.0)], native=True)


class Grid:
    def __init__(self, w, cells):
        self.w = w
        self.cells = cells
        self.reads = 0

    def __getitem__(self, pos):
        x, y = pos
        return self.cells[y * self.w + x]


class Counting(Grid):
    def __getitem__(self, i):  # (an effect: counted, as an inlined method's store)
        self.reads += 1
        return self.cells[i]


class Strict(dict):
    def __getitem__(self, key):
        if key not in self:
            raise KeyError(f"no {key!r} here")
        return dict.__getitem__(self, key) * 2


def grid_sum(g, w, h):
    total = 0
    for y in range(h):
        for x in range(w):
            total += g[x, y]
    return total


def counted_reads(c, n):
    total = 0
    for i in range(n):
        total += c[i % len(c.cells)]
    return total, c.reads


def strict_lookups(d, keys):
    out = []
    for k in keys:
        out.append(d[k])
    return out


def test_getitem_of_a_python_class_inlined():
    """`c[k]` of an instance whose class defines `__getitem__` in Python: its body inlined (effects as a method's),
    the class guarded; its KeyError raised mid-loop; a subclass of dict with its own `__getitem__`."""
    cells = list(range(48))
    check(grid_sum, (Grid(8, cells), 8, 6), (Grid(8, cells[:40] + [0.5] * 8), 8, 6), native=True)
    check(counted_reads, (Counting(4, list(range(20))), 100), native=True)
    d = Strict(a=1, b=2, c=3)
    check(strict_lookups, (d, list("abc") * 20), (d, list("abc") * 20 + ["z"]), native=True)
    # (check() deep-copies its arguments, whose instances then keep their attributes in a dict of their own, read
    # generically: an inlined body may not, so the subscript stays generic there; an ordinary instance here)
    jitted = jit(threshold=2, side_exit_threshold=2)(grid_sum)
    grid = Grid(8, cells)
    for _ in range(3):
        assert jitted(grid, 8, 6) == grid_sum(grid, 8, 6)
    assert "Grid.__getitem__" in jit_module.explain(jitted)
    assert "_BINARY_SUBSCR_GENERIC" not in jit_module.dump(jitted, "uops")
