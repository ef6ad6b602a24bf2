"""Every uop, declared once: its inputs, output and operand, and the facts the optimizer, the lowering and the
listing read (is it a guard, is it pure, may it be hoisted, how it folds on constants, who lowers it).

Names follow CPython's tier-2 uops where one exists. The recorder emits them, the optimizer rewrites them,
and ``codegen.lower`` holds exactly one lowering per uop whose ``lowering`` is ``Lowering.TABLE``. A uop's
output kind is either fixed here or, for the few generic ones (``_LOAD_CONST_INLINE``, ``_SELECT``,
``_RELOAD_SLOT``, ...), set by the recorder.

Guard kinds (``Guard``):
  ``NO``       not a guard;
  ``DEOPT``    on failure, leave to the interpreter at the start of the tier-1 instruction the uop came from,
               with the state from before that instruction (the interpreter then redoes it exactly: raising
               the error CPython raises, or going on with Python ints past 2**63);
  ``PERIODIC`` the signal check at a loop header (may leave with KeyboardInterrupt pending);
  ``RAISE``    (the generic object path) the C-API call failed with an exception set: leave with it, at the
               instruction the uop came from, and the runtime re-raises it there (never redoing the call).
"""

from __future__ import annotations

import dataclasses
import enum
import math
import operator
from collections.abc import Callable
from typing import Any

from jit.arrays import ArraySpec
from jit.frontend.operators import BinOp, CompareOp
from jit.instances import ClassAttr
from jit.kinds import Kind
from jit.numpy_errstate import Ignored


class Guard(enum.StrEnum):
    NO = "no"
    DEOPT = "deopt"
    PERIODIC = "periodic"
    RAISE = "raise"


class Lowering(enum.Enum):
    """Who turns a uop into LLVM IR."""

    TABLE = "one entry of codegen.lower's table"
    SKELETON = "the trace function's skeleton (codegen.function)"
    NONE = "nobody: the optimizer removes it from every trace"


# --- typed operands ------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, eq=False)
class SlotKind:
    """_GUARD_SLOT_KIND: the slot holds a value of that kind (an inner tree may have changed it)."""

    slot: int
    kind: Kind


@dataclasses.dataclass(frozen=True, eq=False)
class GlobalBinding:
    """_GUARD_GLOBAL: the function's globals, else the builtins, still bind name to that very object.
    namespace and builtins: those of an inlined callee from another module (None: the trace's function's)."""

    name: str
    value: Any
    namespace: dict | None = None
    builtins: dict | None = None


@dataclasses.dataclass(frozen=True, eq=False)
class GlobalName:
    """_LOAD_GLOBAL_VALUE, _STORE_GLOBAL: a global the function stores, in its globals. over_number: (a store)
    the trace has read an int, float or bool there, or stored one, or None or a str, since anything could change
    it (what the store replaces frees running no Python code)."""

    name: str
    over_number: bool = False


@dataclasses.dataclass(frozen=True, eq=False)
class ModuleAttr:
    """_GUARD_MODULE_ATTR: module.name is still that very object."""

    module: Any  # types.ModuleType
    name: str
    value: Any


@dataclasses.dataclass(frozen=True, eq=False)
class Callee:
    """_GUARD_CALLEE: an inlined function still has that code and those defaults (``jit.inline``);
    _GUARD_CALLEE_VALUE: the function a variable holds has that code, function's globals, and those defaults (where
    the call takes some: else None)."""

    function: Any  # types.FunctionType
    code: Any  # types.CodeType
    defaults: tuple | None


@dataclasses.dataclass(frozen=True, eq=False)
class TreeCall:
    """_CALL_TREE: the inner loop's compiled tree, and the state to write to the buffer before calling it."""

    tree: Any  # runtime.trees.Tree
    snapshot: Any  # jit.trace.Snapshot


@dataclasses.dataclass(frozen=True, eq=False)
class TreeExit:
    """_GUARD_TREE_EXIT: the inner tree called just before left by this exit (its number)."""

    tree: Any  # runtime.trees.Tree
    exit: int


class Operand(enum.Enum):
    """What a uop's operand is: its Python type (checked when a uop is emitted) and how the listing shows it."""

    NONE = (type(None), "none")
    SLOT = (int, "a slot number")
    STACK_INDEX = (int, "an index into the operand stack")
    CELL = (int, "a closure's cell: an index into its __closure__")
    PC = (int, "a tier-1 pc")
    CONST = (object, "a constant")
    KIND = (Kind, "a kind")
    COMPARE = (CompareOp, "a comparison")
    BINARY_OP = (BinOp, "a binary operator")
    INVERT = (bool, "is the test inverted (`is not`)")
    MATH_NAME = (str, "the name of a math function")
    BUILTIN = (object, "a builtin function")
    KWNAMES = (tuple, "the keyword names of a call (a tuple of str, empty for none)")
    NAME = (str, "an attribute's name")
    TREE = (object, "a compiled tree (runtime.trees.Tree)")
    SLOT_KIND = (SlotKind, "a slot and a kind")
    GLOBAL = (GlobalBinding, "a global's name and value")
    MODULE_ATTR = (ModuleAttr, "a module attribute and its value")
    CALLEE = (Callee, "an inlined function, with its code and defaults")
    GLOBAL_NAME = (GlobalName, "the name of a global the function stores")
    TREE_CALL = (TreeCall, "a tree and the state before calling it")
    TREE_EXIT = (TreeExit, "a tree and one of its exits")
    ARRAY_SPEC = (ArraySpec, "an array's dtype, dimensions and layout")
    IGNORED_EVENTS = (Ignored, "the floating-point events NumPy's error state ignored when recorded")
    AXIS = (int, "an axis of an array")
    CONVERSION = (str, "an f-string field's conversion: '' (none), 's', 'r' or 'a'")
    CLASS_ATTR = (ClassAttr, "a class, its version tag, an attribute and where its instances hold it")
    METHOD = (tuple, "a method descriptor of an immutable builtin type, then a call's keyword names")

    def __init__(self, type_: type, doc: str) -> None:
        self.type = type_
        self.doc = doc


I, F, B, L, T, O = Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.LIST, Kind.TUPLE, Kind.OBJECT
S, D = Kind.STR, Kind.DICT
ANY = None  # an input of any kind
VARIES = "varies"  # output kind set per instance

Fold = Callable[..., Any]  # fold(operand, *constant inputs) -> the result CPython computes


@dataclasses.dataclass(frozen=True)
class UopDef:
    name: str
    inputs: tuple[Kind | None, ...] | str  # kinds of the inputs, or "n" for a variable count
    output: Kind | str | None
    guard: Guard = Guard.NO
    pure: bool = True  # no side effect: may be removed when its output is unused
    operand: Operand = Operand.NONE
    fold: Fold | None = None  # how constfold computes the result from constant inputs (CPython's own operation)
    hoistable: bool = False  # a guard on state only Python code changes: checked once at the trace's entry
    transient: bool = False  # (hoistable) failing at the entry is a passing state: grow a side trace, not invalidate
    # (hoistable) guards a value the entry holds (a function a variable holds): failing at a root's entry means another
    # such value, for which a peer root tree is recorded and the exit linked into it (WhenHot.PEER)
    peer: bool = False
    proves: Kind | None = None  # a type guard that all inputs are of this kind (removed where the kinds prove it)
    condition: bool | None = None  # a branch guard: it holds while its input's truth is this
    inline_const: bool = False  # names a constant, materialized where it is used: never kept as a uop
    lowering: Lowering = Lowering.TABLE
    mutates: bool = False  # changes memory Python code can see: never in an inlined call (jit.inline)
    drops: bool = False  # may free an object the trace read: borrowed pointers read before it may dangle after it
    owns: bool = False  # its output is a new reference: codegen releases it after its last use, or hands it over
    # (owns) what its output holds, another object holds too (a builtin iterator's item: its iterable): objects read
    # out of it need not outlive it (codegen.ownership.borrowed_from, jit.recorder's dependent values)
    shared: bool = False
    # (a store) where its first input is an owned reference used last here, it keeps that reference (no incref,
    # no release: codegen.ownership)
    steals: bool = False
    # (steals) takes, too, the reference of a value its stolen input is a _KEEP_ALIVE of, if that value is owned
    # and used last here: the two references to one object are its to give up (so that `s = s + f(x)`, where a
    # barrier in f(x) made the trace keep s alive, still finds s held once: codegen.ownership)
    steals_alias: bool = False
    # (pure) reads only state that Python code alone changes (an array's header): computed once at the trace's
    # entry when its inputs are the same there as throughout the trace (jit.optimizer.hoist)
    entry_value: bool = False
    # the uop computing the same where jit.optimizer.ranges proved its overflow or bounds check cannot fail
    unchecked: str | None = None
    # may run arbitrary Python code (the generic object path): guards hoisted to the trace's entry are checked
    # again after it, and the recorder forgets what it knew of globals, lists and dicts
    barrier: bool = False
    doc: str = ""

    @property
    def is_guard(self) -> bool:
        return self.guard is not Guard.NO


