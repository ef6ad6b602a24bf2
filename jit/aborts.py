"""Why a recording gives up: every abort reason declared once, with a stable code and a message template.

The recorder and the specializer raise ``Abort(Reason.X, **params)``; the monitor counts each abort under its
message (``jit.stats(f)["aborts"]``, ``jit.explain``) and under its code (``jit.stats(f)["aborts_by_code"]``).
A reason's code is its member name and never changes meaning; its template is filled with ``str.format``.
This module is part of the bottom layer: it imports nothing of tracejit's.
"""

from __future__ import annotations

import enum
from typing import Any


@enum.unique
class Reason(enum.Enum):
    """An abort reason: ``template`` is its message, to fill with parameters; ``retry`` marks the reasons that say
    nothing about the loop (it happened to end while being recorded, by its end, a `return` or an exception):
    the monitor tries again at the next chance without backing off."""

    # --- the trace as a whole ----------------------------------------------------------------------------
    LOOP_ENDED = ("the loop ended while it was being recorded", True)
    TOO_LONG = "trace longer than max_trace_length ({limit} uops)"
    RETURN_IN_LOOP = ("the function returned in the iteration being recorded", True)
    NOT_COMPILED = "{instruction} is not compiled"
    # (an exception ends the loop: the front end compiles no `try`; a recording of an iteration that does not
    # raise keeps the guard that leaves there, and the interpreter raises CPython's exception at that instruction)
    EXCEPTION_RAISED = ("an exception was raised while recording", True)
    RECORDER_ERROR = "internal error in the recorder: {detail}"
    COMPILER_ERROR = "internal error while compiling: {detail}"

    # --- nested loops --------------------------------------------------------------------------------------
    TOO_DEEP = "nesting deeper than max_nesting_depth ({limit})"
    # (an inner loop that may still get a tree: it records first, the outer loop is recorded once it has one;
    # INNER_NOT_COMPILED is left for an inner loop that will not get one: blacklisted, or at max_trees_per_loop)
    INNER_FIRST = ("the inner loop at line {line} is recorded first (it has no tree for these types yet)", True)
    INNER_BUSY = ("the inner loop at line {line} is being recorded or compiled by another thread", True)
    INNER_NOT_COMPILED = "the inner loop at line {line} has no compiled tree (it would be inlined)"
    INNER_COMPILING = ("the inner loop at line {line} has a tree on its way (compiling in the background)", True)
    INNER_EXIT = "the inner loop's tree left through an exit of code freed meanwhile (invalidated)"
    INNER_WROTE_KIND = "inner tree wrote a slot of an unexpected kind"
    SLOT_KIND_CHANGED = "slot {slot} is {kind}, its tree wrote {known}"
    UNROLLED_BOUND_CHANGES = (
        "the unrolled inner loop at line {line} has a bound the outer loop changes (recorded again, calling its tree)",
        True,
    )

    # --- locals and ranges ---------------------------------------------------------------------------------
    UNBOUND_READ = "read of an unbound local"
    RANGE_REBOUND = "`range` is rebound to something else"
    RANGE_BEYOND_64_BITS = "range bounds beyond 64 bits"
    RANGE_ELSEWHERE = "for over a range built elsewhere"
    RANGE_ARGUMENT = "range() of {kind}"
    RANGE_STEP_ZERO = ("range() step 0 (ValueError)", True)
    FOR_OVER = "for over a {what}"

    # --- globals and attributes ----------------------------------------------------------------------------
    GLOBALS_NOT_DICT = "globals are not a plain dict"
    GLOBAL_STORE_KIND = "storing a {kind} into the global {name} in an inlined call (only a number or None is native)"
    GLOBAL_NOT_NUMBER = (
        "storing a {kind} into the global {name}, which the trace guarded to hold a number (recorded again, not"
        " guarded)",
        True,
    )
    GLOBAL_DELETED = "del of the global {name} holding a {kind} (freeing it could run Python code)"
    MODULE_ATTRIBUTE_STORED = "attribute .{name} of module {module}, a global this function stores"
    ATTRIBUTE = "attribute .{name} of {kind}"
    MODULE_ATTRIBUTE = "attribute .{name} not in module {module}"

    # --- lists and tuples ----------------------------------------------------------------------------------
    SUBSCRIPT = "subscript of {container} by {index}"
    INDEX_OUT_OF_RANGE = "index out of range while recording"
    ITEM_ASSIGNMENT = "item assignment on {container}"
    STORE_KIND = "storing a {kind} into a list"
    OVERWRITE_TYPE = "overwriting a list element of type {type}"
    APPEND_ARGUMENTS = "list.append() with other than one argument"
    APPEND_TO = "append to a {kind}"
    APPEND_VALUE = "appending a {kind}"
    BUILD_ITEM = "building a {container} of a {kind} (freeing it could run Python code)"

    # --- NumPy arrays and scalars --------------------------------------------------------------------------
    ARRAY_INDEX = "{spec} array indexed by {what} (only one int per dimension is native)"
    ARRAY_ELEMENT_KIND = "elements of a {dtype} array (its scalars have no native kind yet)"
    ARRAY_ATTRIBUTE = "attribute .{name} of an array"
    ARRAY_STORE = "storing a {kind} into a {dtype} array"
    ARRAY_STORE_RAISES = "storing {value!r} into a {dtype} array raises {exception} here"
    ARRAY_READ_ONLY = "storing into a read-only array (ValueError)"
    NUMPY_OPERATOR = "operator {op} on {kinds} (NumPy scalars)"
    ARRAY_VIEW_USED = "a view of an array (a[i] of a multi-dimensional array) used other than by indexing it"
    ARRAY_NEW = "numpy.{name}() with {what} (a shape of ints, as an int or a tuple, and a constant dtype are native)"
    UFUNC_OPERANDS = "numpy.{name}() of {kinds} (a {result} result, or operands not native)"
    DICT_GET_KEY = ("dict.get() with a key of kind {kind} (recorded again, as a generic method call)", True)
    METHOD_NOT_CALLED = ("method .{name} bound and not called right away (recorded again, bound apart)", True)
    CLASS_CHANGED = (
        "class {name} changed while the loop was recorded (recorded again, not specialized on it: its version"
        " would fail at every entry)",
        True,
    )
    ARRAY_INDEX_MUTATES = "{name} while an array subscript is being evaluated (its exits would redo it)"
    ERRSTATE_CHANGED = "NumPy's error state changed while the loop was recorded (np.seterr or np.errstate in it)"

    # --- operators -----------------------------------------------------------------------------------------
    RAISES = ("{what} raises {exception} here", True)  # (EXCEPTION_RAISED, seen before it runs)
    INT_RESULT_TOO_BIG = "{what}: int result beyond 64 bits"
    INT_OBJECT_ACROSS_LOOP = "an int beyond 64 bits on the operand stack at an inner loop"
    RESULT_TYPE = "{what}: result is a {type}"
    OPERAND_KIND = "{what} on {kind}"
    MATMUL = "operator @ on numbers"
    NEGATIVE_INT_POWER = "int ** negative int (a float result)"
    FLOAT_BITWISE = "operator {op} on a float (TypeError)"
    FLOAT_POWER = "float ** outside the cases compiled natively (inf, nan, underflow)"
    OPERATOR = "operator {op}"
    IDENTITY = "identity ({op}) of {kind} values"
    TRUTH = "truth of {kind}"

    # --- calls ---------------------------------------------------------------------------------------------
    CALL = "call to {name}"
    NOT_INLINED = "call to {name} not inlined: {why}"
    FREE_VARIABLE = (
        "variable {name!r} of an enclosing function holds a {type} (a class this site met with too many others)"
    )
    CELL_VARIABLE = "cell variable {name!r} holds a {type} (a class this site met with too many others)"
    CELL_DELETED = "del of the cell variable {name}"
    INLINED_MUTATES = (
        "call to {name}: an inlined function may not change a global or run Python code (its exits call it again)"
    )
    INLINED_STORES_PINNED_GLOBAL = (
        "call to {name} stores the global {glob}, which the trace pinned by a guard before (recorded again, reading"
        " it at each use)",
        True,
    )
    INLINED_EXIT_AFTER_EFFECT = (
        "call to {name}: {uop} may leave after an inlined function's {effect} (its exits make the call again)"
    )
    FINALIZER = (
        "a {name} object from a call in the loop: its class defines __del__, which may run Python code wherever"
        " native code releases it"
    )
    ARITY = "{name}() with {count} arguments"
    ONE_ITERABLE = "{name}() of one iterable"
    LEN_OF = "len() of {kind}"
    CONVERSION_OF = "{name}() of {kind}"
    MATH_RAISES = ("math.{name}() raises {exception}", True)

    def __init__(self, template: str, retry: bool = False) -> None:
        self.template = template
        self.retry = retry

    @property
    def code(self) -> str:
        """The stable code of the reason (what ``jit.stats(f)["aborts_by_code"]`` counts by)."""
        return self.name

    def message(self, **params: Any) -> str:
        return self.template.format(**params)


class Abort(Exception):
    """Recording cannot go on: ``reason`` says why in general, ``str(abort)`` in this case (the message
    shown by ``jit.stats`` and ``jit.explain``)."""

    def __init__(self, reason: Reason, **params: Any) -> None:
        super().__init__(reason.message(**params))
        self.reason = reason
        self.params = params

    @property
    def retry(self) -> bool:
        return self.reason.retry
