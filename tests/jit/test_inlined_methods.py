"""Method calls `obj.m(...)` inlined (jit.instances.find_method, jit.recorder.calls._method_call): the body of a
plain Python method of the instance's class is recorded into the trace, guarded by the class, its version and
the instance's shared keys (no instance attribute hides the method). Each function checked against CPython
(values, types, exceptions and their messages) with the method, the class or the instance changed in the middle
of a loop, and through jit.stats and the uop listing that the loop ran natively with the method inlined."""

import math
import sys

from helpers import check

import jit as jit_module
from jit import jit

N = 300  # (iterations: the loops get hot, and a change at k = N // 2 lands in native code)


def _listing(jitted):
    return "\n".join(jit_module.dump(f, "uops") for f in (jitted, jitted.cpython_baseline))


def _inlined(jitted, name, generic_too=False):
    listing = _listing(jitted)
    assert "_GUARD_NO_INSTANCE_ATTR" in listing and f".{name} v" in listing
    if not generic_too:
        assert f"operand=('{name}',)" not in listing  # (no generic call of it)


class Vec:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def norm(self):
        return math.sqrt(self.x * self.x + self.y * self.y)

    def scaled_sum(self, k=2.0):
        return (self.x + self.y) * k

    def ratio(self):
        return self.x // self.y


class Vec3(Vec):
    def norm(self):
        return abs(self.x) + abs(self.y)


class Slotted:
    __slots__ = ("a",)

    def __init__(self, a):
        self.a = a

    def twice(self):
        return self.a * 2


def norms(n):
    vs = [Vec(i * 0.5, i - 3.0) for i in range(7)]
    total = 0.0
    for i in range(n):
        total += vs[i % 7].norm() + vs[i % 5].scaled_sum()
    return total


def test_methods_are_inlined():
    jitted = check(norms, 0, 3, N, native=True)
    _inlined(jitted, "norm")
    _inlined(jitted, "scaled_sum")


def slotted(n):
    s = Slotted(3)
    t = 0
    for i in range(n):
        t += s.twice() + i
    return t


def test_a_method_of_a_slotted_class():
    jitted = check(slotted, N, native=True)
    _inlined(jitted, "twice")


def minus_one():
    return -1.0


def hidden_by_an_instance_attribute(n):
    v = Vec(3.0, 4.0)
    total = 0.0
    for i in range(n):
        if i == n // 2:
            v.norm = minus_one  # (an instance attribute now wins over the class's method)
        total += v.norm()
    return total


def test_an_instance_attribute_hiding_the_method_mid_loop():
    check(hidden_by_an_instance_attribute, N, native=True)


def other_attribute_added(n):
    v = Vec(3.0, 4.0)
    total = 0.0
    for i in range(n):
        if i == n // 2:
            v.z = 1.0  # (the shared keys grow: the guard leaves once, the method is the same)
        total += v.norm()
    return total


def test_another_attribute_added_mid_loop():
    check(other_attribute_added, N, native=True)


def five(self):
    return 5.0


def replaced_on_the_class(n):
    v = Vec(3.0, 4.0)
    total = 0.0
    saved = Vec.norm
    for i in range(n):
        if i == n // 2:
            Vec.norm = five
        total += v.norm()
    Vec.norm = saved
    return total


def test_the_method_replaced_on_the_class_mid_loop():
    check(replaced_on_the_class, N, native=True)