UOPS: dict[str, UopDef] = {}


def _uop(name: str, inputs: tuple | str, output: Kind | str | None, guard: Guard = Guard.NO, **facts: Any) -> None:
    assert name not in UOPS, name
    if guard is not Guard.NO:
        facts["pure"] = False
    UOPS[name] = UopDef(name, inputs, output, guard, **facts)


def _plain(fn: Callable[..., Any]) -> Fold:
    """The fold of a uop that computes fn of its inputs (its operand plays no part)."""

    def fold(_operand: Any, *values: Any) -> Any:
        return fn(*values)

    return fold


def _compare(op: CompareOp, *values: Any) -> Any:
    return op.fn(*values)


NO, DEOPT, PERIODIC, RAISE = Guard.NO, Guard.DEOPT, Guard.PERIODIC, Guard.RAISE
SKELETON, NEVER = Lowering.SKELETON, Lowering.NONE
SLOT, STACK, TREE, CMP = Operand.SLOT, Operand.STACK_INDEX, Operand.TREE, Operand.COMPARE

# --- trace structure -----------------------------------------------------------------------------------------
# _LOAD_SLOT and _LOAD_STACK are never in trace.uops: they are the listing's lines for trace.entry_slots and
# trace.entry_stack, which the skeleton loads from the buffer (in a looping root, a slot's value is a phi)
_uop("_LOAD_SLOT", (), VARIES, operand=SLOT, lowering=SKELETON, doc="the slot's value where the trace starts")
_uop("_LOAD_STACK", (), VARIES, operand=STACK, lowering=SKELETON, doc="a side trace's stack where it starts")
_uop("_GUARD_SLOT_KIND", (), None, DEOPT, operand=Operand.SLOT_KIND, doc="a slot read of a kind not known")
_uop("_CHECK_PERIODIC", (), None, PERIODIC, lowering=SKELETON, doc="every so many iterations: signals, hoisted")
_uop(
    "_UNROLLED_HEADER",
    (),
    None,
    PERIODIC,
    lowering=SKELETON,
    doc="a visit of an unrolled inner loop's header: counted in the fuel, the periodic check where due",
)
_uop("_JUMP_TO_TOP", (), None, pure=False, lowering=SKELETON, doc="close the loop: new slot values to the phis")
_uop("_JUMP_TO_TREE", (), None, pure=False, operand=TREE, doc="tail-jump into another tree's root")
_uop("_EXIT_TRACE", (), None, DEOPT, operand=Operand.PC, doc="leave to the interpreter (a trace that does not loop)")
_uop("_CALL_TREE", (), None, pure=False, operand=Operand.TREE_CALL, doc="call an inner loop's tree on the buffer")
_uop("_GUARD_TREE_EXIT", (), None, DEOPT, operand=Operand.TREE_EXIT, doc="the inner tree left its loop normally")
_uop("_RELOAD_SLOT", (), VARIES, pure=False, operand=SLOT, doc="read a slot an inner tree wrote")
_uop("_RELOAD_STACK", (), VARIES, pure=False, operand=STACK, doc="read a stack entry an inner tree wrote")
_uop(
    "_RELOAD_SLOT_OWNED",
    (),
    VARIES,
    pure=False,
    owns=True,
    operand=SLOT,
    doc="what an inner tree wrote in a slot (an int object, a list it built...), with a reference of the trace's own",
)
_uop(
    "_RELOAD_STACK_OWNED",
    (),
    VARIES,
    pure=False,
    owns=True,
    operand=STACK,
    doc="an int object an inner tree's exit left on the stack, with a reference of the trace's own",
)
_uop(
    "_TAKE_BACK",
    (),
    None,
    pure=False,
    doc="after an inner tree's call: the buffer's references to what the call handed over, released",
)

# --- constants and names -------------------------------------------------------------------------------------
_uop("_LOAD_CONST_INLINE", (), VARIES, operand=Operand.CONST, inline_const=True, doc="the constant")
_uop("_GUARD_GLOBAL", (), None, DEOPT, operand=Operand.GLOBAL, hoistable=True, doc="globals/builtins: same binding")
_uop("_GUARD_MODULE_ATTR", (), None, DEOPT, operand=Operand.MODULE_ATTR, hoistable=True, doc="module.name: same")
_uop(
    "_GUARD_GLOBAL_NUMBER",
    (),
    None,
    DEOPT,
    operand=Operand.GLOBAL_NAME,
    hoistable=True,
    transient=True,
    doc="a global the function stores is an int, float or bool (the trace stores nothing else there)",
)
_uop("_CHECK_GLOBAL", (), None, DEOPT, operand=Operand.GLOBAL, doc="_GUARD_GLOBAL of a name stored: not hoisted")
_uop("_LOAD_GLOBAL_VALUE", (), O, DEOPT, operand=Operand.GLOBAL_NAME, doc="a global the loop stores (borrowed)")
_uop(
    "_STORE_GLOBAL",
    (ANY,),
    None,
    DEOPT,
    mutates=True,
    drops=True,
    operand=Operand.GLOBAL_NAME,
    doc="box it into the globals (a number, None or a str); what it replaces must be a number, None or a str too "
    "(freed running no Python code), unless the trace knows it is (operand.over_number), else leave",
)
_uop(
    "_CHECK_STORE_GLOBAL",
    (),
    None,
    DEOPT,
    pure=False,
    operand=Operand.GLOBAL_NAME,
    doc="an inlined call's store of a global, checked where it is: the name unbound or bound to a number or None "
    "(replacing it runs no Python code); stored at the call's return (_STORE_GLOBAL_CHECKED, jit.inline)",
)
_uop(
    "_STORE_GLOBAL_CHECKED",
    (ANY,),
    None,
    RAISE,
    mutates=True,
    drops=True,
    operand=Operand.GLOBAL_NAME,
    doc="the store _CHECK_STORE_GLOBAL checked earlier in the same inlined call, nothing between them running "
    "Python code: box it into the globals; raises at the call where that fails (MemoryError)",
)
_uop(
    "_DELETE_GLOBAL",
    (),
    None,
    DEOPT,
    mutates=True,
    drops=True,
    operand=Operand.GLOBAL_NAME,
    doc="del of a global holding a number or None (its freeing runs no Python code); else leave",
)
_uop("_GUARD_CALLEE", (), None, DEOPT, operand=Operand.CALLEE, hoistable=True, doc="inlined function: same code")
_uop("_METHOD_FUNCTION", (O,), O, doc="input: a bound method (its class guarded); its __func__ (borrowed)")
_uop("_METHOD_SELF", (O,), O, doc="input: a bound method (its class guarded); its __self__ (borrowed)")
_uop(
    "_LOAD_FREE",
    (O,),
    O,
    DEOPT,
    operand=Operand.CELL,
    doc="input: an inlined closure (its code guarded); what its cell holds (borrowed), else leave (NameError)",
)
_uop(
    "_LOAD_CELL",
    (O,),
    O,
    DEOPT,
    operand=SLOT,
    doc="input: a cell variable's cell (the slot's, operand); what it holds (borrowed), read anew after any store or "
    "barrier, else leave where it is empty (the interpreter raises UnboundLocalError)",
)
_uop(
    "_STORE_CELL",
    (ANY, O),
    None,
    DEOPT,
    mutates=True,
    drops=True,
    operand=SLOT,
    doc="inputs: value, a cell variable's cell (the slot's, operand); the value (boxed) into the cell, where what it "
    "replaces is nothing, a number or None (freed running no Python code), else leave (_STORE_CELL_GENERIC's case)",
)
_uop(
    "_CLOSURE_CELL",
    (O,),
    O,
    operand=Operand.CELL,
    doc="input: an inlined closure (its code guarded); its cell (borrowed: the closure holds it)",
)
_uop(
    "_CHECK_STORE_CELL",
    (O,),
    None,
    DEOPT,
    doc="input: a cell an inlined call assigns (`nonlocal`), the store made at the call's return "
    "(_STORE_CELL_CHECKED): it holds nothing, a number or None (replacing it runs no Python code), else leave",
)
_uop(
    "_STORE_CELL_CHECKED",
    (ANY, O),
    None,
    RAISE,
    mutates=True,
    drops=True,
    doc="inputs: value, cell; the store _CHECK_STORE_CELL checked earlier in the same inlined call, nothing between "
    "them running Python code: the value (boxed) into the cell; raises at the call where boxing fails (MemoryError)",
)
_uop(
    "_GUARD_CALLEE_VALUE",
    (O,),
    None,
    DEOPT,
    operand=Operand.CALLEE,
    hoistable=True,
    transient=True,
    peer=True,
    doc="a function held in a variable, called inlined: a function with that code and globals (and the defaults "
    "the call takes, where it takes any: else defaults is None); code None: that very object (a builtin function "
    "held in a variable, the class in a method's class cell)",
)

