"""The `hoist` pass: guards declared hoistable (globals, module attributes) move to the trace's entry, each
distinct one once, leaving where the trace starts; every other uop stays where it is."""

from jit.optimizer import hoist

from .passes import after, assert_pass, assert_unchanged

BODY = """
uops of t:
   0 _LOAD_SLOT (target=7, operand=0 (n)) -> v0:int
   1 _LOAD_SLOT (target=7, operand=1 (x)) -> v1:float
   2 _CHECK_PERIODIC (target=7, exit=0)                                   # line 4
   3 _GUARD_GLOBAL (target=9, operand=f is <function f>, exit=1)          # line 5
   4 _GUARD_MODULE_ATTR (target=11, operand=math.sqrt is <builtin_function_or_method sqrt>, exit=2)  # line 5
   5 _CALL_MATH_UNARY (v1, target=12, operand=sqrt, exit=3) -> v2:float   # line 5
   6 _GUARD_GLOBAL (target=14, operand=f is <function f>, exit=4)         # line 6
   7 _GUARD_GLOBAL (target=15, operand=g is <function f>, exit=5)         # line 6
   8 _GUARD_MODULE_ATTR (target=16, operand=math.sqrt is <builtin_function_or_method sqrt>, exit=6)  # line 6
   9 _JUMP_TO_TOP (target=6)                                              # line 4
     loop-carried: n=v0, x=v2
"""


def test_global_and_module_guards_move_to_the_entry_once_each():
    assert_pass(
        hoist.run,
        BODY,
        """
        uops of t:
           _LOAD_SLOT (target=7, operand=0 (n)) -> v0:int
           _LOAD_SLOT (target=7, operand=1 (x)) -> v1:float
           _GUARD_GLOBAL (target=9, operand=f is <function f>, exit=1)          # line 5 (hoisted to the entry)
           _GUARD_MODULE_ATTR (target=11, operand=math.sqrt is <builtin_function_or_method sqrt>, exit=2)  # line 5 (hoisted to the entry)
           _GUARD_GLOBAL (target=15, operand=g is <function f>, exit=5)         # line 6 (hoisted to the entry)
           _CHECK_PERIODIC (target=7, exit=0)                                   # line 4
           _CALL_MATH_UNARY (v1, target=12, operand=sqrt, exit=3) -> v2:float   # line 5
           _JUMP_TO_TOP (target=6)                                              # line 4
           loop-carried: n=v0, x=v2
        """,
    )


def test_a_hoisted_guard_leaves_where_the_trace_starts_and_invalidates_when_hot():
    text = """
    uops of t:
      _LOAD_SLOT (target=7, operand=0 (n)) -> v0:int
      _BINARY_OP_ADD_INT (v0, 1, target=8, exit=0) -> v1:int      # line 5
          exit 0 at 8: {0 (n)=v0} [v0, 1]
      _GUARD_GLOBAL (target=9, operand=f is <function f>, exit=1)  # line 5
          exit 1 at 9: {0 (n)=v1} [v1]
      _JUMP_TO_TOP (target=6)
      loop-carried: n=v1
    """
    assert_pass(
        hoist.run,
        text,
        """
        uops of t:
          _LOAD_SLOT (target=7, operand=0 (n)) -> v0:int
          _GUARD_GLOBAL (target=9, operand=f is <function f>, exit=1)  # line 5 (hoisted to the entry)
              exit 1 at 7: {0 (n)=v0} [] when-hot=invalidate
          _BINARY_OP_ADD_INT (v0, 1, target=8, exit=0) -> v1:int      # line 5
              exit 0 at 8: {0 (n)=v0} [v0, 1]
          _JUMP_TO_TOP (target=6)
          loop-carried: n=v1
        """,
        snapshots=True,
    )


