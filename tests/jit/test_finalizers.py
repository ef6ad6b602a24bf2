"""Objects whose class defines ``__del__``, got from a call in a loop (``jit.recorder.generic.after_barrier``):
native code releases such an object after its last use, where the interpreter would not run its finalizer yet,
and checks no hoisted guard after the release, so a finalizer that rebinds a global the loop reads went unseen
(a wrong result). Recording stops at such an object (``Reason.FINALIZER``): the loop runs as CPython runs it."""

from __future__ import annotations

from helpers import define

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
