"""The `moves` pass: stores that put items read out of a list back into that list at the indices they were read
from (permuted) become one _MOVE_LIST_ITEMS, and the items' type guards, references and unboxings go; the exits
before the stores hold the objects read. Anything that could see or change the list half-way, or a later use of
an item, keeps the stores as they are."""

from jit.optimizer import moves

from .passes import assert_pass, assert_unchanged

#: `while i < j: a[i], a[j] = a[j], a[i]; i += 1; j -= 1` as recorded (bench/kernels.py list_swaps)
SWAP = """
uops of t:
   _LOAD_SLOT (target=20, operand=1 (a)) -> v3:list
   _LOAD_SLOT (target=20, operand=3 (i)) -> v0:int
   _LOAD_SLOT (target=20, operand=4 (j)) -> v1:int
   _CHECK_PERIODIC (target=20, exit=0)                                                 # line 9
         exit 0 at 20: {} [] when-hot=never
   _COMPARE_OP_INT (v0, v1, target=22, operand=<) -> v2:bool                           # line 9
   _GUARD_IS_TRUE_POP (v2, target=23, exit=1)                                          # line 9
         exit 1 at 23: {3 (i)=v0, 4 (j)=v1} [v2] leaves-loop
   _BINARY_SUBSCR_LIST_INT (v3, v1, target=26, exit=2) -> v4:object # line 10
         exit 2 at 26: {1 (a)=v3, 3 (i)=v0, 4 (j)=v1} [v3, v1]
   _GUARD_TYPE (v4, target=26, operand=int, exit=3) -> v5:object                       # line 10
         exit 3 at 26: {1 (a)=v3, 3 (i)=v0, 4 (j)=v1} [v3, v1]
   _NEW_REF (v5, target=26) -> v10:object                                              # line 10
   _UNBOX_INT (v5, target=26, exit=4) -> v6:int                                        # line 10
         exit 4 at 26: {1 (a)=v3, 3 (i)=v0, 4 (j)=v1} [v3, v1]
   _BINARY_SUBSCR_LIST_INT (v3, v0, target=29, exit=5) -> v7:object # line 10
         exit 5 at 29: {1 (a)=v3, 3 (i)=v0, 4 (j)=v1} [v6, v3, v0]
   _GUARD_TYPE (v7, target=29, operand=int, exit=6) -> v8:object                       # line 10
         exit 6 at 29: {1 (a)=v3, 3 (i)=v0, 4 (j)=v1} [v6, v3, v0]
   _NEW_REF (v8, target=29) -> v11:object                                              # line 10
   _UNBOX_INT (v8, target=29, exit=7) -> v9:int                                        # line 10
         exit 7 at 29: {1 (a)=v3, 3 (i)=v0, 4 (j)=v1} [v6, v3, v0]
   _STORE_SUBSCR_LIST_OBJECT (v10, v3, v0, target=33, exit=8) # line 10
         exit 8 at 33: {1 (a)=v3, 3 (i)=v0, 4 (j)=v1} [v9, v6, v3, v0]
   _STORE_SUBSCR_LIST_OBJECT (v11, v3, v1, target=36, exit=9) # line 10
         exit 9 at 36: {1 (a)=v3, 3 (i)=v0, 4 (j)=v1} [v9, v3, v1]
   _BINARY_OP_ADD_INT (v0, 1, target=39, exit=10) -> v13:int # line 11
         exit 10 at 39: {1 (a)=v3, 3 (i)=v0, 4 (j)=v1} [v0, 1]
   _BINARY_OP_SUBTRACT_INT (v1, 1, target=43, exit=11) -> v15:int # line 12
         exit 11 at 43: {1 (a)=v3, 3 (i)=v13, 4 (j)=v1} [v1, 1]
   _JUMP_TO_TOP (target=19)                                                            # line 9
     end at 19: {1 (a)=v3, 3 (i)=v13, 4 (j)=v15} []
     written: 3 (i), 4 (j)
"""