def test_a_side_trace_hoists_to_where_it_starts_with_its_stack():
    assert_pass(
        hoist.run,
        """
        # t: side trace from exit 3 (line 7) of the loop at line 6; entry kinds {n:int} [uops]
        uops of t:
          _LOAD_SLOT (target=16, operand=0 (n)) -> v1:int
          _LOAD_STACK (target=16, operand=0) -> v0:bool
          _GUARD_IS_FALSE_POP (v0, target=16, exit=6)
              exit 6 at 16: {0 (n)=v1} [v0]
          _GUARD_GLOBAL (target=20, operand=len is <builtin_function_or_method len>, exit=7)
              exit 7 at 20: {0 (n)=v1} []
          _EXIT_TRACE (target=22, operand=22, exit=8)
              exit 8 at 22: {0 (n)=v1} []
        """,
        """
        # t: side trace from exit 3 (line 7) of the loop at line 6; entry kinds {n:int} [uops]
        uops of t:
          _LOAD_SLOT (target=16, operand=0 (n)) -> v1:int
          _LOAD_STACK (target=16, operand=0) -> v0:bool
          _GUARD_GLOBAL (target=20, operand=len is <builtin_function_or_method len>, exit=7) (hoisted to the entry)
              exit 7 at 16: {0 (n)=v1} [v0] when-hot=invalidate
          _GUARD_IS_FALSE_POP (v0, target=16, exit=6)
              exit 6 at 16: {0 (n)=v1} [v0]
          _EXIT_TRACE (target=22, operand=22, exit=8)
              exit 8 at 22: {0 (n)=v1} []
        """,
        snapshots=True,
    )


SIDE_WITH_INDEX = """
# t: side trace from exit 8 (line 73) of the loop at line 71; entry kinds {counts:ndarray, k:int, bins:int} [uops]
uops of t:
  _LOAD_SLOT (target=28, operand=0 (counts)) -> v4:ndarray
  _LOAD_SLOT (target=28, operand=1 (k)) -> v5:int
  _LOAD_SLOT (target=28, operand=2 (bins)) -> v2:int
  _GUARD_ARRAY (v4, target=39, operand=int64 1-D C, exit=9)             # line 74
  _ARRAY_DATA (v4, target=39) -> v6:int                                 # line 74
  _ARRAY_DIM (v4, target=39, operand=0) -> v7:int                       # line 74
  _COMPARE_OP_INT (v5, v2, target=30, operand=<) -> v3:bool             # line 73
  _GUARD_IS_TRUE_POP (v3, target=31, exit=14)                           # line 73
  _GUARD_INDEX_RANGE (v5, 0, v7, 0, target=39, exit=15)                 # line 74
  _ARRAY_LOAD (v6, v5, target=39, operand=int64 1-D C) -> v9:np.int64   # line 74
  _EXIT_TRACE (target=52, operand=52, exit=16)                          # line 76
"""


def test_a_side_trace_keeps_an_index_guard_behind_the_branch_before_it():
    """(A histogram's `if 0 <= k < bins: counts[k] += 1`, its side trace recorded where k was in range) the array's
    spec guard and header reads move to the entry; the check of k against the array's length stays after the
    check of k against bins: at the entry it would fail first for every k past bins, and the side trace grown
    from there would never be joined into the tree's loop."""
    assert_pass(
        hoist.run,
        SIDE_WITH_INDEX,
        """
        # t: side trace from exit 8 (line 73) of the loop at line 71; entry kinds {counts:ndarray, k:int, bins:int} [uops]
        uops of t:
          _LOAD_SLOT (target=28, operand=0 (counts)) -> v4:ndarray
          _LOAD_SLOT (target=28, operand=1 (k)) -> v5:int
          _LOAD_SLOT (target=28, operand=2 (bins)) -> v2:int
          _GUARD_ARRAY (v4, target=39, operand=int64 1-D C, exit=9)             # line 74 (hoisted to the entry)
          _ARRAY_DATA (v4, target=39) -> v6:int                                 # line 74 (hoisted to the entry)
          _ARRAY_DIM (v4, target=39, operand=0) -> v7:int                       # line 74 (hoisted to the entry)
          _COMPARE_OP_INT (v5, v2, target=30, operand=<) -> v3:bool             # line 73
          _GUARD_IS_TRUE_POP (v3, target=31, exit=14)                           # line 73
          _GUARD_INDEX_RANGE (v5, 0, v7, 0, target=39, exit=15)                 # line 74
          _ARRAY_LOAD (v6, v5, target=39, operand=int64 1-D C) -> v9:np.int64   # line 74
          _EXIT_TRACE (target=52, operand=52, exit=16)                          # line 76
        """,
    )


def test_a_root_trace_still_hoists_an_index_guard_on_a_value_the_same_throughout():
    root = SIDE_WITH_INDEX.replace(
        "# t: side trace from exit 8 (line 73) of the loop at line 71; entry kinds {counts:ndarray, k:int, bins:int} [uops]\n",
        "",
    ).replace("_EXIT_TRACE (target=52, operand=52, exit=16)  ", "_JUMP_TO_TOP (target=12)")
    root += "loop-carried: counts=v4, k=v5, bins=v2\n"
    (guard,) = [line for line in after(hoist.run, root).splitlines() if "_GUARD_INDEX_RANGE" in line]
    assert guard.endswith("(hoisted to the entry)"), guard


