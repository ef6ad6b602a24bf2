"""Fallbacks that are not silent: ``@jit(strict=True)`` raises where tracejit would otherwise run a function as
plain CPython, and a missing or broken llvmlite gives one ``jit.NativeCodeUnavailableWarning``."""

import os
import subprocess
import sys
import textwrap
import traceback
import warnings
from pathlib import Path

import pytest
from helpers import assert_native, define

import jit as jit_module
from jit import function as function_module
from jit import jit
from jit.api import state_of

ROOT = Path(__file__).resolve().parents[2]

TRY_SOURCE = """
def f(log, n):
    log.append(n)
    total = 0
    try:  #<
        total += n
    finally:
        pass
    return total
"""


def test_error_classes_are_exported():
    for name in (
        "TracejitError",
        "UnsupportedFunctionError",
        "NativeCodeUnavailableError",
        "TracejitWarning",
        "NativeCodeUnavailableWarning",
        "EnvironmentVariableWarning",
    ):
        assert getattr(jit_module, name) is getattr(jit, name)
        assert name in jit_module.__all__
    assert issubclass(jit_module.UnsupportedFunctionError, jit_module.TracejitError)
    assert issubclass(jit_module.NativeCodeUnavailableError, jit_module.TracejitError)
    assert issubclass(jit_module.NativeCodeUnavailableWarning, jit_module.TracejitWarning)
    assert issubclass(jit_module.EnvironmentVariableWarning, jit_module.TracejitWarning)


def test_strict_raises_at_every_call_naming_construct_and_line():
    func = define(TRY_SOURCE, "f")
    strict = jit(strict=True)(func)
    log = []
    for _ in range(2):
        with pytest.raises(jit_module.UnsupportedFunctionError) as info:
            strict(log, 3)
        assert log == []  # the function did not run
        error = info.value
        assert error.line == 5 and "try" in error.reason
        message = str(error)
        assert "unsupported construct at line 5" in message and "try" in message, message
        assert "f (" in message and "strict=True" in message, message
    # the traceback points at the call, not into tracejit
    frames = traceback.extract_tb(info.value.__traceback__)
    assert [(frame.filename, frame.name) for frame in frames] == [
        (__file__, "test_strict_raises_at_every_call_naming_construct_and_line")
    ]
    report = jit.explain(strict)
    assert "unsupported construct at line 5" in report and "strict=True" in report, report
    assert "UnsupportedFunctionError" in report, report


def test_without_strict_the_same_function_runs_as_plain_cpython():
    func = define(TRY_SOURCE, "f")
    log = []
    assert jit(func)(log, 3) == 3 and log == [3]
    assert "strict" not in jit.explain(jit(func))


def test_strict_source_not_available():
    namespace = {}
    exec(compile("def g(n):\n    return n + 1\n", "<no-source>", "exec"), namespace)
    strict = jit(strict=True)(namespace["g"])
    with pytest.raises(jit_module.UnsupportedFunctionError, match=r"source not usable at line 1: source code is not"):
        strict(1)


def test_strict_supported_function_runs_natively():
    def loop(n):
        total = 0
        for i in range(n):
            total += i * i
        return total

    strict = jit(strict=True, threshold=2)(loop)
    assert strict(100) == loop(100)
    assert_native(strict)
    assert state_of(strict).refusal is None


def helper(x, *rest):  # (*rest: never inlined, so recordings give up)
    return x + 1


def test_strict_does_not_raise_for_recording_aborts():
    def calls_python(n):
        total = 0
        for i in range(n):
            total += i + (i is n)  # identity of two unboxed ints: the recording gives up
        return total

    strict = jit(strict=True, threshold=2)(calls_python)
    for _ in range(3):
        assert strict(200) == calls_python(200)
    stats = jit.stats(strict)
    assert stats["aborts_total"] > 0 and stats["traces_compiled"] == 0


