"""NumPy's math ufuncs on scalars in native loops (np.sqrt, np.exp, np.log, np.sin, np.cos, np.abs/np.absolute,
np.floor, np.ceil, np.minimum, np.maximum): on elements of arrays of every dtype, Python floats, ints and bools,
with NumPy's result types (compared by type and repr), over values that reach NumPy's floating-point events late
in the loop (the trace is recorded on ordinary values; an event leaves native code, and NumPy warns or raises
as np.errstate says: the same warnings, the same FloatingPointError). Each loop runs natively (jit.stats), and
the ufunc is guarded (rebinding np.sqrt, or the global np, after compiling is seen)."""

from __future__ import annotations

import warnings

import pytest
from helpers import check, define

import jit as jit_module
from jit import jit

np = pytest.importorskip("numpy")

SOURCE = """
import numpy as np
import numpy
from numpy import sqrt as root


def unary(a):
    out = []
    for i in range(len(a)):
        x = a[i]
        out.append(np.sqrt(x))
        out.append(np.exp(x))
        out.append(np.log(x))
        out.append(np.sin(x))
        out.append(np.cos(x))
        out.append(np.abs(x))
        out.append(np.absolute(x))
        out.append(np.floor(x))
        out.append(np.ceil(x))
    return out


def unary_python(xs):
    out = []
    for x in xs:
        out.append(np.sqrt(x))
        out.append(numpy.exp(x))
        out.append(np.log(x))
        out.append(np.sin(x))
        out.append(root(x))
        out.append(np.cos(x))
    return out


def integral(a):
    out = []
    for i in range(len(a)):
        x = a[i]
        out.append(np.abs(x))
        out.append(np.floor(x))
        out.append(np.ceil(x))
        out.append(np.abs(x - 3))
    return out


def minmax(a, ys):
    out = []
    for i in range(len(a)):
        x = a[i]
        y = ys[i]
        out.append(np.minimum(x, y))
        out.append(np.maximum(x, y))
        out.append(np.minimum(y, x))
        out.append(np.maximum(y, x))
    return out


def norm(a, b):
    s = 0.0
    for i in range(len(a)):
        s += np.sqrt(a[i] * a[i] + b[i] * b[i])
    return s


def exps(a):
    s = 0.0
    for i in range(len(a)):
        s = s + np.exp(a[i]) - np.log(a[i] + 2.0)
    return s


def dots(a, n):
    t = 0.0
    for i in range(n):
        t += np.dot(a, a) * i
    return t


def rows(n, m):
    total = 0.0
    for i in range(n):
        row = np.zeros(m)
        for j in range(m):
            row[j] = np.sqrt(i * j)
        total += np.sum(row) + np.ones(2)[0]
    return total


def clipped(a, low, high):
    s = 0.0
    for i in range(len(a)):
        s += np.minimum(np.maximum(a[i], low), high)
    return s
"""

N = 16
# ordinary values first (each loop records on them), then NumPy's events and edge cases
ORDINARY = [0.5, 1.5, 2.25, 3.0, 4.75, 9.0, 0.125, 7.5]
FLOATS = [*ORDINARY, -1.0, 0.0, -0.0, 1000.0, -1000.0, float("nan"), float("inf"), 1e-310]
INTS = [3, 5, 7, 2, 11, 4, 9, 6, -4, 0, -(2**63), 2**63 - 1, 1, -7, 255, -(2**31)]


def fn(name):
    return define(SOURCE, name, {})


def arrays_of(dtype):
    if dtype in ("float64", "float32"):
        return np.array(FLOATS, dtype=dtype)
    if dtype == "bool":
        return np.array([v % 3 != 0 for v in INTS], dtype=bool)
    info = np.iinfo(dtype)
    return np.array([min(max(v, info.min), info.max) for v in INTS], dtype=dtype)


