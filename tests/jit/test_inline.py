"""Calls traced through (issue 8 item 3, jit.inline): calls of small Python functions from a hot loop are
recorded into the trace, and every result, exception and mutation is CPython's."""

from __future__ import annotations

import sys
import traceback
import types

import pytest
from helpers import check, define

import jit as jit_module
from jit import jit

HELPERS = """
LIMIT = 10

def dist(x, y):
    return (x * x + y * y) ** 0.5

def h(p, q):
    return p - q if p > q else q - p

def scale(v, k=3):
    return v * k

def clamp(v):
    return LIMIT if v > LIMIT else v

def twice(v):
    return h(v, 1) + h(1, v)

def inverse(x):
    return 1 / x

def push(acc, v):
    acc.append(v)
    return v

def push_two(acc, v):
    acc.append(v)
    acc.append(-v)
    return v

def put_then_add(row, i, v):
    row[i] = v
    return v + 1

def push_then_check(acc, v, limit):
    acc.append(v)
    if v == limit:
        raise ValueError(v)
    return v

def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)

def first(row):
    return row[0]

def grid(n):
    total = 0.0
    for i in range(n):
        for j in range(40):
            total += dist(i * 0.5, j * 0.25)
    return total

def mixed(n):
    total = 0
    for i in range(n):
        total += h(i, 37) + scale(i) + scale(i, 2) + clamp(i) + twice(i)
    return total

def ints_and_floats(values):
    total = 0.0
    for v in values:
        total += scale(v) + h(v, 2)
    return total

def inverses(values):
    total = 0.0
    for v in values:
        total += inverse(v)
    return total

def pushes(n):
    acc = []
    total = 0
    for i in range(n):
        total += push(acc, i)
    return total, acc

def pushes_two(n):
    acc = []
    total = 0
    for i in range(n):
        total += push_two(acc, i)
    return total, acc

def puts(n):
    row = [0] * 10
    total = 0
    for i in range(n):
        total += put_then_add(row, i % 10, i)
    return total, row

def pushes_checked(n, limit, acc):
    total = 0
    for i in range(n):
        total += push_then_check(acc, i, limit)
    return total

def pushes_object(n, item, acc):
    for i in range(n):
        push(acc, item)
    return len(acc)

def factorials(n):
    total = 0
    for i in range(n):
        total += fact(i % 8)
    return total

def firsts(rows):
    total = 0
    for row in rows:
        total += first(row)
    return total
"""


def helpers(name, namespace=None):
    return define(HELPERS, name, namespace)


@pytest.mark.parametrize(
    "name, calls",
    [
        ("grid", [(30,), (0,), (5,)]),
        ("mixed", [(300,), (50,)]),
        ("ints_and_floats", [([1, 2.5, 3, -4.0, 5] * 20,), ([7] * 50,), ([0.5] * 50 + [1] * 50,)]),
        ("firsts", [([[k, 1] for k in range(100)],), ([[1.5]] * 40,)]),
    ],
)
def test_inlined_calls_give_cpythons_results_natively(name, calls):
    jitted = check(helpers(name), *calls, native=True)
    aborts = jit_module.stats(jitted)["aborts_by_code"]
    assert not {"CALL", "NOT_INLINED"} & set(aborts), aborts


def test_explain_names_the_inlined_calls():
    f = jit(threshold=2)(helpers("mixed"))
    f(300)
    text = jit_module.explain(f)
    assert "with the calls of clamp, h, scale, twice inlined" in text, text


COUNTER_SOURCE = """
COUNTER = 0

def bump(k):
    global COUNTER
    for _ in range(k):
        COUNTER += 1

def count_up(n):
    global COUNTER
    COUNTER = 0
    for i in range(n):
        bump(2)
    return COUNTER
"""


def test_explain_names_the_calls_left_generic_and_why():
    count_up = define(COUNTER_SOURCE, "count_up", {})
    f = jit(threshold=2)(count_up)
    assert f(300) == 600
    text = jit_module.explain(f)
    assert "calls made through the C-API, not inlined: bump (line " in text, text
    assert "it has a loop" in text, text


