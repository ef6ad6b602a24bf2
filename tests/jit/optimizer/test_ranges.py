"""The `ranges` pass: overflow and bounds checks proven needless go, in place where constants prove it, else in
the loop's fast copy (`fast=`), whose conditions (`fast while:`) it writes; every other check stays."""

from jit.optimizer import ranges

from .passes import after, assert_pass, assert_unchanged

#: for i in range(n): total += (x ^ i) & 7     (x: an int the loop reads and never assigns)
SUM_OF_MASKED = """
uops of t:
   _LOAD_SLOT (target=14, operand=1 (total)) -> v4:int
   _LOAD_SLOT (target=14, operand=2 (x)) -> v5:int
   _LOAD_SLOT (target=14, operand=8 (.range.cur)) -> v1:int
   _LOAD_SLOT (target=14, operand=9 (.range.stop)) -> v2:int
   _LOAD_SLOT (target=14, operand=10 (.range.step)) -> v0:int
   _CHECK_PERIODIC (target=14, exit=0)
   _GUARD_NOT_EXHAUSTED_RANGE (v1, v2, v0, target=14, exit=1)
   _ITER_NEXT_RANGE (v1, v0, target=14, exit=2) -> v3:int
   _BINARY_OP_XOR_INT (v5, v1, target=19) -> v6:int
   _BINARY_OP_AND_INT (v6, 7, target=21) -> v8:int
   _BINARY_OP_ADD_INT (v4, v8, target=22, exit=3) -> v9:int
   _JUMP_TO_TOP (target=13)
   loop-carried: total=v9, x=v5, .range.cur=v3, .range.stop=v2, .range.step=v0
"""

#: the range's counter: its next value fits i64 while the last one the loop reaches, plus the step, does
COUNTER = "max(v1, v2 - 1) + v0 <= 9223372036854775807; min(v1, v2 + 1) + v0 <= 9223372036854775807"


def test_an_accumulated_sum_of_a_bounded_term_is_checked_once_per_entry():
    assert_pass(
        ranges.run,
        SUM_OF_MASKED,
        f"""
        uops of t:
           _LOAD_SLOT (target=14, operand=1 (total)) -> v4:int
           _LOAD_SLOT (target=14, operand=2 (x)) -> v5:int
           _LOAD_SLOT (target=14, operand=8 (.range.cur)) -> v1:int
           _LOAD_SLOT (target=14, operand=9 (.range.stop)) -> v2:int
           _LOAD_SLOT (target=14, operand=10 (.range.step)) -> v0:int
           _CHECK_PERIODIC (target=14, exit=0)
           _GUARD_NOT_EXHAUSTED_RANGE (v1, v2, v0, target=14, exit=1)
           _ITER_NEXT_RANGE (v1, v0, target=14, exit=2, fast=_ITER_NEXT_RANGE_NO_OVERFLOW) -> v3:int
           _BINARY_OP_XOR_INT (v5, v1, target=19) -> v6:int
           _BINARY_OP_AND_INT (v6, 7, target=21) -> v8:int
           _BINARY_OP_ADD_INT (v4, v8, target=22, exit=3, fast=_BINARY_OP_ADD_INT_IN_RANGE) -> v9:int
           _JUMP_TO_TOP (target=13)
           loop-carried: total=v9, x=v5, .range.cur=v3, .range.stop=v2, .range.step=v0
           fast while: {COUNTER}; v4 + max(v2 - v1, v1 - v2) * 7 <= 9223372036854775807
        """,
    )


def test_a_subtracted_term_bounds_the_sum_from_below():
    text = SUM_OF_MASKED.replace("_BINARY_OP_ADD_INT (v4, v8", "_BINARY_OP_SUBTRACT_INT (v4, v8")
    listing = after_ranges(text)
    assert "_BINARY_OP_SUBTRACT_INT (v4, v8, target=22, exit=3, fast=_BINARY_OP_SUBTRACT_INT_IN_RANGE)" in listing
    assert "v4 + max(v2 - v1, v1 - v2) * (-7) <= 9223372036854775807" in listing


