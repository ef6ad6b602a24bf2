"""NumPy arrays in native loops (issue 10, first slice): arrays of float64, int64 and bool elements read and
written by index, their header (len, shape[k], size, ndim), and NumPy's scalars (numpy.float64, numpy.int64,
numpy.bool) with NEP 50's promotion. Every result, exception, warning and mutation is CPython's (with NumPy),
and the loops run natively (jit.stats)."""

from __future__ import annotations

import warnings

import pytest
from helpers import check, define

import jit as jit_module
from jit import jit

np = pytest.importorskip("numpy")

SOURCE = """
import math

import numpy as np


def total(a):
    s = 0.0
    for i in range(len(a)):
        s += a[i]
    return s


def int_total(a):
    s = 0
    for i in range(a.shape[0]):
        s += a[i] * 3 - 1
    return s


def mixed(a, b):
    out = 0.0
    for i in range(a.size):
        x = a[i]
        y = b[-1 - i]
        if x < y:
            out = out + x * 2 - y / 4
        elif x == y:
            out += 1
        else:
            out -= (x - 0.5) * y
    return out, a.ndim


def last_value(a):
    v = None
    for i in range(len(a)):
        v = a[i]
    return v


def count_true(m, a):
    n = 0
    for i in range(len(m)):
        if m[i]:
            n += 1
        t = a[i] > 2
    return n, t


def negatives(a, n):
    s = 0.0
    for k in range(1, n + 1):
        s += a[-k] * k + a.size - a.ndim
    return s


def out_of_bounds(a, n):
    s = 0.0
    for i in range(n):
        s += a[i]
    return s


def scale(a, factor):
    for i in range(len(a)):
        a[i] = a[i] * factor
    return a


def fill_ints(a, x):
    for i in range(len(a)):
        a[i] = x * i
    return a


def fill_bools(a):
    for i in range(len(a)):
        a[i] = i % 3
    return a


def reversed_view(a):
    v = a[::-2]
    s = 0.0
    for i in range(len(v)):
        s = s * 0.5 + v[i]
        v[i] = s
    return s, a


def read_only(a, write):
    a.flags.writeable = False
    s = 0.0
    for i in range(len(a)):
        s += a[i]
        if write and i == 5:
            a[i] = 0.0
    return s


def wraparound(a):
    s = a[0]
    for i in range(1, len(a)):
        s = s * a[i]
    return s


def divide(a, b):
    s = 0.0
    for i in range(len(a)):
        s += a[i] / b[i]
    return s


def scalar_math(a):
    s = 0.0
    m = 0
    for i in range(len(a)):
        x = a[i]
        s += abs(-x) + float(x) + (+x)
        if -x < 0:
            m += 1
    return s, m


def int_scalar_math(a):
    s = 0
    for i in range(len(a)):
        x = a[i]
        s = s + abs(x) - (-x) + x / 2 + (x != 3) + (x >= 2.5)
    return s


def stencil(a, out):
    n, m = a.shape[0], a.shape[1]
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            out[i, j] = 0.25 * (a[i - 1, j] + a[i + 1][j] + a[i, j - 1] + a[i, j + 1]) - a[i, j]
    return out


def add_in_place(a, rows, cols):
    for i in range(rows):
        for j in range(cols):
            a[i, j] += i * 0.5 - j
            a[-1 - i][j] *= 2
    return a


def matmul(a, b, c):
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            s = 0.0
            for k in range(a.shape[1]):
                s += a[i, k] * b[k, j]
            c[i, j] = s
    return c


def layouts(a, order):
    if order == "F":
        v = np.asfortranarray(a)
    elif order == "T":
        v = a.T
    elif order == "S":
        v = a[::2, ::-3]
    else:
        v = a
    s = 0.0
    for i in range(v.shape[0]):
        for j in range(v.shape[1]):
            s = s * 0.75 + v[i, j] * (i + 1) - v[-1 - i, -1 - j]
            v[i, j] = s
    return s, v


def cube(a):
    s = 0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            for k in range(a.shape[2]):
                s += a[i, j, k] * (i - j) + a[i][j][-1 - k]
    return s, a.size, a.ndim


def grid_out_of_bounds(a, rows, cols):
    s = 0.0
    for i in range(rows):
        for j in range(cols):
            s += a[i, j] + a[i][j]
    return s


def conversions(a, bins):
    counts = [0] * bins
    s = 0.0
    for i in range(len(a)):
        x = a[i]
        counts[int(abs(x) * 3) % bins] += 1
        s += math.sqrt(abs(x)) + math.floor(x) - math.ceil(x) + math.trunc(x)
    return counts, s


def int_conversions(a):
    s = 0.0
    for i in range(len(a)):
        s += math.sqrt(abs(a[i])) + int(a[i]) + float(a[i])
    return s


def aliased(a, b):
    for i in range(1, len(a)):
        a[i] = b[i - 1] * 0.5 + a[i]
        b[i - 1] -= 1.0
    return a


def three_arrays(x, y, flags):
    s = 0.0
    for i in range(len(x)):
        if flags[i]:
            s += x[i] * y[i]
    return s


def single(a, b, out):
    s = np.float32(0)
    t = 0.0
    hits = 0
    for i in range(len(a)):
        x = a[i] * 1.5 + b[i] - 2
        out[i] = x / 3
        s += x
        t += -x + abs(a[i]) + float(a[i])
        if x > 0.1:
            s -= 1
        if a[i] == 0.1 or a[i] < b[i] * 2.5:
            hits += 1
    return s, t, hits, out


def single_mixed(a, d, n):
    s = 0.0
    for i in range(len(a)):
        s += a[i] * d[i] + a[i] * n
    return s


def store_singles(out, x):
    for i in range(len(out)):
        out[i] = x * i
    return out


def collect(a, b):
    out = []
    for i in range(len(a)):
        out.append(a[i] * 2)
        out.append(a[i] > 0.5)
        out.append(b[i] - 1)
    return out


def iterate(a):
    s = 0.0
    count = 0
    for x in a:
        s = s * 0.5 + x
        count += 1
    return s, count


def iterate_and_write(a):
    i = 0
    for x in a:
        if i + 1 < len(a):
            a[i + 1] += x
        i += 1
    return a


def iterate_rows(m):
    s = 0.0
    for row in m:
        for x in row:
            s += x
    return s


def enumerated(a):
    s = 0.0
    last = None
    for i, x in enumerate(a):
        s += x * i
        last = x
    return s, last


def zipped(a, b):
    s = 0
    for x, y in zip(a, b):
        s += x * y
    return s


def enumerated_from(a, start, stop_at):
    s = 0.0
    numbered = enumerate(a, start)
    for i, x in numbered:
        if i >= stop_at:
            break
        s += x * i
    return s, next(numbered, None), list(numbered)[:3]


def zipped_held(a, b):
    first = iter(a)
    s = 0.0
    for x, y in zip(first, b):
        s += x - y
    return s, list(first)[:3]


def zipped_three(a, xs, b):
    s = 0.0
    for x, k, y in zip(a, xs, b):
        s += x * k + y
    return s


def enumerated_rows(m):
    s = 0.0
    for i, row in enumerate(m):
        s += row[0] * i
    return s


def iterate_with_break(a, limit):
    s = 0
    for x in a:
        if x > limit:
            break
        s += x
    else:
        s = -1
    return s


def brighten(image, amount, out):
    for i in range(image.shape[0]):
        for j in range(image.shape[1]):
            v = image[i, j] + amount
            if v > 200:
                v = image[i, j] - 50
            out[i, j] = v
    return out


def small_ints(a, b):
    s = 0
    t = 0.0
    for i in range(len(a)):
        s += a[i] * 3 - b[i]
        t += a[i] / 2 + float(b[i]) - (-a[i])
        a[i] = b[i] + 1
    return s, t, a


TABLE = np.linspace(0.0, 2.0, 64)


def from_a_global(n):
    s = 0.0
    x = None
    for i in range(n):
        x = TABLE[i % 64]
        s += x
    return s, x


def empty_loop(a):
    s = 0.0
    for i in range(a.size):
        s += a[i]
    for j in range(50):
        s += j
    return s
"""


