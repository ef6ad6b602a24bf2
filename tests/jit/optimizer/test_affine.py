"""The `affine` pass: x * c + d checked once, by an interval check of x where the multiplication was, both
operations unchecked; the interval is exact (``bounds``)."""

import itertools

import pytest

from jit.optimizer import affine

from .passes import after, assert_pass, assert_unchanged

MAX, MIN = 2**63 - 1, -(2**63)

#: m = 3 * m + 1
THREE_M_PLUS_ONE = """
uops of t:
   _LOAD_SLOT (target=26, operand=3 (m)) -> v2:int
   _BINARY_OP_MULTIPLY_INT (3, v2, target=34, exit=0) -> v3:int
   _BINARY_OP_ADD_INT (v3, 1, target=36, exit=1) -> v5:int
   _EXIT_TRACE (target=40, operand=40, exit=2)
"""


def test_three_m_plus_one_is_one_interval_check():
    assert_pass(
        affine.run,
        THREE_M_PLUS_ONE,
        """
        uops of t:
           _LOAD_SLOT (target=26, operand=3 (m)) -> v2:int
           _GUARD_INT_RANGE (v2, -3074457345618258602, 3074457345618258602, target=34, exit=0)
           _BINARY_OP_MULTIPLY_INT_IN_RANGE (3, v2, target=34) -> v3:int
           _BINARY_OP_ADD_INT_IN_RANGE (v3, 1, target=36) -> v5:int
           _EXIT_TRACE (target=40, operand=40, exit=2)
        """,
    )


def test_minus_a_constant_and_a_negative_factor():
    listing = after(
        affine.run, THREE_M_PLUS_ONE.replace("(3, v2", "(v2, -5").replace("ADD_INT (v3, 1", "SUBTRACT_INT (v3, 7")
    )
    lo, hi = affine.bounds(-5, -7)
    assert f"_GUARD_INT_RANGE (v2, {lo}, {hi}, " in listing
    assert "_BINARY_OP_SUBTRACT_INT_IN_RANGE (v3, 7" in listing


def test_a_product_needed_elsewhere_keeps_both_checks():
    used_again = THREE_M_PLUS_ONE.replace(
        "   _EXIT_TRACE", "   _BINARY_OP_ADD_INT (v3, v5, target=37, exit=3) -> v6:int\n   _EXIT_TRACE"
    )
    assert_unchanged(affine.run, used_again)
    assert_unchanged(affine.run, THREE_M_PLUS_ONE.replace("ADD_INT (v3, 1", "ADD_INT (v3, v2"))  # (not a constant)
    # (d - product is not fused: a multiplication by -c it would need)
    assert_unchanged(affine.run, THREE_M_PLUS_ONE.replace("ADD_INT (v3, 1", "SUBTRACT_INT (1, v3"))


def test_a_constant_plus_a_product():
    listing = after(affine.run, THREE_M_PLUS_ONE.replace("ADD_INT (v3, 1", "ADD_INT (1, v3"))
    assert "_GUARD_INT_RANGE (v2, -3074457345618258602, 3074457345618258602, target=34, exit=0)" in listing


@pytest.mark.parametrize("c, d", [(3, 1), (-3, 1), (7, -(2**62)), (2, MAX), (-1, MIN), (1, -1), (2**40, 5), (-2, MIN)])
def test_bounds_are_exact(c, d):
    interval = affine.bounds(c, d)

    def fits(x):
        return MIN <= x * c <= MAX and MIN <= x * c + d <= MAX

    if interval is None:
        assert not any(fits(x) for x in (0, 1, -1, MAX, MIN))
        return
    lo, hi = interval
    for x, inside in itertools.chain(((lo, True), (hi, True)), ((lo - 1, False), (hi + 1, False))):
        if MIN <= x <= MAX:
            assert fits(x) is inside, (x, c, d)
