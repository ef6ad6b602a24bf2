"""The lowering of every uop to LLVM IR: one entry per uop in ``LOWERINGS``.

Each lowering reproduces CPython's result exactly or guards, leaving to the interpreter before anything
changes, in every case where it cannot (int overflow, division by zero, a math domain error, ...).

One module per kind of value or concept; each registers its entries with ``@lowers``
(``codegen.lower.table``). Importing this package fills the table.
"""

from __future__ import annotations

from codegen.context import llvm_type
from codegen.lower import (  # noqa: F401  (each registers its lowerings)
    attributes,
    branches,
    builtins_math,
    cells,
    floats,
    generic,
    global_names,
    int_objects,
    ints,
    lists,
    loops,
    numpy_ufuncs,
    numpy_values,
    objects,
    strs_dicts,
    structure,
    wide_ints,
)
from codegen.lower.numpy_values import DEFERRING
from codegen.lower.table import LOWERINGS
from jit import uops
from jit.trace import Uop


def check_complete() -> None:
    """The table lowers exactly the uops declared to be lowered by it (``Lowering.TABLE``), each once."""
    table = {name for name, op in uops.UOPS.items() if op.lowering is uops.Lowering.TABLE}
    missing = table - set(LOWERINGS)
    assert not missing, f"uops without a lowering: {sorted(missing)}"
    extra = set(LOWERINGS) - table
    assert not extra, f"lowerings of uops the table does not lower: {sorted(extra)}"


def flushes_deferred(uop: Uop) -> bool:
    """Must the checks deferred so far (LowerContext.check_deferred) be made before uop: is it anything but
    pure (an effect, a guard, an owned value, the end of an iteration) and not itself a deferring one?"""
    return not (uop.op.pure and not uop.op.owns) and uop.name not in DEFERRING


__all__ = ["DEFERRING", "LOWERINGS", "check_complete", "flushes_deferred", "llvm_type"]
