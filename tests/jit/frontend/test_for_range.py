"""Differential tests of ``for`` over ``range``: bounds, steps, break/continue/else, nesting, rebinding range."""

import pytest
from helpers import Args
from tier1_check import check_t1 as check


def range1(n):
    total = 0
    for i in range(n):
        total += i
    return total


def range2(a, b):
    out = []
    for i in range(a, b):
        out.append(i)
    return out


def range3(a, b, c):
    out = []
    for i in range(a, b, c):
        out.append(i)
    return out


def range_expr_bounds(n):
    total = 0
    for i in range(n // 2 - 3, n * 2 + 1, max(1, n // 4)):
        total += i * i
    return total


def range_bounds_evaluated_once(lst):
    count = 0
    for _ in range(len(lst)):
        lst.append(0)  # growing the list does not change the range
        count += 1
    return count, len(lst)


def range_stop_rebound_in_body(n):
    count = 0
    for _ in range(n):
        n = 0
        count += 1
    return count, n


def loop_var_after(n):
    i = "unset"
    for i in range(n):
        pass
    return i


def loop_var_unbound_after_empty_loop(n):
    for i in range(n):
        pass
    return i


def loop_var_assigned_in_body(n):
    out = []
    for i in range(n):
        out.append(i)
        i = 100  # does not change the next value
    return out, i


def range_break_else(n, stop):
    for i in range(n):
        if i == stop:
            break
    else:
        return "else", n
    return "break", i


def range_continue(n):
    total = 0
    for i in range(n):
        if i % 3:
            continue
        total += i
    return total


def range_continue_else(n):
    hits = 0
    for i in range(n):
        if i > 2:
            continue
        hits += 1
    else:
        hits += 100
    return hits


def nested2(n):
    total = 0
    for i in range(n):
        for j in range(i):
            total += (i ^ j) & 7
    return total


def nested2_varying_inner(n):
    total = 0
    for i in range(n):
        for j in range(i % 4):  # 0 trips every fourth time
            total += j + 1
        total *= 2
    return total


def nested3(n):
    count = 0
    for i in range(n):
        for j in range(i % 3):
            for k in range(j, i):
                count += k - j
    return count


def nested3_break_inner(n):
    out = []
    for i in range(n):
        for j in range(n):
            for k in range(n):
                if k > j:
                    break
                out.append((i, j, k))
            if j > i:
                break
    return len(out), out[-3:]


def nested3_break_inner_numeric(n):
    count = total = 0
    for i in range(n):
        for j in range(n):
            for k in range(n):
                if k > j:
                    break
                count += 1
                total += i * 100 + j * 10 + k
            if j > i:
                break
    return count, total


def return_from_nested(n, target):
    for i in range(n):
        for j in range(n):
            for k in range(n):
                if i + j * k == target:
                    return i, j, k
    return None


def return_from_inner_leaves_outer(n):
    for i in range(n):
        for j in range(i):
            if j == 7:
                return i, j
    return -1


def step_negative(n):
    out = []
    for i in range(n, -1, -1):
        out.append(i)
    return out


def step_big_negative(a, b):
    total = 0
    for i in range(a, b, -7):
        total += i
    return total


def step_zero(n):
    for _ in range(0, n, 0):
        pass


def range_bad_type(x):
    for _ in range(x):
        pass


def range_arg_count(n):
    for _ in range(1, 2, 3, n):  # noqa: B022
        pass


def range_past_2_63(n):
    out = []
    for i in range(2**63 - 3, 2**63 + n):
        out.append(i)
    return out


def range_huge_step(n):
    total = 0
    for i in range(-(2**70), 2**70, 2**67):
        total += i // 2**60 + n
    return total


def range_negative_big(n):
    out = []
    for i in range(-(2**64) + n, -(2**64) - 10, -3):
        out.append(i)
    return out


class Index:
    def __index__(self):
        return 12


def range_bool_and_index(n):
    total = 0
    for i in range(True, Index()):
        total += i
    return total


def range_loop_var_int_to_float(n):
    x = 0
    for i in range(n):
        x = x + (i if i < 8 else 0.5)
    return x


def range_int_growth(n):
    x = 1
    for i in range(n):
        x = x * 3 + i
    return x


def range_zero_division_after_1000(n):
    total = 0
    for i in range(n):
        total += 1 // (1000 - i) if i != 999 else 0
    return total


def range_branch_flips_after_1000(n):
    a = 0
    for i in range(n):
        if i < 1000:
            a += 1
        else:
            a -= 3
    return a


def range_empty_no_body(n):
    touched = False
    for _ in range(n, n):
        touched = True
    return touched


def range_else_runs_when_empty(n):
    for _ in range(n):
        return "body"
    else:
        return "else"


def range_many_loops_in_sequence(n):
    a = b = c = 0
    for i in range(n):
        a += i
    for i in range(n, 0, -1):
        b += i
    for i in range(0, n, 2):
        c += i
    return a, b, c, i


# the functions whose loops compile (the others leave the loop through an error, never loop, build tuples or
# need more than 64 bits): their tests also demand, through jit.stats, that compiled code ran
NATIVE = {
    range1,
    range2,
    range3,
    range_expr_bounds,
    range_bounds_evaluated_once,
    range_stop_rebound_in_body,
    loop_var_after,
    loop_var_unbound_after_empty_loop,
    loop_var_assigned_in_body,
    range_break_else,
    range_continue,
    range_continue_else,
    nested2,
    nested2_varying_inner,
    nested3,
    nested3_break_inner_numeric,
    return_from_nested,
    return_from_inner_leaves_outer,
    step_negative,
    step_big_negative,
    range_bool_and_index,
    range_loop_var_int_to_float,
    range_int_growth,
    range_zero_division_after_1000,
    range_branch_flips_after_1000,
    range_many_loops_in_sequence,
}


@pytest.mark.parametrize(
    "func, calls",
    [
        (range1, [0, 1, 12, -5, True]),
        (range2, [(0, 12), (5, 3), (-4, 8)]),
        (range3, [(0, 20, 3), (20, 0, -3), (0, 1, 10), (5, 5, 1), (-10, 10, 7)]),
        (range_expr_bounds, [0, 12, 40]),
        (range_bounds_evaluated_once, [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]]),
        (range_stop_rebound_in_body, [12]),
        (loop_var_after, [0, 1, 12]),
        (loop_var_unbound_after_empty_loop, [0, 12]),
        (loop_var_assigned_in_body, [0, 12]),
        (range_break_else, [(12, 5), (12, 20), (0, 0)]),
        (range_continue, [0, 20]),
        (range_continue_else, [0, 12]),
        (nested2, [0, 1, 12]),
        (nested2_varying_inner, [0, 13]),
        (nested3, [0, 12]),
        (nested3_break_inner, [12]),
        (nested3_break_inner_numeric, [0, 12]),
        (return_from_nested, [(12, 30), (12, 500), (0, 0)]),
        (return_from_inner_leaves_outer, [5, 12]),
        (step_negative, [0, 12, -1]),
        (step_big_negative, [(100, 0), (0, 100)]),
        (step_zero, [0, 5]),
        (range_bad_type, [1.5, "3", None, [1]]),
        (range_arg_count, [0]),
        (range_past_2_63, [0, 10]),
        (range_huge_step, [1]),
        (range_negative_big, [0, 5]),
        (range_bool_and_index, [0]),
        (range_loop_var_int_to_float, [5, 12]),
        (range_int_growth, [12, 60]),
        (range_zero_division_after_1000, [999, 1001, 1100]),
        (range_branch_flips_after_1000, [1000, 1200]),
        (range_empty_no_body, [3]),
        (range_else_runs_when_empty, [0, 3]),
        (range_many_loops_in_sequence, [12]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_for_range(func, calls):
    check(func, *calls, native=True if func in NATIVE else None)


# --- `range` is looked up at run time ---------------------------------------------------------------------

_real_range = range


def fake_range(*args):
    return ["fake", *_real_range(*args)]


def use_range(n):
    out = []
    for i in range(n):
        out.append(i)
    return out


def set_range(value):
    if value is None:
        globals().pop("range", None)
    else:
        globals()["range"] = value


def rebind_range_midway(n):
    set_range(None)
    out = []
    for k in _real_range(n):
        for i in range(3):  # the first loops see the builtin, the later ones fake_range
            out.append((k, i))
        if k == 5:
            set_range(fake_range)
    return out


def test_range_rebound_as_global():
    g = globals()
    try:
        g["range"] = fake_range
        check(use_range, 0, 3)
        g["range"] = lambda n: iter([n] * n)
        check(use_range, 0, 4)
        g["range"] = 42
        check(use_range, 3)  # TypeError: 'int' object is not callable
    finally:
        g.pop("range", None)
    check(use_range, 12, native=True)


def test_range_rebound_during_run():
    try:
        check(rebind_range_midway, Args(12))
    finally:
        globals().pop("range", None)


def local_named_range(n):
    range = str  # a local named range: not the builtin loop
    out = []
    for i in range(n):
        out.append(i)
    return out


def test_range_as_local_is_not_the_builtin():
    check(local_named_range, 3, 1234567890123)


def range_param(range, n):
    out = []
    for i in range(n):
        out.append(i)
    return out


def test_range_as_parameter():
    check(range_param, (range, 12), (list, "abc"), (reversed, [1, 2, 3]))
