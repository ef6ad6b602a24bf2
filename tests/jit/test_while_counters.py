"""A while loop's counter checked once per periodic check (``jit.optimizer.counters``), ``x * c + d`` checked once
(``jit.optimizer.affine``), and a loop joined with one side trace computing both ways (``codegen.joined``:
if-converted). Each against CPython (``helpers.check``: values, types, exceptions), where the checks they replace
would have failed: ints crossing 2**63, a counter entering near 2**63, a value changing kind in the loop; and the
listing and IR that show what was removed."""

import re

import pytest
from helpers import Args, check, define
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jit as jit_module
from jit import jit

OPTS = {"threshold": 8, "side_exit_threshold": 4}
MAX = 2**63 - 1
PERIOD = 1 << 14  # codegen.abi.PERIOD


def collatz_from(start, steps, limit):
    """collatz's inner loop, from any start and counter, at most limit steps (a negative start never reaches 1)."""
    m = start
    while m != 1 and limit > 0:
        if m % 2 == 0:
            m //= 2
        else:
            m = 3 * m + 1
        steps += 1
        limit -= 1
    return m, steps


def collatz_steps(n):
    total = 0
    for start in range(1, n + 1):
        m = start
        steps = 0
        while m != 1:
            if m % 2 == 0:
                m //= 2
            else:
                m = 3 * m + 1
            steps += 1
        total += steps
    return total


def _uops(f):
    return jit_module.dump(f, "uops")


def _side_traces(f):
    return [t for tree in jit_module.stats(f)["trees"] for t in tree["traces"] if t["kind"] == "side"]


def test_listing_shows_the_counter_guard_and_the_fused_check():
    f = jit(**OPTS)(collatz_steps)
    assert f(300) == collatz_steps(300)
    listing = _uops(f)
    parts = listing.split("\n\n")
    root = parts[0]  # (the inner loop's root: recorded first)
    assert "_GUARD_COUNTER_ROOM (" in root and ", 1, target=" in root and "(hoisted to the entry)" in root
    assert "_BINARY_OP_ADD_INT_IN_RANGE (" in root  # steps += 1
    assert "_BINARY_OP_ADD_INT (" not in root.split("_CHECK_PERIODIC")[1]
    side = next(part for part in parts if part.startswith("# tj_collatz_steps_side"))
    # 3 * m + 1: one interval check of m, both operations unchecked
    assert "_GUARD_INT_RANGE (" in side and "-3074457345618258602, 3074457345618258602" in side
    assert "_BINARY_OP_MULTIPLY_INT_IN_RANGE (3, " in side and "_BINARY_OP_ADD_INT_IN_RANGE (" in side
    assert any(t["joined"] for t in _side_traces(f))


def _joined_loop_ir(f):
    """The optimized IR of the joined loop's function (``<side trace>_loop``) in f's side trace's module."""
    ir = jit_module.dump(f, "opt-ir")
    side_module = ir[ir.index("side trace from exit") :]
    loop = side_module[re.search(r"define [^\n]*_loop\(", side_module).start() :]
    return loop[: loop.index("\n}\n")]


def test_joined_loop_is_if_converted():
    f = jit(**OPTS)(collatz_steps)
    f(300)
    loop = _joined_loop_ir(f)
    assert "select i1" in loop  # the next m: 3 * m + 1 or m // 2, no branch on its parity
    assert f(1000) == collatz_steps(1000)


@pytest.mark.parametrize(
    "start",
    [27, 2**62 + 1, 2**62 - 1, 3074457345618258601, 3074457345618258603, 3074457345618258602, MAX, -7, -(2**62) - 3],
)
def test_collatz_values_near_the_bounds(start):
    # warm with small starts (the loop and its joined side trace compiled), then starts whose 3 * m + 1 overflows
    check(collatz_from, *[Args(s, 0, 200) for s in range(2, 40)], Args(start, 0, 500), options=OPTS, native=True)


@pytest.mark.parametrize("steps", [MAX - 100, MAX - PERIOD - 5, MAX - PERIOD, MAX - PERIOD + 1, MAX, -(2**63)])
def test_a_counter_entering_near_2_63(steps):
    # the counter crosses 2**63 within the call (a Python int after), or the guard fails at the entry
    check(collatz_from, *[Args(s, 0, 100) for s in range(2, 30)], Args(27, steps, 40_000), options=OPTS)


def count_up(n, i, step):
    """A counter that crosses 2**63 after many iterations, some of them after a periodic check."""
    while n > 0:
        i += 1
        n -= 1
    return i


