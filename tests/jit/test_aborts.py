"""Abort reasons are declared once (jit/aborts.py): each has a stable code and a message template, and
``jit.stats(f)`` counts aborts both by message (``aborts``) and by code (``aborts_by_code``)."""

import re
import string
import textwrap
from pathlib import Path

import pytest
from helpers import define

from jit import jit
from jit.aborts import Abort, Reason
from jit.api import state_of
from jit.statistics import stats_of


def _fields(template):
    return [field for _, field, _, _ in string.Formatter().parse(template) if field is not None]


@pytest.mark.parametrize("reason", list(Reason), ids=lambda r: r.code)
def test_every_template_formats_with_its_own_parameters(reason):
    params = {name.split("!")[0]: f"<{name}>" for name in _fields(reason.template)}
    message = reason.message(**params)
    for value in params.values():
        assert value in message
    assert "{" not in message


@pytest.mark.parametrize("reason", list(Reason), ids=lambda r: r.code)
def test_a_template_with_a_missing_parameter_does_not_format(reason):
    if not _fields(reason.template):
        assert reason.message() == reason.template
        return
    with pytest.raises(KeyError):
        reason.message()


def test_codes_are_the_member_names_and_unique():
    codes = [reason.code for reason in Reason]
    assert codes == [reason.name for reason in Reason]
    assert len(set(codes)) == len(codes)
    assert len({reason.template for reason in Reason}) == len(codes)


def test_only_bad_timing_retries():
    """The loop ending (or the function returning, or an exception leaving the loop: the front end compiles no
    `try`) in the very iteration being recorded says nothing about the loop; a method bound and not called right
    away is bound apart by the next recording, a dict.get of a key native lookups do not take is a generic call
    in the next; an inner loop with no tree yet records first, or is being recorded or compiled meanwhile; an
    unrolled inner loop whose bound the outer loop changes is called as a tree in the next; a helper storing a
    global the trace pinned is inlined in the next, which reads that global at each use; a class changed while the
    loop was recorded is not specialized on by the next; a global guarded to hold a number that the loop stores
    another value into is not guarded so by the next."""
    assert [reason for reason in Reason if reason.retry] == [
        Reason.LOOP_ENDED,
        Reason.RETURN_IN_LOOP,
        Reason.EXCEPTION_RAISED,
        Reason.INNER_FIRST,
        Reason.INNER_BUSY,
        Reason.INNER_COMPILING,
        Reason.UNROLLED_BOUND_CHANGES,
        Reason.RANGE_STEP_ZERO,
        Reason.GLOBAL_NOT_NUMBER,
        Reason.DICT_GET_KEY,
        Reason.METHOD_NOT_CALLED,
        Reason.CLASS_CHANGED,
        Reason.RAISES,
        Reason.INLINED_STORES_PINNED_GLOBAL,
        Reason.MATH_RAISES,
    ]


def test_abort_carries_reason_parameters_and_message():
    abort = Abort(Reason.TOO_LONG, limit=12)
    assert abort.reason is Reason.TOO_LONG
    assert abort.params == {"limit": 12}
    assert str(abort) == "trace longer than max_trace_length (12 uops)"
    assert not abort.retry
    assert Abort(Reason.LOOP_ENDED).retry


IDENTITY_OF_INTS = """
def f(n):
    total = 0
    for i in range(n):
        total += i is n  # (identity of two unboxed ints: not compiled)
    return total
"""


def test_stats_count_aborts_by_code():
    plain = define(textwrap.dedent(IDENTITY_OF_INTS), "f")
    jitted = jit(threshold=2, side_exit_threshold=2, max_aborts=3, interpreter=True)(plain)
    for _ in range(10):
        assert jitted(200) == plain(200)
    stats = jit.stats(jitted)
    assert stats["aborts_total"] == 3
    assert stats["aborts_by_code"] == {"IDENTITY": 3}
    assert sum(stats["aborts_by_code"].values()) == stats["aborts_total"] == sum(stats["aborts"].values())
    assert all("identity (is) of int values" in message for message in stats["aborts"])


def test_stats_by_code_of_several_reasons():
    source = """
    G = 0
    def g(n, items):
        global G
        total = 0
        for i in range(n):
            total += i is n
        for x in items:
            G = [x]
            del G
            total += x
        return total
    """
    plain = define(textwrap.dedent(source), "g")
    jitted = jit(threshold=2, side_exit_threshold=2, max_aborts=2, interpreter=True)(plain)
    items = list(range(100))
    for _ in range(10):  # deleting a global holding a list is not compiled
        assert jitted(50, items) == plain(50, items)
    by_code = jit.stats(jitted)["aborts_by_code"]
    assert by_code == {"IDENTITY": 2, "GLOBAL_DELETED": 2}, by_code


def test_stats_of_a_function_that_never_aborted_has_no_codes():
    jitted = jit(threshold=2)(
        define("def h(n):\n    t = 0\n    for i in range(n):\n        t += i\n    return t\n", "h")
    )
    assert jitted(100) == sum(range(100))
    stats = stats_of(state_of(jitted))
    assert stats["aborts_by_code"] == {} and stats["aborts"] == {}


def test_stats_states_are_plain_strings():
    # the states are enums inside tracejit; jit.stats shows their text, as before
    jitted = jit(threshold=2)(
        define("def h(n):\n    t = 0\n    for i in range(n):\n        t += i\n    return t\n", "h")
    )
    assert jitted(100) == sum(range(100))
    stats = jit.stats(jitted)
    assert type(stats["mode"]) is str and stats["mode"] == "tier1"
    (tree,) = stats["trees"]
    (trace,) = tree["traces"]
    assert type(trace["kind"]) is str and trace["kind"] == "root"
    assert type(trace["ends_with"]) is str and trace["ends_with"] == "loop"


_README = Path(__file__).resolve().parents[2] / "README.md"
_TABLE_TITLE = "### Why a loop may still run as CPython: the abort reasons"
_CATEGORIES = {"limit", "retry", "exactness", "NumPy", "not compiled yet", "exception", "fallback", "bug"}


def _readme_reason_rows():
    """The README's table of abort reasons: {code: (message, category)}, from the rows of its section."""
    text = _README.read_text(encoding="utf-8")
    assert text.count(_TABLE_TITLE) == 1
    section = text.split(_TABLE_TITLE, 1)[1].split("\n#", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = re.match(r"\| `([A-Z0-9_]+)` \| (.+?) \| ([^|]+?) \| .+ \|$", line)
        if match:
            code, message, category = match.groups()
            assert code not in rows, f"{code} has two rows"
            rows[code] = (message.strip().strip("`").strip(), category)
    return rows


def test_the_readme_documents_every_abort_reason_and_no_other():
    """Every Reason has one row in the README's table (its code, its message, a category), and every row names a
    Reason: the documentation of why a loop may still run as CPython cannot drift from jit/aborts.py."""
    rows = _readme_reason_rows()
    codes = {reason.code for reason in Reason}
    assert not codes - set(rows), f"abort reasons missing from the README's table: {sorted(codes - set(rows))}"
    assert not set(rows) - codes, f"the README's table names reasons that do not exist: {sorted(set(rows) - codes)}"
    for reason in Reason:
        message, category = rows[reason.code]
        assert message == reason.template, (reason.code, message)
        assert category in _CATEGORIES, (reason.code, category)
        assert (category == "retry") == reason.retry, (reason.code, category)
