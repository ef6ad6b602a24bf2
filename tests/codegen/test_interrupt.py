"""Ctrl-C while a loop runs in native code: the periodic signal check lets CPython run the SIGINT handler, the
trace leaves with the frame rebuilt, and KeyboardInterrupt propagates (or is caught) as under plain CPython.

Each test runs a script in a subprocess. The script warms its function up (the loop compiles), checks through
jit.stats that it did, prints "ready", then starts a call that would run for years; the test waits a moment
so that call is surely inside native code, then sends SIGINT. Every wait is bounded: on a timeout the child is
killed and the test fails.
"""

import os
import select
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from helpers import default_sigint

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

READY_TIMEOUT = 60.0  # compiling the warm-up (first use of LLVM in the child) can take a few seconds
EXIT_TIMEOUT = 10.0
RUN_BEFORE_SIGNAL = 0.3  # let the long call get into native code

PRELUDE = """
import sys
from jit import jit

def ready(f):
    s = jit.stats(f)
    assert s["traces_compiled"] >= 1 and s["native_entries"] >= 1, s
    if globals().get("EXPECT_UNROLLED"):  # (the inner loop recorded through: no tree called, codegen's fast copy)
        roots = [t for tree in s["trees"] for t in tree["traces"] if t["kind"] == "root"]
        assert roots and all(not t["calls"] for t in roots), s["trees"]
    if globals().get("EXPECT_JOINED"):  # (a side trace runs in one function with its loop: codegen.joined)
        assert any(t["joined"] for tree in s["trees"] for t in tree["traces"]), s["trees"]
    if globals().get("EXPECT_MERGED"):  # (its fast copy merges both ways, vectorized: jit.optimizer.merge)
        assert any(t["vectorized"] for tree in s["trees"] for t in tree["traces"] if t["kind"] == "side"), s["trees"]
    print("ready", flush=True)
"""

WHILE_COUNTER = """
@jit(threshold=2)
def spin(n, out):
    i = 0
    total = 0
    while i < n:
        total += i & 7
        i += 1
        out[0] = i
        out[1] = total
    return total
"""

FOR_RANGE_FLOAT = """
@jit(threshold=2)
def spin(n, out):
    x = 0.0
    for i in range(n):
        x = x * 0.999 + 1.0
        out[0] = i
        out[1] = x
    return x
"""

INFINITE_WHILE = """
@jit(threshold=2)
def spin(n, out):
    i = 0
    while True:
        i += 1
        out[0] = i
        if i == n:
            return i
"""

NESTED = """
@jit(threshold=2)
def spin(n, out):
    total = 0
    for i in range(n):
        for j in range(100):
            total += (i ^ j) & 3
        out[0] = i
        out[1] = total
    return total
"""

FOR_LIST = """
@jit(threshold=2)
def spin(n, out):
    data = [0.5, 1.5, 2.5] * 100
    total = 0.0
    k = 0
    while k < n:
        for x in data:
            total += x
        k += 1
        out[0] = k
        out[1] = total
    return total
"""

ALTERNATING = """
EXPECT_JOINED = True

@jit(threshold=2)
def spin(n, out):
    total = 0
    for i in range(n):
        if i & 1:
            total += 3
        else:
            total -= 1
        out[0] = i
        out[1] = total
    return total
"""

# the inner loop unrolled into the outer trace: 2 trips, so an outer iteration uses 4 of the fuel (an even step:
# the fuel at the loop's top never lands on some multiples; the visits of the inner header are checked too)
UNROLLED = """
EXPECT_UNROLLED = True

@jit(threshold=2, unroll_max_trips=4)
def spin(n, out):
    total = 0
    for i in range(n):
        for j in range(2):
            total += (i ^ j) & 3
        out[0] = i
        out[1] = total
    return total
"""

MERGED = """
EXPECT_MERGED = True

@jit(threshold=2)
def spin(n, out):
    total = 0
    for i in range(n):
        for j in range(1000):
            if j & 1:
                total += j & 255
            else:
                total -= j & 15
        out[0] = i
        out[1] = total
    return total
"""
MERGED_PER_OUTER = sum(j & 255 if j & 1 else -(j & 15) for j in range(1000))

# a while loop's counter checked once per periodic check (jit.optimizer.counters), its branch's two ways computed
# both in one block (codegen.joined: if-converted): the check still runs, and leaves at an iteration's start.
# m goes 1, 6, 2, 0, -1, then 2, 0, -1 over and over (out[1] is m before iteration out[0])
IF_CONVERTED = """
EXPECT_JOINED = True

@jit(threshold=2)
def spin(n, out):
    m = 1
    steps = 0
    while steps < n:
        out[0] = steps
        out[1] = m
        if m & 1:
            m = 2 * m + 4
        else:
            m = m // 2 - 1
        steps += 1
    return m
"""