def test_an_unbounded_term_keeps_its_check():
    # total += (x ^ i) << i: a shift has no bounds the analysis knows, so neither has the sum
    text = SUM_OF_MASKED.replace(
        "_BINARY_OP_AND_INT (v6, 7, target=21)", "_BINARY_OP_LSHIFT_INT (v6, v1, target=21, exit=4)"
    )
    listing = after_ranges(text)
    assert "_BINARY_OP_LSHIFT_INT (v6, v1, target=21, exit=4) -> v8:int" in listing
    assert "_BINARY_OP_ADD_INT (v4, v8, target=22, exit=3) -> v9:int" in listing
    assert "v4" not in listing.split("fast while:")[1]


def test_a_product_of_bounded_values_is_checked_once_per_entry():
    # total += x * (x ^ i): for x >= 0 and i >= 0 the xor is within [0, x + i], so the product is bounded too
    text = SUM_OF_MASKED.replace(
        "_BINARY_OP_AND_INT (v6, 7, target=21)", "_BINARY_OP_MULTIPLY_INT (v5, v6, target=21, exit=4)"
    )
    listing = after_ranges(text)
    assert "_BINARY_OP_MULTIPLY_INT (v5, v6, target=21, exit=4, fast=_BINARY_OP_MULTIPLY_INT_IN_RANGE)" in listing
    assert "_BINARY_OP_ADD_INT (v4, v8, target=22, exit=3, fast=_BINARY_OP_ADD_INT_IN_RANGE)" in listing
    assert "0 <= v5" in listing and "0 <= min(v1, v2 + 1)" in listing


def after_ranges(text: str) -> str:
    return after(ranges.run, text)


def test_constants_alone_remove_a_check_in_place():
    assert_pass(
        ranges.run,
        """
        uops of t:
           _LOAD_SLOT (target=1, operand=0 (x)) -> v0:int
           _BINARY_OP_AND_INT (v0, 255, target=2) -> v1:int
           _BINARY_OP_MULTIPLY_INT (v1, 1000, target=3, exit=0) -> v2:int
           _BINARY_OP_ADD_INT (v0, v2, target=4, exit=1) -> v3:int
           _EXIT_TRACE (target=5, exit=2)
        """,
        """
        uops of t:
           _LOAD_SLOT (target=1, operand=0 (x)) -> v0:int
           _BINARY_OP_AND_INT (v0, 255, target=2) -> v1:int
           _BINARY_OP_MULTIPLY_INT_IN_RANGE (v1, 1000, target=3) -> v2:int
           _BINARY_OP_ADD_INT (v0, v2, target=4, exit=1) -> v3:int
           _EXIT_TRACE (target=5, exit=2)
        """,
    )


def test_a_list_read_in_range_of_its_length_goes_unchecked_in_the_fast_copy():
    # for k in range(len(data)): total += data[k] (unboxed: a float)
    text = """
    uops of t:
       _LOAD_SLOT (target=14, operand=0 (data)) -> v6:list
       _LOAD_SLOT (target=14, operand=1 (total)) -> v4:float
       _LOAD_SLOT (target=14, operand=8 (.range.cur)) -> v1:int
       _LOAD_SLOT (target=14, operand=9 (.range.stop)) -> v2:int
       _LOAD_SLOT (target=14, operand=10 (.range.step)) -> v0:int
       _CHECK_PERIODIC (target=14, exit=0)
       _GUARD_NOT_EXHAUSTED_RANGE (v1, v2, v0, target=14, exit=1)
       _ITER_NEXT_RANGE (v1, v0, target=14, exit=2) -> v3:int
       _BINARY_SUBSCR_LIST_INT (v6, v1, target=19, exit=3) -> v7:object
       _GUARD_TYPE (v7, target=19, operand=float, exit=4) -> v8:object
       _UNBOX_FLOAT (v8, target=19) -> v9:float
       _BINARY_OP_ADD_FLOAT (v4, v9, target=22) -> v10:float
       _JUMP_TO_TOP (target=13)
       loop-carried: data=v6, total=v10, .range.cur=v3, .range.stop=v2, .range.step=v0
    """
    listing = after_ranges(text)
    assert "_BINARY_SUBSCR_LIST_INT (v6, v1, target=19, exit=3, fast=_BINARY_SUBSCR_LIST_INT_IN_BOUNDS)" in listing
    assert "0 <= min(v1, v2 + 1)" in listing
    assert "max(v1, v2 - 1) <= len(v6) - 1" in listing