# --- type guards, boxing -------------------------------------------------------------------------------------
_uop("_GUARD_BOTH_INT", (ANY, ANY), None, DEOPT, proves=I, lowering=NEVER)
_uop("_GUARD_BOTH_FLOAT", (ANY, ANY), None, DEOPT, proves=F, lowering=NEVER)
_uop("_GUARD_TYPE", (O,), VARIES, DEOPT, operand=Operand.KIND, doc="a boxed object of that kind (pointers: out)")
_uop("_UNBOX_INT", (O,), I, DEOPT, doc="a boxed int, leaving if it does not fit in i64")
_uop("_UNBOX_FLOAT", (O,), F)
_uop("_UNBOX_NP_FLOAT64", (O,), Kind.NP_FLOAT64, doc="a numpy.float64 (a float subclass: its double as a float's)")
_uop(
    "_UNBOX_NP_SCALAR",
    (O,),
    VARIES,
    operand=Operand.KIND,
    doc="a numpy.int64, int32, uint8, float32 or bool of that kind (its value after the object's header)",
)
_uop("_UNBOX_BOOL", (O,), B)
_uop("_CONVERT_INT_TO_FLOAT", (I,), F, fold=_plain(float))
_uop("_CONVERT_BOOL_TO_INT", (B,), I, fold=_plain(int))

# --- int arithmetic: i64 with every overflow caught ----------------------------------------------------------
_BINARY = {op.uop_name: op.fn for op in BinOp if not op.inplace}
for _name in ("ADD", "SUBTRACT", "MULTIPLY"):
    _uop(
        f"_BINARY_OP_{_name}_INT",
        (I, I),
        I,
        DEOPT,
        fold=_plain(_BINARY[_name]),
        unchecked=f"_BINARY_OP_{_name}_INT_IN_RANGE",
    )
    _uop(
        f"_BINARY_OP_{_name}_INT_IN_RANGE",
        (I, I),
        I,
        fold=_plain(_BINARY[_name]),
        doc="proven to fit i64 (jit.optimizer.ranges; jit.optimizer.bounds: an index base + c in range)",
    )
for _name in ("FLOOR_DIVIDE", "REMAINDER", "POWER", "LSHIFT", "RSHIFT"):
    _uop(f"_BINARY_OP_{_name}_INT", (I, I), I, DEOPT, fold=_plain(_BINARY[_name]))
for _name in ("AND", "OR", "XOR"):
    _uop(f"_BINARY_OP_{_name}_INT", (I, I), I, fold=_plain(_BINARY[_name]))
    _uop(f"_BINARY_OP_{_name}_BOOL", (B, B), B, fold=_plain(_BINARY[_name]))
_uop("_BINARY_OP_TRUE_DIVIDE_INT", (I, I), F, DEOPT, fold=_plain(operator.truediv), doc="exact below 2**53")
# jit.optimizer.affine: x * c + d checked once, where x is (its bounds constants), the two operations unchecked
_uop(
    "_GUARD_INT_RANGE",
    (I, I, I),
    None,
    DEOPT,
    unchecked="_INT_RANGE_PROVEN",
    doc="inputs: x, lo, hi (constants): lo <= x <= hi",
)
_uop("_INT_RANGE_PROVEN", (I, I, I), None, doc="_GUARD_INT_RANGE where the range analysis proved it: nothing to do")
_uop("_UNARY_NEGATIVE_INT", (I,), I, DEOPT, fold=_plain(operator.neg), unchecked="_UNARY_NEGATIVE_INT_IN_RANGE")
_uop("_UNARY_NEGATIVE_INT_IN_RANGE", (I,), I, fold=_plain(operator.neg), doc="its input is not -2**63")
_uop("_UNARY_INVERT_INT", (I,), I, fold=_plain(operator.invert))
_uop("_COMPARE_OP_INT", (I, I), B, operand=CMP, fold=_compare)

# --- float arithmetic: IEEE double, Python's rules for //, %, ** --------------------------------------------
for _name in ("ADD", "SUBTRACT", "MULTIPLY"):
    _uop(f"_BINARY_OP_{_name}_FLOAT", (F, F), F, fold=_plain(_BINARY[_name]))
for _name in ("TRUE_DIVIDE", "FLOOR_DIVIDE", "REMAINDER", "POWER"):
    _uop(f"_BINARY_OP_{_name}_FLOAT", (F, F), F, DEOPT, fold=_plain(_BINARY[_name]))
_uop("_UNARY_NEGATIVE_FLOAT", (F,), F, fold=_plain(operator.neg))
_uop("_COMPARE_OP_FLOAT", (F, F), B, operand=CMP, fold=_compare)
_uop("_COMPARE_OP_INT_FLOAT", (I, F), B, operand=CMP, fold=_compare, doc="exact, as CPython compares them")

# --- truth, identity, branches -------------------------------------------------------------------------------
_uop("_TO_BOOL_INT", (I,), B, fold=_plain(bool))
_uop("_TO_BOOL_FLOAT", (F,), B, fold=_plain(bool))
_uop("_TO_BOOL_LIST", (L,), B)
_uop("_TO_BOOL_TUPLE", (T,), B)
_uop("_UNARY_NOT", (B,), B, fold=_plain(operator.not_))
_uop("_IS_OP", (ANY, ANY), B, operand=Operand.INVERT, doc="identity of two pointers")
_uop("_SELECT", (B, ANY, ANY), VARIES, doc="the second input if the first is true, else the third")
_uop("_GUARD_IS_TRUE_POP", (B,), None, DEOPT, condition=True)
_uop("_GUARD_IS_FALSE_POP", (B,), None, DEOPT, condition=False)
_uop("_GUARD_NONZERO_INT", (I,), None, DEOPT)

