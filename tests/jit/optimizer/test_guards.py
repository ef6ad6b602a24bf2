"""The `guards` pass: type guards the kinds already prove go, and branch guards on constant conditions that
hold; every other guard stays where it is."""

import pytest

from jit.optimizer import guards

from .passes import assert_pass, assert_unchanged


def test_type_guards_on_proven_kinds_go():
    assert_pass(
        guards.run,
        """
        uops of t:
          _LOAD_SLOT (target=1, operand=0 (a)) -> v0:int
          _LOAD_SLOT (target=1, operand=1 (b)) -> v1:float
          _GUARD_BOTH_INT (v0, 3, target=4, exit=0)                  # line 2
          _BINARY_OP_ADD_INT (v0, 3, target=4, exit=1) -> v2:int      # line 2
          _GUARD_BOTH_FLOAT (v1, 0.5, target=6, exit=2)              # line 3
          _BINARY_OP_ADD_FLOAT (v1, 0.5, target=6) -> v3:float       # line 3
          _JUMP_TO_TOP (target=0)
          loop-carried: a=v2, b=v3
        """,
        """
        uops of t:
          _LOAD_SLOT (target=1, operand=0 (a)) -> v0:int
          _LOAD_SLOT (target=1, operand=1 (b)) -> v1:float
          _BINARY_OP_ADD_INT (v0, 3, target=4, exit=1) -> v2:int      # line 2
          _BINARY_OP_ADD_FLOAT (v1, 0.5, target=6) -> v3:float       # line 3
          _JUMP_TO_TOP (target=0)
          loop-carried: a=v2, b=v3
        """,
    )


def test_a_type_guard_the_kinds_do_not_prove_is_a_recorder_bug():
    text = """
    uops of t:
      _LOAD_SLOT (target=1, operand=0 (a)) -> v0:float
      _GUARD_BOTH_INT (v0, 3, target=4, exit=0)
      _EXIT_TRACE (target=4, operand=4, exit=1)
    """
    with pytest.raises(AssertionError, match="lost track of kinds"):
        assert_unchanged(guards.run, text)


@pytest.mark.parametrize(("guard", "condition"), [("_GUARD_IS_TRUE_POP", "True"), ("_GUARD_IS_FALSE_POP", "False")])
def test_a_branch_guard_that_holds_on_a_constant_goes(guard, condition):
    assert_pass(
        guards.run,
        f"""
        uops of t:
          _LOAD_SLOT (target=1, operand=0 (a)) -> v0:int
          {guard} ({condition}, target=2, exit=0)
          _BINARY_OP_ADD_INT (v0, 1, target=3, exit=1) -> v1:int
          _JUMP_TO_TOP (target=0)
          loop-carried: a=v1
        """,
        """
        uops of t:
          _LOAD_SLOT (target=1, operand=0 (a)) -> v0:int
          _BINARY_OP_ADD_INT (v0, 1, target=3, exit=1) -> v1:int
          _JUMP_TO_TOP (target=0)
          loop-carried: a=v1
        """,
    )


def test_a_branch_guard_that_fails_on_a_constant_stays():
    # it always leaves: the trace ends there in effect, and the interpreter takes the other branch
    assert_unchanged(
        guards.run,
        """
        uops of t:
          _LOAD_SLOT (target=1, operand=0 (a)) -> v0:int
          _GUARD_IS_TRUE_POP (False, target=2, exit=0)
          _GUARD_IS_FALSE_POP (True, target=3, exit=1)
          _JUMP_TO_TOP (target=0)
          loop-carried: a=v0
        """,
    )


def test_guards_on_values_not_known_stay():
    assert_unchanged(
        guards.run,
        """
        uops of t:
          _LOAD_SLOT (target=1, operand=0 (a)) -> v0:int
          _LOAD_SLOT (target=1, operand=1 (s)) -> v1:object
          _COMPARE_OP_INT (v0, 10, target=2, operand=<) -> v2:bool
          _GUARD_IS_TRUE_POP (v2, target=3, exit=0)
          _GUARD_TYPE (v1, target=4, operand=float, exit=1) -> v3:object
          _GUARD_NONZERO_INT (0, target=5, exit=2)
          _GUARD_GLOBAL (target=6, operand=range is <type range>, exit=3)
          _JUMP_TO_TOP (target=0)
          loop-carried: a=v0, s=v1
        """,
    )


def test_a_trace_without_guards_to_drop_is_unchanged():
    assert_unchanged(
        guards.run,
        """
        # tj_t_root0_0_XXXX: root trace of the loop at line 4; entry kinds {total:int, .range.cur:int, .range.stop:int, .range.step:int} [uops]
        uops of tj_t_root0_0_XXXX:
           0 _LOAD_SLOT (target=7, operand=1 (total)) -> v4:int
           1 _LOAD_SLOT (target=7, operand=3 (.range.cur)) -> v1:int
           2 _LOAD_SLOT (target=7, operand=4 (.range.stop)) -> v2:int
           3 _LOAD_SLOT (target=7, operand=5 (.range.step)) -> v0:int
           4 _CHECK_PERIODIC (target=7, exit=0)                                                  # line 4
           5 _GUARD_NOT_EXHAUSTED_RANGE (v1, v2, v0, target=7, exit=1)                           # line 4
           6 _ITER_NEXT_RANGE (v1, v0, target=7, exit=2) -> v3:int                               # line 4
           7 _BINARY_OP_ADD_INT (v4, v1, target=15, exit=5) -> v9:int                            # line 5
           8 _JUMP_TO_TOP (target=6)                                                             # line 4
             loop-carried: total=v9, .range.cur=v3, .range.stop=v2, .range.step=v0
             (0 uops removed by the optimizer)
        """,
    )
