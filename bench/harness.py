"""What every section of the benchmark shares: the section interface, timed functions, result checks, warm-up.

A section (``bench/kernelspeed.py``, ``bench/nestcost.py``, ``bench/handoff.py``, ``bench/noslowdown.py``) is
built the same way in pyperf's main process and in every worker process it spawns, from the command-line
options alone, so that all of them list the same timings in the same order (pyperf runs timing number k of that
list in worker task k). Only the main process calls ``prepare`` (results checked against plain CPython, first
calls, ``jit.stats``, Numba's compilation) and ``table``. Nothing here imports pyperf: the tests build sections
and tables without it.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from jit import jit

#: warm-up of a jitted callable ends after this many calls that compiled nothing new, or after MAX_WARMUP_CALLS
STABLE_CALLS = 3
MAX_WARMUP_CALLS = 20
#: and goes on while a loop still counts its warm-up (option warmup), for at most this long (a loop of a few
#: iterations a call may take millions of calls to warm up)
MAX_WARMING_SECONDS = 1.0


@dataclass
class Timing:
    """One pyperf benchmark: ``time_func(loops)`` returns the seconds taken by ``loops`` runs; pyperf divides
    by ``inner_loops`` as well (a run that makes many calls). ``store`` receives the pyperf result."""

    name: str
    time_func: Callable[[int], float]
    store: Callable[[Any], None]
    inner_loops: int = 1
    metadata: dict[str, str] = field(default_factory=dict)
    #: main process only: seconds of one steady-state ``time_func(1)`` measured by prepare, from which bench.py
    #: picks pyperf's loops instead of spending a calibration process on each benchmark
    seconds_per_run: float | None = None


class Section(Protocol):
    """One section of the benchmark (see the module docstring)."""

    #: the name used by ``--sections``
    name: str
    #: the markdown heading of its table
    title: str
    #: keys of the Numba variants not to time (what the main process's prepare found Numba cannot run)
    numba_skip: frozenset[str]

    def prepare(self, repeats: int) -> None:
        """Main process only, before any timing: check results, time first calls (median of ``repeats``
        fresh instances), read ``jit.stats``, compile with Numba. Raises WrongResult on a JIT bug."""

    def numba_skipped(self) -> list[str]:
        """After prepare: the keys of the Numba variants that must not be timed (Numba could not compile or
        run them), forwarded to the worker processes."""

    def timings(self) -> list[Timing]:
        """The pyperf benchmarks of this section, the same list in every process."""

    def table(self) -> str:
        """After the timings: the markdown table and its notes."""


class WrongResult(AssertionError):
    """A jitted function returned something other than what plain CPython returned: a bug of tracejit."""


def check(name: str, variant: str, what: str, got: Any, expected: Any) -> None:
    """Raise WrongResult unless got equals expected, with the same type."""
    if type(got) is not type(expected) or got != expected:
        raise WrongResult(
            f"JIT BUG: {name} ({variant}, {what}) returned {got!r} ({type(got).__name__}), "
            f"plain CPython returned {expected!r} ({type(expected).__name__})"
        )


def is_jitted(f: Any) -> bool:
    """Whether f is a jit instance (Numba's dispatchers have a ``py_func`` too: ask jit.stats)."""
    try:
        jit.stats(f)
    except TypeError:
        return False
    return True


def jit_progress(f: Any) -> tuple[int, int, int, int]:
    s = jit.stats(f)
    return s["traces_compiled"], s["aborts_total"], s["invalidated_trees"], len(s["warming_loops"])


def wait_for_compiles(f: Any, timeout: float = 30.0) -> None:
    """Wait until no trace of jit instance f is compiling in the background (jit.background)."""
    deadline = time.perf_counter() + timeout
    while jit.stats(f)["compiles_pending"] and time.perf_counter() < deadline:
        time.sleep(0.001)


def warm_up(run: Callable[[], Any], jitted: Any = None) -> Any:
    """Call ``run()`` once, then, if ``jitted`` is a jit instance, until its JIT has compiled nothing new for a
    few calls (an outer loop with few iterations per call gets hot only after several calls; side traces grow
    after a few exits) and no loop counts its warm-up any more (``MAX_WARMING_SECONDS``). Returns the last
    result."""
    result = run()
    if jitted is None or not is_jitted(jitted):
        return result
    seen = None
    stable = 0
    calls = 0
    deadline = time.perf_counter() + MAX_WARMING_SECONDS
    while True:
        wait_for_compiles(jitted)
        key = jit_progress(jitted)
        stable = stable + 1 if key == seen else 0
        warming = key[3] > 0 and time.perf_counter() < deadline
        if (stable >= STABLE_CALLS or calls >= MAX_WARMUP_CALLS) and not warming:
            break
        seen = key
        result = run()
        calls += 1
    return result


def store_in(results: dict[Any, Any], key: Any) -> Callable[[Any], None]:
    """A Timing's ``store``: puts the pyperf result into ``results[key]``."""

    def store(bench: Any) -> None:
        results[key] = bench

    return store


def lazy_time_func(build: Callable[[], tuple[Callable[..., Any], tuple[Any, ...]]]) -> Callable[[int], float]:
    """pyperf's time_func(loops), timing ``f(*args)``. ``build()`` returns ``(f, args)``, already warmed up;
    it runs untimed on the first call, so that only the worker process that runs this benchmark pays for
    making the variant (a jit instance, a Numba compilation)."""
    holder: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []

    def time_func(loops: int) -> float:
        if not holder:
            holder.append(build())
        f, args = holder[0]
        timer = time.perf_counter
        t0 = timer()
        for _ in range(loops):
            f(*args)
        return timer() - t0

    return time_func


def paired_time_func(build: Callable[[], tuple[Callable[[], Any], Callable[[], Any]]]) -> Callable[[int], float]:
    """pyperf's time_func(loops) for a ratio measured in one process: ``build()`` returns ``(base, other)``, two
    warmed-up zero-argument runs; they alternate ``loops`` times (in turn first and second, so that neither always
    runs on caches the other warmed), and the result is ``loops`` times ``other``'s total time over ``base``'s. So
    pyperf's value for this benchmark is that ratio (a number, though pyperf calls it seconds). Load from other
    processes, a slower CPU frequency or a worker's unlucky memory layout slows both runs of a pair alike, which
    separate pyperf benchmarks, one worker process each, cannot cancel."""
    holder: list[tuple[Callable[[], Any], Callable[[], Any]]] = []

    def time_func(loops: int) -> float:
        if not holder:
            holder.append(build())
        runs = holder[0]  # (base, other)
        timer = time.perf_counter
        totals = [0.0, 0.0]
        for i in range(loops):
            first = i % 2  # (other goes first in every second pair)
            for which in (first, 1 - first):
                t0 = timer()
                runs[which]()
                totals[which] += timer() - t0
        return loops * totals[1] / totals[0]

    return time_func


def timed(run: Callable[[], Any]) -> tuple[Any, float]:
    """Run once: (result, seconds)."""
    t0 = time.perf_counter()
    result = run()
    return result, time.perf_counter() - t0


@dataclass
class SteadyCall:
    """One call of a warmed-up jit instance, with jit.stats around it."""

    result: Any
    seconds: float
    before: dict[str, Any]
    after: dict[str, Any]

    def delta(self, counter: str) -> int:
        return self.after[counter] - self.before[counter]


def steady_call(f: Any, run: Callable[[], Any]) -> SteadyCall:
    """Run once (``run`` calls the jit instance ``f``), reading jit.stats(f) before and after."""
    before = jit.stats(f)
    result, seconds = timed(run)
    return SteadyCall(result, seconds, before, jit.stats(f))


def first_call_ms(make: Callable[[], Any], call: Callable[[Any], Any], repeats: int) -> tuple[float, list[Any]]:
    """Median milliseconds of the first call of ``repeats`` fresh instances (``make()``), and the instances
    with their results as (instance, result) pairs."""
    times: list[float] = []
    made: list[Any] = []
    for _ in range(repeats):
        instance = make()
        t0 = time.perf_counter()
        result = call(instance)
        times.append((time.perf_counter() - t0) * 1e3)
        if is_jitted(instance):
            wait_for_compiles(instance)  # (not into the next instance's first call)
        made.append((instance, result))
    return statistics.median(times), made