# --- loops ---------------------------------------------------------------------------------------------------
_uop("_GUARD_NOT_EXHAUSTED_RANGE", (I, I, I), None, DEOPT, unchecked="_RANGE_PROVEN", doc="inputs: cur, stop, step")
_uop("_GUARD_EXHAUSTED_RANGE", (I, I, I), None, DEOPT, unchecked="_RANGE_PROVEN")
_uop(
    "_GUARD_UNIT_STEP",
    (I,),
    None,
    DEOPT,
    hoistable=True,
    doc="a range's step read at the entry is 1 (the trace then uses the constant)",
)
_uop("_RANGE_PROVEN", (I, I, I), None, doc="a range guard the range analysis proved (an unrolled loop's): nothing")
# jit.optimizer.counters: a while loop's counter (a slot every iteration adds at most step to) has room for the
# iterations between two periodic checks, checked at the entry and after each periodic check (hoisted): the
# additions to it then need no overflow check; failing at the entry (a counter near 2**63) grows a side trace
_uop(
    "_GUARD_COUNTER_ROOM",
    (I, I),
    None,
    DEOPT,
    hoistable=True,
    transient=True,
    doc="inputs: the counter, its step (a positive constant): counter + step * codegen.abi.PERIOD fits i64",
)
_uop(
    "_ITER_NEXT_RANGE",
    (I, I),
    I,
    DEOPT,
    unchecked="_ITER_NEXT_RANGE_NO_OVERFLOW",
    doc="cur + step, leaving if it overflows",
)
_uop("_ITER_NEXT_RANGE_NO_OVERFLOW", (I, I), I, doc="cur + step, which the range analysis proved fits i64")
_uop("_GUARD_NOT_EXHAUSTED_LIST", (L, I), None, DEOPT, doc="inputs: the list, the loop's index")
_uop("_GUARD_NOT_EXHAUSTED_TUPLE", (T, I), None, DEOPT)
_uop("_GUARD_EXHAUSTED_LIST", (L, I), None, DEOPT)
_uop("_GUARD_EXHAUSTED_TUPLE", (T, I), None, DEOPT)
_uop("_ITER_NEXT_LIST", (L, I), O, doc="the item at the index, which the guard proved in range (borrowed)")
_uop("_ITER_NEXT_TUPLE", (T, I), O)
_uop("_ITER_INCREMENT", (I,), I, doc="index + 1 (below the sequence's length: no overflow)")
# `for i, x in enumerate(seq)`, `for x, y in zip(xs, ys)` over lists and tuples: native code advances the
# iterator objects themselves. Their structure is guarded once at the entry: only Python code changes it
_uop(
    "_GUARD_SEQUENCE_ITERATOR",
    (O,),
    None,
    DEOPT,
    operand=Operand.KIND,
    hoistable=True,
    transient=True,
    doc="an exact list (tuple) iterator, not exhausted: the operand",
)
_uop("_SEQUENCE_ITERATOR_SEQUENCE", (O,), VARIES, entry_value=True, doc="the list or tuple it iterates (borrowed)")
_uop("_LOAD_ITERATOR_POSITION", (O,), I, pure=False, doc="a list or tuple iterator's index")
_uop("_STORE_ITERATOR_POSITION", (O, I), None, pure=False, mutates=True)
_uop("_GUARD_ENUMERATE", (O,), None, DEOPT, hoistable=True, transient=True, doc="an exact enumerate, ssize_t count")
_uop("_ENUMERATE_ITERATOR", (O,), O, entry_value=True, doc="the iterator it numbers (borrowed)")
_uop("_LOAD_ENUMERATE_COUNT", (O,), I, pure=False, doc="the count it gives next")
_uop("_STORE_ENUMERATE_COUNT", (O, I), None, pure=False, mutates=True)
# `for x in s` over a str of characters below U+0100, `for k in d`, `for v in d.values()`, `for k, v in
# d.items()`, `for x in a_set`: each item through the iterator's own tp_iternext (a new reference, released
# at once: the str's characters are CPython's cached ones, a dict's or a set's items are held by it)
_uop(
    "_GUARD_BUILTIN_ITERATOR",
    (O,),
    None,
    DEOPT,
    operand=Operand.CONST,
    hoistable=True,
    transient=True,
    doc="exactly of that iterator type (a str's: over characters below U+0100)",
)
_uop(
    "_ITER_NEXT_BUILTIN",
    (O,),
    VARIES,
    DEOPT,
    owns=True,
    shared=True,
    mutates=True,
    operand=Operand.CONST,
    doc="its next item, leaving where it has none or raises (the interpreter asks again: the same answer)",
)
_uop(
    "_GUARD_ZIP", (O,), None, DEOPT, operand=Operand.CONST, hoistable=True, transient=True, doc="exact, of n iterators"
)
_uop("_ZIP_ITERATOR", (O,), O, operand=Operand.CONST, entry_value=True, doc="its iterator number k (borrowed)")
# an inner loop's iterator made by the outer trace (`for k, v in d.items()`, `for i, x in enumerate(row)`, `for
# ch in s` inside a loop): a new object the trace owns, in the inner loop's hidden iterator slot, handed to the
# inner tree with the buffer; at the inner loop's end the outer trace finishes it as CPython's FOR_ITER would
_uop("_GUARD_EXACT_TYPE", (O,), None, DEOPT, operand=Operand.CONST, doc="exactly of that type (a set, a frozenset)")
_uop(
    "_GET_ITER",
    (ANY,),
    O,
    DEOPT,
    owns=True,
    operand=Operand.CONST,
    doc="iter() of an exact str, dict, set or frozenset (the operand: its type); leaves if allocation fails",
)
_uop(
    "_GET_ITER_DICT_VIEW",
    (D,),
    O,
    DEOPT,
    owns=True,
    operand=Operand.CONST,
    doc="iter(d.keys() / d.values() / d.items()): the operand is the method; leaves if allocation fails",
)
_uop(
    "_NEW_ENUMERATE",
    (ANY, I),
    O,
    DEOPT,
    owns=True,
    doc="enumerate(seq, start) of an exact list or tuple; leaves if allocation fails",
)
_uop("_NEW_ZIP", "n", O, DEOPT, owns=True, doc="zip(*seqs) of exact lists and tuples; leaves if allocation fails")
# a range object kept as a value (`r = range(n)`, then `for i in r`) and its iterator, advanced in place
_uop("_BUILD_RANGE", (ANY, ANY, ANY), O, RAISE, owns=True, doc="range(start, stop, step) of ints (no Python code)")
_uop(
    "_ITER_NEXT_RANGE_ITERATOR",
    (O,),
    I,
    DEOPT,
    mutates=True,
    doc="the next int of an exact range iterator (a C long range), advancing it; leaves where it has none",
)
_uop(
    "_ITER_FINISH",
    (O,),
    None,
    DEOPT,
    mutates=True,
    operand=Operand.CONST,
    doc="an iterator the guards found exhausted (operand: its type) given its last next() as CPython's FOR_ITER "
    "does; leaves where it is not certainly done, and with the exception next() raised (a dict changed)",
)

# --- lists and tuples ----------------------------------------------------------------------------------------
_uop(
    "_BINARY_SUBSCR_LIST_INT",
    (L, I),
    O,
    DEOPT,
    unchecked="_BINARY_SUBSCR_LIST_INT_IN_BOUNDS",
    doc="bounds-checked element read (borrowed)",
)
_uop("_BINARY_SUBSCR_TUPLE_INT", (T, I), O, DEOPT, unchecked="_BINARY_SUBSCR_TUPLE_INT_IN_BOUNDS", doc="likewise")
_uop("_BINARY_SUBSCR_LIST_INT_IN_BOUNDS", (L, I), O, doc="the range analysis proved 0 <= index < len (borrowed)")
_uop("_BINARY_SUBSCR_TUPLE_INT_IN_BOUNDS", (T, I), O, doc="likewise")
_uop("_LEN_LIST", (L,), I)
_uop("_LEN_TUPLE", (T,), I)
_uop("_BIND_APPEND", (L,), Kind.APPEND_METHOD, doc="lst.append, not called yet (the same pointer as lst)")
_uop("_CALL_LIST_APPEND", (ANY, ANY), None, DEOPT, mutates=True, doc="inputs: a list (or its bound append), the item")
_uop(
    "_CALL_LIST_APPEND_CHECKED",
    (ANY, ANY),
    None,
    RAISE,
    mutates=True,
    doc="an inlined call's append, made at its return (jit.inline); raises at the call where memory runs out",
)
_uop(
    "_STORE_SUBSCR_LIST_INT",
    (ANY, L, I),
    None,
    DEOPT,
    mutates=True,
    drops=True,
    unchecked="_STORE_SUBSCR_LIST_INT_IN_BOUNDS",
    doc="inputs: value, list, index; boxes it",
)
_uop(
    "_STORE_SUBSCR_LIST_INT_IN_BOUNDS",
    (ANY, L, I),
    None,
    DEOPT,
    mutates=True,
    drops=True,
    doc="the range analysis proved 0 <= index < len (still leaves where boxing fails or the old item is no number)",
)

_uop(
    "_BUILD_LIST",
    "n",
    L,
    DEOPT,
    owns=True,
    doc="a new list of the inputs (numbers boxed), owned by the trace; leaves if an allocation fails",
)
_uop("_BUILD_TUPLE", "n", T, DEOPT, owns=True, doc="a new tuple of the inputs, likewise")

