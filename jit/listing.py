"""The uop listing: the text ``jit.dump(f, "uops")`` prints for a trace, and its parser.

One trace reads::

    # tj_f_root0_0_a8d0: root trace of the loop at line 4; entry kinds {total:int, .range.cur:int} [uops]
    uops of tj_f_root0_0_a8d0:
       0 _LOAD_SLOT (target=7, operand=1 (total)) -> v4:int
       ...
       7 _BINARY_OP_MULTIPLY_INT (v1, 3, target=12, exit=3) -> v6:int                        # line 5
      10 _JUMP_TO_TOP (target=6)                                                             # line 4
         loop-carried: total=v9, .range.cur=v3
         (5 uops removed by the optimizer)

``format_listing`` writes it and ``parse_listing`` reads it back into a ``Trace``, so that each optimizer pass
can be tested as "this trace in, this trace out" (PyPy's style). Reading back what was written gives the same
text (tests/jit/test_listing.py checks it on every golden listing).

The listing ``jit.dump`` prints leaves out the snapshots, the state an exit rebuilds. With
``snapshots=True`` they are written too, each under the uop it belongs to, and the parser reads them::

       6 _BINARY_OP_REMAINDER_INT (v0, 2, target=13, exit=2) -> v4:int                       # line 7
           exit 2 at 12: {0 (n)=v1, 1 (i)=v0} [v0, 2] leaves-loop
       9 _CALL_TREE (target=13, operand=tree tj_g_root1_0_XXXX (loop at line 5))              # line 5
           state at 13: {2 (total)=v10} []
      16 _JUMP_TO_TOP (target=6)                                                             # line 4
         end at 6: {1 (i)=v10} []
         written: 1 (i)
         start stack: [v0]

Without a ``written:`` line, the slots the trace assigns are those whose value at the end is not the one the
trace started with. A slot is written ``number (name)``; the parser also takes a name alone when one slot of the listing has it.
Without ``target=`` a uop's pc is 0, without ``# line`` its line is 0, and the index before a uop is optional:
a test may write only what matters to it. What the listing shows of an object (a global's value, a module, a
tree) is what the parser gives back: a stand-in that shows the same (``Shown``, ``ListedTree``), the same text
always giving the same stand-in.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from jit.arrays import ArraySpec
from jit.frontend.operators import BinOp, CompareOp
from jit.instances import ClassAttr
from jit.kinds import Kind, kind_of
from jit.numpy_errstate import Ignored
from jit.resume import entry_snapshot
from jit.trace import (
    NO_CONST,
    ExitPoint,
    FrameSnapshot,
    Snapshot,
    Trace,
    TraceEnd,
    TraceKind,
    Uop,
    Value,
    WhenHot,
    hoisted_when_hot,
)
from jit.uops import (
    UOPS,
    Callee,
    GlobalBinding,
    GlobalName,
    ModuleAttr,
    Operand,
    SlotKind,
    TreeCall,
    TreeExit,
    UopDef,
)
from jit.versions import Versioning, parse_condition
from runtime.frame import UNBOUND

SlotNames = Sequence[str] | Mapping[int, str]

COMMENT_COLUMN = 88  # where a uop's `# line` comment starts
HOISTED = " (hoisted to the entry)"
_KINDS = {kind.short: kind for kind in Kind}
_COMPARES = {op.symbol: op for op in CompareOp}
_BINARY_OPS = {op.symbol: op for op in BinOp if not op.inplace}


class ListingError(ValueError):
    """A listing the parser cannot read: says which line and why."""


# --- stand-ins for what the listing only describes ------------------------------------------------------------


@dataclasses.dataclass(eq=False)
class Shown:
    """An object the listing only describes (``<type range>``, ``<list>``): shown as that text again."""

    text: str

    def __repr__(self) -> str:
        return self.text


@dataclasses.dataclass(eq=False)
class ListedLoop:
    """What the listing says of a trace's loop."""

    line: int


@dataclasses.dataclass(eq=False)
class ListedTree:
    """A tree the listing names (``tree tj_f_root1_0_XXXX (loop at line 5)``)."""

    symbol: str
    loop: ListedLoop | None = None


@dataclasses.dataclass(eq=False)
class ListedExit:
    """The exit a side trace hangs from, as its title says."""

    id: int
    line: int


