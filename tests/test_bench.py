"""The benchmark (bench/): its kernels compute under @jit exactly what they compute as plain CPython and run
natively, and every section produces its table. Small sizes, default options (those the benchmark uses); no
timing is asserted: a section's timed functions run once each, as a pyperf worker would run them, and their
seconds stand in for pyperf's results."""

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from jit import jit

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))  # the benchmark's modules import one another by their plain names

import arraysection  # noqa: E402
import handoff  # noqa: E402
import harness  # noqa: E402
import kernels  # noqa: E402
import kernelspeed  # noqa: E402
import nestcost  # noqa: E402
import noslowdown  # noqa: E402
import variants  # noqa: E402

SIZES = {
    "nested_int": 80,
    "mandelbrot": 24,
    "collatz": 300,
    "float_sum": 2000,
    "nested2_branchy": 80,
    "nested3": 12,
    "primes_break": 400,
    "helper_calls": 30,
    "big_ints": 2000,
    "list_swaps": 300,
    "list_of_lists": 30,
    "word_counts": 2000,
    "letter_stats": 3000,
    "pair_walk": 3000,
}
#: kernels whose hot loop does not run natively yet, and the abort that says why (issue 8 item 2, the generic
#: object path: big ints); when one of them starts running natively, move it out of here
NOT_NATIVE_YET: dict[str, str] = {}  # kernel -> the abort code that keeps it from running natively

CASES = [(name, {}) for name in kernels.KERNELS] + [
    (name, {"nesting": False}) for name, (_, nested) in kernels.KERNELS.items() if nested
]

HAS_NUMBA = variants.numba_installed()


def test_every_kernel_has_a_size():
    assert set(SIZES) == set(kernels.KERNELS)
    assert set(kernelspeed.SIZES) == set(kernelspeed.QUICK_SIZES) == set(kernels.KERNELS)


@pytest.mark.parametrize(("name", "options"), CASES, ids=[f"{n}-{'-'.join(o) or 'default'}" for n, o in CASES])
def test_kernel_jitted_equals_plain_and_runs_natively(name, options):
    func, _ = kernels.KERNELS[name]
    n = SIZES[name]
    expected = func(n)
    fast = jit(**options)(func)
    for call in range(3):  # first call records and compiles; later calls run the compiled trees
        got = fast(n)
        assert type(got) is type(expected), (call, got, expected)
        assert got == expected, (call, got, expected)
    stats = jit.stats(fast)
    assert stats["mode"] == "tier1", jit.explain(fast)
    if name in NOT_NATIVE_YET:
        assert NOT_NATIVE_YET[name] in stats["aborts_by_code"], stats["aborts_by_code"]
        return
    assert stats["traces_compiled"] > 0, stats
    assert stats["native_entries"] > 0, stats


def test_example_prints_first_call_and_warmed_up_times():
    # (as a user runs it: with the default warm-up, not the suite's TRACEJIT_WARMUP)
    excluded = ("JIT_DISABLE", "JIT_DUMP", "TRACEJIT_DEBUG", "TRACEJIT_WARMUP")
    env = {k: v for k, v in os.environ.items() if k not in excluded}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "example.py")], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert re.match(r"plain CPython: +kernel\(300\) = 314968 +[\d.]+ ms$", lines[0]), lines
    assert re.match(r"@jit, first call: +kernel\(300\) = 314968 +[\d.]+ ms$", lines[1]), lines
    warm_up = re.match(r"@jit, warm-up: +(\d+) call\(s\) in [\d.]+ ms \(CPython runs the loops", lines[2])
    assert warm_up and 1 < int(warm_up.group(1)) < 1000, lines  # (90000 iterations a call: several calls)
    assert re.match(r"@jit, after warm-up: +kernel\(300\) = 314968 +[\d.]+ ms +\(\d+x faster", lines[3]), lines
    assert lines[4] == "same result: True"
    assert "native: 1 tree(s)" in proc.stdout