def test_a_move_of_list_items_goes_unchecked_where_its_indices_are_within_the_list():
    # for k in range(len(a) - 1): a[k], a[k + 1] = a[k + 1], a[k] (jit.optimizer.moves); a move changes no length
    text = """
    uops of t:
       _LOAD_SLOT (target=14, operand=0 (a)) -> v6:list
       _LOAD_SLOT (target=14, operand=8 (.range.cur)) -> v1:int
       _LOAD_SLOT (target=14, operand=9 (.range.stop)) -> v2:int
       _LOAD_SLOT (target=14, operand=10 (.range.step)) -> v0:int
       _CHECK_PERIODIC (target=14, exit=0)
       _GUARD_NOT_EXHAUSTED_RANGE (v1, v2, v0, target=14, exit=1)
       _ITER_NEXT_RANGE (v1, v0, target=14, exit=2) -> v3:int
       _BINARY_OP_ADD_INT (v1, 1, target=17, exit=3) -> v4:int
       _BINARY_SUBSCR_LIST_INT (v6, v4, target=19, exit=4) -> v7:object
       _BINARY_SUBSCR_LIST_INT (v6, v1, target=20, exit=5) -> v8:object
       _MOVE_LIST_ITEMS (v6, v1, v4, v7, v8, target=22)
       _JUMP_TO_TOP (target=13)
       loop-carried: a=v6, .range.cur=v3, .range.stop=v2, .range.step=v0
    """
    listing = after_ranges(text)
    assert "_MOVE_LIST_ITEMS (v6, v1, v4, v7, v8, target=22, fast=_MOVE_LIST_ITEMS_IN_BOUNDS)" in listing
    assert "_BINARY_SUBSCR_LIST_INT (v6, v4, target=19, exit=4, fast=_BINARY_SUBSCR_LIST_INT_IN_BOUNDS)" in listing
    # a[k], a[x] = a[x], a[k] with x = a[k] (an int read: no interval) keeps its check
    unbounded = text.replace(
        "_BINARY_OP_ADD_INT (v1, 1, target=17, exit=3) -> v4:int",
        "_BINARY_SUBSCR_LIST_INT (v6, v1, target=17, exit=3) -> v20:object\n"
        "_GUARD_TYPE (v20, target=17, operand=int, exit=6) -> v21:object\n"
        "_UNBOX_INT (v21, target=17, exit=7) -> v4:int",
    )
    listing = after_ranges(unbounded)
    assert "_MOVE_LIST_ITEMS (v6, v1, v4, v7, v8, target=22)" in listing and "_IN_BOUNDS)" in listing


def test_a_list_that_an_append_may_change_keeps_its_bounds_check():
    text = """
    uops of t:
       _LOAD_SLOT (target=14, operand=0 (data)) -> v6:list
       _LOAD_SLOT (target=14, operand=8 (.range.cur)) -> v1:int
       _LOAD_SLOT (target=14, operand=9 (.range.stop)) -> v2:int
       _LOAD_SLOT (target=14, operand=10 (.range.step)) -> v0:int
       _CHECK_PERIODIC (target=14, exit=0)
       _GUARD_NOT_EXHAUSTED_RANGE (v1, v2, v0, target=14, exit=1)
       _ITER_NEXT_RANGE (v1, v0, target=14, exit=2) -> v3:int
       _BINARY_SUBSCR_LIST_INT (v6, v1, target=19, exit=3) -> v7:object
       _CALL_LIST_APPEND (v6, v7, target=20, exit=4)
       _JUMP_TO_TOP (target=13)
       loop-carried: data=v6, .range.cur=v3, .range.stop=v2, .range.step=v0
    """
    listing = after_ranges(text)
    assert "_BINARY_SUBSCR_LIST_INT (v6, v1, target=19, exit=3) -> v7:object" in listing
    assert "len(" not in listing


