"""Differential tests of list/set/dict comprehensions: nesting, conditions, scoping, pending operands."""

import pytest
from helpers import Args
from tier1_check import check_t1 as check

SCALE = 3
x = "global x"  # for [x for x in x]


def list_comp(n):
    return [i * i for i in range(n)]


def set_comp(n):
    return {i % 5 for i in range(n)}


def dict_comp(n):
    return {i: i * i for i in range(n)}


def with_ifs(n):
    return (
        [i for i in range(n) if i % 2 if i % 3],
        {i for i in range(n) if i > 3},
        {i: -i for i in range(n) if not i % 4},
    )


def nested_for(n):
    return [(i, j) for i in range(n) for j in range(i) if (i + j) % 3 == 0]


def nested_three(n):
    return [i * 100 + j * 10 + k for i in range(n) for j in range(i) for k in range(j) if k != 1]


def nested_comp_in_comp(n):
    return [[j for j in range(i)] for i in range(n)]


def over_iterables(words):
    return [w.upper() for w in words], {c for w in words for c in w}, {w: len(w) for w in words}


def uses_locals_and_globals(n):
    offset = 7
    return [i * SCALE + offset for i in range(n)]


def uses_param_in_condition(n, limit):
    return [i for i in range(n) if i < limit]


def unpacking_target(pairs):
    return [a * b for a, b in pairs], {k: v for k, v in pairs}, [a + b + c for a, (b, c) in [(1, (2, 3))]]


def pending_binop(xs, n, ys):
    return xs + [i for i in range(n)] + ys


def pending_call_args(n):
    return combine(n, [i for i in range(n)], -n, key=[j * 2 for j in range(n)])


def combine(a, lst, b, key=None):
    return (a, lst, b, key)


def pending_in_nested_calls(n):
    return max(len([1 for _ in range(n)]), min(n, sum([i for i in range(n)])))


