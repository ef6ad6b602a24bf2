"""The Python epoch: a process-wide counter of the places where native code may have let Python code run.

Only Python code changes an array's dtype, layout or flags, or rebinds a global; native code runs it at a barrier
(after which ``_CHECK_BARRIER`` checks the trace's hoisted guards again) and at the periodic check (signal
handlers: the hoisted guards again too). Both add one to the epoch here. So where an outer trace calls an inner
loop's tree again with the same objects (slots the outer loop never assigns), and the epoch is the one it read
before an earlier call from the same place, which checked the tree's guards on them at its entry, nothing can have
changed what those guards checked: the call goes to the tree's proven entry, which skips them
(``codegen.function``: ``_build_call_entry``; issue 9, item 1: no entry checks what the caller has proven).

A counter, not a flag: each call site keeps the epoch it saw (a local of its function, -1 at the function's
start: its first call checks everything), and no code needs to know which guards another place relies on.
"""

from __future__ import annotations

import ctypes

from llvmlite import ir

from codegen.capi import I64
from jit.uops import PROVEN_BY_CALLERS

SYMBOL = "tj_python_epoch"
#: the counter itself (the JIT libraries import its address: codegen.engine)
_EPOCH = ctypes.c_int64(0)
#: a site's epoch before its first call (the counter never goes below 0)
UNSEEN = -1
#: the hoisted guards a fast copy leaves to whoever enters it (codegen.function): the trace's function (which
#: checked them at its own entry), the tree call entry (through ``_fast_checks``), or, through the proven entry, a
#: caller that called the tree with the same objects before and let no Python code run since: an array's header,
#: and NumPy's error state (only Python code changes it: jit.numpy_errstate)
ENTRY_CHECKED = PROVEN_BY_CALLERS


def addresses() -> dict[str, int]:
    """The symbol the modules name the counter by, and its address."""
    return {SYMBOL: ctypes.addressof(_EPOCH)}


def value() -> int:
    """The counter as it stands (tests)."""
    return _EPOCH.value


def _counter(module: ir.Module) -> ir.GlobalVariable:
    counter = module.globals.get(SYMBOL)
    if counter is None:
        counter = ir.GlobalVariable(module, I64, SYMBOL)  # (a declaration: defined by the process)
    return counter


def read(builder: ir.IRBuilder, module: ir.Module) -> ir.Value:
    """The epoch now."""
    return builder.load(_counter(module))


def advance(builder: ir.IRBuilder, module: ir.Module) -> None:
    """Python code may have run here: later calls check their trees' guards again."""
    counter = _counter(module)
    builder.store(builder.add(builder.load(counter), ir.Constant(I64, 1)), counter)