def test_a_swap_moves_the_pointers_and_nothing_else():
    # the guards, references and unboxings go; the exit after the first read holds the object read (v4)
    assert_pass(
        moves.run,
        SWAP,
        """
        uops of t:
           _LOAD_SLOT (target=20, operand=1 (a)) -> v3:list
           _LOAD_SLOT (target=20, operand=3 (i)) -> v0:int
           _LOAD_SLOT (target=20, operand=4 (j)) -> v1:int
           _CHECK_PERIODIC (target=20, exit=0)                                                 # line 9
                 exit 0 at 20: {} [] when-hot=never
           _COMPARE_OP_INT (v0, v1, target=22, operand=<) -> v2:bool                           # line 9
           _GUARD_IS_TRUE_POP (v2, target=23, exit=1)                                          # line 9
                 exit 1 at 23: {3 (i)=v0, 4 (j)=v1} [v2] leaves-loop
           _BINARY_SUBSCR_LIST_INT (v3, v1, target=26, exit=2) -> v4:object # line 10
                 exit 2 at 26: {1 (a)=v3, 3 (i)=v0, 4 (j)=v1} [v3, v1]
           _BINARY_SUBSCR_LIST_INT (v3, v0, target=29, exit=5) -> v7:object # line 10
                 exit 5 at 29: {1 (a)=v3, 3 (i)=v0, 4 (j)=v1} [v4, v3, v0]
           _MOVE_LIST_ITEMS (v3, v0, v1, v4, v7, target=33) # line 10
           _BINARY_OP_ADD_INT (v0, 1, target=39, exit=10) -> v13:int # line 11
                 exit 10 at 39: {1 (a)=v3, 3 (i)=v0, 4 (j)=v1} [v0, 1]
           _BINARY_OP_SUBTRACT_INT (v1, 1, target=43, exit=11) -> v15:int # line 12
                 exit 11 at 43: {1 (a)=v3, 3 (i)=v13, 4 (j)=v1} [v1, 1]
           _JUMP_TO_TOP (target=19)                                                            # line 9
             end at 19: {1 (a)=v3, 3 (i)=v13, 4 (j)=v15} []
             written: 3 (i), 4 (j)
        """,
        snapshots=True,
    )


def test_an_item_kept_in_a_variable_after_the_stores_keeps_them():
    # `x = a[j]; a[j] = a[i]; a[i] = x` with x read after the loop: its number is needed at the loop's end
    assert_unchanged(
        moves.run,
        """
        uops of t:
           _LOAD_SLOT (target=1, operand=0 (a)) -> v0:list
           _LOAD_SLOT (target=1, operand=1 (i)) -> v1:int
           _LOAD_SLOT (target=1, operand=2 (j)) -> v2:int
           _BINARY_SUBSCR_LIST_INT (v0, v2, target=2, exit=0) -> v3:object
                 exit 0 at 2: {} [v0, v2]
           _GUARD_TYPE (v3, target=2, operand=int, exit=1) -> v4:object
                 exit 1 at 2: {} [v0, v2]
           _NEW_REF (v4, target=2) -> v5:object
           _UNBOX_INT (v4, target=2, exit=2) -> v6:int
                 exit 2 at 2: {} [v0, v2]
           _BINARY_SUBSCR_LIST_INT (v0, v1, target=3, exit=3) -> v7:object
                 exit 3 at 3: {3 (x)=v6} [v0, v1]
           _GUARD_TYPE (v7, target=3, operand=int, exit=4) -> v8:object
                 exit 4 at 3: {3 (x)=v6} [v0, v1]
           _NEW_REF (v8, target=3) -> v9:object
           _UNBOX_INT (v8, target=3, exit=5) -> v10:int
                 exit 5 at 3: {3 (x)=v6} [v0, v1]
           _STORE_SUBSCR_LIST_OBJECT (v9, v0, v2, target=4, exit=6)
                 exit 6 at 4: {3 (x)=v6} [v10, v0, v2]
           _STORE_SUBSCR_LIST_OBJECT (v5, v0, v1, target=5, exit=7)
                 exit 7 at 5: {3 (x)=v6} [v6, v0, v1]
           _JUMP_TO_TOP (target=0)
             end at 0: {3 (x)=v6} []
             written: 3 (x)
        """,
        snapshots=True,
    )


