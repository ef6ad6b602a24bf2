"""tracejit: a tracing JIT compiler for numeric Python functions, on LLVM.

    from jit import jit

    @jit
    def f(n): ...

``jit.explain(f)`` reports what runs where and why not.
"""

from __future__ import annotations

from jit.api import dump, explain, jit, stats

__all__ = ["dump", "explain", "jit", "stats"]