# --- ints past 64 bits (exact ints as objects: CPython's own arithmetic, which runs no Python code) ------------
_uop("_BOX_INT", (I,), Kind.INT_OBJECT, DEOPT, owns=True, doc="a new int object (leaves if allocation fails)")
_uop(
    "_BINARY_OP_INT_OBJECT",
    (Kind.INT_OBJECT, Kind.INT_OBJECT),
    Kind.INT_OBJECT,
    DEOPT,
    owns=True,
    operand=Operand.BINARY_OP,
    doc="CPython's int operation; an error (division by zero, memory) leaves, and the interpreter raises it",
)
_uop("_NARROW_INT_OBJECT", (Kind.INT_OBJECT,), I, DEOPT, doc="the int as an i64 (leaves if it does not fit)")
_uop(
    "_COMPARE_OP_INT_OBJECT",
    (Kind.INT_OBJECT, Kind.INT_OBJECT),
    B,
    operand=CMP,
    fold=_compare,
    doc="CPython's comparison of two exact ints (runs no Python code)",
)
_uop(
    "_UNARY_OP_INT_OBJECT",
    (Kind.INT_OBJECT,),
    Kind.INT_OBJECT,
    DEOPT,
    owns=True,
    operand=Operand.CONST,
    doc="-x or ~x of an exact int (the operand: the operator); leaves if allocation fails",
)
_uop(
    "_NEW_INT_OBJECT_REF", (O,), Kind.INT_OBJECT, owns=True, doc="an exact int read from a container, as an int object"
)
# ints past 64 bits meeting floats, true division and conversions: CPython's own int operations (codegen.lower.int_objects)
_uop(
    "_CONVERT_INT_OBJECT_TO_FLOAT",
    (Kind.INT_OBJECT,),
    F,
    DEOPT,
    doc="float(x) as CPython converts (leaves on overflow)",
)
_uop("_COMPARE_OP_INT_OBJECT_FLOAT", (Kind.INT_OBJECT, F), B, DEOPT, operand=CMP, doc="exact, as CPython compares")
_uop("_BINARY_OP_TRUEDIV_INT_OBJECT", (Kind.INT_OBJECT, Kind.INT_OBJECT), F, DEOPT, doc="int / int, correctly rounded")
_uop(
    "_CALL_FLOAT_TO_INT_OBJECT", (F,), Kind.INT_OBJECT, DEOPT, owns=True, operand=Operand.CONST, doc="int(), round()..."
)
_uop("_CALL_ABS_INT_OBJECT", (Kind.INT_OBJECT,), Kind.INT_OBJECT, DEOPT, owns=True, doc="abs() of an exact int")
_uop(
    "_SELECT_INT_OBJECT",
    (B, Kind.INT_OBJECT, Kind.INT_OBJECT),
    Kind.INT_OBJECT,
    owns=True,
    doc="min()/max() of int objects: the second input if the first is true, else the third, with a new reference",
)
# i128 arithmetic where the recorder proved the magnitudes stay below 2**127 (so it never overflows)
W = Kind.WIDE_INT
_uop("_WIDEN_INT", (I,), W, fold=_plain(lambda v: v), doc="an int as an i128")
_uop("_BINARY_OP_ADD_WIDE", (W, W), W, fold=_plain(operator.add), doc="cannot overflow (bounded by the recorder)")
_uop("_BINARY_OP_SUBTRACT_WIDE", (W, W), W, fold=_plain(operator.sub), doc="cannot overflow (likewise)")
_uop("_BINARY_OP_MULTIPLY_WIDE", (W, W), W, fold=_plain(operator.mul), doc="cannot overflow (likewise)")
_uop("_BINARY_OP_REMAINDER_WIDE", (W, I), I, DEOPT, doc="Python's %: the sign of the divisor; leaves on zero")
_uop("_NARROW_WIDE", (W,), I, DEOPT, doc="the i128 as an i64 (leaves if it does not fit)")
_uop("_BOX_WIDE", (W,), Kind.INT_OBJECT, DEOPT, owns=True, doc="a new int object (leaves if allocation fails)")
_uop(
    "_NEW_REF",
    (O,),
    O,
    owns=True,
    doc="a reference of the trace's own to an object read from a container (a later store may drop the container's)",
)
_uop(
    "_STORE_SUBSCR_LIST_OBJECT",
    (O, L, I),
    None,
    DEOPT,
    mutates=True,
    drops=True,
    unchecked="_STORE_SUBSCR_LIST_OBJECT_IN_BOUNDS",
    steals=True,
    doc="inputs: an object, list, index; stores that very object (the element replaced must be a number)",
)
_uop(
    "_STORE_SUBSCR_LIST_OBJECT_IN_BOUNDS",
    (O, L, I),
    None,
    DEOPT,
    mutates=True,
    drops=True,
    steals=True,
    doc="the range analysis proved 0 <= index < len (still leaves where the old item is no number)",
)
# jit.optimizer.moves: the stores of `a[i], a[j] = a[j], a[i]` (items read out of one list stored back into it at
# the indices they were read from, permuted), as one uop that only moves the list's own pointers
_uop(
    "_MOVE_LIST_ITEMS",
    "n",
    None,
    mutates=True,
    unchecked="_MOVE_LIST_ITEMS_IN_BOUNDS",
    doc="inputs: a list, k indices, then the k items to store there (k <= 2), each read from that list at one of "
    "those indices with nothing changing the list since: no reference count changes, nothing freed",
)
_uop("_MOVE_LIST_ITEMS_IN_BOUNDS", "n", None, mutates=True, doc="the range analysis proved 0 <= index < len for each")
_uop(
    "_MOVE_LIST_ITEMS_DISTINCT",
    "n",
    None,
    DEOPT,
    mutates=True,
    unchecked="_MOVE_LIST_ITEMS_DISTINCT_IN_BOUNDS",
    doc="likewise for k > 2 items, leaving before storing anything where two indices name one item",
)
_uop(
    "_MOVE_LIST_ITEMS_DISTINCT_IN_BOUNDS",
    "n",
    None,
    DEOPT,
    mutates=True,
    doc="the range analysis proved 0 <= index < len for each (still leaves where two indices are equal)",
)

# --- strs and dicts (exact types: their hashing, comparing and freeing run no Python code) --------------------
_uop("_LEN_STR", (S,), I)
_uop("_LEN_DICT", (D,), I)
_uop("_COMPARE_OP_STR", (S, S), B, operand=CMP, fold=_compare, doc="by code points, as str compares")
_uop("_DICT_LOOKUP_STR", (D, S), O, doc="the value at a str key (borrowed), or NULL if missing")
_uop("_GUARD_FOUND", (O,), None, DEOPT, doc="a lookup found its key")
_uop("_GUARD_MISSING", (O,), None, DEOPT, doc="a lookup did not find its key")
_uop(
    "_UNBOX_INT_OR_DEFAULT",
    (O, I),
    I,
    DEOPT,
    doc="d.get(key, default) of ints: a lookup's int (leaving if it is another type or does not fit in i64), or "
    "the default where it found nothing (NULL)",
)
_uop("_UNBOX_FLOAT_OR_DEFAULT", (O, F), F, DEOPT, doc="the same of floats: a lookup's float, or the default")
_uop("_CONTAINS_DICT_STR", (D, S), B, doc="key in dict")
_uop("_CONTAINS_STR", (S, S), B, doc="inputs: the str searched, the substring")
_uop("_BIND_DICT_GET", (D,), Kind.DICT_GET_METHOD, doc="d.get, not called yet (the same pointer as d)")
_uop(
    "_STORE_SUBSCR_DICT_STR",
    (ANY, D, S),
    None,
    DEOPT,
    mutates=True,
    drops=True,
    doc="inputs: value, dict, key; the value it replaces must be a number or None",
)
_uop(
    "_STORE_SUBSCR_DICT_STR_OVER_NUMBER",
    (ANY, D, S),
    None,
    DEOPT,
    mutates=True,
    drops=True,
    doc="the same, where the trace read d[key] since anything could change it: a number, None or missing",
)
_uop(
    "_STORE_SUBSCR_DICT_STR_OVER_READ",
    (ANY, D, S, O),
    None,
    DEOPT,
    mutates=True,
    drops=True,
    doc="the same, given the int or float object read there (the fourth input; NULL: found missing by "
    "d.get with a default), which takes the value if only the dict holds it",
)
_uop(
    "_CHECK_STORE_SUBSCR_DICT_STR",
    (D, S),
    None,
    DEOPT,
    pure=False,
    doc="inputs: dict, key; an inlined call's store, checked where it is: the value it replaces is a number or "
    "None, or missing; stored at the call's return (_STORE_SUBSCR_DICT_STR_CHECKED, jit.inline)",
)
_uop(
    "_STORE_SUBSCR_DICT_STR_CHECKED",
    (ANY, D, S),
    None,
    RAISE,
    mutates=True,
    drops=True,
    doc="inputs: value, dict, key; the store _CHECK_STORE_SUBSCR_DICT_STR checked earlier in the same inlined "
    "call; raises at the call where memory runs out",
)

