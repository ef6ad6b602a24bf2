"""The state of compiling one function: emitted instructions, labels, slots, scopes and loops.

``statements``, ``loops`` and ``expressions`` hold the compilation of each construct; they call into this builder.
"""

from __future__ import annotations

import ast
import dataclasses
import types
from collections.abc import Callable
from typing import Any

from jit.frontend import instructions as I
from jit.frontend.instructions import LoopInfo, LoopKind, T1Code
from jit.frontend.source import FunctionSource


class Label:
    __slots__ = ("pc", "depth")

    def __init__(self) -> None:
        self.pc: int | None = None
        self.depth: int | None = None


@dataclasses.dataclass
class LoopContext:
    info: LoopInfo
    header: Label
    exit: Label = dataclasses.field(default_factory=Label)  # where the loop goes when it ends normally
    break_label: Label | None = None  # made on the first break


class FunctionBuilder:
    def __init__(
        self,
        source: FunctionSource,
        lower_comprehension: Callable[[FunctionBuilder, ast.expr], None],
        lower_consumed: Callable[[FunctionBuilder, ast.Call], bool] | None = None,
    ) -> None:
        self.source = source
        # how a comprehension is lowered (``jit.frontend.loops``, which builds on the expressions that call it)
        self.lower_comprehension = lower_comprehension
        # how a generator expression consumed by a builtin is lowered, if it is (``jit.frontend.consumers``):
        # whether it was
        self.lower_consumed = lower_consumed
        self.ops: list[int] = []
        self.args: list[Any] = []
        self.lines: list[int] = []
        self.positions: list[tuple[int, int, int, int]] = []
        self.slot_names: list[str] = list(source.local_names)
        self.local_slots: dict[str, int] = {name: i for i, name in enumerate(source.local_names)}
        self.comprehension_scopes: list[dict[str, int]] = []
        # the function's cell variables (``jit.frontend.nested_code.cell_variables``): their names, their slots
        self.cell_names: frozenset[str] = frozenset()
        self.cells: frozenset[int] = frozenset()
        self.comprehension_loads: set[int] = set()
        self.loops: list[LoopInfo] = []
        self.loop_contexts: list[LoopContext] = []
        self.loop_stack: list[LoopContext] = []
        self.labels: list[tuple[int, Label]] = []  # (pc of a jump, its target label)
        self.depth = 0
        self.max_depth = 0
        self.line = source.node.lineno
        self.position = node_position(source.node)
        self._constants: dict[Any, Any] | None = None
        # (partial code) statements left to CPython, as (line, reason, how: ``instructions.OUTSIDE_LOOPS`` or
        # ``instructions.PLAIN_LOOP``); None: refuse the whole function at the first one
        self.cpython_only: list[tuple[int, str, str]] | None = None

    # --- emission --------------------------------------------------------------------------------------
    def mark(self) -> tuple[Any, ...]:
        """Where the code is now, to roll back to (``rollback``) if the statement being compiled is refused."""
        return (
            len(self.ops),
            len(self.slot_names),
            len(self.loops),
            len(self.loop_contexts),
            len(self.loop_stack),
            len(self.labels),
            len(self.comprehension_scopes),
            self.depth,
            self.line,
            self.position,
        )

    def rollback(self, mark: tuple[Any, ...]) -> None:
        """Drop everything emitted since mark (a statement outside every loop, refused part way: the loops it
        had begun too)."""
        ops, slots, loops, contexts, stack, labels, scopes, depth, line, position = mark
        for seq, n in (
            (self.ops, ops),
            (self.args, ops),
            (self.lines, ops),
            (self.positions, ops),
            (self.slot_names, slots),
            (self.loops, loops),
            (self.loop_contexts, contexts),
            (self.loop_stack, stack),
            (self.labels, labels),
            (self.comprehension_scopes, scopes),
        ):
            del seq[n:]
        self.comprehension_loads = {pc for pc in self.comprehension_loads if pc < ops}
        self.depth = depth
        self.line = line
        self.position = position

    def emit(self, op: int, arg: Any = None) -> int:
        pc = len(self.ops)
        self.ops.append(op)
        self.args.append(arg)
        self.lines.append(self.line)
        self.positions.append(self.position)
        self.depth += I.stack_effect(op, arg)
        assert self.depth >= 0, (I.OPS[op].name, self.depth)
        self.max_depth = max(self.max_depth, self.depth)
        return pc

    def emit_jump(self, op: int, label: Label, slot: int | None = None) -> int:
        """Emit a jump to label; FOR_RANGE/FOR_ITER also take their slot."""
        arg = (slot, label) if slot is not None else label
        taken_depth = self.depth + I.stack_effect(op, arg, jump=True)
        pc = self.emit(op, arg)
        self._note_depth(label, taken_depth)
        self.labels.append((pc, label))
        return pc

    def place(self, label: Label) -> None:
        label.pc = len(self.ops)
        fell_through = bool(self.ops) and self.ops[-1] not in I.TERMINATORS
        if label.depth is None or fell_through:
            self._note_depth(label, self.depth)
        self.depth = label.depth  # type: ignore[assignment]

    def _note_depth(self, label: Label, depth: int) -> None:
        if label.depth is None:
            label.depth = depth
        assert label.depth == depth, f"inconsistent stack depth at a label: {label.depth} vs {depth}"

    def constant(self, value: Any) -> Any:
        """The object CPython uses for a literal: the equal constant of the function's code object when it is
        there (so `is` on literals and constant tuples answers as under CPython), else one object per value."""
        key = const_key(value)
        if key is None:
            return value
        if self._constants is None:
            self._constants = {}
            collect_consts(self.source.func.__code__, self._constants)
        return self._constants.setdefault(key, value)

    # --- slots and names -------------------------------------------------------------------------------
    def new_hidden(self, name: str) -> int:
        self.slot_names.append(name)
        return len(self.slot_names) - 1

    def set_cells(self, names: frozenset[str]) -> None:
        """Make these locals cell variables: each slot holds a cell, made at the function's entry."""
        self.cell_names = frozenset(name for name in names if name in self.local_slots)
        self.cells = frozenset(self.local_slots[name] for name in self.cell_names)

    def load_local(self, slot: int) -> int:
        """Emit the read of a slot's variable (through its cell for a cell variable); its pc."""
        return self.emit(I.LOAD_DEREF if slot in self.cells else I.LOAD_FAST, slot)

    def store_local(self, slot: int) -> None:
        """Emit the store of the top into a slot's variable (into its cell for a cell variable)."""
        self.emit(I.STORE_DEREF if slot in self.cells else I.STORE_FAST, slot)

    def lookup(self, name: str) -> int | None:
        """The slot of a local or comprehension variable, or None for a global."""
        name = self.source.mangle(name)
        for scope in reversed(self.comprehension_scopes):
            if name in scope:
                return scope[name]
        return self.local_slots.get(name)

    # --- loops -----------------------------------------------------------------------------------------
    def begin_loop(
        self, kind: LoopKind, line: int, hidden: tuple[int, ...], statement: ast.stmt | None = None
    ) -> LoopContext:
        assert self.depth == 0, "the operand stack must be empty at a loop header"
        parent = self.loop_stack[-1].info if self.loop_stack else None
        info = LoopInfo(
            index=len(self.loops),
            kind=kind,
            line=line,
            hidden=hidden,
            parent=parent.index if parent else None,
            depth=parent.depth + 1 if parent else 0,
            statement=(statement.lineno, statement.col_offset) if statement is not None else None,
        )
        self.loops.append(info)
        ctx = LoopContext(info, Label())
        self.place(ctx.header)
        info.header_pc = self.emit(I.LOOP_HEADER, info.index)
        self.loop_stack.append(ctx)
        self.loop_contexts.append(ctx)
        return ctx

    def end_loop_body(self, ctx: LoopContext) -> None:
        """Close the body with its back-edge."""
        self.emit_jump(I.JUMP_BACKWARD, ctx.header)
        ctx.info.body_end = len(self.ops)
        self.loop_stack.pop()

    # --- result ----------------------------------------------------------------------------------------
    def finish(self) -> T1Code:
        for pc, label in self.labels:
            assert label.pc is not None
            arg = self.args[pc]
            self.args[pc] = (arg[0], label.pc) if isinstance(arg, tuple) else label.pc
        for ctx in self.loop_contexts:
            assert ctx.exit.pc is not None
            ctx.info.exit_pc = ctx.exit.pc
            if ctx.break_label is not None:
                ctx.info.break_pc = ctx.break_label.pc
        func = self.source.func
        node = self.source.node
        return T1Code(
            name=func.__code__.co_name,
            qualname=func.__qualname__,
            filename=self.source.filename,
            firstlineno=node.lineno,
            ops=tuple(self.ops),
            args=tuple(self.args),
            lines=tuple(self.lines),
            positions=tuple(self.positions),
            slot_names=tuple(self.slot_names),
            nlocals=len(self.source.local_names),
            nparams=func.__code__.co_argcount + func.__code__.co_kwonlyargcount,
            loops=tuple(self.loops),
            max_stack=self.max_depth,
            comprehension_loads=frozenset(self.comprehension_loads),
            cells=self.cells,
            cpython_only=tuple(self.cpython_only or ()),
        )