@dataclasses.dataclass(eq=False)
class Listing:
    """One trace read from a listing, with what its text says around it."""

    trace: Trace
    symbol: str
    slot_names: dict[int, str]
    parent: ListedExit | None = None  # side traces: the exit they hang from
    titled: bool = True  # the listing began with the `# symbol: ... [uops]` title


# --- writing ---------------------------------------------------------------------------------------------------


def describe(value: Any) -> str:
    """An object as the listing shows it: a number, string or None as itself, anything else by its type."""
    if isinstance(value, Shown):
        return value.text
    if isinstance(value, types.ModuleType):
        return f"<module {value.__name__}>"
    if isinstance(value, (types.BuiltinFunctionType, types.FunctionType, type)):
        return f"<{type(value).__name__} {getattr(value, '__qualname__', value)}>"
    if isinstance(value, (int, float, bool, str, type(None))):
        return repr(value)
    return f"<{type(value).__name__}>"


def _slot(slot_names: SlotNames, slot: int) -> str:
    return f"{slot} ({slot_names[slot]})"


def format_operand(slot_names: SlotNames, uop: Uop) -> str:
    """The uop's operand as the listing shows it (empty if it has none), by the kind of operand it declares."""
    if uop.operand is None:
        return ""
    return OPERAND_TEXT[uop.op.operand].write(slot_names, uop.operand)


def _tree(tree: Any) -> str:
    return f"tree {tree.symbol} (loop at line {tree.loop.line})"


def format_value(v: Value) -> str:
    return f"v{v.id}" if not v.is_const else f"{v.const!r}"


def format_uop(slot_names: SlotNames, index: int, uop: Uop) -> str:
    parts = [format_value(v) for v in uop.args]
    parts.append(f"target={uop.pc}")
    operand = format_operand(slot_names, uop)
    if operand:
        parts.append(f"operand={operand}")
    if uop.exit is not None:
        parts.append(f"exit={uop.exit.id}")
    if uop.fast is not None:
        parts.append(f"fast={uop.fast.name}")
    text = f"{index:4d} {uop.name} ({', '.join(parts)})"
    if uop.out is not None:
        text += f" -> v{uop.out.id}:{uop.out.kind.short}"
    return f"{text:<{COMMENT_COLUMN}} # line {uop.line}"


def _entry_line(index: int, name: str, pc: int, operand: str, value: Value) -> str:
    return f"{index:4d} {name} (target={pc}, operand={operand}) -> v{value.id}:{value.kind.short}"


def format_snapshot(slot_names: SlotNames, snapshot: Snapshot) -> str:
    """A snapshot: per frame, outermost first, ``at <pc>: {slots} [stack]`` (frames joined by `` | ``)."""
    return " | ".join(_format_frame(slot_names, frame) for frame in snapshot.frames)


def _format_frame(slot_names: SlotNames, frame: FrameSnapshot) -> str:
    slots = ", ".join(f"{_slot(slot_names, s)}={format_value(v)}" for s, v in sorted(frame.slots.items()))
    stack = ", ".join(format_value(v) for v in frame.stack)
    return f"at {frame.pc}: {{{slots}}} [{stack}]"


def _format_exit(slot_names: SlotNames, exit: ExitPoint) -> str:
    text = f"         exit {exit.id} {format_snapshot(slot_names, exit.snapshot)}"
    if exit.leaves_loop:
        text += " leaves-loop"
    if exit.propagate:
        text += " propagate"
    if exit.when_hot is not WhenHot.SIDE:
        text += f" when-hot={exit.when_hot}"
    return text


def _with_snapshots(slot_names: SlotNames, line: str, uop: Uop) -> list[str]:
    lines = [line]
    if uop.exit is not None:
        lines.append(_format_exit(slot_names, uop.exit))
    if isinstance(uop.operand, TreeCall):
        lines.append(f"         state {format_snapshot(slot_names, uop.operand.snapshot)}")
    return lines


