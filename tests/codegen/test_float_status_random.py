"""Random NumPy loops whose fast copies the processor's floating-point flags check (codegen.float_status), against
CPython: a range loop over float64 arrays computing random expressions of ``a[i]``, ``b[i]``, ``a[-i - 1]`` and
constants with ``+ - * /`` and ``np.sqrt``, summing some into an accumulator, storing some into an output array
(or not: a loop that only reads), and keeping one in a variable only the return reads (LLVM would compute it once
after the loop: its mark must stay). The arrays hold special values at random places (inf, -inf, NaN, -0.0, 0.0,
huge and tiny numbers, a denormal), so events (overflow, underflow, invalid, division by zero) happen in the
first, a middle or the last run, and the loop runs under a random ``np.errstate``. The result, the warnings in
order, the FloatingPointError and every element of the output are CPython's. To fuzz longer:
``TRACEJIT_FUZZ_EXAMPLES=2000 python -m pytest tests/codegen/test_float_status_random.py``.
"""

from __future__ import annotations

import random
import warnings

import pytest
from helpers import define, numpy_outcome
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jit as jit_module
from jit import environment, jit

np = pytest.importorskip("numpy")

EXAMPLES = environment.count("TRACEJIT_FUZZ_EXAMPLES", 20)
N = 700  # (a storing loop's runs are at most 256 iterations: events in several runs)
SPECIALS = [np.inf, -np.inf, np.nan, -0.0, 0.0, 1e300, -1e300, 1e-300, 5e-324, 1e154]
STATES = [{}, {"all": "raise"}, {"all": "ignore"}, {"all": "warn"}, {"over": "raise", "under": "warn"}]


def _expr(r: random.Random, depth: int = 0) -> str:
    choice = r.randrange(9 if depth < 2 else 5)
    if choice == 0:
        return repr(r.choice([0.5, 3.0, -2.0, 1e200, 1e-200, 0.0]))
    if choice in (1, 2):
        return r.choice(["a[i]", "b[i]"])
    if choice == 3:
        return "a[-i - 1]"
    if choice == 4:
        return "b[i]"
    if choice == 5:
        return f"np.sqrt({_expr(r, depth + 1)})"
    return f"({_expr(r, depth + 1)} {r.choice('+-*/')} {_expr(r, depth + 1)})"


def program(seed: int) -> str:
    r = random.Random(seed)
    body = [f"        x = {_expr(r)}\n"]
    if r.random() < 0.6:
        body.append(f"        out[i] = {r.choice(['x', _expr(r)])}\n")
    body.append(f"        s += {r.choice(['x', _expr(r)])}\n")
    if r.random() < 0.5:
        body.append(f"        t = {_expr(r)}\n")
    r.shuffle(body[1:])
    return (
        "def kernel(a, b, out):\n"
        "    s = 0.0\n"
        "    t = 0.0\n"
        "    for i in range(len(a)):\n" + "".join(body) + "    return s, t\n"
    )


def arrays(seed: int | None) -> tuple:
    """Fresh arguments: a, b with special values at places chosen by seed (None: none), and out."""
    r = random.Random(seed * 7 + 1 if seed is not None else 0)
    a = np.linspace(0.5, 2.0, N)
    b = np.linspace(1.0, 3.0, N)
    for _ in range(r.randrange(4) if seed is not None else 0):
        target = a if r.random() < 0.5 else b
        target[r.choice([0, 255, 256, 300, N // 2, N - 1, r.randrange(N)])] = r.choice(SPECIALS)
    return a, b, np.full(N, 7.0)


def outcome(f, args, state):
    """The result or exception, the warnings, and the output array after the call."""
    return (*numpy_outcome(f, args, state, (FloatingPointError, ZeroDivisionError)), args[2].tobytes())


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0, max_value=2**32))
def test_random_numpy_loops_checked_by_the_status_flags(seed):
    source = program(seed)
    plain = define(source, "kernel", {"np": np})
    f = jit(threshold=2)(plain)
    state = STATES[seed % len(STATES)]
    # (warm: clean arrays, the traces recorded and compiled under the state of the calls compared below, whose
    # ignored events they ignore too: jit.numpy_errstate)
    for _ in range(2):
        with warnings.catch_warnings(), np.errstate(**state):
            warnings.simplefilter("ignore")
            try:
                f(*arrays(None))
            except (ZeroDivisionError, FloatingPointError):  # (`1e200 / 0.0`: as in CPython; compared below)
                break
    for attempt in range(2):
        args = arrays(seed + attempt)
        assert outcome(f, args, state) == outcome(plain, arrays(seed + attempt), state), source
    try:
        with np.errstate(all="raise"):
            plain(*arrays(None))
    except (FloatingPointError, ZeroDivisionError):
        return  # (an event at every iteration, clean arrays or not: `x / np.sqrt(0.0)` leaves native code each time)
    assert jit_module.stats(f)["native_iterations"] > 0, source
