"""Differential tests of global and builtin reads: NameError, rebinding during a loop, shadowing builtins."""

import builtins

import pytest
from helpers import same
from tier1_check import check_t1 as check

LIMIT = 10
TABLE = [3, 1, 4, 1, 5, 9, 2, 6]
flag = "start"


def read_globals(n):
    return LIMIT + n, TABLE[n % len(TABLE)], len(TABLE), abs(-n), None


def read_builtins(n):
    return min(n, 3), int, type(n).__name__, isinstance(n, int), True, Ellipsis, NotImplemented


def undefined_global(n):
    if n > 5:
        return no_such_name_anywhere  # noqa: F821
    return n


def undefined_in_loop(n):
    t = 0
    for i in range(n):
        t += i
        if i == 11:
            t += also_missing  # noqa: F821
    return t


def undefined_callable(n):
    return missing_function(n)  # noqa: F821


def set_flag(value):
    globals()["flag"] = value


def del_flag():
    del globals()["flag"]


def set_limit(value):
    globals()["LIMIT"] = value


def loop_sees_global_rebound(n):
    set_limit(10)
    seen = []
    for i in range(n):
        seen.append(LIMIT)
        if i == 4:
            set_limit(LIMIT * 2)  # the loop must read the new value from now on
    return seen


def while_condition_on_global(n):
    set_limit(n)
    steps = 0
    while steps < LIMIT:
        steps += 1
        if steps == 7:
            set_limit(9)
    return steps


def global_changes_type(n):
    set_flag(0)
    out = []
    for i in range(n):
        out.append(flag)
        set_flag(flag + 1 if i < 6 else float(flag) / 2)
    return out


def global_changes_type_midway(n):
    set_flag(0)
    total = 0
    for i in range(n):
        total += flag * 2
        if i == 6:
            set_flag(0.5)  # off the compiled path: the loop must notice the float
        elif i == 15:
            set_flag(2**62)
    return total


def global_deleted_mid_loop(n):
    set_flag("here")
    out = []
    for i in range(n):
        out.append(flag)
        if i == 8:
            del_flag()
    return out


def builtin_shadowed_by_global(n):
    return len([1, 2, 3]), abs(-n)


def builtin_shadowed_by_local(n):
    len = n * 2
    return len + 1


def builtin_shadowed_by_param(max):
    return max + 1


def builtin_module_patched(n):
    return sum(range(n))


def globals_mutated_container(n):
    for i in range(n):
        TABLE.append(i)
    r = list(TABLE)
    del TABLE[8:]
    return r


def global_function_redefined(n):
    out = []
    for i in range(n):
        out.append(current_strategy(i))
        if i == 5:
            swap_strategy()
    swap_strategy()
    return out


def strategy_a(i):
    return i


def strategy_b(i):
    return -i


current_strategy = strategy_a


def swap_strategy():
    g = globals()
    g["current_strategy"] = strategy_b if g["current_strategy"] is strategy_a else strategy_a


@pytest.mark.parametrize(
    "func, calls",
    [
        (read_globals, [0, 3, 9]),
        (read_builtins, [1, 5]),
        (undefined_global, [1, 7]),
        (undefined_in_loop, [5, 12]),
        (undefined_callable, [1]),
        (loop_sees_global_rebound, [0, 12]),
        (while_condition_on_global, [3, 12]),
        (global_changes_type, [12]),
        (global_changes_type_midway, [3, 12, 30]),
        (global_deleted_mid_loop, [5, 12]),
        (builtin_shadowed_by_local, [4]),
        (builtin_shadowed_by_param, [4]),
        (globals_mutated_container, [12]),
        (global_function_redefined, [12]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_globals(func, calls):
    # the loops that call no Python function (other than off their compiled path) compile
    native = func in (
        undefined_in_loop,
        loop_sees_global_rebound,
        while_condition_on_global,
        global_changes_type_midway,
        global_deleted_mid_loop,
        globals_mutated_container,
    )
    check(func, *calls, native=True if native else None)


def test_name_error_message_and_name():
    from jit import jit

    with pytest.raises(NameError) as plain:
        undefined_global(9)
    with pytest.raises(NameError) as jitted:
        jit(undefined_global)(9)
    assert str(jitted.value) == str(plain.value) == "name 'no_such_name_anywhere' is not defined"
    assert jitted.value.name == plain.value.name == "no_such_name_anywhere"


def test_builtin_shadowed_by_global():
    g = globals()
    try:
        g["len"] = lambda x: "my len"
        g["abs"] = "not callable"
        check(builtin_shadowed_by_global, 2)
    finally:
        g.pop("len", None)
        g.pop("abs", None)
    check(builtin_shadowed_by_global, 2)


def test_global_shadow_added_and_removed_between_calls():
    from jit import jit

    jitted = jit(builtin_shadowed_by_global)
    g = globals()
    assert jitted(3) == (3, 3)
    g["len"] = lambda x: -1
    try:
        assert jitted(3) == (-1, 3)
    finally:
        del g["len"]
    assert jitted(3) == (3, 3)


def test_builtins_module_patched():
    real = builtins.sum
    try:
        builtins.sum = lambda it: "patched"
        check(builtin_module_patched, 3)
    finally:
        builtins.sum = real
    check(builtin_module_patched, 12)


def abs_in_loop(n):
    total = 0
    for i in range(-n, n):
        total += abs(i)
    return total


def test_builtin_rebound_after_loop_compiled():
    # the compiled loop calls the builtin abs directly: a global or a patched builtin must still take over
    jitted = check(abs_in_loop, 20, native=True)
    g = globals()
    try:
        for value in (float, lambda x: -x):
            g["abs"] = value
            assert same(jitted(20), abs_in_loop(20))
    finally:
        g.pop("abs", None)
    assert same(jitted(20), abs_in_loop(20))
    real = builtins.abs
    try:
        builtins.abs = float
        assert same(jitted(20), abs_in_loop(20))
    finally:
        builtins.abs = real
    assert same(jitted(20), abs_in_loop(20)) and abs_in_loop(20) == 400


class DefaultingGlobals(dict):
    """Globals that answer every missing name (CPython reads non-dict globals through __getitem__)."""

    def __missing__(self, key):
        if key.startswith("auto_"):
            return f"<{key}>"
        raise KeyError(key)


def test_globals_dict_subclass():
    from helpers import define

    source = """
def f(n):
    out = []
    for i in range(n):
        out.append(auto_value)
    return out, len(out), auto_other

def g(n):
    return not_auto_missing
"""
    ns = DefaultingGlobals()
    f = define(source, "f", ns)
    check(f, 0, 12)
    check(ns["g"], 1)