def fn(name: str):
    return define(SOURCE, name)


def floats(n: int = 100):
    return np.linspace(-3.0, 7.0, n)


def ints(n: int = 100):
    return np.arange(n, dtype=np.int64) - 40


def singles(n: int = 100):
    return (np.arange(n) * 0.1 - 2.0).astype(np.float32)


def image():
    return (np.arange(16 * 20).reshape(16, 20) * 7 % 128).astype(np.uint8)


def grid(rows: int = 12, cols: int = 9):
    return (np.arange(rows * cols, dtype=np.float64).reshape(rows, cols) % 7) - 2.5


CASES = [
    ("total", [(floats(),), (np.arange(0.0, 20.0),), (floats(),)]),
    ("int_total", [(ints(),), (ints(7),)]),
    ("mixed", [(floats(), floats()[::-1].copy()), (floats(), floats()), (ints(), floats())]),
    ("last_value", [(floats(),), (ints(),), (np.arange(50) % 3 == 0,)]),
    ("count_true", [(np.arange(60) % 3 == 0, floats(60)), (np.arange(60) % 7 == 1, ints(60))]),
    ("negatives", [(floats(), 100), (floats(), 30)]),
    ("scale", [(floats(), 1.5), (floats(), 3), (floats(), True)]),
    ("fill_ints", [(np.zeros(50, dtype=np.int64), 2.7), (np.zeros(50, dtype=np.int64), -3), (np.zeros(50), 7)]),
    ("fill_bools", [(np.zeros(50, dtype=bool),)]),
    ("reversed_view", [(floats(),), (floats(61),)]),
    ("read_only", [(floats(), False)]),
    ("divide", [(floats(), floats() + 20.0), (ints(), ints() + 1000)]),
    ("scalar_math", [(floats(),), (ints(),)]),
    ("int_scalar_math", [(ints(),)]),
    ("conversions", [(floats(), 7), (floats(30) * 1e3, 5)]),
    ("int_conversions", [(ints(),)]),
    (
        "single",
        [
            (singles(), singles()[::-1].copy(), np.zeros(100, np.float32)),
            (singles() * 3, singles(), np.ones(100, np.float32)),
        ],
    ),
    ("single_mixed", [(singles(), floats(), 3), (singles(), ints(), 7)]),
    (
        "store_singles",
        [(np.zeros(50, np.float32), 0.1), (np.zeros(50, np.float32), 3), (np.zeros(50, np.float32), np.float64(1e-3))],
    ),
    ("collect", [(floats(), ints()), (singles(), ints()), (ints(), np.arange(100) % 2 == 0)]),
    ("iterate", [(floats(),), (ints(),), (singles(),), (np.arange(60) % 3 == 0,), (np.zeros(0),), (floats(),)]),
    ("iterate_and_write", [(floats(),), (ints(),)]),
    ("iterate_with_break", [(ints(), 30), (ints(), 100), (ints(), 20)]),
    ("brighten", [(image(), 30, np.zeros((16, 20), np.uint8)), (image(), 100, np.zeros((16, 20), np.uint8))]),
    (
        "small_ints",
        [
            (ints().astype(np.int32), np.arange(100, dtype=np.uint8)),
            (ints().astype(np.int32), np.arange(100, dtype=np.uint8) + 7),
        ],
    ),
    ("stencil", [(grid(), np.zeros((12, 9))), (grid() * 0.5, np.ones((12, 9)))]),
    ("add_in_place", [(grid(), 12, 9), (grid(), 5, 3)]),
    ("matmul", [(grid(6, 4), grid(4, 5), np.zeros((6, 5)))]),
    ("layouts", [(grid(), "C"), (grid(), "F"), (grid(), "T"), (grid(), "S"), (grid(), "C")]),
    ("cube", [(np.arange(60, dtype=np.int64).reshape(3, 4, 5),), (np.arange(24, dtype=np.int64).reshape(2, 3, 4),)]),
]