def test_a_list_the_loop_assigns_keeps_its_bounds_check():
    # the list is loop-carried (another list each iteration): its length at the loop's top says nothing
    text = """
    uops of t:
       _LOAD_SLOT (target=14, operand=0 (rows)) -> v6:list
       _LOAD_SLOT (target=14, operand=1 (row)) -> v5:list
       _LOAD_SLOT (target=14, operand=8 (.range.cur)) -> v1:int
       _LOAD_SLOT (target=14, operand=9 (.range.stop)) -> v2:int
       _LOAD_SLOT (target=14, operand=10 (.range.step)) -> v0:int
       _CHECK_PERIODIC (target=14, exit=0)
       _GUARD_NOT_EXHAUSTED_RANGE (v1, v2, v0, target=14, exit=1)
       _ITER_NEXT_RANGE (v1, v0, target=14, exit=2) -> v3:int
       _BINARY_SUBSCR_LIST_INT (v5, v1, target=19, exit=3) -> v7:object
       _BINARY_SUBSCR_LIST_INT (v6, v1, target=20, exit=4) -> v8:object
       _GUARD_TYPE (v8, target=20, operand=list, exit=5) -> v9:list
       _JUMP_TO_TOP (target=13)
       loop-carried: rows=v6, row=v9, .range.cur=v3, .range.stop=v2, .range.step=v0
    """
    listing = after_ranges(text)
    assert "_BINARY_SUBSCR_LIST_INT (v5, v1, target=19, exit=3) -> v7:object" in listing
    assert "_BINARY_SUBSCR_LIST_INT (v6, v1, target=20, exit=4, fast=_BINARY_SUBSCR_LIST_INT_IN_BOUNDS)" in listing


def test_a_side_trace_has_no_fast_copy():
    # (no loop: nothing is known of the values it starts with)
    assert_unchanged(
        ranges.run,
        """
        # t_side: side trace from exit 3 (line 5) of the loop at line 4; entry kinds {total:int, i:int} [uops]
        uops of t_side:
           _LOAD_SLOT (target=14, operand=1 (total)) -> v4:int
           _LOAD_SLOT (target=14, operand=2 (i)) -> v5:int
           _BINARY_OP_AND_INT (v5, 7, target=21) -> v8:int
           _BINARY_OP_ADD_INT (v4, v8, target=22, exit=3) -> v9:int
           _EXIT_TRACE (target=23, exit=4)
        """,
    )


def test_a_loop_without_a_range_keeps_its_accumulator_checked():
    # while i != 1: total += i & 7  (no trip count: the sum is unbounded)
    assert_unchanged(
        ranges.run,
        """
        uops of t:
           _LOAD_SLOT (target=4, operand=0 (i)) -> v0:int
           _LOAD_SLOT (target=4, operand=1 (total)) -> v1:int
           _CHECK_PERIODIC (target=4, exit=0)
           _COMPARE_OP_INT (v0, 1, target=5, operand=!=) -> v2:bool
           _GUARD_IS_TRUE_POP (v2, target=6, exit=1)
           _BINARY_OP_AND_INT (v0, 7, target=7) -> v3:int
           _BINARY_OP_ADD_INT (v1, v3, target=8, exit=2) -> v4:int
           _BINARY_OP_RSHIFT_INT (v0, 1, target=9, exit=3) -> v5:int
           _JUMP_TO_TOP (target=3)
           loop-carried: i=v5, total=v4
        """,
    )


def test_a_loop_calling_an_inner_tree_gets_no_fast_copy():
    # (its time is the inner loop's: a second copy would only take compile time)
    assert_unchanged(
        ranges.run,
        """
        uops of t:
           _LOAD_SLOT (target=7, operand=0 (m)) -> v5:int
           _LOAD_SLOT (target=7, operand=4 (.range.cur)) -> v1:int
           _LOAD_SLOT (target=7, operand=5 (.range.stop)) -> v2:int
           _LOAD_SLOT (target=7, operand=6 (.range.step)) -> v0:int
           _CHECK_PERIODIC (target=7, exit=6)
           _GUARD_NOT_EXHAUSTED_RANGE (v1, v2, v0, target=7, exit=7)
           _ITER_NEXT_RANGE (v1, v0, target=7, exit=8) -> v3:int
           _CALL_TREE (target=13, operand=tree t_inner (loop at line 5))
           _JUMP_TO_TOP (target=6)
           loop-carried: m=v5, .range.cur=v3, .range.stop=v2, .range.step=v0
        """,
    )


