"""A range's step in a loop's trace: a range of one or two arguments has step 1, which the trace guards at its
entry (``_GUARD_UNIT_STEP``, hoisted) and then uses as a constant, so a nested loop's fast copy computes its trip
count without a division; a step given as an argument stays a value the trace reads. Checked against CPython,
native through jit.stats: the unit step inside a nest, a step argument of 1 and then others, `range` rebound to
a callable that returns ranges of another step (the guard fails: the tree is invalidated and recorded again),
and unit-step loops of every trip count around the fast copy's thresholds."""

import builtins

from helpers import check, define

import jit as jit_module
from jit import jit


def nest(n, m):
    total = 0
    for i in range(n):
        for j in range(m):
            total += (i ^ j) & 7
    return total


def stepped(n, step):
    total = 0
    for j in range(0, n, step):
        total += j & 7
    return total


def counted(n):
    total = 0
    for j in range(n):
        total += j & 7
    return total


def _uops(jitted):
    return jit_module.dump(jitted, "uops")


def test_a_unit_step_is_a_constant_guarded_at_the_entry():
    jitted = check(nest, (3, 5), (40, 70), (10, 0), (50, 300), native=True)
    listing = _uops(jitted)
    assert "_GUARD_UNIT_STEP" in listing and "(hoisted to the entry)" in listing
    for line in listing.splitlines():
        if "_GUARD_NOT_EXHAUSTED_RANGE" in line or "_ITER_NEXT_RANGE (" in line:
            assert ", 1, target=" in line, line  # (the constant step, not the slot)


def test_a_unit_step_loop_ends_where_its_range_does():
    # every trip count around the fast copy's thresholds (warm-up, cheap trips, vector width), each entry's
    # count of native iterations the range's own
    sizes = [0, 1, 3, 4, 5, 11, 12, 13, 31, 32, 33, 36, 37, 63, 64, 65, 1000, 5000]
    jitted = check(counted, *sizes, native=True)
    assert jit_module.stats(jitted)["native_iterations"] > 5000


def test_a_step_argument_stays_a_value():
    jitted = check(stepped, (100, 1), (1000, 1), (1000, 3), (1000, -2), (-1000, -7), (1000, 1), native=True)
    assert "_GUARD_UNIT_STEP" not in _uops(jitted)


def test_range_rebound_to_another_step_invalidates_the_tree():
    source = "def loop(n):\n    total = 0\n    for j in range(n):\n        total += j * 3\n    return total\n"
    namespace: dict = {}
    plain = define(source, "loop", namespace)
    jitted = jit(plain)
    for n in (10, 500, 2000):
        assert jitted(n) == plain(n)
    assert "_GUARD_UNIT_STEP" in _uops(jitted)
    namespace["range"] = lambda stop: builtins.range(0, stop, 2)
    for n in (10, 500, 2000, 2001, 3000, 3000, 3000):
        assert jitted(n) == plain(n) == sum(j * 3 for j in builtins.range(0, n, 2))
    stats = jit_module.stats(jitted)
    assert stats["invalidated_trees"] >= 1 and stats["native_iterations"] > 0, stats
    del namespace["range"]
    for n in (10, 500, 2000):
        assert jitted(n) == plain(n) == sum(j * 3 for j in range(n))
