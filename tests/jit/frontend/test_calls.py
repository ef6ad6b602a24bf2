"""Differential tests of calls: builtins, user functions, methods, classes, bound methods, keywords, errors."""

import functools
import math
import warnings

import pytest
from helpers import Args
from tier1_check import check_t1 as check


def helper(a, b=10, *, c=100):
    return a + b * 2 + c * 3


def helper_posonly(a, b=2, /, c=3):
    return (a, b, c)


def helper_raises(x):
    if x > 5:
        raise ValueError(f"too big: {x}")
    return x


class Point:
    def __init__(self, x, y=0):
        self.x = x
        self.y = y

    def moved(self, dx, dy=0):
        return Point(self.x + dx, self.y + dy)

    def norm1(self):
        return abs(self.x) + abs(self.y)

    @staticmethod
    def origin():
        return Point(0, 0)

    @classmethod
    def make(cls, v):
        return cls(v, v)


def call_builtins(seq):
    return (
        len(seq),
        max(seq),
        min(seq, key=abs),
        sorted(seq, reverse=True),
        sum(seq, 10),
        round(3.14159, 2),
        int("ff", base=16),
        divmod(17, 5),
        pow(3, 4, 5),
        isinstance(seq, list),
        str(len(seq)),
    )


def call_user(n):
    t = 0
    for i in range(n):
        t += helper(i) + helper(i, 1) + helper(i, c=0) + helper(a=i, b=0, c=1) + helper(i, c=2, b=3)
    return t


def call_posonly(n):
    return helper_posonly(n), helper_posonly(n, 5), helper_posonly(n, 5, 6), helper_posonly(n, c=9)


def call_methods(n):
    p = Point(1, 2)
    for i in range(n):
        p = p.moved(i, dy=-1)
    return p.x, p.y, p.norm1(), Point.origin().norm1(), Point.make(n).x


def call_bound_method_stored(n):
    out = []
    add = out.append
    for i in range(n):
        add(i * i)
    return out


def call_unbound_method(items):
    return list.__len__(items), str.upper("abc"), Point.norm1(Point(-3, 4))


def call_classes(n):
    return list(range(n)), dict(a=1, b=n), tuple("ab"), set([n, n]), frozenset(), complex(1, imag=n)


def call_callable_object(n):
    p = functools.partial(helper, b=0)
    return p(n), p(n, c=1)


def call_nested_calls(n):
    return abs(min(-n, max(n, 3), key=lambda_free_key)), len(str(abs(-n)))


def lambda_free_key(v):
    return -v


def call_result_of_call(n):
    return get_adder(n)(5)


def get_adder(n):
    return functools.partial(int.__add__, n)


def call_method_on_literal(n):
    return "-".join(["a", str(n)]), [3, 1, 2].index(1), {"k": n}.get("k"), (1, 2, 1).count(1)


def call_argument_order(log):
    def_order = record(log, "f")(record(log, 1), record(log, 2), k=record(log, 3))
    return def_order, log


def record(log, value):
    log.append(value)
    return value if value != "f" else make_tuple


def make_tuple(*args, **kwargs):
    return args, kwargs


def call_keywords_mangled_not(n):
    return dict(__x=n, _y=2)


def call_in_loop_changes_target(funcs):
    out = []
    for f in funcs:
        out.append(f(-3))
    return out


