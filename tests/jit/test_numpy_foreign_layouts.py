"""Byte-swapped and unaligned arrays (issue 10: the generic path): native code reads and writes neither directly
(jit.arrays.spec_of gives them no spec, so they are plain objects); their element loads and stores go through
the generic object path (PyObject_GetItem/SetItem: NumPy's own conversion and byte order) natively, a
numpy.float64 read unboxed for the arithmetic after it; the results are NumPy's, and the same functions on an
ordinary array run natively with direct element access. (Unaligned arrays are built per call: a deep copy would
align them.)"""

from __future__ import annotations

import pytest
from helpers import define

import jit as jit_module
from jit import jit

np = pytest.importorskip("numpy")

SOURCE = """
def total(a):
    s = 0.0
    for i in range(len(a)):
        s += a[i] * 0.5
    return s


def fill(a):
    for i in range(len(a)):
        a[i] = i * 1.5 - 7
    return a
"""


def byte_swapped(n):
    return (np.arange(n, dtype=np.float64) * 0.75 - 3.0).astype(">f8")


def unaligned(n):
    buffer = np.zeros(8 * n + 1, dtype=np.uint8)
    a = buffer[1:].view(np.float64)
    a[:] = np.arange(n) * 0.75 - 3.0
    assert not a.flags.aligned
    return a


@pytest.mark.parametrize("make", [byte_swapped, unaligned])
def test_reads_and_writes_run_in_cpython_with_numpys_results(make):
    total, fill = define(SOURCE, "total", {}), define(SOURCE, "fill", {})
    jitted_total, jitted_fill = jit(interpreter=True)(total), jit(interpreter=True)(fill)
    for _ in range(3):
        assert repr(jitted_total(make(200))) == repr(total(make(200)))
        got, expected = jitted_fill(make(200)), fill(make(200))
        assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()
    for jitted, generic, direct in (
        (jitted_total, "_UNBOX_NP_FLOAT64", "_ARRAY_LOAD"),
        (jitted_fill, "_STORE_SUBSCR_GENERIC", "_ARRAY_STORE"),
    ):
        assert jit_module.stats(jitted)["native_entries"] > 0, jit_module.stats(jitted)["aborts"]
        listing = jit_module.dump(jitted, "uops")
        assert generic in listing and direct not in listing
    ordinary = jit(interpreter=True)(define(SOURCE, "total", {}))
    assert repr(ordinary(np.arange(300.0))) == repr(total(np.arange(300.0)))
    assert jit_module.stats(ordinary)["native_entries"] > 0