#: reads of a[j] and a[i], then `between` (a uop), then the stores a[i] = a[j], a[j] = a[i]
_BETWEEN = """
uops of t:
   _LOAD_SLOT (target=1, operand=0 (a)) -> v0:list
   _LOAD_SLOT (target=1, operand=1 (i)) -> v1:int
   _LOAD_SLOT (target=1, operand=2 (j)) -> v2:int
   _LOAD_SLOT (target=1, operand=3 (b)) -> v20:list
   _BINARY_SUBSCR_LIST_INT (v0, v2, target=2, exit=0) -> v3:object
   _GUARD_TYPE (v3, target=2, operand=float, exit=1) -> v4:object
   _NEW_REF (v4, target=2) -> v5:object
   _UNBOX_FLOAT (v4, target=2) -> v6:float
   _BINARY_SUBSCR_LIST_INT (v0, v1, target=3, exit=3) -> v7:object
   _GUARD_TYPE (v7, target=3, operand=float, exit=4) -> v8:object
   _NEW_REF (v8, target=3) -> v9:object
   _UNBOX_FLOAT (v8, target=3) -> v10:float
   {between}
   _STORE_SUBSCR_LIST_OBJECT (v5, v0, v1, target=4, exit=6)
   _STORE_SUBSCR_LIST_OBJECT (v9, v0, v2, target=5, exit=7)
   _EXIT_TRACE (target=6, exit=8)
"""


def test_a_number_used_by_a_uop_keeps_the_stores():
    assert_unchanged(moves.run, _BETWEEN.format(between="_BINARY_OP_ADD_FLOAT (v6, v10, target=3) -> v11:float"))


def test_floats_swapped_with_an_exit_free_computation_between_the_stores():
    text = _BETWEEN.format(between="").replace(
        "   _STORE_SUBSCR_LIST_OBJECT (v9,",
        "   _COMPARE_OP_INT (v1, v2, target=4, operand=<) -> v30:bool\n   _STORE_SUBSCR_LIST_OBJECT (v9,",
    )
    assert_pass(
        moves.run,
        text,
        """
        uops of t:
           _LOAD_SLOT (target=1, operand=0 (a)) -> v0:list
           _LOAD_SLOT (target=1, operand=1 (i)) -> v1:int
           _LOAD_SLOT (target=1, operand=2 (j)) -> v2:int
           _LOAD_SLOT (target=1, operand=3 (b)) -> v20:list
           _BINARY_SUBSCR_LIST_INT (v0, v2, target=2, exit=0) -> v3:object
           _BINARY_SUBSCR_LIST_INT (v0, v1, target=3, exit=3) -> v7:object
           _COMPARE_OP_INT (v1, v2, target=4, operand=<) -> v30:bool
           _MOVE_LIST_ITEMS (v0, v1, v2, v3, v7, target=4)
           _EXIT_TRACE (target=6, exit=8)
        """,
    )


def test_what_could_change_a_list_or_run_python_code_between_the_reads_and_the_stores_keeps_them():
    for between in (
        "_STORE_SUBSCR_LIST_OBJECT (v9, v20, v1, target=3, exit=5)",  # a store into another list (maybe a)
        "_CHECK_PERIODIC (target=3, exit=5)",  # signal handlers
        "_CALL_LIST_APPEND (v20, v1, target=3, exit=5)",
    ):
        assert_unchanged(moves.run, _BETWEEN.format(between=between))


def test_a_guard_between_the_reads_and_the_stores_leaves_with_the_objects_read():
    assert_pass(
        moves.run,
        _BETWEEN.format(between="_GUARD_NONZERO_INT (v1, target=3, exit=5)"),
        """
        uops of t:
           _LOAD_SLOT (target=1, operand=0 (a)) -> v0:list
           _LOAD_SLOT (target=1, operand=1 (i)) -> v1:int
           _LOAD_SLOT (target=1, operand=2 (j)) -> v2:int
           _LOAD_SLOT (target=1, operand=3 (b)) -> v20:list
           _BINARY_SUBSCR_LIST_INT (v0, v2, target=2, exit=0) -> v3:object
           _BINARY_SUBSCR_LIST_INT (v0, v1, target=3, exit=3) -> v7:object
           _GUARD_NONZERO_INT (v1, target=3, exit=5)
           _MOVE_LIST_ITEMS (v0, v1, v2, v3, v7, target=4)
           _EXIT_TRACE (target=6, exit=8)
        """,
    )


