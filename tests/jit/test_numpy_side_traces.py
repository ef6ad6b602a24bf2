"""Side traces of a loop over a NumPy array that read what their root never did: a histogram whose data come
sorted, so that its root trace is recorded where the values fall below the bins (``counts`` untouched), its
first side trace where they fall in (``counts[k] += 1``) and its second where they pass the last bin.

Two cliffs are pinned here. The tree's entry stub tags an array outside its root's entry type map as an object
(``codegen.entry``: its support library knows nothing of NumPy), and the side trace's guard on the kind of
``counts``'s slot expected an array: it failed at every iteration, and so did each side trace grown from it, up to
the limit of side traces (32 compiles, then an exit to the interpreter per iteration). And the side trace's check
of ``k`` against ``counts``'s length was hoisted to its entry, ahead of its check of ``k`` against ``bins``: for
every value past the bins it failed there, and the side trace grown from that exit (not a branch of the loop) was
never joined into the tree's loop. Results, exceptions and the arrays afterwards are CPython's (with NumPy)."""

from __future__ import annotations

import array
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import assert_native, define, numpy_outcome

import jit as jit_module
from jit import jit

np = pytest.importorskip("numpy")
ROOT = Path(__file__).resolve().parent.parent.parent

from .test_numpy_guarded_runs import SOURCE  # noqa: E402  (its histogram)

N = 3000


def sorted_data(n=N):
    """Values in [-1, 11), sorted: the first twelfth below the bins [0, 10), the last twelfth past them."""
    return np.sort((np.arange(n, dtype=np.float64) * 0.6180339887498949) % 1.0 * 12.0 - 1.0)


def outcome(func, data, counts):
    result = numpy_outcome(func, (data, counts, 0.0, 10.0), {}, (FloatingPointError, ValueError, TypeError))
    return result, counts.tolist() if isinstance(counts, np.ndarray) else list(counts)


def warmed():
    """plain and jitted histogram, called on sorted data until its side traces are compiled (results compared)."""
    plain = define(SOURCE, "histogram", {})
    f = jit(threshold=8, side_exit_threshold=4)(plain)
    data = sorted_data()
    for _ in range(3):
        assert outcome(f, data, np.zeros(64, dtype=np.int64)) == outcome(plain, data, np.zeros(64, dtype=np.int64))
    assert_native(f)
    return plain, f, data


def test_an_array_first_read_by_a_side_trace_passes_its_slot_kind_guard():
    plain, f, data = warmed()
    stats = jit_module.stats(f)
    assert "max_side_traces" not in stats["limits_hit"], stats["limits_hit"]
    assert stats["side_traces"] <= 3, stats["side_traces"]
    # once warm, a call leaves native code a few times (its loops' ends), not once per value
    before = jit_module.stats(f)
    assert outcome(f, data, np.zeros(64, dtype=np.int64)) == outcome(plain, data, np.zeros(64, dtype=np.int64))
    after = jit_module.stats(f)
    assert after["exits_to_interpreter"] - before["exits_to_interpreter"] <= 4
    assert after["traces_compiled"] == before["traces_compiled"]
    # the values past the bins: a side trace of the first side trace, joined under it (codegen.joined)
    assert sorted(len(t["joined"]) for tree in after["trees"] for t in tree["traces"] if t["kind"] == "side") == [1, 2]


def test_the_index_check_of_a_side_trace_stays_behind_its_branch():
    _, f, _ = warmed()
    listing = jit_module.dump(f, "uops")
    guards = [line for line in listing.splitlines() if "_GUARD_INDEX_RANGE" in line and "line 8" in line]
    assert guards and not any("(hoisted to the entry)" in line for line in guards), listing
    # every side trace hangs from a branch of the loop (line 7), none from the exit of a side trace's entry
    sides = re.findall(r"side trace from exit \d+ \(line (\d+)\)", listing)
    assert sides and set(sides) == {"7"}, sides


