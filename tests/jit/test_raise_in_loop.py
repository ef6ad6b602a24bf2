"""A `raise` statement inside a native loop: a side trace reaching it ends there, leaving to the interpreter, which
raises (jit.recorder.control); a root trace whose recorded iteration raises is recorded again (RAISES, a retry).
Before, either stopped the recording (NOT_COMPILED, counted towards blacklisting). Checked against CPython
(exception type, message, cause, traceback line) and through jit.stats that the loop stays native."""

import traceback

import pytest
from helpers import check

import jit as jit_module
from jit import jit


def validate(items):
    total = 0
    for x in items:
        if x < 0:
            raise ValueError(f"negative: {x}")
        total += x
    return total


def validate_with_cause(items):
    total = 0
    for x in items:
        if x == 13:
            raise KeyError(x) from ZeroDivisionError("unlucky")
        total += x
    return total


def nested(rows):
    total = 0
    for row in rows:
        for x in row:
            if x is None:
                raise TypeError(f"missing value in row {len(row)}")
            total += x
    return total


def first_row_raises(rows):
    total = 0
    for row in rows:
        if not row:
            raise IndexError("empty row")
        total += row[0]
    return total


def _counted_calls(f, calls):
    out = []
    for args in calls:
        try:
            out.append(("ok", f(*args)))
        except Exception as exc:  # noqa: BLE001  (compared with CPython's)
            out.append((type(exc).__name__, str(exc), repr(exc.__cause__)))
    return out


def test_raise_reached_by_a_side_trace():
    calls = [([1, 2, 3] * 30 + ([-1] if i % 2 else []),) for i in range(60)]
    jitted = jit(threshold=2, side_exit_threshold=2)(validate)
    assert _counted_calls(jitted, calls) == _counted_calls(validate, calls)
    stats = jit_module.stats(jitted)
    assert not stats["aborts_by_code"], stats["aborts"]
    assert stats["side_traces"] >= 1 and stats["native_iterations"] > 0
    with pytest.raises(ValueError, match="negative: -1") as info:
        jitted([1, 2] * 50 + [-1])
    assert traceback.extract_tb(info.tb)[-1].line.startswith("raise ValueError")


def test_differential():
    check(validate, [1] * 50, [1] * 50 + [-3] + [1] * 5, native=True)
    check(validate_with_cause, list(range(12)) * 5, list(range(20)) * 3)
    check(nested, [[1, 2, 3]] * 30, [[1, 2, 3]] * 30 + [[1, None]])
    check(first_row_raises, [[]], [[1]] * 40 + [[]])


def test_a_root_recording_that_raises_is_tried_again():
    jitted = jit(threshold=2)(first_row_raises)
    for _ in range(8):
        with pytest.raises(IndexError):
            jitted([[1], []])  # (the loop gets hot only on calls that raise at once: never blacklisted)
    assert jitted([[1]] * 200) == 200
    stats = jit_module.stats(jitted)
    assert set(stats["aborts_by_code"]) <= {"RAISES"}, stats["aborts"]
    assert stats["native_iterations"] > 0