@pytest.mark.parametrize(
    "func, calls",
    [
        (call_builtins, [[3, -7, 2, 9], [1]]),
        (call_user, [0, 12]),
        (call_posonly, [1]),
        (call_methods, [0, 12]),
        (call_bound_method_stored, [12]),
        (call_unbound_method, [[1, 2, 3]]),
        (call_classes, [3]),
        (call_callable_object, [4]),
        (call_nested_calls, [5, -20]),
        (call_result_of_call, [7]),
        (call_method_on_literal, [3]),
        (call_argument_order, [Args([])]),
        (call_keywords_mangled_not, [1]),
        (call_in_loop_changes_target, [[abs, str, float, bool, Point, helper, helper_raises, lambda_free_key]]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_calls(func, calls):
    check(func, *calls)


# --- calls in compiled loops: builtins and math, a Python function off the compiled path --------------------


def builtins_in_loop(xs):
    t = 0
    for x in xs:
        t += abs(x) + min(x, 3) + max(x, -3, 0) + int(x * 1.5) + round(x / 3) + len(xs) + float(x)
    return t


def math_in_loop(xs):
    t = 0.0
    for x in xs:
        t += math.sqrt(x) + math.floor(x / 7) + math.sin(x) + math.hypot(x, 3) + math.exp(-x) + math.log(x + 1)
    return t


def call_user_rarely(n):
    t = 0
    for i in range(n):
        if i % 10 == 9:
            t += helper(i, c=2)
        else:
            t += i
    return t


def test_calls_in_compiled_loops():
    check(builtins_in_loop, list(range(-15, 15)), [0.5 * i for i in range(-15, 15)], [2**62, 2**62], native=True)
    check(
        math_in_loop,
        list(range(30)),
        [0.5 * i for i in range(30)],
        list(range(20, -5, -1)),  # math domain error after 21 iterations
        [1e308] * 3 + [math.inf, math.nan] * 10,
        native=True,
    )
    check(call_user_rarely, 0, 50, native=True)


# --- calls that raise -------------------------------------------------------------------------------------


def raises_in_loop(n):
    t = 0
    for i in range(n):
        t += helper_raises(i)
    return t


def unexpected_keyword(n):
    return helper(n, d=1)


def unexpected_keyword_builtin(n):
    return len([n], key=1)


def unexpected_keyword_method(n):
    return Point(n).moved(1, dz=2)


def unexpected_keyword_class(n):
    return Point(n, z=1)


def multiple_values(n):
    return helper(n, a=1)


def missing_argument(n):
    return helper()


def missing_keyword_only(n):
    return helper_posonly(a=n)


def too_many_positional(n):
    return helper(n, n, n)


def not_callable(n):
    return n()


def calls_none_attr(n):
    return n.missing()


def builtin_type_error(n):
    return len(n)


def builtin_value_error(n):
    return int(n)


def keyword_to_builtin_without_keywords(n):
    return abs(x=n)


@pytest.mark.parametrize(
    "func, arg",
    [
        (raises_in_loop, 12),
        (raises_in_loop, 3),
        (unexpected_keyword, 1),
        (unexpected_keyword_builtin, 1),
        (unexpected_keyword_method, 1),
        (unexpected_keyword_class, 1),
        (multiple_values, 1),
        (missing_argument, 1),
        (missing_keyword_only, 1),
        (too_many_positional, 1),
        (not_callable, 1),
        (not_callable, "s"),
        (calls_none_attr, None),
        (builtin_type_error, 5),
        (builtin_value_error, "x1"),
        (keyword_to_builtin_without_keywords, -1),
    ],
    ids=lambda v: getattr(v, "__name__", repr(v)),
)
def test_call_errors(func, arg):
    check(func, arg)


# --- private names inside a class ---------------------------------------------------------------------------

_Mangled__hidden = "mangled global"  # what `__hidden` inside class Mangled reads


class Mangled:
    __slot = 3

    def keywords_not_mangled(self, n):
        # keyword names in calls are not mangled by CPython (parameter names in a def are)
        return dict(__x=n, _y=n), make_tuple(__k=1)

    def names_mangled(self, n):
        __local = n * 2
        return __local, self.__slot, __hidden  # noqa: F821

    def unbound_mangled(self, n):
        if n:
            __late = 1
        return __late

    def missing_mangled_global(self, n):
        return __nowhere  # noqa: F821

    def calls_own_private(self, n):
        t = 0
        for i in range(n):
            t += self.__helper(i)
        return t

    def __helper(self, i):
        return i * self.__slot


@pytest.mark.parametrize(
    "method, arg",
    [
        (Mangled.keywords_not_mangled, 1),
        (Mangled.names_mangled, 2),
        (Mangled.unbound_mangled, 0),
        (Mangled.unbound_mangled, 1),
        (Mangled.missing_mangled_global, 0),
        (Mangled.calls_own_private, 12),
    ],
    ids=lambda v: getattr(v, "__name__", repr(v)),
)
def test_private_names_in_methods(method, arg):
    check(method, Args(Mangled(), arg))


# --- callees that look at their caller's frame --------------------------------------------------------------


def warns(n):
    total = 0
    for i in range(n):
        total += i
    warnings.warn("careful", UserWarning)
    return total


def _warning_location(func):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        func(12)
    [w] = caught
    return w.filename, w.lineno, str(w.message)


def test_warning_message_and_category_unchanged():
    from jit import jit

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert jit(warns)(12) == warns(12)
    assert [(w.category, str(w.message)) for w in caught] == [(UserWarning, "careful")] * 2


def test_warning_attributed_to_user_line():
    from jit import jit

    assert _warning_location(jit(warns)) == _warning_location(warns)
