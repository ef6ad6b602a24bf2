"""The front end compiles a function's source only if that text compiles to the code the function object holds.

Modules are written to a temporary directory and imported from there; some are edited on disk before the
first call, as an editor, a notebook's autoreload or a code generator would.
"""

import importlib.util
import itertools
import linecache
import textwrap

import pytest
from helpers import assert_native, define

from jit import jit
from jit.api import state_of

_names = itertools.count()


def load_module(tmp_path, source):
    """Write source to a fresh module file and import it (not through sys.modules: each test owns its module)."""
    name = f"tracejit_source_match_{next(_names)}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, path


def edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    linecache.checkcache(str(path))


SUMS = """
from jit import jit


@jit(threshold=2)
def sums(n):
    s = 0
    for i in range(n):
        s += i
    return s
"""


def test_file_edited_before_first_call_runs_plain_cpython(tmp_path):
    module, path = load_module(tmp_path, SUMS)
    edit(path, "s += i", "s -= i")
    assert "s -= i" in "".join(linecache.getlines(str(path)))  # the front end would read the new text
    assert module.sums(100) == module.sums.py_func(100) == 4950
    state = state_of(module.sums)
    assert state.mode == "plain"
    report = jit.explain(module.sums)
    assert "the source file changed since the function was defined" in report, report
    assert f"line {module.sums.py_func.__code__.co_firstlineno}" in report, report


def test_unchanged_file_compiles(tmp_path):
    module, _ = load_module(tmp_path, SUMS)
    assert module.sums(100) == 4950
    assert state_of(module.sums).mode == "tier1"
    assert_native(module.sums)


def test_edit_that_only_shifts_lines_runs_plain_cpython(tmp_path):
    # same code, but every line after the edit moved: tracebacks of the compiled text would show wrong lines
    module, path = load_module(tmp_path, SUMS)
    edit(path, "    s = 0\n", "    s = 0\n\n")
    assert module.sums(10) == 45
    assert state_of(module.sums).mode == "plain"


def test_edit_that_only_moves_text_within_a_line_still_compiles(tmp_path):
    # columns are not compared: the code is the same, and so are its lines
    module, path = load_module(tmp_path, SUMS)
    edit(path, "s += i", "s +=   i")
    assert module.sums(100) == 4950
    assert_native(module.sums)


def test_function_replaced_in_linecache_by_different_code():
    func = define("def f(n):\n    return n + 1\n", "f")
    filename = func.__code__.co_filename
    linecache.cache[filename] = (0, None, ["def f(n):\n", "    return n - 1\n"], filename)
    jitted = jit(func)
    assert jitted(5) == 6
    assert "changed" in jit.explain(jitted)  # (no loop: the front end runs only when asked)
    assert state_of(jitted).mode == "plain"


SURROUNDINGS = '''
from __future__ import annotations

import math

from jit import jit


def identity(f):
    return f


def tagged(label):
    def wrap(f):
        f.label = label
        return f

    return wrap


@identity
@jit(threshold=2)
@tagged(
    "a decorator over several lines",
)
def decorated(n: int) -> float:
    """Decorators above and below @jit; math is imported at module level."""
    total = 0.0
    for i in range(n):
        total += math.sqrt(i)
    return total


class Shapes:
    __scale = 3

    @jit(threshold=2)
    def __private(self, n):
        __k = self.__scale
        total = 0
        for i in range(n):
            total += i * __k
        return total

    def private(self, n):
        return self.__private(n)

    class Inner:
        @staticmethod
        @jit(threshold=2)
        def count(n):
            c = 0
            for i in range(n):
                if i % 3 == 0:
                    c += 1
            return c


def factory():
    @jit(threshold=2)
    def inner(n):
        total = 0
        for i in range(n):
            total += i * i
        return total

    return inner


nested = factory()
'''


def _surroundings_functions(module):
    return {
        "decorated": (module.decorated, (50,)),
        "private": (module.Shapes._Shapes__private, (module.Shapes(), 50)),
        "count": (module.Shapes.Inner.count, (50,)),
        "nested": (module.nested, (50,)),
    }


def test_decorators_methods_mangled_names_and_nesting_compile_natively(tmp_path):
    module, _ = load_module(tmp_path, SURROUNDINGS)
    functions = _surroundings_functions(module)
    assert module.Shapes._Shapes__private.py_func.__code__.co_qualname == "Shapes.__private"
    assert module.nested.py_func.__code__.co_qualname == "factory.<locals>.inner"
    for name, (jitted, args) in functions.items():
        expected = jitted.py_func(*args)
        assert jitted(*args) == expected, name
        assert jitted(*args) == expected, name
        assert state_of(jitted).mode == "tier1", jit.explain(jitted)
        assert_native(jitted)
    assert module.Shapes().private(10) == 3 * 45


@pytest.mark.parametrize(
    "name, old, new",
    [
        ("decorated", "total += math.sqrt(i)", "total -= math.sqrt(i)"),
        ("private", "total += i * __k", "total -= i * __k"),
        ("count", "if i % 3 == 0:", "if i % 3 == 1:"),
        ("nested", "i * i", "i + i"),
    ],
)
def test_edited_decorated_functions_and_methods_run_plain_cpython(tmp_path, name, old, new):
    module, path = load_module(tmp_path, SURROUNDINGS)
    edit(path, old, new)
    jitted, args = _surroundings_functions(module)[name]
    expected = jitted.py_func(*args)
    assert jitted(*args) == expected
    assert state_of(jitted).mode == "plain"
    assert "changed" in jit.explain(jitted)
    # the other functions of the file still compile: each one is checked on its own
    others = [f for other, (f, _) in _surroundings_functions(module).items() if other != name]
    for other in others:
        state_of(other).ensure_prepared()
        assert state_of(other).mode == "tier1", jit.explain(other)