def test_a_guard_on_a_comparison_bounds_counters_that_only_grow_or_shrink():
    # while i < j: ... i += 1; j -= 1  (i only grows, j only shrinks: after the guard both are within
    # [i, j] of the loop's top)
    listing = after_ranges(
        """
        uops of t:
           _LOAD_SLOT (target=20, operand=1 (a)) -> v3:list
           _LOAD_SLOT (target=20, operand=3 (i)) -> v0:int
           _LOAD_SLOT (target=20, operand=4 (j)) -> v1:int
           _CHECK_PERIODIC (target=20, exit=0)
           _COMPARE_OP_INT (v0, v1, target=22, operand=<) -> v2:bool
           _GUARD_IS_TRUE_POP (v2, target=23, exit=1)
           _BINARY_SUBSCR_LIST_INT (v3, v1, target=26, exit=2) -> v4:object
           _STORE_SUBSCR_LIST_OBJECT (v4, v3, v0, target=33, exit=8)
           _BINARY_OP_ADD_INT (v0, 1, target=39, exit=10) -> v13:int
           _BINARY_OP_SUBTRACT_INT (v1, 1, target=43, exit=11) -> v15:int
           _JUMP_TO_TOP (target=19)
           loop-carried: a=v3, i=v13, j=v15
        """
    )
    assert "_BINARY_SUBSCR_LIST_INT (v3, v1, target=26, exit=2, fast=_BINARY_SUBSCR_LIST_INT_IN_BOUNDS)" in listing
    assert "(v4, v3, v0, target=33, exit=8, fast=_STORE_SUBSCR_LIST_OBJECT_IN_BOUNDS)" in listing
    assert "_BINARY_OP_ADD_INT (v0, 1, target=39, exit=10, fast=_BINARY_OP_ADD_INT_IN_RANGE)" in listing
    assert "_BINARY_OP_SUBTRACT_INT (v1, 1, target=43, exit=11, fast=_BINARY_OP_SUBTRACT_INT_IN_RANGE)" in listing
    assert "0 <= v0;" in listing and "v1 <= len(v3) - 1" in listing


def test_a_guard_the_other_way_bounds_nothing_it_does_not_imply():
    # while i != j: i += 1  (!= says nothing of i's upper bound: i + 1 stays checked)
    assert_unchanged(
        ranges.run,
        """
        uops of t:
           _LOAD_SLOT (target=20, operand=3 (i)) -> v0:int
           _LOAD_SLOT (target=20, operand=4 (j)) -> v1:int
           _CHECK_PERIODIC (target=20, exit=0)
           _COMPARE_OP_INT (v0, v1, target=22, operand=!=) -> v2:bool
           _GUARD_IS_TRUE_POP (v2, target=23, exit=1)
           _BINARY_OP_ADD_INT (v0, 1, target=39, exit=10) -> v13:int
           _JUMP_TO_TOP (target=19)
           loop-carried: i=v13, j=v1
        """,
    )


def test_a_false_guard_holds_the_negated_comparison():
    # while True: if i >= n: break; i += 1  (the guard that the comparison is false: i < n)
    listing = after_ranges(
        """
        uops of t:
           _LOAD_SLOT (target=20, operand=3 (i)) -> v0:int
           _LOAD_SLOT (target=20, operand=4 (n)) -> v1:int
           _CHECK_PERIODIC (target=20, exit=0)
           _COMPARE_OP_INT (v0, v1, target=22, operand=>=) -> v2:bool
           _GUARD_IS_FALSE_POP (v2, target=23, exit=1)
           _BINARY_OP_ADD_INT (v0, 1, target=39, exit=10) -> v13:int
           _JUMP_TO_TOP (target=19)
           loop-carried: i=v13, n=v1
        """
    )
    assert "_BINARY_OP_ADD_INT (v0, 1, target=39, exit=10, fast=_BINARY_OP_ADD_INT_IN_RANGE)" in listing


