"""Every uop, declared once: its name, inputs, output, and what kind of guard it is.

Names follow CPython's tier-2 uops where one exists. The recorder emits them, the optimizer rewrites them,
and ``codegen.lower`` holds exactly one lowering per uop. A uop's output kind is either fixed here or, for
the few generic ones (``_LOAD_SLOT``, ``_LOAD_CONST_INLINE``, ``_SELECT``, ...), set by the recorder.

Guard kinds:
  ``NO``      not a guard;
  ``DEOPT``   on failure, leave to the interpreter at the start of the tier-1 instruction the uop came from,
              with the state from before that instruction (the interpreter then redoes it exactly: raising
              the error CPython raises, or going on with Python ints past 2**63);
  ``PERIODIC`` the signal check at a loop header (may leave with KeyboardInterrupt pending).
"""

from __future__ import annotations

import dataclasses

from jit.kinds import Kind

NO, DEOPT, PERIODIC = "no", "deopt", "periodic"

I, F, B, L, T, O = Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.LIST, Kind.TUPLE, Kind.OBJECT
ANY = None  # an input of any kind
VARIES = "varies"  # output kind set per instance


@dataclasses.dataclass(frozen=True)
class UopDef:
    name: str
    inputs: tuple[Kind | None, ...] | str  # kinds of the inputs, or "n" for a variable count
    output: Kind | str | None
    guard: str = NO
    pure: bool = True  # no side effect: may be removed when its output is unused
    doc: str = ""

    @property
    def is_guard(self) -> bool:
        return self.guard != NO


UOPS: dict[str, UopDef] = {}


def _uop(name: str, inputs: tuple | str, output: Kind | str | None, guard: str = NO, pure: bool = True, doc: str = ""):
    assert name not in UOPS, name
    UOPS[name] = UopDef(name, inputs, output, guard, pure if guard == NO else False, doc)


# --- trace structure -----------------------------------------------------------------------------------------
_uop("_LOAD_SLOT", (), VARIES, doc="operand: slot; the slot's value where the trace starts (a loop phi in a root)")
_uop("_LOAD_STACK", (), VARIES, doc="operand: stack index; a side trace's operand stack where it starts")
_uop("_GUARD_SLOT_KIND", (), None, DEOPT, doc="operand: (slot, kind); a side trace reading a slot of unknown kind")
_uop("_CHECK_PERIODIC", (), None, PERIODIC, doc="every so many iterations: pending signals, hoisted guards")
_uop("_JUMP_TO_TOP", (), None, pure=False, doc="close the loop: the slots' new values flow back to the header")
_uop("_JUMP_TO_TREE", (), None, pure=False, doc="operand: tree; tail-jump into another tree's root")
_uop("_EXIT_TRACE", (), None, DEOPT, doc="leave to the interpreter (the end of a trace that does not loop)")
_uop("_CALL_TREE", (), None, pure=False, doc="operand: tree; call an inner loop's compiled tree on the buffer")
_uop("_GUARD_TREE_EXIT", (), None, DEOPT, doc="operand: tree, exit; the inner tree left its loop normally")
_uop("_RELOAD_SLOT", (), VARIES, pure=False, doc="operand: slot; read a slot an inner tree wrote")
_uop("_RELOAD_STACK", (), VARIES, pure=False, doc="operand: index; read a stack entry an inner tree wrote")

# --- constants and names -------------------------------------------------------------------------------------
_uop("_LOAD_CONST_INLINE", (), VARIES, doc="operand: the constant")
_uop("_GUARD_GLOBAL", (), None, DEOPT, doc="operand: (name, value); globals/builtins still bind name to value")
_uop("_GUARD_MODULE_ATTR", (), None, DEOPT, doc="operand: (module, name, value); module.name is still value")

# --- type guards, boxing -------------------------------------------------------------------------------------
_uop("_GUARD_BOTH_INT", (ANY, ANY), None, DEOPT)
_uop("_GUARD_BOTH_FLOAT", (ANY, ANY), None, DEOPT)
_uop("_GUARD_TYPE", (O,), VARIES, DEOPT, doc="operand: kind; a boxed object is of that kind (pointer kinds: output)")
_uop("_UNBOX_INT", (O,), I, DEOPT, doc="a boxed int, leaving if it does not fit in i64")
_uop("_UNBOX_FLOAT", (O,), F)
_uop("_UNBOX_BOOL", (O,), B)
_uop("_CONVERT_INT_TO_FLOAT", (I,), F)
_uop("_CONVERT_BOOL_TO_INT", (B,), I)

# --- int arithmetic: i64 with every overflow caught ----------------------------------------------------------
for _name in ("ADD", "SUBTRACT", "MULTIPLY", "FLOOR_DIVIDE", "REMAINDER", "POWER", "LSHIFT", "RSHIFT"):
    _uop(f"_BINARY_OP_{_name}_INT", (I, I), I, DEOPT)
for _name in ("AND", "OR", "XOR"):
    _uop(f"_BINARY_OP_{_name}_INT", (I, I), I)
    _uop(f"_BINARY_OP_{_name}_BOOL", (B, B), B)
