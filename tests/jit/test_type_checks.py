"""`isinstance(x, C)` and `type(x)` of a value whose class the trace knows are constants in the trace
(jit.recorder.type_checks), not generic calls: checked against CPython over values of many classes, classes
CPython's isinstance treats specially (ABCs, a class defining `__class__`), classes rebound and instances whose
class changes mid-loop; and through jit.stats and the uop dump that the loop runs natively with no call left."""

import numbers

from helpers import check, warm_call

import jit as jit_module
from jit import jit


class Base:
    pass


class Derived(Base):
    pass


class Other:
    pass


class Proxy:
    """Claims to be a Base through `__class__`, as mocks and proxies do: CPython's isinstance reads it."""

    @property
    def __class__(self):
        return Base


class MyInt(int):
    pass


def dispatch(values):
    ints = floats = strs = others = 0
    for v in values:
        if isinstance(v, bool):
            others += 100
        elif isinstance(v, int):
            ints += 1
        elif isinstance(v, float):
            floats += v
        elif isinstance(v, str):
            strs += len(v)
        elif isinstance(v, (list, tuple, dict)):
            others += len(v)
        elif isinstance(v, Base):
            others += 10 if isinstance(v, Derived) else 7
        elif v is None:
            others += 1000
        else:
            others -= 1
    return ints, floats, strs, others


def type_dispatch(values):
    total = 0
    names = []
    for v in values:
        t = type(v)
        if t is int:
            total += v
        elif t is float:
            total += int(v)
        elif type(v) == str:  # noqa: E721  (== on classes: the comparison as users write it)
            names.append(v)
        else:
            names.append(t.__name__)
    return total, names


def abc_checks(values):
    count = 0
    for v in values:
        if isinstance(v, numbers.Number):  # (an ABC: its metaclass's __instancecheck__, CPython's call)
            count += 1
    return count


def proxies(values):
    count = 0
    for v in values:
        if isinstance(v, Base):
            count += 1
    return count


def class_changes(objs, at):
    count = 0
    for i, o in enumerate(objs):
        if i == at:
            o.__class__ = Other
        if isinstance(o, Base):
            count += 1
        if type(o) is Other:
            count += 100
    return count


def rebinds_a_class(n):
    global Target
    count = 0
    for i in range(n):
        if i == n // 2:
            Target = str
        if isinstance(i, Target):
            count += 1
    Target = int
    return count


Target = int


MIXED = [3, 2.5, "abc", True, None, [1, 2], (1,), {"a": 1}, Base(), Derived(), Other(), MyInt(4), 2**70, -0.0]


def test_isinstance_over_mixed_values():
    jitted = check(dispatch, MIXED * 20, [1, 2.0, "x"] * 50, native=True)
    for f in (jitted, jitted.cpython_baseline):
        assert not jit_module.stats(f)["aborts_by_code"], jit_module.stats(f)["aborts"]


def test_type_of_values():
    check(type_dispatch, MIXED * 20, [1, 2.0, "x"] * 50, native=True)


def test_abstract_base_classes_stay_calls():
    check(abc_checks, MIXED * 20, native=True)


def test_a_class_defining_dunder_class():
    check(proxies, [Proxy(), Base(), Other(), 1] * 30, [Other()] * 40 + [Proxy()] * 40, native=True)


def test_an_instance_whose_class_changes():
    check(class_changes, ([Derived() for _ in range(60)], 30), ([Base() for _ in range(60)], 59), native=True)


def test_a_class_rebound_mid_loop():
    check(rebinds_a_class, 10, 200, native=True)


def test_no_call_left_in_the_trace():
    jitted = jit(threshold=2, side_exit_threshold=2)(dispatch)
    values = [1, 2.0, "x"] * 300
    for _ in range(3):
        jitted(values)
    result, entries, exits = warm_call(jitted, values)
    assert result == dispatch(values)
    assert entries <= 2 and exits <= 2
    uops = jit_module.dump(jitted, "uops")
    assert "_CALL_GENERIC" not in uops and "_KEEP_ALIVE" not in uops
