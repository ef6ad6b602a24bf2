"""Differential tests of assert and raise: messages, classes and instances, causes, non-exceptions."""

import pytest
from helpers import define
from tier1_check import check_t1 as check

from jit import jit


class MyError(Exception):
    pass


class WithInit(Exception):
    def __init__(self, a, b):
        super().__init__(f"{a}-{b}")
        self.a = a


class BadInit(Exception):
    def __init__(self):
        raise RuntimeError("cannot make me")


# pytest rewrites the asserts of test modules, so the functions with asserts are defined from source text
ASSERT_SOURCE = """
def assert_plain(x):
    assert x
    return x


def assert_message(x):
    assert x > 0, f"x must be positive, got {x}"
    return x


def assert_message_not_evaluated(x, log):
    assert x, log.append("evaluated")
    return log


def assert_message_object(x):
    assert x, [x, "payload"]


def assert_compound(x, y):
    assert x and not y or x == y, (x, y)
    return "ok"


def assert_in_loop(n):
    t = 0
    for i in range(n):
        assert i < 11, i
        t += i
    return t


def assert_condition_raises(x):
    assert x < 0


def shadow_assertion_error(x):
    AssertionError = ValueError
    assert x, "still the builtin"
    return AssertionError


def assertion_error_global(x):
    assert x, "global shadow ignored"
"""

_ns = {"AssertionError": KeyError}  # a global AssertionError does not change what assert raises
define(ASSERT_SOURCE, "assert_plain", _ns)
assert_plain = _ns["assert_plain"]
assert_message = _ns["assert_message"]
assert_message_not_evaluated = _ns["assert_message_not_evaluated"]
assert_message_object = _ns["assert_message_object"]
assert_compound = _ns["assert_compound"]
assert_in_loop = _ns["assert_in_loop"]
assert_condition_raises = _ns["assert_condition_raises"]
shadow_assertion_error = _ns["shadow_assertion_error"]
assertion_error_global = _ns["assertion_error_global"]


def raise_class(kind):
    if kind == 0:
        raise ValueError
    if kind == 1:
        raise MyError
    if kind == 2:
        raise StopIteration
    if kind == 3:
        raise KeyError
    return kind


def raise_instance(kind):
    if kind == 0:
        raise ValueError("bad value", 42)
    if kind == 1:
        raise MyError("mine")
    if kind == 2:
        raise WithInit(1, b=2)
    if kind == 3:
        raise KeyError("k")
    if kind == 4:
        raise BadInit  # instantiating it raises RuntimeError
    if kind == 5:
        raise WithInit  # missing arguments: TypeError
    return kind


def raise_non_exception(kind):
    if kind == 0:
        raise 5
    if kind == 1:
        raise "string"
    if kind == 2:
        raise object
    if kind == 3:
        raise None
    return kind


def raise_from(kind):
    if kind == 0:
        raise ValueError("outer") from KeyError("inner")
    if kind == 1:
        raise ValueError("outer") from None
    if kind == 2:
        raise ValueError from TypeError
    if kind == 3:
        raise ValueError("x") from 5
    return kind


def raise_in_loop(n):
    for i in range(n):
        if i == 10:
            raise IndexError(f"stopped at {i}")
    return n


def raise_computed(exc):
    raise exc


@pytest.mark.parametrize(
    "func, calls",
    [
        (assert_plain, [1, 0, [], [0], None]),
        (assert_message, [1, 0, -2.5]),
        (assert_message_not_evaluated, [(1, []), (0, [])]),
        (assert_message_object, [0, 1]),
        (assert_compound, [(1, 0), (1, 1), (0, 0), (0, 1)]),
        (assert_in_loop, [5, 12]),
        (assert_condition_raises, [1, "s"]),
        (shadow_assertion_error, [1, 0]),
        (assertion_error_global, [1, 0]),
        (raise_class, [0, 1, 2, 3, 4]),
        (raise_instance, [0, 1, 2, 3, 4, 5, 6]),
        (raise_non_exception, [0, 1, 2, 3, 4]),
        (raise_from, [0, 1, 2, 3, 4]),
        (raise_in_loop, [5, 12]),
        (raise_computed, [ValueError("v"), MyError, 3]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_assert_raise(func, calls):
    check(func, *calls, native=True if func in (assert_in_loop, raise_in_loop) else None)


def _both(func, *args):
    """The exceptions plain CPython and @jit raise."""
    with pytest.raises(BaseException) as plain:
        func(*args)
    with pytest.raises(BaseException) as jitted:
        jit(func)(*args)
    return plain.value, jitted.value


@pytest.mark.parametrize("kind", [0, 1, 2])
def test_raise_from_sets_cause_and_suppress_context(kind):
    plain, jitted = _both(raise_from, kind)
    assert type(jitted.__cause__) is type(plain.__cause__)
    assert str(jitted.__cause__) == str(plain.__cause__)
    assert jitted.__suppress_context__ == plain.__suppress_context__
    assert jitted.__context__ is None and plain.__context__ is None


def test_raised_instance_is_the_same_object():
    err = MyError("identity")
    _, jitted = _both(raise_computed, err)
    assert jitted is err


def test_exception_attributes_kept():
    plain, jitted = _both(raise_instance, 2)
    assert jitted.a == plain.a == 1
    assert jitted.args == plain.args


def test_bad_init_context():
    # raising a class whose constructor fails raises the constructor's error
    plain, jitted = _both(raise_instance, 4)
    assert type(jitted) is type(plain) is RuntimeError
    assert type(jitted.__context__) is type(plain.__context__)


def test_context_of_raise_inside_callers_except():
    # raised while the caller handles another exception: __context__ is that exception, as under CPython
    def run(f):
        try:
            raise KeyError("handled")
        except KeyError:
            try:
                f(1)
            except MyError as exc:
                return exc

    plain = run(raise_instance)
    jitted = run(jit(raise_instance))
    assert type(jitted.__context__) is type(plain.__context__) is KeyError
