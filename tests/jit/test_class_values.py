"""A class attribute holding a number, str or None read through an instance (`self.fee`, `obj.LIMIT`) is a constant
of the trace (``jit.instances.find_class_value``): guarded by the class's version and, as for an inlined method,
by the instance holding no attribute of that name (``_GUARD_NO_INSTANCE_ATTR``), instead of a generic load, a
barrier that kept a method reading it from being inlined. An instance attribute of that name set later, or the
class attribute rebound, leaves there; every result is CPython's."""

from __future__ import annotations

from helpers import check, define

import jit as jit_module

SOURCE = """
class Account:
    fee = 2
    name = "acct"
    rate = 0.5
    big = 2**70
    nothing = None

    def __init__(self, balance):
        self.balance = balance

    def withdraw(self, amount):
        if amount + self.fee > self.balance:
            return False
        self.balance -= amount + self.fee
        return True

class Slotted:
    __slots__ = ("v",)
    scale = 3

    def __init__(self, v):
        self.v = v

def fees(n):
    a = Account(10**9)
    t = 0.0
    for i in range(n):
        t += a.fee + len(a.name) + (a.nothing is None) + a.rate * 2
        t += a.withdraw(i % 50)
    return t, a.balance

def shadowed(n):
    a = Account(5)
    t = 0
    for i in range(n):
        if i == n // 2:
            a.fee = 100
        t += a.fee
    return t

def class_changed(n):
    Account.fee = 2
    a = Account(5)
    t = 0
    for i in range(n):
        if i == n // 2:
            Account.fee = 7
        t += a.fee
    Account.fee = 2
    return t

def big_and_slotted(n):
    t = 0
    for i in range(n):
        t += Account(i).big % 1000 + Slotted(i).scale * Slotted(i).v
    return t
"""


def program(name: str):
    return define(SOURCE, name, {})


def test_class_values_read_through_instances_are_constants():
    jitted = check(program("fees"), (3000,), (7,), native=True)
    uops = jit_module.dump(jitted, "uops")
    assert "_LOAD_ATTR_GENERIC" not in uops and "_GUARD_NO_INSTANCE_ATTR" in uops, uops
    assert "Account.withdraw" in jit_module.explain(jitted).split("inlined")[0], jit_module.explain(jitted)


def test_an_instance_attribute_of_that_name_set_later():
    check(program("shadowed"), (3000,), (9,), native=True)


def test_the_class_attribute_rebound_mid_loop():
    check(program("class_changed"), (3000,), (9,), native=True)


def test_big_ints_and_slotted_classes():
    jitted = check(program("big_and_slotted"), (3000,), native=True)
    assert "_LOAD_ATTR_GENERIC" not in jit_module.dump(jitted, "uops")
