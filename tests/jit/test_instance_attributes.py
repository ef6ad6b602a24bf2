"""Attribute loads of plain instances read natively (jit.instances, jit.recorder.attributes,
codegen.lower.attributes): each function checked against CPython (values, types, exceptions and their
messages) with the class, the instance or its dict changed in the middle of a loop, and through jit.stats and
the uop listing that the loop ran natively with the specialized load (no barrier)."""

import collections
import dataclasses
import sys

import pytest
from helpers import check, comprehension_lines

import jit as jit_module
from jit import instances

N = 300  # (iterations: the loops get hot, and a change at k = N // 2 lands in native code)


def _uops(jitted):
    return "\n".join(jit_module.dump(f, "uops") for f in (jitted, jitted.cpython_baseline))


def _specialized(jitted, generic_too=False):
    listing = _uops(jitted)
    assert "_LOAD_ATTR_INSTANCE" in listing
    if not generic_too:
        assert "_LOAD_ATTR_GENERIC" not in listing


def test_layouts_understood_on_supported_versions():
    assert instances.LAYOUT_OK == ((3, 11) <= sys.version_info[:2] <= (3, 13))


@dataclasses.dataclass
class Item:
    name: str
    price: float
    qty: int = 1


def invoice(n):
    items = [Item(f"item{i}", 1.5 + i % 10, i % 4 + 1) for i in range(20)]
    total = 0.0
    count = 0
    for k in range(n):
        it = items[k % 20]
        if it.qty > 2 and it.name.endswith("3"):
            total += it.price * it.qty * 0.9
        else:
            total += it.price * it.qty
        count += it.qty
    return total, count


def test_dataclass_fields():
    jitted = check(invoice, N, native=True)
    _specialized(jitted)


class Holder:
    label = "class"

    def __init__(self, value):
        self.value = value
        self.label = "own"
        self.other = None


def reads_deleted(n):
    h = Holder(1.5)
    total = 0.0
    for i in range(n):
        if i == n // 2:
            delattr(h, "value")
        total += h.value
    return total


def test_attribute_deleted_mid_loop_raises_attribute_error():
    jitted = check(reads_deleted, N, native=True)
    _specialized(jitted, generic_too=True)


def reads_shadowed(n):
    h = Holder(2)
    seen = []
    for i in range(n):
        if i == n // 2:
            delattr(h, "label")  # (the class attribute shows through)
        seen.append(h.label)
    return seen.count("own"), seen.count("class"), seen[-1]


def test_deleted_instance_attribute_shows_the_class_attribute():
    check(reads_shadowed, N, native=True)


def minus_hundred(self):
    return -100


def gains_property(n):
    h = Holder(3)
    total = 0
    for i in range(n):
        if i == n // 2:
            Holder.value = property(minus_hundred)  # (a data descriptor: it wins over the instance's value)
        total += h.value
    delattr(Holder, "value")
    return total


def test_property_added_to_the_class_mid_loop():
    check(gains_property, N, native=True)


def class_attribute_rebound(n):
    h = Holder(4)
    total = 0
    for i in range(n):
        if i == n // 2:
            Holder.scale = i  # (the class changes: its version tag too)
        total += h.value
    delattr(Holder, "scale")
    return total


def test_class_attribute_rebound_mid_loop():
    check(class_attribute_rebound, N, native=True)


def dict_replaced(n):
    h = Holder(5)
    total = 0
    for i in range(n):
        if i == n // 3:
            h.__dict__ = {"value": 7, "label": "new"}
        if i == 2 * n // 3:
            h.__dict__["value"] = 11
        total += h.value
    return total, h.label


def test_instance_dict_replaced_mid_loop():
    check(dict_replaced, N, native=True)


def dict_read(n):
    h = Holder(1)
    total = 0
    for i in range(n):
        if i == n // 2:
            h.__dict__["value"] = 2  # (the instance gets a real dict)
        total += h.value
    return total


def test_instance_dict_made_mid_loop():
    check(dict_read, N, native=True)


class Sub(Holder):
    pass


class Other:
    def __init__(self, value):
        self.value = value


