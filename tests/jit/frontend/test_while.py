"""Differential tests of while loops: conditions, break/continue/else, nesting, early return, type changes."""

import pytest
from helpers import Args
from tier1_check import check_t1 as check


def count_up(n):
    i = 0
    total = 0
    while i < n:
        total += i
        i += 1
    return i, total


def while_true_break(n):
    i = 0
    while True:
        i += 1
        if i >= n:
            break
    return i


def while_one_break(n):
    i = 0
    while 1:
        if i * i > n:
            break
        i += 1
    return i


def while_continue(n):
    i = 0
    odd = 0
    while i < n:
        i += 1
        if i % 2 == 0:
            continue
        odd += i
    return odd


def while_else(n, stop):
    i = 0
    while i < n:
        if i == stop:
            break
        i += 1
    else:
        return "else", i
    return "break", i


def while_else_continue_last(n):
    i = 0
    hits = []
    while i < n:
        i += 1
        if i > 3:
            continue
        hits.append(i)
    else:
        hits.append("else")
    return hits


def while_compound_condition(a, b):
    steps = 0
    while a > 0 and (b > 0 or a % 3 == 0) and not a == b:
        a -= 1
        b -= 2
        steps += 1
    return steps, a, b


def while_truthy_objects(items):
    out = []
    while items:
        out.append(items.pop())
    return out


def while_falsy_from_start(n):
    x = 5
    while n:
        x += 1
        n -= 1
    return x


def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def while_nested2(n):
    i = 0
    total = 0
    while i < n:
        j = 0
        while j < i:
            total += i * j
            j += 1
        i += 1
    return total


def while_nested3(n):
    i = 0
    count = 0
    while i < n:
        j = i
        while j > 0:
            k = 0
            while k < j % 3:
                count += 1
                k += 1
            j -= 1
        i += 1
    return count


def while_inner_break(n):
    i = 0
    found = []
    while i < n:
        j = 0
        while True:
            if j * j >= i:
                break
            j += 1
        found.append(j)
        i += 1
    return found


def while_return_from_nested(n, target):
    i = 0
    while i < n:
        j = 0
        while j < n:
            if i * j == target:
                return i, j
            j += 1
        i += 1
    return None


def while_int_to_float(n):
    x = 0
    i = 0
    while i < n:
        x += 1 if i < 6 else 0.25
        i += 1
    return x


def while_int_overflows_64bit(n):
    x = 1
    i = 0
    while i < n:
        x = x * 7 + i
        i += 1
    return x, x > 2**63


def while_counter_past_2_63(n):
    i = 2**63 - 5
    stop = i + n
    total = 0
    while i < stop:
        total += i & 0xF
        i += 1
    return i, total


def while_zero_division_late(n):
    i = 0
    total = 0
    while i < n:
        total += 1000 // (1000 - i)
        i += 1
    return total


def while_branch_flips(n):
    i = 0
    a = b = 0
    while i < n:
        if i < 1000:
            a += 1
        else:
            b += i
        i += 1
    return a, b


def while_condition_changes_type(n):
    x = n
    steps = 0
    while x:
        x = x - 1 if isinstance(x, int) and x > 3 else ("" if x == 3 else x[1:] if isinstance(x, str) else 3)
        steps += 1
        if steps > 50:
            break
    return steps, x


def while_modifies_list(lst):
    i = 0
    while i < len(lst):
        if lst[i] % 3 == 0:
            del lst[i]
        else:
            lst[i] *= 10
            i += 1
    return lst


def while_else_with_return_inside(n):
    i = 0
    while i < n:
        i += 1
    else:
        if i > 5:
            return "big"
    return "small"


def while_error_in_condition(items):
    i = 0
    while items[i] < 100:
        i += 1
    return i


# the loops that do not compile: list.pop, a counter beyond 64 bits, isinstance. All the other tests also
# demand, through jit.stats, that compiled code ran
NOT_NATIVE = {while_truthy_objects, while_counter_past_2_63, while_condition_changes_type}


@pytest.mark.parametrize(
    "func, calls",
    [
        (count_up, [0, 1, 12, -3]),
        (while_true_break, [1, 12, 0]),
        (while_one_break, [0, 150]),
        (while_continue, [0, 15]),
        (while_else, [(12, 20), (12, 5), (0, 0)]),
        (while_else_continue_last, [0, 12]),
        (while_compound_condition, [(30, 12), (9, 0), (5, 5), (0, 3)]),
        (while_truthy_objects, [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], []]),
        (while_falsy_from_start, [0, 12, 0.0]),
        (collatz, [1, 27, 97]),
        (while_nested2, [0, 1, 12]),
        (while_nested3, [0, 11]),
        (while_inner_break, [12]),
        (while_return_from_nested, [(12, 30), (12, 1000), (0, 0)]),
        (while_int_to_float, [3, 12]),
        (while_int_overflows_64bit, [10, 30]),
        (while_counter_past_2_63, [12]),
        (while_zero_division_late, [999, 1001, 1200]),
        (while_branch_flips, [999, 1000, 1200]),
        (while_condition_changes_type, [12, 3, "abc"]),
        (while_modifies_list, [list(range(20)), []]),
        (while_else_with_return_inside, [3, 12]),
        (while_error_in_condition, [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 200], [1, 2, 3], [1, "x"]]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_while(func, calls):
    check(func, *calls, native=None if func in NOT_NATIVE else True)


def test_while_loop_variable_after_break():
    def after(n):
        i = 0
        while i < 100:
            i += 3
            if i > n:
                break
        return i

    # defined here but its source is in this file: tracejit reads it the same way
    check(after, 0, 10, 50, 200, native=True)


def test_while_keyword_call_in_condition():
    check(while_else, Args(n=12, stop=4), Args(stop=12, n=12), native=True)
