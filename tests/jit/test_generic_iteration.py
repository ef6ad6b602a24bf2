"""`for` over any iterator (``jit.recorder.generic``: ``_GET_ITER_GENERIC``, ``_ITER_NEXT_GENERIC``): generators,
map, filter, zips of iterators, a user's iterator class. Each next() is one PyIter_Next, a barrier: it may run
Python code, so it is never made twice (an iterator's __next__ runs exactly as often as under CPython, also at
the loop's end), and an exception it raises is re-raised at the `for` line. Where the loop ends, the iterator is
released as CPython's FOR_ITER releases it (its __del__ runs before the code after the loop). Checked against
CPython, with jit.stats asserting native runs."""

import sys

from helpers import check

import jit as jit_module
from jit import jit


def squares(k):
    for i in range(k):
        yield i * i


def sum_of_a_generator(n):
    s = 0
    for x in squares(n):
        s += x
    return s


def lengths_through_map(xs):
    out = 0
    for s in map(str, xs):
        out += len(s)
    return out, s


def products_of_a_zip_of_iterators(a, b):
    t = 0
    for x, y in zip(iter(a), iter(b)):
        t += x * y
    return t


def sum_of_a_filter(xs):
    c = 0
    for v in filter(None, xs):
        c += v
    return c


class Countdown:
    """A user's iterator that counts its __next__ calls (a side effect the JIT must not repeat)."""

    calls = 0

    def __init__(self, n, log=None):
        self.n = n
        self.log = log

    def __iter__(self):
        return self

    def __next__(self):
        Countdown.calls += 1
        if self.n <= 0:
            raise StopIteration
        self.n -= 1
        return self.n

    def __del__(self):
        if self.log is not None:
            self.log.append("released")


def sum_of_a_countdown(n):
    t = 0
    for v in Countdown(n):
        t += v
    return t


def released_at_the_loop_end(n):
    log = []
    t = 0
    for v in Countdown(n, log):
        t += v
    after = len(log)  # (CPython released the iterator where the loop ended)
    return t, after


def lengths_of_maps_in_a_nest(rows):
    total = 0
    for row in rows:
        for s in map(str, row):
            total += len(s)
    return total, s


def boom(n):
    yield from range(n)
    raise ValueError(f"boom after {n}")


def sum_until_it_raises(n):
    t = 0
    for v in boom(n):
        t += v
    return t


def break_out_of_a_generator(n):
    t = 0
    for v in squares(n):
        if v > 50:
            break
        t += v
    return t, v


def test_generators_maps_filters_and_zips_run_natively():
    check(sum_of_a_generator, 60, 0, 3, native=True)
    check(lengths_through_map, [1, 22, 333] * 20, native=True)
    check(products_of_a_zip_of_iterators, ([1, 2, 3] * 10, [4, 5, 6] * 10), native=True)
    check(sum_of_a_filter, [0, 1, 2, 0, 3] * 10, native=True)


def test_an_empty_iterator():
    check(lengths_through_map, [], 3)


def test_a_user_iterator_is_asked_exactly_as_often_as_by_cpython():
    check(sum_of_a_countdown, 40, 0, native=True)
    f = jit(threshold=2, side_exit_threshold=2)(sum_of_a_countdown)
    for n in (40, 40, 7):
        Countdown.calls = 0
        assert f(n) == n * (n - 1) // 2
        assert Countdown.calls == n + 1  # (n items, then the StopIteration: never a second one)
    assert jit_module.stats(f)["native_iterations"] > 0


def test_the_iterator_is_released_where_the_loop_ends():
    check(released_at_the_loop_end, 40, 0, native=True)


def test_nested_loops_over_maps():
    check(lengths_of_maps_in_a_nest, [[1, 22], [333, 4444, 5]] * 10, native=True)
    check(lengths_of_maps_in_a_nest, ([[7] * 30, [], [1, 2]],), options={"nesting": False})


def test_an_exception_from_the_iterator_is_raised_at_the_for_line():
    check(sum_until_it_raises, 40, 0, native=True)
    f = jit(threshold=2, side_exit_threshold=2)(sum_until_it_raises)
    for _ in range(3):
        try:
            f(40)
        except ValueError as exc:
            frames = []
            tb = exc.__traceback__
            while tb is not None:
                frames.append((tb.tb_frame.f_code.co_name, tb.tb_lineno))
                tb = tb.tb_next
        else:
            raise AssertionError("no ValueError")
    line = sum_until_it_raises.__code__.co_firstlineno + 2  # the `for` line
    assert ("sum_until_it_raises", line) in frames and frames[-1][0] == "boom"


def test_break_out_of_a_generator():
    check(break_out_of_a_generator, 100, 3, native=True)


def test_no_reference_is_leaked():
    piece = "".join(["p", "iece"])
    f = jit(threshold=2, side_exit_threshold=2, min_native_iterations=0)(lengths_through_map)
    items = [piece] * 500
    f(items)
    before = sys.getrefcount(piece)
    for _ in range(10):
        assert f(items) == (2500, piece)
    assert sys.getrefcount(piece) == before
