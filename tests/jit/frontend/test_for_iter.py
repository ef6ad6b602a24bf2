"""Differential tests of ``for`` over arbitrary iterables: containers, generators, custom iterators, mutation."""

import pytest
from tier1_check import check_t1 as check


def collect(it):
    out = []
    for x in it:
        out.append(x)
    return out


def total(it):
    t = 0
    for x in it:
        t += x
    return t


def dict_items(d):
    out = []
    for k, v in d.items():
        out.append((k, v * 2))
    return out


def dict_keys_direct(d):
    out = []
    for k in d:
        out.append(k)
    return out


def string_chars(s):
    counts = {}
    for ch in s:
        counts[ch] = counts.get(ch, 0) + 1
    return counts


def gen(n):
    yield from range(n)
    yield "end"


def from_generator_factory(factory, n):
    out = []
    for x in factory(n):
        out.append(x)
    return out


class Squares:
    """A custom iterable whose iterator is a separate object."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return SquaresIter(self.n)


class SquaresIter:
    def __init__(self, n):
        self.i = 0
        self.n = n

    def __iter__(self):
        return self

    def __next__(self):
        if self.i >= self.n:
            raise StopIteration
        self.i += 1
        return self.i * self.i


class GetItemOnly:
    """Iterable through the old __getitem__ protocol."""

    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError(i)
        return -i


class BadIter:
    def __iter__(self):
        return 5


class RaisingIter:
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return self

    def __next__(self):
        self.n -= 1
        if self.n < 0:
            raise ValueError("iterator broke")
        return self.n


def custom_iterables(n):
    out = []
    for x in Squares(n):
        out.append(x)
    for x in GetItemOnly(n):
        out.append(x)
    return out


def bad_iter():
    for _ in BadIter():
        pass


def iter_raises(n):
    seen = 0
    for _ in RaisingIter(n):
        seen += 1
    return seen


def not_iterable(x):
    for _ in x:
        pass


def append_while_iterating(lst):
    for x in lst:
        if x < 20:
            lst.append(x + 10)
    return lst


def remove_while_iterating(lst):
    seen = []
    for x in lst:
        seen.append(x)
        if x % 2 == 0:
            lst.remove(x)
    return seen, lst


def dict_changes_size(d):
    for k in d:
        d[k + 100] = 0


def loop_var_after(it):
    x = "unset"
    for x in it:
        pass
    return x


def break_else(it, stop):
    for x in it:
        if x == stop:
            break
    else:
        return "else"
    return "break", x


def continue_filter(it):
    out = []
    for x in it:
        if not x:
            continue
        out.append(x)
    return out


def nested_lists(rows):
    t = 0
    for row in rows:
        for x in row:  # inner trip count varies, including zero
            t += x
    return t


def nested3_product(a, b, c):
    out = []
    for x in a:
        for y in b:
            for z in c:
                if x + y + z == 6:
                    out.append((x, y, z))
    return out


def return_from_nested(grid, target):
    for i, row in enumerate(grid):
        for j, x in enumerate(row):
            if x == target:
                return i, j
    return None


def return_from_nested_counting(grid, target):
    i = 0
    for row in grid:
        j = 0
        for x in row:
            if x == target:
                return i * 1000 + j
            j += 1
        i += 1
    return -1


def zip_enumerate(a, b):
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        out.append(i * x - y)
    return out


def iterable_evaluated_once(lst):
    n = 0
    for x in lst:
        lst = [99]  # rebinding the name does not change the loop
        n += x
    return n, lst


def same_iterator_twice(n):
    it = iter(range(n))
    pairs = []
    for a in it:
        for b in it:
            pairs.append((a, b))
            break
    return pairs


def types_change(items):
    acc = 0
    for x in items:
        acc = acc + x
    return acc


def zero_division_after_1000(n):
    acc = 0
    for x in list(range(n)):
        acc += 1000 // (1000 - x)
    return acc


def branch_flips_after_1000(items):
    a = b = 0
    for x in items:
        if x < 1000:
            a += x
        else:
            b += 1
    return a, b


def sets_and_frozensets(s):
    t = 0
    for x in s:
        t += x
    for x in frozenset(s):
        t -= x
    return t


def bytes_and_bytearray(b):
    out = []
    for x in b:
        out.append(x)
    for x in bytearray(b):
        out.append(-x)
    return out


def map_and_filter(n):
    out = []
    for x in map(abs, range(-n, n)):
        out.append(x)
    for x in filter(None, range(n)):
        out.append(x)
    return out


# the functions whose loops compile (over lists and tuples of numbers): their tests also demand, through
# jit.stats, that compiled code ran
NATIVE = {
    collect,
    total,
    append_while_iterating,
    loop_var_after,
    break_else,
    continue_filter,
    nested_lists,
    nested3_product,
    return_from_nested_counting,
    types_change,
    zero_division_after_1000,
    branch_flips_after_1000,
}


@pytest.mark.parametrize(
    "func, calls",
    [
        (collect, [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], (), (1, "a", None), "hello world!", range(12, 0, -1)]),
        (total, [list(range(15)), (1.5, 2.5), [], [2**62, 2**62, 2**62], [True, 2, 3.0]]),
        (dict_items, [{i: i * i for i in range(12)}, {}]),
        (dict_keys_direct, [{"b": 1, "a": 2, 3: 4}]),
        (string_chars, ["mississippi", ""]),
        (from_generator_factory, [(gen, 12), (gen, 0), (range, 11), (reversed, [1, 2, 3])]),
        (custom_iterables, [0, 11]),
        (bad_iter, [()]),
        (iter_raises, [0, 12]),
        (not_iterable, [5, None, 1.5]),
        (append_while_iterating, [[1, 2, 3], [25], []]),
        (remove_while_iterating, [list(range(12))]),
        (dict_changes_size, [{1: 1}, {}]),
        (loop_var_after, [[], [1, 2, 3], "xyz"]),
        (break_else, [(list(range(12)), 7), (list(range(12)), 99), ([], 0)]),
        (continue_filter, [[0, 1, "", "a", None, 2, [], [0], 0.0, 3, 4, 5, 6]]),
        (nested_lists, [[[1, 2], [], [3], [], [4, 5, 6, 7, 8, 9, 10, 11, 12]], []]),
        (nested3_product, [([1, 2, 3], [1, 2, 3, 4], [0, 1, 2, 3])]),
        (return_from_nested, [([[1, 2, 3], [4, 5, 6], [7, 8, 9]], 6), ([[1]], 5), ([[], [], [5]], 5)]),
        (
            return_from_nested_counting,
            [([list(range(r * 10, r * 10 + 10)) for r in range(10)], 57), ([[1.5] * 12] * 3, 9), ([[], [5]], 5)],
        ),
        (zip_enumerate, [(list(range(12)), list(range(12, 0, -1)))]),
        (iterable_evaluated_once, [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]]),
        (same_iterator_twice, [12]),
        (types_change, [[1, 2, 3, 0.5, 4, 5], [1, 2, 2**64, 3], [1, 2, "x"], [[1]]]),
        (zero_division_after_1000, [999, 1001]),
        (branch_flips_after_1000, [list(range(1003)), range(1003)]),  # list first: aborts on range blacklist the loop
        (sets_and_frozensets, [{1, 2, 3, 40}]),
        (bytes_and_bytearray, [b"hello world"]),
        (map_and_filter, [6]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_for_iter(func, calls):
    check(func, *calls, native=True if func in NATIVE else None)


# --- more loop shapes ---------------------------------------------------------------------------------------


def break_in_inner_else(rows):
    # the inner loop's else belongs to the outer loop's body: its break leaves the outer loop
    found = []
    for row in rows:
        for x in row:
            if x < 0:
                break
            found.append(x)
        else:
            found.append("|")
            continue
        found.append("neg")
        if len(found) > 12:
            break
    else:
        found.append("end")
    return found


def iterable_is_comprehension(n):
    t = []
    for x in [i * i for i in range(n)]:
        t.append(x + len([j for j in range(x % 5)]))
    return t


def comprehension_in_while_condition(n):
    k = 0
    while len([i for i in range(k)]) < n:
        k += 1
    return k


def tuple_target_over_ints(n):
    for a, b in range(n):
        pass


def attribute_and_subscript_targets(o, lst):
    for o.x in range(12):
        lst[o.x % 3] = o.x
    for lst[0] in "ab":
        pass
    return o.x, lst


class Box:
    pass


@pytest.mark.parametrize(
    "func, calls",
    [
        (break_in_inner_else, [[[1, 2], [3, -1, 4], [5], [], [-2], [6, 7, 8, 9, 10, 11, 12]], [[1]] * 12, []]),
        (iterable_is_comprehension, [0, 12]),
        (comprehension_in_while_condition, [0, 12]),
        (tuple_target_over_ints, [0, 3]),
        (attribute_and_subscript_targets, [(Box(), [0, 0, 0])]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_loop_shapes(func, calls):
    native = func in (break_in_inner_else, iterable_is_comprehension, comprehension_in_while_condition)
    check(func, *calls, native=True if native else None)


# --- when the loop's iterator is released -------------------------------------------------------------------

CLOSED = []


def closing_gen(n):
    try:
        yield from range(n)
    finally:
        CLOSED.append("closed")


def leaves_by_break(n):
    CLOSED.clear()
    for x in closing_gen(n):
        if x == 5:
            break
    return list(CLOSED)  # already closed: the iterator was dropped at the break


def leaves_by_return(n):
    for x in closing_gen(n):
        if x == 5:
            return x
    return -1


def leaves_by_exception(n):
    for x in closing_gen(n):
        if x == 5:
            raise ValueError(x)


def _closed_after(func, n):
    CLOSED.clear()
    try:
        func(n)
    except ValueError:
        return list(CLOSED)  # still inside the handler: the exception and its traceback are alive
    return list(CLOSED)


@pytest.mark.parametrize("func", [leaves_by_break, leaves_by_return])
def test_iterator_released_when_loop_left(func):
    from jit import jit

    check(func, 12)
    assert _closed_after(jit(func), 12) == _closed_after(func, 12) == ["closed"]


def test_iterator_released_when_exception_leaves_loop():
    from jit import jit

    assert _closed_after(jit(leaves_by_exception), 12) == _closed_after(leaves_by_exception, 12) == ["closed"]
