"""`obj.name` of a property whose getter is a plain Python function: the getter's body is inlined into the trace
(jit.recorder.operator_methods.load_property), as a method call's is, instead of a generic attribute load that calls
it through the C-API. Checked against CPython (getters that compute, raise, count their calls, call other
properties; a property replaced on its class mid-loop; an instance attribute of the same name; subclasses
overriding it) and through jit.stats and the uop dump that the getter was inlined."""

import functools

from helpers import check, warm_call

import jit as jit_module
from jit import jit


class Celsius:
    __slots__ = ("c",)

    def __init__(self, c):
        self.c = c

    @property
    def fahrenheit(self):
        return self.c * 9 / 5 + 32

    @property
    def kelvin(self):
        return self.c + 273.15

    @property
    def summary(self):  # (a property calling properties)
        return self.fahrenheit - self.kelvin


class Account:
    def __init__(self, balance):
        self.balance = balance
        self.reads = 0

    @property
    def checked(self):
        if self.balance < 0:
            raise ValueError(f"overdrawn: {self.balance}")
        return self.balance

    @property
    def counted(self):  # (a getter with an effect)
        self.reads += 1
        return self.balance

    @property
    def looping(self):  # (a loop: never inlined)
        total = 0
        for k in range(3):
            total += self.balance + k
        return total

    @functools.cached_property
    def cached(self):
        return self.balance * 2


class Shadowed(Account):
    checked = 7  # (a class attribute over the base's property)


def temperatures(n):
    items = [Celsius(i % 40 - 10) for i in range(n)]
    total = 0.0
    for t in items:
        total += t.fahrenheit + t.summary
    return total


def balances(accounts):
    total = 0
    for a in accounts:
        total += a.checked
    return total


def counted_reads(n):
    a = Account(5)
    total = 0
    for i in range(n):
        total += a.counted + i
    return total, a.reads


def looping_and_cached(n):
    items = [Account(i) for i in range(n)]
    total = 0
    for a in items:
        total += a.looping + a.cached
    return total


def replaced_midway(n):
    items = [Celsius(i % 7) for i in range(n)]
    total = 0.0
    for i, t in enumerate(items):
        if i == n // 2:
            Celsius.kelvin = property(_minus_one)
        total += t.kelvin
    Celsius.kelvin = _KELVIN
    return total


_KELVIN = Celsius.kelvin


def _minus_one(self):
    return -1.0


def instance_attribute_ignored(n):
    a = Account(3)
    a.__dict__["checked"] = 100  # (a property is a data descriptor: the class's wins)
    total = 0
    for i in range(n):
        total += a.checked
    return total


def test_getters_computing():
    jitted = check(temperatures, 0, 5, 200, native=True)
    for f in (jitted, jitted.cpython_baseline):
        assert not jit_module.stats(f)["aborts_by_code"], jit_module.stats(f)["aborts"]


def test_getter_raising_in_the_loop():
    accounts = [Account(i) for i in range(50)]
    check(balances, accounts, accounts[:30] + [Account(-2)] + accounts, native=True)


def test_subclass_overriding_with_an_attribute():
    mixed = [Account(1), Shadowed(2)] * 30
    check(balances, mixed, [Shadowed(i) for i in range(40)] + [Account(3)] * 40, native=True)


def test_getter_with_an_effect():
    check(counted_reads, 0, 7, 100, native=True)


def test_getter_not_inlined_and_cached_property():
    check(looping_and_cached, 0, 50, native=True)


def test_property_replaced_on_the_class():
    check(replaced_midway, 10, 100, native=True)


def test_instance_attribute_of_the_same_name():
    check(instance_attribute_ignored, 0, 60, native=True)


def test_getter_inlined():
    jitted = jit(threshold=2, side_exit_threshold=2)(temperatures)
    for _ in range(3):
        jitted(200)
    result, entries, exits = warm_call(jitted, 200)
    assert result == temperatures(200)
    assert entries == 1 and exits <= 1
    uops = jit_module.dump(jitted, "uops")
    assert "_LOAD_ATTR_GENERIC" not in uops and "_CALL_GENERIC" not in uops
    assert "Celsius.fahrenheit" in jit_module.explain(jitted)