def pending_attribute_and_subscript(d, n):
    return d["a"] + [i for i in range(n)][n // 2 :], "-".join([str(i) for i in range(n)])


def pending_inside_display(n):
    return [n, [i for i in range(n)], n + 1], (n, {i for i in range(3)}), {n: {i: i for i in range(2)}}


def pending_in_comparison(n):
    return 0 < len([i for i in range(n)]) < 10, [1] == [i for i in range(1)]


def pending_in_boolop(n):
    return n and [i for i in range(n)] or [j for j in range(3)]


def pending_in_conditional(n):
    return [i for i in range(n)] if n > 2 else {i for i in range(5)}


def pending_in_fstring(n):
    return f"{n}: {[i for i in range(n)]} {n + 1}"


def comprehension_in_loop(n):
    out = []
    for k in range(n):
        out.append(k + len([i for i in range(k) if i % 2]))
    return out


def loop_var_does_not_leak(n):
    i = "outer"
    r = [i for i in range(n)]
    return i, r


def loop_var_shadows_param(i):
    r = [i * 2 for i in range(5)]
    return i, r


def x_for_x_in_x(n):
    x = list(range(n))
    return [x for x in x]


def x_for_x_in_global_x():
    return [x for x in x]


def comprehension_sees_enclosing_value(n):
    base = n
    r1 = [base + i for i in range(3)]
    base = -n
    r2 = [base + i for i in range(3)]
    return r1, r2


def comprehension_var_named_like_global(n):
    r = [SCALE * 2 for SCALE in range(n)]
    return r, SCALE  # the global: the comprehension's variable does not leak


def comprehension_var_same_as_loop_var(n):
    out = []
    for i in range(n):
        out.append([i * 10 for i in range(i)])  # range(i) reads the loop's i
        out.append(i)
    return out


def second_iterable_uses_first_var(n):
    return [(i, j) for i in range(n) for j in range(i, n)]


def second_iterable_uses_first_var_numeric(n):
    return [i * 100 + j for i in range(n) for j in range(i, n)]


def empty_source(n):
    return [i for i in []], {i for i in ()}, {k: v for k, v in {}.items()}


def dict_comp_duplicate_keys(n):
    return {i % 3: i for i in range(n)}


def set_comp_equal_elements(n):
    return [repr(v) for v in {v for v in [1, 1.0, True, 2.0, 2]}]


def error_in_element(n):
    return [10 // (5 - i) for i in range(n)]


def error_in_condition(items):
    return [i for i in items if i > 0]


def error_not_iterable(n):
    return [i for i in n]


def error_unhashable(items):
    return {i for i in items}


def error_unpacking(items):
    return [a for a, b in items]


def comprehension_calls_mutating(lst, n):
    return [lst.append(i) for i in range(n)], lst


def comprehension_over_mutating_list(lst):
    return [lst.append(i) or i for i in lst if len(lst) < 20]


# the comprehensions that do not compile: sets and dicts, strings, unpacking, tuples, no or failing iteration.
# All the other tests also demand, through jit.stats, that compiled code ran
NOT_NATIVE = {
    set_comp,
    dict_comp,
    over_iterables,
    unpacking_target,
    x_for_x_in_global_x,
    second_iterable_uses_first_var,
    empty_source,
    dict_comp_duplicate_keys,
    set_comp_equal_elements,
    error_not_iterable,
    error_unhashable,
    error_unpacking,
}


@pytest.mark.parametrize(
    "func, calls",
    [
        (list_comp, [0, 1, 12]),
        (set_comp, [0, 12]),
        (dict_comp, [0, 12]),
        (with_ifs, [0, 20]),
        (nested_for, [0, 12, 20]),
        (nested_three, [0, 7, 9]),
        (nested_comp_in_comp, [0, 12, 20]),
        (over_iterables, [["abc", "bcd", "", "x"]]),
        (uses_locals_and_globals, [12]),
        (uses_param_in_condition, [(12, 7)]),
        (unpacking_target, [[(1, 2), (3, 4), (1, 5)]]),
        (pending_binop, [([1, 2], 12, [3]), ([], 0, [])]),
        (pending_call_args, [0, 11]),
        (pending_in_nested_calls, [0, 12]),
        (pending_attribute_and_subscript, [({"a": [9]}, 12)]),
        (pending_inside_display, [0, 11]),
        (pending_in_comparison, [0, 5, 12]),
        (pending_in_boolop, [0, 12]),
        (pending_in_conditional, [0, 12]),
        (pending_in_fstring, [0, 11]),
        (comprehension_in_loop, [0, 12]),
        (loop_var_does_not_leak, [0, 12]),
        (loop_var_shadows_param, [99]),
        (x_for_x_in_x, [0, 12]),
        (x_for_x_in_global_x, [()]),
        (comprehension_sees_enclosing_value, [5]),
        (second_iterable_uses_first_var, [0, 11]),
        (second_iterable_uses_first_var_numeric, [0, 11]),
        (comprehension_var_same_as_loop_var, [0, 12]),
        (comprehension_var_named_like_global, [0, 12]),
        (empty_source, [0]),
        (dict_comp_duplicate_keys, [12]),
        (set_comp_equal_elements, [0]),
        (error_in_element, [5, 12]),
        (error_in_condition, [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, None]]),
        (error_not_iterable, [5]),
        (error_unhashable, [[1, 2, [3]]]),
        (error_unpacking, [[(1, 2), (1, 2, 3)], [(1, 2), 5]]),
        (comprehension_calls_mutating, [Args([], 12)]),
        (comprehension_over_mutating_list, [[1, 2, 3]]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_comprehensions(func, calls):
    check(func, *calls, native=None if func in NOT_NATIVE else True)


def reads_unbound_enclosing_local(n):
    r = [late + i for i in range(n)]  # noqa: F821
    late = 1  # noqa: F841
    return r


def reads_deleted_param_in_condition(n):
    del n
    return [i for i in range(3) if i < n]  # noqa: F821


def inner_iterable_reads_unbound(n):
    r = [[j for j in late] for i in range(n)]  # noqa: F821
    late = [1]  # noqa: F841
    return r


def first_iterable_reads_unbound(n):
    r = [i for i in late]  # evaluated in the function itself: UnboundLocalError on every version  # noqa: F821
    late = [1]  # noqa: F841
    return r


@pytest.mark.parametrize(
    "func, n",
    [
        (reads_unbound_enclosing_local, 0),
        (reads_unbound_enclosing_local, 3),
        (reads_deleted_param_in_condition, 3),
        (inner_iterable_reads_unbound, 2),
        (first_iterable_reads_unbound, 2),
    ],
    ids=lambda v: getattr(v, "__name__", repr(v)),
)
def test_comprehension_reads_unbound_local(func, n):
    # Python 3.11 reports a free variable (NameError), 3.12+ an UnboundLocalError: tracejit must say what the
    # running Python says
    check(func, n)
