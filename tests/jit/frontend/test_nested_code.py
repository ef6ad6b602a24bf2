"""Generator expressions (``jit.frontend.nested_code``): CPython compiles their code, makes and runs the
generator, and the loop around it is compiled. Each checked against CPython: results, laziness (side effects in order, short-circuits), exceptions
and tracebacks through the generator's frame, private names, globals; and through jit.stats that the loop ran
natively. One that reads a variable of the function is refused, and jit.explain says which. (Those that a builtin
consumes at once, `sum(...)` say, are inlined instead, ``jit.frontend.consumers``: the tests here then check that
path against CPython as well; the refused ones are consumed by math.fsum, which is not inlined.)"""

from __future__ import annotations

import traceback

import pytest
from helpers import check, define

import jit as jit_module
from jit import jit

SOURCE = """
import math

SCALE = 2

class Particle:
    def __init__(self, v):
        self.v = v

    def energy(self):
        return self.v * self.v * SCALE


def swarm_energy(n):
    swarm = [Particle(i % 7 - 3) for i in range(20)]
    total = 0
    for step in range(n):
        for p in swarm:
            p.v = -p.v if p.v > 2 else p.v + 1
        total += sum(p.energy() for p in swarm)
    return total


def lazy_any(rows, log):
    hits = 0
    for row in rows:
        if any(log.append(x) or x > 3 for x in row):
            hits += 1
    return hits, log


def several_clauses(rows):
    out = []
    for row in rows:
        out.append(tuple(a * b for a in row if a for b in range(a % 5) if (a + b) % 2))
        out.append(max((len(str(x)) for x in row), default=-1))
    return out


def kept_for_later(n):
    made = []
    for i in range(n):
        made.append(x * 2 for x in range(i % 4))
    return [list(g) for g in made]


def divides(rows):
    total = 0.0
    for row in rows:
        total += sum(1 / x for x in row)
    return total


def not_iterable(values):
    total = 0
    for v in values:
        total += sum(x for x in v)
    return total


def rebinds_scale(n):
    global SCALE
    total = 0
    for i in range(n):
        if i == n // 2:
            SCALE = 5
        total += sum(SCALE for _ in range(3))
    SCALE = 2
    return total


class Private:
    def __init__(self):
        self.__weight = 3

    def weighted(self, rows):
        total = 0
        for row in rows:
            total += sum(self.__weight * x for x in row)
        return total


def in_comprehension(rows):
    out = 0
    for r in range(3):
        out += sum([sum(x for x in (1, 2, 3)) for _ in rows])
    return out


def reads_fixed_variables(rows, scale):
    k = 3
    total = 0
    kept = []
    for row in rows:
        total += sum(x * k * scale for x in row)
        kept.append(x + k for x in row)
    return total, [list(g) for g in kept[-3:]]


def reads_a_changing_variable(rows):
    total = 0
    for k, row in enumerate(rows):
        total += math.fsum(x * k for x in row)  # (CPython's generator; sum's is inlined, jit.frontend.consumers)
    return total


def reads_a_comprehension_variable(rows, n):
    total = 0
    for row in rows:
        total += sum([math.fsum(x * n for x in row) for n in range(3)])
    return total


def generators_in_comprehensions(n):
    names = []
    for i in range(n):
        names.append({j: (x for x in ()) for j in range(1)}[0].__qualname__)
        names.append([(x for x in ()) for j in range(1)][0].__qualname__)
    return names[-2:]


def qualname_of_generator(n):
    names = []
    for i in range(n):
        names.append((x for x in ()).__qualname__)
    return names[-1]
"""

NS: dict = {}
for _name in (
    "swarm_energy",
    "lazy_any",
    "several_clauses",
    "kept_for_later",
    "divides",
    "not_iterable",
    "rebinds_scale",
    "Private",
    "in_comprehension",
    "reads_fixed_variables",
    "reads_a_changing_variable",
    "reads_a_comprehension_variable",
    "qualname_of_generator",
    "generators_in_comprehensions",
):
    NS[_name] = define(SOURCE, _name, NS)


def test_a_sum_of_a_generator_in_a_hot_loop_is_native():
    jitted = check(NS["swarm_energy"], 200, native=True)
    text = jit_module.explain(jitted.cpython_baseline)
    gave_up = text.split("recordings that gave up")[1] if "recordings that gave up" in text else ""
    assert "generator" not in gave_up, text  # (no recording gave up on it: the generator's code is called)


def test_laziness_and_short_circuits_are_cpythons():
    rows = [[1, 2, 5, 9], [0, 1], [4], []] * 100
    check(NS["lazy_any"], (rows, []), native=True)


def test_several_clauses_conditions_and_defaults():
    rows = [[1, 2, 3], [], [0, 5], [10**20, -3]] * 80
    check(NS["several_clauses"], (rows,), native=True)


def test_generators_kept_and_consumed_later():
    check(NS["kept_for_later"], 400, native=True)


def test_an_exception_in_the_generator_has_cpythons_traceback():
    rows = [[1.0, 2.0]] * 300 + [[1.0, 0.0]]
    jitted = check(NS["divides"], (rows,), native=True)
    for f in (NS["divides"], jitted, jitted.cpython_baseline):
        with pytest.raises(ZeroDivisionError, match="division by zero") as info:
            f(rows)
        frames = [(frame.name, frame.line) for frame in traceback.extract_tb(info.tb)][-2:]
        assert frames == [
            ("divides", "total += sum(1 / x for x in row)"),
            ("<genexpr>", "total += sum(1 / x for x in row)"),
        ]


def test_an_iterable_that_is_not_one_raises_as_cpython():
    check(NS["not_iterable"], ([[1, 2]] * 300 + [5],), native=True)


def test_a_global_rebound_in_the_loop_is_seen_by_the_generator():
    check(NS["rebinds_scale"], 600, native=True)


def test_private_names_are_mangled_as_in_the_class():
    rows = [[1, 2, 3]] * 400
    jitted = check(lambda rows: NS["Private"]().weighted(rows), (rows,))
    method = jit(NS["Private"].weighted)
    assert method(NS["Private"](), rows) == 7200 and jit_module.stats(method)["native_iterations"] > 0, jitted


def test_a_generator_in_a_comprehension():
    check(NS["in_comprehension"], ([1, 2, 3] * 200,), native=True)


def test_the_generator_has_cpythons_qualified_name():
    jitted = check(NS["qualname_of_generator"], 300, native=True)
    assert jitted(300) == "qualname_of_generator.<locals>.<genexpr>"


def test_qualified_names_inside_comprehensions_are_cpythons():
    check(NS["generators_in_comprehensions"], 300, native=True)


def test_variables_bound_for_good_are_given_to_the_generator_when_it_is_made():
    rows = [[1, 2], [3], []] * 150
    check(NS["reads_fixed_variables"], (rows, 2), (rows, 0.5), native=True)


def test_a_generator_reading_a_variable_that_changes_reads_its_cell():
    # (k, the loop's variable, is a cell variable: the generator's closure holds that cell, as CPython's does)
    rows = [[1, 2]] * 300
    jitted = check(NS["reads_a_changing_variable"], (rows,), native=True)
    assert "may change" not in jit_module.explain(jitted)


def test_a_generator_reading_a_comprehension_variable_is_refused_and_explained():
    jitted = check(NS["reads_a_comprehension_variable"], ([[1, 2]] * 300, 7))
    report = jit_module.explain(jitted)
    assert "generator expression reading a variable of a comprehension around it (n)" in report, report
