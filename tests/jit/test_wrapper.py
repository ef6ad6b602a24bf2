"""The function ``@jit`` returns (jit/wrapper.py): a real function whose code tracejit swaps, so that calls run
the instrumented code directly, with no frame of tracejit's between the caller and the function."""

import inspect
import pickle
import sys
import traceback

import pytest
from helpers import define

from jit import jit
from jit.api import state_of

LOOPED = """
import sys

def frames_above(depth):
    names = []
    frame = sys._getframe(1)
    for _ in range(depth):
        names.append(frame.f_code.co_name)
        frame = frame.f_back
    return names

def looped(n, depth=3, scale=1):
    total = 0
    for i in range(n):
        total += i * scale
    return total, frames_above(depth)
"""


def test_calls_run_the_function_directly():
    func = define(LOOPED, "looped")
    jitted = jit(func)
    first = jitted(3)
    later = jitted(3)
    name = sys._getframe().f_code.co_name
    # the first call goes through the trampoline once; then the caller calls the instrumented code itself
    assert later[1] == ["looped", name, later[1][2]]
    assert first[1][0] == "looped" and first[1] != later[1]
    assert jitted.__code__ is state_of(jitted).loop_runtime.codes[0]
    assert jitted.__code__.co_name == "looped" and jitted.__code__.co_filename == func.__code__.co_filename


@pytest.mark.parametrize("interpreter", [False, True])
def test_defaults_assignable_after_decoration(interpreter):
    func = define(LOOPED, "looped")
    jitted = jit(interpreter=interpreter)(func)
    assert jitted(4)[0] == 6
    jitted.__defaults__ = (3, 10)
    assert jitted(4)[0] == 60
    assert func(4)[0] == 6  # the original keeps its own
    jitted.__kwdefaults__ = None


def plain_generator(n):
    yield from range(n)


async def plain_coroutine(n):
    return n


async def plain_async_generator(n):
    yield n


@pytest.mark.parametrize("func", [plain_generator, plain_coroutine, plain_async_generator, define(LOOPED, "looped")])
@pytest.mark.parametrize("interpreter", [False, True])
def test_inspect_sees_what_it_sees_for_the_function(func, interpreter):
    jitted = jit(interpreter=interpreter)(func)
    for check in (
        inspect.isgeneratorfunction,
        inspect.iscoroutinefunction,
        inspect.isasyncgenfunction,
        inspect.isfunction,
    ):
        assert check(jitted) == check(func), check.__name__
    assert inspect.signature(jitted) == inspect.signature(func)
    assert jitted.py_func is func and jitted.__wrapped__ is func


def test_generator_runs_as_it_is():
    jitted = jit(plain_generator)
    assert list(jitted(5)) == [0, 1, 2, 3, 4]
    assert jitted.__code__ is plain_generator.__code__
    assert state_of(jitted).mode == "plain"


def looped_module_level(n):
    total = 0
    for i in range(n):
        total += i
    return total


looped_module_level = jit(looped_module_level)


def test_pickles_by_reference_after_its_code_was_swapped():
    assert looped_module_level(10) == 45  # the first call swapped in the instrumented code
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(looped_module_level, protocol)) is looped_module_level


class Holder:
    factor = 2

    @jit
    def method(self, n):
        total = 0
        for i in range(n):
            total += i * self.factor
        return total

    @staticmethod
    @jit
    def static(n):
        total = 0
        for i in range(n):
            total += i
        return total

    @classmethod
    @jit
    def klass(cls, n):
        total = 0
        for i in range(n):
            total += i * cls.factor
        return total


def test_methods():
    h = Holder()
    for _ in range(2):
        assert h.method(10) == Holder.method(h, 10) == 90
        assert h.static(10) == Holder.static(10) == 45
        assert h.klass(10) == Holder.klass(10) == 90


def test_no_tracejit_frame_in_tracebacks_of_the_first_call():
    func = define(
        "def f(n):\n    total = 0\n    for i in range(n):\n        total += 1 // (i - 2)\n    return total\n", "f"
    )
    for jitted in (jit(func), jit(interpreter=True)(func)):
        for _ in range(2):  # the first call (through the trampoline) and the next
            with pytest.raises(ZeroDivisionError) as info:
                jitted(5)
            names = [(frame.filename, frame.name) for frame in traceback.extract_tb(info.value.__traceback__)]
            assert names == [
                (__file__, "test_no_tracejit_frame_in_tracebacks_of_the_first_call"),
                (func.__code__.co_filename, "f"),
            ]
