"""NumPy's elementwise math ufuncs as native code calls them on scalars: which ufuncs, and where NumPy's own inner
loop of one type signature is (so native code computes exactly what ``np.exp(x)`` computes, to the last bit).

Of the ufuncs below, ``sqrt``, ``absolute``, ``floor``, ``ceil``, ``minimum`` and ``maximum`` are computed inline
(their results are exact: one IEEE operation, or a selection); ``exp``, ``log``, ``sin`` and ``cos`` call NumPy's
inner loop for ``d->d`` or ``f->f`` (NumPy's implementations, SIMD ones on some machines, differ from the C
library's in the last bit for some arguments). Around that call native code clears the floating-point status
flags (where one is set) and tests them after, as NumPy's ufunc machinery does, and leaves on any of them but
those NumPy's error state ignores (jit.numpy_errstate; the interpreter then calls the ufunc, which warns, raises or
calls back as ``np.errstate`` says).

The inner loop is read from the ``PyUFuncObject`` (numpy/_core/include/numpy/ufuncobject.h, NumPy 2.x, 64-bit:
``nin``, ``nout``, ``nargs``, ``functions``, ``data``, ``ntypes``, ``types``); the fields are compared with what
the ufunc says of itself from Python (its arity, its ``types`` list) before any loop is used, and a ufunc whose
fields differ is not native (``inner_loop`` returns None).
"""

from __future__ import annotations

import ctypes
import dataclasses
import platform
from typing import Any

from jit import arrays

UFUNC_NIN = 16  # int nin
UFUNC_NOUT = 20  # int nout
UFUNC_NARGS = 24  # int nargs
UFUNC_FUNCTIONS = 32  # PyUFuncGenericFunction *functions
UFUNC_DATA = 40  # void *const *data
UFUNC_NTYPES = 48  # int ntypes
UFUNC_TYPES = 64  # const char *types: nargs type numbers per loop

#: the ufuncs native code computes on scalars, by name (``numpy.abs`` is ``numpy.absolute``)
INLINE = ("sqrt", "absolute", "floor", "ceil", "minimum", "maximum")
THROUGH_LOOP = ("exp", "log", "sin", "cos")
NAMES = INLINE + THROUGH_LOOP

# <fenv.h>'s exception bits, by machine (the FP status flags NumPy tests after a ufunc's loop)
_FE_BITS = {
    "x86_64": {"invalid": 0x01, "divbyzero": 0x04, "overflow": 0x08, "underflow": 0x10},
    "AMD64": {"invalid": 0x01, "divbyzero": 0x04, "overflow": 0x08, "underflow": 0x10},
    "aarch64": {"invalid": 0x01, "divbyzero": 0x02, "overflow": 0x04, "underflow": 0x08},
    "arm64": {"invalid": 0x01, "divbyzero": 0x02, "overflow": 0x04, "underflow": 0x08},
}


def fe_events() -> int | None:
    """The mask of the floating-point events NumPy reports (``FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW |
    FE_UNDERFLOW``) on this machine, or None where it is not known (then no ufunc loop is called natively)."""
    bits = fe_bits()
    return None if bits is None else sum(bits.values())


def fe_bits() -> dict[str, int] | None:
    """Each of those events' bit (by <fenv.h>'s name: ``invalid``, ``divbyzero``, ``overflow``, ``underflow``),
    or None where they are not known."""
    bits = _FE_BITS.get(platform.machine())
    if bits is None or fenv_functions() is None:
        return None
    return bits


_fenv: dict[str, tuple[int, int] | None] = {}


def fenv_functions() -> tuple[int, int] | None:
    """The addresses of the C library's ``feclearexcept`` and ``fetestexcept`` (``int f(int excepts)``), as
    loaded in this process; None if they are not found."""
    if "found" not in _fenv:
        try:
            process = ctypes.CDLL(None)
            clear = ctypes.cast(process.feclearexcept, ctypes.c_void_p).value
            test = ctypes.cast(process.fetestexcept, ctypes.c_void_p).value
            _fenv["found"] = (clear, test) if clear and test else None
        except (AttributeError, OSError):
            _fenv["found"] = None
    return _fenv["found"]


@dataclasses.dataclass(frozen=True)
class InnerLoop:
    """NumPy's inner loop of one ufunc for one type (``char *args[], npy_intp *dimensions, npy_intp *steps,
    void *data``): its address and its data pointer (both as integers)."""

    function: int
    data: int


def ufunc_named(fn: Any) -> str | None:
    """The name (one of ``NAMES``) of fn if it is that very NumPy ufunc, else None."""
    np = arrays.numpy_module()
    if np is None or type(fn) is not np.ufunc:
        return None
    name = getattr(fn, "__name__", None)
    if name in NAMES and getattr(np, name, None) is fn:
        return name
    return None


def _read(address: int, ctype: Any) -> Any:
    return ctype.from_address(address).value


_loops: dict[tuple[str, str], InnerLoop | None] = {}


def inner_loop(name: str, char: str) -> InnerLoop | None:
    """NumPy's inner loop of ufunc ``numpy.<name>`` for type char (``"d"``: float64, ``"f"``: float32), one
    input and one output of that type; None if the ufunc's fields are not as expected."""
    key = (name, char)
    if key not in _loops:
        _loops[key] = _find(name, char)
    return _loops[key]


def _find(name: str, char: str) -> InnerLoop | None:
    np = arrays.numpy_module()
    if np is None or fe_events() is None:
        return None
    ufunc = getattr(np, name)
    address = id(ufunc)
    try:
        nargs = ufunc.nin + ufunc.nout
        fields = (_read(address + UFUNC_NIN, ctypes.c_int), _read(address + UFUNC_NOUT, ctypes.c_int))
        if fields != (ufunc.nin, ufunc.nout) or _read(address + UFUNC_NARGS, ctypes.c_int) != nargs:
            return None
        if _read(address + UFUNC_NTYPES, ctypes.c_int) != ufunc.ntypes:
            return None
        numbers = ctypes.string_at(_read(address + UFUNC_TYPES, ctypes.c_void_p), ufunc.ntypes * nargs)
        for index, signature in enumerate(ufunc.types):
            chars = signature.replace("->", "")
            if list(numbers[index * nargs : (index + 1) * nargs]) != [np.dtype(c).num for c in chars]:
                return None
        signature = f"{char * ufunc.nin}->{char * ufunc.nout}"
        if signature not in ufunc.types:
            return None
        index = ufunc.types.index(signature)
        function = _read(_read(address + UFUNC_FUNCTIONS, ctypes.c_void_p) + 8 * index, ctypes.c_void_p)
        data = _read(_read(address + UFUNC_DATA, ctypes.c_void_p) + 8 * index, ctypes.c_void_p) or 0
        return InnerLoop(function, data) if function else None
    except Exception:
        return None
