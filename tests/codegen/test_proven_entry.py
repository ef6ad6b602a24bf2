"""A tree's proven entry (codegen.python_epoch): an outer trace that calls an inner loop's tree again with the same
arrays, and let no Python code run since its call before, enters the tree's fast copy without checking the arrays'
headers again (their dtype, dimensions, layout, WRITEABLE flag: ``ENTRY_CHECKED``); its first call, and any call
after Python code ran (a barrier, the periodic check), goes through the tree's call entry, which checks them.

Pinned: the structure (the outer trace calls the proven entry, which goes straight to the fast copy, and the call
entry goes through the checks), where it is not used (an array that changes per outer iteration), and what Python
code run between two calls may change (an array made read-only, reshaped, given another dtype in place): the
outcome is CPython's, exception and all. Native execution is asserted through ``jit.stats``."""

from __future__ import annotations

import re

import pytest
from helpers import define, numpy_outcome

import jit as jit_module
from codegen import python_epoch
from jit import jit

np = pytest.importorskip("numpy")

SOURCE = """
def matmul(a, b, c):
    n, m, p = a.shape[0], a.shape[1], b.shape[1]
    for i in range(n):
        for j in range(p):
            s = 0.0
            for k in range(m):
                s += a[i, k] * b[k, j]
            c[i, j] = s
    return c[n // 2, p // 2]


def fresh_rows(n, out):
    for j in range(n):
        row = np.zeros(60)
        for k in range(60):
            row[k] = k * 0.5 + j
        out[j] = row[j % 60]
    return out[n // 2]


def poke(arr, j, when, how):
    try:
        if j == when:
            if how == "read-only":
                arr.flags.writeable = False
            elif how == "reshape":
                arr.shape = (arr.shape[0] * arr.shape[1],)
            elif how == "dtype":
                arr.dtype = np.int64
    except KeyError:
        pass
    return j


def fill(out, a, when, how, target):
    n, m = out.shape[0], out.shape[1]
    for j in range(n):
        poke(out if target == 0 else a, j, when, how)
        for k in range(m):
            out[j, k] = a[j, k] * 2.0
    return out[0, 0]
"""

NAMESPACE = {"np": np}


def fast_runs(jitted) -> int:
    return sum(trace["fast_runs"] for tree in jit_module.stats(jitted)["trees"] for trace in tree["traces"])


def functions(text: str) -> dict[str, str]:
    """The functions of an IR dump: name -> text."""
    found = {}
    for part in text.split("define ")[1:]:
        name = re.search(r'@"?([\w.]+)"?\(', part)
        assert name is not None
        found[name.group(1)] = part
    return found


def calls_proven(text: str) -> bool:
    """Does this function's text call a tree's proven entry?"""
    return re.search(r'call i64 @"?\w+_call_proven"?\(', text) is not None


def proven_callers(defined: dict[str, str]) -> list[str]:
    """The texts of the functions of an IR dump (``functions``) that call a tree's proven entry, but the tree's own
    checks of its arrays' headers (``_fast_checks``: its call entry goes there, then on to the proven entry)."""
    return [text for name, text in defined.items() if calls_proven(text) and not name.endswith("_fast_checks")]


def matrices(n: int = 40):
    a = (np.arange(n * n, dtype=np.float64).reshape(n, n) % 7) - 3.0
    b = (np.arange(n * n, dtype=np.float64).reshape(n, n) % 5) * 0.25
    return a, b


