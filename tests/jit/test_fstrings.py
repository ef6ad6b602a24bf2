"""f-strings in native loops (jit.recorder.generic: FORMAT_VALUE is ``_FORMAT_VALUE``, the conversion and then
PyObject_Format, a barrier since ``__format__``, ``__str__`` and ``__repr__`` may be Python code, or for an int,
float or bool ``_FORMAT_NUMBER``, their C code; BUILD_STRING is ``_BUILD_STRING``, the join of parts known to be
str). Each checked against CPython (results, types,
exceptions and their messages, side effects) and through jit.stats that the loop ran natively."""

import gc
import sys
import traceback
import tracemalloc

import pytest
from helpers import check

import jit as jit_module
from jit import jit


class Money:
    """Every hook an f-string field can call, written in Python (so that each is a barrier's business)."""

    calls = 0

    def __init__(self, cents):
        self.cents = cents

    def __format__(self, spec):
        Money.calls += 1
        return f"<{spec}>{self.cents / 100:.2f}"

    def __str__(self):
        return f"{self.cents}c"

    def __repr__(self):
        return f"Money({self.cents!r})"


class Shout(str):
    pass


def fields_of_every_kind(n):
    out = []
    for i in range(n):
        x = i * 0.37 - 10
        big = 2**70 * (i - n // 2)
        m = Money(i)
        out.append(
            f"{i},{i:>4},{i:#x},{-i:+d},{x},{x:.1f},{x:10.3e},{i / 7:%},{big},{big:,}|{True}|{None}|{'é'!a}"
            f"|{m}|{m!s}|{m!r}|{m:spec}|{Shout('hi')}|{Shout('hi')!r}|{i % 3 == 0!s:>6}|{-0.0}|{float('nan')}"
        )
    return out


def nested_specs(n, width, digits):
    out = []
    for i in range(n):
        w = width + i % 3
        out.append(f"{i * 1.5:{w}.{digits}f}|{'x':{'<' if i % 2 else '>'}{w}}")
    return out


def one_field_only(n):
    total = 0
    for i in range(n):
        s = f"{i * 2}"
        total += len(s) + int(s)
        t = f"{s}"  # (a str field with no spec nor conversion: the str itself)
        total += t is s
    return total


def test_fields_of_every_kind_run_natively():
    jitted = check(fields_of_every_kind, 40, 3, native=True)
    stats = jit_module.stats(jitted)
    # (Money.__format__ counts its calls on the class: the first recording, which made Money(i) natively under a
    # guard of the class's version, is recorded again calling Money generically)
    assert set(stats["aborts_by_code"]) <= {"CLASS_CHANGED"}, stats["aborts"]
    listing = jit_module.dump(jitted, "uops")
    assert "_FORMAT_VALUE" in listing and "_BUILD_STRING" in listing


def test_nested_format_specs_are_built_and_constant_specs_folded():
    jitted = check(nested_specs, (40, 4, 2), (10, 0, 0), native=True)
    assert jit_module.stats(jitted)["aborts_total"] == 0, jit_module.stats(jitted)["aborts"]
    listing = jit_module.dump(jitted, "uops")
    assert "_BUILD_STRING" in listing  # (the spec `{w}.{digits}f` is built in the loop)


def test_a_str_field_is_the_str_itself():
    jitted = check(one_field_only, 200, native=True)
    first = one_field_only.__code__.co_firstlineno
    lines = {
        line.rsplit("# line ", 1)[1]
        for line in jit_module.dump(jitted, "uops").splitlines()
        if "_FORMAT_VALUE" in line or "_FORMAT_NUMBER" in line
    }
    assert lines == {str(first + 3)}  # (`{i * 2}` only; `{s}` is s)


def bad_spec(values, k):
    out = []
    for i, v in enumerate(values):
        if i == k:
            v = "text"
        out.append(f"{v:d}")  # (a str has no `d` format: ValueError from str.__format__)
    return out


def test_a_format_error_raises_cpythons_exception_at_the_users_line():
    jitted = check(bad_spec, (list(range(100)), 60), (list(range(100)), 1000), native=True)
    f = jit(threshold=2)(bad_spec)
    f(list(range(100)), 1000)
    with pytest.raises(ValueError, match="Unknown format code 'd' for object of type 'str'") as info:
        f(list(range(100)), 60)
    frames = traceback.extract_tb(info.tb)
    assert frames[-1].name == "bad_spec" and frames[-1].line.startswith('out.append(f"{v:d}")')
    assert jit_module.stats(jitted)["native_iterations"] > 0


class Countdown:
    def __init__(self, fail_at):
        self.fail_at = fail_at
        self.seen = []

    def __format__(self, spec):
        self.seen.append(spec)
        if len(self.seen) == self.fail_at:
            raise KeyError(f"format #{len(self.seen)}")
        return spec


def formats_once_each(c, n):
    out = []
    for i in range(n):
        out.append(f"{c:{i}}")
    return out


def test_a_raising_format_is_called_once_and_earlier_effects_stay():
    plain = Countdown(70)
    with pytest.raises(KeyError) as expected:
        formats_once_each(plain, 100)
    c = Countdown(70)
    f = jit(threshold=2)(formats_once_each)
    with pytest.raises(KeyError) as got:
        f(c, 100)
    assert str(got.value) == str(expected.value)
    assert c.seen == plain.seen  # (no field formatted twice, none skipped)
    assert jit_module.stats(f)["native_iterations"] > 0


def test_python_format_hooks_are_called_as_often_as_in_cpython():
    Money.calls = 0
    fields_of_every_kind(30)
    expected = Money.calls
    f = jit(threshold=2)(fields_of_every_kind)
    Money.calls = 0
    assert f(30) == fields_of_every_kind(30)
    assert Money.calls == 2 * expected
    assert jit_module.stats(f)["native_iterations"] > 0


def labels(key, n):
    total = 0
    for i in range(n):
        total += len(f"{key}:{i}:{key!r}")
    return total


def test_no_reference_is_leaked_by_fstrings_over_100000_iterations():
    key = "".join(["lab", "el"])  # (a str of its own: its count is this test's)
    f = jit(threshold=2, min_native_iterations=0)(labels)
    assert f(key, 1000) == labels(key, 1000)
    gc.collect()
    before = sys.getrefcount(key)
    tracemalloc.start()
    try:
        f(key, 1000)
        gc.collect()
        start, _ = tracemalloc.get_traced_memory()
        assert f(key, 100_000) == labels(key, 100_000)
        gc.collect()
        end, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sys.getrefcount(key) == before
    assert end - start < 100_000  # (100,000 leaked strings would be megabytes)
    stats = jit_module.stats(f)
    assert stats["native_iterations"] >= 100_000 and "_BUILD_STRING" in jit_module.dump(f, "uops")


def numbers_formatted(n):
    out = []
    big = 2**70
    for i in range(n):
        x = i * 0.37 - 3.0
        b = i % 2 == 0
        out.append(f"{i}|{i!r}|{x}|{x!s}|{x!a}|{b}|{b!r}|{x:.2f}|{i:>6,}|{i:#x}|{big + i}|{-x:+.3e}|{i * i}")
    return out


def odd_floats(values):
    return [f"{v}|{v:g}|{v!r}" for v in values] + [f"{v:>9.1f}" for v in values]


def odd_floats_loop(values):
    out = []
    for v in values:
        out.append(f"{v}|{v:g}|{v!r}|{v:>9.1f}")
    return out


def spec_refused(n, k):
    out = []
    for i in range(n):
        v = i if i != k else i * 0.5
        out.append(f"{v:d}")  # (a float refuses `d`: ValueError from float.__format__, in native code)
    return out


def test_numbers_are_formatted_by_their_c_code_with_no_barrier():
    """An f-string field of an int, float or bool, with any conversion and no spec, or a constant spec and no
    conversion, is ``_FORMAT_NUMBER``: their C code, no barrier; its errors are CPython's."""
    jitted = check(numbers_formatted, 0, 3, 80, native=True)
    check(odd_floats_loop, [0.0, -0.0, float("nan"), float("inf"), -float("inf"), 1e300, 5e-324, 0.1] * 10)
    check(spec_refused, (60, 100), (60, 40), native=True)
    f = jit(threshold=2)(numbers_formatted)
    f(50)
    uops = jit_module.dump(f, "uops")
    assert "_FORMAT_NUMBER" in uops and "_FORMAT_VALUE" not in uops and "_CHECK_BARRIER" not in uops
    assert jit_module.stats(jitted)["native_iterations"] > 0
