"""Differential tests of attribute and subscript loads, stores and deletes, slices, and their error messages."""

import pytest
from helpers import Args
from tier1_check import check_t1 as check


class Obj:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class Slotted:
    __slots__ = ("a",)


class Prop:
    def __init__(self):
        self._v = 0

    @property
    def v(self):
        return self._v * 10

    @v.setter
    def v(self, value):
        self._v = value + 1

    @v.deleter
    def v(self):
        self._v = -1

    @property
    def readonly(self):
        return 1


class Private:
    def __init__(self):
        self.__secret = 7

    def reveal(self, n):
        t = 0
        for _ in range(n):
            self.__secret += 1
            t += self.__secret
        return t, self._Private__secret


class Recorder:
    """Records __getitem__/__setitem__/__delitem__ keys, to see exactly which keys reach the object."""

    def __init__(self):
        self.log = []

    def __getitem__(self, key):
        self.log.append(("get", key))
        return 0

    def __setitem__(self, key, value):
        self.log.append(("set", key, value))

    def __delitem__(self, key):
        self.log.append(("del", key))


def attr_load_store(o, n):
    for i in range(n):
        o.count = getattr(o, "count", 0) + i
        o.last = i
    return o.count, o.last, o


def attr_chain(o):
    o.inner.inner.value = 5
    return o.inner.inner.value + o.inner.x


def attr_delete(o):
    del o.a
    return hasattr(o, "a"), o


def attr_property(n):
    p = Prop()
    out = []
    for i in range(n):
        p.v = i
        out.append(p.v)
    del p.v
    out.append(p.v)
    return out


def attr_private(n):
    return Private().reveal(n)


def attr_on_builtins(n):
    return (n).real, (n).bit_length(), [1, 2].__len__(), "x".__class__.__name__


def attr_missing(o):
    return o.nope


def attr_missing_store_slots(n):
    s = Slotted()
    s.b = n


def attr_missing_delete(o):
    del o.nope


def attr_readonly(n):
    p = Prop()
    p.readonly = n


def attr_on_none(n):
    return n.real


def attr_store_on_int(n):
    n.x = 1


def list_subscripts(lst):
    a = lst[0]
    b = lst[-1]
    lst[1] = a + b
    lst[-2] = "neg"
    return a, b, lst


def slices(lst):
    return (
        lst[1:4],
        lst[:3],
        lst[5:],
        lst[:],
        lst[::2],
        lst[::-1],
        lst[-3:],
        lst[:-3],
        lst[-1:-6:-2],
        lst[100:],
        lst[3:1],
        lst[1:10:3],
    )


def slice_variables(lst, a, b, c):
    return lst[a:b:c], lst[a:], lst[:b], lst[::c]


def slice_store(lst):
    lst[1:3] = ["a", "b", "c", "d"]
    lst[::3] = [0] * len(lst[::3])
    lst[:0] = ["front"]
    return lst


def slice_store_wrong_length(lst):
    lst[::2] = [1]


def slice_delete(lst):
    del lst[::3]
    del lst[-2:]
    return lst


def slice_step_zero(lst):
    return lst[::0]


def string_and_tuple_slices(s, t):
    return s[1:-1], s[::-1], t[1::2], s[-100:100]


def tuple_keys(d):
    d[1, 2] = "a"
    d[(3,)] = "b"
    d[()] = "c"
    return d[1, 2], d[3,], d[()], d


def tuple_keys_with_slices(n):
    r = Recorder()
    r[1:2, 3] = n
    r[::2, ...] = n
    _ = r[1:, :5]
    del r[0, 1:n]
    return r.log


def recorder_keys(n):
    r = Recorder()
    _ = r[n]
    _ = r[n:]
    _ = r[:n:2]
    r[n, n] = 1
    del r[:]
    return r.log


def dict_ops(d, n):
    for i in range(n):
        d[i % 4] = d.get(i % 4, 0) + i
    del d[0]
    d["new"] = None
    return d


def nested_subscripts(grid):
    grid[1][2] = grid[0][0] + grid[2][1]
    grid[-1][-1] *= 2
    return grid


def nested_subscripts_loop(grid, n):
    for k in range(n):
        grid[k % 3][(k + 1) % 3] = grid[0][0] + grid[2][k % 3]
        grid[-1][-1] += 1
    return grid


