"""What a hand-off that raised leaves behind (``runtime.errors``): the function's frame holds its locals as
CPython's would where the loop raised (``handoff_locals``, taken by the instrumented code before it re-raises),
seen by a post-mortem debugger through the traceback, whether the loop raised in the interpreter or in native
code, before or after it got hot, with locals the loop bound, rebound or deleted."""

import gc
import types

import pytest
from helpers import define

from jit import jit
from runtime import errors

SOURCE = """
def divide(n, k):
    total = 0
    for i in range(n):
        total += 10 // (k - i)
        last = i
    return total


def deletes(n, k):
    kept = -1
    for i in range(n):
        if i % 50 == 49:
            del kept
        kept = i
        1 // (k - i)
    return kept
"""


def post_mortem(func, *args):
    """The locals of func's frame where the exception it raised was raised (as pdb.pm() would show them),
    without tracejit's hidden ones."""
    with pytest.raises(ZeroDivisionError) as info:
        func(*args)
    tb = info.value.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    assert tb.tb_frame.f_code.co_name == func.__name__
    return {name: value for name, value in tb.tb_frame.f_locals.items() if not name.startswith("_tj")}


@pytest.mark.parametrize(
    "name, calls", [("divide", [(100, 1), (100, 50), (300, 299)]), ("deletes", [(300, 120), (300, 149), (3, 0)])]
)
def test_the_locals_where_a_handed_over_loop_raised(name, calls):
    func = define(SOURCE, name)
    jitted = jit(threshold=2, side_exit_threshold=2)(func)
    for args in calls:
        expected = post_mortem(func, *args)
        for _ in range(3):
            assert post_mortem(jitted, *args) == expected, args
    assert jit.stats(jitted)["native_entries"] > 0


def test_internal_code_is_known_by_identity_and_forgotten_with_its_function():
    """``runtime.errors.internal`` registers a code object itself, not its value: a code equal to it (the same
    source compiled again) is the user's, and a lookup never compares code objects (on 3.11 that compare rebuilt
    the bytecode: 13 us per frame, on every exception leaving a handed-over loop). The entry goes with its code."""
    namespace: dict = {}
    exec("def generated(x):\n    return x\n", namespace)
    fn = errors.internal(namespace.pop("generated"))
    twin = types.FunctionType(fn.__code__.replace(), {})
    assert twin.__code__ == fn.__code__ and twin.__code__ is not fn.__code__
    assert errors._is_internal(fn.__code__)
    assert not errors._is_internal(twin.__code__)
    key = id(fn.__code__)
    del fn, namespace
    gc.collect()
    assert key not in errors._internal_codes
