"""Formatting the benchmark's markdown tables: times, pyperf results, speed ratios.

A pyperf result is anything with ``median()`` and ``get_values()`` (``pyperf.Benchmark``); ``None`` stands for a
variant that was not timed and shows as "-".
"""

from __future__ import annotations

import statistics
from typing import Any


def plural(count: int, word: str, suffix: str = "s") -> str:
    return f"{count} {word}{'' if count == 1 else suffix}"


def fmt_time(seconds: float) -> str:
    ms = seconds * 1e3
    if ms >= 100:
        return f"{ms:.0f} ms"
    if ms >= 10:
        return f"{ms:.1f} ms"
    if ms >= 1:
        return f"{ms:.2f} ms"
    us = ms * 1e3
    if us >= 1:
        return f"{us:.0f} us"
    return f"{us * 1e3:.0f} ns"


def spread(bench: Any) -> str:
    """The relative standard deviation of a pyperf result's values, as " ± 12%" (empty for a single value)."""
    values = bench.get_values()
    if len(values) < 2:
        return ""
    return f" ± {statistics.stdev(values) / statistics.median(values) * 100:.0f}%"


def fmt_bench(bench: Any) -> str:
    """A pyperf result as its median time and spread, or "-"."""
    if bench is None:
        return "-"
    return fmt_time(bench.median()) + spread(bench)


def fmt_per_unit(bench: Any, units: int, scale: float, unit: str) -> str:
    """A pyperf result divided by a count (per outer iteration, per call), in ns (scale 1e9) or us (1e6)."""
    if bench is None or units <= 0:
        return "-"
    value = bench.median() / units * scale
    text = f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.3g}"
    return f"{text} {unit}{spread(bench)}"


def speed(slow: Any, fast: Any) -> float | None:
    """How many times faster ``fast`` ran than ``slow`` (ratio of medians), or None if either is missing."""
    if slow is None or fast is None:
        return None
    return slow.median() / fast.median()


def fmt_ratio(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 10:
        return f"{value:.0f}x"
    if value >= 0.1:
        return f"{value:.2f}x" if value < 1 else f"{value:.1f}x"
    return f"{value:.2g}x"


def markdown(header: list[str], align: str, rows: list[list[str]]) -> list[str]:
    """A markdown table: align has one letter per column, "l" or "r"."""
    assert len(header) == len(align), (header, align)
    rule = ["---" if a == "l" else "---:" for a in align]
    return ["| " + " | ".join(cells) + " |" for cells in (header, rule, *rows)]
