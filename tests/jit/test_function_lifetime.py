"""A ``@jit`` function dropped by the user is freed, with its runtime, its trees and their machine code.

CPython's garbage collector does not see a code object's constants, so the objects tracejit puts there (the
instrumented code's ``RT``, a forwarder's target) must not lead back to the function: before they held it
strongly, every ``@jit`` function lived as long as the process (about half a megabyte each once compiled; the
generated-program test grew to gigabytes)."""

import gc
import weakref

import pytest
from helpers import define

from jit import jit
from jit.api import state_of

NESTED = """
def nested(n, m):
    total = 0
    for i in range(n):
        for j in range(m):
            if j % 3 == 1:
                total += i * j
            else:
                total -= 1
    return total
"""

UNSUPPORTED = """
def unsupported(n):
    class Inner:
        value = n
    return Inner.value
"""


def _freed(*objects: object) -> list[weakref.ref[object]]:
    refs = [weakref.ref(obj) for obj in objects]
    del objects
    return refs


def _collected(refs: list[weakref.ref[object]]) -> list[object]:
    gc.collect()
    return [ref() for ref in refs if ref() is not None]


def test_an_uncalled_function_is_freed() -> None:
    jitted = jit(define(NESTED, "nested"))
    refs = _freed(jitted, state_of(jitted))
    del jitted
    assert _collected(refs) == []


@pytest.mark.parametrize("options", [{}, {"interpreter": True}])
def test_a_function_with_compiled_trees_is_freed_with_its_trees(options: dict[str, object]) -> None:
    plain = define(NESTED, "nested")
    jitted = jit(threshold=2, side_exit_threshold=2, **options)(plain)
    for _ in range(4):
        assert jitted(30, 20) == plain(30, 20)
    state = state_of(jitted)
    trees = [tree for loop in state.monitor.registry.trees for tree in loop]
    assert trees, "the loops were compiled"
    refs = _freed(jitted, state, state.monitor, *trees)
    if state.loop_runtime is not None:
        refs.append(weakref.ref(state.loop_runtime))
    del jitted, state, trees
    assert _collected(refs) == []


def test_a_refused_strict_function_is_freed() -> None:
    jitted = jit(strict=True)(define(UNSUPPORTED, "unsupported"))
    with pytest.raises(Exception, match="tracejit cannot compile"):
        jitted(1)
    refs = _freed(jitted, state_of(jitted))
    del jitted
    assert _collected(refs) == []


def test_a_function_runs_on_while_the_user_drops_it() -> None:
    # (the running frame holds its function, and so its runtime: the hooks' weak reference stays good)
    source = """
def drops(n):
    total = 0
    for i in range(n):
        if i == n - 50:
            del NS["drops"]
        total += i
    return total
"""
    namespace: dict[str, object] = {}
    namespace["NS"] = namespace
    plain = define(source, "drops", namespace)
    refs = []
    for n in (60, 1000, 5000):
        namespace["drops"] = jitted = jit(threshold=2)(plain)
        refs.append(weakref.ref(jitted))
        assert jitted(n) == sum(range(n))  # warm: the loop is native when the function drops itself
        namespace["drops"] = jitted
        del jitted
        assert namespace["drops"](n) == sum(range(n))  # type: ignore[operator]
        assert "drops" not in namespace
    assert _collected(refs) == []
