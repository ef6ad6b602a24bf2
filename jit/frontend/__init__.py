"""Front end: a Python function's source to tier-1 instructions (see ``instructions``)."""

from __future__ import annotations

import types

from jit.frontend.instructions import T1Code
from jit.frontend.source import locate
from jit.frontend.statements import compile_function
from jit.frontend.unsupported import Unsupported


def compile_to_tier1(func: types.FunctionType, partial: bool = False, inlined: bool = False) -> T1Code:
    """Compile func to tier-1 code, or raise Unsupported naming the construct and its line. partial: code for
    the loops CPython hands over, statements outside them it cannot compile left to CPython
    (``T1Code.cpython_only``). inlined: a callee to inline (``jit.inline``), which may be a closure reading
    variables of enclosing functions (``LOAD_FREE`` reads its cells) or a lambda."""
    return compile_function(locate(func, inlined), partial, inlined)


__all__ = ["T1Code", "Unsupported", "compile_to_tier1"]