#: for i in range(n): for k in range(d): total += i ^ k    (the loop over k unrolled into the trace: recorded with
#: d = 2, each visit of its header counted, its range guarded at each)
UNROLLED = """
uops of t:
   _LOAD_SLOT (target=14, operand=1 (total)) -> v4:int
   _LOAD_SLOT (target=14, operand=2 (d)) -> v5:int
   _LOAD_SLOT (target=14, operand=8 (.range.cur)) -> v1:int
   _LOAD_SLOT (target=14, operand=9 (.range.stop)) -> v2:int
   _LOAD_SLOT (target=14, operand=10 (.range.step)) -> v0:int
   _CHECK_PERIODIC (target=14, exit=0)
   _GUARD_NOT_EXHAUSTED_RANGE (v1, v2, v0, target=14, exit=1)
   _ITER_NEXT_RANGE (v1, v0, target=14, exit=2) -> v3:int
   _UNROLLED_HEADER (target=20, exit=3)
   _GUARD_NOT_EXHAUSTED_RANGE (0, v5, 1, target=21, exit=4)
   _ITER_NEXT_RANGE_NO_OVERFLOW (0, 1, target=21) -> v6:int
   _BINARY_OP_XOR_INT (v1, 0, target=23) -> v7:int
   _BINARY_OP_ADD_INT (v4, v7, target=24, exit=5) -> v8:int
   _UNROLLED_HEADER (target=20, exit=6)
   _GUARD_NOT_EXHAUSTED_RANGE (v6, v5, 1, target=21, exit=7)
   _ITER_NEXT_RANGE_NO_OVERFLOW (v6, 1, target=21) -> v9:int
   _BINARY_OP_XOR_INT (v1, v6, target=23) -> v10:int
   _BINARY_OP_ADD_INT (v8, v10, target=24, exit=8) -> v11:int
   _UNROLLED_HEADER (target=20, exit=9)
   _GUARD_EXHAUSTED_RANGE (v9, v5, 1, target=21, exit=10)
   _JUMP_TO_TOP (target=13)
   loop-carried: total=v11, d=v5, .range.cur=v3, .range.stop=v2, .range.step=v0
"""


def test_the_range_guards_of_an_unrolled_loop_go_in_the_fast_copy_while_its_bound_is_the_recorded_one():
    """Its bound (read at the entry, never assigned) allows exactly the recorded trip count: 1 <= d, 2 <= d (it
    goes on at k = 0 and 1), d <= 2 (it ends at k = 2); the periodic checks of its header visits stay."""
    listing = after_ranges(UNROLLED)
    assert "_GUARD_NOT_EXHAUSTED_RANGE (0, v5, 1, target=21, exit=4, fast=_RANGE_PROVEN)" in listing
    assert "_GUARD_NOT_EXHAUSTED_RANGE (v6, v5, 1, target=21, exit=7, fast=_RANGE_PROVEN)" in listing
    assert "_GUARD_EXHAUSTED_RANGE (v9, v5, 1, target=21, exit=10, fast=_RANGE_PROVEN)" in listing
    assert "(v1, v2, v0, target=14, exit=1)" in listing  # (the loop's own counter: the counted copy's)
    conditions = listing.split("fast while: ")[1].splitlines()[0].split("; ")
    assert {"1 <= v5", "2 <= v5", "v5 <= 2"} <= set(conditions)
    assert listing.count("_UNROLLED_HEADER (target=20, exit=") == 3


def test_a_range_guard_whose_bound_the_loop_changes_stays():
    text = UNROLLED.replace("loop-carried: total=v11, d=v5", "loop-carried: total=v11, d=v11")
    listing = after_ranges(text)
    assert "_GUARD_NOT_EXHAUSTED_RANGE (0, v5, 1, target=21, exit=4)" in listing
    assert "_RANGE_PROVEN" not in listing and "v5 <= 2" not in listing


