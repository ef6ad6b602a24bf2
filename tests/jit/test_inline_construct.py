"""Instances made in a loop (`Vec(x, y)`): where the class is an ordinary one whose instances object.__new__ makes,
with a plain Python ``__init__`` and no ``__del__`` (``jit.instances.find_constructor``), native code makes the
instance through the class's tp_new (``_NEW_INSTANCE``) and the recorder inlines ``__init__`` on it. Its stores
into the new instance, which nothing else holds yet, are made where they are (``_STORE_ATTR_FRESH``): an exit
after them makes the call again, and the instance native code made is released. Every other class (a
``__new__``, a ``__del__``, a property set in ``__init__``, ``super().__init__``) is called generically. Every
result, exception and reference count is CPython's."""

from __future__ import annotations

import gc
import sys

import pytest
from helpers import check, define

import jit as jit_module
from jit import instances, jit

SOURCE = """
import dataclasses

@dataclasses.dataclass
class Point:
    x: float
    y: float = 0.0
    label: str = "p"

@dataclasses.dataclass(slots=True)
class SlottedPoint:
    x: int
    y: int = 2

@dataclasses.dataclass
class WithFactory:
    x: int
    items: list = dataclasses.field(default_factory=list)

@dataclasses.dataclass
class WithPostInit:
    x: int
    def __post_init__(self):
        self.x *= 2

@dataclasses.dataclass(frozen=True)
class Frozen:
    x: int

@dataclasses.dataclass
class KeywordOnly:
    x: int
    y: int = dataclasses.field(default=1, kw_only=True)

class Vec:
    def __init__(self, x, y=0.0):
        self.x = x
        self.y = y

    def add(self, o):
        return Vec(self.x + o.x, self.y + o.y)

    def scale(self, k):
        return Vec(self.x * k, self.y * k)

class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a = a
        self.b = b

class Checked:
    def __init__(self, v, d):
        self.v = v
        self.r = 100 // d
        self.v = v + 1

class Holder:
    kind = "holder"

    def __init__(self, n, items):
        self.items = items
        self.n = n
        self.count = 0
        self.count += n % 3

class Returns:
    def __init__(self, v):
        self.v = v
        return v if v > 5 else None

class Child(Vec):
    pass

class Super(Vec):
    def __init__(self, x):
        super().__init__(x, x)

class WithNew:
    def __new__(cls, v):
        obj = super().__new__(cls)
        obj.tag = "new"
        return obj

    def __init__(self, v):
        self.v = v

class Prop:
    def __init__(self, v):
        self.v = v

    @property
    def v(self):
        return self._v * 2

    @v.setter
    def v(self, value):
        self._v = value

def walk(n):
    p = Vec(0.0, 0.0)
    step = Vec(0.5, -0.25)
    total = 0.0
    for i in range(n):
        p = p.add(step.scale(1 + (i % 3)))
        total += p.x - p.y
    return total, p.x, p.y

def points(n):
    pts = []
    for i in range(n):
        pts.append(Vec(i, y=i * 2))
    return [(p.x, p.y) for p in pts[-3:]], len(pts)

def slotted(n):
    t = 0
    for i in range(n):
        s = Slotted(i, -i)
        t += s.a * 3 + s.b
    return t

def checked(n, at):
    t = 0
    for i in range(n):
        c = Checked(i, i - at)
        t += c.v + c.r
    return t

def holders(n):
    t = 0
    acc = []
    for i in range(n):
        h = Holder(i, acc)
        h.items.append(i)
        t += h.n + h.count + len(h.items) + len(h.kind)
    return t, acc[-3:]

def dataclasses_made(n):
    t = 0.0
    for i in range(n):
        p = Point(i, y=i * 0.5)
        q = SlottedPoint(i)
        t += p.x + p.y + len(p.label) + q.x * q.y
    return t, p.label

def dataclasses_left_generic(n):
    t = 0
    for i in range(n):
        t += WithFactory(i).x + WithPostInit(i).x + Frozen(i).x + KeywordOnly(i, y=2).y
    return t

def discarded(n, items):
    t = 0
    for i in range(n):
        t += Holder(i, items).n
    return t

class Stack:
    def __init__(self, first):
        self.items = [first]
        self.size = 1

    def push(self, v):
        self.items.append(v)
        self.size += 1

def make_pair(i):
    return [i, i + 1]

def make_tuple(i):
    return (i, -i, 2.5)

def built(n):
    t = 0
    for i in range(n):
        p = make_pair(i)
        q = make_tuple(i)
        st = Stack(i)
        st.push(q[1])
        t += p[0] * p[1] + q[1] + len(st.items) + st.size + st.items[-1]
    return t, st.items

def pair_of(v):
    return [v, (v, v)]

def wrapped(n, v):
    t = 0
    for i in range(n):
        t += len(pair_of(v)) + len(Stack(v).items)
    return t

def returns(n):
    t = 0
    for i in range(n):
        t += Returns(i % 8).v
    return t

def child(n):
    t = 0.0
    for i in range(n):
        t += Child(i, 1.5).y + Super(i).x
    return t

def others(n):
    t = 0
    for i in range(n):
        t += WithNew(i).v + Prop(i).v
    return t

class Counted:
    made = 0

    def __init__(self, v):
        self.v = v

def counted(n):
    Counted.made = 0
    t = 0
    for i in range(n):
        Counted.made += 1
        t += Counted(i).v
    return t, Counted.made

def rebound(n):
    Vec.bonus = 0.0
    t = 0.0
    for i in range(n):
        if i == n // 2:
            Vec.bonus = 1.0
        t += Vec(i).x + Vec.bonus
    return t
"""


