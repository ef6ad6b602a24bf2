"""Options of ``@jit(...)``, with their defaults and checks."""

from __future__ import annotations

import dataclasses
from typing import Any

from jit import environment

#: ``warmup``'s default: about 14 ms of ``s += i`` in CPython (14 ns an iteration here), what recording and
#: compiling a loop's first trace costs (10-50 ms; LLVM's start, once per process, comes on top)
DEFAULT_WARMUP = 1_000_000


@dataclasses.dataclass(frozen=True)
class Options:
    """Tuning knobs of one jitted function. Every field is a keyword of ``@jit(...)``."""

    #: record a trace once a loop has taken this many back-edges (0: never compile, interpret only)
    threshold: int = 64
    #: a loop is first handed to the JIT once CPython has run it for ``warmup`` iterations of the smallest loop
    #: body's worth (``s += i``; an iteration of a bigger body, inner loops included, counts for its tier-1
    #: instructions over that one's), or ``threshold`` iterations if that is more: code whose loops run only
    #: briefly in a process never pays for recording and compiling (``runtime.loop_driver.warmup_count``). Once
    #: per loop: after a back-off, ``threshold`` again. 0: ``threshold`` only. The environment variable
    #: ``TRACEJIT_WARMUP`` sets the default (the test suite runs with 0)
    warmup: int = dataclasses.field(default_factory=lambda: environment.warmup(DEFAULT_WARMUP))
    #: grow a side trace from an exit once it has been taken this many times (0: never)
    side_exit_threshold: int = 16
    #: let outer loops call the compiled trees of inner loops
    nesting: bool = True
    #: compile a side trace that jumps back to its own tree's loop in one function with a copy of that loop (and
    #: the tree's other such side traces), so that both ways of the loop stay in native code's registers
    #: (``codegen.joined``); False: each side trace is a function of its own (to compare the two)
    join_side_traces: bool = True
    #: uops in one trace before recording gives up
    max_trace_length: int = 2000
    #: side traces per tree
    max_side_traces: int = 32
    #: trees (one per entry type map) per loop header
    max_trees_per_loop: int = 4
    #: loops nested inside one another through tree calls
    max_nesting_depth: int = 8
    #: an inner ``for`` over a range with at most this many iterations when the outer loop is recorded, whose
    #: bounds do not change in the outer loop, is recorded through (unrolled into the outer trace, a guard per
    #: iteration) instead of calling its tree: a tree call per outer iteration costs more than a few short
    #: iterations (0: always call the tree). Its iterations times its body's tier-1 instructions must also be
    #: at most ``jit.recorder.recorder.UNROLL_BUDGET`` (the outer trace's length, and its compile time). Each
    #: visit of its header counts as a native iteration, as its tree's would (``min_native_iterations``,
    #: ``jit.stats``)
    unroll_max_trips: int = 16
    #: calls of Python functions recorded into a trace (their bodies inlined), nested at most this deep (0: none)
    max_inline_depth: int = 3
    #: failed recordings at one loop header or exit before it is blacklisted for good
    max_aborts: int = 4
    #: a loop that CPython hands to the JIT keeps being handed over only while its native code runs at least
    #: this many iterations per entry on average (else CPython runs it, retried after a back-off); 0: always.
    #: That is for the smallest loop body; an iteration of a bigger one counts for more
    #: (``runtime.loop_driver.body_weight``)
    min_native_iterations: int = 192
    #: LLVM optimization: 0 none; 1 and 2 the passes chosen for traces (``codegen.engine.TRACE_PASSES``), with
    #: codegen at that level; 3 LLVM's default O3 pipeline (slower to compile, for comparison)
    opt_level: int = 2
    #: tiered compilation (``jit.tiering``): compile traces at optimization level 0 first (about half the compile
    #: time per trace, code two to six times slower), then compile a tree again at ``opt_level``, with the trees it
    #: calls or jumps into, once it has run this many native iterations entered from Python; 0: off, every trace
    #: compiled at ``opt_level`` once (also off with ``opt_level`` 0)
    tier_up_threshold: int = 0
    #: compile traces with LLVM on the thread that recorded them, which waits (True), or in the background while
    #: the interpreter goes on and enters the code once it is installed (False; ``jit.background``)
    sync_compile: bool = True
    #: calls raise (``jit.UnsupportedFunctionError``, ``jit.NativeCodeUnavailableError``) instead of running as
    #: plain CPython when the front end refuses the function or native code cannot be generated in this process
    strict: bool = False
    #: run the whole function in tracejit's tier-1 interpreter (the reference semantics; for tests) instead of
    #: letting CPython run it and hand hot loops to the JIT
    interpreter: bool = False
    #: enter compiled trees through their native entry stubs (``codegen.entry``: types checked, values unboxed
    #: and the exit's state boxed in native code); False: in Python, as when a stub refuses an entry (to compare
    #: the two in benchmarks and tests)
    entry_stubs: bool = True
    #: keep the object code of compiled traces on disk (``codegen.cache``), so that later processes running the
    #: same function with the same options skip LLVM: ``__pycache__/tracejit/`` next to the source file, or the
    #: user's cache directory, or ``TRACEJIT_CACHE_DIR``
    cache: bool = False

    @property
    def first_opt_level(self) -> int:
        """The optimization level traces are compiled at first: 0 with tiered compilation on (``jit.tiering``),
        else opt_level."""
        return 0 if self.tier_up_threshold and self.opt_level > 0 else self.opt_level

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.type == "bool":
                if not isinstance(value, bool):
                    raise TypeError(f"jit option {field.name!r} must be a bool, got {type(value).__name__}")
            elif type(value) is not int:
                raise TypeError(f"jit option {field.name!r} must be an int, got {type(value).__name__}")
            elif value < 0:
                raise ValueError(f"jit option {field.name!r} must be >= 0, got {value}")
        if self.opt_level > 3:
            raise ValueError(f"jit option 'opt_level' must be between 0 and 3, got {self.opt_level}")
        if self.max_trace_length < 8:
            raise ValueError("jit option 'max_trace_length' must be at least 8")


def make_options(kwargs: dict[str, Any]) -> Options:
    names = {f.name for f in dataclasses.fields(Options)}
    unknown = sorted(set(kwargs) - names)
    if unknown:
        raise TypeError(f"unknown jit option(s) {', '.join(map(repr, unknown))}; valid: {', '.join(sorted(names))}")
    return Options(**kwargs)