#: for i in range(1, n + 1): total -= a[-i] * 0.5     (a: a 1-D float64 array; n: its length, read at the entry)
FROM_THE_END = """
uops of t:
   _LOAD_SLOT (target=32, operand=0 (a)) -> v5:ndarray
   _LOAD_SLOT (target=32, operand=1 (total)) -> v4:np.float64
   _LOAD_SLOT (target=32, operand=8 (.range.cur)) -> v1:int
   _LOAD_SLOT (target=32, operand=9 (.range.stop)) -> v2:int
   _LOAD_SLOT (target=32, operand=10 (.range.step)) -> v0:int
   _ARRAY_DATA (v5, target=38) -> v7:int                                               # line 20 (hoisted to the entry)
   _ARRAY_DIM (v5, target=38, operand=0) -> v8:int                                     # line 20 (hoisted to the entry)
   _CHECK_PERIODIC (target=32, exit=8)                                                 # line 19
   _GUARD_NOT_EXHAUSTED_RANGE (v1, v2, v0, target=32, exit=9)                          # line 19
   _ITER_NEXT_RANGE (v1, v0, target=32, exit=10) -> v3:int                             # line 19
   _UNARY_NEGATIVE_INT (v1, target=37, exit=11) -> v6:int                              # line 20
   _ARRAY_INDEX (v8, v6, target=38, exit=12) -> v9:int                                 # line 20
   _ARRAY_LOAD (v7, v9, target=38, operand=float64 1-D C) -> v10:np.float64            # line 20
   _NP_BINARY_OP_MULTIPLY_FLOAT64 (v10, 0.5, target=40, exit=13) -> v12:np.float64     # line 20
   _NP_BINARY_OP_SUBTRACT_FLOAT64 (v4, v12, target=41, exit=14) -> v13:np.float64      # line 20
   _JUMP_TO_TOP (target=31)                                                            # line 19
   loop-carried: a=v5, total=v13, .range.cur=v3, .range.stop=v2, .range.step=v0
"""


def test_a_negative_array_index_within_the_dimension_counts_from_the_end_unchecked_in_the_fast_copy():
    listing = after_ranges(FROM_THE_END)
    assert "_ARRAY_INDEX (v8, v6, target=38, exit=12, fast=_ARRAY_INDEX_FROM_END) -> v9:int" in listing
    # -i is negative for every i the loop has left, and at least -len(a)
    assert "0 - min(v1, v2 + 1) <= -1" in listing
    assert "0 - v8 <= 0 - max(v1, v2 - 1)" in listing


def test_an_index_from_the_end_that_may_not_be_negative_goes_unchecked_only_while_the_conditions_say_it_is():
    # for i in range(...): total -= a[i - 5] * 0.5 (where i - 5 >= 0 the check stays: the checked copy runs)
    text = FROM_THE_END.replace(
        "_UNARY_NEGATIVE_INT (v1, target=37, exit=11)", "_BINARY_OP_SUBTRACT_INT (v1, 5, target=37, exit=11)"
    )
    listing = after_ranges(text)
    assert "fast=_ARRAY_INDEX_FROM_END" in listing
    assert "max(v1, v2 - 1) - 5 <= -1" in listing