def program(name: str):
    namespace: dict = {}
    return define(SOURCE, name, namespace), namespace


def _inlined(f, name: str) -> bool:
    text = jit_module.explain(f)
    return "with the calls of" in text and name in text.split("with the calls of", 1)[1].split("inlined")[0]


@pytest.fixture(autouse=True)
def _new_instances_available():
    if not instances.NEW_OK:
        pytest.skip("this CPython's type layout is not the one native instance creation reads")


def test_instances_made_in_a_loop_are_made_natively():
    f, _ = program("walk")
    jitted = check(f, (3000,), (5,), native=True)
    assert _inlined(jitted, "Vec.__init__"), jit_module.explain(jitted)
    uops = jit_module.dump(jitted, "uops")
    assert "_NEW_INSTANCE" in uops and "_STORE_ATTR_FRESH" in uops and "_CALL_GENERIC" not in uops, uops


def test_instances_kept_in_a_list_and_keywords():
    f, _ = program("points")
    jitted = check(f, (3000,), (3,), native=True)
    assert _inlined(jitted, "Vec.__init__"), jit_module.explain(jitted)


def test_slotted_instances():
    f, _ = program("slotted")
    jitted = check(f, (3000,), native=True)
    assert "_NEW_INSTANCE" in jit_module.dump(jitted, "uops")


def test_an_exit_after_the_new_instances_stores_makes_the_call_again():
    # (100 // d raises ZeroDivisionError at i == at, after self.v is stored: CPython makes that call)
    f, _ = program("checked")
    jitted = check(f, (3000, 5000), (3000, 2000), (50, -1), native=True)
    assert _inlined(jitted, "Checked.__init__"), jit_module.explain(jitted)


def test_init_reading_back_what_it_stored():
    f, _ = program("holders")
    jitted = check(f, (3000,), native=True)
    assert _inlined(jitted, "Holder.__init__"), jit_module.explain(jitted)
    g = jit(program("discarded")[0])
    items = [3.5]
    for _ in range(3):
        g(2000, items)
    held = sys.getrefcount(items)
    for _ in range(3):
        assert g(2000, items) == 2000 * 1999 // 2
    assert sys.getrefcount(items) == held
    assert jit_module.stats(g)["native_iterations"] > 5000


