"""The `dce` pass: one backward sweep. A pure uop goes when nothing after it uses its result, neither a uop
nor the state rebuilt at an exit, at an inner tree's call or at the trace's end; constants' own uops always
go (codegen puts constants where they are used); guards and uops with effects always stay."""

from jit.optimizer import dce

from .passes import after, assert_pass, assert_unchanged


def test_a_pure_uop_whose_result_nothing_uses_goes():
    assert_pass(
        dce.run,
        """
        uops of t:
          _LOAD_SLOT (target=1, operand=0 (x)) -> v0:float
          _BINARY_OP_MULTIPLY_FLOAT (v0, 2.0, target=2) -> v1:float
          _BINARY_OP_ADD_FLOAT (v0, 1.0, target=3) -> v2:float
          _JUMP_TO_TOP (target=0)
          loop-carried: x=v2
        """,
        """
        uops of t:
          _LOAD_SLOT (target=1, operand=0 (x)) -> v0:float
          _BINARY_OP_ADD_FLOAT (v0, 1.0, target=3) -> v2:float
          _JUMP_TO_TOP (target=0)
          loop-carried: x=v2
        """,
    )


def test_a_dead_chain_goes_in_one_sweep():
    text = """
    uops of t:
      _LOAD_SLOT (target=1, operand=0 (i)) -> v0:int
      _CONVERT_INT_TO_FLOAT (v0, target=2) -> v1:float
      _BINARY_OP_ADD_FLOAT (v1, 1.0, target=3) -> v2:float
      _TO_BOOL_FLOAT (v2, target=4) -> v3:bool
      _UNARY_NOT (v3, target=5) -> v4:bool
      _ITER_INCREMENT (v0, target=6) -> v5:int
      _JUMP_TO_TOP (target=0)
      loop-carried: i=v5
    """
    expected = """
    uops of t:
      _LOAD_SLOT (target=1, operand=0 (i)) -> v0:int
      _ITER_INCREMENT (v0, target=6) -> v5:int
      _JUMP_TO_TOP (target=0)
      loop-carried: i=v5
    """
    assert_pass(dce.run, text, expected)
    assert after(dce.run, expected) == after(dce.run, text)  # nothing left for a second sweep


def test_constants_uops_always_go():
    assert_pass(
        dce.run,
        """
        uops of t:
          _LOAD_SLOT (target=1, operand=0 (i)) -> v0:int
          _LOAD_CONST_INLINE (target=2, operand=3) -> v1:int
          _BINARY_OP_ADD_INT (v0, v1, target=3, exit=0) -> v2:int
          _LOAD_CONST_INLINE (target=4, operand=7) -> v3:int
          _JUMP_TO_TOP (target=0)
          loop-carried: i=v2
        """,
        """
        uops of t:
          _LOAD_SLOT (target=1, operand=0 (i)) -> v0:int
          _BINARY_OP_ADD_INT (v0, 3, target=3, exit=0) -> v2:int
          _JUMP_TO_TOP (target=0)
          loop-carried: i=v2
        """,
    )


def test_guards_and_effects_stay_though_their_results_are_unused():
    assert_unchanged(
        dce.run,
        """
        uops of t:
          _LOAD_SLOT (target=1, operand=0 (i)) -> v0:int
          _LOAD_SLOT (target=1, operand=1 (xs)) -> v1:list
          _BINARY_OP_ADD_INT (v0, 1, target=2, exit=0) -> v2:int
          _BINARY_SUBSCR_LIST_INT (v1, v0, target=3, exit=1) -> v3:object
          _CALL_LIST_APPEND (v1, v0, target=4, exit=2)
          _RELOAD_SLOT (target=5, operand=0 (i)) -> v4:int
          _JUMP_TO_TOP (target=0)
          loop-carried: i=v0, xs=v1
        """,
    )


def test_values_an_exit_rebuilds_stay():
    # v2 is only on the operand stack at exit 1, v3 only in the slot the trace assigns at exit 2
    assert_unchanged(
        dce.run,
        """
        uops of t:
          _LOAD_SLOT (target=1, operand=0 (i)) -> v0:int
          _LOAD_SLOT (target=1, operand=1 (x)) -> v1:float
          _TO_BOOL_INT (v0, target=2) -> v2:bool
          _GUARD_NONZERO_INT (v0, target=3, exit=1)
              exit 1 at 3: {0 (i)=v0, 1 (x)=v1} [v2]
          _CONVERT_INT_TO_FLOAT (v0, target=4) -> v3:float
          _GUARD_NONZERO_INT (v0, target=5, exit=2)
              exit 2 at 5: {0 (i)=v0, 1 (x)=v3} []
          _JUMP_TO_TOP (target=0)
          end at 0: {0 (i)=v0, 1 (x)=v1} []
          written: 1 (x)
        """,
        snapshots=True,
    )


def test_loop_carried_values_stay():
    # the end of a looping trace carries x to the next iteration: what computes it stays
    assert_unchanged(
        dce.run,
        """
        uops of t:
          _LOAD_SLOT (target=1, operand=0 (x)) -> v0:float
          _BINARY_OP_MULTIPLY_FLOAT (v0, 0.5, target=2) -> v1:float
          _JUMP_TO_TOP (target=0)
          loop-carried: x=v1
        """,
    )


def test_the_state_an_inner_tree_is_called_with_stays():
    assert_unchanged(
        dce.run,
        """
        uops of t:
          _LOAD_SLOT (target=7, operand=0 (m)) -> v0:int
          _LOAD_SLOT (target=7, operand=1 (total)) -> v1:int
          _CONVERT_INT_TO_FLOAT (v0, target=8) -> v2:float
          _CALL_TREE (target=13, operand=tree tj_inner (loop at line 5))
              state at 13: {0 (m)=v0, 1 (total)=v1, 2 (y)=v2} []
          _GUARD_TREE_EXIT (target=13, operand=exit 1 of tj_inner, exit=9)
              exit 9 at 13: {0 (m)=v0, 1 (total)=v1, 2 (y)=v2} [] propagate
          _RELOAD_SLOT (target=13, operand=1 (total)) -> v3:int
          _JUMP_TO_TOP (target=6)
          end at 6: {0 (m)=v0, 1 (total)=v3, 2 (y)=v2} []
          written: 1 (total), 2 (y)
        """,
        snapshots=True,
    )


def test_a_value_only_a_dead_uop_used_goes_with_it():
    # v2 feeds v3 only; v3 is dead, so v2 is dead too, though it comes first
    assert_pass(
        dce.run,
        """
        uops of t:
          _LOAD_SLOT (target=1, operand=0 (a)) -> v0:int
          _LOAD_SLOT (target=1, operand=1 (b)) -> v1:int
          _BINARY_OP_AND_INT (v0, v1, target=2) -> v2:int
          _BINARY_OP_OR_INT (v2, v0, target=3) -> v3:int
          _BINARY_OP_XOR_INT (v0, v1, target=4) -> v4:int
          _JUMP_TO_TOP (target=0)
          loop-carried: a=v4, b=v1
        """,
        """
        uops of t:
          _LOAD_SLOT (target=1, operand=0 (a)) -> v0:int
          _LOAD_SLOT (target=1, operand=1 (b)) -> v1:int
          _BINARY_OP_XOR_INT (v0, v1, target=4) -> v4:int
          _JUMP_TO_TOP (target=0)
          loop-carried: a=v4, b=v1
        """,
    )
