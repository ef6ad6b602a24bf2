"""Exits that leave the same state share the block that writes it (``codegen.context.LowerContext.state_key``):
less IR per guard. What the interpreter gets at each exit must stay exactly what it got with one writer per
snapshot, so each test takes the exits it looks at and compares with CPython."""

import re

from helpers import TEST_OPTIONS, check

from jit import jit


def float_total(seq):
    total = 0.0
    for x in seq:
        total += x
    return total


def running_total(n, limit):
    total = 0
    hits = 0
    for i in range(n):
        total += i * 3
        if total > limit:
            hits += 1
            total -= limit
    return total, hits


def late_and_versioned(n, k):
    total = 0
    last = -1
    for i in range(n):
        if i == k:
            total += last
        last = i * 3
        total += i
    return total, last


def _function_body(ir_text: str, symbol: str) -> str:
    body = ir_text[ir_text.index(f'@"{symbol}"(') :]
    return body[: body.index("\n}")]


def _root_symbol(f) -> str:
    (tree,) = jit.stats(f)["trees"]
    return tree["symbol"]


def _writers(f) -> int:
    """The state-writing blocks of f's root trace."""
    body = _function_body(jit.dump(f, "ir"), _root_symbol(f))
    return len(re.findall(r'^"?exit_state(\.\d+)?"?:$', body, flags=re.M))


def test_exits_before_anything_is_assigned_share_one_writer():
    f = jit(**TEST_OPTIONS)(float_total)
    data = [0.5 * i for i in range(200)]
    assert f(data) == float_total(data)
    # the periodic check, the end of the list and the item's type guard all leave the state the iteration
    # started from: one block writes it
    assert _writers(f) == 1
    assert jit.stats(f)["traces_compiled"] >= 1


def test_shared_writer_gives_each_exit_its_state():
    # an int item leaves through the type guard, the end of the list through the other exit: both resume
    # with the total of the items before, exactly
    check(
        float_total,
        [0.1 * i for i in range(300)],
        [0.1 * i for i in range(150)] + [7] + [0.25] * 100,
        [-0.0] * 100,
        [float("inf")] * 80 + [float("nan")],
        native=True,
    )


def test_exits_with_different_states_keep_their_own_writers():
    f = jit(**TEST_OPTIONS)(running_total)
    assert f(500, 10**9) == running_total(500, 10**9)
    # the loop's top and the guard after total changed leave different states
    assert _writers(f) >= 2
    check(running_total, (500, 10**9), (500, 1000), (400, 2**62), (300, 0), native=True)


def test_slots_assigned_late_and_the_fast_copy_keep_their_own_states():
    # last is assigned late (the previous iteration's value, once there was one), and the range loop has a
    # versioned fast copy: states of different copies of the loop are never shared
    check(late_and_versioned, (200, 150), (200, 0), (100, 99), (300, -1), (2, 1), native=True)
