"""The `cse` pass: a uop computing, from the same inputs, what an earlier one computed goes, its uses taking the
earlier result (a checked one with its exit: the earlier check passed); uops that read memory stay."""

from jit.optimizer import cse

from .passes import assert_pass, assert_unchanged


def test_the_same_sum_twice_is_computed_once():
    assert_pass(
        cse.run,
        """
        uops of t:
           _LOAD_SLOT (target=1, operand=0 (i)) -> v0:int
           _LOAD_SLOT (target=1, operand=1 (j)) -> v1:int
           _BINARY_OP_ADD_INT (v0, v1, target=2, exit=0) -> v2:int
           _BINARY_OP_AND_INT (v2, 1, target=3) -> v3:int
           _BINARY_OP_ADD_INT (v0, v1, target=4, exit=1) -> v4:int
           _BINARY_OP_AND_INT (v4, 15, target=5) -> v5:int
           _BINARY_OP_ADD_INT (v3, v5, target=6, exit=2) -> v6:int
           _EXIT_TRACE (target=7, exit=3)
        """,
        """
        uops of t:
           _LOAD_SLOT (target=1, operand=0 (i)) -> v0:int
           _LOAD_SLOT (target=1, operand=1 (j)) -> v1:int
           _BINARY_OP_ADD_INT (v0, v1, target=2, exit=0) -> v2:int
           _BINARY_OP_AND_INT (v2, 1, target=3) -> v3:int
           _BINARY_OP_AND_INT (v2, 15, target=5) -> v5:int
           _BINARY_OP_ADD_INT (v3, v5, target=6, exit=2) -> v6:int
           _EXIT_TRACE (target=7, exit=3)
        """,
    )


def test_operands_and_order_of_inputs_tell_uops_apart():
    assert_unchanged(
        cse.run,
        """
        uops of t:
           _LOAD_SLOT (target=1, operand=0 (i)) -> v0:int
           _LOAD_SLOT (target=1, operand=1 (j)) -> v1:int
           _BINARY_OP_SUBTRACT_INT (v0, v1, target=2, exit=0) -> v2:int
           _BINARY_OP_SUBTRACT_INT (v1, v0, target=3, exit=1) -> v3:int
           _COMPARE_OP_INT (v0, v1, target=4, operand=<) -> v4:bool
           _COMPARE_OP_INT (v0, v1, target=5, operand=<=) -> v5:bool
           _GUARD_IS_TRUE_POP (v4, target=6, exit=2)
           _GUARD_IS_TRUE_POP (v5, target=7, exit=3)
           _EXIT_TRACE (target=8, exit=4)
        """,
    )


def test_reads_of_memory_are_not_merged():
    # a list's length before and after an append: two values
    assert_unchanged(
        cse.run,
        """
        uops of t:
           _LOAD_SLOT (target=1, operand=0 (a)) -> v0:list
           _LEN_LIST (v0, target=2) -> v1:int
           _CALL_LIST_APPEND (v0, v1, target=3, exit=0)
           _LEN_LIST (v0, target=4) -> v2:int
           _BINARY_OP_ADD_INT (v1, v2, target=5, exit=1) -> v3:int
           _EXIT_TRACE (target=6, exit=2)
        """,
    )


def test_constants_are_told_apart_by_kind_and_exact_value():
    # each constant the recorder meets is a value of its own: `a[i + 1]` read and then stored is one `i + 1`;
    # -0.0 and 0.0 are equal but not the same constant
    assert_pass(
        cse.run,
        """
        uops of t:
           _LOAD_SLOT (target=1, operand=0 (i)) -> v0:int
           _LOAD_SLOT (target=1, operand=1 (x)) -> v1:float
           _BINARY_OP_ADD_INT (v0, 1, target=2, exit=0) -> v2:int
           _BINARY_OP_ADD_INT (v0, 1, target=3, exit=1) -> v3:int
           _BINARY_OP_ADD_INT (v0, True, target=4, exit=2) -> v4:int
           _BINARY_OP_MULTIPLY_FLOAT (v1, 0.0, target=5) -> v5:float
           _BINARY_OP_MULTIPLY_FLOAT (v1, -0.0, target=6) -> v6:float
           _BINARY_OP_MULTIPLY_FLOAT (v1, -0.0, target=7) -> v7:float
           _EXIT_TRACE (target=8, exit=3)
                 exit 3 at 8: {} [v2, v3, v4, v5, v6, v7]
        """,
        """
        uops of t:
           _LOAD_SLOT (target=1, operand=0 (i)) -> v0:int
           _LOAD_SLOT (target=1, operand=1 (x)) -> v1:float
           _BINARY_OP_ADD_INT (v0, 1, target=2, exit=0) -> v2:int
           _BINARY_OP_ADD_INT (v0, True, target=4, exit=2) -> v4:int
           _BINARY_OP_MULTIPLY_FLOAT (v1, 0.0, target=5) -> v5:float
           _BINARY_OP_MULTIPLY_FLOAT (v1, -0.0, target=6) -> v6:float
           _EXIT_TRACE (target=8, exit=3)
                 exit 3 at 8: {} [v2, v2, v4, v5, v6, v6]
        """,
        snapshots=True,
    )