LOOPS = {"while-counter": WHILE_COUNTER, "for-range-float": FOR_RANGE_FLOAT, "while-true": INFINITE_WHILE}
LOOPS["nested"] = NESTED
LOOPS["for-list"] = FOR_LIST
LOOPS["alternating"] = ALTERNATING
LOOPS["unrolled"] = UNROLLED
LOOPS["merged"] = MERGED
LOOPS["if-converted"] = IF_CONVERTED

# the loop never gets to the end: a billion billion iterations
UNCAUGHT = """
spin(100, [0, 0])
ready(spin)
spin(10**18, [0, 0])
print("finished", flush=True)
"""

CAUGHT = """
out = [0, 0]
spin(100, [0, 0])
ready(spin)
try:
    spin(10**18, out)
except KeyboardInterrupt:
    s = jit.stats(spin)
    print("interrupted", out[0], out[1], s["native_entries"], s["exits_to_interpreter"], s["handoff_entries"], flush=True)
    # the function still works, natively, after the interrupt
    again = [0, 0]
    print("again", spin(1000, again), again[0], flush=True)
    print("entries", jit.stats(spin)["native_entries"], flush=True)
else:
    print("finished", flush=True)
"""


def run_and_interrupt(tmp_path, source):
    """Run source as a script; once it printed "ready", send SIGINT. Returns (returncode, stdout, stderr)."""
    script = tmp_path / "spin.py"
    script.write_text(textwrap.dedent(source))
    env = {k: v for k, v in os.environ.items() if k not in ("JIT_DISABLE", "JIT_DUMP")}
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=env,
        preexec_fn=default_sigint,
    )
    try:
        lines = []
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                pytest.fail(f"the child did not print 'ready' within {READY_TIMEOUT}s: {lines}")
            readable, _, _ = select.select([proc.stdout], [], [], remaining)
            if not readable:
                continue
            line = proc.stdout.readline()
            if not line:  # the child ended before it was ready
                out, err = proc.communicate(timeout=EXIT_TIMEOUT)
                pytest.fail(f"the child ended before 'ready' (code {proc.returncode}):\n{''.join(lines)}{out}\n{err}")
            lines.append(line)
            if line.strip() == "ready":
                break
        time.sleep(RUN_BEFORE_SIGNAL)  # bounded: the long call gets into native code meanwhile
        assert proc.poll() is None, "the long call ended by itself"
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate(timeout=EXIT_TIMEOUT)
            pytest.fail(f"the child ignored SIGINT for {EXIT_TIMEOUT}s (killed)\nstdout: {out}\nstderr: {err}")
        return proc.returncode, "".join(lines) + out, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=EXIT_TIMEOUT)


@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_sigint_raises_keyboard_interrupt(tmp_path, loop):
    code, out, err = run_and_interrupt(tmp_path, PRELUDE + LOOPS[loop] + UNCAUGHT)
    assert "finished" not in out
    assert code != 0 and code != -signal.SIGSEGV, (code, err)
    assert "Traceback (most recent call last)" in err, err
    assert err.rstrip().endswith("KeyboardInterrupt"), err
    assert "spin.py" in err and "in spin" in err, err  # the traceback shows the user's function