def test_lists_and_tuples_built_in_inlined_calls():
    f, _ = program("built")
    jitted = check(f, (3000,), (4,), native=True)
    text = jit_module.explain(jitted)
    for name in ("make_pair", "make_tuple", "Stack.__init__", "Stack.push"):
        assert _inlined(jitted, name), text
    assert "_CALL_GENERIC" not in jit_module.dump(jitted, "uops")


def test_lists_built_in_inlined_calls_are_freed():
    g = jit(program("wrapped")[0])
    v = float("2.5")
    for _ in range(3):
        g(2000, v)
    held = sys.getrefcount(v)
    for _ in range(3):
        assert g(2000, v) == 2000 * 3
    assert sys.getrefcount(v) == held
    assert jit_module.stats(g)["native_iterations"] > 5000


def test_dataclasses_generated_init_is_inlined_through_a_stand_in():
    f, _ = program("dataclasses_made")
    jitted = check(f, (3000,), (4,), native=True)
    assert _inlined(jitted, "Point.__init__") and _inlined(jitted, "SlottedPoint.__init__"), jit_module.explain(jitted)
    assert "_CALL_GENERIC" not in jit_module.dump(jitted, "uops")


def test_an_init_assigned_to_a_dataclass_later_replaces_its_stand_in():
    # (the stand-in of the generated __init__ is made again for the class's __init__ of the moment)
    f, namespace = program("dataclasses_made")
    check(f, (3000,), native=True)
    point = namespace["Point"]

    def doubled(self, x, y=0.0, label="p"):
        self.x = x * 2
        self.y = y
        self.label = label

    point.__init__ = doubled
    g, _ = program("dataclasses_made")
    g.__globals__["Point"] = point
    jitted = check(g, (3000,), native=True)
    assert _inlined(jitted, "doubled"), jit_module.explain(jitted)


def test_dataclasses_beyond_plain_fields_are_made_generically():
    f, _ = program("dataclasses_left_generic")
    jitted = check(f, (3000,), native=True)
    assert not _inlined(jitted, "WithFactory.__init__"), jit_module.explain(jitted)


def test_init_returning_a_value_raises_cpythons_type_error():
    f, _ = program("returns")
    check(f, (3000,), (5,))


def test_subclasses_and_classes_left_generic():
    """A subclass whose __init__ calls its base's by `super().__init__(...)` is made natively too, both inlined
    (``jit.recorder.super_calls``)."""
    f, _ = program("child")
    jitted = check(f, (3000,), native=True)
    assert _inlined(jitted, "Vec.__init__"), jit_module.explain(jitted)
    assert _inlined(jitted, "Super.__init__"), jit_module.explain(jitted)
    g, _ = program("others")
    check(g, (3000,), native=True)


def test_a_class_changed_mid_loop():
    f, _ = program("rebound")
    check(f, (3000,), (7,), native=True)


def test_a_class_changed_at_every_iteration_is_not_specialized_on():
    # (its version guard fails at every iteration: after two trees invalidated so, the class is not specialized on,
    # Monitor.unstable_classes; Money in test_fstrings changes while recorded: CLASS_CHANGED at once)
    f, _ = program("counted")
    jitted = check(f, (3000,), (5,), native=True)
    stats = jit_module.stats(jitted)
    assert stats["invalidated_trees"] <= 2 and stats["native_iterations"] > 4000, stats


def test_instances_made_natively_are_freed():
    f, namespace = program("walk")
    jitted = jit(f)
    for _ in range(3):
        jitted(2000)
    gc.collect()
    vec = namespace["Vec"]
    before = sum(type(o) is vec for o in gc.get_objects())
    refs = sys.getrefcount(vec)
    for _ in range(5):
        jitted(2000)
    gc.collect()
    assert sum(type(o) is vec for o in gc.get_objects()) == before
    assert sys.getrefcount(vec) == refs
    assert jit_module.stats(jitted)["native_iterations"] > 10_000
