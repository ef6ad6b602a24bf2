"""The `constfold` pass: a uop that declares a fold, on constant inputs, becomes the constant CPython computes
(its exit goes with it); a fold that would raise or leave the uop's kind is not done."""

import pytest

from jit.optimizer import constfold

from .passes import assert_pass, assert_unchanged


def test_an_int_operation_on_constants_becomes_a_constant():
    assert_pass(
        constfold.run,
        """
        uops of t:
          _LOAD_SLOT (target=1, operand=0 (a)) -> v0:int
          _BINARY_OP_ADD_INT (2, 3, target=4, exit=0) -> v1:int              # line 2
          _BINARY_OP_MULTIPLY_INT (v0, v1, target=5, exit=1) -> v2:int       # line 2
          _JUMP_TO_TOP (target=0)
          loop-carried: a=v2
        """,
        """
        uops of t:
          _LOAD_SLOT (target=1, operand=0 (a)) -> v0:int
          _LOAD_CONST_INLINE (target=4, operand=5) -> v1:int                 # line 2
          _BINARY_OP_MULTIPLY_INT (v0, 5, target=5, exit=1) -> v2:int        # line 2
          _JUMP_TO_TOP (target=0)
          loop-carried: a=v2
        """,
    )


def test_folds_chain_in_one_pass():
    assert_pass(
        constfold.run,
        """
        uops of t:
          _CONVERT_INT_TO_FLOAT (2, target=1) -> v0:float
          _BINARY_OP_TRUE_DIVIDE_FLOAT (v0, 4.0, target=2, exit=0) -> v1:float
          _COMPARE_OP_FLOAT (v1, 0.25, target=3, operand=>) -> v2:bool
          _UNARY_NOT (v2, target=4) -> v3:bool
          _EXIT_TRACE (target=5, operand=5, exit=1)
        """,
        """
        uops of t:
          _LOAD_CONST_INLINE (target=1, operand=2.0) -> v0:float
          _LOAD_CONST_INLINE (target=2, operand=0.5) -> v1:float
          _LOAD_CONST_INLINE (target=3, operand=True) -> v2:bool
          _LOAD_CONST_INLINE (target=4, operand=False) -> v3:bool
          _EXIT_TRACE (target=5, operand=5, exit=1)
        """,
    )


@pytest.mark.parametrize(
    ("uop", "expected"),
    [
        ("_BINARY_OP_FLOOR_DIVIDE_INT (-7, 2, exit=0) -> v0:int", "-4"),
        ("_BINARY_OP_REMAINDER_FLOAT (-7.0, 2.0, exit=0) -> v0:float", "1.0"),
        ("_BINARY_OP_TRUE_DIVIDE_INT (1, 4, exit=0) -> v0:float", "0.25"),
        ("_BINARY_OP_XOR_BOOL (True, True) -> v0:bool", "False"),
        ("_COMPARE_OP_INT_FLOAT (1, 1.5, operand=<=) -> v0:bool", "True"),
        ("_CALL_ROUND_FLOAT (2.5, exit=0) -> v0:int", "2"),
        ("_CALL_MATH_FLOOR (-0.5, exit=0) -> v0:int", "-1"),
        ("_CALL_ABS_INT (-3, exit=0) -> v0:int", "3"),
        ("_CONVERT_BOOL_TO_INT (True) -> v0:int", "1"),
        ("_TO_BOOL_FLOAT (0.0) -> v0:bool", "False"),
    ],
)
def test_each_fold_is_cpythons_operation(uop, expected):
    kind = uop.rsplit(":", 1)[1]
    assert_pass(
        constfold.run,
        f"uops of t:\n  {uop}\n  _EXIT_TRACE (operand=0, exit=1)",
        f"uops of t:\n  _LOAD_CONST_INLINE (operand={expected}) -> v0:{kind}\n  _EXIT_TRACE (operand=0, exit=1)",
    )


@pytest.mark.parametrize(
    "uop",
    [
        "_BINARY_OP_FLOOR_DIVIDE_INT (1, 0, exit=0) -> v0:int",  # ZeroDivisionError: the exit raises it
        "_BINARY_OP_MULTIPLY_INT (4611686018427387904, 4, exit=0) -> v0:int",  # past 64 bits
        "_BINARY_OP_POWER_INT (2, -1, exit=0) -> v0:int",  # a float, not an int
        "_BINARY_OP_POWER_FLOAT (-8.0, 0.5, exit=0) -> v0:float",  # a complex
        "_CALL_FLOAT_TO_INT (inf, exit=0) -> v0:int",  # OverflowError
        "_UNARY_NEGATIVE_INT (-9223372036854775808, exit=0) -> v0:int",  # past 64 bits
    ],
)
def test_a_fold_that_would_raise_or_change_kind_is_not_done(uop):
    assert_unchanged(constfold.run, f"uops of t:\n  {uop}\n  _EXIT_TRACE (operand=0, exit=1)")


def test_uops_without_a_fold_or_with_inputs_not_known_stay():
    assert_unchanged(
        constfold.run,
        """
        uops of t:
          _LOAD_SLOT (target=1, operand=0 (x)) -> v0:float
          _BINARY_OP_ADD_FLOAT (v0, 1.0, target=2) -> v1:float
          _CALL_MATH_UNARY (4.0, target=3, operand=sqrt, exit=0) -> v2:float
          _SELECT (True, 1, 2, target=4) -> v3:int
          _TO_BOOL_LIST ([], target=5) -> v4:bool
          _GUARD_NONZERO_INT (3, target=6, exit=1)
          _JUMP_TO_TOP (target=0)
          loop-carried: x=v1
        """,
    )