@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_state_intact_after_caught_keyboard_interrupt(tmp_path, loop):
    code, out, err = run_and_interrupt(tmp_path, PRELUDE + LOOPS[loop] + CAUGHT)
    assert code == 0, (code, out, err)
    assert "finished" not in out
    words = dict((line.split()[0], line.split()[1:]) for line in out.splitlines() if line.strip())
    assert "interrupted" in words, out
    fields = words["interrupted"]
    count = int(fields[0])
    entries_before = int(fields[2])
    # the loop ran natively for a while: far more iterations than the interpreter does in that time
    assert (100 if loop in ("nested", "for-list", "merged") else 10_000) < count < 10**18, out
    if loop == "while-counter":
        assert int(fields[1]) == sum(k & 7 for k in range(8)) * (count // 8) + sum(k & 7 for k in range(count % 8))
    elif loop == "alternating":  # (out[1] is the total after iteration out[0])
        assert int(fields[1]) == 3 * ((count + 1) // 2) - (count // 2 + 1), out
    elif loop == "for-range-float":
        x = float(fields[1])
        assert 999.0 < x <= 1000.0, out  # converges to 1000 after thousands of iterations
    elif loop == "unrolled":  # (per i: (i & 3) + ((i ^ 1) & 3) is 1, 1, 5, 5 for i % 4 = 0..3)
        done = count + 1
        assert int(fields[1]) == 12 * (done // 4) + [0, 1, 2, 7][done % 4], out
    elif loop == "nested":
        assert int(fields[1]) > 0
    elif loop == "merged":  # (out[1] is the total after outer iteration out[0])
        assert int(fields[1]) == MERGED_PER_OUTER * (count + 1), out
    elif loop == "for-list":
        assert float(fields[1]) == 450.0 * count
    elif loop == "if-converted":
        assert int(fields[1]) == [2, 0, -1][(count - 2) % 3], out
    assert entries_before >= 2  # the warm-up's entry and the long call's
    assert int(fields[3]) >= 2
    if loop in ("while-counter", "for-range-float"):
        assert int(fields[4]) >= 1  # the long call entered through the hand-off in one native call, which raised
    result, last = words["again"]
    assert int(last) in (999, 1000), out
    assert int(words["entries"][0]) > entries_before
    if loop == "while-counter":
        assert int(result) == sum(k & 7 for k in range(1000))


def test_keyboard_interrupt_traceback_shows_no_tracejit_frames(tmp_path):
    """Regression: the monitor's frames (at_loop_header, run, call_native) showed below the user's line."""
    code, out, err = run_and_interrupt(tmp_path, PRELUDE + WHILE_COUNTER + UNCAUGHT)
    assert err.rstrip().endswith("KeyboardInterrupt"), err
    assert "monitor.py" not in err and "call_native" not in err, err


CAUGHT_INSIDE = """
@jit(threshold=2)
def spin(n):
    i = 0
    total = 0
    try:
        while i < n:
            total += i & 7
            i += 1
    except KeyboardInterrupt:
        return ("interrupted", i, total)
    return ("finished", i, total)


spin(100)
ready(spin)
how, i, total = spin(10**18)
print(how, i, total, jit.stats(spin)["native_entries"], flush=True)
"""


def test_a_handler_around_the_loop_sees_the_locals_where_ctrl_c_stopped_it(tmp_path):
    """A try around the loop is left to CPython, the loop in it compiled: the KeyboardInterrupt that native code
    raises at its periodic check reaches the user's handler with the function's locals as they were at that
    iteration (the hand-off writes them back before re-raising: runtime.errors.handoff_locals)."""
    code, out, err = run_and_interrupt(tmp_path, PRELUDE + CAUGHT_INSIDE)
    assert code == 0, (code, out, err)
    how, i, total, entries = out.split("ready", 1)[1].split()
    assert how == "interrupted", out
    i, total = int(i), int(total)
    assert 10_000 < i < 10**18, out  # (native code ran it: far more iterations than the interpreter's)
    assert total == sum(range(8)) * (i // 8) + sum(range(i % 8)), out
    assert int(entries) >= 2


HELD_CALLEES = """
def a(v):
    return v + 1

def b(v):
    return v + 2

def c(v):
    return v + 3

@jit(threshold=2)
def spin(g, n, out):
    total = 0
    for i in range(n):
        total += g(i) & 7
        out[0] = i
    return total

for _ in range(40):
    for g in (a, b, c):
        spin(g, 300, [0])
ready(spin)
out = [0]
before = jit.stats(spin)["native_iterations"]
try:
    spin(c, 10**18, out)
except KeyboardInterrupt:
    print("interrupted", out[0], jit.stats(spin)["native_iterations"] - before, flush=True)
else:
    print("finished", flush=True)
"""


def test_sigint_in_a_loop_whose_callee_runs_through_a_side_trace_of_its_entry(tmp_path):
    """The third function passed to one loop (a peer tree each for the first two: jit.monitor.Monitor.wants_peer)
    runs through a side trace of the hoisted guard's exit at the entry, which tail-jumps into the tree's entry
    again, whose guard fails again: every iteration comes back through that side trace, so it counts the fuel
    down and checks for signals itself (else Ctrl-C waited for the loop's end)."""
    code, out, err = run_and_interrupt(tmp_path, PRELUDE + HELD_CALLEES)
    assert code == 0, (code, out, err)
    words = out.split("interrupted")[-1].split()
    assert int(words[0]) >= 10_000 and int(words[1]) >= 10_000, out  # (it ran natively when interrupted)


GUARDED_RUNS = """
import numpy as np

DATA = (np.arange(4096, dtype=np.float64) * 0.6180339887498949) % 1.0 * 12.0 - 1.0
EXPECT_JOINED = True

@jit(threshold=2, side_exit_threshold=2)
def spin(n, data, counts):
    for i in range(n):
        k = int((data[i & 4095] - 0.0) * 6.4)
        if 0 <= k < 64:
            counts[k] += 1
        counts[64] = i
    return counts[64]

for _ in range(3):
    spin(5000, DATA, np.zeros(65, dtype=np.int64))
ready(spin)
counts = np.zeros(65, dtype=np.int64)
try:
    spin(10**18, DATA, counts)
except KeyboardInterrupt:
    s = jit.stats(spin)
    runs = sum(t["fast_runs"] for tree in s["trees"] for t in tree["traces"] if t["kind"] == "side")
    print("interrupted", counts[64], counts[:64].sum(), runs, flush=True)
else:
    print("finished", flush=True)
"""


def test_sigint_in_a_histograms_joined_fast_copy(tmp_path):
    """A histogram's loop runs in its side traces' joined fast copy (codegen.joined: both ways in one run, the runs
    checked at their end: codegen.function._guarded_run); Ctrl-C stops it between two runs, where every store of
    the iterations done stands: the counts are those of the values up to the last index stored."""
    np = pytest.importorskip("numpy")
    code, out, err = run_and_interrupt(tmp_path, PRELUDE + GUARDED_RUNS)
    assert code == 0, (code, out, err)
    last, total, runs = (int(word) for word in out.split("interrupted")[-1].split())
    assert 10_000 < last < 10**18 and runs > 0, out
    data = (np.arange(4096, dtype=np.float64) * 0.6180339887498949) % 1.0 * 12.0 - 1.0
    inside = [0 <= int((x - 0.0) * 6.4) < 64 for x in data]
    done = last + 1  # (iterations 0 to last)
    assert total == sum(inside) * (done // 4096) + sum(inside[: done % 4096]), out


LEVELS = """
print("levels", *sorted({t["opt_level"] for tree in jit.stats(spin)["trees"] for t in tree["traces"]}), flush=True)
"""


@pytest.mark.parametrize(("tier_up", "level"), [(1, 2), (10**15, 0)], ids=["swapped", "first-level"])
@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_sigint_with_tiered_compilation(tmp_path, loop, tier_up, level):
    """Ctrl-C in code compiled at the first level (jit.tiering: the tree is not hot enough yet), and in code
    compiled again and swapped in at the first hot entry (the warm-up's): as without tiering."""
    source = LOOPS[loop].replace("@jit(threshold=2", f"@jit(tier_up_threshold={tier_up}, threshold=2")
    assert source != LOOPS[loop]
    code, out, err = run_and_interrupt(tmp_path, PRELUDE + source + CAUGHT + LEVELS)
    assert code == 0, (code, out, err)
    assert "finished" not in out
    words = dict((line.split()[0], line.split()[1:]) for line in out.splitlines() if line.strip())
    assert "interrupted" in words and int(words["interrupted"][0]) > 100, out
    # (the swapped variant: a trace recorded after the interrupt, in the last call, may still be at level 0)
    assert str(level) in words["levels"] and (level or words["levels"] == ["0"]), out
    if loop == "while-counter":
        count, total = map(int, words["interrupted"][:2])
        assert total == sum(k & 7 for k in range(8)) * (count // 8) + sum(k & 7 for k in range(count % 8))
        assert int(words["again"][0]) == sum(k & 7 for k in range(1000))


LONG_INNER_CALLS = """
@jit(threshold=2)
def spin(trips, out):
    total = 0
    for i in range(len(trips)):
        for j in range(trips[i]):
            total += (i ^ j) & 7
        out[0] = i
    return total

for _ in range(3):
    spin([64] * 200, [0])
ready(spin)
out = [0]
try:
    # (the outer trace, native from its first iterations, calls the inner tree with a billion billion trips)
    spin([64] * 50 + [10**18], out)
except KeyboardInterrupt:
    s = jit.stats(spin)
    runs = sum(t["fast_runs"] for tree in s["trees"] for t in tree["traces"])
    print("interrupted", out[0], runs, flush=True)
else:
    print("finished", flush=True)
"""


def test_sigint_in_an_inner_tree_called_with_more_trips_than_one_run_holds(tmp_path):
    """The outer trace calls the inner loop's tree, whose single-run entry (codegen.function._build_run) takes a
    call only where its whole run ends before the periodic check falls due; this one's does not, so the fast
    copy runs it, checking for signals between its runs, and Ctrl-C stops it."""
    code, out, err = run_and_interrupt(tmp_path, PRELUDE + LONG_INNER_CALLS)
    assert code == 0, (code, out, err)
    words = out.split("interrupted")[-1].split()
    assert int(words[0]) == 49 and int(words[1]) >= 3 * 190, out  # (in the call of the 51st outer iteration)
