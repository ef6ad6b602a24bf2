"""Hand-offs that end in an exception (``runtime.errors.unwind_handoff``, ``LoopRuntime.raised``): what the user
sees is CPython's (the traceback and its lines, chaining, ``finally`` blocks, ``sys.exc_info()``, the locals a
handler or a post-mortem debugger sees, nothing of tracejit's left on the exception), whether native code left to
the interpreter, which raised, or raised itself; and the policy of entries that pay counts such hand-offs, each
exception as ``EXCEPTION_ENTRIES`` native entries more, so that a loop whose exceptions cost more than its native
iterations save goes back to CPython while one that raises rarely stays native (pinned through ``jit.stats``)."""

from __future__ import annotations

import sys
import traceback

import pytest
from helpers import define

from jit import jit
from jit.api import state_of
from runtime import errors
from runtime.loop_driver import EXCEPTION_ENTRIES, FIRST_BACKOFF, PAY_WINDOW, CodeHooks, LoopRuntime

SOURCE = """
import sys

def setitem_rows(rows):
    n = 0
    for r in rows:
        r[0] = n
        n += 1
    return n

def parse_all(texts):
    s = 0
    for t in texts:
        s += int(t)
    return s

def handled(rows, log):
    total = 0
    try:
        for r in rows:
            total += r[0]
    except TypeError as e:
        log.append((type(e).__name__, str(e), total, sys.exc_info()[0].__name__, sys.exc_info()[1] is e))
        raise KeyError(total) from e
    finally:
        log.append(("finally", total, sys.exc_info()[0]))
    return total

def context(rows, log):
    try:
        for r in rows:
            r[0] = 1
    except TypeError:
        log.append(sys.exc_info()[0].__name__)
        raise ValueError("again")
    return len(rows)

def gen(n):
    for i in range(n):
        if i == n - 1:
            raise ValueError(f"stop at {i}")
        yield i

def consume(n):
    total = 0
    for v in gen(n):
        total += v
    return total

def first_bad(rows):
    try:
        for i, row in enumerate(rows):
            if row < 0:
                raise LookupError(f"row {i} is negative: {row}")
        return -1
    except LookupError as e:
        return str(e), i, row
"""


def outcome(func, *args):
    """What a caller sees of a call: its value, or its exception as CPython formats it (chained ones too),
    with the exception's attributes and __dict__ (tracejit must leave nothing there)."""
    try:
        return "value", func(*args)
    except Exception as exc:  # noqa: BLE001
        chain = []
        link: BaseException | None = exc
        while link is not None:
            # (the mark clean_traceback leaves on exceptions that crossed a jitted call is left out: not this
            # module's; the hand-off's note must be gone)
            attributes = {k: v for k, v in vars(link).items() if k != "__tracejit_cleaned_from__"}
            chain.append((type(link).__name__, str(link), attributes, link.__suppress_context__))
            link = link.__cause__ or link.__context__
        return "raised", "".join(traceback.format_exception(exc)), chain


def tb_lines(func, *args):
    """(co_name, tb_lineno, tb_lasti's line) of every traceback entry, as a debugger walks them."""
    try:
        func(*args)
    except Exception as exc:  # noqa: BLE001
        out = []
        tb = exc.__traceback__
        while tb is not None:
            out.append((tb.tb_frame.f_code.co_name, tb.tb_lineno))
            tb = tb.tb_next
        return out
    raise AssertionError("no exception")


def post_mortem_locals(func, *args):
    """The locals of func's own frame in the traceback (as pdb.pm() shows them), tracejit's hidden ones left out."""
    try:
        func(*args)
    except Exception as exc:  # noqa: BLE001
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_name != func.__name__:
            tb = tb.tb_next
        assert tb is not None
        return {k: v for k, v in tb.tb_frame.f_locals.items() if not k.startswith("_tj")}
    raise AssertionError("no exception")


CALLS = {
    "setitem_rows": lambda: [([[0]] * 40 + [(0,)],), ([[0]] * 40,), ([[0]] * 3 + [None],)],
    "parse_all": lambda: [([*map(str, range(40)), "x1"],), ([*map(str, range(40))],), (["1", " 2 ", "3.5"],)],
    "handled": lambda: [([[1]] * 40 + [None], []), ([[1]] * 40, [])],
    "context": lambda: [([[0]] * 40 + [(0,)], []), ([[0]] * 40, [])],
    "consume": lambda: [(40,), (3,)],
    "first_bad": lambda: [([*range(40), -1, 5],), ([*range(40)],)],
}


