"""codegen.float_status: the fast copy of a loop whose runs are checked at their end reads the processor's status
flags instead of marking each NumPy float operation. What it must still see: an event of an operation whose
result only the loop's exit reads (LLVM would compute it once, after the loop: it keeps its mark), flags left set
before the call (cleared, so the fast copy still runs), and the events of ordinary runs; the warnings, the
FloatingPointError and the result are CPython's, and the fast copy ran (jit.stats)."""

from __future__ import annotations

import platform

import pytest
from helpers import define, numpy_outcome

import jit as jit_module
from jit import jit

np = pytest.importorskip("numpy")

SOURCE = """
def last_product(a, b):
    t = 0.0
    s = 0.0
    for i in range(len(a)):
        t = a[i] * b[i]
        s += a[i]
    return s, t


def from_the_end(a, k):
    s = 0.0
    for i in range(1, k + 1):
        s -= a[-i] * 0.5
    return s
"""

N = 2000
STATES = [{}, {"all": "raise"}, {"all": "ignore"}, {"under": "warn"}]
IDS = ["default", "raise", "ignore", "under"]


def fast_runs(jitted):
    return sum(trace["fast_runs"] for tree in jit_module.stats(jitted)["trees"] for trace in tree["traces"])


def outcome(f, args, state):
    return numpy_outcome(f, args, state, (FloatingPointError, IndexError))


def test_the_fast_copy_reads_the_status_flags_on_x86_64():
    f = jit(threshold=2)(define(SOURCE, "from_the_end", {}))
    a = np.linspace(0.5, 2.0, N)
    f(a, N)
    assert fast_runs(f) > 0
    fast = [text for text in jit_module.dump(f, "ir").split("define ")[1:] if '_fast"' in text.split("\n")[0]]
    assert fast
    if platform.machine() in ("x86_64", "AMD64"):
        assert all("llvm.x86.sse.stmxcsr" in text for text in fast)


@pytest.mark.parametrize("state", STATES, ids=IDS)
@pytest.mark.parametrize("where", [0, 700, N - 1])
def test_an_operation_whose_result_only_the_exit_reads_still_reports_its_events(state, where):
    plain = define(SOURCE, "last_product", {})
    f = jit(threshold=2)(plain)
    a, b = np.linspace(0.5, 2.0, N), np.linspace(1.0, 3.0, N)
    f(a, b)
    assert fast_runs(f) > 0
    for value, other in ((1e300, 1e300), (1e-300, 1e-300), (np.inf, 0.0)):
        a2, b2 = a.copy(), b.copy()
        a2[where], b2[where] = value, other
        assert outcome(f, (a2, b2), state) == outcome(plain, (a2, b2), state), (value, other)
    assert outcome(f, (a, b), state) == outcome(plain, (a, b), state)


def test_flags_set_before_the_call_change_nothing():
    plain = define(SOURCE, "from_the_end", {})
    f = jit(threshold=2)(plain)
    a = np.linspace(0.5, 2.0, N)
    f(a, N)
    before = fast_runs(f)
    for _ in range(3):
        float("1e308") * 10.0  # (an overflow in a Python float: inf, and the processor's flag, which stays set)
        np.float64(1e-300) * np.float64(1e-300)  # (NumPy warns, and leaves the underflow flag set)
        assert f(a, N) == plain(a, N)
    stats = jit_module.stats(f)
    assert fast_runs(f) > before
    assert stats["native_iterations"] >= 3 * N


@pytest.mark.parametrize("state", STATES, ids=IDS)
def test_a_negative_index_counts_from_the_end_in_the_fast_copy(state):
    plain = define(SOURCE, "from_the_end", {})
    f = jit(threshold=2)(plain)
    a = np.linspace(0.5, 2.0, N)
    f(a, N)
    assert fast_runs(f) > 0
    for k in (N, N // 2, 0, N + 1, N + 40):  # (past the start of a: NumPy's IndexError)
        assert outcome(f, (a, k), state) == outcome(plain, (a, k), state), k
    bad = a.copy()
    bad[-300] = 1e308
    bad[-1000] = -np.inf
    assert outcome(f, (bad, N), state) == outcome(plain, (bad, N), state)


def test_a_loop_without_numpy_float_operations_reads_no_flags():
    source = """
def ints(n):
    s = 0
    for i in range(n):
        s += (i * 3) & 15
    return s
"""
    plain = define(source, "ints", {})
    f = jit(threshold=2)(plain)
    for _ in range(2):
        assert f(2000) == plain(2000)
    assert fast_runs(f) > 0
    assert "stmxcsr" not in jit_module.dump(f, "ir")