_uop("_BINARY_OP_TRUE_DIVIDE_INT", (I, I), F, DEOPT, doc="exact while both operands are below 2**53")
_uop("_UNARY_NEGATIVE_INT", (I,), I, DEOPT)
_uop("_UNARY_INVERT_INT", (I,), I)
_uop("_COMPARE_OP_INT", (I, I), B, doc="operand: CompareOp")

# --- float arithmetic: IEEE double, Python's rules for //, %, ** --------------------------------------------
for _name in ("ADD", "SUBTRACT", "MULTIPLY"):
    _uop(f"_BINARY_OP_{_name}_FLOAT", (F, F), F)
for _name in ("TRUE_DIVIDE", "FLOOR_DIVIDE", "REMAINDER", "POWER"):
    _uop(f"_BINARY_OP_{_name}_FLOAT", (F, F), F, DEOPT)
_uop("_UNARY_NEGATIVE_FLOAT", (F,), F)
_uop("_COMPARE_OP_FLOAT", (F, F), B, doc="operand: CompareOp")
_uop("_COMPARE_OP_INT_FLOAT", (I, F), B, doc="operand: CompareOp; exact, as CPython compares int and float")

# --- truth, identity, branches -------------------------------------------------------------------------------
_uop("_TO_BOOL_INT", (I,), B)
_uop("_TO_BOOL_FLOAT", (F,), B)
_uop("_TO_BOOL_LIST", (L,), B)
_uop("_TO_BOOL_TUPLE", (T,), B)
_uop("_UNARY_NOT", (B,), B)
_uop("_IS_OP", (ANY, ANY), B, doc="operand: invert; identity of two pointers")
_uop("_SELECT", (B, ANY, ANY), VARIES, doc="the second input if the first is true, else the third")
_uop("_GUARD_IS_TRUE_POP", (B,), None, DEOPT)
_uop("_GUARD_IS_FALSE_POP", (B,), None, DEOPT)
_uop("_GUARD_NONZERO_INT", (I,), None, DEOPT)

# --- loops ---------------------------------------------------------------------------------------------------
_uop("_GUARD_NOT_EXHAUSTED_RANGE", (I, I, I), None, DEOPT, doc="inputs: cur, stop, step")
_uop("_GUARD_EXHAUSTED_RANGE", (I, I, I), None, DEOPT)
_uop("_ITER_NEXT_RANGE", (I, I), I, DEOPT, doc="cur + step, leaving if it overflows")
_uop("_GUARD_NOT_EXHAUSTED_LIST", (L, I), None, DEOPT, doc="inputs: the list, the loop's index")
_uop("_GUARD_NOT_EXHAUSTED_TUPLE", (T, I), None, DEOPT)
_uop("_GUARD_EXHAUSTED_LIST", (L, I), None, DEOPT)
_uop("_GUARD_EXHAUSTED_TUPLE", (T, I), None, DEOPT)
_uop("_ITER_NEXT_LIST", (L, I), O, doc="the item at the index, which the guard proved in range (borrowed)")
_uop("_ITER_NEXT_TUPLE", (T, I), O)
_uop("_ITER_INCREMENT", (I,), I, doc="index + 1 (below the sequence's length: no overflow)")

# --- lists and tuples ----------------------------------------------------------------------------------------
_uop("_BINARY_SUBSCR_LIST_INT", (L, I), O, DEOPT, doc="bounds-checked element read (borrowed)")
_uop("_BINARY_SUBSCR_TUPLE_INT", (T, I), O, DEOPT)
_uop("_LEN_LIST", (L,), I)
_uop("_LEN_TUPLE", (T,), I)
_uop("_BIND_APPEND", (L,), Kind.APPEND_METHOD, doc="lst.append, not called yet (the same pointer as lst)")
_uop("_CALL_LIST_APPEND", (ANY, ANY), None, DEOPT, doc="inputs: a list (or its bound append), the item")
_uop("_STORE_SUBSCR_LIST_INT", (ANY, L, I), None, DEOPT, doc="inputs: value, list, index; boxes the value")

# --- builtins and math ---------------------------------------------------------------------------------------
_uop("_CALL_ABS_INT", (I,), I, DEOPT)
_uop("_CALL_ABS_FLOAT", (F,), F)
_uop("_CALL_FLOAT_TO_INT", (F,), I, DEOPT, doc="int(x), math.trunc(x): truncation, leaving for nan/inf/big")
_uop("_CALL_ROUND_FLOAT", (F,), I, DEOPT, doc="round(x): half to even")
_uop("_CALL_MATH_FLOOR", (F,), I, DEOPT)
_uop("_CALL_MATH_CEIL", (F,), I, DEOPT)
_uop("_CALL_MATH_UNARY", (F,), F, DEOPT, doc="operand: name of a libm function CPython's math module calls")
_uop("_CALL_MATH_PREDICATE", (F,), B, doc="operand: isnan, isinf or isfinite")
_uop("_CALL_BUILTIN_FLOAT", "n", F, DEOPT, doc="operand: a pure builtin; called through the C-API, float result")
