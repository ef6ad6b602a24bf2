"""An inner loop whose first iteration changes a slot's kind (`s = 0` then `s += k * 0.5`; `s = 0.0` then
`s += a[k] * b[k]`, a numpy.float64): its tree for the kinds before is a bridge that runs that iteration and jumps
into the tree for the kinds after. The outer trace records that first iteration itself and calls the second
tree (``Recorder.peel``): one call per outer iteration instead of two entries. Checked against CPython with
every trip count (0, 1, 2, many), native, and the outer trace's call is the second tree's; a side trace that
leaves the slot as the exit had it (another kind than the loop's after the call) is not joined with the loop
(``codegen.joined``: it once made LLVM reject the joined function)."""

from helpers import check

import jit as jit_module
from jit.aborts import Reason


def nest(n, m):
    total = 0.0
    for i in range(n):
        s = 0
        for k in range(m):
            s += k * 0.5
        total += s
    return total


def nest_with_a_shortcut(n, m):
    total = 0.0
    for i in range(n):
        s = 0
        if i % 3 == 0:
            total += 1
            continue
        for k in range(m):
            s += (k ^ i) * 0.25
        total += s
    return total


def _calls_only_the_looping_tree(jitted):
    listing = jit_module.dump(jitted, "uops")
    bridges = {
        section.split(":")[0].split()[-1]
        for section in listing.split("\n# ")
        if "_JUMP_TO_TREE" in section and "root trace of the loop at line 6" in section
    }
    called = [line for line in listing.splitlines() if "_CALL_TREE" in line]
    assert called and not any(bridge in line for bridge in bridges for line in called), listing
    assert "_UNROLLED_HEADER" in listing


def _no_compile_errors(jitted):
    for f in (jitted, jitted.cpython_baseline):
        codes = jit_module.stats(f)["aborts_by_code"]
        assert Reason.COMPILER_ERROR.name not in codes, jit_module.stats(f)["aborts"]


def test_the_outer_trace_records_the_first_iteration_and_calls_the_looping_tree():
    calls = [(3, 4), (50, 40), (50, 40), (50, 0), (50, 1), (50, 2), (200, 40), (200, 40), (20, 0)]
    jitted = check(nest, *calls, native=True)
    _calls_only_the_looping_tree(jitted)
    _no_compile_errors(jitted)


def test_a_side_trace_leaving_the_slot_of_another_kind_is_not_joined():
    calls = [(10, 5), (90, 30), (90, 30), (90, 0), (90, 1), (300, 30), (300, 30)]
    jitted = check(nest_with_a_shortcut, *calls, native=True)
    _no_compile_errors(jitted)