def test_stores_into_another_list_or_at_other_indices_stay():
    swapped_lists = _BETWEEN.format(between="").replace(
        "_STORE_SUBSCR_LIST_OBJECT (v9, v0, v2", "_STORE_SUBSCR_LIST_OBJECT (v9, v20, v2"
    )
    assert_unchanged(moves.run, swapped_lists)  # a[i] = a[j]; b[j] = a[i]: b's old item is dropped
    elsewhere = _BETWEEN.format(between="").replace(
        "_STORE_SUBSCR_LIST_OBJECT (v9, v0, v2", "_STORE_SUBSCR_LIST_OBJECT (v9, v0, 0"
    )
    assert_unchanged(moves.run, elsewhere)  # a[i] = a[j]; a[0] = a[i]: a[j]'s object may be dropped
    twice = _BETWEEN.format(between="").replace(
        "_STORE_SUBSCR_LIST_OBJECT (v9, v0, v2", "_STORE_SUBSCR_LIST_OBJECT (v5, v0, v2"
    )
    assert_unchanged(moves.run, twice)  # a[i], a[j] = a[j], a[j]: a[i]'s object is dropped


def test_a_rotation_of_three_leaves_where_two_indices_name_one_item():
    assert_pass(
        moves.run,
        """
        uops of t:
           _LOAD_SLOT (target=1, operand=0 (a)) -> v0:list
           _LOAD_SLOT (target=1, operand=1 (i)) -> v1:int
           _LOAD_SLOT (target=1, operand=2 (j)) -> v2:int
           _LOAD_SLOT (target=1, operand=3 (k)) -> v3:int
           _BINARY_SUBSCR_LIST_INT (v0, v2, target=2, exit=0) -> v4:object
           _GUARD_TYPE (v4, target=2, operand=int, exit=1) -> v5:object
           _NEW_INT_OBJECT_REF (v5, target=2) -> v6:int_object
           _BINARY_SUBSCR_LIST_INT (v0, v3, target=3, exit=2) -> v7:object
                 exit 2 at 3: {} [v6, v0, v3]
           _GUARD_TYPE (v7, target=3, operand=int, exit=3) -> v8:object
                 exit 3 at 3: {} [v6, v0, v3]
           _NEW_INT_OBJECT_REF (v8, target=3) -> v9:int_object
           _BINARY_SUBSCR_LIST_INT (v0, v1, target=4, exit=4) -> v10:object
           _GUARD_TYPE (v10, target=4, operand=int, exit=5) -> v11:object
           _NEW_INT_OBJECT_REF (v11, target=4) -> v12:int_object
           _STORE_SUBSCR_LIST_OBJECT (v6, v0, v1, target=5, exit=6)
                 exit 6 at 5: {} [v12, v9, v6, v0, v1]
           _STORE_SUBSCR_LIST_OBJECT (v9, v0, v2, target=6, exit=7)
           _STORE_SUBSCR_LIST_OBJECT (v12, v0, v3, target=7, exit=8)
           _EXIT_TRACE (target=8, exit=9)
                 exit 9 at 8: {} []
        """,
        """
        uops of t:
           _LOAD_SLOT (target=1, operand=0 (a)) -> v0:list
           _LOAD_SLOT (target=1, operand=1 (i)) -> v1:int
           _LOAD_SLOT (target=1, operand=2 (j)) -> v2:int
           _LOAD_SLOT (target=1, operand=3 (k)) -> v3:int
           _BINARY_SUBSCR_LIST_INT (v0, v2, target=2, exit=0) -> v4:object
           _BINARY_SUBSCR_LIST_INT (v0, v3, target=3, exit=2) -> v7:object
                 exit 2 at 3: {} [v4, v0, v3]
           _BINARY_SUBSCR_LIST_INT (v0, v1, target=4, exit=4) -> v10:object
           _MOVE_LIST_ITEMS_DISTINCT (v0, v1, v2, v3, v4, v7, v10, target=5, exit=6)
                 exit 6 at 5: {} [v10, v7, v4, v0, v1]
           _EXIT_TRACE (target=8, exit=9)
                 exit 9 at 8: {} []
        """,
        snapshots=True,
    )