def mixed_classes(n):
    objs = [Holder(1), Sub(2), Holder(3.5), Other("x"), Sub(None)]
    out = []
    for i in range(n):
        out.append(objs[(i // 7) % 5].value)
    return out


def test_subclass_and_other_classes_mixed_in():
    check(mixed_classes, N, native=True)


def class_reassigned(n):
    h = Holder(1)
    total = 0
    for i in range(n):
        if i == n // 2:
            h.__class__ = Sub
        total += h.value
    return total, type(h).__name__


def test_instance_class_assigned_mid_loop():
    check(class_reassigned, N, native=True)


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a):
        self.a = a


@dataclasses.dataclass(slots=True)
class SlotItem:
    price: float
    qty: int


def reads_slots(n):
    s = Slotted(2.5)
    items = [SlotItem(0.5 * i, i) for i in range(10)]
    total = 0.0
    for i in range(n):
        it = items[i % 10]
        total += s.a + it.price * it.qty
        if i == n // 2:
            delattr(s, "a")  # (the member unset: AttributeError at the next read)
    return total


def test_slots_and_slotted_dataclass():
    jitted = check(reads_slots, N, native=True)
    _specialized(jitted, generic_too=True)
    assert "slot +" in _uops(jitted)


def reads_unset_slot(n):
    s = Slotted(1)
    total = 0
    for i in range(n):
        total += s.a
        if i == n // 2:
            s.b = 0
            total += s.b
    return total


def test_slot_set_mid_loop():
    check(reads_unset_slot, N, native=True)


class WithGetattr:
    def __init__(self):
        self.x = 1

    def __getattr__(self, name):
        return 42


class WithGetattribute:
    def __init__(self):
        self.x = 1

    def __getattribute__(self, name):
        return 7 if name == "x" else object.__getattribute__(self, name)


class WithPropertyBase:
    @property
    def x(self):
        return 3


class WithProperty(WithPropertyBase):
    pass


def hooks(n):
    a, b, c = WithGetattr(), WithGetattribute(), WithProperty()
    total = 0
    for i in range(n):
        total += a.x + a.y + b.x + c.x
    return total


def test_lookup_hooks_keep_the_generic_path():
    jitted = check(hooks, N, native=True)
    listing = _uops(jitted)
    assert "_LOAD_ATTR_GENERIC" in listing
    assert "_LOAD_ATTR_INSTANCE" not in listing  # (a class with __getattr__ of its own: left to CPython too)


class Box:
    def __init__(self, payload):
        self.payload = payload


def reads_objects(n):
    boxes = [Box([i]) for i in range(5)] + [Box("s"), Box((1, 2)), Box(10**30), Box(-0.0), Box(None)]
    out = 0
    parts = []
    for i in range(n):
        p = boxes[i % 10].payload
        if isinstance(p, list):
            out += p[0]
        elif p is None:
            out -= 1
        else:
            parts.append(repr(p))
    return out, parts[:8], len(parts)


def test_values_of_every_kind():
    check(reads_objects, N, native=True)


PAYLOAD = [1.25]
TEXT = "some text"
BOXES = [Box(PAYLOAD) for _ in range(3)] + [Box(TEXT)]  # (not an argument: check() copies those, and a copy's
# instance dict is a real dict in 3.11 and 3.12, read through the generic path)


def count_payloads(n):
    found = 0
    for k in range(n):
        for b in BOXES:
            p = b.payload
            if isinstance(p, list):
                found += len(p)
    return found


def test_reference_counts_unchanged():
    before = sys.getrefcount(PAYLOAD), sys.getrefcount(TEXT), [sys.getrefcount(b) for b in BOXES]
    jitted = check(count_payloads, N, native=True)
    _specialized(jitted)
    after = sys.getrefcount(PAYLOAD), sys.getrefcount(TEXT), [sys.getrefcount(b) for b in BOXES]
    assert before == after


@pytest.mark.parametrize("value", [1, 2.5, "s", None, 2**70, True])
def test_types_of_values_kept(value):
    check(typed_reads, value, native=True)


def typed_reads(value):
    b = Box(value)
    out = []
    for i in range(N):
        out.append(b.payload)
    return [type(x).__name__ for x in out[:3]], out[-1]


# --- megamorphic sites (jit.recorder.recorder.MAX_SITE_CLASSES) ---------------------------------------------


def counts_on_a_class_of_its_own(n):
    box = type("Box", (), {})()  # (a new class object per call: a class guard from one call fails in the next)
    box.count = 0
    for i in range(n):
        box.count += i & 3
    return box.count


def test_a_class_made_per_call_makes_its_site_megamorphic():
    """Each call meets a new class at the same load: after MAX_SITE_CLASSES of them the site takes the generic
    path, and its tree is recorded anew with it, instead of a side trace (and a compilation) per call, chained
    behind each other up to the limit of side traces, then an exit per iteration."""
    from jit.recorder.recorder import MAX_SITE_CLASSES

    calls = 3 * MAX_SITE_CLASSES
    jitted = check(counts_on_a_class_of_its_own, *[N] * calls, native=True)
    for f in (jitted, jitted.cpython_baseline):
        stats = jit_module.stats(f)
        assert stats["traces_compiled"] <= MAX_SITE_CLASSES + 3, stats["traces_compiled"]
        assert stats["limits_hit"] == {}
        before = stats["exits_to_interpreter"], stats["traces_compiled"]
        for _ in range(3):
            assert f(N) == counts_on_a_class_of_its_own(N)
        after = jit_module.stats(f)
        assert (after["exits_to_interpreter"], after["traces_compiled"]) == (before[0] + 3, before[1])
        assert "_LOAD_ATTR_GENERIC" in jit_module.dump(f, "uops")


def truth_of_a_class_made_per_call(n):
    class Flag:
        def __init__(self, v):
            self.v = v

    flags = [Flag(i % 3) for i in range(10)]
    total = 0
    for k in range(n):
        f = flags[k % 10]
        if f:
            total += f.v
    return total


def fields_of_a_namedtuple_made_per_call(n):
    point = collections.namedtuple("point", "x y")
    points = [point(i, i + 1) for i in range(10)]
    total = 0
    for k in range(n):
        p = points[k % 10]
        total += p.x * p.y
    return total


@pytest.mark.parametrize("func", [truth_of_a_class_made_per_call, fields_of_a_namedtuple_made_per_call])
def test_a_class_made_anew_at_each_call_makes_its_sites_generic_at_once(func):
    """A class met where one of the same module and qualified name was met before (a class statement in the
    function, a namedtuple made at each call) makes the site megamorphic at once: the list item's class guard,
    the truth test's, the fields' loads take the generic path from the second or third call on, instead of a
    trace compiled at each of the first MAX_SITE_CLASSES calls (8 to 10 times slower than plain CPython each)."""
    jitted = jit_module.jit(threshold=2, side_exit_threshold=2)(func)
    compiled, loop_traces, invalidated = [], [], []
    for _ in range(8):
        assert jitted(N) == func(N)
        stats = jit_module.stats(jitted)
        compiled.append(stats["traces_compiled"])
        lines = comprehension_lines(jitted)
        loop_traces.append(sum(len(t["traces"]) for t in stats["trees"] if t["loop_line"] not in lines))
        invalidated.append(stats["invalidated_trees"])
    # the loop statement: nothing compiled nor invalidated from the third call on
    assert loop_traces[2:] == [loop_traces[2]] * 6 and invalidated[2:] == [invalidated[2]] * 6, (compiled, loop_traces)
    assert loop_traces[2] <= 3, (compiled, loop_traces)
    # the comprehension before it, handed over whole: its call of the class made per call is generic one call later
    # (hot at the first call, recorded at the second, counted again at the third), nothing compiled from the fifth on
    assert compiled[4:] == [compiled[4]] * 4, compiled
    assert jit_module.stats(jitted)["native_entries"] > 0


class Left:
    def __init__(self, x):
        self.x = x


class Right(Left):
    pass


class Middle(Left):
    pass


def sums_over_three_classes(n):
    items = [Left(1), Right(2), Middle(3)]
    total = 0
    for i in range(n):
        total += items[i % 3].x
    return total


def test_a_few_classes_at_one_site_stay_specialized():
    """Polymorphism below MAX_SITE_CLASSES: each class keeps its own specialized load."""
    jitted = check(sums_over_three_classes, N, native=True)
    _specialized(jitted)


# --- instances whose attributes a real dict holds (jit.instances.find_in_dict) -------------------------------


class Rec:
    kind = "rec"  # (a class attribute an instance's dict may shadow, or not)

    def __init__(self, x, y):
        self.x = x
        self.y = y


class Loose:
    def __init__(self, **fields):
        self.__dict__.update(fields)


def products(items):
    total = 0.0
    for it in items:
        total += it.x * it.y
    return total


def kinds(items):
    out = []
    for it in items:
        out.append(it.kind)
    return out


def changing(items, k):
    total = 0
    for i, it in enumerate(items):
        if i == k:
            del it.x  # (the dict loses it: the next read raises AttributeError)
        total += it.x
    return total


def property_added(items, k):
    total = 0
    for i, it in enumerate(items):
        if i == k:
            Rec.y = property(_thousand)  # (a data descriptor: the class decides from here on)
        total += it.y
    del Rec.y
    return total


def _thousand(self):
    return 1000


def _deep_copied(n):
    import copy

    return copy.deepcopy([Rec(i, i * 0.5) for i in range(n)])


def test_instances_holding_a_real_dict():
    """Deep copies and `__dict__.update` give instances a real dict: their attributes are read from it natively
    (its str-keyed lookup), not generically; checked against CPython with attributes deleted, shadowed class
    attributes, a property added to the class, and fresh instances mixed in."""
    copies = _deep_copied(N)
    jitted = check(products, copies, native=True)
    listing = _uops(jitted)
    assert "_LOAD_ATTR_INSTANCE" in listing and "its dict" in listing and "_LOAD_ATTR_GENERIC" not in listing
    check(products, [Loose(x=i, y=2) for i in range(N)], [Loose(x=1.5, y=i) for i in range(N)] + [Loose(x=1)])
    mixed = [Rec(i, 1) if i % 3 else c for i, c in enumerate(_deep_copied(N))]
    check(products, mixed)
    shadowing = _deep_copied(N)
    for c in shadowing[::7]:
        c.kind = "own"
    check(kinds, shadowing)
    check(changing, (_deep_copied(N), N // 2), (_deep_copied(N), N + 5))
    check(property_added, (_deep_copied(N), N // 2))