def format_body(slot_names: SlotNames, trace: Trace, heading: str, *, snapshots: bool = False) -> str:
    """The listing of a trace under its heading (``uops of <symbol>:``), without the title line."""
    lines = [heading]
    index = 0
    for slot, value in sorted(trace.entry_slots.items()):
        lines.append(_entry_line(index, "_LOAD_SLOT", trace.start_pc, _slot(slot_names, slot), value))
        index += 1
    for k, value in trace.entry_stack.items():
        lines.append(_entry_line(index, "_LOAD_STACK", trace.start_pc, str(k), value))
        index += 1
    for uop in trace.hoisted:
        line = format_uop(slot_names, index, uop) + HOISTED
        lines.extend(_with_snapshots(slot_names, line, uop) if snapshots else [line])
        index += 1
    for uop in trace.uops:
        line = format_uop(slot_names, index, uop)
        lines.extend(_with_snapshots(slot_names, line, uop) if snapshots else [line])
        index += 1
    if trace.end is TraceEnd.LOOP and trace.end_snapshot is not None:
        carried = ", ".join(
            f"{slot_names[s]}={format_value(trace.end_snapshot.outer.slots[s])}"
            for s in sorted(trace.entry_slots)
            if s in trace.end_snapshot.outer.slots
        )
        lines.append(f"     loop-carried: {carried}")
    if trace.versioning is not None:
        lines.append(f"     fast while: {trace.versioning}")
    if snapshots:
        if trace.end_snapshot is not None:
            lines.append(f"     end {format_snapshot(slot_names, trace.end_snapshot)}")
        if trace.written:
            lines.append(f"     written: {', '.join(_slot(slot_names, s) for s in sorted(trace.written))}")
        if trace.start_stack:
            lines.append(f"     start stack: [{', '.join(format_value(v) for v in trace.start_stack)}]")
    lines.append(f"     ({trace.removed_uops} uops removed by the optimizer)")
    return "\n".join(lines)


def format_title(symbol: str, trace: Trace, slot_names: SlotNames, parent: Any = None) -> str:
    """The title line of a trace's dump (without the `[kind]` that follows it); parent: a side trace's exit
    (anything with ``id`` and ``line``)."""
    kinds = ", ".join(f"{slot_names[s]}:{k.short}" for s, k in trace.entry_kinds.items())
    if trace.kind is TraceKind.ROOT:
        what = f"root trace of the loop at line {trace.loop.line}"
    else:
        what = f"side trace from exit {parent.id} (line {parent.line}) of the loop at line {trace.loop.line}"
    return f"# {symbol}: {what}; entry kinds {{{kinds}}}"


def format_listing(listing: Listing, *, snapshots: bool = False) -> str:
    """A trace's listing as ``jit.dump(f, "uops")`` prints it (with ``snapshots``: and the state at each exit)."""
    body = format_body(listing.slot_names, listing.trace, f"uops of {listing.symbol}:", snapshots=snapshots)
    if not listing.titled:
        return body + "\n"
    title = format_title(listing.symbol, listing.trace, listing.slot_names, listing.parent)
    return f"{title} [uops]\n{body}\n"


def format_dump(listings: Sequence[Listing], *, snapshots: bool = False) -> str:
    """Several traces' listings, as ``jit.dump`` joins them."""
    return "\n".join(format_listing(listing, snapshots=snapshots) for listing in listings)


# --- reading ---------------------------------------------------------------------------------------------------

_TITLE = re.compile(
    r"# (?P<symbol>\S+): (?:root trace|side trace from exit (?P<exit>\d+) \(line (?P<exit_line>\d+)\)) of the loop"
    r" at line (?P<loop_line>\d+); entry kinds \{(?P<kinds>[^}]*)\} \[uops\]"
)
_HEADING = re.compile(r"uops of (?P<symbol>\S+):")
_LINE_COMMENT = re.compile(r"\s*# line (?P<line>-?\d+)$")
_OUTPUT = re.compile(r" -> v(?P<id>\d+):(?P<kind>\S+)$")
_UOP = re.compile(r"(?:(?P<index>\d+)\s+)?(?P<name>_[A-Z0-9_]+) \((?P<inner>.*)\)")
_KEYWORDS = ("target=", "operand=", "exit=", "fast=")
_SNAPSHOT = re.compile(r"at (?P<pc>\d+): \{(?P<slots>.*)\} \[(?P<stack>.*)\]")
_EXIT_LINE = re.compile(r"exit (?P<id>\d+) (?P<snapshot>at .*\])(?P<flags>.*)")
_VALUE = re.compile(r"v(\d+)$")
_SLOT = re.compile(r"(?P<slot>\d+) \((?P<name>[^)]*)\)$")
_TREE = re.compile(r"tree (?P<symbol>\S+) \(loop at line (?P<line>\d+)\)$")


def parse_dump(text: str) -> list[Listing]:
    """Every trace of a dump (``jit.dump(f, "uops")``, or a golden listing)."""
    sections: list[list[tuple[int, str]]] = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        heading = line.startswith("uops of ")
        if (
            not sections
            or line.startswith("# ")
            or (heading and any(t.startswith("uops of ") for _, t in sections[-1]))
        ):
            sections.append([])
        sections[-1].append((number, line))
    return [_Parser(section).parse() for section in sections]


