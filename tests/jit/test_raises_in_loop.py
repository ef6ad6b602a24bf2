"""An operation that raises in the iteration being recorded (math.log of a negative number, a shift by a
negative count, a division by zero): the exception ends the loop (the front end compiles no `try`), so the
recording says nothing about the loop and is tried again (a retry, not a failure that backs off and
blacklists). A trace recorded from an iteration that does not raise keeps its guard there: native code leaves at
that instruction and the interpreter raises CPython's exception, with the user's line in the traceback.
Differential against CPython, native through jit.stats."""

from __future__ import annotations

import math
import traceback

import pytest
from helpers import check

import jit


def logs(n, start):
    total = 0.0
    for i in range(n):
        total += math.log(start - i)
    return total


def shifts(n, k):
    h = 1
    for i in range(n):
        h = (h << (k - i)) & 0xFFFF | 1
    return h


def remainders(n, d):
    total = 0
    for i in range(n):
        total += 1000 % (d - i)
    return total


def fresh(func):
    return jit.jit(threshold=2, side_exit_threshold=2, min_native_iterations=0)(func)


@pytest.mark.parametrize(
    "func,raising,fine",
    [(logs, (10, 0.5), (200, 1000.0)), (shifts, (10, 1), (200, 300)), (remainders, (10, 1), (200, -5))],
)
def test_raising_while_recording_is_no_failure(func, raising, fine):
    """Every call raises early in its loop, sometimes in the iteration being recorded: the recording is tried
    again at the next call, which compiles the loop from an iteration that does not raise; from then on each
    call enters native code, which leaves at the instruction that raises (before: backed off, 7 native entries
    in 40 calls)."""
    f = fresh(func)
    for _ in range(40):
        with pytest.raises((ValueError, ZeroDivisionError)):
            f(*raising)
    assert jit.stats(f)["aborts"], "the recording was meant to meet the exception"
    assert jit.stats(f)["native_entries"] >= 30
    assert not jit.stats(f).get("gave_up")
    before = jit.stats(f)["native_entries"]
    assert f(*fine) == func(*fine)
    assert jit.stats(f)["native_entries"] > before
    assert jit.stats(f)["traces_compiled"] > 0
    assert set(jit.stats(f)["aborts_by_code"]) <= {"RAISES", "MATH_RAISES", "LOOP_ENDED"}


@pytest.mark.parametrize("start", [0.5, 1.5, 3.5, 40.5, 500.0])
def test_math_domain_error_in_a_native_loop(start):
    check(logs, (0, start), (3, start), (60, start), (60, 1e9), native=True)


@pytest.mark.parametrize("k", [0, 1, 5, 30])
def test_negative_shift_count(k):
    check(shifts, (0, k), (2, k), (50, k), (50, 100), native=True)


@pytest.mark.parametrize("d", [0, 1, 7, 45])
def test_division_by_zero_in_the_loop(d):
    check(remainders, (0, d), (3, d), (50, d), (50, -3), native=True)


def test_the_exception_points_at_the_users_line():
    f = fresh(logs)
    for _ in range(4):
        f(100, 1000.0)
    assert jit.stats(f)["native_entries"] > 0

    def failure(func):
        with pytest.raises(ValueError) as info:
            func(100, 50.0)
        entry = traceback.extract_tb(info.value.__traceback__)[-1]
        return str(info.value), entry.name, entry.line

    assert failure(f) == failure(logs) == ("math domain error", "logs", "total += math.log(start - i)")
    assert math.isfinite(f(40, 50.0))


def reads_deleted(n, k):
    u = 0
    total = 0
    for i in range(n):
        if i == k:
            del u
        total += u + i  # UnboundLocalError once u is deleted
    return total


def reads_undefined_global(n, k):
    total = 0
    for i in range(n):
        if i >= k:
            total += UNDEFINED_NAME  # noqa: F821  (NameError)
        total += i
    return total


@pytest.mark.parametrize("k", [0, 1, 2, 3, 40, 1000])
def test_unbound_local_and_undefined_global(k):
    check(reads_deleted, (0, k), (5, k), (60, k), (60, 1000), native=True)
    check(reads_undefined_global, (0, k), (5, k), (60, k), (60, 1000), native=True)


def test_a_name_error_while_recording_is_no_failure():
    f = fresh(reads_undefined_global)
    for _ in range(40):
        with pytest.raises(NameError):
            f(10, 1)
    assert jit.stats(f)["native_entries"] >= 30
    assert set(jit.stats(f)["aborts_by_code"]) <= {"RAISES", "LOOP_ENDED"}