def const_key(value: Any) -> Any:
    """A key equal only for constants CPython merges into one object (type-exact; -0.0 apart from 0.0)."""
    kind = type(value)
    if kind is float or kind is complex:
        return (kind, repr(value))
    if kind in (int, bool, str, bytes, type(None), type(Ellipsis)):
        return (kind, value)
    if kind is tuple:
        keys = tuple(const_key(v) for v in value)
        return None if any(k is None for k in keys) else (kind, keys)
    return None


def collect_consts(code: types.CodeType, table: dict[Any, Any]) -> None:
    """Add code's constants (nested code objects' included) to table, keyed by const_key."""
    pending: list[Any] = list(code.co_consts)
    while pending:
        value = pending.pop()
        if isinstance(value, types.CodeType):
            pending.extend(value.co_consts)
            continue
        key = const_key(value)
        if key is not None:
            table.setdefault(key, value)
            if type(value) is tuple:
                pending.extend(value)


def node_position(node: ast.AST) -> tuple[int, int, int, int]:
    """(lineno, end_lineno, col_offset, end_col_offset) of node, as in CPython's co_positions()."""
    line: int = node.lineno  # type: ignore[attr-defined]
    end_line = getattr(node, "end_lineno", None) or line
    return (line, end_line, node.col_offset, getattr(node, "end_col_offset", -1))  # type: ignore[attr-defined]


class at_line:
    """Context manager: instructions emitted inside get node's line and position (or position_of's position,
    for instructions CPython places elsewhere than their node)."""

    __slots__ = ("builder", "line", "position", "saved")

    def __init__(self, builder: FunctionBuilder, node: ast.AST, position_of: ast.AST | None = None) -> None:
        self.builder = builder
        self.line = getattr(node, "lineno", builder.line)
        where = position_of if position_of is not None else node
        self.position = node_position(where) if hasattr(where, "lineno") else builder.position

    def __enter__(self) -> None:
        self.saved = (self.builder.line, self.builder.position)
        self.builder.line = self.line
        self.builder.position = self.position

    def __exit__(self, *exc: object) -> None:
        self.builder.line, self.builder.position = self.saved