def quietly(run):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (NumPy's, the same in both runs; compared below)
        return run()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_float_ufuncs_are_numpys(dtype):
    jitted = quietly(lambda: check(fn("unary"), (arrays_of(dtype),), native=True))
    listing = jit_module.dump(jitted, "uops")
    for uop in ("_NP_SQRT", "_NP_UFUNC_LOOP", "_NP_UFUNC_EXACT"):
        assert uop in listing


def test_ufuncs_of_python_numbers_give_numpy_float64():
    """Python floats, ints (past 2**53 too) and the ufunc read through `numpy.`, `np.` or `from numpy import`."""
    xs = [0.5, 2, 3.5, 4, 1.25, 6, 7.0, 8, 2.0**60, 2**60 + 1, -3, -2.5, 0, 1e308, float("nan"), 10**18]
    quietly(lambda: check(fn("unary_python"), (xs,), native=True))


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_integral_ufuncs_keep_numpys_types(dtype):
    """np.abs, np.floor and np.ceil of NumPy ints keep their type (abs wraps at the dtype's minimum, as NumPy's
    loop does, with no warning); of bools they are the bool."""
    quietly(lambda: check(fn("integral"), (arrays_of(dtype),), native=dtype != "bool" or None))


MINMAX_RIGHT = {
    "float": lambda: [FLOATS[(k + 1) % 8] if k < 8 else v for k, v in enumerate(reversed(FLOATS))],
    "int": lambda: [INTS[(k + 3) % 8] for k in range(N)],
    "float64 array": lambda: np.array([*FLOATS[1:8], FLOATS[0], 0.0, -0.0, float("nan"), 5.0, -0.0, 0.0, 1.0, 3.0]),
    "int64 array": lambda: np.array([INTS[(k + 5) % 8] for k in range(N)], dtype=np.int64),
    "float32 array": lambda: np.array(FLOATS[::-1], dtype=np.float32),
}


@pytest.mark.parametrize("left", ["float64", "float32", "int64", "int32", "uint8"])
@pytest.mark.parametrize("right", sorted(MINMAX_RIGHT))
def test_minimum_and_maximum_are_numpys(left, right):
    """NaN on either side wins; of equal values (0.0 and -0.0 too) NumPy returns the second; the result's type
    is NumPy's promotion (NEP 50: a Python int takes the NumPy int's type, and out of its range raises)."""
    a = arrays_of(left)
    ys = MINMAX_RIGHT[right]()
    native = None if (left == "uint8" and right == "int") else True  # (a negative Python int: OverflowError)
    quietly(lambda: check(fn("minmax"), (a, ys), native=native))


def test_python_int_out_of_a_small_ints_range_raises_overflow_error():
    a = np.arange(40, dtype=np.int32)
    ys = [1] * 40
    ys[30] = 2**40
    check(fn("minmax"), (a, [1] * 40), (a, ys), native=True)


def warnings_and_result(f, *args):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = f(*args)
    return repr(result), [(w.category, str(w.message)) for w in seen]


@pytest.mark.parametrize(
    ("name", "bad", "message"),
    [
        ("norm", (1e200, 1e200), "overflow encountered in scalar multiply"),
        ("exps", (800.0,), "overflow encountered in exp"),
        ("exps", (-2.5,), "invalid value encountered in log"),
        ("exps", (-2.0,), "divide by zero encountered in log"),
    ],
)
def test_events_warn_and_raise_as_numpy_says(name, bad, message):
    """An event late in a native loop: the same warnings as CPython under the default error state, NumPy's
    FloatingPointError under np.errstate(all="raise"), nothing under "ignore"; native code ran each time."""
    plain = fn(name)
    f = jit(threshold=2)(plain)

    def inputs():
        arrays = [np.linspace(0.5, 3.0, 200) for _ in bad]
        for array, value in zip(arrays, bad):
            array[150] = value
        return arrays

    f(*[np.linspace(0.5, 3.0, 200) for _ in bad])
    expected = warnings_and_result(plain, *inputs())
    assert any(message == text for _, text in expected[1]), expected
    assert warnings_and_result(f, *inputs()) == expected
    with np.errstate(all="raise"):
        with pytest.raises(FloatingPointError, match=message):
            plain(*inputs())
        with pytest.raises(FloatingPointError, match=message):
            f(*inputs())
    with np.errstate(all="ignore"):
        assert warnings_and_result(f, *inputs()) == warnings_and_result(plain, *inputs())
    stats = jit_module.stats(f)
    assert stats["native_entries"] >= 4 and not stats["aborts"]


def test_sqrt_of_a_negative_is_nan_with_numpys_warning():
    plain = fn("norm")
    f = jit(threshold=2)(plain)
    a = np.linspace(0.5, 3.0, 100)
    f(a, a)
    b = a.copy()
    b[70] = np.nan
    assert warnings_and_result(f, a, b) == warnings_and_result(plain, a, b)
    with np.errstate(invalid="raise"):
        assert repr(f(a, b)) == repr(plain(a, b))  # (sqrt of a NaN is no event)
    source = "import numpy as np\ndef roots(xs):\n    out = []\n    for x in xs:\n        out.append(np.sqrt(x))\n    return out\n"
    roots = define(source, "roots", {})
    g = jit(threshold=2)(roots)
    xs = [float(k) for k in range(60)] + [-1.0, 4.0]
    assert warnings_and_result(g, xs) == warnings_and_result(roots, xs)
    assert "invalid value encountered in sqrt" in str(warnings_and_result(roots, xs)[1])
    assert jit_module.stats(f)["native_entries"] >= 2 and jit_module.stats(g)["native_entries"] >= 1


def test_rebinding_the_ufunc_or_the_module_is_seen():
    """The global np and its attribute are guarded (at the trace's entry): a replaced np.sqrt, or np rebound to
    another module, is called as CPython would."""
    namespace: dict = {}
    f = define(SOURCE, "norm", namespace)
    jitted = jit(threshold=2)(f)
    a = np.linspace(0.5, 3.0, 100)
    assert repr(jitted(a, a)) == repr(f(a, a))
    original = np.sqrt
    try:
        np.sqrt = lambda x: x  # (the module's attribute, as a monkeypatch would)
        assert repr(jitted(a, a)) == repr(f(a, a))
    finally:
        np.sqrt = original

    class FakeNumpy:
        @staticmethod
        def sqrt(x):
            return -1.0

    namespace["np"] = FakeNumpy
    assert jitted(a, a) == f(a, a) == -100.0
    namespace["np"] = np
    assert repr(jitted(a, a)) == repr(f(a, a))
    assert jit_module.stats(jitted)["native_entries"] >= 2


def test_clipping_runs_natively():
    a = np.linspace(-3.0, 3.0, 300)
    a[200] = np.nan
    quietly(lambda: check(fn("clipped"), (a, -1.0, 2), (a.astype(np.float32), -1, 2.5), native=True))


def test_other_numpy_calls_run_natively_through_the_generic_path():
    """np.sum in a loop (np.zeros and np.ones are native, tests/jit/test_numpy_new_arrays.py) is a call through
    the generic object path: NumPy computes it, and its numpy.float64 result is unboxed for the native arithmetic
    after it (NumPy's promotion: a float plus a numpy.float64 is a numpy.float64). No abort."""
    jitted = check(fn("rows"), (30, 200), (3, 5), native=True)
    stats = jit_module.stats(jitted)
    assert not stats["aborts"], stats["aborts"]
    listing = jit_module.dump(jitted, "uops")
    assert "_CALL_GENERIC (<function sum" in listing and "_UNBOX_NP_FLOAT64" in listing


def test_a_numpy_call_through_the_generic_path_leaks_nothing():
    """np.dot(a, b) 20000 times in a loop: each result (a new numpy.float64) is released after it is unboxed;
    traced memory does not grow and the arrays' reference counts are as before."""
    import sys
    import tracemalloc

    f = jit(threshold=2)(fn("dots"))
    a = np.linspace(-1.0, 1.0, 8)
    assert repr(f(a, 20)) == repr(fn("dots")(a, 20))
    before = sys.getrefcount(a)
    tracemalloc.start()
    try:
        f(a, 20000)
        first = tracemalloc.get_traced_memory()[0]
        f(a, 20000)
        grown = tracemalloc.get_traced_memory()[0] - first
    finally:
        tracemalloc.stop()
    assert grown < 20000, grown
    assert sys.getrefcount(a) == before
    assert jit_module.stats(f)["native_entries"] > 0 and not jit_module.stats(f)["aborts"]