# --- builtins and math ---------------------------------------------------------------------------------------
_uop("_CALL_ABS_INT", (I,), I, DEOPT, fold=_plain(abs))
_uop("_CALL_ABS_FLOAT", (F,), F, fold=_plain(abs))
_uop("_CALL_FLOAT_TO_INT", (F,), I, DEOPT, fold=_plain(int), doc="int(x), math.trunc(x); leaving for nan/inf/big")
_uop("_CALL_ROUND_FLOAT", (F,), I, DEOPT, fold=_plain(round), doc="round(x): half to even")
_uop("_CALL_MATH_FLOOR", (F,), I, DEOPT, fold=_plain(math.floor))
_uop("_CALL_MATH_CEIL", (F,), I, DEOPT, fold=_plain(math.ceil))
_uop("_CALL_MATH_UNARY", (F,), F, DEOPT, operand=Operand.MATH_NAME, doc="a libm function CPython's math module calls")
_uop("_CALL_MATH_PREDICATE", (F,), B, operand=Operand.MATH_NAME, doc="isnan, isinf or isfinite")
_uop("_CALL_BUILTIN_FLOAT", "n", F, DEOPT, operand=Operand.BUILTIN, doc="a pure builtin through the C-API: a float")

# --- NumPy arrays and scalars (jit.arrays; NumPy 2.x: NEP 50 promotion, its overflow and error state) --------
# Scalar arithmetic leaves native code wherever NumPy would warn or raise (np.errstate decides what happens:
# the interpreter redoes the operation): int64 overflow, and float64 results that overflow, underflow, divide
# by zero or are invalid (any result that is not finite, or is tiny, from a multiplication or division).
A, NF, NI, NB, NF32 = Kind.ARRAY, Kind.NP_FLOAT64, Kind.NP_INT64, Kind.NP_BOOL, Kind.NP_FLOAT32
_uop(
    "_GUARD_ARRAY",
    (A,),
    None,
    DEOPT,
    operand=Operand.ARRAY_SPEC,
    hoistable=True,
    doc="an exact ndarray of that dtype, dimensions and layout, aligned, in the machine's byte order",
)
# numpy.empty / zeros / ones in a loop (jit.specialize_array_new): inputs are the dimensions
for _name, _made in (("_ARRAY_EMPTY", "numpy.empty"), ("_ARRAY_ZEROS", "numpy.zeros"), ("_ARRAY_ONES", "numpy.ones")):
    _uop(
        _name,
        "n",
        A,
        DEOPT,
        owns=True,
        operand=Operand.ARRAY_SPEC,
        doc=f"a new C-order array as {_made} makes it, owned by the trace (a negative dimension or a failed "
        "allocation leaves: the interpreter raises)",
    )
_uop("_GUARD_ARRAY_WRITEABLE", (A,), None, DEOPT, hoistable=True, doc="its WRITEABLE flag is set")
#: the hoisted guards a tree call's proven entry skips where its caller called it before with the same objects and
#: no Python code ran since (codegen.python_epoch): an array's header, NumPy's error state. An outer trace never
#: goes on from their exits (ExitPoint.followed): the proven entry would not reach them
PROVEN_BY_CALLERS = frozenset({"_GUARD_ARRAY", "_GUARD_ARRAY_WRITEABLE", "_GUARD_NP_ERRSTATE"})
# the trace's NumPy float operations (+ - * /, numpy.sqrt, the ufuncs' loops, a run's status flags) ignore the
# events NumPy's error state ignored when recorded (jit.numpy_errstate); this guard checks it still does. Failing
# often (the function is now called under another state), it invalidates the tree, recorded again under that
# state; the second time, the function's traces stop ignoring events (jit.monitor). Never a peer tree or a side
# trace linked to its exit: a tree call's proven entry skips it after a call that reached the expected exit
_uop(
    "_GUARD_NP_ERRSTATE",
    (),
    None,
    DEOPT,
    operand=Operand.IGNORED_EVENTS,
    hoistable=True,
    doc="np.errstate of this thread still ignores those events (read through its ContextVar)",
)
_uop("_ARRAY_DATA", (A,), I, entry_value=True, doc="the address of its first element (an integer)")
_uop("_ARRAY_DIM", (A,), I, operand=Operand.AXIS, entry_value=True, doc="a.shape[axis]")
_uop("_ARRAY_STRIDE", (A,), I, operand=Operand.AXIS, entry_value=True, doc="a.strides[axis]")
_uop("_ARRAY_SIZE", (A,), I, operand=Operand.ARRAY_SPEC, entry_value=True, doc="a.size: the product of its dimensions")
_uop(
    "_ARRAY_INDEX",
    (I, I),
    I,
    DEOPT,
    unchecked="_ARRAY_INDEX_FROM_END",
    doc="inputs: a dimension, an index (negative: from the end); leaves if out of it",
)
_uop(
    "_ARRAY_INDEX_FROM_END",
    (I, I),
    I,
    doc="_ARRAY_INDEX where the range analysis proved -dimension <= index < 0: index + dimension",
)
_uop(
    "_ARRAY_INDEX_IN_RANGE",
    (I, I),
    I,
    DEOPT,
    doc="inputs: a dimension, an index that was not negative when recorded; leaves unless 0 <= index < dimension "
    "(a negative index too: the interpreter counts it from the end)",
)
# jit.optimizer.bounds: the _ARRAY_INDEX_IN_RANGE checks of indices base + c, merged into one guard on base where
# the first of them (or of the additions computing them) was; hoisted when its inputs are the same throughout the
# trace (an outer loop's index): failing at the entry grows a side trace (transient)
_uop(
    "_GUARD_INDEX_RANGE",
    "n",
    None,
    DEOPT,
    hoistable=True,
    transient=True,
    unchecked="_INDEX_RANGE_PROVEN",
    doc="inputs: base, low, then pairs dimension, high (low and the highs constants): low <= base and base < "
    "dimension - high for each pair, so that base + c is an index in range of each dimension for every offset c "
    "from -low to its high",
)
_uop("_INDEX_RANGE_PROVEN", "n", None, doc="_GUARD_INDEX_RANGE where the range analysis proved it: nothing to do")
# (and _BINARY_OP_ADD_INT_IN_RANGE, _BINARY_OP_SUBTRACT_INT_IN_RANGE: base + c and base - c, declared above)
_uop(
    "_ARRAY_LOAD",
    "n",
    VARIES,
    operand=Operand.ARRAY_SPEC,
    doc="inputs: the data address, one checked index per axis, then (C order) the dimensions after the first, "
    "or (strided) every stride",
)
_uop(
    "_ARRAY_STORE",
    "n",
    None,
    DEOPT,
    mutates=True,
    operand=Operand.ARRAY_SPEC,
    doc="inputs: value, then as _ARRAY_LOAD's; converted as NumPy converts it (else leaves)",
)
_uop("_NP_CAST", (ANY,), VARIES, doc="a number as another numeric kind, exactly (int to double, bool to int, ...)")
for _name in ("ADD", "SUBTRACT", "MULTIPLY", "TRUE_DIVIDE"):
    _uop(f"_NP_BINARY_OP_{_name}_FLOAT64", (ANY, ANY), NF, DEOPT, doc="inputs: doubles")
for _name in ("ADD", "SUBTRACT", "MULTIPLY"):
    _uop(f"_NP_BINARY_OP_{_name}_INT64", (ANY, ANY), NI, DEOPT, doc="inputs: i64; leaves where it would overflow")
_uop("_NP_COMPARE_OP_FLOAT64", (ANY, ANY), NB, operand=CMP, doc="inputs: doubles")
for _name in ("ADD", "SUBTRACT", "MULTIPLY", "TRUE_DIVIDE"):
    _uop(f"_NP_BINARY_OP_{_name}_FLOAT32", (NF32, NF32), NF32, DEOPT, doc="in single precision")
_uop("_NP_COMPARE_OP_FLOAT32", (NF32, NF32), NB, operand=CMP)
_uop("_NP_TO_FLOAT32", (ANY,), NF32, DEOPT, doc="a double rounded to float32; leaves where the cast overflows")
_uop("_NP_UNARY_NEGATIVE_FLOAT32", (NF32,), NF32)
for _name in ("ADD", "SUBTRACT", "MULTIPLY"):
    _uop(
        f"_NP_BINARY_OP_{_name}_SMALL_INT",
        (ANY, ANY),
        VARIES,
        DEOPT,
        doc="inputs: i64 within 32 bits; a numpy.int32 or numpy.uint8 (its kind), leaving where out of its range",
    )