@pytest.mark.parametrize("n", [PERIOD - 1, PERIOD + 1, 3 * PERIOD + 7])
def test_a_counter_crossing_2_63_after_periodic_checks(n):
    start = MAX - 2 * PERIOD
    f = check(count_up, Args(100, 0, 1), Args(n, start, 1), Args(n, MAX - n + 1, 1), options=OPTS, native=True)
    assert type(f(n, start, 1)) is int


def steps_of_two_ways(m, steps, limit):
    """The side way adds 2 where the root's adds 1: the side trace is not joined (or its check stays)."""
    while m != 1 and limit > 0:
        if m % 2 == 0:
            m //= 2
            steps += 1
        else:
            m = 3 * m + 1
            steps += 2
        limit -= 1
    return m, steps


def test_a_side_way_that_adds_more_than_the_root():
    calls = [Args(s, 0, 300) for s in range(2, 40)]
    check(steps_of_two_ways, *calls, Args(27, MAX - PERIOD - 3, 40_000), Args(27, MAX - 200, 500), options=OPTS)


def counter_turns_float(m, steps, limit):
    while m != 1 and limit > 0:
        if m % 2 == 0:
            m //= 2
        else:
            m = 3 * m + 1
            if m == 22:
                steps = steps + 0.5  # the counter a float from here on
        steps += 1
        limit -= 1
    return m, steps


def test_a_counter_changing_kind_in_the_loop():
    calls = [Args(s, 0, 300) for s in (3, 5, 9, 12, 17, 20, 27)]
    check(counter_turns_float, *calls, Args(7, MAX - 50, 300), Args(7, 0, 300), options=OPTS, native=True)


def affine(xs, c, d):
    out = []
    for x in xs:
        out.append(x * 3 + 1)
        out.append(x * -5 - 7)
        out.append(2 - x * 7)  # (not fused: d - product)
    return out


def test_multiply_add_at_the_bounds():
    near = [3074457345618258602, 3074457345618258603, -3074457345618258602, -3074457345618258603]
    near += [1844674407370955160, 1844674407370955161, -1844674407370955162, -1844674407370955161, 0, -1, 7]
    xs = [*range(-50, 50), *near]
    check(affine, Args(list(range(100)), 3, 1), Args(xs, 3, 1), options=OPTS, native=True)
    for k in range(len(near)):  # (each value alone at the end of a warm run: the guard's exit is exact)
        check(affine, Args([*range(40), near[k]], 3, 1), options=OPTS)


def product_used_twice(n, x):
    total = 0
    while n > 0:
        p = x * 3
        total += p + 1
        total -= p  # (the product used again: both checks stay)
        n -= 1
    return total


def test_a_product_used_twice_keeps_its_checks():
    f = check(product_used_twice, Args(100, 5), Args(50, 3074457345618258602), options=OPTS, native=True)
    assert "_GUARD_INT_RANGE" not in _uops(f.cpython_baseline)