def parse_listing(text: str) -> Listing:
    """One trace's listing: with or without its title line, with or without snapshots."""
    listings = parse_dump(text)
    if len(listings) != 1:
        raise ListingError(f"expected the listing of one trace, found {len(listings)}")
    return listings[0]


class _Parser:
    def __init__(self, lines: list[tuple[int, str]]) -> None:
        self.lines = lines
        self.number = 0
        self.values: dict[int, Value] = {}
        self.next_const = 1 + max((int(m) for _, line in lines for m in re.findall(r"\bv(\d+)\b", line)), default=-1)
        self.slot_names: dict[int, str] = {}
        self.trees: dict[str, ListedTree] = {}
        self.shown: dict[str, Any] = {}
        self.last: Uop | None = None

    def error(self, message: str) -> ListingError:
        return ListingError(f"line {self.number}: {message}")

    def parse(self) -> Listing:
        lines = [(n, line.strip()) for n, line in self.lines if line.strip()]
        title = None
        if lines and lines[0][1].startswith("# "):
            self.number, text = lines.pop(0)
            title = _TITLE.fullmatch(text)
            if title is None:
                raise self.error(f"not a trace's title: {text!r}")
        if not lines or not _HEADING.fullmatch(lines[0][1]):
            self.number = lines[0][0] if lines else self.number
            raise self.error("expected `uops of <symbol>:`")
        self.number, heading = lines.pop(0)
        symbol = _HEADING.fullmatch(heading).group("symbol")  # type: ignore[union-attr]
        if title is not None and title.group("symbol") != symbol:
            raise self.error(f"the title names {title.group('symbol')}, the heading {symbol}")
        parent = None
        if title is not None and title.group("exit") is not None:
            parent = ListedExit(int(title.group("exit")), int(title.group("exit_line")))
        loop = ListedLoop(int(title.group("loop_line")) if title is not None else 0)
        trace = Trace(TraceKind.SIDE if parent is not None else TraceKind.ROOT, loop, 0)  # type: ignore[arg-type]
        self.trace = trace
        self.carried: list[tuple[str, Value]] | None = None
        self.written: set[int] | None = None
        for self.number, text in lines:
            if text.startswith("_") or text[0].isdigit():
                self.uop_line(text)
            elif text.startswith("exit ") or text.startswith("state "):
                self.snapshot_line(text)
            else:
                self.trailer_line(text)
        if not trace.entry_slots and not trace.entry_stack and trace.uops:
            trace.start_pc = trace.uops[0].pc
        self.finish(trace)
        if title is not None:
            self.check_title(title.group("kinds"))
        next_id = max([v.id for v in self.values.values()] + [self.next_const - 1]) + 1
        trace.next_value = next_id
        return Listing(trace, symbol, self.slot_names, parent, titled=title is not None)

    # --- uops ---
    def uop_line(self, text: str) -> None:
        """Read one uop (a _LOAD_SLOT or _LOAD_STACK: one of the trace's entry values)."""
        hoisted = text.endswith(HOISTED)
        if hoisted:
            text = text[: -len(HOISTED)]
        line = 0
        comment = _LINE_COMMENT.search(text)
        if comment is not None:
            line = int(comment.group("line"))
            text = text[: comment.start()]
        out = None
        output = _OUTPUT.search(text)
        if output is not None:
            out = (int(output.group("id")), self.kind(output.group("kind")))
            text = text[: output.start()]
        match = _UOP.fullmatch(text)
        if match is None:
            raise self.error(f"not a uop: {text!r}")
        name = match.group("name")
        op = UOPS.get(name)
        if op is None:
            raise self.error(f"no uop {name}")
        items = _split(match.group("inner"))
        keywords = {k[:-1]: item[len(k) :] for item in items for k in _KEYWORDS if item.startswith(k)}
        args = tuple(self.value(item) for item in items if not item.startswith(_KEYWORDS))
        if not all(item.startswith(_KEYWORDS) for item in items[len(args) :]):
            raise self.error(f"{name}: its inputs come first, then target=, operand=, exit=, fast=")
        pc = int(keywords.get("target", 0))
        operand = self.operand(op, keywords.get("operand"))
        if name in ("_LOAD_SLOT", "_LOAD_STACK"):
            if out is None:
                raise self.error(f"{name} without its value")
            value = self.define(out[0], out[1])
            if not self.trace.entry_slots and not self.trace.entry_stack:
                self.trace.start_pc = pc
            if name == "_LOAD_SLOT":
                self.trace.entry_slots[operand] = value
            else:
                self.trace.entry_stack[operand] = value
                self.trace.start_stack.append(value)
            return
        if (out is None) != (op.output is None):
            raise self.error(f"{name} {'has' if op.output is not None else 'has no'} output")
        exit = None
        if "exit" in keywords:
            if not op.is_guard:
                raise self.error(f"{name} is not a guard: it has no exit")
            exit = ExitPoint(_snapshot(pc, {}, []), line, id=int(keywords["exit"]))
        elif op.is_guard:
            raise self.error(f"{name} is a guard: it needs exit=<number>")
        uop = Uop(op, args, None, operand, pc, line, exit)
        if "fast" in keywords:
            if UOPS.get(keywords["fast"]) is None or op.unchecked != keywords["fast"]:
                raise self.error(f"{name} has no fast form {keywords['fast']}")
            uop.fast = UOPS[keywords["fast"]]
        if out is not None:
            uop.out = self.define(out[0], out[1], operand if op.inline_const else NO_CONST)
        if hoisted:
            if exit is not None:
                exit.snapshot = entry_snapshot(self.trace)
                exit.when_hot = hoisted_when_hot(op, self.trace.kind is TraceKind.ROOT)
            self.trace.hoisted.append(uop)
        else:
            self.trace.uops.append(uop)
        self.last = uop

    def operand(self, op: UopDef, text: str | None) -> Any:
        kind = op.operand
        if text is None:
            if kind is not Operand.NONE and kind is not Operand.PC:
                raise self.error(f"{op.name} needs an operand ({kind.doc})")
            return None
        if kind is Operand.NONE:
            raise self.error(f"{op.name} takes no operand")
        return OPERAND_TEXT[kind].read(self, text)

    def slot_kind(self, text: str) -> SlotKind:
        slot, _, kind = text.rpartition(" is ")
        return SlotKind(self.slot(slot), self.kind(kind))

    def global_binding(self, text: str) -> GlobalBinding:
        name, _, value = text.partition(" is ")
        return GlobalBinding(name, self.object(value))

    def module_attr(self, text: str) -> ModuleAttr:
        attr, _, value = text.partition(" is ")
        module, _, name = attr.rpartition(".")
        return ModuleAttr(self.module(module), name, self.object(value))

    def class_attr(self, text: str) -> ClassAttr:
        match = re.fullmatch(
            r"(<.*>)\.(\w+) v(\d+) (?:values\[(\d+)\]|slot \+(\d+)|method, (?:shared keys (0x[0-9a-f]+) of (\d+)|no "
            r"instance dict))",
            text,
        )
        if match is None:
            raise self.error(f"not a class attribute: {text!r}")
        klass, name, version, index, offset, keys, nentries = match.groups()
        where: dict[str, int] = {}
        if index is not None:
            where = {"index": int(index)}
        elif offset is not None:
            where = {"offset": int(offset)}
        elif keys is not None:
            where = {"keys": int(keys, 16), "nentries": int(nentries)}
        return ClassAttr(self.object(klass), int(version), name, **where)

    def tree_exit(self, text: str) -> TreeExit:
        match = re.fullmatch(r"exit (\d+) of (\S+)", text)
        if match is None:
            raise self.error(f"not an exit of a tree: {text!r}")
        return TreeExit(self.trees.setdefault(match.group(2), ListedTree(match.group(2))), int(match.group(1)))

    def compare(self, text: str) -> CompareOp:
        if text not in _COMPARES:
            raise self.error(f"no comparison {text!r}")
        return _COMPARES[text]

    def binary_op(self, text: str) -> BinOp:
        if text not in _BINARY_OPS:
            raise self.error(f"no binary operator {text!r}")
        return _BINARY_OPS[text]

    def invert(self, text: str) -> bool:
        if text not in ("True", "False"):
            raise self.error(f"expected True or False, not {text!r}")
        return text == "True"

    def number(self, text: str) -> int:
        if not text.isdigit():
            raise self.error(f"not a number: {text!r}")
        return int(text)

    # --- snapshots and the trace's end ---
    def snapshot_line(self, text: str) -> None:
        uop = self.last
        if uop is None:
            raise self.error("a snapshot before any uop")
        if text.startswith("state "):
            if not isinstance(uop.operand, TreeCall):
                raise self.error(f"`state` belongs under a _CALL_TREE, not under {uop.name}")
            uop.operand = TreeCall(uop.operand.tree, self.snapshot(text[len("state ") :]))
            return
        match = _EXIT_LINE.fullmatch(text)
        if match is None:
            raise self.error(f"not an exit's snapshot: {text!r}")
        if uop.exit is None or uop.exit.id != int(match.group("id")):
            raise self.error(f"exit {match.group('id')} is not the exit of {uop.name} above it")
        uop.exit.snapshot = self.snapshot(match.group("snapshot"))
        for flag in match.group("flags").split():
            if flag == "leaves-loop":
                uop.exit.leaves_loop = True
            elif flag == "propagate":
                uop.exit.propagate = True
            elif flag.startswith("when-hot="):
                uop.exit.when_hot = WhenHot(flag[len("when-hot=") :])
            else:
                raise self.error(f"unknown exit flag {flag!r}")

    def snapshot(self, text: str) -> Snapshot:
        return Snapshot([self.frame(frame) for frame in text.split(" | ")])

    def frame(self, text: str) -> FrameSnapshot:
        match = _SNAPSHOT.fullmatch(text)
        if match is None:
            raise self.error(f"not a snapshot (at <pc>: {{slots}} [stack]): {text!r}")
        slots = {}
        for item in _split(match.group("slots")):
            slot, sep, value = item.rpartition("=")
            if not sep:
                raise self.error(f"not slot=value: {item!r}")
            slots[self.slot(slot)] = self.value(value)
        stack = [self.value(v) for v in _split(match.group("stack"))]
        return FrameSnapshot(int(match.group("pc")), slots, stack)

    def trailer_line(self, text: str) -> None:
        trace = self.trace
        if text.startswith("loop-carried:"):
            self.carried = []
            for item in _split(text[len("loop-carried:") :]):
                name, sep, value = item.partition("=")
                if not sep:
                    raise self.error(f"not name=value: {item!r}")
                self.carried.append((name, self.value(value)))
        elif text.startswith("fast while:"):
            conditions = []
            for item in text[len("fast while:") :].split(";"):
                try:
                    conditions.append(parse_condition(item.strip(), self.known_value))
                except (ValueError, SyntaxError) as error:
                    raise self.error(str(error)) from None
            trace.versioning = Versioning(conditions)
        elif text.startswith("end "):
            trace.end_snapshot = self.snapshot(text[len("end ") :])
        elif text.startswith("written:"):
            self.written = {self.slot(s) for s in _split(text[len("written:") :])}
        elif text.startswith("start stack:"):
            match = re.fullmatch(r"start stack: \[(.*)\]", text)
            if match is None:
                raise self.error(f"not a start stack: {text!r}")
            trace.start_stack = [self.value(v) for v in _split(match.group(1))]
        else:
            match = re.fullmatch(r"\((\d+) uops removed by the optimizer\)", text)
            if match is None:
                raise self.error(f"not a line of a uop listing: {text!r}")
            trace.removed_uops = int(match.group(1))

    def finish(self, trace: Trace) -> None:
        """The trace's end, from its last uop and the loop-carried line."""
        last = trace.uops[-1] if trace.uops else None
        name = last.name if last is not None else None
        if name == "_JUMP_TO_TOP":
            trace.end = TraceEnd.LOOP
        elif name == "_JUMP_TO_TREE":
            trace.end = TraceEnd.TREE
            trace.end_tree = last.operand  # type: ignore[union-attr]
        elif name == "_EXIT_TRACE":
            trace.end = TraceEnd.EXIT
        if self.carried is not None:
            if trace.end is not TraceEnd.LOOP:
                raise self.error("loop-carried values, but the trace does not end with _JUMP_TO_TOP")
            if trace.end_snapshot is None:
                trace.end_snapshot = _snapshot(last.pc, {}, [])  # type: ignore[union-attr]
            unused = sorted(trace.entry_slots)
            for name, value in self.carried:
                slot = next((s for s in unused if self.slot_names.get(s) == name), None)
                if slot is None:
                    raise self.error(f"loop-carried {name} is not a slot the trace loads")
                unused.remove(slot)
                known = trace.end_snapshot.outer.slots.get(slot)
                if known is not None and known is not value and not (known.is_const and value.is_const):
                    raise self.error(f"loop-carried {name}={format_value(value)}, but the end has {known!r}")
                trace.end_snapshot.outer.slots.setdefault(slot, value)
        if self.written is not None:
            trace.written = self.written
        elif trace.end_snapshot is not None:  # a slot that ends with another value than it started with
            entry = trace.entry_slots
            trace.written = {s for s, v in trace.end_snapshot.outer.slots.items() if entry.get(s) is not v}

    def check_title(self, kinds: str) -> None:
        listed = ", ".join(f"{self.slot_names[s]}:{k.short}" for s, k in self.trace.entry_kinds.items())
        if listed != kinds:
            raise ListingError(f"the title's entry kinds {{{kinds}}} are not the _LOAD_SLOTs' {{{listed}}}")

    # --- tokens ---
    def known_value(self, id: int) -> Value:
        value = self.values.get(id)
        if value is None:
            raise self.error(f"v{id} is not defined")
        return value

    def define(self, id: int, kind: Kind, const: Any = NO_CONST) -> Value:
        if id in self.values:
            raise self.error(f"v{id} is defined twice")
        value = self.values[id] = Value(id, kind, const)
        return value

    def value(self, text: str) -> Value:
        text = text.strip()
        match = _VALUE.match(text)
        if match is not None:
            value = self.values.get(int(match.group(1)))
            if value is None:
                raise self.error(f"{text} is used before it is defined")
            return value
        const = self.object(text)
        kind = Kind.UNBOUND if const is UNBOUND else kind_of(const)
        value = Value(self.next_const, kind, const)
        self.next_const += 1
        return value

    def slot(self, text: str) -> int:
        text = text.strip()
        match = _SLOT.fullmatch(text)
        if match is not None:
            slot, name = int(match.group("slot")), match.group("name")
            known = self.slot_names.setdefault(slot, name)
            if known != name:
                raise self.error(f"slot {slot} is named {known}, and here {name}")
            return slot
        if text.isdigit():
            raise self.error(f"slot {text} needs its name: `{text} (name)`")
        slots = [s for s, n in self.slot_names.items() if n == text]
        if len(slots) != 1:
            raise self.error(f"{'no' if not slots else 'more than one'} slot named {text!r}")
        return slots[0]

    def kind(self, text: str) -> Kind:
        if text not in _KINDS:
            raise self.error(f"no kind {text!r}")
        return _KINDS[text]

    def object(self, text: str) -> Any:
        """What the listing shows of an object: a literal, else a stand-in (a module for `<module name>`)."""
        try:
            return _literal(text)
        except (ValueError, SyntaxError):
            pass
        module = re.fullmatch(r"<module (\S+)>", text)
        if module is not None:
            return self.module(module.group(1))
        if text == repr(UNBOUND):
            return UNBOUND
        return self.shown.setdefault(text, Shown(text))

    def module(self, name: str) -> types.ModuleType:
        return self.shown.setdefault(f"<module {name}>", types.ModuleType(name))

    def builtin(self, text: str) -> Any:
        module, _, name = text.rpartition(".")
        found = getattr(sys.modules.get(module or "builtins"), name, None)
        if found is not None:
            return found
        raise self.error(f"no builtin {text!r} among the modules imported")

    def method(self, text: str) -> tuple[Any, ...]:
        """`str.upper` or `str.split ('sep',)`: a builtin type's method descriptor, then keyword names."""
        qualname, _, names = text.partition(" ")
        owner, _, name = qualname.partition(".")
        found = getattr(sys.modules["builtins"], owner, None)
        descriptor = found.__dict__.get(name) if isinstance(found, type) else None
        if type(descriptor) is not types.MethodDescriptorType:
            raise self.error(f"no method descriptor {qualname!r} of a builtin type")
        return (descriptor, *(_literal(names) if names else ()))

    def tree(self, text: str) -> ListedTree:
        match = _TREE.fullmatch(text)
        if match is None:
            raise self.error(f"not a tree (tree <symbol> (loop at line <n>)): {text!r}")
        tree = self.trees.setdefault(match.group("symbol"), ListedTree(match.group("symbol")))
        tree.loop = ListedLoop(int(match.group("line")))
        return tree