# --- every section produces its table ----------------------------------------------------------------------


class MeasuredOnce:
    """Stands in for a pyperf result: one run of the timed function, per inner loop."""

    def __init__(self, seconds):
        self.seconds = seconds

    def median(self):
        return self.seconds

    def get_values(self):
        return [self.seconds]


def run_section(section):
    """What bench.py does with a section, each timing run once in this process instead of in pyperf workers."""
    section.prepare(1)
    section.numba_skip = frozenset(section.numba_skipped())
    timings = section.timings()
    assert len({t.name for t in timings}) == len(timings), "pyperf benchmark names must be unique"
    for timing in timings:
        timing.store(MeasuredOnce(timing.time_func(1) / timing.inner_loops))
    return timings, section.table()


def table_rows(table, first_cells):
    rows = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        name = cells[0].removesuffix(" (not native!)")
        if line.startswith("| ") and name in first_cells:
            rows[name] = cells
    assert set(rows) == set(first_cells), table
    return rows


def test_kernels_section_table():
    section = kernelspeed.KernelSection(quick=True)
    for row in section.rows:
        row.size = SIZES[row.name]
    timings, table = run_section(section)
    rows = table_rows(table, set(kernels.KERNELS))
    header = next(line for line in table.splitlines() if line.startswith("| kernel"))
    for column in ("numba.njit", "Numba first call", "tracejit / Numba", "nesting off", "exits/call"):
        assert f" {column} |" in header
    numba_timed = {t.name.split("/")[0] for t in timings if t.name.endswith("/numba")}
    if HAS_NUMBA:
        # float_sum calls an lru_cache'd helper: Numba cannot compile it as written, and says why
        assert rows["float_sum"][8].startswith("- [1]"), rows["float_sum"]
        assert "float_sum: Numba cannot compile it as written" in table and "float_data" in table
        assert "float_sum" not in numba_timed and "nested_int" in numba_timed
        assert rows["nested_int"][10].endswith("x"), rows["nested_int"]  # tracejit / Numba
        assert "Goal (issue 9): at least 0.7x" in table
    else:
        assert not numba_timed
        assert "Numba is not installed" in table


def test_compilephases_prints_each_kernels_phases(capsys):
    import compilephases

    compilephases.main(["--quick", "--repeats", "1", "collatz", "list_swaps"])
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("kernel")).split()
    assert header[3:] == list(compilephases.COLUMNS)
    for name in ("collatz", "list_swaps"):
        cells = next(line for line in lines if line.startswith(name)).split()
        phases = dict(zip(compilephases.COLUMNS, map(float, cells[3:])))
        assert int(cells[1]) > 0 and float(cells[2]) > 0  # traces, median compile ms/trace
        assert phases["lower"] > 0 and phases["codegen"] > 0 and phases["vectorize"] == 0


def test_compilesplit_prints_each_kernels_cpu_split(capsys):
    import compilesplit
    import llvmlite.binding

    import codegen.engine
    import codegen.function
    import codegen.text

    emit = llvmlite.binding.TargetMachine.emit_object
    compilesplit.main(["collatz"])
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("kernel")).split()
    assert header[3:] == list(compilesplit.COLUMNS)
    cells = next(line for line in lines if line.startswith("collatz")).split()
    split = dict(zip(compilesplit.COLUMNS, map(float, cells[3:])))
    assert int(cells[1]) > 0  # traces
    assert split["build_ir"] > 0 and split["ir_text"] > 0 and split["codegen"] > 0 and split["link"] > 0
    assert split["compile"] >= split["codegen"] + split["passes"]
    # its timers are taken off again: llvmlite's functions are llvmlite's
    assert llvmlite.binding.TargetMachine.emit_object is emit and codegen.engine.llvm.TargetMachine.emit_object is emit
    assert codegen.function.module_text is codegen.text.module_text