def test_other_guards_stay_in_place():
    assert_unchanged(
        hoist.run,
        """
        uops of t:
          _LOAD_SLOT (target=7, operand=0 (n)) -> v0:int
          _LOAD_SLOT (target=7, operand=1 (s)) -> v1:object
          _CHECK_PERIODIC (target=7, exit=0)
          _GUARD_TYPE (v1, target=8, operand=float, exit=1) -> v2:object
          _GUARD_SLOT_KIND (target=9, operand=0 (n) is int, exit=2)
          _GUARD_NONZERO_INT (v0, target=10, exit=3)
          _JUMP_TO_TOP (target=6)
          loop-carried: n=v0, s=v1
        """,
    )


def test_guards_already_at_the_entry_stay_as_they_are():
    assert_unchanged(
        hoist.run,
        """
        uops of t:
          _LOAD_SLOT (target=7, operand=0 (n)) -> v0:int
          _GUARD_GLOBAL (target=9, operand=f is <function f>, exit=1)  # line 5 (hoisted to the entry)
          _CHECK_PERIODIC (target=7, exit=0)
          _JUMP_TO_TOP (target=6)
          loop-carried: n=v0
        """,
    )


ARRAYS = """
uops of t:
   0 _LOAD_SLOT (target=7, operand=0 (a)) -> v0:ndarray
   1 _LOAD_SLOT (target=7, operand=1 (b)) -> v1:ndarray
   2 _LOAD_SLOT (target=7, operand=2 (i)) -> v2:int
   3 _CHECK_PERIODIC (target=7, exit=0)                                   # line 4
   4 _GUARD_ARRAY (v0, target=9, operand=float64 1-D C, exit=1)           # line 5
   5 _ARRAY_DATA (v0, target=9) -> v3:int                                 # line 5
   6 _ARRAY_DIM (v0, target=9, operand=0) -> v4:int                       # line 5
   7 _ARRAY_INDEX (v4, v2, target=9, exit=2) -> v5:int                    # line 5
   8 _ARRAY_LOAD (v3, v5, target=9, operand=float64 1-D C) -> v6:np.float64  # line 5
   9 _GUARD_ARRAY (v1, target=10, operand=float64 1-D strided, exit=3)    # line 6
  10 _ARRAY_DIM (v1, target=10, operand=0) -> v7:int                      # line 6
  11 _JUMP_TO_TOP (target=6)                                              # line 4
     loop-carried: a=v0, b=v0, i=v7
"""


def test_an_array_the_loop_does_not_assign_is_guarded_and_read_at_the_entry():
    """a's spec guard and header reads move to the entry; b is assigned in the loop (b = a), so its guard
    and header read stay where they are; the element read and its index check stay in the loop."""
    assert_pass(
        hoist.run,
        ARRAYS,
        """
        uops of t:
           _LOAD_SLOT (target=7, operand=0 (a)) -> v0:ndarray
           _LOAD_SLOT (target=7, operand=1 (b)) -> v1:ndarray
           _LOAD_SLOT (target=7, operand=2 (i)) -> v2:int
           _GUARD_ARRAY (v0, target=9, operand=float64 1-D C, exit=1)           # line 5 (hoisted to the entry)
           _ARRAY_DATA (v0, target=9) -> v3:int                                 # line 5 (hoisted to the entry)
           _ARRAY_DIM (v0, target=9, operand=0) -> v4:int                       # line 5 (hoisted to the entry)
           _CHECK_PERIODIC (target=7, exit=0)                                   # line 4
           _ARRAY_INDEX (v4, v2, target=9, exit=2) -> v5:int                    # line 5
           _ARRAY_LOAD (v3, v5, target=9, operand=float64 1-D C) -> v6:np.float64  # line 5
           _GUARD_ARRAY (v1, target=10, operand=float64 1-D strided, exit=3)    # line 6
           _ARRAY_DIM (v1, target=10, operand=0) -> v7:int                      # line 6
           _JUMP_TO_TOP (target=6)                                              # line 4
           loop-carried: a=v0, b=v0, i=v7
        """,
    )