_OVER_NUMBER = " (over a number)"  # a global store that need not check the value it replaces


@dataclasses.dataclass(frozen=True)
class OperandText:
    """How the listing writes an operand of one kind, and how it reads it back."""

    write: Callable[[SlotNames, Any], str]
    read: Callable[[_Parser, str], Any]


OPERAND_TEXT: dict[Operand, OperandText] = {
    Operand.SLOT: OperandText(_slot, _Parser.slot),
    Operand.STACK_INDEX: OperandText(lambda _, index: str(index), _Parser.number),
    Operand.CELL: OperandText(lambda _, index: str(index), _Parser.number),
    Operand.PC: OperandText(lambda _, pc: str(pc), _Parser.number),
    Operand.CONST: OperandText(lambda _, value: describe(value), _Parser.object),
    Operand.KIND: OperandText(lambda _, kind: kind.short, _Parser.kind),
    Operand.COMPARE: OperandText(lambda _, op: str(op), _Parser.compare),
    Operand.BINARY_OP: OperandText(lambda _, op: str(op), _Parser.binary_op),
    Operand.INVERT: OperandText(lambda _, invert: str(invert), _Parser.invert),
    Operand.MATH_NAME: OperandText(lambda _, name: name, lambda _, text: text),
    Operand.BUILTIN: OperandText(
        lambda _, fn: f"{getattr(fn, '__module__', '') or ''}.{fn.__name__}".lstrip("."), _Parser.builtin
    ),
    Operand.TREE: OperandText(lambda _, tree: _tree(tree), _Parser.tree),
    Operand.SLOT_KIND: OperandText(lambda names, o: f"{_slot(names, o.slot)} is {o.kind.short}", _Parser.slot_kind),
    Operand.GLOBAL: OperandText(lambda _, o: f"{o.name} is {describe(o.value)}", _Parser.global_binding),
    Operand.MODULE_ATTR: OperandText(
        lambda _, o: f"{o.module.__name__}.{o.name} is {describe(o.value)}", _Parser.module_attr
    ),
    Operand.GLOBAL_NAME: OperandText(
        lambda _, o: f"{o.name}{_OVER_NUMBER if o.over_number else ''}",
        lambda _, text: GlobalName(text.removesuffix(_OVER_NUMBER), text.endswith(_OVER_NUMBER)),
    ),
    Operand.CALLEE: OperandText(
        lambda _, o: describe(o.function), lambda parser, text: Callee(parser.object(text), None, None)
    ),
    # the state before the call is written under the uop (with snapshots=True), not in the operand
    Operand.TREE_CALL: OperandText(
        lambda _, o: _tree(o.tree), lambda parser, text: TreeCall(parser.tree(text), _snapshot(0, {}, []))
    ),
    Operand.TREE_EXIT: OperandText(lambda _, o: f"exit {o.exit} of {o.tree.symbol}", _Parser.tree_exit),
    Operand.ARRAY_SPEC: OperandText(lambda _, spec: str(spec), lambda _, text: ArraySpec.parse(text)),
    Operand.AXIS: OperandText(lambda _, axis: str(axis), _Parser.number),
    Operand.IGNORED_EVENTS: OperandText(lambda _, ignored: str(ignored), lambda _, text: Ignored.parse(text)),
    Operand.KWNAMES: OperandText(lambda _, names: repr(names), lambda _, text: _literal(text)),
    Operand.NAME: OperandText(lambda _, name: name, lambda _, text: text),
    Operand.METHOD: OperandText(
        lambda _, o: f"{o[0].__objclass__.__name__}.{o[0].__name__}" + (f" {o[1:]!r}" if len(o) > 1 else ""),
        _Parser.method,
    ),
    Operand.CONVERSION: OperandText(lambda _, conversion: repr(conversion), lambda _, text: _literal(text)),
    Operand.CLASS_ATTR: OperandText(
        lambda _, o: f"{describe(o.klass)}.{o.name} v{o.version} {o.where()}", _Parser.class_attr
    ),
}


def _literal(text: str) -> Any:
    """A number, string, bool or None as repr() writes it (inf and nan too)."""
    if text in ("inf", "-inf", "nan"):
        return float(text)
    return ast.literal_eval(text)


def _snapshot(pc: int, slots: dict[int, Value], stack: list[Value]) -> Snapshot:
    """A snapshot of one frame (what a listing without snapshots implies)."""
    return Snapshot([FrameSnapshot(pc, slots, stack)])


def _split(text: str) -> list[str]:
    """Comma-separated items, commas inside brackets, parentheses or quotes not counting."""
    items, depth, quote, start = [], 0, "", 0
    for i, c in enumerate(text):
        if quote:
            if c == quote and text[i - 1] != "\\":
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]
