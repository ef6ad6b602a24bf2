"""The `counters` pass: a while loop's slot that every iteration adds a small constant to gets one hoisted guard
(room for a period's steps, checked at the entry and by the periodic check again) and an unchecked addition."""

from jit.listing import format_listing, parse_listing
from jit.optimizer import counters

from .passes import assert_pass, assert_unchanged

#: while m != 1: m //= 2; steps += 1     (collatz's even way)
WHILE_COUNTING = """
uops of t:
   _LOAD_SLOT (target=17, operand=3 (m)) -> v0:int
   _LOAD_SLOT (target=17, operand=4 (steps)) -> v9:int
   _CHECK_PERIODIC (target=17, exit=0)
   _COMPARE_OP_INT (v0, 1, target=19, operand=!=) -> v2:bool
   _GUARD_IS_TRUE_POP (v2, target=20, exit=1)
   _BINARY_OP_FLOOR_DIVIDE_INT (v0, 2, target=29, exit=2) -> v8:int
   _BINARY_OP_ADD_INT (v9, 1, target=40, exit=3) -> v11:int  # line 53
   _JUMP_TO_TOP (target=16)
   loop-carried: m=v8, steps=v11
"""


def test_a_counter_is_checked_at_the_entry_and_added_to_unchecked():
    assert_pass(
        counters.run,
        WHILE_COUNTING,
        """
        uops of t:
           _LOAD_SLOT (target=17, operand=3 (m)) -> v0:int
           _LOAD_SLOT (target=17, operand=4 (steps)) -> v9:int
           _GUARD_COUNTER_ROOM (v9, 1, target=17, exit=-1)  # line 53 (hoisted to the entry)
           _CHECK_PERIODIC (target=17, exit=0)
           _COMPARE_OP_INT (v0, 1, target=19, operand=!=) -> v2:bool
           _GUARD_IS_TRUE_POP (v2, target=20, exit=1)
           _BINARY_OP_FLOOR_DIVIDE_INT (v0, 2, target=29, exit=2) -> v8:int
           _BINARY_OP_ADD_INT_IN_RANGE (v9, 1, target=40) -> v11:int  # line 53
           _JUMP_TO_TOP (target=16)
           loop-carried: m=v8, steps=v11
        """,
    )


def test_the_step_and_the_slot_are_remembered_for_joined_side_traces():
    listing = parse_listing(WHILE_COUNTING.replace("(v9, 1,", "(7, v9,"))
    counters.run(listing.trace)
    assert listing.trace.counters == {4: 7}
    assert "_GUARD_COUNTER_ROOM (v9, 7, " in format_listing(listing)


def test_what_is_not_a_counter_keeps_its_check():
    for old, new in [
        ("(v9, 1,", "(v9, 0,"),  # (adds nothing)
        ("(v9, 1,", "(v9, -1,"),  # (counts down)
        ("(v9, 1,", f"(v9, {2**20 + 1},"),  # (too big a step)
        ("(v9, 1,", "(v9, v0,"),  # (not a constant)
        ("_BINARY_OP_ADD_INT (v9", "_BINARY_OP_SUBTRACT_INT (v9"),
        ("steps=v11", "steps=v9"),  # (not the slot's next value)
        ("_CHECK_PERIODIC (target=17, exit=0)\n", ""),  # (no periodic check first)
    ]:
        text = WHILE_COUNTING.replace(old, new)
        assert text != WHILE_COUNTING
        assert_unchanged(counters.run, text)


def test_no_counter_where_something_else_counts_the_fuel_down():
    # an unrolled inner loop's header counts the fuel down within the iteration (and checks it): the loop's own
    # periodic check could be skipped over
    text = WHILE_COUNTING.replace(
        "   _JUMP_TO_TOP (target=16)", "   _UNROLLED_HEADER (target=18, exit=4)\n   _JUMP_TO_TOP (target=16)"
    )
    assert_unchanged(counters.run, text)


def test_a_for_loop_is_the_range_analysis_s():
    text = """
    uops of t:
       _LOAD_SLOT (target=14, operand=1 (total)) -> v4:int
       _LOAD_SLOT (target=14, operand=8 (.range.cur)) -> v1:int
       _LOAD_SLOT (target=14, operand=9 (.range.stop)) -> v2:int
       _LOAD_SLOT (target=14, operand=10 (.range.step)) -> v0:int
       _CHECK_PERIODIC (target=14, exit=0)
       _GUARD_NOT_EXHAUSTED_RANGE (v1, v2, v0, target=14, exit=1)
       _ITER_NEXT_RANGE (v1, v0, target=14, exit=2) -> v3:int
       _BINARY_OP_ADD_INT (v4, 1, target=22, exit=3) -> v9:int
       _JUMP_TO_TOP (target=13)
       loop-carried: total=v9, .range.cur=v3, .range.stop=v2, .range.step=v0
    """
    assert_unchanged(counters.run, text)
