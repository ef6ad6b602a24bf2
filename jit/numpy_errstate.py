"""NumPy's error state (``np.errstate``, ``np.seterr``) as native code reads it: which floating-point events
NumPy ignores, so that native code need not leave where one of them happens.

NumPy reports four events of float arithmetic and of its ufuncs: division by zero, overflow, underflow and an
invalid result, each as ``np.errstate`` says (ignore, warn, raise, call, print, log). By default it ignores
underflow and warns of the others. Native code used to leave wherever any of the four happened (the
interpreter redoes the operation and NumPy decides), and recording gave up on an operation that had one: a
loop summing ``np.exp(-x * x)`` over values whose exponential underflows to zero (a Gaussian's tail) ran 1.6
iterations per native entry, slower than CPython. Now a trace records under the error state it meets: the
events NumPy ignores there (``Ignored``) are ignored by the trace's NumPy float operations too, behind one
guard (``_GUARD_NP_ERRSTATE``, hoisted to the trace's entry) that the state still ignores them. Only Python code
changes the state, so the guard is checked again wherever native code lets Python code run (a barrier, the
periodic check: the hoisted guards again) and a tree called again from the same place with no Python code run
since skips it (``codegen.python_epoch``). A trace recorded where NumPy ignores nothing has no guard and leaves
on every event, as before.

NumPy 2.x keeps the state in a ``ContextVar`` (``numpy._core._multiarray_umath._extobj_contextvar``) holding a
capsule of ``npy_extobj`` (numpy/_core/src/umath/extobj.h: ``int errmask`` first, three bits per event at the
shifts below). The guard reads it with ``PyContextVar_Get``, then the capsule's pointer and the mask. Both the
capsule's layout and the mask's encoding are checked at the first use against what ``np.geterr()`` says under
several states; where anything differs (or NumPy is older), ``access()`` is None and no trace ignores anything.
"""

from __future__ import annotations

import ctypes
import dataclasses
from typing import Any

from jit import arrays

#: NumPy's events, by the names np.errstate takes
EVENTS = ("divide", "over", "under", "invalid")
#: where each event's mode sits in npy_extobj.errmask (UFUNC_SHIFT_*), three bits each; mode 0 is "ignore"
_SHIFT = {"divide": 0, "over": 3, "under": 6, "invalid": 9}
_MODES = {"ignore": 0, "warn": 1, "raise": 2, "call": 3, "print": 4, "log": 5}
#: x86-64's MXCSR status flag of each event (codegen.float_status)
MXCSR_FLAG = {"invalid": 0x01, "divide": 0x04, "over": 0x08, "under": 0x10}
#: the names <fenv.h> gives them (jit.ufuncs: FE_* bits per machine)
FENV_NAME = {"divide": "divbyzero", "over": "overflow", "under": "underflow", "invalid": "invalid"}
#: PyCapsule: its pointer after PyObject_HEAD (Objects/capsule.c), checked against PyCapsule_GetPointer
CAPSULE_POINTER = 16
_CAPSULE_NAME = b"numpy.ufunc.extobj"
#: the events whose absence a non-finite result of + - * stands for (a / adds a division by zero)
NON_FINITE = frozenset({"over", "invalid"})
NON_FINITE_DIVISION = NON_FINITE | {"divide"}


@dataclasses.dataclass(frozen=True)
class Ignored:
    """_GUARD_NP_ERRSTATE's operand: the events NumPy ignored when the trace was recorded (never empty)."""

    events: frozenset[str]

    def __post_init__(self) -> None:
        assert self.events and self.events <= set(EVENTS), self.events

    @property
    def mask(self) -> int:
        """The bits of npy_extobj.errmask that are 0 where NumPy ignores these events."""
        return sum(7 << _SHIFT[event] for event in self.events)

    def __str__(self) -> str:
        return "+".join(event for event in EVENTS if event in self.events) + " ignored"

    @staticmethod
    def parse(text: str) -> Ignored:
        return Ignored(frozenset(text.removesuffix(" ignored").split("+")))


_checked: dict[str, Any] = {"numpy": None, "access": None}  # (the NumPy module checked, and what was found)


def access() -> Any:
    """The ContextVar native code reads the state from (a constant object), if NumPy is imported and keeps the
    state as checked above; else None."""
    np = arrays.numpy_module()
    if np is None:
        return None
    if _checked["numpy"] is not np:
        _checked["numpy"] = np
        _checked["access"] = _check(np)
    return _checked["access"]


def ignored_now() -> frozenset[str]:
    """The events NumPy ignores in this thread's state now (empty where ``access()`` is None)."""
    np = arrays.numpy_module()
    if np is None or access() is None:
        return frozenset()
    return frozenset(event for event, mode in np.geterr().items() if mode == "ignore" and event in _SHIFT)


def ignored_by(trace: Any) -> frozenset[str]:
    """The events trace's NumPy float operations ignore: those its guard of the error state checks (at its entry,
    before any of them runs). A trace without such a guard ignores nothing; one with two (recorded across a
    change of the state), only what both ignore."""
    events: frozenset[str] | None = None
    for uop in (*trace.hoisted, *trace.uops):
        if uop.name == "_GUARD_NP_ERRSTATE":
            events = uop.operand.events if events is None else events & uop.operand.events
    return events or frozenset()


#: PyCapsule_GetPointer with its own prototype (not ctypes.pythonapi's shared function object, whose argtypes other
#: code in the process may set)
_GET_POINTER = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)


def _mask(np: Any) -> int:
    """This thread's errmask, read as native code reads it."""
    capsule = np._core._multiarray_umath._extobj_contextvar.get()
    pointer = _GET_POINTER(capsule, _CAPSULE_NAME)
    if not pointer or ctypes.c_void_p.from_address(id(capsule) + CAPSULE_POINTER).value != pointer:
        raise LookupError("capsule layout")
    return ctypes.c_int.from_address(pointer).value


def _check(np: Any) -> Any:
    try:
        contextvar = np._core._multiarray_umath._extobj_contextvar
        states = (
            {},
            {"all": "ignore"},
            {"all": "raise"},
            {"divide": "raise", "over": "ignore", "under": "warn", "invalid": "print"},
            {"divide": "log", "over": "call", "under": "ignore", "invalid": "raise"},
        )
        for state in states:
            with np.errstate(**state):
                expected = sum(_MODES[mode] << _SHIFT[event] for event, mode in np.geterr().items())
                if _mask(np) != expected:
                    return None
        return contextvar
    except Exception:
        return None