@pytest.mark.parametrize("which", ["object", "list", "strided", "other dtype"])
def test_the_slot_kind_guard_of_an_array_refuses_what_is_no_such_array(which):
    """The guard takes a slot tagged as an object for an array only where the object is an ndarray; another object
    in the same slot (an array.array, a list, another array the spec guard refuses) leaves at the guard, and the
    interpreter does the iteration: the result and the container afterwards are CPython's."""
    plain, f, data = warmed()
    makers = {
        "object": lambda: array.array("q", [0] * 64),
        "list": lambda: [0] * 64,
        "strided": lambda: np.zeros(128, dtype=np.int64)[::2],
        "other dtype": lambda: np.zeros(64, dtype=np.int32),
    }
    make = makers[which]
    assert outcome(f, data, make()) == outcome(plain, data, make())
    assert outcome(f, data, np.zeros(64, dtype=np.int64)) == outcome(plain, data, np.zeros(64, dtype=np.int64))


SCALAR = """
def late_scalar(a, n):
    t = a[1]
    total = 0.0
    for i in range(n):
        if i >= 300 and i % 3 == 1:
            total = total + t
        else:
            total -= 1.0
    return total
"""


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "uint8", "bool"])
def test_a_numpy_scalar_first_read_by_a_side_trace_passes_its_slot_kind_guard(dtype):
    """t, a NumPy scalar read before the loop, which the root trace (recorded in the first 300 iterations) never
    reads: the tree's entry stub holds it as an object, and the side trace's guard of its slot's kind, which
    expects the scalar's value, takes the object's value there (else it failed at every iteration, and each side
    trace grown from it, up to the limit). Another scalar type in the same slot leaves at that guard."""
    plain = define(SCALAR, "late_scalar", {})
    f = jit(threshold=8, side_exit_threshold=4)(plain)
    a = np.array([3, 1, 2], dtype=dtype)
    for _ in range(3):
        got, expected = f(a, 3000), plain(a, 3000)
        assert (type(got), repr(got)) == (type(expected), repr(expected))
    assert_native(f)
    stats = jit_module.stats(f)
    assert "max_side_traces" not in stats["limits_hit"], stats["limits_hit"]
    assert 1 <= stats["side_traces"] <= 2, stats["side_traces"]
    before = jit_module.stats(f)["exits_to_interpreter"]
    f(a, 3000)
    assert jit_module.stats(f)["exits_to_interpreter"] - before <= 2
    for other in (np.array([1.5, 2.5], dtype=np.float32 if dtype != "float32" else np.float64), [0.5, 7.0]):
        got, expected = f(other, 1000), plain(other, 1000)
        assert (type(got), repr(got)) == (type(expected), repr(expected))


FRESH = """
import linecache
import numpy as np
import jit

SOURCE = @SCALAR@
linecache.cache["<fresh>"] = (len(SOURCE), None, SOURCE.splitlines(True), "<fresh>")
namespace = {}
exec(compile(SOURCE, "<fresh>", "exec"), namespace)
plain = namespace["late_scalar"]
f = jit.jit(threshold=8, side_exit_threshold=4)(plain)
a = np.array([3.0, 1.5])
for _ in range(3):
    got, expected = f(a, 3000), plain(a, 3000)
    assert (type(got), repr(got)) == (type(expected), repr(expected)), (got, expected)
stats = jit.stats(f)
print(stats["side_traces"], stats["native_entries"])
""".replace("@SCALAR@", repr(SCALAR))


def test_a_side_trace_leaves_with_a_numpy_scalar_its_roots_stub_never_met():
    """In a fresh process that imported NumPy, the loop's root trace meets no NumPy value (its tree's stub is
    built before NumPy's kinds are known); its side trace makes total a numpy.float64, and the stub boxes it where
    that side trace leaves (a SystemError before: it met a kind it could not box)."""
    done = subprocess.run(
        [sys.executable, "-c", FRESH], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    side_traces, native_entries = map(int, done.stdout.split())
    assert 1 <= side_traces <= 2 and native_entries > 0, done.stdout