def test_the_outer_trace_calls_the_proven_entry_which_skips_the_array_checks():
    plain = define(SOURCE, "matmul", NAMESPACE)
    f = jit(threshold=2)(plain)
    a, b = matrices()
    for _ in range(3):
        c, expected = np.zeros((40, 40)), np.zeros((40, 40))
        assert repr(f(a, b, c)) == repr(plain(a, b, expected))
        assert np.array_equal(c, expected)
    assert fast_runs(f) > 0
    defined = functions(jit_module.dump(f, "ir"))
    proven = [name for name in defined if name.endswith("_call_proven")]
    assert len(proven) == 1
    root = proven[0].removesuffix("_call_proven")
    # the proven entry is the fast copy's single-run entry (codegen.function._build_run), which goes on in the fast
    # copy where its run does not fit; the call entry goes there through the checks first
    assert f'@"{root}_fast"(' in defined[proven[0]] and "loop_run" in defined[proven[0]]
    assert "_fast_checks" in defined[f"{root}_call"]
    assert f'@"{root}_call_proven"(' in defined[f"{root}_fast_checks"]
    assert "_fast_checks" not in defined[proven[0]]
    # the outer loop's trace calls both: the proven entry where the epoch is the one its last call saw
    callers = proven_callers(defined)
    assert callers and all(f"{root}_call" in text and "tj_python_epoch" in text for text in callers)


def test_an_array_that_changes_per_outer_iteration_is_checked_at_every_call():
    plain = define(SOURCE, "fresh_rows", NAMESPACE)
    f = jit(threshold=2)(plain)
    for _ in range(3):  # (row: a new array at each outer iteration)
        out, expected = np.zeros(30), np.zeros(30)
        assert repr(f(30, out)) == repr(plain(30, expected))
        assert np.array_equal(out, expected)
    text = jit_module.dump(f, "ir")
    assert "calls tree" in jit_module.dump(f, "trees")  # (the outer loop is native: it calls the inner loop's tree)
    callers = proven_callers(functions(text))
    assert callers == []  # (the row is a new object at each outer iteration: no call may skip its checks)


@pytest.mark.parametrize("target", [0, 1], ids=["stored", "read"])
@pytest.mark.parametrize("how", ["read-only", "reshape", "dtype"])
@pytest.mark.parametrize("when", [0, 1, 17])
def test_python_code_between_two_calls_that_changes_an_array_is_seen(how, when, target):
    # (the helper changes the array the inner loop stores into, or the one it reads, in place; the outer trace
    # calls the inner loop's tree at its proven entry until then)
    plain = define(SOURCE, "fill", NAMESPACE)
    f = jit(threshold=2)(plain)
    a = np.linspace(0.5, 2.0, 30 * 40).reshape(30, 40)
    for _ in range(3):  # (warm: nothing changes)
        assert f(np.zeros((30, 40)), a, -1, how, target) == plain(np.zeros((30, 40)), a, -1, how, target)
    assert fast_runs(f) > 0
    assert proven_callers(functions(jit_module.dump(f, "ir")))
    epoch = python_epoch.value()
    arrays = [np.zeros((30, 40)), a.copy()], [np.zeros((30, 40)), a.copy()]
    catch = (ValueError, IndexError, TypeError)
    got = numpy_outcome(f, (*arrays[0], when, how, target), {}, catch)
    assert got == numpy_outcome(plain, (*arrays[1], when, how, target), {}, catch)
    for mine, theirs in zip(*arrays):
        assert mine.shape == theirs.shape and mine.dtype == theirs.dtype
        assert mine.tobytes() == theirs.tobytes() and mine.flags.writeable == theirs.flags.writeable
    assert python_epoch.value() > epoch  # (the helper's calls are barriers: each advanced the epoch)


def test_flags_set_before_every_inner_call_change_nothing():
    # (the outer loop leaves the overflow flag set before each call of the inner loop's tree: its fast copy's first
    # run sees it, rolls back, clears it and runs again, as fast; the result is CPython's, and so are the warnings)
    source = """
def rows_after_overflow(a, big):
    total = 0.0
    for i in range(a.shape[0]):
        t = big * 10.0
        s = 0.0
        for j in range(a.shape[1]):
            s += a[i, j] * 0.5
        total += s + (t - t if t == t else 0.0)
    return total
"""
    plain = define(source, "rows_after_overflow", {})
    f = jit(threshold=2)(plain)
    a = np.linspace(0.5, 2.0, 20 * 300).reshape(20, 300)
    for state in ({}, {"all": "raise"}, {"under": "warn"}):
        for _ in range(3):
            assert numpy_outcome(f, (a, 1e308), state) == numpy_outcome(plain, (a, 1e308), state)
    assert fast_runs(f) > 0