def test_strict_with_jit_disable_runs_plain_cpython(monkeypatch):
    monkeypatch.setenv("JIT_DISABLE", "1")
    func = define(TRY_SOURCE, "f")
    log = []
    assert jit(strict=True)(func)(log, 2) == 2 and log == [2]


def test_strict_llvmlite_unusable_raises_at_first_call(monkeypatch):
    def loop(n):
        total = 0
        for i in range(n):
            total += i
        return total

    monkeypatch.setitem(sys.modules, "jit.monitor", None)  # importing it (and llvmlite) now fails
    strict = jit(strict=True)(loop)
    with pytest.raises(jit_module.NativeCodeUnavailableError, match="llvmlite is not usable") as info:
        strict(10)
    assert "llvmlite is not usable" in info.value.reason
    assert "NativeCodeUnavailableError" in jit.explain(strict)


def test_llvmlite_unusable_warns_once_and_runs_plain_cpython(monkeypatch):
    def loop(n):
        total = 0
        for i in range(n):
            total += i
        return total

    monkeypatch.setitem(sys.modules, "jit.monitor", None)
    monkeypatch.setattr(function_module, "_warned_native_code_unavailable", False)
    f = jit(threshold=2)(loop)
    g = jit(threshold=2)(loop)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert f(100) == loop(100) and f(100) == loop(100) and g(100) == loop(100)
    assert [w.category for w in caught] == [jit_module.NativeCodeUnavailableWarning]
    assert "llvmlite is not usable" in str(caught[0].message)
    assert jit.stats(f)["traces_compiled"] == 0
    assert state_of(f).gave_up is not None  # later calls go straight to the plain function
    assert "native code is not available" in jit.explain(f)


# --- the same, in a process where llvmlite cannot be imported at all ------------------------------------------

NO_LLVMLITE = """
import sys
import warnings

sys.modules["llvmlite"] = None  # `import llvmlite...` now raises ImportError
import jit as jit_module
from jit import jit


def loop(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


f = jit(threshold=2)(loop)
g = jit(threshold=2)(loop)
print(f(100), g(100), f(100), loop(100))
print(jit_module.stats(f)["traces_compiled"], jit_module.stats(f)["gave_up"])
try:
    jit(strict=True)(loop)(10)
except jit_module.NativeCodeUnavailableError as exc:
    print("strict:", exc.reason)
"""


def run_script(tmp_path, *options):
    script = tmp_path / "no_llvmlite.py"
    script.write_text(textwrap.dedent(NO_LLVMLITE))
    env = {k: v for k, v in os.environ.items() if k not in ("JIT_DISABLE", "JIT_DUMP", "TRACEJIT_DEBUG")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, *options, str(script)], capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path
    )


def test_without_llvmlite_one_warning_and_plain_results(tmp_path):
    proc = run_script(tmp_path)
    assert proc.returncode == 0, proc.stderr
    results, stats, strict = proc.stdout.splitlines()
    expected = sum(i * i for i in range(100))
    assert results.split() == [str(expected)] * 4
    assert stats.startswith("0 native code is not available: llvmlite is not usable")
    assert strict.startswith("strict: llvmlite is not usable")
    assert proc.stderr.count("NativeCodeUnavailableWarning") == 1, proc.stderr
    assert "tracejit: native code is not available (llvmlite is not usable" in proc.stderr


def test_without_llvmlite_the_warning_can_be_an_error(tmp_path):
    proc = run_script(tmp_path, "-W", "error::UserWarning")
    assert proc.returncode != 0
    assert "NativeCodeUnavailableWarning: tracejit: native code is not available" in proc.stderr


def test_without_llvmlite_the_warning_can_be_ignored_by_category(tmp_path):
    proc = run_script(tmp_path, "-W", "ignore::jit.errors.NativeCodeUnavailableWarning")
    assert proc.returncode == 0, proc.stderr
    assert "Warning" not in proc.stderr, proc.stderr
