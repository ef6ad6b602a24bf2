"""Cell variables (``jit.frontend.nested_code.cell_variables``): a variable of the function that a lambda, nested
def or generator expression reads, and that the function may rebind, lives in a cell, as CPython's does. Tier-1
code makes the cell at entry (``MAKE_CELL``), reads and writes through it (``LOAD_DEREF``...), and nested
functions get the cell itself; native code reads it anew after every store or barrier (``_LOAD_CELL``) and stores
into it (``_STORE_CELL``, or ``_STORE_CELL_GENERIC`` where the old value's release may run Python code). Each
function runs plain and under @jit (the interpreter and the CPython baseline): the same results, exceptions and
argument mutations, and native code ran."""

from __future__ import annotations

import gc
import sys
import traceback
import types

import pytest
from helpers import TEST_OPTIONS, assert_native, check, define

import jit as jit_module
from jit import jit

SOURCE = """
def top(rows, cols):
    out = []
    for k in cols:
        out.append(max(rows, key=lambda r: r[k]))
    return out

def counter(n):
    count = 0
    def bump():
        nonlocal count
        count += 1
    for i in range(n):
        bump()
    return count

def accumulator(values):
    total = 0.0
    def add(x):
        nonlocal total
        total += x * 0.5
    for v in values:
        add(v)
        total -= 0.25
    return total

def late_binding(n):
    fs = []
    for i in range(n):
        fs.append(lambda: i * 2)
    return [f() for f in fs[:3]], fs[-1]()

def parameter_rebound(n, scale):
    f = lambda x: x * scale
    total = 0
    for i in range(n):
        scale = i % 3
        total += f(i)
    return total, scale

def read_before_assignment(n):
    total = 0
    for i in range(n):
        total += y if i > 2 else 0
    y = 1
    f = lambda: y
    return total + f()

def read_before_assignment_by_a_nested_function(n):
    def g():
        return y
    total = 0
    for i in range(n):
        total += g() if i > 2 else i
    y = 1
    return total

def read_before_assignment_in_a_comprehension(n):
    total = 0
    for i in range(n):
        total += sum([y for _ in range(i)])
    y = 1
    f = lambda: y
    return total + f()

def deleted(n):
    x = 0
    f = lambda: x
    total = 0
    for i in range(n):
        x = i
        total += f()
    del x  # (the cell emptied: f would raise NameError now)
    return total

def deleted_in_the_loop(n):
    x = 1
    f = lambda: x
    total = 0
    for i in range(n):
        total += f()
        if i == n - 2:
            del x
        total += x
    return total

def deleted_twice(n):
    x = 1
    f = lambda: x
    for i in range(n):
        x = i
    del x
    del x
    return f

def changing_type(n):
    value = 0
    def step(i):
        nonlocal value
        if i == n // 3:
            value = float(value)
        elif i == 2 * n // 3:
            value = str(value)
    out = []
    for i in range(n):
        step(i)
        value = value * 2 if not isinstance(value, str) else value[:8]
        out.append(value)
    return out[-1], type(value).__name__, out[n // 3 - 1 : n // 3 + 1]

def comprehension_in_the_lambda(rows, n):
    best = []
    for k in range(n):
        score = lambda row: sum(x * k for x in row) + len([x for x in row if x > k])
        best.append(max(rows, key=score))
    return best

def generator_reading_a_loop_variable(rows):
    total = 0
    for k, row in enumerate(rows):
        total += sum(x * k for x in row)
    return total

def recursion(n):
    total = 0
    for i in range(n):
        depth = i % 6
        def walk(m):
            return 0 if m == 0 else 1 + walk(m - 1) + depth
        total += walk(depth)
    return total

def objects_in_a_cell(n):
    acc = []
    f = lambda: len(acc)
    total = 0
    for i in range(n):
        acc = acc + [i]  # (a list replacing a list: its release may run Python code, a barrier)
        total += f()
    return total, acc[-3:]

def strings_in_a_cell(n):
    word = ""
    f = lambda: word
    for i in range(n):
        word = str(i % 10) + f()[:5]
    return word

class Noisy:
    log = []
    def __init__(self, i):
        self.i = i
    def __del__(self):
        Noisy.log.append(self.i)

def finalizers(n):
    Noisy.log.clear()
    held = Noisy(-1)
    f = lambda: held.i
    total = 0
    for i in range(n):
        held = Noisy(i)
        total += f()
    del held
    return total, Noisy.log[:5], len(Noisy.log)

def numbers_written_in_place(n):
    total = 1000
    ratio = 0.5
    peek = lambda: (total, ratio)
    seen = []
    for i in range(n):
        total += i  # (the cell's int object, held by nothing else: written in place)
        ratio = ratio * 1.5 + i
        if i % 3 == 0:
            seen.append(total)  # (held by the list too: the next store makes a new object)
            seen.append(ratio)
    return seen[-6:], peek(), sum(seen[::2])

def raises_in_the_lambda(rows):
    out = []
    for k in range(4):
        out.append(max(rows, key=lambda r: r[k]))
    return out
"""


def ns():
    namespace: dict = {}
    define(SOURCE, "top", namespace)
    return namespace


NS = ns()
ROWS = [(i, (i * 7) % 11, -i, (i * i) % 5) for i in range(30)]


def test_a_lambda_reading_the_loop_variable():
    check(NS["top"], (ROWS, [0, 1, 2, 3] * 100), (ROWS, []), native=True)


def test_a_nonlocal_counter():
    check(NS["counter"], 3000, 0, native=True)


