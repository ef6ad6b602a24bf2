"""`del container[key]` and `del obj.name` in a native loop: PyObject_DelItem and PyObject_SetAttr with no value,
barriers of the generic object path (``_DELETE_SUBSCR_GENERIC``, ``_DELETE_ATTR_GENERIC``), which stopped the
recording before (NOT_COMPILED). Checked against CPython: dicts, lists, slices, a user's `__delitem__` and
`__delattr__`, the KeyError, IndexError and AttributeError raised mid-loop, finalizers run by the deletion in
CPython's order; and through jit.stats that the loop ran natively with no abort."""

from helpers import check

import jit as jit_module


def _no_aborts(jitted):
    for f in (jitted, jitted.cpython_baseline):
        stats = jit_module.stats(f)
        assert not stats["aborts_by_code"], stats["aborts"]
        assert stats["native_entries"] > 0 and stats["native_iterations"] > 0


def drop_seen(words):
    d = dict.fromkeys(words[: len(words) // 2], 1)
    gone = 0
    for w in words:
        if w in d:
            del d[w]
            gone += 1
    return gone, sorted(d)


def drop_missing(keys, extra):
    d = {k: len(k) for k in keys}
    for k in keys + [extra]:
        del d[k]
    return d


def trim_lists(rows):
    for row in rows:
        del row[0]
        del row[-2:]
    return rows


def pop_front(a, n):
    for _ in range(n):
        del a[0]
    return a


class Log:
    def __init__(self):
        self.events = []

    def __delitem__(self, key):
        self.events.append(("delitem", key))

    def __delattr__(self, name):
        self.events.append(("delattr", name))


def user_hooks(n):
    log = Log()
    for i in range(n):
        del log[i]
        del log.anything
    return log.events


class Mortal:
    died = []

    def __init__(self, tag):
        self.tag = tag

    def __del__(self):
        Mortal.died.append(self.tag)


class Holder:
    pass


def finalizers(n):
    Mortal.died = []
    d = {}
    h = Holder()
    for i in range(n):
        d[str(i)] = Mortal(i)
        h.m = Mortal(-i)
        del d[str(i)]
        del h.m
    return list(Mortal.died)


def attribute_missing(n, k):
    h = Holder()
    for i in range(n):
        h.x = i
        if i != k:
            del h.x
        else:
            del h.y
    return i


def test_del_of_dict_items():
    words = [f"w{i % 40}" for i in range(200)]
    _no_aborts(check(drop_seen, words, native=True))
    check(drop_missing, ([f"k{i}" for i in range(50)], "nope"), native=True)


def test_del_of_list_items_and_slices():
    check(trim_lists, [[j for j in range(6)] for _ in range(50)], [[1, 2, 3]] * 2 + [[1, 2]] * 30, native=True)
    check(pop_front, (list(range(100)), 60), (list(range(50)), 60), native=True)


def test_user_hooks_and_finalizers():
    _no_aborts(check(user_hooks, 40, native=True))
    check(finalizers, 40)  # (a class with __del__ made in the loop: FINALIZER keeps this loop in CPython)


def test_attribute_error_mid_loop():
    check(attribute_missing, (50, 100), (50, 30), native=True)
