"""What the front end records about loops and source positions for the CPython baseline: each loop's body
start and break target, the statement it was compiled from, and every instruction's source position."""

import ast
import dis

import pytest
from helpers import define

from jit.frontend import compile_to_tier1
from jit.frontend import instructions as I

SOURCE = """
def shapes(n, items):
    total = 0
    for i in range(n):
        if i > 5:
            break
        total += i
    else:
        total = -1
    while total < 100:
        total += 1
    while True:
        for x in items:
            total += x
        break
    for a, b in items:
        continue
    squares = [k * k for k in range(n)]
    return total, squares
"""


@pytest.fixture(scope="module")
def code():
    return compile_to_tier1(define(SOURCE, "shapes"))


def op_at(code, pc):
    return I.OPS[code.ops[pc]].name


def test_statements_map_to_loops(code):
    tree = ast.parse(SOURCE)
    statements = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While))]
    found = [code.loop_of_statement(node) for node in statements]
    assert all(loop is not None for loop in found)
    assert len({loop.index for loop in found}) == len(statements) == 5
    for node, loop in zip(statements, found):
        assert loop.statement == (node.lineno, node.col_offset)
        assert loop.kind == (
            "while" if isinstance(node, ast.While) else ("range" if "range" in ast.unparse(node.iter) else "iter")
        )
    comprehension = [loop for loop in code.loops if loop.statement is None]
    assert len(comprehension) == 1 and comprehension[0].line == 18


def test_body_pc_after_target_store(code):
    for loop in code.loops:
        if loop.statement is None:
            continue
        assert loop.header_pc < loop.body_pc < loop.body_end
        if loop.kind == "while":
            continue
        # a for loop's body starts right after its item is stored into the target
        before = op_at(code, loop.body_pc - 1)
        assert before == "STORE_FAST", (loop, before)


def test_body_pc_of_while_loops(code):
    conditional, infinite = [loop for loop in code.loops if loop.kind == "while"]
    # after the condition's jump out of the loop
    assert op_at(code, conditional.body_pc - 1) == "POP_JUMP_IF_FALSE"
    assert code.args[conditional.body_pc - 1] == conditional.exit_pc
    # `while True` tests nothing: the body starts right after the header
    assert infinite.body_pc == infinite.header_pc + 1


def test_break_pc(code):
    first, _, infinite, inner, unpacking = [loop for loop in code.loops if loop.statement is not None]
    # a for loop's break clears its hidden slots, then skips the else clause
    assert op_at(code, first.break_pc) == "CLEAR_SLOTS"
    assert first.break_pc > first.exit_pc
    # `while True: ... break` with no else: the break lands where the loop's (unreachable) exit is
    assert infinite.break_pc == infinite.exit_pc
    # loops without a break have none
    assert inner.break_pc is None and unpacking.break_pc is None


def test_positions_one_per_instruction(code):
    assert len(code.positions) == len(code.ops)
    for pc, (line, end_line, col, end_col) in enumerate(code.positions):
        assert line == code.lines[pc] or op_at(code, pc) in ("GET_ITER", "FOR_ITER", "RANGE_SETUP", "FOR_RANGE")
        assert end_line >= line


def test_positions_are_the_nodes():
    func = define("def f(a, b, c):\n    x = a + b * c\n    return x\n", "f")
    code = compile_to_tier1(func)
    binops = [pc for pc, op in enumerate(code.ops) if op == I.BINARY_OP]
    # b * c, then a + b * c: the node each instruction was compiled from
    assert [code.positions[pc] for pc in binops] == [(2, 2, 12, 17), (2, 2, 8, 17)]


def test_loop_head_positions_follow_cpython():
    func = define("def f(xs):\n    for x in xs:\n        pass\n", "f")
    code = compile_to_tier1(func)
    (loop,) = code.loops
    (for_iter,) = [i for i in dis.get_instructions(func) if i.opname == "FOR_ITER"]
    # where CPython puts this statement's FOR_ITER (3.11, 3.12: the whole statement; 3.13: the iterable)
    assert code.positions[loop.header_pc + 1] == tuple(for_iter.positions)
