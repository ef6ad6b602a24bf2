"""numpy.empty, numpy.zeros and numpy.ones in native loops (jit.specialize_array_new): the shape as an int, a
constant tuple or a tuple the loop builds, the dtype positional, by keyword or absent (float64), every dtype
native code handles; the arrays' elements read and written natively, arrays escaping the loop (returned,
appended, kept in a variable across iterations) with CPython's dtype, shape, flags and bytes; a negative
dimension met late in the loop raising NumPy's ValueError; no reference leaked (the arrays a loop makes and
drops are freed: traced memory does not grow; an escaping array has no extra reference). Each loop runs
natively (jit.stats), and the listing shows the native allocation."""

from __future__ import annotations

import sys
import tracemalloc

import pytest
from helpers import check, define

import jit as jit_module
from jit import jit

np = pytest.importorskip("numpy")

SOURCE = """
import numpy as np
import numpy
from numpy import zeros

F32 = np.dtype("float32")


def rows(n, m):
    total = 0.0
    for i in range(n):
        row = np.zeros(m)
        for j in range(m):
            row[j] = i * j + 0.5
        total += row[m - 1] + row[0]
    return total


def kept(n, m):
    b = c = d = e = None
    out = []
    for i in range(n):
        a = np.zeros((m, 2), dtype=np.int64)
        b = np.ones(m, np.float32)
        c = numpy.empty((2, m, 3), dtype="int32")
        d = zeros(3, bool)
        e = np.ones((m,), dtype=np.uint8)
        a[m - 1, 1] = i
        b[0] = b[1] + 0.25
        for j in range(m):
            for k in range(3):
                c[0, j, k] = i + j
                c[1, j, k] = k
        d[i % 3] = True
        e[m - 1] = e[0] + 1
        if i % 4 == 0:
            out.append(a)
    return out, (b, c, d, e)


def dtypes(n):
    out = []
    for i in range(n):
        out.append(np.zeros(i % 3 + 1, dtype=float))
        out.append(np.ones(2, dtype=int))
        out.append(np.ones(2, dtype=F32))
        out.append(np.zeros(1, dtype=np.int32))
    return out


def sizes(ns):
    total = 0
    for n in ns:
        a = np.zeros(n, dtype=np.int64)
        total += len(a) + a.size
    return total


def grid(n, m):
    g = np.zeros((n, m))
    for i in range(n):
        row = np.ones(m)
        for j in range(m):
            g[i, j] = row[j] * (i + j)
    return g


def churn(n, m):
    s = 0.0
    for i in range(n):
        a = np.zeros(m)
        a[i % m] = 1.0
        s += a[i % m]
    return s
"""


def fn(name):
    return define(SOURCE, name, {})


def test_zeros_in_a_loop_is_native():
    jitted = check(fn("rows"), (60, 7), (3, 1), native=True)
    listing = jit_module.dump(jitted, "uops")
    assert "_ARRAY_ZEROS" in listing
    assert "NUMPY_CALL" not in str(jit_module.stats(jitted)["aborts"])


def test_arrays_escape_with_numpys_dtype_shape_flags_and_values():
    """Returned, appended to a list, kept in a variable from one iteration to the next: shapes as an int, a
    constant tuple and a tuple of variables; dtypes positional, by keyword, as a type, a str and a Python type."""
    jitted = check(fn("kept"), (200, 4), (90, 1), native=True)
    listing = jit_module.dump(jitted, "uops")
    for uop in ("_ARRAY_ZEROS", "_ARRAY_ONES", "_ARRAY_EMPTY"):
        assert uop in listing


def test_python_types_and_dtype_objects_as_dtypes():
    check(fn("dtypes"), 30, native=True)


def test_negative_dimension_late_in_the_loop_raises_numpys_value_error():
    ns = [3, 0, 5, 2] * 10 + [-1, 4]
    check(fn("sizes"), (ns,), ([1, 2, 3] * 12,), native=True)


def test_a_new_row_per_iteration_fills_a_grid():
    check(fn("grid"), (30, 5), native=True)


def test_arrays_made_and_dropped_are_freed():
    """Each iteration's array is released where the variable is assigned again: 3000 arrays of 8 KB leaked
    would be 24 MB of traced memory (NumPy reports its data allocations to tracemalloc)."""
    f = jit(interpreter=True)(fn("churn"))
    f(100, 1000)  # (compiled)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        assert f(3000, 1000) == 3000.0
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 2_000_000, grown
    assert jit_module.stats(f)["native_iterations"] > 3000


def test_an_escaping_array_holds_no_extra_reference():
    f = jit(interpreter=True)(fn("grid"))
    f(20, 4)
    g = f(40, 4)
    assert sys.getrefcount(g) == sys.getrefcount(fn("grid")(40, 4))
    out, last = jit(interpreter=True)(fn("kept"))(60, 3)
    plain_out, plain_last = fn("kept")(60, 3)
    assert [sys.getrefcount(a) for a in out] == [sys.getrefcount(a) for a in plain_out]
    assert [sys.getrefcount(a) for a in last] == [sys.getrefcount(a) for a in plain_last]


def test_other_arguments_still_abort_cleanly():
    source = """
import numpy as np


def fortran(n):
    out = []
    for i in range(n):
        out.append(np.zeros((2, 2), order="F"))
    return out


def wide(n):
    out = []
    for i in range(n):
        out.append(np.zeros(3, dtype=np.int16))
    return out
"""
    for name in ("fortran", "wide"):
        jitted = check(define(source, name, {}), 40)
        assert "numpy.zeros" in str(jit_module.stats(jitted)["aborts"])
