"""Traps: every way a compiled trace must give up and leave to the interpreter mid-loop, and the corners where
native arithmetic could differ from CPython (overflow past 64 bits, type changes, division by zero, signed
zeros, nan and inf, Python's floor division and modulo, exact int/float comparisons, math domain errors).

Each test is differential (``check``: plain CPython vs @jit, same value or same exception and message) and
demands that native code ran (``native=True``): the trap happens after the loop compiled.
"""

import math

import pytest
from helpers import check, define

import jit as jit_module

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def stats(f):
    return jit_module.stats(f)


# --- int overflow mid-loop ------------------------------------------------------------------------------


def sum_past_int64(start, n):
    total = start
    for i in range(n):
        total += i
    return total


def sum_below_int64(start, n):
    total = start
    for i in range(n):
        total -= i
    return total


def product_overflow(n, factor):
    p = 1
    for i in range(n):
        p *= factor
    return p


def shift_overflow(n, base):
    acc = 0
    for i in range(n):
        acc ^= base << i
    return acc


def negate_min(base, n):
    count = 0
    last = 0
    for i in range(n):
        t = base - i
        last = -t
        if last > 0:
            count += 1
    return count, last


def abs_min(base, n):
    total = 0
    for i in range(n):
        t = base - i
        total = abs(t) - total
    return total


