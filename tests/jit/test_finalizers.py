"""Objects whose class defines ``__del__``, got from a call in a loop (``jit.recorder.generic.after_barrier``):
native code releases such an object after its last use, where the interpreter would not run its finalizer yet,
and checks no hoisted guard after the release, so a finalizer that rebinds a global the loop reads went unseen
(a wrong result). Recording stops at such an object (``Reason.FINALIZER``): the loop runs as CPython runs it. But
for the generators of a generator function with no try, with or finally, whose closing runs none of its code."""

from __future__ import annotations

from helpers import define, warm_call

import jit as jit_module
from jit import jit
from jit.aborts import Reason

SOURCE = """
G = 0


class Counted:
    def __del__(self):
        global G
        G += 1


def made_and_dropped(n):
    total = 0
    for i in range(n):
        d = Counted()
        d = 0
        total += G + d
    return total
"""


def test_a_finalizer_rebinding_a_global_the_loop_reads_is_seen():
    namespace: dict = {}
    func = define(SOURCE, "made_and_dropped", namespace)
    expected = func(500)
    for interpreter in (False, True):
        f = jit(threshold=2, side_exit_threshold=2, interpreter=interpreter)(func)
        for _ in range(2):
            namespace["G"] = 0
            assert f(500) == expected
        stats = jit_module.stats(f)
        assert Reason.FINALIZER.code in stats["aborts_by_code"], stats["aborts"]
        assert "defines __del__" in jit_module.explain(f)


# A generator function's generator (its class, types.GeneratorType, defines __del__: closing it) is released where
# native code is done with it when the function's code has no try, with or finally (closing it then unwinds the
# frame without running a line of it: ``jit.recorder.generic.plain_generator_function``); its code is guarded
# before the call, so another function called there leaves first and the interpreter makes that call.
GENERATORS = """
G = 0


def upto(k):
    for i in range(k):
        yield i


def upto_counted(k):
    global G
    try:
        for i in range(k):
            yield i
    finally:
        G += 1


def nested(n):
    total = 0
    for i in range(n):
        for x in upto(7):
            total += x ^ i
    return total


def broken_off(n):
    total = 0
    for i in range(n):
        for x in upto(50):
            if x > i % 5:
                break
            total += x
        total += G
    return total


def summed(n):
    total = 0
    for i in range(n):
        total += sum(upto(i % 9)) + G
    return total


def either(n, makers):
    total = 0
    for i in range(n):
        make = makers[(i // 300) % len(makers)]
        for x in make(3):
            if x == 1:
                break
            total += x
        total += G
    return total
"""


def test_a_plain_generator_function_called_in_a_loop_runs_natively():
    for name in ("nested", "broken_off", "summed"):
        namespace: dict = {}
        func = define(GENERATORS, name, namespace)
        expected = func(2000)
        f = jit(threshold=2, side_exit_threshold=2)(func)
        for _ in range(3):
            assert f(2000) == expected
        result, entries, exits = warm_call(f, 2000)
        assert result == expected
        assert (entries, exits) == (1, 1), (name, entries, exits)
        assert not jit_module.stats(f)["aborts_by_code"], jit_module.stats(f)["aborts"]


def test_a_generator_with_a_finally_is_still_left_to_the_interpreter():
    namespace: dict = {}
    func = define(GENERATORS, "either", namespace)
    counted = namespace["upto_counted"]
    namespace["G"] = 0
    expected = func(1200, [counted])
    f = jit(threshold=2, side_exit_threshold=2)(func)
    namespace["G"] = 0
    assert f(1200, [counted]) == expected
    assert Reason.FINALIZER.code in jit_module.stats(f)["aborts_by_code"]


def test_a_callee_changing_to_a_generator_with_a_finally_leaves_before_the_call():
    namespace: dict = {}
    func = define(GENERATORS, "either", namespace)
    makers = [namespace["upto"], namespace["upto_counted"]]
    namespace["G"] = 0
    expected, finalized = func(2400, makers), namespace["G"]
    for interpreter in (False, True):
        f = jit(threshold=2, side_exit_threshold=2, interpreter=interpreter)(func)
        for _ in range(2):
            namespace["G"] = 0
            assert f(2400, makers) == expected
            assert namespace["G"] == finalized
        assert jit_module.stats(f)["native_entries"] > 0
