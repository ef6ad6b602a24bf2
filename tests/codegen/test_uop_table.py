"""Each uop is declared once (jit/uops.py), with the facts the passes and the lowering read, and lowered by
exactly one entry of codegen/lower/'s table unless it declares another way."""

import pytest

from codegen.lower import LOWERINGS, check_complete
from jit.kinds import Kind
from jit.uops import UOPS, Guard, Lowering, Operand


def test_every_uop_has_a_lowering():
    check_complete()


def test_every_lowering_is_of_a_declared_uop():
    assert set(LOWERINGS) <= set(UOPS), sorted(set(LOWERINGS) - set(UOPS))


def test_the_table_lowers_exactly_the_uops_declared_so():
    table = {name for name, op in UOPS.items() if op.lowering is Lowering.TABLE}
    assert set(LOWERINGS) == table


def test_check_complete_fails_on_a_missing_or_extra_lowering(monkeypatch):
    table = dict(LOWERINGS)
    name = "_BINARY_OP_ADD_INT"
    del table[name]
    monkeypatch.setattr("codegen.lower.LOWERINGS", table)
    with pytest.raises(AssertionError, match=name):
        check_complete()
    table[name] = LOWERINGS[name]
    table["_JUMP_TO_TOP"] = LOWERINGS[name]  # a skeleton uop
    with pytest.raises(AssertionError, match="_JUMP_TO_TOP"):
        check_complete()


def test_guards_are_never_removable_as_dead_code():
    for uop in UOPS.values():
        if uop.is_guard:
            assert not uop.pure, uop.name


def test_hoistable_uops_are_guards_without_inputs_but_arrays_and_iterators():
    """Hoistable guards read no trace values, except an array (its spec, its flags) or an iterator object (an
    enumerate's, a zip's or a list iterator's structure), which the hoist pass moves only when it is the same
    at the entry as throughout the trace, the merged index guard (its ints, likewise), a range's unit step
    (an int slot, likewise: invalidating its tree where it fails often, not transient) and a while loop's counter
    room (a loop-carried int and a constant, which jit.optimizer.counters puts at the entry itself: the periodic
    check checks it again with the loop's values; transient)."""
    hoistable = [op for op in UOPS.values() if op.hoistable]
    assert hoistable
    for op in hoistable:
        assert op.guard is Guard.DEOPT and op.output is None, op.name
        if op.name == "_GUARD_INDEX_RANGE":  # ints (an index, dimensions, constants), moved only when invariant
            assert op.inputs == "n" and op.transient
            continue
        if op.name == "_GUARD_UNIT_STEP":
            assert op.inputs == (Kind.INT,) and not op.transient
            continue
        if op.name == "_GUARD_COUNTER_ROOM":
            assert op.inputs == (Kind.INT, Kind.INT) and op.transient
            continue
        assert all(kind in (Kind.ARRAY, Kind.OBJECT) for kind in op.inputs), op.name


def test_type_guards_are_never_lowered():
    for op in UOPS.values():
        if op.proves is not None:
            assert op.is_guard and op.lowering is Lowering.NONE, op.name
        if op.lowering is Lowering.NONE:
            assert op.proves is not None, op.name  # only what the optimizer always removes


def test_branch_guards_take_one_bool():
    branches = [op for op in UOPS.values() if op.condition is not None]
    assert {op.condition for op in branches} == {True, False}
    for op in branches:
        assert op.is_guard and op.inputs == (Kind.BOOL,), op.name


def test_folds_compute_results():
    for op in UOPS.values():
        if op.fold is not None:
            assert op.output is not None and op.inputs and op.inputs != "n", op.name
            assert op.guard is not Guard.PERIODIC, op.name


def test_inline_constants_have_no_inputs_and_a_constant_operand():
    (op,) = [op for op in UOPS.values() if op.inline_const]
    assert op.inputs == () and op.operand is Operand.CONST and op.pure


def test_skeleton_uops_are_not_in_the_table():
    skeleton = {name for name, op in UOPS.items() if op.lowering is Lowering.SKELETON}
    assert skeleton == {"_LOAD_SLOT", "_LOAD_STACK", "_CHECK_PERIODIC", "_UNROLLED_HEADER", "_JUMP_TO_TOP"}
    assert not skeleton & set(LOWERINGS)


@pytest.mark.parametrize(
    ("name", "operand", "inputs", "expected"),
    [
        ("_BINARY_OP_ADD_INT", None, (2, 3), 5),
        ("_BINARY_OP_FLOOR_DIVIDE_INT", None, (-7, 2), -4),
        ("_BINARY_OP_REMAINDER_FLOAT", None, (-7.0, 2.0), 1.0),
        ("_BINARY_OP_TRUE_DIVIDE_INT", None, (1, 4), 0.25),
        ("_BINARY_OP_XOR_BOOL", None, (True, True), False),
        ("_CALL_ROUND_FLOAT", None, (2.5,), 2),
        ("_UNARY_NOT", None, (False,), True),
    ],
)
def test_folds_are_cpythons_operations(name, operand, inputs, expected):
    result = UOPS[name].fold(operand, *inputs)
    assert result == expected and type(result) is type(expected)


def test_compare_folds_use_their_operand():
    from jit.frontend.operators import CompareOp

    fold = UOPS["_COMPARE_OP_INT_FLOAT"].fold
    assert fold(CompareOp.LT, 1, 1.5) is True
    assert fold(CompareOp.GE, 1, 1.5) is False