@pytest.mark.parametrize(
    "func, args",
    [
        (sum_past_int64, (INT64_MAX - 100_000, 1000)),
        (sum_past_int64, (INT64_MAX - 1000, 200)),
        (sum_below_int64, (INT64_MIN + 100_000, 1000)),
        (product_overflow, (100, 3)),
        (product_overflow, (100, -3)),
        (product_overflow, (70, 2)),
        (product_overflow, (70, -2)),
        (shift_overflow, (80, 1)),
        (shift_overflow, (80, 3)),
        (shift_overflow, (80, -1)),
        (shift_overflow, (80, -3)),
        (shift_overflow, (80, 0)),
        (negate_min, (INT64_MIN + 100, 110)),
        (abs_min, (INT64_MIN + 100, 110)),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_int_overflow_mid_loop(func, args):
    jitted = check(func, args, native=True)
    assert stats(jitted)["exits_to_interpreter"] >= 1


CONSTANT_FACTORS = (2, 3, 7, 1000, 2**31 + 1, 2**62, INT64_MAX, -2, -3, -7, -(2**62), INT64_MIN + 1, INT64_MIN)


@pytest.mark.parametrize("factor", CONSTANT_FACTORS)
@pytest.mark.parametrize("constant_first", [False, True])
def test_product_by_a_constant_crosses_its_bounds(factor, constant_first):
    """x * c with c a constant checks x against the interval where the product fits (not the overflow flag):
    x walks across both ends of that interval, the products past 64 bits leave to the interpreter exactly."""
    product = f"{factor} * x" if constant_first else f"x * {factor}"
    source = f"""
def f(start, n, step):
    acc = 0
    x = start
    for i in range(n):
        acc ^= {product}
        x += step
    return acc
"""
    f = define(source, "f")
    hi, lo = INT64_MAX // abs(factor), -(INT64_MIN // -abs(factor))  # (the bounds, for a positive factor)
    for edge in (hi, lo, -hi, -lo):
        check(f, (edge - 1500, 3000, 1), (edge + 1500, 3000, -1), native=True)
    inside = check(f, (-1500, 3000, 1), native=True)  # (no product leaves i64: no exit but the loop's end)
    before = stats(inside)["exits_to_interpreter"]
    inside(-1500, 3000, 1)
    assert stats(inside)["exits_to_interpreter"] - before <= 1


def test_overflow_result_is_exact_python_int():
    jitted = check(sum_past_int64, (INT64_MAX - 100_000, 1000), native=True)
    result = jitted(INT64_MAX - 100_000, 1000)
    assert result == INT64_MAX - 100_000 + 999 * 1000 // 2
    assert result > INT64_MAX


def int_pow_loop(n, base):
    total = 0
    for i in range(n):
        total += base**i
    return total


def int_pow_mixed(n):
    total = 0
    for i in range(n):
        total += (i % 7 - 3) ** (i % 5) + 2 ** (i % 64)
    return total


@pytest.mark.parametrize("args", [(70, 2), (70, -2), (50, 3), (50, -3), (10, 0), (10, 1), (10, -1), (100, 10)])
def test_int_power_overflow(args):
    check(int_pow_loop, args, native=True)


def test_int_power_many_bases_and_exponents():
    check(int_pow_mixed, 300, native=True)


# --- a variable changing type mid-loop ------------------------------------------------------------------


def int_then_float(n, switch):
    x = 0
    for i in range(n):
        if i == switch:
            x = 0.5
        x = x + 1
    return x


def int_then_none(n, switch):
    x = 0
    count = 0
    for i in range(n):
        if i == switch:
            x = None
        if x is None:
            count += 1
        else:
            x += i
    return x, count


def float_then_int(n, switch):
    x = 0.25
    total = 0.0
    for i in range(n):
        if i == switch:
            x = 3
        total += x * 2
        x = x + 1
    return x, total


def int_float_alternating(n):
    x = 0
    total = 0
    for i in range(n):
        if i % 100 == 99:
            x = float(i)
        else:
            x = i
        total += x
    return total


@pytest.mark.parametrize(
    "func, args",
    [
        (int_then_float, (2000, 1000)),
        (int_then_float, (300, 5)),
        (int_then_none, (2000, 1000)),
        (float_then_int, (2000, 1000)),
        (int_float_alternating, 1000),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_variable_changes_type_mid_loop(func, args):
    check(func, args, native=True)


# --- ZeroDivisionError after many iterations -------------------------------------------------------------

ZERO_DIVISION = """
def f(n, zero_at):
    total = 0
    for i in range(n):
        d = {convert}(i - zero_at)
        total = total + {numerator} {op} d
    return total
"""


@pytest.mark.parametrize("op", ["/", "//", "%"])
@pytest.mark.parametrize("numbers", ["int", "float", "int/float", "float/int"])
def test_zero_division_after_1000_iterations(op, numbers):
    numerator_kind, _, divisor_kind = numbers.partition("/")
    divisor_kind = divisor_kind or numerator_kind
    source = ZERO_DIVISION.format(
        convert="float" if divisor_kind == "float" else "",
        numerator="1000.5" if numerator_kind == "float" else "1000",
        op=op,
    )
    f = define(source, "f")
    jitted = check(f, (1500, 1000), (1000, 999), native=True)
    with pytest.raises(ZeroDivisionError) as plain:
        f(1500, 1000)
    with pytest.raises(ZeroDivisionError) as native:
        jitted(1500, 1000)
    assert str(native.value) == str(plain.value)
    assert native.traceback[-1].lineno == plain.traceback[-1].lineno


# --- signed zeros, nan, inf ------------------------------------------------------------------------------

SPECIALS = [0.0, -0.0, 1.5, -1.5, math.inf, -math.inf, math.nan, 1e308, -1e308, 5e-324, -5e-324, 2.0, -2.0]


def float_specials(values):
    out = []
    for x in values:
        out.append(x == x)
        out.append(x != x)
        out.append(x < 0.0)
        out.append(x <= 0.0)
        out.append(x == 0.0)
        out.append(x == -0.0)
        out.append(x > 1.0)
        out.append(-x)
        out.append(x * 0.0)
        out.append(x + -0.0)
        out.append(-0.0 + x)
        out.append(x - x)
        out.append(x * x)
        out.append(x * 2.0)
        out.append(math.copysign(1.0, x))
        out.append(math.copysign(x, -1.0))
        out.append(abs(x))
        out.append(bool(x))
        out.append(not x)
        out.append(math.isnan(x))
        out.append(math.isinf(x))
        out.append(math.isfinite(x))
    return out


def float_min_max(values):
    out = []
    for x in values:
        out.append(min(x, 0.0))
        out.append(min(0.0, x))
        out.append(max(x, 0.0))
        out.append(max(0.0, x))
        out.append(min(x, -0.0))
        out.append(max(-0.0, x))
        out.append(min(x, math.nan))
        out.append(max(math.nan, x))
        out.append(min(x, 1.0, -1.0))
        out.append(max(x, 1.0, -1.0))
    return out


def float_pairs(xs, ys):
    out = []
    for i in range(len(xs)):
        x = xs[i]
        y = ys[i]
        out.append(x == y)
        out.append(x != y)
        out.append(x < y)
        out.append(x >= y)
        out.append(x + y)
        out.append(x - y)
        out.append(x * y)
        out.append(min(x, y))
        out.append(max(x, y))
    return out


def nan_self_compare(n):
    nan = math.nan
    eq = 0
    ne = 0
    for i in range(n):
        x = nan * i
        if x == x:
            eq += 1
        if x != x:
            ne += 1
    return eq, ne


def signed_zero_compare(n):
    same = 0
    sign = 0.0
    for i in range(n):
        z = -0.0 * i
        if z == 0.0:
            same += 1
        if -0.0 == 0.0:
            same += 1
        sign += math.copysign(1.0, z)
    return same, sign


def test_float_specials():
    check(float_specials, (SPECIALS,), native=True)


def test_float_min_max_nan_and_signed_zero():
    check(float_min_max, (SPECIALS,), native=True)


def test_float_pairs_of_specials():
    xs = [x for x in SPECIALS for _ in SPECIALS]
    ys = [y for _ in SPECIALS for y in SPECIALS]
    check(float_pairs, (xs, ys), native=True)


def test_nan_never_equals_itself():
    jitted = check(nan_self_compare, 500, native=True)
    assert jitted(500) == (0, 500)


def test_negative_zero_equals_zero():
    jitted = check(signed_zero_compare, 500, native=True)
    same, sign = jitted(500)
    assert same == 1000
    assert sign == -500.0  # -0.0 * i is -0.0 for every i >= 0: copysign gives -1.0 each time


# --- branches, exits inside expressions -------------------------------------------------------------------


def branch_flip(n, flip):
    total = 0
    for i in range(n):
        if i < flip:
            total += i
        else:
            total -= 2 * i
    return total


def branch_flip_float(n, flip):
    total = 0.0
    x = 0.5
    for i in range(n):
        if x < flip:
            total += x
        else:
            total -= x * 0.5
        x += 1.0
    return total


@pytest.mark.parametrize("func, args", [(branch_flip, (2000, 1000)), (branch_flip_float, (2000, 1000.0))])
def test_branch_flips_after_1000_iterations(func, args):
    jitted = check(func, args, native=True)
    s = stats(jitted)
    assert s["side_traces"] >= 1 or len(s["trees"]) >= 2, s


def exit_in_nested_expression(n, a, b):
    total = 0
    for i in range(n):
        total += a * (b // (i - 500))
    return total


def overflow_in_nested_expression(n, a, big):
    total = 0
    for i in range(n):
        total += a - (i + (big * (i + 1)) % 1000)
    return total


def exit_in_call_arguments(n, k):
    total = 0.0
    for i in range(n):
        total += max(1.0 * i, 2.0 + k / (i - 700))
    return total


@pytest.mark.parametrize(
    "func, args",
    [
        (exit_in_nested_expression, (1000, 3, 7)),
        (exit_in_nested_expression, (499, 3, -7)),
        (overflow_in_nested_expression, (1000, 5, 2**62 // 600)),
        (exit_in_call_arguments, (1000, 3.0)),
        (exit_in_call_arguments, (600, 3.0)),
    ],
)
def test_exit_inside_nested_expression(func, args):
    check(func, args, native=True)


# --- floor division and modulo of negative numbers ----------------------------------------------------------

INT_VALUES = [0, 1, -1, 2, -2, 3, -3, 7, -7, 10, -10, 255, -256, 10**18, -(10**18), INT64_MAX, INT64_MIN]
FLOAT_VALUES = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 3.0, -3.0, 7.25, -7.25, 1e300, -1e300, 1e-300, -1e-300]
FLOAT_VALUES += [5e-324, math.inf, -math.inf, math.nan, 2.0**53, -(2.0**53) - 2.0, 0.1, -0.1]


def div_mod_pairs(xs, ys):
    out = []
    for i in range(len(xs)):
        x = xs[i]
        y = ys[i]
        out.append(x // y)
        out.append(x % y)
    return out


def _pairs(left, right):
    xs = [x for x in left for y in right if y != 0]
    ys = [y for x in left for y in right if y != 0]
    return xs, ys


@pytest.mark.parametrize(
    "left, right",
    [(INT_VALUES, INT_VALUES), (FLOAT_VALUES, FLOAT_VALUES), (INT_VALUES, FLOAT_VALUES), (FLOAT_VALUES, INT_VALUES)],
    ids=["int-int", "float-float", "int-float", "float-int"],
)
def test_floor_division_and_modulo_against_cpython(left, right):
    check(div_mod_pairs, _pairs(left, right), native=True)


def div_mod_range(lo, hi, d):
    total = 0
    for x in range(lo, hi):
        total += (x // d) * 1000 + x % d
    return total


@pytest.mark.parametrize("d", [1, -1, 3, -3, 7, -7, 64, -64])
def test_floor_division_and_modulo_over_range(d):
    check(div_mod_range, (-300, 300, d), native=True)


def float_div_mod_range(lo, hi, d):
    total = 0.0
    for i in range(lo, hi):
        x = i * 0.375
        total += (x // d) * 1000.0 + x % d
    return total


@pytest.mark.parametrize("d", [1.0, -1.0, 0.5, -0.5, 3.0, -3.0, 0.1, -0.1, math.inf, -math.inf])
def test_float_floor_division_and_modulo_over_range(d):
    check(float_div_mod_range, (-300, 300, d), native=True)


# --- exact comparisons near 2**53 and 2**63 ---------------------------------------------------------------

NEAR_BIG_INTS = [2**53 + k for k in range(-3, 4)] + [-(2**53) + k for k in range(-3, 4)]
NEAR_BIG_INTS += [INT64_MAX - k for k in range(4)] + [INT64_MIN + k for k in range(4)] + [0, 1, -1]
NEAR_BIG_FLOATS = [2.0**53, 2.0**53 + 2, 2.0**53 - 1, -(2.0**53), 2.0**63, -(2.0**63), 2.0**63 - 1024]
NEAR_BIG_FLOATS += [9.223372036854775e18, -9.223372036854775e18, 0.5, -0.5, math.inf, -math.inf, math.nan, 0.0, -0.0]


def int_float_compare(ints, floats):
    out = []
    for i in range(len(ints)):
        a = ints[i]
        b = floats[i]
        out.append(a < b)
        out.append(a <= b)
        out.append(a == b)
        out.append(a != b)
        out.append(a > b)
        out.append(a >= b)
        out.append(b < a)
        out.append(b == a)
        out.append(b >= a)
    return out


def test_exact_int_float_comparisons_near_2_53_and_2_63():
    ints = [a for a in NEAR_BIG_INTS for _ in NEAR_BIG_FLOATS]
    floats = [b for _ in NEAR_BIG_INTS for b in NEAR_BIG_FLOATS]
    check(int_float_compare, (ints, floats), native=True)


def int_to_float_sum(start, n):
    total = 0.0
    equal = 0
    for i in range(n):
        v = start + i
        total += v / 3
        if v == float(v):
            equal += 1
    return total, equal


@pytest.mark.parametrize("start, n", [(2**53 - 50, 60), (-(2**53) + 60, 70), (2**52, 50)])
def test_int_true_division_and_conversion_near_2_53(start, n):
    check(int_to_float_sum, (start, n), native=True)


def int_vs_own_float(start, n):
    counts = [0, 0, 0]
    for i in range(n):
        v = start + i
        f = float(v)
        if v == f:
            counts[0] += 1
        if v < f:
            counts[1] += 1
        if f < v:
            counts[2] += 1
    return counts


@pytest.mark.parametrize("start", [2**53 - 50, -(2**53) - 50, 2**63 - 200, -(2**63), 2**62 - 100])
def test_int_compared_with_its_rounded_float(start):
    check(int_vs_own_float, (start, 200), native=True)


# --- float powers -----------------------------------------------------------------------------------------


def float_pow_pairs(xs, ys):
    out = []
    for i in range(len(xs)):
        out.append(xs[i] ** ys[i])
    return out


def test_float_power_negative_base_integer_exponent():
    bases = [-2.0, -0.5, -1.0, -3.0, 2.0, 0.5, -1e-3]
    exponents = [0.0, 1.0, 2.0, 3.0, -1.0, -2.0, -3.0, 10.0, 11.0, -0.0]
    xs = [x for x in bases for _ in exponents]
    ys = [y for _ in bases for y in exponents]
    check(float_pow_pairs, (xs, ys), native=True)


def test_float_power_special_values():
    bases = [0.0, -0.0, -1.0, math.inf, -math.inf, math.nan, 1e300, -1e-300]
    exponents = [0.0, 3.0, 0.5, -2.0, math.inf, -math.inf, math.nan]
    pairs = [(x, y) for x in bases for y in exponents if not (x == 0.0 and y < 0)]
    # pairs ordered so the loop compiles on ordinary values first
    pairs = [(2.0, 2.0)] * 4 + pairs
    check(float_pow_pairs, ([x for x, _ in pairs], [y for _, y in pairs]), native=True)


def float_pow_constant_exponents(xs):
    out = []
    for x in xs:
        out.append(x**2.0)
        out.append(x**-1.0)
        out.append(x**0.5 if x >= 0.0 else 0.0)
        out.append(x**3.0)
        out.append(x**-2.0)
        out.append(pow(x, 2.0))
    return out


def test_float_power_by_constant_is_libm_pow():
    """CPython calls libm's pow(); LLVM must not rewrite pow(x, 2.0) into x * x or pow(x, -1.0) into 1.0 / x,
    which round differently for some x (regression: 291.1485861149904 ** 2.0 was one ulp off)."""
    import random

    rng = random.Random(1234)
    xs = [291.1485861149904, 502.1606718772646, 3.384391351029189e-08, -313.7314152962156, -7255.55623968518]
    xs += [rng.uniform(-1000.0, 1000.0) for _ in range(400)] + [rng.uniform(-1e-5, 1e-5) for _ in range(100)]
    check(float_pow_constant_exponents, (xs,), native=True)


def float_pow_fraction(n, base):
    out = []
    for i in range(n):
        out.append((base + i) ** 0.5)
    return out


@pytest.mark.parametrize("base", [-20.0, -10.5])
def test_float_power_fraction_of_negative_base_is_complex(base):
    jitted = check(float_pow_fraction, (60, base), native=True)
    result = jitted(60, base)
    assert all(isinstance(x, complex) for x in result[: -int(base)])
    assert isinstance(result[0], complex)
    assert isinstance(result[-1], float)


def float_pow_fraction_from_positive(n, base):
    total = 0.0
    for i in range(n):
        total += (base - i) ** 0.5
    return total


def test_float_power_fraction_turns_complex_mid_loop():
    # positive bases first (native), then negative: the result turns complex and leaves native code
    jitted = check(float_pow_fraction_from_positive, (200, 100.0), native=True)
    assert isinstance(jitted(200, 100.0), complex)


def pow_overflow(n, base):
    total = 0.0
    for i in range(n):
        total += base ** float(i)
    return total


def test_float_power_overflow_raises():
    check(pow_overflow, (2000, 1.5), (100, 1.5), native=True)


def zero_to_negative_power(n):
    total = 0.0
    for i in range(n):
        total += (i - 300.0) ** -1.0
    return total


def test_zero_to_negative_power_raises():
    check(zero_to_negative_power, 500, 299, native=True)


# --- math domain errors, float -> int conversions --------------------------------------------------------


def sqrt_loop(n, start):
    total = 0.0
    for i in range(n):
        total += math.sqrt(start - i)
    return total


def log_loop(n, start):
    total = 0.0
    for i in range(n):
        total += math.log(start - i)
    return total


def exp_loop(n):
    total = 0.0
    for i in range(n):
        total += math.exp(i * 1.0)
    return total


def acos_loop(n):
    total = 0.0
    for i in range(n):
        total += math.acos(i / 500)
    return total


@pytest.mark.parametrize(
    "func, args",
    [
        (sqrt_loop, (2000, 1000.0)),
        (sqrt_loop, (2000, 1000)),
        (log_loop, (2000, 1000.0)),
        (log_loop, (1001, 1000.0)),
        (exp_loop, 2000),
        (acos_loop, 1000),
    ],
)
def test_math_domain_and_range_errors(func, args):
    check(func, args, native=True)


def test_sqrt_of_negative_message():
    jitted = check(sqrt_loop, (2000, 1000.0), native=True)
    with pytest.raises(ValueError, match="math domain error"):
        jitted(2000, 1000.0)


def float_to_int_conversions(values):
    out = []
    for x in values:
        out.append(int(x))
        out.append(round(x))
        out.append(math.floor(x))
        out.append(math.ceil(x))
        out.append(math.trunc(x))
    return out


@pytest.mark.parametrize(
    "bad",
    [math.nan, math.inf, -math.inf, 1e19, -1e19, 9.3e18, 2.0**63, -(2.0**63), 1e300],
    ids=repr,
)
def test_float_to_int_of_nan_inf_huge(bad):
    values = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.7, -3.7, 1e15 + 0.5, 4.5, 0.49999999999999994] * 3 + [bad, 1.0]
    check(float_to_int_conversions, (values,), native=True)


def test_round_half_to_even():
    values = [k + 0.5 for k in range(-20, 20)] + [k * 0.1 for k in range(-50, 50)]
    check(float_to_int_conversions, (values,), native=True)


# --- list and tuple reads ---------------------------------------------------------------------------------


def sum_by_index(seq):
    total = 0
    for i in range(len(seq)):
        total += seq[i]
    return total


def sum_negative_index(seq):
    total = 0
    for i in range(1, len(seq) + 1):
        total = total * 3 % 1000003 + seq[-i]
    return total


def read_past_end(seq, n):
    total = 0
    for i in range(n):
        total += seq[i]
    return total


def read_negative_past_start(seq, n):
    total = 0
    for i in range(n):
        total += seq[-1 - i]
    return total


def matrix_sum(a, rows, cols):
    total = 0
    for i in range(rows):
        for j in range(cols):
            total += a[i][j] * (i + 1)
    return total


def matrix_diagonal(a):
    total = 0
    for i in range(len(a)):
        total += a[i][i] - a[i][-1]
    return total


def count_true(flags):
    n = 0
    for i in range(len(flags)):
        if flags[i]:
            n += 1
    return n


INTS = list(range(-500, 500, 3))
FLOATS = [k * 0.25 - 40.0 for k in range(300)]
BOOLS = [k % 3 == 0 for k in range(300)]


@pytest.mark.parametrize(
    "seq",
    [
        INTS,
        FLOATS,
        BOOLS,
        tuple(INTS),
        tuple(FLOATS),
        INTS[:200] + FLOATS,
        FLOATS[:200] + INTS,
        INTS[:200] + [2**70] + INTS[:50],
        INTS[:200] + [INT64_MAX, INT64_MAX],
        INTS[:200] + [None, 1],
        BOOLS[:200] + INTS,
        INTS[:200] + BOOLS,
    ],
    ids=[
        "ints",
        "floats",
        "bools",
        "int-tuple",
        "float-tuple",
        "ints-then-floats",
        "floats-then-ints",
        "ints-then-bigint",
        "ints-then-overflow",
        "ints-then-None",
        "bools-then-ints",
        "ints-then-bools",
    ],
)
def test_list_element_reads(seq):
    check(sum_by_index, (seq,), native=True)
    # read backwards: a None at the end raises before the loop compiles
    check(sum_negative_index, (seq,), native=None not in seq[-5:])


@pytest.mark.parametrize("seq", [INTS, tuple(INTS), FLOATS])
@pytest.mark.parametrize("extra", [0, 1, 50])
def test_index_error_after_many_iterations(seq, extra):
    check(read_past_end, (seq, len(seq) + extra), (seq, len(seq)), native=True)
    check(read_negative_past_start, (seq, len(seq) + extra), native=True)


def test_bool_list_truth():
    check(count_true, (BOOLS,), native=True)
    check(count_true, (BOOLS[:100] + INTS + FLOATS,), native=True)


def _matrix(kind, rows=20, cols=30):
    if kind == "int":
        return [[i * cols + j - 600 for j in range(cols)] for i in range(rows)]
    if kind == "float":
        return [[(i * cols + j) * 0.5 for j in range(cols)] for i in range(rows)]
    a = [[(i * cols + j) * (0.5 if (i + j) % 5 == 0 else 1) for j in range(cols)] for i in range(rows)]
    return [[int(x) if isinstance(x, float) and i % 2 else x for x in row] for i, row in enumerate(a)]


@pytest.mark.parametrize("kind", ["int", "float", "mixed"])
def test_two_dimensional_lists(kind):
    check(matrix_sum, (_matrix(kind), 20, 30), native=True)


@pytest.mark.parametrize("kind", ["int", "float"])
def test_two_dimensional_diagonal(kind):
    check(matrix_diagonal, ([row[:20] for row in _matrix(kind)],), native=True)


@pytest.mark.parametrize("rows, cols", [(21, 30), (20, 31)], ids=["outer", "inner"])
def test_two_dimensional_index_error(rows, cols):
    check(matrix_sum, (_matrix("int"), rows, cols), native=True)


def tuple_of_rows(t):
    total = 0.0
    for i in range(len(t)):
        row = t[i]
        total += row[0] * row[1] - row[-1]
    return total


def test_tuple_reads():
    rows = tuple((i * 1.5, i - 3.0, i % 7) for i in range(200))
    check(tuple_of_rows, (rows,), native=True)
    check(tuple_of_rows, (rows[:100] + ((1, 2),) + rows[:10],), native=True)


def list_changes_element_type(lst, n):
    total = 0
    for i in range(n):
        if i == n // 2:
            lst[3] = 0.5
        total += lst[i % 10]
    return total, lst


def test_list_changes_element_type_mid_loop():
    check(list_changes_element_type, (list(range(10)), 2000), native=True)


# --- list stores, appends ---------------------------------------------------------------------------------


def append_squares(n):
    out = []
    for i in range(n):
        out.append(i * i)
    return out


def append_mixed(n):
    out = []
    for i in range(n):
        if i % 3 == 0:
            out.append(i * 0.5)
        else:
            out.append(i)
        out.append(i % 2 == 0)
    return out


def append_to_argument(out, n):
    for i in range(n):
        out.append(out[i] + out[i + 1])
    return len(out)


def append_overflowing(n):
    out = []
    x = 1
    for i in range(n):
        x *= 3
        out.append(x)
    return out


@pytest.mark.parametrize(
    "func, args",
    [
        (append_squares, 500),
        (append_mixed, 500),
        (append_to_argument, ([0, 1], 80)),
        (append_to_argument, ([0.5, 1.5], 80)),
        (append_overflowing, 100),
    ],
)
def test_list_append_in_loop(func, args):
    check(func, args, native=True)


def store_scaled(a, factor):
    for i in range(len(a)):
        a[i] = a[i] * factor
    return a


def store_prefix_sums(a):
    for i in range(1, len(a)):
        a[i] = a[i] + a[i - 1]


def store_constant(a, value):
    for i in range(len(a)):
        a[-1 - i] = value
    return a


def store_past_end(a, n):
    for i in range(n):
        a[i] = i * 2
    return a


@pytest.mark.parametrize(
    "func, args",
    [
        (store_scaled, ([k * 0.5 for k in range(300)], 1.5)),
        (store_scaled, (list(range(300)), 3)),
        (store_scaled, (list(range(300)), 0.5)),
        (store_scaled, ([k * 0.5 for k in range(300)], 2)),
        (store_scaled, ([2**61 + k for k in range(300)], 3)),
        (store_scaled, ([k % 2 == 0 for k in range(300)], 3)),
        (store_prefix_sums, (list(range(300)),)),
        (store_prefix_sums, ([k * 0.1 for k in range(300)],)),
        (store_prefix_sums, (list(range(100)) + [0.5] + list(range(100)),)),
        (store_constant, ([0] * 300, 7)),
        (store_constant, ([0.0] * 300, -0.0)),
        (store_constant, ([0.0] * 300, True)),
        (store_past_end, ([0] * 300, 400)),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_list_stores(func, args):
    check(func, args, native=True)


# --- globals rebound between and during calls ---------------------------------------------------------------

GLOBAL_SOURCE = """
SCALE = 2

def rebind(value):
    global SCALE
    SCALE = value

def scaled_sum(n):
    total = 0
    for i in range(n):
        total += i * SCALE
    return total

def scaled_sum_rebinding(n, at, value):
    total = 0
    for i in range(n):
        if i == at:
            rebind(value)
        total += i * SCALE
    return total
"""


def test_global_rebound_between_calls():
    from jit import jit

    ns = {}
    define(GLOBAL_SOURCE, "scaled_sum", ns)
    plain = ns["scaled_sum"]
    jitted = jit(threshold=2, side_exit_threshold=2)(plain)
    assert jitted(500) == plain(500)
    ns["rebind"](3)
    assert jitted(500) == plain(500) == 3 * 499 * 500 // 2
    ns["rebind"](0.5)
    assert jitted(500) == plain(500)
    ns["rebind"](7)
    assert jitted(500) == plain(500)
    s = stats(jitted)
    assert s["traces_compiled"] >= 1 and s["native_entries"] >= 3


def test_global_rebound_mid_loop_by_called_function():
    from jit import jit

    ns = {}
    define(GLOBAL_SOURCE, "scaled_sum_rebinding", ns)
    f = ns["scaled_sum_rebinding"]
    jitted = jit(threshold=2, side_exit_threshold=2)(f)
    # the call to rebind() sits behind a branch taken once: the loop compiles around it (i != at)
    for value in (5, 0.25, 2):
        ns["SCALE"] = 2
        expected = f(1000, 600, value)
        ns["SCALE"] = 2
        assert jitted(1000, 600, value) == expected
        assert ns["SCALE"] == value
    s = stats(jitted)
    assert s["traces_compiled"] >= 1 and s["native_entries"] >= 1, s


def test_global_rebound_while_native_between_calls_of_another_function():
    """A trace compiled with SCALE=2 must see SCALE rebound by unrelated code between entries."""
    from jit import jit

    ns = {}
    define(GLOBAL_SOURCE, "scaled_sum", ns)
    jitted = jit(threshold=2, side_exit_threshold=2)(ns["scaled_sum"])
    results = []
    for value in (2, 3, 2, -1, 2**40):
        ns["SCALE"] = value
        results.append(jitted(300))
    assert results == [value * 299 * 300 // 2 for value in (2, 3, 2, -1, 2**40)]
    assert stats(jitted)["native_entries"] >= 3


# --- for x in list / tuple --------------------------------------------------------------------------------


def iterate_sum(seq):
    total = 0
    for x in seq:
        total += x
    return total


def iterate_with_index(seq):
    total = 0.0
    i = 0
    for x in seq:
        total += x * i
        i += 1
    return total, i


def iterate_nested(rows):
    total = 0
    for row in rows:
        for x in row:
            total += x
    return total


def iterate_and_append(seq):
    out = []
    for x in seq:
        if x > 0:
            out.append(x)
    return out


def iterate_growing(seq):
    n = 0
    for x in seq:
        if n < 200:
            seq.append(x + 1)
        n += 1
    return n, len(seq)


def iterate_and_clear(seq):
    total = 0
    for x in seq:
        total += x
        if x == 100:
            seq.clear()  # in the interpreter, after an exit; the loop then ends like CPython's
    return total, seq


def iterate_and_replace_contents(seq):
    total = 0
    for x in seq:
        total += x
        if x == 100:
            seq[:] = [1, 2, 3, 4, 5] * 50  # the iteration goes on over the new items, by index
    return total


def iterate_and_store(seq):
    total = 0.0
    for x in seq:
        total += x
        seq[len(seq) - 1] = total  # the last item read changes while iterating
    return total, seq


def iterate_twice(seq):
    total = 0
    for x in seq:
        for y in seq:
            total += x * y
    return total


def iterate_break_else(seq, stop):
    total = 0
    for x in seq:
        if x == stop:
            break
        total += x
    else:
        total = -total
    return total


@pytest.mark.parametrize(
    "func, seq",
    [
        (iterate_sum, INTS),
        (iterate_sum, tuple(INTS)),
        (iterate_sum, FLOATS),
        (iterate_sum, tuple(FLOATS)),
        (iterate_sum, BOOLS),
        (iterate_sum, INTS[:100] + FLOATS),
        (iterate_sum, INTS[:100] + [2**64] + INTS),
        (iterate_sum, INTS[:100] + ["x"]),
        (iterate_with_index, FLOATS),
        (iterate_with_index, tuple(INTS)),
        (iterate_nested, [list(range(k, k + 20)) for k in range(30)]),
        (iterate_nested, tuple(tuple(range(k, k + 20)) for k in range(30))),
        (iterate_nested, [list(range(k, k + 20)) for k in range(30)] + [[0.5] * 20]),
        (iterate_and_append, INTS),
        (iterate_and_append, FLOATS),
        (iterate_growing, list(range(100))),
        (iterate_and_clear, list(range(300))),
        (iterate_and_clear, tuple(range(300))),
        (iterate_and_replace_contents, list(range(200))),
        (iterate_and_store, [k * 0.5 for k in range(300)]),
        (iterate_twice, list(range(40))),
        (iterate_twice, tuple(k * 0.5 for k in range(40))),
        (iterate_sum, [True, False, 3, 0] * 60),
        (iterate_sum, []),
        (iterate_sum, ()),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_for_over_list_and_tuple(func, seq):
    check(func, (seq,), native=bool(len(seq) > 10))


@pytest.mark.parametrize("stop", [250, -1, 0])
@pytest.mark.parametrize("seq", [list(range(300)), tuple(range(300))], ids=["list", "tuple"])
def test_for_over_sequence_with_break_and_else(seq, stop):
    check(iterate_break_else, (seq, stop), native=stop != 0)