def test_a_helper_in_an_inner_loop_costs_one_native_entry():
    f = jit(helpers("grid"))
    for _ in range(3):
        f(40)
    before = jit_module.stats(f)["native_entries"]
    assert f(40) == helpers("grid")(40)
    assert jit_module.stats(f)["native_entries"] - before == 1


def test_an_exception_in_an_inlined_callee_is_cpythons():
    """The guard before the division leaves at the caller's CALL, which makes the call for real: the
    traceback goes through the helper's own line."""
    plain = helpers("inverses")
    values = [1.0, 2.0, 4.0] * 30 + [0.0]
    check(plain, (values,), ([0.5] * 50,), native=True)
    f = jit(threshold=2, side_exit_threshold=2)(helpers("inverses"))
    f([0.5] * 50)
    with pytest.raises(ZeroDivisionError) as info:
        f(values)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert frames[-1].name == "inverse" and frames[-1].line == "return 1 / x"
    assert frames[-2].name == "inverses" and frames[-2].line == "total += inverse(v)"


def test_a_callee_whose_one_effect_comes_last_is_inlined():
    """push changes a list once, and nothing in it can leave after the append: inlined (an exit before the
    append makes the call again, which is exact: nothing has happened yet)."""
    jitted = check(helpers("pushes"), (100,), (3,), native=True)
    stats = jit_module.stats(jitted)
    assert not stats["aborts_by_code"], stats["aborts_by_code"]
    uops = jit_module.dump(jitted, "uops")
    assert "_CALL_LIST_APPEND" in uops and "_CALL_GENERIC" not in uops, uops


def test_a_callee_appending_twice_is_inlined():
    """Both appends made at the call's return (jit.inline), after its last exit."""
    jitted = check(helpers("pushes_two"), (100,), (3,), native=True)
    uops = jit_module.dump(jitted, "uops")
    assert uops.count("_CALL_LIST_APPEND_CHECKED") == 2 and "_CALL_GENERIC" not in uops, uops


def test_a_callee_that_could_leave_after_its_effect_is_called_once():
    """put_then_add's add may leave (past 2**63) after the list store changed the list: an exit there would
    store twice. Native code calls it (the generic path), once per iteration."""
    jitted = check(helpers("puts"), (100,), (3,), native=True)
    stats = jit_module.stats(jitted)
    assert not stats["aborts_by_code"], stats["aborts_by_code"]
    uops = jit_module.dump(jitted, "uops")
    assert "_CALL_GENERIC" in uops and "_STORE_SUBSCR_LIST" not in uops, uops


def test_a_callee_raising_after_its_effect_while_recorded(monkeypatch):
    """The recording stops following push_then_check after its append (the test after it may leave), and its dry
    run goes on to the end: where it raises there, the caller's CALL raises that exception, and the list holds
    the item once. Every limit around the recorded iteration, against CPython: list, result, exception and
    traceback."""
    from jit import inline as inline_module

    raised = []

    class Raises(inline_module.Raises):
        def __init__(self, error):
            raised.append(error)
            super().__init__(error)

    monkeypatch.setattr(inline_module, "Raises", Raises)
    namespace: dict = {}
    plain = helpers("pushes_checked", namespace)
    for limit in range(0, 12):
        expected_acc: list = []
        with pytest.raises(ValueError) as expected:
            plain(40, limit, expected_acc)
        acc: list = []
        f = jit(threshold=2)(helpers("pushes_checked"))
        with pytest.raises(ValueError) as info:
            f(40, limit, acc)
        assert acc == expected_acc and info.value.args == expected.value.args == (limit,)
        frames = traceback.extract_tb(info.value.__traceback__)
        assert [(frame.name, frame.line) for frame in frames[-2:]] == [
            ("pushes_checked", "total += push_then_check(acc, i, limit)"),
            ("push_then_check", "raise ValueError(v)"),
        ], frames
        assert f(40, 100, acc) == sum(range(40))
    assert raised, "no dry run raised after its append"


def test_an_inlined_append_keeps_reference_counts():
    item = object()
    acc: list = []
    before = sys.getrefcount(item)
    f = jit(threshold=2)(helpers("pushes_object"))
    assert f(100_000, item, acc) == 100_000
    assert "_CALL_LIST_APPEND" in jit_module.dump(f, "uops")
    assert jit_module.stats(f)["native_iterations"] > 99_000
    assert sys.getrefcount(item) == before + 100_000
    acc.clear()
    assert sys.getrefcount(item) == before


