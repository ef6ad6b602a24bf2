"""Random methods that change their instance, another object (sometimes the same one) and lists, inlined into a hot
loop (jit.inline: stores deferred to the call's return, appends too, one store where it is), against CPython.

Each program is a class ``C`` whose method ``m(self, other, k)`` runs a few random statements: attribute stores
and augmented stores into ``self`` and ``other``, appends to ``self.log`` and ``other.log``, stores into the dicts ``self.counts`` and ``other.counts``, reads of both (a
read of ``other.x`` after a store into ``self.x`` may be a read of the value just stored), a branch, a call of
another method that changes the instance, and a ``raise`` at one value of ``k``; the loop calls it with ``other``
drawn from a list that holds the receiver itself, another instance, or both. Values include ints near 2**62 (the
adds overflow past 2**63 in the loop), floats and -0.0. The whole final state of both objects is compared (and
the state at the exception, which carries it). To fuzz longer:
``TRACEJIT_FUZZ_EXAMPLES=2000 python -m pytest tests/jit/test_inlined_effects.py``.
"""

from __future__ import annotations

import random

from helpers import check, define
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jit as jit_module
from jit import environment

ATTRS = ("a", "b", "c")
KEYS = ("p", "q")
EXAMPLES = environment.count("TRACEJIT_FUZZ_EXAMPLES", 25)


def _expr(r: random.Random, depth: int = 0) -> str:
    choice = r.randrange(8)
    if choice == 0:
        return repr(r.choice([0, 1, 2, -3, 7, 2**62, 0.5, -0.0]))
    if choice == 2:
        return f"self.{r.choice(ATTRS)}"
    if choice == 3:
        return f"other.{r.choice(ATTRS)}"
    if choice == 4 and depth < 2:
        return f"({_expr(r, depth + 1)} {r.choice('+-*')} {_expr(r, depth + 1)})"
    if choice == 5:
        return r.choice(["len(self.log)", f"self.counts.get({r.choice(KEYS)!r}, -1)"])
    if choice == 6:
        return "x"
    return "k"


def _statement(r: random.Random, indent: int, depth: int = 0) -> str:
    pad = " " * indent
    choice = r.randrange(13)
    if choice == 11:
        return f"{pad}{r.choice(['self', 'other'])}.counts[{r.choice(KEYS)!r}] = {_expr(r)}\n"
    if choice == 12:
        key = repr(r.choice(KEYS))
        return f"{pad}self.counts[{key}] = {r.choice(['self', 'other'])}.counts.get({key}, 0) + 1\n"
    if choice <= 2:
        return f"{pad}self.{r.choice(ATTRS)} = {_expr(r)}\n"
    if choice == 3:
        return f"{pad}other.{r.choice(ATTRS)} = {_expr(r)}\n"
    if choice == 4:
        return f"{pad}self.{r.choice(ATTRS)} += {_expr(r)}\n"
    if choice == 5:
        return f"{pad}self.log.append({_expr(r)})\n"
    if choice == 6:
        return f"{pad}other.log.append({_expr(r)})\n"
    if choice == 7 and depth < 1:
        return f"{pad}if {_expr(r)} > {_expr(r)}:\n{_statement(r, indent + 4, depth + 1)}"
    if choice == 8:
        return f"{pad}x = {_expr(r)}\n"
    if choice == 9:
        return f"{pad}if k == LIMIT:\n{pad}    raise ValueError(k, self.a, other.b, len(self.log))\n"
    return f"{pad}x = self.helper(k)\n"


def program(seed: int) -> str:
    """The source of a program: class C, and run(n, shape) whose loop calls C.m."""
    r = random.Random(seed)
    body = "".join(_statement(r, 8) for _ in range(r.randrange(1, 6)))
    returns = r.choice(["        return x\n", f"        return {_expr(r)}\n", ""])
    helper = r.choice(
        [
            "        self.c += k\n        return k\n",
            "        return self.a\n",
            "        self.log.append(k)\n        return 1\n",
        ]
    )
    return f"""
LIMIT = {r.choice([-1, -1, 5, 70, 150])}

class C:
    def __init__(self):
        self.a = 0
        self.b = 1
        self.c = 2.5
        self.log = []
        self.counts = {{"p": 1}}

    def helper(self, k):
{helper}
    def m(self, other, k):
        x = 0
{body}{returns}

def state(o):
    return o.a, o.b, o.c, len(o.log), o.log[-3:], sorted(o.counts.items())

def run(n, shape):
    a, b = C(), C()
    pool = [a, b, a] if shape == 0 else [a] if shape == 1 else [b]
    total = 0
    for i in range(n):
        other = pool[i % len(pool)]
        r = a.m(other, i)
        total += 1 if r is None else 2
    return total, state(a), state(b)
"""


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_random_methods_changing_objects_inline_as_cpython(seed: int) -> None:
    run = define(program(seed), "run")
    jitted = check(run, (300, 0), (300, 1), (300, 2), options={"threshold": 2, "side_exit_threshold": 2})
    assert jit_module.stats(jitted)["native_iterations"] > 0, jit_module.explain(jitted)


def test_the_generator_makes_deferred_changes():
    """(The generator's programs do reach what they are for: deferred stores and appends in native code.)"""
    deferred = 0
    for seed in range(12):
        jitted = check(define(program(seed), "run"), (300, 0), options={"threshold": 2})
        deferred += "_CHECKED" in jit_module.dump(jitted, "uops")
    assert deferred >= 4, deferred
