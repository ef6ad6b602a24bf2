"""Environment variables (``jit/environment.py``), each tested in a fresh interpreter: JIT_DISABLE, JIT_DUMP,
TRACEJIT_DEBUG; values tracejit does not understand give one clear warning and are ignored."""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VARIABLES = ("JIT_DISABLE", "JIT_DUMP", "TRACEJIT_DEBUG")

KERNEL = """
import jit as jit_module
from jit import jit


@jit(threshold=2)
def kernel(n):
    total = 0
    for i in range(n):
        total += i * 3 - 1
    return total


print(kernel(100))
stats = jit_module.stats(kernel)
print(stats["mode"], stats["traces_compiled"], stats["aborts_total"])
"""
KERNEL_RESULT = str(sum(i * 3 - 1 for i in range(100)))


def run_python(tmp_path, env, *args, source=KERNEL):
    """Run a script (or ``args``, e.g. ``-c ...``) with exactly these tracejit variables set."""
    full_env = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    full_env.update(env)
    full_env["PYTHONPATH"] = str(ROOT) + os.pathsep + full_env.get("PYTHONPATH", "")
    if not args:
        script = tmp_path / "kernel.py"
        script.write_text(textwrap.dedent(source))
        args = (str(script),)
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=full_env, timeout=120, cwd=tmp_path
    )


def warnings_in(stderr):
    return re.findall(r"EnvironmentVariableWarning: (.*)", stderr)


# --- JIT_DUMP ---------------------------------------------------------------------------------------------------


def test_unknown_dump_kind_warns_once_and_the_jit_still_works(tmp_path):
    proc = run_python(tmp_path, {"JIT_DUMP": "bogus"})
    assert proc.returncode == 0, proc.stderr
    result, stats = proc.stdout.splitlines()
    assert result == KERNEL_RESULT
    mode, traces, aborts = stats.split()
    assert mode == "tier1" and int(traces) > 0 and aborts == "0", (stats, proc.stderr)
    assert warnings_in(proc.stderr) == [
        "tracejit: ignoring unknown JIT_DUMP kind(s) 'bogus'; valid kinds: uops, ir, opt-ir, asm, trees "
        "(separated by commas, any case)"
    ]


def test_unknown_dump_kind_is_an_error_under_w_error(tmp_path):
    proc = run_python(tmp_path, {"JIT_DUMP": "uops,bogus"}, "-W", "error", "-c", "import jit")
    assert proc.returncode != 0
    assert "EnvironmentVariableWarning: tracejit: ignoring unknown JIT_DUMP kind(s) 'bogus'" in proc.stderr
    assert "valid kinds: uops, ir, opt-ir, asm, trees" in proc.stderr


