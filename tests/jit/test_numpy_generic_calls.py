"""NumPy operations native code has no uop for, on NumPy scalars and arrays, through the generic object path
instead of aborting the recording: NumPy calls with NumPy scalar arguments (boxed as the interpreter boxes
them), ufuncs of arrays (an exact ndarray result is an array again: its elements are read natively), `//`,
`%` and `**` of NumPy scalars and comparisons NumPy computes itself; a numpy.int64 result is unboxed for the
native arithmetic after it. Differential against CPython: the value and type by repr, warnings, errors under
np.errstate, the arrays after the call; jit.stats shows the loop ran natively with no abort."""

from __future__ import annotations

import warnings

import pytest
from helpers import define

import jit as jit_module
from jit import jit

np = pytest.importorskip("numpy")

SOURCE = """
import numpy as np


def hypot(a, b):
    s = 0.0
    for i in range(len(a)):
        s += np.hypot(a[i], b[i])
    return s


def scalar_calls(a, ints):
    s = 0.0
    t = 0
    for i in range(len(a)):
        s += np.arctan2(a[i], 2.0) + round(a[i], 2)
        t += np.clip(ints[i], -50, 50)
    return s, t


def floor_div(ints, d):
    t = 0
    for i in range(len(ints)):
        t += ints[i] // d + ints[i] % 7
    return t


def float_ops(a, d):
    s = 0.0
    for i in range(len(a)):
        s += a[i] // d + a[i] % d + a[i] ** 2
    return s


def ufunc_of_array(a):
    s = 0.0
    for i in range(len(a)):
        roots = np.sqrt(a)
        s += roots[i] + roots[len(a) - 1 - i]
    return s


def argmax(m, out):
    for r in range(len(out)):
        k = np.argmax(m)
        out[r] = k * 2 + r
    return out


def int32_abs(ints):
    t = 0
    for i in range(len(ints)):
        t += abs(ints[i])
    return t
"""


def outcome(f, make, state):
    args = make()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with np.errstate(**state):
            try:
                result = repr(f(*args))
            except (FloatingPointError, ZeroDivisionError, OverflowError) as exc:
                result = f"{type(exc).__name__}: {exc}"
    arrays = [(x.dtype.str, x.tobytes()) for x in args if isinstance(x, np.ndarray)]
    return result, [str(w.message) for w in seen], arrays


STATES = [{}, {"all": "raise"}, {"all": "ignore"}]
STATE_IDS = ["default", "raise", "ignore"]


def a_vector(n=200):
    return np.linspace(0.25, 3.0, n)


def int_vector(n=200, dtype=np.int64):
    return (np.arange(n, dtype=np.int64) * 37 % 211 - 100).astype(dtype)


CASES = {
    "hypot": lambda: (a_vector(), a_vector()[::-1].copy()),
    "scalar_calls": lambda: (a_vector(), int_vector()),
    "floor_div": lambda: (int_vector(), np.int64(3)),
    "float_ops": lambda: (a_vector(), np.float64(0.75)),
    "ufunc_of_array": lambda: (a_vector(60),),
    "argmax": lambda: (a_vector(30), np.zeros(120, dtype=np.int64)),
    "int32_abs": lambda: (int_vector(dtype=np.int32),),
}


def run_native(name, make, state=None, raising=False):
    """Differential test of SOURCE's function name on make()'s arguments under state (or every state); raising:
    a call raises under that state, so a recording that meets the exception is a retry (RAISES, EXCEPTION_RAISED)."""
    plain = define(SOURCE, name, {})
    f = jit(threshold=2)(plain)
    f(*make())
    for state in STATES if state is None else [state]:
        assert outcome(f, make, state) == outcome(plain, make, state), (name, state)
    stats = jit_module.stats(f)
    assert set(stats["aborts_by_code"]) <= ({"RAISES", "EXCEPTION_RAISED"} if raising else set()), stats["aborts"]
    assert stats["native_iterations"] > 100
    return f


@pytest.mark.parametrize("name", sorted(CASES))
def test_numpy_operations_through_the_generic_path(name):
    run_native(name, CASES[name])


@pytest.mark.parametrize("state", STATES, ids=STATE_IDS)
def test_errors_of_numpy_operations_in_the_generic_path(state):
    """Division by zero inside NumPy's own `//` and `%` of numpy.float64 (a warning, a FloatingPointError or
    nothing, as np.errstate says), and of numpy.int64 (NumPy's warning, 0 as its result)."""

    def zero_float():
        return a_vector(), np.float64(0.0)

    def zero_int():
        return int_vector(), np.int64(0)

    run_native("float_ops", zero_float, state, raising=True)
    run_native("floor_div", zero_int, state, raising=True)


def test_an_int64_result_is_unboxed():
    """np.argmax's numpy.int64 feeds native int arithmetic: the uops unbox it (no generic `*` after it)."""
    f = run_native("argmax", CASES["argmax"], {})
    listing = jit_module.dump(f, "uops")
    assert "_UNBOX_NP_SCALAR" in listing
    assert "_BINARY_OP_GENERIC" not in listing.split("_UNBOX_NP_SCALAR", 1)[1].split("_JUMP_TO_TOP", 1)[0]