@pytest.mark.parametrize("min_native_iterations", [0, 192], ids=["always-native", "pay-policy"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_what_the_user_sees_is_cpythons(name, min_native_iterations):
    """Called again and again (counted, handed over, native; under the policy, also given back to CPython): the
    outcome, the traceback entries, the arguments as the call left them (the log a handler and a finally wrote)
    and the locals a debugger sees are CPython's at every call."""
    func = define(SOURCE, name)
    jitted = jit(threshold=2, side_exit_threshold=2, min_native_iterations=min_native_iterations)(func)
    for _ in range(3 * PAY_WINDOW):
        for i, (plain_args, jit_args) in enumerate(zip(CALLS[name](), CALLS[name]())):
            expected = outcome(func, *plain_args)
            assert outcome(jitted, *jit_args) == expected
            assert jit_args == plain_args  # (the logs: what the handler and the finally block saw)
            if expected[0] == "raised":
                assert tb_lines(jitted, *CALLS[name]()[i]) == tb_lines(func, *CALLS[name]()[i])
                assert post_mortem_locals(jitted, *CALLS[name]()[i]) == post_mortem_locals(func, *CALLS[name]()[i])
    assert jit.stats(jitted)["native_entries"] > 0


def test_the_driver_notes_its_state_and_the_handler_takes_it_off():
    """The loop driver notes (its frame, its runtime, the tier-1 frame) on the exception as it leaves; the
    instrumented frame's handler uses it instead of reading the driver frame's f_locals, and takes it off, so no
    caller sees it; without the note (a handler deeper down that did not run), f_locals gives the same."""
    func = define(SOURCE, "setitem_rows")
    jitted = jit(threshold=2, side_exit_threshold=2, min_native_iterations=0)(func)
    rows = [[0]] * 40 + [(0,)]
    for _ in range(4):
        with pytest.raises(TypeError):
            jitted(rows)
    seen = []
    original = CodeHooks.unwound

    def spy(exc):
        note = exc.__dict__.get(errors.HANDOFF_NOTE)
        driver = exc.__traceback__.tb_next.tb_frame
        seen.append((note is not None and note[0] is driver and isinstance(note[1], LoopRuntime), exc))
        # the same exception as the handler got it, without the note: what the f_locals path makes of it
        tb = exc.__traceback__
        bare = type(exc)(*exc.args).with_traceback(tb)
        without = errors.unwind_handoff(bare)
        with_note = original(exc)
        assert without == with_note
        assert [(t.tb_frame, t.tb_lasti, t.tb_lineno) for t in _entries(bare.__traceback__)] == [
            (t.tb_frame, t.tb_lasti, t.tb_lineno) for t in _entries(exc.__traceback__)
        ]
        return with_note

    CodeHooks.unwound = staticmethod(spy)
    try:
        with pytest.raises(TypeError) as info:
            jitted(rows)
    finally:
        CodeHooks.unwound = staticmethod(original)
    assert seen and all(used for used, _ in seen)
    assert vars(info.value) == {}
    assert post_mortem_locals(jitted, rows) == post_mortem_locals(func, rows)


def _entries(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


# --- the policy of entries that pay ----------------------------------------------------------------------------


def test_a_loop_that_raises_after_a_few_hundred_iterations_goes_back_to_cpython():
    """300 iterations of ``r[0] = n`` an entry would pay (min_native_iterations=192 for this body) were it not
    for the exception ending each hand-off, which costs more than those iterations save."""
    func = define(SOURCE, "setitem_rows")
    jitted = jit(threshold=2, side_exit_threshold=2)(func)
    rows = [[0]] * 300 + [(0,)]
    for _ in range(3 * PAY_WINDOW):
        with pytest.raises(TypeError):
            jitted(rows)
        if jit.stats(jitted)["not_paying_loops"]:
            break
    stats = jit.stats(jitted)
    assert stats["not_paying_loops"] == [func.__code__.co_firstlineno + 2]
    # (each failed recording of a side trace from the exit, which the exception aborts, starts a new window)
    assert stats["raising_handoffs"] >= PAY_WINDOW
    entries = stats["native_entries"]
    with pytest.raises(TypeError):
        jitted(rows)
    assert jit.stats(jitted)["native_entries"] == entries  # CPython runs it now
    assert f"hand-off(s) ended in an exception, each counted as {EXCEPTION_ENTRIES} entries more" in jit.explain(jitted)


def test_the_same_loop_without_exceptions_keeps_being_entered():
    func = define(SOURCE, "setitem_rows")
    jitted = jit(threshold=2, side_exit_threshold=2)(func)
    rows = [[0]] * 301
    for _ in range(3 * PAY_WINDOW):
        jitted(rows)
    stats = jit.stats(jitted)
    assert stats["not_paying_loops"] == [] and stats["raising_handoffs"] == 0
    entries = stats["native_entries"]
    jitted(rows)
    assert jit.stats(jitted)["native_entries"] == entries + 1


def test_a_loop_that_raises_rarely_stays_native():
    """An exception after 20000 iterations an entry: the iterations pay for it."""
    func = define(SOURCE, "setitem_rows")
    jitted = jit(threshold=2, side_exit_threshold=2)(func)
    rows = [[0]] * 20000 + [(0,)]
    for _ in range(3 * PAY_WINDOW):
        with pytest.raises(TypeError):
            jitted(rows)
    stats = jit.stats(jitted)
    assert stats["not_paying_loops"] == []
    assert stats["raising_handoffs"] >= 2 * PAY_WINDOW
    entries = stats["native_entries"]
    with pytest.raises(TypeError):
        jitted(rows)
    assert jit.stats(jitted)["native_entries"] > entries


def test_an_exception_counts_as_exception_entries_more():
    """The window's figure is the iterations over the entries, each exception adding EXCEPTION_ENTRIES: a loop
    raising at every hand-off after k iterations is judged at k / (1 + EXCEPTION_ENTRIES) per entry."""
    func = define(SOURCE, "setitem_rows")
    jitted = jit(threshold=2, side_exit_threshold=2, min_native_iterations=10**6)(func)
    k = 500
    rows = [[0]] * k + [(0,)]
    for _ in range(3 * PAY_WINDOW):
        with pytest.raises(TypeError):
            jitted(rows)
        if jit.stats(jitted)["not_paying_loops"]:
            break
    runtime = state_of(jitted).loop_runtime
    (per_entry,) = [p for p in runtime.not_paying if p is not None]
    # (the exit's pc is the store: k iterations, and the header's visits: one more per entry)
    assert per_entry == pytest.approx((k + 1) / (1 + EXCEPTION_ENTRIES), rel=0.01)


def test_the_option_off_keeps_entering_loops_that_raise():
    func = define(SOURCE, "setitem_rows")
    jitted = jit(threshold=2, side_exit_threshold=2, min_native_iterations=0)(func)
    rows = [[0]] * 30 + [(0,)]
    for _ in range(3 * PAY_WINDOW):
        with pytest.raises(TypeError):
            jitted(rows)
    stats = jit.stats(jitted)
    assert stats["not_paying_loops"] == [] and stats["raising_handoffs"] == 0
    entries = stats["native_entries"]
    with pytest.raises(TypeError):
        jitted(rows)
    assert jit.stats(jitted)["native_entries"] == entries + 1


def test_debug_flag_is_read_live(monkeypatch):
    """``environment.debug`` reads the variable at every call (a cheap lookup when it is unset)."""
    from jit import environment

    monkeypatch.delenv("TRACEJIT_DEBUG", raising=False)
    assert environment.debug() is False
    monkeypatch.setenv("TRACEJIT_DEBUG", "1")
    assert environment.debug() is True
    monkeypatch.setenv("TRACEJIT_DEBUG", "0")
    assert environment.debug() is False
    monkeypatch.delenv("TRACEJIT_DEBUG")
    assert environment.debug() is False


def test_debug_keeps_tracejits_frames(monkeypatch):
    func = define(SOURCE, "setitem_rows")
    jitted = jit(threshold=2, side_exit_threshold=2, min_native_iterations=0)(func)
    rows = [[0]] * 40 + [(0,)]
    for _ in range(4):
        with pytest.raises(TypeError):
            jitted(rows)
    monkeypatch.setenv("TRACEJIT_DEBUG", "1")
    names = [name for name, _ in tb_lines(jitted, rows)]
    assert "loop" in names  # the loop driver's frame, kept
    monkeypatch.delenv("TRACEJIT_DEBUG")
    assert "loop" not in [name for name, _ in tb_lines(jitted, rows)]
    assert sys.exc_info() == (None, None, None)


def test_a_window_that_pays_despite_exceptions_keeps_the_back_off():
    """How many of a window's hand-offs raise varies: a loop near the line would alternate between windows that
    pay and windows that do not, each paying one putting it back at the shortest back-off, and every return to
    native code after CPython ran the loop costs more than one in a row. A window with exceptions that pays keeps
    the back-off (the loop stays native while windows pay); one without exceptions resets it, as before."""
    func = define(SOURCE, "setitem_rows")
    jitted = jit(threshold=2, side_exit_threshold=0)(func)
    for _ in range(3 * PAY_WINDOW):
        jitted([[0]] * 300)
    state = state_of(jitted)
    runtime, monitor = state.loop_runtime, state.monitor
    assert jit.stats(jitted)["not_paying_loops"] == []
    runtime.windows[0].reset()
    n = 3 * int(runtime.min_per_entry[0])  # (1 exception in a window pays, 4 do not)

    def window(raising):
        for i in range(PAY_WINDOW):
            if i < raising:
                runtime.count_raised(0, 1, n, False)
            else:
                runtime.judge(0, monitor, 1, n, False)

    window(4)
    assert runtime.not_paying[0] is not None and runtime.counters[0] == -FIRST_BACKOFF
    window(1)
    assert runtime.not_paying[0] is None and runtime.pay_backoff[0] == 2 * FIRST_BACKOFF
    window(4)
    assert runtime.not_paying[0] is not None and runtime.counters[0] == -2 * FIRST_BACKOFF
    window(0)
    assert runtime.not_paying[0] is None and runtime.pay_backoff[0] == FIRST_BACKOFF