def mixed_classes(n):
    vs = [Vec(1.0, 2.0), Vec3(-1.0, 2.5), Vec(0.5, 0.5)]
    total = 0.0
    for i in range(n):
        total += vs[(i // 11) % 3].norm()
    return total


def test_a_subclass_overriding_the_method():
    check(mixed_classes, N, native=True)


def class_assigned(n):
    v = Vec(3.0, 4.0)
    total = 0.0
    for i in range(n):
        if i == n // 2:
            v.__class__ = Vec3
        total += v.norm()
    return total


def test_instance_class_assigned_mid_loop():
    check(class_assigned, N, native=True)


def dict_made(n):
    v = Vec(3.0, 4.0)
    total = 0.0
    for i in range(n):
        if i == n // 2:
            v.__dict__["norm"] = minus_one  # (a real dict, holding the name)
        total += v.norm()
    return total


def test_instance_dict_made_mid_loop():
    check(dict_made, N, native=True)


def raises_inside(n):
    vs = [Vec(7, 2), Vec(9, 4), Vec(5, 0)]
    total = 0
    for i in range(n):
        total += vs[0 if i < n // 2 else i % 3].ratio()  # (ZeroDivisionError inside the method)
    return total


def test_an_exception_inside_the_method():
    check(raises_inside, N, native=True)


def int_overflow(n):
    v = Vec(2**62, 2**61)
    total = 0
    for i in range(n):
        total += v.scaled_sum(i)  # (past 64 bits: an int object)
    return total


def test_ints_past_64_bits_in_the_method():
    check(int_overflow, N, native=True)


class Counter:
    def __init__(self):
        self.n = 0
        self.calls = 0
        self.name = "none"
        self.items = []
        self.total = 0.0
        self.squares = 0.0
        self.counts = {}

    def bump(self, k):
        self.n += k  # (a store, then a read of what it stored: the value stored, no load)
        return self.n

    def add(self, k):
        self.n += k

    def count(self, k):
        self.n += k
        self.calls += 1  # (a second add, whose overflow check comes before either store)

    def named(self, name):
        self.name = name
        self.calls += 1

    def transfer(self, other, k):
        self.n += k
        other.n -= k  # (other may be self: a read of .n there would miss the store, made at the return)

    def set_both(self, other, k):
        self.n = k
        other.n = k + 1  # (other may be self: then the store after this one stands)
        self.n = k + 2

    def set_then_read(self, other, k):
        self.n = k
        other.n = k + 1
        return self.n  # (k + 1 where other is self: not the value self.n was given)

    def relabel(self, other, text, label):
        self.name = text  # (a str replaced: stored at the return)
        other.name = label  # (a list replaced, on another object, which may be self: stored where it is)

    def hold(self, other, items):
        other.n = 5  # (other may be self: the list stored after it stands, stored where it is)
        self.n = items

    def tally(self, word):
        self.counts[word] = self.counts.get(word, 0) + 1
        self.calls += 1

    def tally_both(self, other, word):
        self.counts[word] = 1
        other.counts[word] = 2  # (other may be self: then this store stands)

    def tally_then_read(self, word):
        self.counts[word] = self.counts.get(word, 0) + 1
        return self.counts[word]  # (a read of a dict after a store into one: not inlined)

    def moments(self, x):
        self.total += x
        self.squares += x * x

    def refill(self, items):
        self.items = items  # (a list replaced, held elsewhere: stored where it is, the one change the call makes)

    def checked(self, k, limit):
        self.n += k
        if k == limit:
            raise ValueError(k, self.n, self.calls)
        self.calls += 1


def mutating_method(n):
    c = Counter()
    t = 0
    for i in range(n):
        t += c.bump(i & 3)
    return t, c.n


def adding_method(n):
    c = Counter()
    for i in range(n):
        c.add(i & 3)
        if i == n // 2:
            c.n = 2**63 - 10  # (the add overflows from here on: the inlined body leaves before its store)
    return c.n


def counting_method(n):
    c = Counter()
    for i in range(n):
        c.count(i)
        if i == n // 2:
            c.calls = 2**63 - 5  # (the second add overflows a few iterations on: the first store is not made)
    return c.n, c.calls


def naming_method(n):
    c = Counter()
    names = ["a", "b", "c"]
    for i in range(n):
        c.named(names[i % 3])
        if i == n // 2:
            del c.name  # (unset: the check leaves, the interpreter makes the call, which adds it back)
    return c.name, c.calls


def transferring(n, same):
    a, b = Counter(), Counter()
    for i in range(n):
        other = a if same or i % 7 == 0 else b
        a.transfer(other, i)
    return a.n, b.n


def setting_both(n, same):
    a, b = Counter(), Counter()
    pool = [a, a] if same else [a, b, b]
    for i in range(n):
        other = pool[i % len(pool)]  # (a value read from a list: the trace cannot tell it is a)
        a.set_both(other, i)
    return a.n, b.n


def setting_then_reading(n, same):
    a, b = Counter(), Counter()
    pool = [a, a] if same else [a, b, b]
    total = 0
    for i in range(n):
        other = pool[i % len(pool)]
        total += a.set_then_read(other, i)
    return total, a.n, b.n


def relabeling(n):
    a, b = Counter(), Counter()
    shared = ["a label"]
    b.name = shared
    pool = [b, b, a]
    for i in range(n):
        other = pool[i % 3]
        text = "even" if i % 2 else "odd"
        a.relabel(other, text, shared)
        b.name = shared
    return a.name, b.name


def holding(n):
    a, b = Counter(), Counter()
    pool = [b, b, a]
    lists = [[k] for k in range(4)]
    for i in range(n):
        other = pool[i % 3]
        a.hold(other, lists[i % 4])
        a.n = i  # (a number again: what other.n = 5 replaces next time frees plainly)
    return a.n, b.n


def tallying(n):
    c = Counter()
    words = ["x", "y", "z", "x"]
    for i in range(n):
        c.tally(words[i % 4])
        if i == n // 2:
            c.counts["y"] = 2**63 - 2  # (the next add overflows: the exit before the stores calls it again)
    return sorted(c.counts.items()), c.calls


def tallying_both(n):
    a, b = Counter(), Counter()
    pool = [b, a, b]
    for i in range(n):
        other = pool[i % 3]
        word = "w" if i % 2 else "v"
        a.tally_both(other, word)
    return sorted(a.counts.items()), sorted(b.counts.items())


def tallying_then_reading(n):
    c = Counter()
    total = 0
    words = ["a", "b", "c"]
    for i in range(n):
        word = words[i % 3]
        total += c.tally_then_read(word)
    return total


def float_moments(values):
    c = Counter()
    for x in values:
        c.moments(x)
    return c.total, c.squares


def refilling(n):
    c = Counter()
    pool = [[k] for k in range(5)]
    for i in range(n):
        c.refill(pool[i % 5])
    return c.items


def raising_method(n, limit):
    c = Counter()
    for i in range(n):
        c.checked(i, limit)
    return c.n, c.calls


def _roots(jitted):
    return [text for text in _listing(jitted).split("# tj_") if ": root trace" in text.partition("\n")[0]]


def test_a_method_that_stores_last_is_inlined():
    """`self.n += k` as a method's last statement: inlined, the store native; where the add overflows (past
    2**63), the exit before the store makes the call again, exactly once."""
    jitted = check(adding_method, N, native=True)
    roots = _roots(jitted)
    assert roots and all("_STORE_ATTR_INSTANCE" in root and "operand=('add',)" not in root for root in roots), roots


def test_a_method_storing_two_attributes_is_inlined():
    """Both adds and their checks first, then both stores (at the call's return): where the second add
    overflows, neither store is made before the interpreter makes the call."""
    jitted = check(counting_method, N, native=True)
    roots = _roots(jitted)
    assert roots and all(root.count("_STORE_ATTR_INSTANCE_CHECKED") == 2 for root in roots), roots
    assert not any("operand=('count',)" in root for root in roots), roots


def test_a_method_reading_what_it_stored():
    jitted = check(mutating_method, N, native=True)
    assert not any("operand=('bump',)" in root for root in _roots(jitted))


def test_strs_stored_and_an_attribute_deleted_mid_loop():
    jitted = check(naming_method, N, native=True)
    assert any("_STORE_ATTR_INSTANCE_CHECKED" in root for root in _roots(jitted))


def test_a_store_then_a_read_of_a_possible_alias():
    check(transferring, (N, True), (N, False), native=True)


def test_stores_into_objects_that_may_be_one():
    jitted = check(setting_both, (N, True), (N, False), native=True)
    assert any("_STORE_ATTR_INSTANCE_CHECKED" in root for root in _roots(jitted))
    check(setting_then_reading, (N, True), (N, False), native=True)
    check(relabeling, N, native=True)
    check(holding, N, native=True)


def test_float_attributes_with_special_values():
    special = [0.5, -0.0, 1e308, 1e308, float("inf"), float("-inf"), float("nan"), -2.5]
    jitted = check(float_moments, [1.5, -0.25] * 100, [1.5] * 150 + special * 20, [-0.0] * 200, native=True)
    assert any("_STORE_ATTR_INSTANCE_CHECKED" in root for root in _roots(jitted))


def test_a_method_counting_into_a_dict_is_inlined():
    jitted = check(tallying, N, native=True)
    roots = _roots(jitted)
    assert roots and all("_STORE_SUBSCR_DICT_STR_CHECKED" in root for root in roots), roots
    assert not any("operand=('tally',)" in root for root in roots)


def test_dict_stores_into_dicts_that_may_be_one_and_a_read_after_one():
    jitted = check(tallying_both, N, native=True)
    assert any("_STORE_SUBSCR_DICT_STR_CHECKED" in root for root in _roots(jitted))
    check(tallying_then_reading, N, native=True)


def test_a_method_replacing_a_list():
    jitted = check(refilling, N, native=True)
    assert not any("operand=('refill',)" in root for root in _roots(jitted))


def test_an_exception_after_a_store_in_the_method():
    check(raising_method, (N, N // 2), (N, 3), (N, N + 1), native=True)


def test_inlined_stores_keep_reference_counts():
    names = ["first", "second", "third"]

    def naming(c, n, names):
        for i in range(n):
            c.named(names[i % 3])

    f = jit(threshold=2)(naming)
    c = Counter()
    f(c, 1000, names)
    before = [sys.getrefcount(name) for name in names]
    blocks = sys.getallocatedblocks()
    f(c, 100_000, names)
    assert [sys.getrefcount(name) for name in names] == before
    assert sys.getallocatedblocks() - blocks < 100  # (no int object leaked per iteration)
    assert (c.name, c.calls) == (names[(100_000 - 1) % 3], 101_000)
    assert jit_module.stats(f)["native_iterations"] >= 100_000
    assert "_STORE_ATTR_INSTANCE_CHECKED" in jit_module.dump(f, "uops")
