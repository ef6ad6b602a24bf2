"""The tier-1 instruction set.

tracejit does not run CPython's bytecode: the front end compiles a function's AST to this small stack-machine
instruction set, which stays the same from Python 3.11 to 3.14 and is shaped for recording traces:

* At every loop header (``LOOP_HEADER``) the operand stack is empty, so the whole state of a loop is in the
  frame's slots. Comprehensions that appear inside an expression spill the pending operands to hidden slots.
* Loop state lives in hidden slots after the user's locals: a ``for`` over ``range`` keeps ``cur``, ``stop``,
  ``step`` (and an ``iter`` slot used only if ``range`` was rebound to something else); a ``for`` over any other
  iterable keeps its iterator in one hidden slot.
* Every instruction carries its source line.

Each opcode is declared once below with its stack effect; the interpreter (``runtime.interpreter``) gives it
CPython's semantics and the recorder (``jit.recorder``) expands it into uops.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from typing import Any


@dataclasses.dataclass(frozen=True)
class OpInfo:
    name: str
    code: int
    # stack effect on the fall-through path; a callable receives the instruction's argument
    effect: int | Callable[[Any], int]
    # stack effect when the jump is taken (None: not a jump)
    jump_effect: int | None = None
    doc: str = ""


_OPS: list[OpInfo] = []


def _op(name: str, effect: int | Callable[[Any], int], jump_effect: int | None = None, doc: str = "") -> int:
    code = len(_OPS)
    _OPS.append(OpInfo(name, code, effect, jump_effect, doc))
    return code


# --- stack and slots -------------------------------------------------------------------------------------
NOP = _op("NOP", 0)
POP_TOP = _op("POP_TOP", -1)
COPY = _op("COPY", 1, doc="push a copy of stack[-arg]")
SWAP = _op("SWAP", 0, doc="swap the top with stack[-arg]")
LOAD_CONST = _op("LOAD_CONST", 1, doc="arg is the constant itself")
LOAD_FAST = _op("LOAD_FAST", 1, doc="arg is a slot; UnboundLocalError if empty")
LOAD_FAST_AND_CLEAR = _op("LOAD_FAST_AND_CLEAR", 1, doc="push a hidden slot and empty it")
STORE_FAST = _op("STORE_FAST", -1)
DELETE_FAST = _op("DELETE_FAST", 0)
CLEAR_SLOTS = _op("CLEAR_SLOTS", 0, doc="arg = (first, count): empty hidden slots (loop exit)")
LOAD_GLOBAL = _op("LOAD_GLOBAL", 1, doc="globals, then builtins; NameError")
STORE_GLOBAL = _op("STORE_GLOBAL", -1, doc="a name the function declares global")
DELETE_GLOBAL = _op("DELETE_GLOBAL", 0, doc="a name the function declares global; NameError if missing")
MAKE_CELL = _op(
    "MAKE_CELL",
    0,
    doc="arg is a cell variable's slot: at function entry, a new cell holding what it holds (a parameter's argument)",
)
LOAD_DEREF = _op("LOAD_DEREF", 1, doc="arg is a cell variable's slot: what its cell holds; UnboundLocalError if empty")
STORE_DEREF = _op("STORE_DEREF", -1, doc="arg is a cell variable's slot: store into its cell")
DELETE_DEREF = _op("DELETE_DEREF", 0, doc="arg is a cell variable's slot: empty its cell; UnboundLocalError if empty")
LOAD_FREE = _op(
    "LOAD_FREE",
    1,
    doc="arg = (index, name): a closure's variable, in its cell `index` (inlined callees only); NameError",
)

STORE_FREE = _op(
    "STORE_FREE",
    -1,
    doc="arg = (index, name): store into a closure's cell `index` (a `nonlocal` of a callee to inline)",
)

# --- objects ---------------------------------------------------------------------------------------------
LOAD_ATTR = _op("LOAD_ATTR", 0)
LOAD_SUPER_ATTR = _op(
    "LOAD_SUPER_ATTR",
    -1,
    doc="arg = (index, name): stack: super, first argument; `super().name` in a method, with the class in cell `index`",
)
STORE_ATTR = _op("STORE_ATTR", -2, doc="stack: value, obj")
DELETE_ATTR = _op("DELETE_ATTR", -1)
BINARY_SUBSCR = _op("BINARY_SUBSCR", -1)
STORE_SUBSCR = _op("STORE_SUBSCR", -3, doc="stack: value, container, key")
DELETE_SUBSCR = _op("DELETE_SUBSCR", -2)
BUILD_SLICE = _op("BUILD_SLICE", lambda n: 1 - n)

# --- operators -------------------------------------------------------------------------------------------
BINARY_OP = _op("BINARY_OP", -1, doc="arg is an operators.BinOp")
UNARY_OP = _op("UNARY_OP", 0, doc="arg is an operators.UnaryOp")
COMPARE_OP = _op("COMPARE_OP", -1, doc="arg is an operators.CompareOp")

# --- displays --------------------------------------------------------------------------------------------
BUILD_LIST = _op("BUILD_LIST", lambda n: 1 - n)
BUILD_TUPLE = _op("BUILD_TUPLE", lambda n: 1 - n)
BUILD_SET = _op("BUILD_SET", lambda n: 1 - n)
BUILD_MAP = _op("BUILD_MAP", lambda n: 1 - 2 * n)
LIST_APPEND = _op("LIST_APPEND", -1, doc="append the top to the list in slot arg")
SET_ADD = _op("SET_ADD", -1, doc="add the top to the set in slot arg")
MAP_ADD = _op("MAP_ADD", -2, doc="stack: key, value; store into the dict in slot arg")
UNPACK_SEQUENCE = _op("UNPACK_SEQUENCE", lambda n: n - 1)
FORMAT_VALUE = _op("FORMAT_VALUE", lambda a: -1 if a[1] else 0, doc="arg = (conversion, has_spec)")
BUILD_STRING = _op("BUILD_STRING", lambda n: 1 - n)

# --- calls -----------------------------------------------------------------------------------------------
CALL = _op("CALL", lambda n: -n, doc="stack: callable, n positional arguments")
CALL_KW = _op("CALL_KW", lambda a: -a[0], doc="arg = (n, names): the last len(names) arguments are keywords")

# --- control flow ----------------------------------------------------------------------------------------
JUMP = _op("JUMP", 0, 0)
JUMP_BACKWARD = _op("JUMP_BACKWARD", 0, 0, doc="a loop back-edge; arg is the loop's LOOP_HEADER")
POP_JUMP_IF_FALSE = _op("POP_JUMP_IF_FALSE", -1, -1)
POP_JUMP_IF_TRUE = _op("POP_JUMP_IF_TRUE", -1, -1)
JUMP_IF_FALSE_OR_POP = _op("JUMP_IF_FALSE_OR_POP", -1, 0)
JUMP_IF_TRUE_OR_POP = _op("JUMP_IF_TRUE_OR_POP", -1, 0)
LOOP_HEADER = _op("LOOP_HEADER", 0, doc="arg is the loop's index; the JIT enters compiled code here")
RANGE_SETUP = _op("RANGE_SETUP", -1, doc="pop the result of range(...) into the hidden slots at arg")
FOR_RANGE = _op("FOR_RANGE", 1, 0, doc="arg = (slot base, exit): push the next value or leave the loop")
GET_ITER = _op(
    "GET_ITER",
    -1,
    doc="pop an iterable into the hidden slots at arg: (sequence, index) for a list or tuple, else iter()",
)
FOR_ITER = _op("FOR_ITER", 1, 0, doc="arg = (slot base, exit): push the next item or leave the loop")
RETURN_VALUE = _op("RETURN_VALUE", -1)
RAISE = _op("RAISE", lambda n: -n, doc="arg = 1: raise top; 2: raise top1 from top")

OPS: tuple[OpInfo, ...] = tuple(_OPS)
JUMPS = frozenset(i.code for i in OPS if i.jump_effect is not None)
# instructions after which control never falls through
TERMINATORS = frozenset({JUMP, JUMP_BACKWARD, RETURN_VALUE, RAISE})


def stack_effect(op: int, arg: Any, jump: bool = False) -> int:
    info = OPS[op]
    effect = info.jump_effect if jump else info.effect
    assert effect is not None, info.name
    return effect(arg) if callable(effect) else effect


def jump_target(op: int, arg: Any) -> int | None:
    """The pc an instruction may jump to, or None."""
    if op in (FOR_RANGE, FOR_ITER):
        return arg[1]
    if op in JUMPS:
        return arg
    return None


class LoopKind(enum.StrEnum):
    """What a loop iterates: a ``range`` (split into hidden slots), any other iterable, or a ``while``."""

    RANGE = "range"
    ITER = "iter"
    WHILE = "while"


@dataclasses.dataclass
class LoopInfo:
    """One loop of the function: where its header is, which pcs form its body, and its hidden slots."""

    index: int
    kind: LoopKind
    line: int
    header_pc: int = -1  # the LOOP_HEADER instruction
    body_end: int = -1  # one past the last instruction of the body (the closing JUMP_BACKWARD)
    exit_pc: int = -1  # where the loop goes when its condition fails or its iterator is exhausted
    hidden: tuple[int, ...] = ()  # hidden slots this loop owns
    parent: int | None = None  # enclosing loop's index
    depth: int = 0
    body_pc: int = -1  # the body's first instruction: after the target is stored / the condition held
    break_pc: int | None = None  # where a `break` of this loop lands (None: the loop has no break)
    # a range loop whose call has one or two arguments: its step is 1 (unless `range` names another callable
    # that returns a range of another step, which the recorder's guard on it catches)
    unit_step: bool = False
    # (lineno, col_offset) of the for/while statement; None for a comprehension's loop
    statement: tuple[int, int] | None = None
    # the first loop of a list, set or dict comprehension that no loop encloses (CPython may hand it over at its
    # header, ``jit.frontend.instrument``): (lineno, col_offset) of the comprehension, the hidden slot of what
    # it builds, and that container's type; None, -1, None for every other loop
    comprehension: tuple[int, int] | None = None
    accumulator: int = -1
    builds: type | None = None
    # the first loop of a generator expression consumed inline (``jit.frontend.consumers``) that CPython may hand
    # over whole (its ``comprehension`` is then the call's position): the consumer's name ("any", ..., "join"),
    # whose result comes of what the loop builds in its accumulator; None for every other loop
    consumer: str | None = None
    # the first loop of a generator expression consumed inline: the pcs, in its innermost loop's body, of what the
    # builtin does with each element, which runs in the caller's frame, not the generator's (empty for other loops)
    consumer_pcs: range = range(0)
    # the first loop of any list, set or dict comprehension: the name of the frame CPython 3.11 runs it in
    # ("<listcomp>"...), and the pc of its first instruction (whose position is the whole comprehension's); None,
    # -1 for every other loop. (The loop's pcs are that frame's: what raises in them shows it in a traceback.)
    frame_name: str | None = None
    frame_pc: int = -1

    @property
    def handed_over(self) -> bool:
        """Whether CPython's instrumented code may hand this loop over at its start: a loop statement, or an
        outermost comprehension."""
        return self.statement is not None or self.comprehension is not None

    def contains(self, pc: int) -> bool:
        return self.header_pc <= pc < self.body_end


#: how a statement of ``T1Code.cpython_only`` is left to CPython (what ``jit.explain`` says of it)
OUTSIDE_LOOPS = "outside every loop"
PLAIN_LOOP = "the loop at line {line} runs as plain CPython"


@dataclasses.dataclass
class T1Code:
    """A function compiled to tier-1 instructions."""

    name: str
    qualname: str
    filename: str
    firstlineno: int
    ops: tuple[int, ...]
    args: tuple[Any, ...]
    lines: tuple[int, ...]
    # per instruction, (lineno, end_lineno, col_offset, end_col_offset) of the AST node it was compiled from,
    # placed as CPython places the instructions of that node (tracebacks point at the same source text)
    positions: tuple[tuple[int, int, int, int], ...]
    slot_names: tuple[str, ...]  # user locals first (parameters in order), then hidden slots
    nlocals: int  # number of user locals; slots from here on are hidden
    nparams: int
    loops: tuple[LoopInfo, ...]
    max_stack: int
    # slots of the cell variables: a variable of the function that a nested function reads or assigns and that
    # the function may rebind lives in a cell (made at entry, MAKE_CELL), which the slot holds; the function
    # reads and writes it through the cell (LOAD_DEREF, STORE_DEREF, DELETE_DEREF), nested functions hold the cell
    cells: frozenset[int] = frozenset()
    # pcs of LOAD_FAST instructions reading an enclosing local from inside a comprehension: an unbound one
    # there raises what the running Python raises (3.11: NameError about a free variable)
    comprehension_loads: frozenset[int] = frozenset()
    # statements that the front end could not compile, left to CPython (the baseline runs them; the code is then
    # only for the loops CPython hands over: ``jit.frontend.statements.compile_function`` with ``partial``):
    # (line, reason, how) each, how OUTSIDE_LOOPS (a statement outside every loop, with no loop in it) or
    # PLAIN_LOOP with the line of a loop statement holding it, which runs as plain CPython (its nested loops
    # compiled on their own)
    cpython_only: tuple[tuple[int, str, str], ...] = ()
    # (jit.recorder) pcs of LOAD_ATTRs whose method, bound there once, was not simply called: not fused again
    unfused_methods: set[int] = dataclasses.field(default_factory=set, compare=False, repr=False)
    # (jit.recorder) pcs of LOAD_ATTRs of `d.get` called with a key native lookups do not take (not a str):
    # recorded as a generic method call from then on
    generic_dict_gets: set[int] = dataclasses.field(default_factory=set, compare=False, repr=False)
    # (jit.recorder.names) globals a trace of the function stored another value than a number or None into (a
    # str, a list, ...): no trace guards them to hold a number at its entry (_GUARD_GLOBAL_NUMBER)
    object_globals: set[str] = dataclasses.field(default_factory=set, compare=False, repr=False)
    # loops (indices) not to unroll into an outer trace: their range's bound changed in the outer loop
    not_unrolled: set[int] = dataclasses.field(default_factory=set, compare=False, repr=False)

    @property
    def nslots(self) -> int:
        return len(self.slot_names)

    @property
    def outer_loops(self) -> frozenset[int]:
        """The loops (indices) with a loop nested in them."""
        return frozenset(loop.parent for loop in self.loops if loop.parent is not None)

    def loop_of_statement(self, node: Any) -> LoopInfo | None:
        """The loop compiled from a for/while statement node (matched by its position in the source)."""
        key = (node.lineno, node.col_offset)
        for loop in self.loops:
            if loop.statement == key:
                return loop
        return None

    def format_instr(self, pc: int) -> str:
        op, arg = self.ops[pc], self.args[pc]
        text = _format_arg(self, op, arg)
        return f"{pc:4d} {OPS[op].name:<22}{text}"

    def disassemble(self) -> str:
        """A readable listing, one instruction a line, with source lines."""
        out = [f"tier-1 code of {self.qualname} ({self.filename}:{self.firstlineno})"]
        headers = {loop.header_pc: loop for loop in self.loops}
        last_line = None
        for pc in range(len(self.ops)):
            if pc in headers:
                loop = headers[pc]
                out.append(f"     -- loop {loop.index} ({loop.kind}, line {loop.line}, depth {loop.depth})")
            line = self.lines[pc]
            mark = f"  line {line}" if line != last_line else ""
            last_line = line
            out.append(f"{self.format_instr(pc):<60}{mark}".rstrip())
        return "\n".join(out)


def _format_arg(code: T1Code, op: int, arg: Any) -> str:
    def slot(i: int) -> str:
        return f"{i} ({code.slot_names[i]})"

    if op in (LOAD_FAST, STORE_FAST, DELETE_FAST, LOAD_FAST_AND_CLEAR, GET_ITER, LIST_APPEND, SET_ADD, MAP_ADD):
        return slot(arg)
    if op in (MAKE_CELL, LOAD_DEREF, STORE_DEREF, DELETE_DEREF):
        return slot(arg)
    if op in (RANGE_SETUP,):
        return slot(arg)
    if op in (FOR_RANGE, FOR_ITER):
        return f"{slot(arg[0])} exit={arg[1]}"
    if op == CLEAR_SLOTS:
        return f"{arg[0]}..{arg[0] + arg[1] - 1}"
    if op == LOAD_CONST:
        return repr(arg)
    if arg is None:
        return ""
    return str(arg)