def test_recursion_is_not_inlined():
    jitted = check(helpers("factorials"), (100,), native=True)
    assert not jit_module.stats(jitted)["aborts_by_code"]
    assert "_CALL_GENERIC" in jit_module.dump(jitted, "uops")


def test_a_global_of_the_callee_rebound_between_calls():
    namespace: dict = {}
    f = jit(threshold=2, side_exit_threshold=2)(helpers("mixed", namespace))
    plain_namespace: dict = {}
    plain = helpers("mixed", plain_namespace)
    for limit in (10, 10, 1000, -5, 10):
        namespace["LIMIT"] = plain_namespace["LIMIT"] = limit
        assert f(200) == plain(200)
    assert jit_module.stats(f)["native_entries"] > 0


def test_code_or_defaults_of_an_inlined_function_reassigned_between_calls():
    namespace: dict = {}
    f = jit(threshold=2, side_exit_threshold=2)(helpers("mixed", namespace))
    plain_namespace: dict = {}
    plain = helpers("mixed", plain_namespace)
    assert f(200) == plain(200)
    for ns in (namespace, plain_namespace):
        ns["scale"].__defaults__ = (5,)
    assert f(200) == plain(200)
    for ns in (namespace, plain_namespace):
        ns["h"].__code__ = ns["scale"].__code__  # h(p, q) is now p * q
    assert f(200) == plain(200)
    assert jit_module.stats(f)["native_entries"] > 0


def test_a_callee_from_another_module_is_guarded_on_its_own_globals():
    module = types.ModuleType("tracejit_test_other_module")
    exec(compile("OFFSET = 1\ndef shift(v):\n    return v + OFFSET\n", "<other>", "exec"), module.__dict__)
    module.shift.__code__ = module.shift.__code__.replace(co_filename=__file__)  # (source for the front end)
    source = "def run(n):\n    total = 0\n    for i in range(n):\n        total += shift(i)\n    return total\n"
    # the caller's module has its own OFFSET, bound to the same object: only the callee's may be guarded
    caller = define(source, "run", {"shift": _source_backed_shift(module), "OFFSET": 1})
    f = jit(threshold=2, side_exit_threshold=2)(caller)
    expected = caller(100)
    assert f(100) == expected
    module.OFFSET = 7  # rebinds the callee's global, not the caller's
    assert f(100) == caller(100) != expected
    assert jit_module.stats(f)["native_entries"] > 0


def _source_backed_shift(module: types.ModuleType) -> types.FunctionType:
    """shift, defined from real source (define) but with the other module's globals."""
    made = define("def shift(v):\n    return v + OFFSET\n", "shift")
    return types.FunctionType(made.__code__, module.__dict__, "shift")


def test_a_jit_callee_is_inlined():
    namespace: dict = {}
    helper = jit(helpers("dist", namespace))
    namespace["dist"] = helper
    caller = jit(threshold=2)(helpers("grid", namespace))
    plain = helpers("grid")
    assert caller(20) == plain(20)
    stats = jit_module.stats(caller)
    assert stats["native_entries"] > 0 and not stats["aborts_by_code"].keys() & {"CALL", "NOT_INLINED"}


def test_objects_read_by_an_inlined_callee_keep_their_reference_counts():
    marker = float("1.25")  # one float object, read through every row
    rows = [[marker, k] for k in range(100)]
    f = jit(threshold=2, min_native_iterations=0)(helpers("firsts"))
    before = sys.getrefcount(marker), [sys.getrefcount(row) for row in rows[:5]]
    for _ in range(1000):
        f(rows)
    after = sys.getrefcount(marker), [sys.getrefcount(row) for row in rows[:5]]  # (outside the assert)
    assert after == before
    assert jit_module.stats(f)["native_iterations"] >= 100_000 - 1000


def test_inlining_can_be_turned_off():
    f = jit(threshold=2, max_inline_depth=0)(helpers("grid"))
    assert f(10) == helpers("grid")(10)
    assert not jit_module.stats(f)["aborts_by_code"]  # (called through the C-API instead)
    assert "_CALL_GENERIC" in jit_module.dump(f, "uops")