def matrix_loop(n):
    m = [[0] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            m[i][j] = i * j
    return m


def index_error(lst, i):
    return lst[i]


def index_error_store(lst, i):
    lst[i] = 0


def index_error_delete(lst, i):
    del lst[i]


def key_error(d, k):
    return d[k]


def key_error_delete(d, k):
    del d[k]


def not_subscriptable(x):
    return x[0]


def no_item_assignment(x):
    x[0] = 1


def no_item_deletion(x):
    del x[0]


def bad_index_type(lst):
    return lst["a"]


def unhashable_key(d):
    return d[[1]]


def string_index_error(s):
    return s[10]


@pytest.mark.parametrize(
    "func, calls",
    [
        (attr_load_store, [(Obj(), 0), (Obj(), 12), (Obj(count=100), 3)]),
        (attr_chain, [Obj(inner=Obj(x=1, inner=Obj()))]),
        (attr_delete, [Obj(a=1, b=2)]),
        (attr_property, [0, 12]),
        (attr_private, [0, 12]),
        (attr_on_builtins, [255, True]),
        (list_subscripts, [[1, 2, 3, 4], [5, 6]]),
        (slices, [list(range(12)), "abcdefghijkl", tuple(range(7)), []]),
        (slice_variables, [(list(range(12)), 1, 9, 2), (list(range(12)), -2, None, -1), ("abc", None, None, None)]),
        (slice_store, [list(range(12)), []]),
        (slice_delete, [list(range(12)), [1]]),
        (string_and_tuple_slices, [("hello", (1, 2, 3, 4, 5))]),
        (tuple_keys, [{}]),
        (tuple_keys_with_slices, [3]),
        (recorder_keys, [2, -1]),
        (dict_ops, [({}, 12), ({0: 5, "x": 1}, 1)]),
        (nested_subscripts, [[[1, 2, 3], [4, 5, 6], [7, 8, 9]]]),
        (
            nested_subscripts_loop,
            [
                ([[1, 2, 3], [4, 5, 6], [7, 8, 9]], 0),
                ([[1, 2, 3], [4, 5, 6], [7, 8, 9]], 30),
                ([[1.5, 2, 3], [4, 5, 6], [7, 8, 2**62]], 30),
            ],
        ),
        (matrix_loop, [0, 1, 11]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_loads_stores_deletes(func, calls):
    # the loops over lists of numbers compile: demand (through jit.stats) that compiled code ran
    check(func, *calls, native=True if func in (nested_subscripts_loop, matrix_loop) else None)


@pytest.mark.parametrize(
    "func, call",
    [
        (attr_missing, Args(Obj(a=1))),
        (attr_missing, Args(5)),
        (attr_missing, Args([])),
        (attr_missing_store_slots, Args(1)),
        (attr_missing_delete, Args(Obj())),
        (attr_readonly, Args(1)),
        (attr_on_none, Args(None)),
        (attr_store_on_int, Args(1)),
        (attr_delete, Args(Obj(b=2))),
        (slice_store_wrong_length, Args(list(range(5)))),
        (slice_step_zero, Args([1, 2])),
        (index_error, Args([1, 2, 3], 3)),
        (index_error, Args([1, 2, 3], -4)),
        (index_error, Args((1,), 5)),
        (index_error, Args([], 2**70)),
        (index_error_store, Args([1], 1)),
        (index_error_delete, Args([], 0)),
        (key_error, Args({}, "k")),
        (key_error, Args({1: 1}, (1, 2))),
        (key_error, Args({}, None)),
        (key_error_delete, Args({"a": 1}, "b")),
        (not_subscriptable, Args(5)),
        (not_subscriptable, Args(None)),
        (no_item_assignment, Args((1,))),
        (no_item_assignment, Args("s")),
        (no_item_deletion, Args((1,))),
        (bad_index_type, Args([1])),
        (unhashable_key, Args({})),
        (string_index_error, Args("abc")),
    ],
    ids=lambda v: getattr(v, "__name__", repr(v)),
)
def test_errors(func, call):
    check(func, call)


def index_past_end_in_loop(lst, n):
    total = 0
    for i in range(n):
        total += lst[i]
        lst[-i - 1] = i
    return total, lst


def test_index_error_from_compiled_loop():
    check(
        index_past_end_in_loop,
        (list(range(20)), 20),
        (list(range(20)), 30),
        ([0.5] * 20, 25),
        ([], 0),
        native=True,
    )
