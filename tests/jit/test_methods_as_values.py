"""`d.get` and `lst.append` passed as values rather than called (`max(d, key=d.get)`, `map(out.append, xs)`,
`fns.append(d.get)`): native code holds them as their dict or list when they are called right away, so such a
recording aborts once (METHOD_NOT_CALLED, a retry) and the next binds them as CPython does
(``Recorder.bind_apart``). Checked against CPython and through jit.stats that the loop then runs natively."""

from helpers import check

import jit as jit_module


def _native_after_retry(jitted):
    for f in (jitted, jitted.cpython_baseline):
        stats = jit_module.stats(f)
        assert set(stats["aborts_by_code"]) <= {"METHOD_NOT_CALLED", "LOOP_ENDED"}, stats["aborts"]
        assert stats["native_entries"] > 0 and stats["native_iterations"] > 0


def best_keys(n):
    d = {f"k{i}": (i * 37) % 101 for i in range(50)}
    out = []
    for i in range(n):
        d[f"k{i % 50}"] = (i * 13) % 97
        out.append(max(d, key=d.get))
    return out


def appended_through_map(n):
    out = []
    for i in range(n):
        list(map(out.append, range(i % 4)))
    return out


def methods_kept(n):
    d = {"a": 1, "b": 2}
    lst = []
    getters = []
    for i in range(n):
        getters.append(d.get)
        lst.append(len(getters))
    return [g("a") for g in getters[:3]], lst[-1], getters[0].__self__ is d


def sorted_by_get(n):
    d = {"x": 3, "y": 1, "z": 2}
    total = []
    for i in range(n):
        d["y"] = i % 5
        total.append("".join(sorted(d, key=d.get)))
    return total


def test_dict_get_as_a_key_function():
    _native_after_retry(check(best_keys, 0, 3, 60, native=True))
    _native_after_retry(check(sorted_by_get, 0, 40, native=True))


def test_list_append_passed_to_map():
    _native_after_retry(check(appended_through_map, 0, 5, 60, native=True))


def test_bound_methods_stored_in_a_list():
    _native_after_retry(check(methods_kept, 1, 50, native=True))
