"""CPython's own unpacking, `a, b, ... = value`, as a function of value: what the tier-1 interpreter does for an
UNPACK_SEQUENCE it has no fast path for, and what native code calls for one the recorder has no uops for (a str,
a generator, a set, a user's sequence: ``jit.recorder.unpacking``). Its errors are CPython's errors, word for word,
on every supported version, for it is CPython's UNPACK_SEQUENCE that runs.

Its code is compiled with this module's file name: its frame is one of tracejit's own, which tracebacks the user
sees leave out (``runtime.errors``), so an error raised in it shows the user's line only, as under CPython.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_unpackers: dict[int, Callable[[Any], tuple[Any, ...]]] = {}


def unpacker(n: int) -> Callable[[Any], tuple[Any, ...]]:
    """A function doing CPython's own `v0, ..., v{n-1} = value` and returning the tuple of the n items (an exact
    tuple, of exactly n items: anything else raises CPython's error)."""
    fn = _unpackers.get(n)
    if fn is None:
        names = "(" + ", ".join(f"v{i}" for i in range(n)) + ("," if n == 1 else "") + ")"
        namespace: dict[str, Any] = {}
        source = f"def unpack(value):\n    {names} = value\n    return {names}\n"
        exec(compile(source, __file__, "exec"), namespace)
        fn = _unpackers[n] = namespace["unpack"]
    return fn