_uop("_NP_CHECK_RANGE", (I,), None, DEOPT, operand=Operand.KIND, doc="a Python int fits that NumPy int kind")
_uop("_NP_ABS_FLOAT32", (NF32,), NF32)
_uop("_NP_COMPARE_OP_INT64", (ANY, ANY), NB, operand=CMP, doc="inputs: i64")
_uop("_NP_UNARY_NEGATIVE_FLOAT64", (NF,), NF)
_uop("_NP_UNARY_NEGATIVE_INT64", (NI,), NI, DEOPT)
_uop("_NP_ABS_FLOAT64", (NF,), NF)
_uop("_NP_ABS_INT64", (NI,), NI, DEOPT)

# --- NumPy's math ufuncs on scalars (jit.ufuncs): NumPy's result type is the output's kind (a double, a float
# or an i64); native code leaves wherever NumPy would report a floating-point event (np.errstate decides)
_uop("_NP_SQRT", (ANY,), VARIES, DEOPT, doc="input: a double or a float; leaves where it is below zero (invalid)")
_uop(
    "_NP_UFUNC_EXACT",
    (ANY,),
    VARIES,
    operand=Operand.MATH_NAME,
    doc="absolute, floor or ceil of a double or a float (never an event); absolute of an i64 holding a NumPy int "
    "(wrapping at the dtype's minimum, as NumPy's loop does)",
)
_uop(
    "_NP_MINMAX",
    (ANY, ANY),
    VARIES,
    operand=Operand.MATH_NAME,
    doc="minimum or maximum of two doubles, floats or i64: a NaN on either side wins, of equal values the second",
)
_uop(
    "_NP_UFUNC_LOOP",
    (ANY,),
    VARIES,
    DEOPT,
    operand=Operand.MATH_NAME,
    doc="numpy.<name> through NumPy's own inner loop for the output's type (d->d, f->f), between clearing and "
    "testing the floating-point status flags; leaves on any event NumPy reports",
)