@pytest.mark.parametrize(("name", "calls"), CASES, ids=[c[0] for c in CASES])
def test_same_as_cpython_and_native(name, calls):
    check(fn(name), *calls, native=True)


def test_header_reads_are_native():
    f = check(fn("negatives"), (floats(), 100), native=True)
    assert "_ARRAY_SIZE" in jit_module.dump(f, "uops")


def test_results_are_numpys_scalars():
    f = jit(threshold=2)(fn("total"))
    result = f(floats())
    assert type(result) is np.float64 and repr(result) == repr(fn("total")(floats()))
    g = jit(threshold=2)(fn("int_total"))
    assert type(g(ints())) is np.int64


def test_out_of_bounds_raises_numpys_index_error():
    """Recorded in range, then called past the end: native code leaves, the interpreter raises."""
    check(fn("out_of_bounds"), (floats(), 100), (floats(), 120), (floats(), 50), native=True)
    f = jit(threshold=2)(fn("out_of_bounds"))
    f(floats(), 100)
    with pytest.raises(IndexError, match="index 100 is out of bounds for axis 0 with size 100"):
        f(floats(), 101)
    assert jit_module.stats(f)["native_entries"] >= 2


def test_writes_into_a_read_only_array_raise_numpys_error():
    f = jit(threshold=2)(fn("read_only"))
    f(floats(), False)
    with pytest.raises(ValueError, match="read-only"):
        f(floats(), True)
    check(fn("read_only"), (floats(), False), (floats(), True))


