"""NumPy scalars against Python numbers and each other (NEP 50, NumPy 2.x): every arithmetic operator and
comparison tier 1 makes native, with the NumPy scalar on either side, over values that reach NumPy's
floating-point events (overflow, underflow, invalid, division by zero) and int64 overflow late in the loop (the
trace is recorded on ordinary values; the events leave native code and the interpreter warns as NumPy does).
Each result's type and value (floats by repr) is CPython's, and the loops run natively."""

from __future__ import annotations

import itertools
import warnings

import pytest
from helpers import check, define

np = pytest.importorskip("numpy")

SOURCE = """
def combos(xs, ys):
    out = []
    for i in range(len(xs)):
        x = xs[i]
        y = ys[i]
        out.append(x + y)
        out.append(y + x)
        out.append(x - y)
        out.append(y - x)
        out.append(x * y)
        out.append(y * x)
        out.append(x / y)
        out.append(y / x)
        out.append(x < y)
        out.append(y <= x)
        out.append(x == y)
        out.append(y != x)
        out.append(x > y)
        out.append(y >= x)
    return out
"""

N = 12
# ordinary values first (the loop is recorded on them), then the edge cases
FLOATS = [0.5, -2.25, 3.0, 1.5, 7.0, -0.75, 2.5, 1e300, 1e-300, -0.0, float("inf"), float("nan")]
INTS = [3, -2, 7, 5, 11, -9, 4, 2**62, -(2**62), 1, 2**53 + 1, 0]
BOOLS = [True, True, True, True, False, True, False, True, True, False, True, False]
# the right operands: the same values, the ordinary ones rotated (so no operand meets itself)
ORDER = [1, 2, 3, 4, 5, 6, 0, 8, 9, 10, 11, 7]

LEFT = {
    "float64": lambda: np.array(FLOATS, dtype=np.float64),
    "float32": lambda: np.array(FLOATS, dtype=np.float32),
    "int64": lambda: np.array(INTS, dtype=np.int64),
    "bool": lambda: np.array(BOOLS, dtype=bool),
    "int32": lambda: np.array([v % 2**31 if abs(v) > 2**31 else v for v in INTS], dtype=np.int32),
    "uint8": lambda: np.array([abs(v) % 256 for v in INTS], dtype=np.uint8),
}
RIGHT = {
    "int": lambda: [INTS[k] for k in ORDER],
    "float": lambda: [FLOATS[k] for k in ORDER],
    "bool": lambda: [BOOLS[k] for k in ORDER],
    **{f"{name} array": (lambda make=make: make()[ORDER]) for name, make in LEFT.items()},
}
# pairs whose loops do not record natively on these values: bool with bool (logical in NumPy: not compiled),
# and uint8 with uint8, ints or bools (x - y below zero warns in NumPy while the loop is recorded)
NOT_NATIVE = {("bool", "bool"), ("bool", "bool array"), ("uint8", "int"), ("uint8", "bool"), ("uint8", "uint8 array")}

CASES = list(itertools.product(LEFT, RIGHT))


@pytest.mark.parametrize(("left", "right"), CASES, ids=[f"{a}-{b}" for a, b in CASES])
def test_scalar_operators_are_numpys(left, right):
    f = define(SOURCE, "combos")
    native = None if (left, right) in NOT_NATIVE else True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (NumPy's, the same in both runs)
        check(f, (LEFT[left](), RIGHT[right]()), native=native)
