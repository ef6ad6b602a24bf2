"""The benchmark kernels (bench/kernels.py) compute under @jit exactly what they compute as plain CPython, and
run natively. Small sizes, default options (those the benchmark uses); no timing."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from jit import jit

ROOT = Path(__file__).resolve().parents[1]


def _load_kernels():
    name = "tracejit_bench_kernels"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / "kernels.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


kernels = _load_kernels()

SIZES = {
    "nested_int": 80,
    "mandelbrot": 24,
    "collatz": 300,
    "float_sum": 2000,
    "nested2_branchy": 80,
    "nested3": 12,
}

CASES = [(name, {}) for name in kernels.KERNELS] + [
    (name, {"nesting": False}) for name, (_, nested) in kernels.KERNELS.items() if nested
]


def test_every_kernel_has_a_size():
    assert set(SIZES) == set(kernels.KERNELS)


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
    assert stats["traces_compiled"] > 0, stats
    assert stats["native_entries"] > 0, stats


def test_example_prints_first_call_and_warmed_up_times():
    env = {k: v for k, v in os.environ.items() if k not in ("JIT_DISABLE", "JIT_DUMP", "TRACEJIT_DEBUG")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "example.py")], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert re.match(r"plain CPython: +kernel\(300\) = 314968 +[\d.]+ ms$", lines[0]), lines
    assert re.match(r"@jit, first call: +kernel\(300\) = 314968 +[\d.]+ ms +\(records and compiles", lines[1]), lines
    assert re.match(r"@jit, after warm-up: +kernel\(300\) = 314968 +[\d.]+ ms +\(\d+x faster", lines[2]), lines
    assert lines[3] == "same result: True"
    assert "native: 1 tree(s)" in proc.stdout