# --- the generic object path: any value through the C-API (jit.recorder.generic, codegen.lower.generic) --------
# Each may run arbitrary Python code (a barrier) and raise: its exit leaves with the exception set, at its own
# instruction (Guard.RAISE). Numbers are boxed for the call; the result is a new reference the trace owns
_GENERIC = {"guard": RAISE, "barrier": True, "mutates": True, "drops": True}
_uop(
    "_CALL_GENERIC",
    "n",
    O,
    owns=True,
    operand=Operand.KWNAMES,
    doc="inputs: the callable, then its arguments (keyword arguments last, named by the operand): PyObject_Vectorcall",
    **_GENERIC,
)
_uop(
    "_CALL_METHOD_GENERIC",
    "n",
    O,
    owns=True,
    operand=Operand.KWNAMES,
    doc="`obj.name(...)`, inputs: obj, then the arguments; operand: (name, *keyword names): "
    "PyObject_VectorcallMethod (no bound method made)",
    **_GENERIC,
)
_uop(
    "_CALL_METHOD_DESCRIPTOR",
    "n",
    O,
    owns=True,
    operand=Operand.METHOD,
    doc="`obj.name(...)` where obj is exactly of a builtin type whose attributes cannot change (str, list, dict, "
    "...): its method descriptor, found when recorded, called with obj first (PyObject_Vectorcall)",
    **_GENERIC,
)
_uop("_LOAD_ATTR_GENERIC", (ANY,), O, owns=True, operand=Operand.NAME, doc="PyObject_GetAttr", **_GENERIC)
_uop("_GET_ITER_GENERIC", (ANY,), O, owns=True, doc="iter() of any iterable: PyObject_GetIter", **_GENERIC)
_uop(
    "_ITER_NEXT_GENERIC",
    (O,),
    O,
    owns=True,
    doc="next() of any iterator (PyIter_Next): its item, or NULL where it has none (the guard after it decides)",
    **_GENERIC,
)
_uop("_GUARD_ITER_ITEM", (O,), None, DEOPT, doc="_ITER_NEXT_GENERIC gave an item: else leave, the loop ended")
_uop(
    "_GUARD_ITER_DONE",
    (O,),
    None,
    DEOPT,
    steals=True,  # (its input is NULL where it goes on: nothing to release)
    doc="_ITER_NEXT_GENERIC gave no item: else leave with it, in the loop",
)
# (jit.recorder.attributes, codegen.lower.attributes: an attribute of a plain instance read where CPython keeps it)
_uop(
    "_GUARD_CLASS_VERSION",
    (),
    None,
    DEOPT,
    operand=Operand.CLASS_ATTR,
    hoistable=True,
    doc="the class's version tag is as recorded (neither it nor a class of its MRO changed)",
)
_uop(
    "_LOAD_ATTR_INSTANCE",
    (O,),
    O,
    DEOPT,
    owns=True,
    operand=Operand.CLASS_ATTR,
    doc="an attribute in the instance's values or a __slots__ member (its class guarded); leaves where unset",
)
_uop(
    "_GUARD_NO_INSTANCE_ATTR",
    (O,),
    None,
    DEOPT,
    operand=Operand.CLASS_ATTR,
    doc="the instance holds no attribute of the name (an inlined method's, a class attribute read through it): its "
    "values (no real dict) are indexed by the class's shared keys, as many as when recorded (append-only, and the "
    "name was not among them)",
)
_uop(
    "_STORE_ATTR_INSTANCE",
    (ANY, O),
    None,
    DEOPT,
    mutates=True,
    drops=True,
    operand=Operand.CLASS_ATTR,
    doc="inputs: value, instance; replaces an attribute in its values or a __slots__ member (its class guarded); "
    "leaves where unset or where freeing the value replaced could run Python code",
)
_uop(
    "_CHECK_STORE_ATTR_INSTANCE",
    (O,),
    None,
    DEOPT,
    pure=False,
    operand=Operand.CLASS_ATTR,
    doc="an inlined call's store, checked where it is: the attribute set, in its values or a __slots__ member (its "
    "class guarded), its value of a type freed plainly (jit.instances.FREED_PLAINLY); stored at the call's return "
    "(_STORE_ATTR_INSTANCE_CHECKED, jit.inline)",
)
_uop(
    "_STORE_ATTR_INSTANCE_CHECKED",
    (ANY, O),
    None,
    RAISE,
    mutates=True,
    drops=True,
    operand=Operand.CLASS_ATTR,
    doc="inputs: value, instance; the store _CHECK_STORE_ATTR_INSTANCE checked earlier in the same inlined call, "
    "nothing between them running Python code; raises at the call where boxing the value fails (MemoryError)",
)
_uop(
    "_NEW_INSTANCE",
    (),
    O,
    DEOPT,
    owns=True,
    operand=Operand.CLASS_ATTR,
    doc="a new instance of the class (its version guarded: jit.instances.find_constructor), made by its tp_new, "
    "object's, as `klass(...)` makes it before its __init__ (inlined on it); leaves where that fails",
)
_uop(
    "_STORE_ATTR_FRESH",
    (ANY, O),
    None,
    DEOPT,
    drops=True,
    operand=Operand.NAME,
    doc="inputs: value, instance; a store into an instance this inlined call made (_NEW_INSTANCE), which nothing "
    "else holds yet: PyObject_SetAttr, no Python code (jit.instances.stores_plainly); leaves where it fails",
)
_uop("_STORE_ATTR_GENERIC", (ANY, ANY), None, operand=Operand.NAME, doc="inputs: object, value", **_GENERIC)
_uop(
    "_STORE_GLOBAL_GENERIC",
    (ANY,),
    None,
    operand=Operand.GLOBAL_NAME,
    doc="globals[name] = the value (a list, a tuple, a dict, any object; or one replacing such an object), whose "
    "replaced value's freeing may run Python code (a __del__ of it or of an item): PyDict_SetItem",
    **_GENERIC,
)
_uop(
    "_STORE_CELL_GENERIC",
    (ANY, O),
    None,
    operand=SLOT,
    doc="inputs: value, a cell variable's cell (the slot's, operand): PyCell_Set, whose release of the value it "
    "replaces (a list, an instance...) may run Python code",
    **_GENERIC,
)
_uop(
    "_BINARY_OP_GENERIC",
    (ANY, ANY),
    O,
    owns=True,
    operand=Operand.BINARY_OP,
    doc="PyNumber_<op> (in place for an augmented assignment)",
    **_GENERIC,
)
_uop("_COMPARE_OP_GENERIC", (ANY, ANY), O, owns=True, operand=CMP, doc="PyObject_RichCompare", **_GENERIC)
_uop(
    "_UNARY_OP_GENERIC",
    (ANY,),
    O,
    owns=True,
    operand=Operand.CONST,
    doc="PyNumber_Negative, PyNumber_Positive or PyNumber_Invert (the operand: the UnaryOp)",
    **_GENERIC,
)
_uop(
    "_TO_BOOL_OBJECT",
    (O,),
    B,
    DEOPT,
    doc="PyObject_IsTrue of an object whose type's truth runs no Python code; leaves (clearing it) on an error",
)
_uop(
    "_TO_BOOL_GENERIC",
    (ANY,),
    B,
    doc="PyObject_IsTrue of an object whose class's __bool__ or __len__ is Python code (a barrier)",
    **_GENERIC,
)
_uop("_BINARY_SUBSCR_GENERIC", (ANY, ANY), O, owns=True, doc="inputs: container, key: PyObject_GetItem", **_GENERIC)
_uop(
    "_STORE_SUBSCR_GENERIC",
    (ANY, ANY, ANY),
    None,
    doc="inputs: value, container, key: PyObject_SetItem",
    **_GENERIC,
)
_uop(
    "_DELETE_SUBSCR_GENERIC",
    (ANY, ANY),
    None,
    doc="inputs: container, key: PyObject_DelItem (`del d[k]`)",
    **_GENERIC,
)
_uop(
    "_DELETE_ATTR_GENERIC",
    (ANY,),
    None,
    operand=Operand.NAME,
    doc="`del obj.name`: PyObject_SetAttr with no value",
    **_GENERIC,
)
_uop(
    "_BUILD_SLICE",
    "n",
    O,
    RAISE,
    owns=True,
    doc="a new slice of the inputs (start, stop[, step]): PySlice_New (runs no Python code; fails on memory)",
)
_uop(
    "_BINARY_OP_ADD_STR",
    (S, S),
    S,
    RAISE,
    owns=True,
    steals=True,
    steals_alias=True,
    drops=True,
    doc="str + str (runs no Python code; fails on memory): PyUnicode_Concat; the left str grows in place where "
    "the trace gives up its reference to it here and nothing else holds it (`s += x` in a loop)",
)
_uop(
    "_FORMAT_VALUE",
    "n",
    O,
    owns=True,
    operand=Operand.CONVERSION,
    doc="an f-string field, inputs: the value[, its format spec]: PyObject_Str/Repr/ASCII for the conversion, "
    "then PyObject_Format",
    **_GENERIC,
)
_uop(
    "_FORMAT_NUMBER",
    "n",
    S,
    RAISE,
    owns=True,
    doc="an f-string field of an int, float or bool, inputs: the number[, a constant format spec]: PyObject_Str "
    "(any conversion, no spec: the same str), or PyObject_Format with the spec (their C code: no Python code runs; "
    "fails on memory, or on a spec the type refuses)",
)
_uop(
    "_BUILD_STRING",
    "n",
    S,
    RAISE,
    owns=True,
    doc="an f-string, inputs: its parts (str): PyUnicode_Join (runs no Python code; fails on memory)",
)
_uop("_BUILD_SET", "n", O, owns=True, doc="a new set of the inputs: PySet_New, PySet_Add", **_GENERIC)
_uop("_BUILD_MAP", "n", O, owns=True, doc="a new dict of the inputs (key, value, ...): PyDict_SetItem", **_GENERIC)
_uop(
    "_BUILD_MAP_CONST_KEYS",
    "n",
    D,
    DEOPT,
    owns=True,
    doc="a new dict of the inputs (key, value, ...) whose keys are distinct str or int constants: PyDict_SetItem, which "
    "then runs no Python code (no barrier); where it fails (memory) the exception is cleared and the trace leaves "
    "for the interpreter to make it again",
)
_uop("_CONTAINS_GENERIC", (ANY, ANY), B, doc="inputs: container, item: PySequence_Contains", **_GENERIC)
_uop(
    "_CONTAINS_SET",
    (O, ANY),
    B,
    RAISE,
    pure=False,
    doc="inputs: an exact set or frozenset, an int, float, bool or str: PySet_Contains (runs no Python code)",
)
_uop(
    "_SET_ADD",
    (O, ANY),
    None,
    RAISE,
    mutates=True,
    doc="inputs: an exact set, an int, float, bool or str: PySet_Add (no Python code; fails only on memory)",
)
_uop(
    "_NEW_EMPTY",
    (),
    VARIES,
    DEOPT,
    owns=True,
    operand=Operand.CONST,
    doc="an empty list, dict, set, frozenset or tuple (the operand: its type): `set()`, `{}`, `dict()`, ... made by "
    "the C-API's constructor, which runs no Python code (no barrier); where it fails (memory) the exception is "
    "cleared and the trace leaves for the interpreter to make it again",
)
_uop(
    "_MAKE_FUNCTION",
    "n",
    O,
    DEOPT,
    owns=True,
    operand=Operand.CONST,
    doc="a lambda or nested def made (the operand: its jit.frontend.nested_code.FunctionMaker; inputs: defaults, "
    "keyword-only defaults, annotations, each None or its tuple or dict, then the values of the variables it reads): "
    "PyFunction_New of its code and globals, a closure of new cells (the def's own cell as given), as CPython's "
    "MAKE_FUNCTION, which runs no Python code (no barrier); where an allocation fails, everything made is released, "
    "the exception cleared and the trace leaves for the interpreter to make it again",
)
_uop(
    "_CALL_METHOD_PURE",
    "n",
    VARIES,
    DEOPT,
    owns=True,
    operand=Operand.METHOD,
    doc="`s.upper()`, `s.split(sep)`, ...: a method descriptor of str (jit.recorder.pure_methods) on an exact str "
    "and arguments of kinds it reads without running Python code, called with obj first (PyObject_Vectorcall); "
    "no barrier: where it fails, its exception is cleared and the trace leaves before the call's LOAD_ATTR (or "
    "the pending method call around it: the interpreter makes both again, and raises what CPython raises)",
)
_uop(
    "_BINARY_SUBSCR_STR",
    (S, ANY),
    S,
    DEOPT,
    owns=True,
    doc="`s[i]`, `s[i:j:k]` of an exact str, inputs: the str, an int or a slice of ints and None: PyObject_GetItem "
    "(runs no Python code); where it fails (an index out of range), its exception is cleared and the trace leaves "
    "before the subscript, which the interpreter makes again",
)
_uop(
    "_LIST_SLICE",
    (L, ANY),
    L,
    DEOPT,
    owns=True,
    doc="`a[i:j:k]` of an exact list, inputs: the list, a slice of ints and None: PyObject_GetItem (runs no Python "
    "code: a new list referencing the items); leaves as _BINARY_SUBSCR_STR where it fails (MemoryError)",
)
_uop(
    "_TUPLE_SLICE",
    (T, ANY),
    T,
    DEOPT,
    owns=True,
    doc="`t[i:j:k]` of an exact tuple, likewise",
)
_uop(
    "_LIST_POP",
    (L,),
    O,
    DEOPT,
    mutates=True,
    owns=True,
    doc="list.pop() of an exact list: its last item, with the reference the list gives up (its length one less, its "
    "allocation kept); leaves where the list is empty (the interpreter raises CPython's IndexError)",
)
_uop(
    "_KEEP_ALIVE",
    (ANY,),
    VARIES,
    owns=True,
    doc="a reference of the trace's own to a borrowed pointer it still needs after a barrier",
)
_uop(
    "_CHECK_BARRIER",
    (),
    None,
    DEOPT,
    doc="after a barrier: the guards hoisted to the trace's entry (and the values read there) still hold; "
    "leaves after the barrier's instruction, with its result",
)
_uop(
    "_GUARD_CLASS",
    (O,),
    None,
    DEOPT,
    operand=Operand.CONST,
    doc="an object held as Kind.OBJECT is exactly of that type (so it is no value of another kind)",
)
_uop(
    "_GUARD_TYPE_OWNED",
    (O,),
    VARIES,
    DEOPT,
    owns=True,
    operand=Operand.KIND,
    doc="an owned object (a generic result) is of that pointer kind: a reference of its own to it",
)