def test_int64_wraparound_warns_as_numpy_does():
    """int64 scalar overflow: NumPy warns and wraps; native code leaves and the interpreter does it."""
    a = np.full(80, 3, dtype=np.int64)
    plain = fn("wraparound")
    f = jit(threshold=2)(plain)
    with warnings.catch_warnings(record=True) as seen_plain:
        warnings.simplefilter("always")
        expected = plain(a)
    with warnings.catch_warnings(record=True) as seen_jit:
        warnings.simplefilter("always")
        result = f(a)
    assert type(result) is np.int64 and result == expected
    assert [str(w.message) for w in seen_jit] == [str(w.message) for w in seen_plain]
    assert seen_plain and "overflow" in str(seen_plain[0].message)
    assert jit_module.stats(f)["native_entries"] >= 1


def test_float64_division_by_zero_follows_errstate():
    b = np.ones(100)
    b[60] = 0.0
    plain = fn("divide")
    f = jit(threshold=2)(plain)
    f(floats(), np.ones(100))
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            f(floats(), b)
    with np.errstate(divide="ignore"):
        assert repr(f(floats(), b)) == repr(plain(floats(), b))
    assert jit_module.stats(f)["native_entries"] >= 2


def test_two_dimensional_out_of_bounds_raise_numpys_index_error():
    check(fn("grid_out_of_bounds"), (grid(), 12, 9), (grid(), 12, 10), (grid(), 13, 9), (grid(), 12, 9), native=True)
    f = jit(threshold=2)(fn("grid_out_of_bounds"))
    f(grid(), 12, 9)
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 1 with size 9"):
        f(grid(), 12, 10)


def test_aliased_arrays_see_every_write_in_order():
    """The same array twice, and a view overlapping its base: each write is seen by the next read."""
    base = floats(50)
    plain = fn("aliased")
    f = jit(threshold=2)(plain)
    for make in (lambda a: (a, a), lambda a: (a[1:], a[:-1]), lambda a: (a[:-1], a[1:])):
        expected = plain(*make(base.copy()))
        for _ in range(3):
            got = f(*make(base.copy()))
            assert got.tobytes() == expected.tobytes()
    assert jit_module.stats(f)["native_entries"] >= 3


def test_three_arrays_of_different_dtypes_share_one_tree():
    """An entry type map says ndarray, not dtype: a loop over three arrays needs one tree per combination of
    specs it runs with, not per kind, and stays far below max_trees_per_loop."""
    calls = [(floats(), ints(), np.arange(100) % 2 == 0), (floats(), floats(), np.arange(100) % 3 == 0)]
    f = check(fn("three_arrays"), *calls, native=True)
    trees = jit_module.stats(f)["trees"]
    assert len(trees) <= 2 and not jit_module.stats(f)["limits_hit"]
    assert all(list(tree["entry_kinds"].values())[:3] == ["ndarray"] * 3 for tree in trees)


def test_float32_cast_overflow_warns_as_numpy_does():
    """Storing 1e300 into a float32 array overflows the cast: NumPy warns; native code leaves before it."""
    plain = fn("store_singles")
    f = jit(threshold=2)(plain)
    f(np.zeros(50, np.float32), 1.0)
    with warnings.catch_warnings(record=True) as seen_plain:
        warnings.simplefilter("always")
        expected = plain(np.zeros(50, np.float32), 1e300)
    with warnings.catch_warnings(record=True) as seen_jit:
        warnings.simplefilter("always")
        got = f(np.zeros(50, np.float32), 1e300)
    assert got.tobytes() == expected.tobytes()
    assert [str(w.message) for w in seen_jit] == [str(w.message) for w in seen_plain] != []


