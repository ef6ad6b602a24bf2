"""The `bounds` pass: the checks of indices base + c against dimensions (recorded non-negative:
_ARRAY_INDEX_IN_RANGE) become one guard on base where the first of them, or of the additions computing them, was,
with that uop's exit; the additions then need no overflow check; the guards on values the same throughout the
trace move to its entry (growing a side trace when they fail there). A lone check becomes such a guard; negative
indices (_ARRAY_INDEX) stay as they are."""

from jit.optimizer import bounds, hoist

from .passes import assert_pass

ENTRY = """
uops of t:
   _LOAD_SLOT (target=7, operand=0 (a)) -> v0:ndarray
   _LOAD_SLOT (target=7, operand=1 (i)) -> v1:int
   _LOAD_SLOT (target=7, operand=2 (j)) -> v2:int
   _LOAD_SLOT (target=7, operand=3 (s)) -> v3:np.float64
   _ARRAY_DATA (v0, target=8) -> v4:int                                     # line 5 (hoisted to the entry)
   _ARRAY_DIM (v0, target=8, operand=0) -> v5:int                           # line 5 (hoisted to the entry)
   _ARRAY_DIM (v0, target=8, operand=1) -> v6:int                           # line 5 (hoisted to the entry)
"""


RECORDED = ENTRY.replace("(hoisted to the entry)", "")


def test_offsets_of_one_base_share_one_guard_and_invariant_ones_move_to_the_entry():
    """(the hoisted guard's exit grows a side trace when hot: the listing's default, not written)"""
    assert_pass(
        lambda trace: (hoist.run(trace), bounds.run(trace)),
        RECORDED
        + """
   _BINARY_OP_SUBTRACT_INT (v2, 1, target=9, exit=0) -> v7:int             # line 5
       exit 0 at 9: {1 (i)=v1, 2 (j)=v2, 3 (s)=v3} [v2, 1]
   _ARRAY_INDEX_IN_RANGE (v5, v1, target=10, exit=1) -> v8:int             # line 5
       exit 1 at 10: {1 (i)=v1, 2 (j)=v2, 3 (s)=v3} [v7]
   _ARRAY_INDEX_IN_RANGE (v6, v7, target=10, exit=2) -> v9:int             # line 5
       exit 2 at 10: {1 (i)=v1, 2 (j)=v2, 3 (s)=v3} [v7]
   _ARRAY_LOAD (v4, v8, v9, v6, target=10, operand=float64 2-D C) -> v10:np.float64  # line 5
   _BINARY_OP_ADD_INT (1, v2, target=11, exit=3) -> v11:int                 # line 6
       exit 3 at 11: {1 (i)=v1, 2 (j)=v2, 3 (s)=v3} [v10, 1, v2]
   _ARRAY_INDEX_IN_RANGE (v5, v1, target=12, exit=4) -> v12:int            # line 6
       exit 4 at 12: {1 (i)=v1, 2 (j)=v2, 3 (s)=v3} [v10, v11]
   _ARRAY_INDEX_IN_RANGE (v6, v11, target=12, exit=5) -> v13:int           # line 6
       exit 5 at 12: {1 (i)=v1, 2 (j)=v2, 3 (s)=v3} [v10, v11]
   _ARRAY_LOAD (v4, v12, v13, v6, target=12, operand=float64 2-D C) -> v14:np.float64  # line 6
   _NP_BINARY_OP_ADD_FLOAT64 (v10, v14, target=13, exit=6) -> v15:np.float64  # line 6
       exit 6 at 13: {1 (i)=v1, 2 (j)=v2, 3 (s)=v3} [v10, v14]
   _JUMP_TO_TOP (target=6)
   loop-carried: a=v0, i=v1, j=v11, s=v15
""",
        ENTRY
        + """
   _GUARD_INDEX_RANGE (v1, 0, v5, 0, target=10, exit=1)                    # line 5 (hoisted to the entry)
       exit 1 at 7: {0 (a)=v0, 1 (i)=v1, 2 (j)=v2, 3 (s)=v3} []
   _GUARD_INDEX_RANGE (v2, 1, v6, 1, target=9, exit=0)                      # line 5
       exit 0 at 9: {1 (i)=v1, 2 (j)=v2, 3 (s)=v3} [v2, 1]
   _BINARY_OP_SUBTRACT_INT_IN_RANGE (v2, 1, target=9) -> v7:int            # line 5
   _ARRAY_LOAD (v4, v1, v7, v6, target=10, operand=float64 2-D C) -> v10:np.float64  # line 5
   _BINARY_OP_ADD_INT_IN_RANGE (1, v2, target=11) -> v11:int                # line 6
   _ARRAY_LOAD (v4, v1, v11, v6, target=12, operand=float64 2-D C) -> v14:np.float64  # line 6
   _NP_BINARY_OP_ADD_FLOAT64 (v10, v14, target=13, exit=6) -> v15:np.float64  # line 6
       exit 6 at 13: {1 (i)=v1, 2 (j)=v2, 3 (s)=v3} [v10, v14]
   _JUMP_TO_TOP (target=6)
   loop-carried: a=v0, i=v1, j=v11, s=v15
""",
        snapshots=True,
    )


def test_a_negative_check_stays_and_a_lone_one_becomes_a_guard():
    assert_pass(
        bounds.run,
        ENTRY
        + """
   _UNARY_NEGATIVE_INT (v2, target=9, exit=0) -> v7:int                    # line 5
   _ARRAY_INDEX (v5, v7, target=10, exit=1) -> v8:int                      # line 5
   _ARRAY_INDEX_IN_RANGE (v6, v2, target=10, exit=2) -> v9:int             # line 5
   _ARRAY_LOAD (v4, v8, v9, v6, target=10, operand=float64 2-D C) -> v10:np.float64  # line 5
   _JUMP_TO_TOP (target=6)
   loop-carried: a=v0, i=v1, j=v7, s=v10
""",
        ENTRY
        + """
   _UNARY_NEGATIVE_INT (v2, target=9, exit=0) -> v7:int                    # line 5
   _ARRAY_INDEX (v5, v7, target=10, exit=1) -> v8:int                      # line 5
   _GUARD_INDEX_RANGE (v2, 0, v6, 0, target=10, exit=2)                    # line 5
   _ARRAY_LOAD (v4, v8, v2, v6, target=10, operand=float64 2-D C) -> v10:np.float64  # line 5
   _JUMP_TO_TOP (target=6)
   loop-carried: a=v0, i=v1, j=v7, s=v10
""",
    )
