"""`del` of a module global the function declares `global`, in a hot loop (``_DELETE_GLOBAL``): deleted from the
module's dict natively where it holds a number or None (freeing it runs no Python code); a missing name leaves
for the interpreter, which raises CPython's NameError at that line; a global holding anything else aborts
(GLOBAL_DELETED: its freeing could run Python code). Each case checked against CPython (results, the module's
globals afterwards, exceptions) and asserted native through jit.stats."""

import sys

import pytest
from helpers import check

import jit as jit_module
from jit import jit
from jit.aborts import Reason

G = 0
H = 1.5
GONE = None


def _no_aborts(jitted):
    for f in (jitted, jitted.cpython_baseline):
        stats = jit_module.stats(f)
        assert not [code for code in stats["aborts_by_code"] if not Reason[code].retry], stats["aborts"]
        assert stats["native_entries"] > 0 and stats["native_iterations"] > 0


def store_read_delete(n):
    global G
    t = 0
    for i in range(n):
        G = i * 3
        t += G
        del G
        if i % 7 == 0:
            G = None
            del G
    G = 0  # noqa: F841  (ruff does not follow `global` through `del`)
    return t


def deletes_then_reads_the_builtin(n):
    global len
    t = 0
    for i in range(n):
        len = i  # (a global that hides the builtin, deleted: the builtin is seen again)
        t += len
        del len
        t += len([i, i])  # noqa: F821  (the builtin, once the global is deleted)
    return t


def test_store_and_delete_in_a_loop_is_native():
    jitted = check(store_read_delete, 1, 300, native=True)
    _no_aborts(jitted)
    assert G == 0
    jitted = check(deletes_then_reads_the_builtin, 300, native=True)
    assert "len" not in globals()


def deletes_once(n, k):
    global H
    t = 0.0
    for i in range(n):
        if i == k:
            del H  # (a float: deleted natively; the next iteration that deletes it raises NameError)
        t += i
    return t


def test_deleting_a_missing_global_raises_cpythons_name_error():
    global H
    for k, n in ((250, 300), (-1, 300)):
        for variant in (jit(threshold=2, side_exit_threshold=2), jit(threshold=2, interpreter=True)):
            H = 1.5
            f = variant(deletes_once)
            assert f(n, k) == sum(range(n))
            assert ("H" in globals()) == (k < 0)
            if k >= 0:
                with pytest.raises(NameError, match="name 'H' is not defined"):
                    f(n, 5)
            assert jit_module.stats(f)["native_iterations"] >= 200
    H = 1.5


def sets_gone(i):  # (stores a global: never inlined, called through the generic path)
    global GONE
    GONE = [i]


def deletes_a_list(n):
    global GONE
    t = 0
    for i in range(n):
        sets_gone(i)
        t += len(GONE)
        del GONE  # (a list: freeing it could run Python code, not compiled)
    GONE = None  # noqa: F841  (ruff does not follow `global` through `del`)
    return t


def test_deleting_a_global_holding_an_object_aborts_with_its_reason():
    jitted = check(deletes_a_list, 300)
    stats = jit_module.stats(jitted)
    assert stats["aborts_by_code"].get("GLOBAL_DELETED", 0) >= 1, stats["aborts"]
    assert "del of the global GONE holding a list" in jit_module.explain(jitted)


BIG = 10**30 + 7


def deletes_big(n):
    global G
    t = 0
    for i in range(n):
        G = BIG  # (that very int object: the dict takes a reference, the delete drops it)
        t += G > i
        del G
        G = i
        del G
    G = 0  # noqa: F841  (ruff does not follow `global` through `del`)
    return t


def test_the_deleted_objects_references_are_exact():
    f = jit(threshold=2, min_native_iterations=0)(deletes_big)
    f(1000)
    before = sys.getrefcount(BIG)
    assert f(100_000) == deletes_big(100_000)
    assert sys.getrefcount(BIG) == before
    stats = jit_module.stats(f)
    assert stats["native_iterations"] >= 100_000
    assert not [code for code in stats["aborts_by_code"] if not Reason[code].retry], stats["aborts"]