def test_iterating_views_and_rows():
    """for x in a over views with negative and non-unit strides is native; over a 2-D array (rows) it runs as
    CPython (a row is a view) and still gives CPython's result."""
    check(fn("iterate"), (floats()[::-3],), (floats()[::2],), (np.asfortranarray(grid())[:, 2],), native=True)
    check(fn("iterate_rows"), (grid(),), (grid(3, 80),))


def test_enumerate_and_zip_over_arrays_read_their_elements():
    """enumerate(a) and zip(a, b) over 1-D arrays: native code advances the array's iterator (NumPy's: a plain
    sequence iterator, which indexes the array) and reads its element as `a[i]` does (a NumPy scalar), so the
    loop closes natively with NumPy's arithmetic, with CPython's types and values (it went through the generic
    iteration, 60 times slower, and before that ended every iteration)."""
    jitted = check(fn("enumerated"), (floats(),), (floats()[::-2],), (np.zeros(0),), native=True)
    ints32 = np.arange(300, dtype=np.int32)
    check(fn("zipped"), (ints(), ints()), (ints32, ints32), (floats(), ints()), native=True)
    a = floats()
    jitted(a)
    before = jit_module.stats(jitted)
    jitted(a)
    after = jit_module.stats(jitted)
    # (one entry, one exit at the loop's end: not one per iteration)
    assert after["exits_to_interpreter"] - before["exits_to_interpreter"] <= 2
    assert after["native_iterations"] - before["native_iterations"] >= len(a)
    listing = jit_module.dump(jitted, "uops")
    assert "_ARRAY_LOAD" in listing and "_ITER_NEXT_GENERIC" not in listing


def test_array_iterators_someone_holds_stay_where_cpython_leaves_them():
    """The iterators are advanced in place: an enumerate left by `break` and an array iterator zip stopped
    early (zip asks the first iterator once more than the shorter second has) give the rest CPython gives;
    a start of enumerate's own; zip of an array, a list and a shorter array; arrays of every dtype, views."""
    floats32 = np.linspace(-2.0, 3.0, 301, dtype=np.float32)
    check(fn("enumerated_from"), (floats(), 7, 200), (floats(), -3, 10**6), (floats32, 0, 150), native=True)
    check(fn("enumerated_from"), (np.arange(0), 0, 5), (np.arange(5), 2, 3))
    check(fn("zipped_held"), (floats(), floats()[::-3]), (ints(), floats()), (floats(), floats()[:0]), native=True)
    check(fn("zipped_three"), (floats(), list(range(250)), ints()[::2]), native=True)
    bools = np.arange(300) % 3 == 0
    check(fn("zipped"), (bools, ints()), (np.arange(300, dtype=np.int32), bools), native=True)


def test_enumerate_over_rows_takes_the_generic_iteration():
    """enumerate(m) over a 2-D array gives rows (views): the generic iteration, CPython's results."""
    check(fn("enumerated_rows"), (grid(),), (grid(3, 80),))


def test_a_global_array_in_a_loop_entered_through_an_entry_stub():
    """The loop's entry type map holds no NumPy kind (the array is a global): its tree has an entry stub, which
    boxes NumPy's scalars at an exit (numpy.float64 results)."""
    check(fn("from_a_global"), 200, 300, 5, native=True)


def test_zero_size_arrays():
    check(fn("empty_loop"), (np.zeros(0),), (floats(),), (np.zeros(0),), native=True)


def test_arrays_of_another_dtype_recompile():
    """A tree specialized on float64 arrays is not entered with int64 arrays (its entry guard fails)."""
    check(fn("total"), (floats(),), (ints(),), (floats(),), (ints(),), native=True)


def test_unsupported_dtypes_run_as_cpython():
    """An array of a dtype native code has no kind for is an object: indexed through the C-API (the generic
    object path), with NumPy's own results."""
    check(fn("total"), (np.arange(50, dtype=np.complex128),), native=True)