def parity_with_exit_on_the_root_way(xs, k):
    """Both ways computed; the root's way divides by a constant and overflows on its own (an exit predicated
    on the root's way)."""
    total = 0
    i = 0
    n = len(xs)
    while i < n:
        x = xs[i]
        if x & 1:
            total = total + x * k  # (the side way)
        else:
            total = total - (x // 4)
        i += 1
    return total


def test_exits_of_both_ways_when_if_converted():
    xs = list(range(300))
    big = [*range(100), 2**62, 2**62 + 1, -(2**62) - 1, *range(100)]
    check(parity_with_exit_on_the_root_way, Args(xs, 3), Args(big, 3), Args(big, 2**40), options=OPTS, native=True)


def test_a_range_check_on_one_way_is_not_predicated_on_it():
    """3 * m + 1's range check, on the odd way, is tested on both ways and leaves at the parity branch's exit
    (``codegen.context.speculated``): a compare and a branch, not an ``or`` with the parity."""
    f = jit(**OPTS)(collatz_steps)
    f(300)
    loop = _joined_loop_ir(f)
    assert re.search(r"(%\S+) = icmp ult i64 %\S+, 6148914691236517205\n\s+br i1 \1,", loop), loop
    assert " or i1 " not in loop
    assert f(1000) == collatz_steps(1000)


@pytest.mark.parametrize("start", [2**62, 2**62 + 2, 3 * 2**61, MAX - 1, -(2**62), -(2**62) - 2, 3074457345618258604])
def test_even_values_past_the_odd_ways_range(start):
    """An even m past the odd way's range: the check fails on the way not taken, leaves before the branch, and
    the side trace compiled apart (or the interpreter) takes the even way; exact, and native again after."""
    warm = [Args(s, 0, 200) for s in range(2, 40)]
    f = check(collatz_from, *warm, Args(start, 0, 500), *warm, options=OPTS, native=True)
    assert f(start, 0, 500) == collatz_from(start, 0, 500)


def alternating_huge(m, n):
    """Each iteration flips m's parity: the odd way's product checked on every even iteration too."""
    total = 0
    while n > 0:
        if m % 2 == 0:
            total = total + (m // 2)
        else:
            total = total + (3 * m + 1)
        m += 1
        n -= 1
    return total, m


def test_a_way_whose_check_fails_at_every_other_iteration():
    small = [Args(s, 300) for s in range(1, 30)]
    check(
        alternating_huge,
        *small,
        Args(2**62, 50),
        Args(-(2**62), 50),
        Args(2**61, 50),
        *small,
        options=OPTS,
        native=True,
    )


TWO_WAYS = """
def two_ways(m, n):
    total = 0
    while n > 0:
        if m % {modulus} == 0:
            m = m // {divisor} {op_even} {d}
        else:
            m = {a} * m {op_odd} {b}
        total {op_total} m
        n -= 1
    return m, total
"""


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    modulus=st.sampled_from([2, 3]),
    divisor=st.sampled_from([2, 3, 7]),
    a=st.sampled_from([3, 5, -3, 1000, 2**22 + 1, 2**23, 2**40]),
    b=st.sampled_from([1, -1, 7, 2**40, 2**62]),
    d=st.sampled_from([0, 1, 2**41, 2**62]),
    ops=st.tuples(st.sampled_from("+-"), st.sampled_from("+-"), st.sampled_from(["+=", "-="])),
    start=st.sampled_from([2**62, 2**62 + 1, -(2**62), 2**40, 2**40 + 1, 3074457345618258604, MAX, -MAX, 2**63, 12345]),
)
def test_two_ways_against_cpython(modulus, divisor, a, b, d, ops, start):
    """Loops of two ways of int arithmetic with overflow checks (some speculated on both ways,
    ``codegen.context.speculated``, some not), warmed with small values, then started from huge ones."""
    op_even, op_odd, op_total = ops
    source = TWO_WAYS.format(
        modulus=modulus, divisor=divisor, a=a, b=b, d=d, op_even=op_even, op_odd=op_odd, op_total=op_total
    )
    f = define(source, "two_ways")
    warm = [Args(s, 40) for s in range(1, 25)]
    check(f, *warm, Args(start, 60), Args(-start, 60), *warm[:3], options=OPTS, native=True)


# --- an outer loop calls the inner loop's joined function (codegen.joined.loop_entry) -------------------------


def collatz_of(starts, steps0):
    total = 0
    for start in starts:
        m = start
        steps = steps0
        while m != 1:
            if m % 2 == 0:
                m //= 2
            else:
                m = 3 * m + 1
            steps += 1
        total += steps
    return total


def test_outer_loop_calls_the_joined_loop():
    f = jit(**OPTS)(collatz_steps)
    assert f(300) == collatz_steps(300)
    outer = next(part for part in jit_module.dump(f, "opt-ir").split("\n\n# ") if "root0_3" in part.split("\n")[0])
    assert re.search(r"call i64 @\"?tj_collatz_steps_side\w*_loop\"?\(", outer), outer[:2000]
    assert f(2000) == collatz_steps(2000)


@pytest.mark.parametrize("odd", [2**62 + 1, 3074457345618258603, MAX, 2**61 + 3])
def test_outer_loop_with_starts_that_overflow_inside_the_joined_loop(odd):
    small = list(range(1, 200))
    check(collatz_of, Args(small, 0), Args([*small, odd, *small], 0), Args([*small, odd], 0), options=OPTS, native=True)


def test_outer_loop_with_a_counter_entering_near_2_63():
    small = list(range(1, 200))
    starts = [*small, 27, *small]
    check(collatz_of, Args(small, 0), Args(starts, MAX - 60), Args(starts, MAX - PERIOD), options=OPTS, native=True)


def rare_way(n):
    s = 0
    i = 0
    while i < n:
        if i & 63 == 0:
            s = (s * 3 + 1) & 0xFFFFFF
        else:
            s = s + (i & 7)
        i += 1
    return s


def test_a_way_taken_rarely_is_not_if_converted():
    """A branch one way 63 times in 64 is predicted: computing both ways would cost the other's work at every
    iteration (codegen.joined.IF_CONVERT_SHARE)."""
    f = check(rare_way, 5000, 20000, options=OPTS, native=True).cpython_baseline
    assert any(t["joined"] for t in _side_traces(f))
    ir = jit_module.dump(f, "opt-ir")
    loop = ir[re.search(r"define [^\n]*_loop\(", ir).start() :]
    assert "select i1" not in loop[: loop.index("\n}\n")]
