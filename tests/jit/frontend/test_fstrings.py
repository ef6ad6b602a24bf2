"""f-strings: conversions (!r !s !a), format specs (nested too), the `=` debug specifier, mixed text, objects
with their own __format__/__str__/__repr__, and errors."""

import datetime

import pytest
from tier1_check import check_t1

NAN = float("nan")


def note(log, value):
    """Log that an operand was evaluated, and return it."""
    log.append(value)
    return value


class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __repr__(self):
        return f"Point({self.x!r}, {self.y!r})"

    def __str__(self):
        return f"({self.x}, {self.y})"


class Money:
    def __init__(self, cents):
        self.cents = cents

    def __format__(self, spec):
        if spec == "":
            return f"${self.cents / 100:.2f}"
        if spec == "cents":
            return f"{self.cents}c"
        return "[" + spec + "]"

    def __repr__(self):
        return "Money(...)"


class BadFormat:
    def __format__(self, spec):
        return len(spec)


class FormatRaises:
    def __format__(self, spec):
        raise LookupError("no format " + spec)


class ReprRaises:
    def __repr__(self):
        raise ValueError("no repr")

    def __str__(self):
        return "str ok"


class Tagged(str):
    def __str__(self):
        return "tagged:" + self


VALUES = [
    1,
    -0.0,
    1.5,
    NAN,
    2**70,
    True,
    None,
    "héllo\n",
    "a'b\"c",
    b"by\xfftes",
    [1, "x", None],
    {"k": (1, 2.5)},
    Point(1, "two"),
    Money(12345),
    Tagged("t"),
    BadFormat(),
    FormatRaises(),
]


def conversions(x):
    return f"{x}", f"{x!s}", f"{x!r}", f"{x!a}"


def conversion_in_text(x):
    return f"<{x!r}|{x!s}|{x!a}|{x}>"


@pytest.mark.parametrize("func", [conversions, conversion_in_text], ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", VALUES, ids=lambda v: type(v).__name__)
def test_conversions(func, x):
    check_t1(func, x)


def repr_raises(conversion):
    x = ReprRaises()  # made here: the test helper itself needs repr() of the arguments
    if conversion == "s":
        return f"{x!s}{x}"
    if conversion == "a":
        return f"{x!a}"
    return f"<{x!r}>"


def test_repr_raising():
    check_t1(repr_raises, "s", "a", "r")


def spec_numbers(x):
    return f"{x:>10}|{x:<6}|{x:^9}|{x:+}|{x:,}|{x:_}"


def spec_float(x):
    return f"{x:08.3f}|{x:e}|{x:.2%}|{x:g}|{x:.0f}|{x:#.3g}"


def spec_int(x):
    return f"{x:d}|{x:#b}|{x:#o}|{x:_x}|{x:X}|{x:c}|{x:08d}"


@pytest.mark.parametrize("x", [0, 42, -42, 2**64 + 1, 3.14159, -0.0, NAN, True, "text", Money(5)], ids=repr)
def test_format_specs(x):
    check_t1(spec_numbers, x)
    check_t1(spec_float, x)
    check_t1(spec_int, x)


def nested_spec(x, w, p, fill):
    return f"{x:{fill}>{w}.{p}f}|{x:^{w}}|{x!r:>{w}}|{x:{w}}|{x:{'<'}{w}}"


@pytest.mark.parametrize(
    "call",
    [
        (3.14159, 10, 2, "*"),
        (-1.5, 3, 0, "0"),
        (2, 12, 5, " "),
        (1.0, "a", 2, "*"),
        (1.0, 10, 2, "**"),
        ("s", 4, 1, "-"),
    ],
    ids=repr,
)
def test_nested_format_specs(call):
    check_t1(nested_spec, call)


def debug_specifier(x, y):
    return f"{x=}", f"{x = }", f"{x=!s}", f"{x=:>8}", f"{x*2=}", f"{x + y = }", f"{y=!a:>12}"


@pytest.mark.parametrize("x, y", [(1, 2), (1.5, "é"), ("ab", "cd"), ([1], [2]), (None, 3)], ids=repr)
def test_debug_specifier(x, y):
    check_t1(debug_specifier, (x, y))


def mixed_text(x, d):
    empty = f""  # noqa: F541
    only_text = f"just text"  # noqa: F541
    return empty, only_text, f"{{literal}} {x}", f"a{x}b{d['k']}c{len(d)}", f"{f'{x}!'}", f"{x}{x}{x}"


def test_mixed_text():
    check_t1(mixed_text, (1, {"k": "v"}), ("{}", {"k": 2.5}), (None, {}))


def custom_format(m, spec):
    return f"{m}", f"{m:cents}", f"{m:{spec}}", f"{m!s}", f"{m!r:>12}"


def test_objects_with_format():
    check_t1(custom_format, (Money(250), "x"), (Money(-1), ""), (BadFormat(), "x"), (FormatRaises(), ""))
    check_t1(custom_format, (Point(1, 2), ""), (datetime.date(2024, 2, 29), "%Y/%m/%d"), (7, "cents"))


def format_errors(x, spec):
    return f"{x:{spec}}"


@pytest.mark.parametrize(
    "call",
    [(1.5, "d"), ("s", "d"), (1, "s"), (Point(1, 2), ">5"), (None, "x"), (10, "..."), (1, "z"), (2**70, "c")],
    ids=repr,
)
def test_format_errors(call):
    check_t1(format_errors, call)


def evaluation_order(log):
    return f"{note(log, 1)}-{note(log, 'two')!r}-{note(log, 3.0):{note(log, '>5')}}"


def test_evaluation_order():
    check_t1(evaluation_order, [[]])


def build_table(n):
    s = ""
    for i in range(n):
        s += f"{i:>3}:{i * i:<5}|{i / 3:.2f}|{'odd' if i % 2 else 'even'!s:^6}\n"
    return s


def format_growing(n):
    out = []
    x = 1
    for i in range(n):
        x = x * 1000 if i < 8 else x / 7
        out.append(f"{x:,}")
    return out


def format_fails_late(xs):
    out = []
    for x in xs:
        out.append(f"{x:5d}")
    return out


def report_every_tenth(n):
    out = []
    total = 0
    for i in range(n):
        total += i * i
        if i % 10 == 9:
            out.append(f"{i}:{total:>8}|{total / (i + 1):.3f}")
    return out, total


def test_fstrings_in_loops():
    # (formatting runs natively too: tests/jit/test_fstrings.py)
    check_t1(build_table, 0, 1, 12, native=True)
    check_t1(format_growing, 3, 12, native=True)
    check_t1(format_fails_late, [1, 2, 3, 4, 5, 6, 7.5], [1, 2], [True, -3])
    check_t1(report_every_tenth, 0, 50, native=True)
