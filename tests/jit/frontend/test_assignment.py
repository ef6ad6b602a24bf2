"""Differential tests of assignment statements: simple, chained, unpacking, swaps, augmented, annotated, del."""

import pytest
from helpers import Args
from tier1_check import check_t1 as check


class Obj:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class Counter:
    """Records every evaluation, so tests can see what ran, in which order, how often."""

    def __init__(self):
        self.log = []

    def get(self, name, value):
        self.log.append(name)
        return value


# --- simple and chained -----------------------------------------------------------------------------------


def simple(n):
    a = n
    b = a * 2
    a = b - 1
    return a, b


def chained(n):
    a = b = c = n * 3
    a += 1
    return a, b, c


def chained_mutable(n):
    a = b = []
    for i in range(n):
        a.append(i)
    return a is b, b


def chained_order(lst, i):
    # targets are stored left to right: lst[i] uses the old i
    lst[i] = i = 2
    return lst, i


def chained_mixed_targets(o, d):
    o.x = d["k"] = t = len(d) + 10
    return o, d, t


def rebinding_types(n):
    x = n
    x = str(x)
    x = [x, x]
    x = tuple(x)
    return x


@pytest.mark.parametrize(
    "func, calls",
    [
        (simple, [0, 7, -3, 2**70, 1.5]),
        (chained, [0, 4, -2.5]),
        (chained_mutable, [0, 12]),
        (chained_order, [([0, 0, 0, 0], 1), ([5, 6, 7], 0), ([1], 3)]),
        (chained_mixed_targets, [(Obj(), {"a": 1}), (Obj(x=3), {})]),
        (rebinding_types, [5, "ab"]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_simple_and_chained(func, calls):
    check(func, *calls, native=True if func is chained_mutable else None)


# --- unpacking --------------------------------------------------------------------------------------------


def unpack_tuple(t):
    a, b = t
    return b, a


def unpack_three(t):
    a, b, c = t
    return a + b + c


def unpack_list_target(t):
    [a, b] = t
    return a, b


def unpack_nested(t):
    (a, b), [c, (d, e)] = t
    return a, b, c, d, e


def unpack_single(t):
    (a,) = t
    return a


def unpack_in_loop(pairs):
    total = 0
    for p in pairs:
        k, v = p
        total += k * v
    return total


def unpack_for_target(pairs):
    out = []
    for k, (v, w) in pairs:
        out.append(k + v * w)
    return out


def unpack_into_attr_and_subscript(o, lst, t):
    o.a, lst[0] = t
    return o, lst


def unpack_generator_source(n):
    a, b, c = iter(range(n))
    return a, b, c


@pytest.mark.parametrize(
    "func, calls",
    [
        (unpack_tuple, [(1, 2), [3, 4], "xy", {5: 0, 6: 0}, range(2)]),
        (unpack_three, [(1, 2, 3), "abc", [1.5, 2, 3]]),
        (unpack_list_target, [(1, 2), "ab"]),
        (unpack_nested, [((1, 2), [3, (4, 5)]), ("ab", "c" + "de")]),
        (unpack_single, [(1,), [[2]], "z"]),
        (unpack_in_loop, [[(i, i + 1) for i in range(12)], [], [(1, 2), [3, 4], "12"]]),
        (unpack_for_target, [[(i, (i, 2)) for i in range(11)]]),
        (unpack_into_attr_and_subscript, [(Obj(), [0, 0], (7, 8))]),
        (unpack_generator_source, [3]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_unpacking(func, calls):
    check(func, *calls)


@pytest.mark.parametrize(
    "func, value",
    [
        (unpack_tuple, (1, 2, 3)),  # too many
        (unpack_tuple, [1]),  # not enough
        (unpack_tuple, ()),
        (unpack_tuple, "abc"),
        (unpack_tuple, 5),  # not iterable
        (unpack_tuple, None),
        (unpack_three, (1, 2)),
        (unpack_three, range(10)),
        (unpack_single, ()),
        (unpack_single, (1, 2)),
        (unpack_nested, ((1, 2, 3), [3, (4, 5)])),
        (unpack_nested, ((1, 2), [3, 4])),
        (unpack_in_loop, [(1, 2), (3, 4, 5)]),
        (unpack_for_target, [(1, (2, 3)), (1, 2)]),
        (unpack_generator_source, 2),
        (unpack_generator_source, 4),
    ],
    ids=lambda v: getattr(v, "__name__", repr(v)),
)
def test_unpacking_errors(func, value):
    check(func, Args(value))


def unpack_partial_effects(lst):
    # the value is unpacked completely before any store happens
    lst[0], lst[1] = [9, 8, 7]


def unpack_stores_left_to_right(lst):
    i, lst[i] = 1, 5
    return lst


def unpack_custom_iterable(n):
    class_ = Countdown(n)
    a, b, c = class_
    return a, b, c


class Countdown:
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return self

    def __next__(self):
        if self.n <= 0:
            raise StopIteration
        self.n -= 1
        return self.n


@pytest.mark.parametrize(
    "func, calls",
    [
        (unpack_partial_effects, [Args([0, 0, 0])]),
        (unpack_stores_left_to_right, [Args([0, 0, 0])]),
        (unpack_custom_iterable, [3, 2, 4]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_unpacking_semantics(func, calls):
    check(func, *calls)


# --- swaps and rotations ----------------------------------------------------------------------------------


def swap(a, b):
    a, b = b, a
    return a, b


def rotate3(a, b, c):
    a, b, c = b, c, a
    return a, b, c


def rotate3_reverse(a, b, c):
    a, b, c = c, a, b
    return a, b, c


def fib_swap(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def rotate_loop(n):
    a, b, c = 1, 2, 3
    for _ in range(n):
        a, b, c = c, a, b + a
    return a, b, c


def swap_list_items(lst):
    for i in range(len(lst) - 1):
        lst[i], lst[i + 1] = lst[i + 1], lst[i]
    return lst


def swap_uses_old_index(lst):
    # the index of the second target is evaluated after the first store
    i = 0
    i, lst[i] = lst[i], i + 10
    return i, lst


def swap_with_list_target(a, b):
    [a, b] = b, a
    return a, b


def swap_unbound(flag):
    if flag:
        b = 1
    a = 2
    a, b = b, a
    return a, b


def swap_evaluation_order(c, lst):
    # values first, left to right; then each target's container and key, just before its store
    c.get("t1", lst)[c.get("k1", 0)], c.get("t2", lst)[c.get("k2", 1)] = c.get("v1", 10), c.get("v2", 20)
    return lst, c.log


def unpack_evaluation_order(c, lst):
    c.get("t1", lst)[c.get("k1", 0)], c.get("t2", lst)[c.get("k2", 1)], x = c.get("value", (1, 2, 3))
    return lst, x, c.log


def chained_with_unpacking(n):
    a, b = c = n, n + 1
    d = [e, f] = (n * 2, n * 3)
    return a, b, c, d, e, f


@pytest.mark.parametrize(
    "func, calls",
    [
        (swap_evaluation_order, [(Counter(), [0, 0])]),
        (unpack_evaluation_order, [(Counter(), [0, 0])]),
        (chained_with_unpacking, [1, "s"]),
        (swap, [(1, 2), ("x", [1]), (None, 2.5)]),
        (rotate3, [(1, 2, 3), ("a", "b", "c")]),
        (rotate3_reverse, [(1, 2, 3)]),
        (fib_swap, [0, 1, 10, 100]),
        (rotate_loop, [0, 15]),
        (swap_list_items, [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], [], [1]]),
        (swap_uses_old_index, [[2, 0, 0, 0]]),
        (swap_with_list_target, [(1, 2)]),
        (swap_unbound, [True, False]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_swaps(func, calls):
    check(func, *calls, native=True if func in (fib_swap, rotate_loop, swap_list_items) else None)


# --- augmented assignment ---------------------------------------------------------------------------------


def aug_names(n):
    x = n
    x += 3
    x -= 1
    x *= 5
    x //= 2
    x %= 1000
    x **= 2
    x <<= 3
    x >>= 1
    x &= 0xFFFF
    x |= 0x10
    x ^= 0x3
    y = float(x)
    y /= 7
    return x, y


def aug_names_in_loop(n):
    x = 1
    y = 1.0
    for i in range(n):
        x += i
        x -= 1
        x *= 3
        x //= 2
        x %= 1000003
        x **= 2
        x <<= 3
        x >>= 1
        x &= 0xFFFFF
        x |= 0x10
        x ^= 0x3
        y += x
        y /= 7
    return x, y


def aug_list_in_place(lst, n):
    alias = lst
    for i in range(n):
        lst += [i]
    return lst is alias, alias


def aug_tuple_rebinds(t, n):
    alias = t
    for i in range(n):
        t += (i,)
    return t is alias, alias, t


def aug_str(n):
    s = ""
    for i in range(n):
        s += str(i)
    return s


def aug_int_grows(n):
    x = 3
    for _ in range(n):
        x *= 3
    return x


def aug_int_to_float(n):
    x = 1
    for i in range(n):
        x += 0.5 if i == 5 else 1
    return x


def aug_attribute(o, n):
    for i in range(n):
        o.total += i
        o.items += [i]
    return o


def aug_subscript(lst, d, n):
    for i in range(n):
        lst[i % len(lst)] += i
        d["k"] = d.get("k", 0)
        d["k"] += 1
        lst[-1] *= 2
    return lst, d


def aug_list_subscript(lst, n):
    for i in range(n):
        lst[i % len(lst)] += i
        lst[-1] *= 2  # past 64 bits after 63 doublings
    return lst


def aug_slice(lst):
    lst[1:3] += [100, 200]
    lst[::2] *= 1
    return lst


def aug_set_and_dict(s, d):
    s |= {9}
    s -= {1}
    d |= {"z": 1}
    return s, d


def aug_order(c):
    # container and key evaluated once, then item read, then value, then store
    box = c.get("box", [1, 2, 3])
    box[c.get("key", 1)] += c.get("value", 10)
    return box, c.log


def aug_attr_order(c, o):
    c.get("obj", o).x += c.get("value", 5)
    return o, c.log


class LoggingDict(dict):
    def __init__(self, log):
        super().__init__(a=1)
        self.log = log

    def __getitem__(self, key):
        self.log.append(("get", key))
        return super().__getitem__(key)

    def __setitem__(self, key, value):
        self.log.append(("set", key, value))
        super().__setitem__(key, value)


class LoggingObj:
    def __init__(self, log):
        object.__setattr__(self, "log", log)
        object.__setattr__(self, "v", 1)

    def __getattribute__(self, name):
        if name != "log":
            object.__getattribute__(self, "log").append(("getattr", name))
        return object.__getattribute__(self, name)

    def __setattr__(self, name, value):
        self.log.append(("setattr", name, value))
        object.__setattr__(self, name, value)


def aug_subscript_protocol(n):
    log = []
    d = LoggingDict(log)
    for _ in range(n):
        d["a"] += 2
    return log, dict(d)


def aug_attr_protocol(n):
    log = []
    o = LoggingObj(log)
    for _ in range(n):
        o.v += 2
    return log


class InPlace:
    def __init__(self):
        self.calls = []

    def __iadd__(self, other):
        self.calls.append(("iadd", other))
        return self

    def __add__(self, other):
        self.calls.append(("add", other))
        return self


class NoInPlace:
    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        return NoInPlace(self.v + other)


def aug_dunder(n):
    a = InPlace()
    b = NoInPlace(0)
    alias = b
    for i in range(n):
        a += i
        b += i
    return a.calls, b.v, alias.v


@pytest.mark.parametrize(
    "func, calls",
    [
        (aug_names, [0, 7, -12, 2**65]),
        (aug_names_in_loop, [0, 12, 50]),
        (aug_list_in_place, [([], 12), ([9], 0)]),
        (aug_tuple_rebinds, [((), 11), ((1,), 0)]),
        (aug_str, [0, 15]),
        (aug_int_grows, [10, 45, 80]),
        (aug_int_to_float, [3, 12]),
        (aug_attribute, [(Obj(total=0, items=[]), 12)]),
        (aug_subscript, [([1, 2, 3], {}, 12), ([5], {"k": 7}, 1)]),
        (aug_list_subscript, [([1, 2, 3], 12), ([5], 1), ([1, 2.5], 80)]),
        (aug_slice, [[0, 1, 2, 3, 4, 5]]),
        (aug_set_and_dict, [({1, 2}, {"a": 0})]),
        (aug_order, [Counter()]),
        (aug_attr_order, [(Counter(), Obj(x=1))]),
        (aug_subscript_protocol, [1, 12]),
        (aug_attr_protocol, [1, 11]),
        (aug_dunder, [0, 12]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_augmented(func, calls):
    native = func in (aug_names_in_loop, aug_int_grows, aug_int_to_float, aug_list_subscript)
    check(func, *calls, native=True if native else None)


def aug_error_type(x, y):
    x += y
    return x


def aug_error_missing_key(d):
    d["missing"] += 1


def aug_error_missing_attr(o):
    o.missing += 1


def aug_error_unbound():
    x += 1  # noqa: F821
    return x


def aug_error_after_partial(lst):
    for i in range(12):
        lst[i] += 1
    return lst


@pytest.mark.parametrize(
    "func, call",
    [
        (aug_error_type, Args(1, "a")),
        (aug_error_type, Args([], 5)),
        (aug_error_type, Args((), [1])),
        (aug_error_type, Args(None, 0)),
        (aug_error_missing_key, Args({})),
        (aug_error_missing_attr, Args(Obj())),
        (aug_error_unbound, Args()),
        (aug_error_after_partial, Args(list(range(10)))),
    ],
    ids=lambda v: getattr(v, "__name__", repr(v)),
)
def test_augmented_errors(func, call):
    check(func, call, native=True if func is aug_error_after_partial else None)


# --- annotated assignment ---------------------------------------------------------------------------------


def annotated(n):
    x: int = n
    y: list[int] = [x] * 2
    z: float  # noqa: F842
    o = Obj()
    o.a: int = 5
    y[0]: int = -1
    return x, y, o


def annotated_bare_then_unbound():
    x: int
    return x  # noqa: F821


def annotation_not_evaluated(n):
    # annotations of locals are never evaluated inside a function
    total: undefined_name_in_annotation = 0  # noqa: F821
    for i in range(n):
        total += i
    return total


@pytest.mark.parametrize(
    "func, calls",
    [
        (annotated, [3, "s"]),
        (annotated_bare_then_unbound, [()]),
        (annotation_not_evaluated, [12]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_annotated(func, calls):
    check(func, *calls, native=True if func is annotation_not_evaluated else None)


# --- del --------------------------------------------------------------------------------------------------


def del_name_then_read(n):
    x = n
    del x
    return x  # noqa: F821


def del_name_then_rebind(n):
    x = n
    del x
    x = n + 1
    return x


def del_unbound():
    del x  # noqa: F821
    x = 1
    return x


def del_twice(n):
    x = n
    del x
    del x  # noqa: F821


def del_in_loop(n):
    out = []
    for i in range(n):
        y = i * 2
        out.append(y)
        del y
    return out


def del_attr(o):
    del o.a
    return o


def del_subscripts(lst, d):
    del lst[0]
    del lst[-1]
    del lst[1:3]
    del lst[::2]
    del d["a"], d[(1, 2)]
    return lst, d


def del_tuple_target(lst, d):
    del (lst[0], d["x"])
    return lst, d


@pytest.mark.parametrize(
    "func, calls",
    [
        (del_name_then_read, [1]),
        (del_name_then_rebind, [1]),
        (del_unbound, [()]),
        (del_twice, [5]),
        (del_in_loop, [0, 12]),
        (del_attr, [Obj(a=1, b=2), Obj(b=2)]),
        (
            del_subscripts,
            [
                (list(range(12)), {"a": 1, (1, 2): 2, "c": 3}),
                ([1], {"a": 1}),
                (list(range(12)), {"a": 1}),
            ],
        ),
        (del_tuple_target, [([1, 2], {"x": 0}), ([], {"x": 0}), ([1], {})]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_del(func, calls):
    check(func, *calls, native=True if func is del_in_loop else None)


# --- reading a local before assignment ---------------------------------------------------------------------


def read_before_assign():
    y = x  # noqa: F821
    x = 1  # noqa: F841
    return y


def read_maybe_assigned(flag):
    if flag:
        x = 1
    return x


def read_in_loop_before_assign(n):
    total = 0
    for i in range(n):
        if i == 10:
            total += late  # noqa: F821
        late = i  # noqa: F841
    return total


def read_param_after_del(p):
    del p
    return p  # noqa: F821


@pytest.mark.parametrize(
    "func, calls",
    [
        (read_before_assign, [()]),
        (read_maybe_assigned, [True, False]),
        (read_in_loop_before_assign, [5, 12]),
        (read_param_after_del, [3]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_unbound_local(func, calls):
    check(func, *calls, native=True if func is read_in_loop_before_assign else None)


def test_unbound_local_message_is_cpythons():
    from jit import jit

    with pytest.raises(UnboundLocalError) as plain:
        read_before_assign()
    with pytest.raises(UnboundLocalError) as jitted:
        jit(read_before_assign)()
    assert str(jitted.value) == str(plain.value)
    assert "'x'" in str(jitted.value)