def overflowing(n):
    """Python ints grow past 64 bits; Numba's int64 wraps around."""
    x = 1
    for _ in range(n):
        x = x * 3 + 1
    return x


def test_kernels_section_marks_numba_results_that_differ(monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.setattr(kernels, "KERNELS", {"overflowing": (overflowing, False)})
    monkeypatch.setattr(kernelspeed, "QUICK_SIZES", {"overflowing": 100})
    section = kernelspeed.KernelSection(quick=True)
    _, table = run_section(section)
    row = table_rows(table, {"overflowing"})["overflowing"]
    assert row[8].endswith("(wrong: wraps)"), row
    assert row[10] == "-", row  # no speed ratio against a wrong answer
    assert f"CPython {overflowing(100)!r} (its int64 arithmetic wraps around" in table
    assert "met on 0 of 0 kernels" in table


def test_kernels_section_without_numba(monkeypatch):
    monkeypatch.setattr(variants, "numba_installed", lambda: False)
    monkeypatch.setattr(kernels, "KERNELS", {"nested_int": kernels.KERNELS["nested_int"]})
    monkeypatch.setattr(kernelspeed, "QUICK_SIZES", {"nested_int": 40})
    timings, table = run_section(kernelspeed.KernelSection(quick=True))
    assert [t.name for t in timings] == ["nested_int/plain", "nested_int/jit", "nested_int/nesting-off"]
    assert "Numba column empty: Numba is not installed" in table
    assert table_rows(table, {"nested_int"})["nested_int"][8] == "-"


def test_numba_discrepancy_labels():
    assert variants.numba_discrepancy(3, 3) is None
    assert variants.numba_discrepancy(0.1 + 0.2, 0.1 + 0.2) is None
    assert variants.numba_discrepancy(float("nan"), float("nan")) is None
    assert variants.numba_discrepancy(3**50 - 2**64 * (3**50 // 2**64), 3**50) == "wraps"
    assert variants.numba_discrepancy(4, 3) == "differs"
    assert variants.numba_discrepancy(3.0, 3) == "differs"


def test_nest_section_table():
    section = nestcost.NestSection(quick=True)
    for row in section.rows:
        row.n, row.n_off = max(1, 256 // max(row.m, 1)), max(1, 16 // max(row.m, 1))
    timings, table = run_section(section)
    rows = table_rows(table, {str(m) for m in nestcost.TRIP_COUNTS})
    for m, cells in rows.items():
        assert cells[3].endswith(" ns") and cells[4].endswith(" ns") and cells[5].endswith(" ns"), cells
        assert cells[8].startswith(">= 0.67x" if int(m) >= 8 else ">= 0.33x"), cells
        assert cells[9].isdigit() and cells[10].isdigit(), cells  # exits per call, from jit.stats
    assert any(t.name == "nest/m=8/numba" for t in timings) == HAS_NUMBA


def test_handoff_section_table():
    section = handoff.HandoffSection(quick=True)
    for row in section.rows:
        row.calls = 100
    _, table = run_section(section)
    rows = table_rows(table, {str(k) for k in handoff.TRIP_COUNTS})
    for row, cells in zip(section.rows, rows.values()):
        assert cells[5] == f"{row.native_entries_per_call:.2f}"
        assert row.native_entries_per_call >= 1  # min_native_iterations=0: every call enters native code
        assert cells[7].endswith(" us"), cells
        # entering in Python, for comparison (the ratio needs a positive round trip: timings decide, not the test)
        assert cells[9].endswith(" us") and (cells[10].endswith("x") or cells[10] == "-"), cells


def test_handoff_says_when_there_were_no_native_entries():
    row = handoff.HandoffRow(1, 100, native_entries_per_call=0.0, mode="tier1")
    row.times = {"plain": MeasuredOnce(3e-7), "jit": MeasuredOnce(4e-7), "always-enter": MeasuredOnce(5e-6)}
    assert row.round_trip_us() is None
    section = handoff.HandoffSection(quick=True)
    section.rows = [row]
    assert "| - (no native entries; mode tier1) |" in section.table()
    row.native_entries_per_call = 2.0
    assert row.round_trip_us() == pytest.approx(2.35)


def test_ordinary_section_table():
    section = noslowdown.NoSlowdownSection(quick=True)
    for row in section.rows:
        row.size = max(row.size // 20, 3)
    timings, table = run_section(section)
    rows = table_rows(table, {row.name for row in section.rows})
    assert {t.name for t in timings if t.name.endswith("/paired")} == {f"ordinary/{r}/paired" for r in rows}
    header = next(line for line in table.splitlines() if line.startswith("| function"))
    assert " @jit speed, paired |" in header and " separate workers |" in header
    assert " early calls: @jit speed |" in header
    for row in section.rows:  # (each row's early calls: at least EARLY_MIN_CALLS, results checked)
        assert noslowdown.EARLY_MIN_CALLS <= row.early_calls <= noslowdown.EARLY_MAX_CALLS
        assert row.early_speed > 0 and f"x ({row.early_calls}; {row.early_compile_ms:.0f} ms) |" in table


def test_paired_time_func_alternates_and_returns_the_ratio(monkeypatch):
    """The paired benchmark's value is the second run's total time over the first's, the two alternating which
    goes first; here on a fake clock that each run advances by a known amount."""
    clock = [0.0]
    order = []

    def advance(name, seconds):
        def run():
            order.append(name)
            clock[0] += seconds

        return run

    monkeypatch.setattr(harness.time, "perf_counter", lambda: clock[0])
    built = []
    time_func = harness.paired_time_func(lambda: built.append(1) or (advance("base", 2.0), advance("other", 3.0)))
    assert time_func(4) == pytest.approx(4 * 3.0 / 2.0)
    assert order == ["base", "other", "other", "base"] * 2
    assert time_func(1) == pytest.approx(1.5)
    assert built == [1]  # built once, by the first call


# --- bench.py: options reach pyperf's worker processes -----------------------------------------------------


def test_sections_option_and_forwarding():
    pytest.importorskip("pyperf")
    import bench

    assert bench.parse_sections("nest, kernels") == ["kernels", "nest"]
    with pytest.raises(SystemExit, match="unknown section"):
        bench.parse_sections("kernels,nope")
    cmd = []
    bench.add_cmdline_args(cmd, argparse.Namespace(quick=True, sections="nest", numba_skip="kernels/float_sum"))
    assert cmd == ["--quick", "--sections", "nest", "--numba-skip", "kernels/float_sum"]


def test_quick_run_of_one_section_end_to_end(tmp_path):
    """The real thing, pyperf workers included, on the smallest section (a few seconds)."""
    pytest.importorskip("pyperf")
    out = subprocess.run(
        [
            sys.executable,
            str(BENCH / "bench.py"),
            "--quick",
            "--sections",
            "handoff",
            "--markdown",
            str(tmp_path / "out.md"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "## Entry/exit cost" in out.stdout and "## Numeric kernels" not in out.stdout
    table_rows(out.stdout, {str(k) for k in handoff.TRIP_COUNTS})


ARRAY_SIZES = arraysection.QUICK_SIZES  # (the --quick sizes: small)


@pytest.mark.parametrize("name", sorted(ARRAY_SIZES))
def test_array_kernel_jitted_equals_plain_and_runs_natively(name):
    pytest.importorskip("numpy")
    import array_kernels

    assert set(ARRAY_SIZES) == set(array_kernels.ARRAY_KERNELS)
    func, _ = array_kernels.ARRAY_KERNELS[name]
    n = ARRAY_SIZES[name]
    expected = func(*array_kernels.inputs(name, n))
    fast = jit(func)
    for call in range(3):
        got = fast(*array_kernels.inputs(name, n))
        assert type(got) is type(expected) and repr(got) == repr(expected), (call, got, expected)
    stats = jit.stats(fast)
    assert stats["traces_compiled"] > 0 and stats["native_entries"] > 0, jit.explain(fast)


def test_array_speed_table_runs():
    pytest.importorskip("numpy")
    import array_kernels
    import arrayspeed

    small = {name: (func, ARRAY_SIZES[name]) for name, (func, _) in array_kernels.ARRAY_KERNELS.items()}
    original = array_kernels.ARRAY_KERNELS
    array_kernels.ARRAY_KERNELS = small
    try:
        rows = [arrayspeed.measure(name, 1) for name in small]
    finally:
        array_kernels.ARRAY_KERNELS = original
    table = arrayspeed.table(rows)
    assert all(f"| {name} |" in table for name in small)


def test_runcheck_prototype_variants_compute_the_stencil():
    # (bench/runcheck_proto.py: each way of checking a row's run, written by hand, checks its grid against the
    # kernel's before it is timed; 70: a group of 64 and a last group overlapping it)
    pytest.importorskip("numpy")
    import runcheck_proto

    if not runcheck_proto.available():
        pytest.skip("the prototype reads x86-64's MXCSR")
    times = runcheck_proto.measure(70, 1)
    assert {name for name, _, _ in runcheck_proto.VARIANTS} <= set(times)
    assert all(seconds > 0 for seconds in times.values())


def test_array_section_table():
    pytest.importorskip("numpy")
    section = arraysection.ArraySection(quick=True)
    for row in section.rows:
        row.n = ARRAY_SIZES[row.name]
    timings, table = run_section(section)
    rows = table_rows(table, set(ARRAY_SIZES))
    for cells in rows.values():
        assert cells[7].startswith(">= 0.7x"), cells
        assert cells[8].isdigit() and cells[9].isdigit() and int(cells[8]) > 0, cells  # traces, exits per call
        if HAS_NUMBA:
            assert "wrong" not in cells[5], cells  # (Numba's Python numbers compared by value)
    assert any(t.name == "arrays/matmul/numba" for t in timings) == HAS_NUMBA


def test_tiering_compares_first_calls_compile_times_and_steady_state(capsys):
    import tiering

    tiering.main(["--quick", "--repeats", "1", "--threshold", "1", "--threshold", "1000000000", "collatz"])
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[1]: line.split() for line in lines if line.startswith("collatz")}
    assert set(rows) == {"today", "T=1", "T=1000000000"}
    for name, cells in rows.items():
        first_cpu, first_wall, three, compile_ms, tier_up_ms, steady = map(float, cells[2:])
        assert first_cpu > 0 and first_wall > 0 and three >= first_cpu and compile_ms > 0
        assert (tier_up_ms > 0) is (name == "T=1")  # (never hot enough with the other threshold)
    assert float(rows["today"][-1]) == 1.0


def test_compilesplit_at_opt_level_0_runs_no_passes(capsys):
    import compilesplit

    compilesplit.main(["--opt-level", "0", "collatz"])
    lines = capsys.readouterr().out.splitlines()
    cells = next(line for line in lines if line.startswith("collatz")).split()
    split = dict(zip(compilesplit.COLUMNS, map(float, cells[3:])))
    assert split["passes"] == 0 and split["codegen"] > 0


def test_background_compares_both_modes_first_calls_and_steady_state(capsys):
    import background

    background.main(["--quick", "--repeats", "1", "--calls", "3", "--steady", "2", "collatz", "fib"])
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split() for line in lines[1:] if line.split()[0] in ("collatz", "fib")}
    assert set(rows) == {"collatz", "fib"}
    for cells in rows.values():
        times = list(map(float, cells[1:11]))
        assert all(t > 0 for t in times), cells
        assert times[4] >= times[0] and times[5] >= times[1]  # (the first calls include the first)
        assert cells[11] in ("yes", "NO") and cells[12].isdigit()