#: for x in data: k = int((x - lo) * scale); if 0 <= k < bins: counts[k] += 1   (arrays: data float64, counts int64)
HISTOGRAM = """
uops of t:
   _LOAD_SLOT (target=13, operand=1 (counts)) -> v20:ndarray
   _LOAD_SLOT (target=13, operand=2 (lo)) -> v10:float
   _LOAD_SLOT (target=13, operand=4 (bins)) -> v18:int
   _LOAD_SLOT (target=13, operand=5 (scale)) -> v12:float
   _LOAD_SLOT (target=13, operand=9 (.seq)) -> v1:ndarray
   _LOAD_SLOT (target=13, operand=10 (.index)) -> v2:int
   _LOAD_SLOT (target=13, operand=11 (.iter)) -> v0:None
   _GUARD_ARRAY (v1, target=13, operand=float64 1-D C, exit=0)                         # line 71 (hoisted to the entry)
   _ARRAY_DATA (v1, target=13) -> v3:int                                               # line 71 (hoisted to the entry)
   _ARRAY_DIM (v1, target=13, operand=0) -> v4:int                                     # line 71 (hoisted to the entry)
   _GUARD_ARRAY (v20, target=39, operand=int64 1-D C, exit=2)                          # line 74 (hoisted to the entry)
   _ARRAY_DATA (v20, target=39) -> v21:int                                             # line 74 (hoisted to the entry)
   _ARRAY_DIM (v20, target=39, operand=0) -> v22:int                                   # line 74 (hoisted to the entry)
   _CHECK_PERIODIC (target=13, exit=4)                                                 # line 71
   _COMPARE_OP_INT (v2, v4, target=13, operand=<) -> v5:bool                           # line 71
   _GUARD_IS_TRUE_POP (v5, target=13, exit=5)                                          # line 71
   _GUARD_INDEX_RANGE (v2, 0, v4, 0, target=13, exit=6)                                # line 71
   _ARRAY_LOAD (v3, v2, target=13, operand=float64 1-D C) -> v7:np.float64             # line 71
   _ITER_INCREMENT (v2, target=13) -> v8:int                                           # line 71
   _NP_BINARY_OP_SUBTRACT_FLOAT64 (v7, v10, target=18, exit=7) -> v11:np.float64       # line 72
   _NP_BINARY_OP_MULTIPLY_FLOAT64 (v11, v12, target=20, exit=8) -> v13:np.float64      # line 72
   _NP_CAST (v13, target=21) -> v14:float                                              # line 72
   _CALL_FLOAT_TO_INT (v14, target=21, exit=9) -> v15:int                              # line 72
   _COMPARE_OP_INT (0, v15, target=27, operand=<=) -> v17:bool                         # line 73
   _GUARD_IS_TRUE_POP (v17, target=28, exit=10)                                        # line 73
   _COMPARE_OP_INT (v15, v18, target=30, operand=<) -> v19:bool                        # line 73
   _GUARD_IS_TRUE_POP (v19, target=31, exit=11)                                        # line 73
   _GUARD_INDEX_RANGE (v15, 0, v22, 0, target=39, exit=12)                             # line 74
   _ARRAY_LOAD (v21, v15, target=39, operand=int64 1-D C) -> v24:np.int64              # line 74
   _NP_BINARY_OP_ADD_INT64 (v24, 1, target=41, exit=13) -> v26:np.int64                # line 74
   _ARRAY_STORE (v26, v21, v15, target=44, operand=int64 1-D C, exit=14)               # line 74
   _JUMP_TO_TOP (target=12)                                                            # line 71
   loop-carried: counts=v20, lo=v10, bins=v18, scale=v12, .seq=v1, .index=v8, .iter=v0
"""


def test_a_sequence_index_and_a_value_bounded_by_two_guards_go_unchecked_in_the_fast_copy():
    """`for x in data`: the index only grows from its value at the loop's top, and the loop's guard bounds it by
    the array's length (read at the entry); k, whose interval is unknown, is bounded by `0 <= k` and `k < bins`:
    both array accesses' guards are proven where bins is at most counts' length."""
    listing = after_ranges(HISTOGRAM)
    assert "_GUARD_INDEX_RANGE (v2, 0, v4, 0, target=13, exit=6, fast=_INDEX_RANGE_PROVEN)" in listing
    assert "_GUARD_INDEX_RANGE (v15, 0, v22, 0, target=39, exit=12, fast=_INDEX_RANGE_PROVEN)" in listing
    assert "0 <= v2" in listing
    assert "v18 - 1 <= v22 - 1" in listing
    # (the guards on k stay: they decide the way, not a check)
    assert "_GUARD_IS_TRUE_POP (v17, target=28, exit=10)" in listing and "exit=10, fast" not in listing


def test_a_value_bounded_on_one_side_only_keeps_its_array_check():
    text = HISTOGRAM.replace(
        "   _COMPARE_OP_INT (0, v15, target=27, operand=<=) -> v17:bool                         # line 73\n", ""
    ).replace("   _GUARD_IS_TRUE_POP (v17, target=28, exit=10)                                        # line 73\n", "")
    listing = after_ranges(text)
    assert "_GUARD_INDEX_RANGE (v15, 0, v22, 0, target=39, exit=12)" in listing
    assert "_GUARD_INDEX_RANGE (v15, 0, v22, 0, target=39, exit=12, fast" not in listing