@pytest.mark.parametrize("value", ["IR", "ir", " Ir "])
def test_dump_kind_case_and_spaces_forgiven(tmp_path, value):
    proc = run_python(tmp_path, {"JIT_DUMP": value}, "-W", "error", str(_write(tmp_path, KERNEL)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == KERNEL_RESULT
    assert "[ir]" in proc.stderr and re.search(r"define\b[^\n]*\bi64 @\"?tj_kernel_root0_0_", proc.stderr)
    assert "[uops]" not in proc.stderr


def test_several_dump_kinds_with_spaces(tmp_path):
    proc = run_python(tmp_path, {"JIT_DUMP": "uops, IR"}, "-W", "error", str(_write(tmp_path, KERNEL)))
    assert proc.returncode == 0, proc.stderr
    assert "[uops]" in proc.stderr and "[ir]" in proc.stderr
    assert "_BINARY_OP_MULTIPLY_INT" in proc.stderr and "define" in proc.stderr


def test_dump_trees_shows_the_installed_tree(tmp_path):
    proc = run_python(tmp_path, {"JIT_DUMP": "trees"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == KERNEL_RESULT
    # printed after the tree is installed: the loop has it (before installing it had none)
    assert re.search(r"loop 0 at line 9: 1 tree\(s\)\n  tree tj_kernel_root0_0_\w+ \(depth 1", proc.stderr), proc.stderr
    assert "0 tree(s)" not in proc.stderr


def _write(tmp_path, source):
    path = tmp_path / "kernel.py"
    path.write_text(textwrap.dedent(source))
    return path


# --- JIT_DISABLE ------------------------------------------------------------------------------------------------

DISABLE_MODES = """
import warnings

from jit.api import state_of
from jit import jit


def f(n):
    return n + 1


for _ in range(3):  # read at every decoration; a value not understood is reported once
    jitted = jit(f)
    assert jitted(1) == 2
    print(state_of(jitted).mode)
"""


@pytest.mark.parametrize(
    "value, mode",
    [
        ("1", "disabled"),
        ("true", "disabled"),
        ("YES", "disabled"),
        (" On ", "disabled"),
        ("0", "tier1"),
        ("false", "tier1"),
        ("No", "tier1"),
        ("OFF", "tier1"),
        ("", "tier1"),
        ("  ", "tier1"),
    ],
)
def test_jit_disable_spellings(tmp_path, value, mode):
    proc = run_python(tmp_path, {"JIT_DISABLE": value}, "-W", "error", str(_write(tmp_path, DISABLE_MODES)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [mode] * 3


def test_jit_disable_not_understood_warns_once_and_counts_as_no(tmp_path):
    proc = run_python(tmp_path, {"JIT_DISABLE": "maybe"}, str(_write(tmp_path, DISABLE_MODES)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["tier1"] * 3
    assert warnings_in(proc.stderr) == [
        "tracejit: ignoring JIT_DISABLE='maybe': expected 1, true, yes, on (yes) or 0, false, no, off, empty (no), "
        "in any case; JIT_DISABLE counts as no"
    ]


def test_jit_disable_not_understood_is_an_error_under_w_error(tmp_path):
    proc = run_python(tmp_path, {"JIT_DISABLE": "2"}, "-W", "error", "-c", "import jit")
    assert proc.returncode != 0
    assert "EnvironmentVariableWarning: tracejit: ignoring JIT_DISABLE='2'" in proc.stderr


def test_jit_disable_runs_the_kernel_as_plain_cpython(tmp_path):
    proc = run_python(tmp_path, {"JIT_DISABLE": "yes"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [KERNEL_RESULT, "disabled 0 0"]


# --- TRACEJIT_DEBUG ---------------------------------------------------------------------------------------------


def test_debug_flag_not_understood_warns(tmp_path):
    proc = run_python(tmp_path, {"TRACEJIT_DEBUG": "verbose"}, "-W", "error", "-c", "import jit")
    assert proc.returncode != 0
    assert "EnvironmentVariableWarning: tracejit: ignoring TRACEJIT_DEBUG='verbose'" in proc.stderr


def test_debug_flag_understood(tmp_path):
    source = "from jit import environment\nprint(environment.debug())\n"
    for value, expected in (("TRUE", "True"), ("off", "False")):
        proc = run_python(tmp_path, {"TRACEJIT_DEBUG": value}, "-W", "error", "-c", source)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == expected


def test_every_environment_read_goes_through_the_environment_module():
    # one place parses the environment: the package's own code reads os.environ nowhere else
    offenders = []
    for package in ("jit", "codegen", "runtime"):
        for path in (ROOT / package).rglob("*.py"):
            if path.name != "environment.py" and re.search(r"\bos\.environ\b|\bgetenv\b", path.read_text()):
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


RAISES = """
from jit import jit


@jit(threshold=2)
def divide(a, b):
    total = 0
    for i in range(10):
        total += a // (b - i)
    return total


divide(1, 5)
"""


def test_debug_flag_keeps_tracejits_frames_in_tracebacks(tmp_path):
    quiet = run_python(tmp_path, {}, source=RAISES)
    debug = run_python(tmp_path, {"TRACEJIT_DEBUG": "1"}, source=RAISES)
    for proc in (quiet, debug):
        assert proc.returncode == 1 and proc.stderr.rstrip().endswith(
            "ZeroDivisionError: integer division or modulo by zero"
        )
        assert "total += a // (b - i)" in proc.stderr
    # (the loop fails in the tier-1 interpreter: CPython handed it over once hot)
    interpreter = str(ROOT / "runtime" / "interpreter.py")
    assert interpreter not in quiet.stderr, quiet.stderr
    assert interpreter in debug.stderr, debug.stderr