def test_a_nonlocal_accumulator():
    check(NS["accumulator"], [1, 2.5, -3] * 200, [], native=True)


def test_late_binding_every_lambda_sees_the_last_value():
    jitted = check(NS["late_binding"], 300, 1, native=True)
    assert jitted(300) == ([598, 598, 598], 598)


def test_a_parameter_captured_and_rebound():
    # (its cell holds the argument from the entry, as CPython's MAKE_CELL makes it)
    check(NS["parameter_rebound"], (300, 5), (0, 5), native=True)


@pytest.mark.parametrize(
    "name, error",
    [
        ("read_before_assignment", UnboundLocalError),
        ("read_before_assignment_by_a_nested_function", NameError),
        ("read_before_assignment_in_a_comprehension", NameError),
    ],
)
def test_a_cell_read_before_assignment_raises_cpythons_error(name, error):
    func = NS[name]
    check(func, 300, 2)

    def raised(f):
        with pytest.raises(error) as info:
            f(300)
        frames = [(e.name, e.lineno, e.line) for e in traceback.extract_tb(info.value.__traceback__)[1:]]
        return type(info.value), str(info.value), frames

    plain = raised(func)
    for options in (TEST_OPTIONS, {**TEST_OPTIONS, "interpreter": False}):
        jitted = jit(**options)(func)
        for _ in range(2):
            assert raised(jitted) == plain


def test_a_deleted_cell():
    check(NS["deleted"], 300, 0, native=True)
    check(NS["deleted_in_the_loop"], 300, 2, 1)
    check(NS["deleted_twice"], 3, 0)


def test_a_nested_function_changes_the_type_of_the_variable_mid_loop():
    check(NS["changing_type"], 300, 30, 3, native=True)


def test_a_generator_and_a_comprehension_inside_the_lambda():
    rows = [[1, 5, 2], [4, 0, 3], [2, 2, 2]]
    check(NS["comprehension_in_the_lambda"], (rows, 200), (rows, 0), native=True)


def test_a_generator_expression_reading_the_loop_variable():
    check(NS["generator_reading_a_loop_variable"], [[1, 2.5], [3], []] * 100, native=True)


def test_recursion_through_a_captured_nested_def():
    check(NS["recursion"], 300, 0, native=True)


def test_objects_and_strs_in_a_cell():
    check(NS["objects_in_a_cell"], 300, 0, native=True)
    check(NS["strings_in_a_cell"], 300, 0, native=True)


def test_numbers_stored_in_place_only_where_nothing_else_holds_them():
    check(NS["numbers_written_in_place"], 300, 1, 0, native=True)


def test_finalizers_run_where_cpython_runs_them():
    # (differential only: the recorder refuses objects whose class defines __del__ made in the loop)
    check(NS["finalizers"], 300, 1)


def test_a_traceback_through_the_lambda_has_cpythons_frames():
    rows = [(1, 2, 3, 4)] * 10 + [(1, 2)]
    func = NS["raises_in_the_lambda"]

    def frames(f):
        with pytest.raises(IndexError) as info:
            f(rows)
        return [(e.name, e.lineno, e.line) for e in traceback.extract_tb(info.value.__traceback__)[1:]]

    jitted = jit(**TEST_OPTIONS)(func)
    baseline = jit(**{**TEST_OPTIONS, "interpreter": False})(func)
    for _ in range(3):
        assert frames(jitted) == frames(func)
        assert frames(baseline) == frames(func)


def test_explain_no_longer_refuses_them():
    for name in ("top", "counter", "parameter_rebound"):
        jitted = jit(**TEST_OPTIONS)(NS[name])
        jit_module.explain(jitted)
        assert "may change" not in jit_module.explain(jitted)
        assert "runs as plain CPython" not in jit_module.explain(jitted)


def _cells() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is types.CellType)


@pytest.mark.parametrize("interpreter", [True, False])
def test_no_cell_or_value_leaks_over_many_iterations(interpreter):
    func = jit(**{**TEST_OPTIONS, "interpreter": interpreter})(NS["top"])
    sentinel = (0, 1, 2, 3)
    rows = [sentinel, *ROWS]
    counter = jit(**{**TEST_OPTIONS, "interpreter": interpreter})(NS["counter"])
    for _ in range(3):  # (compiled, warm)
        func(rows, [0, 1, 2, 3] * 50)
        counter(2000)
    cells, refs = _cells(), sys.getrefcount(sentinel)
    for _ in range(20):
        assert func(rows, [0, 1, 2, 3] * 50)[:4] == NS["top"](rows, [0, 1, 2, 3])
        assert counter(2000) == 2000
    assert _cells() == cells
    assert sys.getrefcount(sentinel) == refs
    assert_native(func)
    assert_native(counter)


def test_the_tier1_code_makes_the_cells_at_entry():
    from jit.frontend import compile_to_tier1
    from jit.frontend import instructions as I

    code = compile_to_tier1(NS["parameter_rebound"])
    scale = code.slot_names.index("scale")
    assert code.cells == frozenset({scale})
    assert code.ops[0] == I.MAKE_CELL and code.args[0] == scale
    assert I.STORE_DEREF in code.ops and I.LOAD_DEREF in code.ops


def test_a_lambda_reading_a_comprehensions_variable_is_refused_and_explained():
    source = "def f(xs):\n    fs = [lambda: x for x in xs]\n    return [g() for g in fs]\n"
    jitted = check(define(source, "f", {}), [1, 2, 3])
    assert "lambda reading a variable of a comprehension around it (x)" in jit_module.explain(jitted)
