"""dict lookups with exact str keys follow CPython's probe sequence in place, in combined tables of str keys
(``codegen.abi.probe_dict``: checked on live dicts at import), and ask PyDict_GetItem otherwise: a split table
(an instance's ``__dict__``), a table with other keys, a hash not computed yet, an equal key that is another
object. Differential against CPython, native through jit.stats."""

from __future__ import annotations

import sys

import pytest
from helpers import check

import jit
from codegen import abi


def lookups(table, keys):
    total = 0.0
    found = 0
    for k in keys:
        if k in table:
            found += 1
        total += table.get(k, -1)
    return total, found


def counts_of(words, counts):
    for w in words:
        counts[w] = counts.get(w, 0) + 1
    return counts


class Thing:
    def __init__(self):
        self.alpha = 1
        self.beta = 2.5


def test_the_probe_is_checked_on_3_11():
    if sys.version_info[:2] == (3, 11) and not abi.FREE_THREADED:
        assert abi.DICT_PROBE_OK


@pytest.mark.parametrize("size", [1, 5, 120, 300, 5000, 70000])
def test_tables_of_every_index_width(size):
    table = {f"key{k}": k * 0.5 for k in range(size)}
    keys = [f"key{k}" for k in range(0, size, max(1, size // 200))] + ["absent", "key-1", f"key{size}"]
    check(lookups, (table, keys), native=True)


def test_deleted_entries_are_stepped_over():
    table = {f"key{k}": k for k in range(400)}
    for k in range(0, 400, 3):
        del table[f"key{k}"]
    keys = [f"key{k}" for k in range(400)]
    check(lookups, (table, keys), native=True)


def test_equal_keys_that_are_other_objects():
    """Keys built at run time (not the dict's own objects) are equal, not identical: PyDict_GetItem finds them."""
    table = {"".join(["wo", "rd", str(k)]): k for k in range(50)}
    keys = ["".join(["wo", "rd", str(k % 60)]) for k in range(300)]  # (hashes not computed yet, too)
    check(lookups, (table, keys), native=True)
    check(counts_of, (keys, dict(table)), native=True)


def test_split_and_general_tables():
    check(lookups, (Thing().__dict__, ["alpha", "beta", "gamma"] * 30), native=True)
    check(lookups, ({1: 2.0, "alpha": 3, (1, 2): 4}, ["alpha", "beta"] * 30), native=True)


def test_a_dict_growing_while_counted():
    """Stores resize the table while the loop runs: every lookup reads the current one."""
    words = [f"w{k % 997}" for k in range(20000)]
    check(counts_of, (words, {}), (words, {"w5": 10**6}), native=True)


def test_lookups_run_natively_without_exits():
    f = jit.jit(threshold=2, side_exit_threshold=2)(lookups)
    table = {f"key{k}": float(k) for k in range(1000)}
    keys = list(table) * 3
    assert f(table, keys) == lookups(table, keys)
    before = jit.stats(f)["exits_to_interpreter"]
    assert f(table, keys) == lookups(table, keys)
    assert jit.stats(f)["exits_to_interpreter"] - before == 1  # (the loop's end)
