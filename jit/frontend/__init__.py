"""Front end: a Python function's source to tier-1 instructions (see ``instructions``)."""

from __future__ import annotations

import types

from jit.frontend.instructions import T1Code
from jit.frontend.source import locate
from jit.frontend.statements import compile_function
from jit.frontend.unsupported import Unsupported


def compile_to_tier1(func: types.FunctionType) -> T1Code:
    """Compile func to tier-1 code, or raise Unsupported naming the construct and its line."""
    return compile_function(locate(func))


__all__ = ["T1Code", "Unsupported", "compile_to_tier1"]
