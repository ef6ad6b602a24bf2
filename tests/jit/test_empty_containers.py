"""Empty containers made in a loop, `set()`, `dict()`, `list()`, `tuple()`, `frozenset()`, `{}`: the C-API's
constructor, which runs no Python code, not a generic call (``_NEW_EMPTY``, no barrier), so a method bound around
it stays one method call (`groups.setdefault(key, set()).add(w)`). Checked against CPython, with the builtin's
name rebound mid-loop, and through jit.stats and the uop dump."""

from helpers import check

import jit as jit_module
from jit import jit


def groups_of(words):
    groups = {}
    for w in words:
        groups.setdefault(w[0], set()).add(w)
    return sorted((k, sorted(v)) for k, v in groups.items())


def fresh_each_time(n):
    out = []
    for i in range(n):
        d = dict()
        d["i"] = i
        s = frozenset()
        t = tuple()
        lst = list()
        lst.append(i)
        e = {}
        out.append((d, len(s), t, lst, e, set()))
    return out


class Tagged(set):
    pass


def rebinds(n):
    global set
    out = []
    for i in range(n):
        if i == n // 2:
            set = Tagged  # noqa: A001  (the builtin's name rebound: its guard fails, the new class is called)
        out.append(type(set()).__name__)
    del set
    return out


def test_empty_containers_natively():
    words = [f"{c}{i}" for i in range(30) for c in "abc"]
    jitted = check(groups_of, words, native=True)
    check(fresh_each_time, 0, 50, native=True)
    check(rebinds, 10, 60)
    for f in (jitted, jitted.cpython_baseline):
        assert not jit_module.stats(f)["aborts_by_code"], jit_module.stats(f)["aborts"]
    plain = jit(threshold=2)(groups_of)
    for _ in range(3):
        assert plain(words) == groups_of(words)
    uops = jit_module.dump(plain, "uops")
    assert "_NEW_EMPTY" in uops and "_LOAD_ATTR_GENERIC" not in uops
