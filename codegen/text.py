"""A lowered module's text: what ``str(module)`` gives (llvmlite's printing), made faster for the instructions
traces are made of (issue 9: compile time).

Printing a trace's module took about 40% of lowering it in Python: llvmlite prints each instruction through
three layers of generic code (a cached ``__str__`` that raises and catches an AttributeError the first time, a
``descr`` filling a list through ``str.format`` with named fields, its metadata asked for even when there is
none, then a ``join`` and an ``rstrip``), and a trace is tens of thousands of instructions, printed once each.
Here the instructions of the kinds traces use most (loads, stores, compares, address arithmetic, casts,
selects, branches, phis, calls, plain operators) are printed by one function each, which builds the same text
as llvmlite's ``descr`` in one f-string; any other instruction, and any of those kinds with a feature these
functions do not print (a call's attributes, a calling convention...), is printed by llvmlite itself. Function
prototypes, globals, declarations and metadata are llvmlite's too. The text is the same character for
character (``tests/codegen/test_text.py`` compares each printer with llvmlite's, and whole modules).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from llvmlite import ir

#: labels that need no quotes (llvmlite's rule: LLVM's identifiers)
_SIMPLE_LABEL = re.compile(r"[-a-zA-Z$._][-a-zA-Z$._0-9]*$")


def module_text(module: ir.Module) -> str:
    """The text of module, as ``str(module)`` prints it."""
    lines = [
        f'; ModuleID = "{module.name}"',
        f'target triple = "{module.triple}"',
        f'target datalayout = "{module.data_layout}"',
        "",
    ]
    lines += [it.get_declaration() for it in module.get_identified_types().values()]
    for value in module.globals.values():
        if type(value) is ir.Function and value.blocks:
            lines.append(_function_text(value))
        else:
            lines.append(str(value))
    for name, node in module.namedmetadata.items():
        operands = ", ".join(_reference(operand) for operand in node.operands)
        lines.append(f"!{name} = !{{ {operands} }}")
    lines += [str(node) for node in module.metadata]
    return "\n".join(lines)


def _function_text(function: ir.Function) -> str:
    buf: list[str] = []
    function.descr_prototype(buf)
    buf.append("{\n")
    printers = _PRINTERS
    for block in function.blocks:
        name = block.name
        if not _SIMPLE_LABEL.match(name):
            name = '"{}"'.format(name.replace("\\", "\\5c").replace('"', "\\22"))
        buf.append(f"{name}:\n")
        for instr in block.instructions:
            printer = printers.get(type(instr))
            line = printer(instr) if printer is not None else None
            buf.append(f"  {instr}\n" if line is None else f"  {line}\n")
    buf.append("}\n")
    return "".join(buf)


def instruction_text(instr: ir.Instruction) -> str:
    """The text of one instruction, as ``str(instr)`` prints it (tests compare the two)."""
    printer = _PRINTERS.get(type(instr))
    line = printer(instr) if printer is not None else None
    return str(instr) if line is None else line


# Each printer returns the instruction's line as llvmlite's NamedValue._to_string makes it ("%name = " unless its
# type is void, its descr, stripped at the end), or None for a form it does not print (llvmlite prints it then).


def _reference(value: ir.Value) -> str:
    """How an operand is written, as its ``get_reference()`` writes it: the same text, made here for constants
    and named values (llvmlite caches it on the value, and the first time, which for most values of a module is
    the one time, costs an AttributeError raised and caught: half a microsecond, a third of printing a module)."""
    cls = type(value)
    if cls is ir.Constant:
        constant = value.constant
        if constant is None:
            return value.type.null
        if constant is not ir.Undefined and not isinstance(constant, bytearray):
            return value.type.format_constant(constant)
    elif cls in _NAMED:
        name = value.name
        if "\\" in name or '"' in name:
            name = name.replace("\\", "\\5c").replace('"', "\\22")
        return f'{cls.name_prefix}"{name}"'
    return value.get_reference()


def _metadata(instr: ir.Instruction) -> str:
    if not instr.metadata:
        return ""
    return "".join(f", !{key} {_reference(node)}" for key, node in instr.metadata.items())


def _named(instr: ir.Instruction, descr: str) -> str:
    return f"{_reference(instr)} = {descr}".rstrip()


def _operator(instr: ir.Instruction) -> str:
    opname = " ".join([instr.opname, *instr.flags]) if instr.flags else instr.opname
    operands = ", ".join([_reference(op) for op in instr.operands])
    return _named(instr, f"{opname} {instr.type} {operands}{_metadata(instr)}")


def _load(instr: ir.LoadInstr) -> str:
    (ptr,) = instr.operands
    align = "" if instr.align is None else f", align {instr.align:d}"
    return _named(instr, f"load {instr.type}, {ptr.type} {_reference(ptr)}{align}{_metadata(instr)}")


def _store(instr: ir.StoreInstr) -> str:
    value, ptr = instr.operands
    align = "" if instr.align is None else f", align {instr.align:d}"
    return f"store {value.type} {_reference(value)}, {ptr.type} {_reference(ptr)}{align}{_metadata(instr)}".rstrip()


def _compare(instr: ir.CompareInstr) -> str:
    lhs, rhs = instr.operands
    flags = "".join(" " + flag for flag in instr.flags)
    text = f"{instr.opname}{flags} {instr.op} {lhs.type} {_reference(lhs)}, {_reference(rhs)} "
    return _named(instr, text + _metadata(instr))


def _gep(instr: ir.GEPInstr) -> str:
    indices = ", ".join([f"{index.type} {_reference(index)}" for index in instr.indices])
    op = "getelementptr inbounds" if instr.inbounds else "getelementptr"
    pointer = instr.pointer
    text = f"{op} {instr.source_etype}, {pointer.type} {_reference(pointer)}, {indices} {_metadata(instr)}"
    return _named(instr, text)


def _cast(instr: ir.CastInstr) -> str:
    (value,) = instr.operands
    return _named(instr, f"{instr.opname} {value.type} {_reference(value)} to {instr.type} {_metadata(instr)}")


def _select(instr: ir.SelectInstr) -> str:
    cond, lhs, rhs = instr.operands
    text = (
        f"select {' '.join(instr.flags)} {cond.type} {_reference(cond)}, {lhs.type} {_reference(lhs)}, "
        f"{rhs.type} {_reference(rhs)} {_metadata(instr)}"
    )
    return _named(instr, text)


def _phi(instr: ir.PhiInstr) -> str:
    incomings = ", ".join([f"[{_reference(value)}, {_reference(block)}]" for value, block in instr.incomings])
    return _named(instr, f"phi {' '.join(instr.flags)} {instr.type} {incomings} {_metadata(instr)}")


def _terminator(instr: ir.Terminator) -> str:
    # (a branch's or a conditional branch's: void, so no name)
    operands = ", ".join([f"{op.type} {_reference(op)}" for op in instr.operands])
    return f"{instr.opname} {operands}{_metadata(instr)}".rstrip()


def _ret(instr: ir.Ret) -> str:
    if instr.operands:
        (value,) = instr.operands
        return f"{instr.opname} {value.type} {_reference(value)}{_metadata(instr)}".rstrip()
    return f"{instr.opname}{_metadata(instr)}".rstrip()


def _call(instr: ir.CallInstr) -> str | None:
    callee = instr.callee
    ftype = callee.function_type
    if instr.cconv or instr.arg_attributes or instr.attributes or instr.fastmath or ftype.var_arg:
        return None  # (forms traces seldom use: llvmlite's printing)
    args = ", ".join([f"{arg.type} {_reference(arg)}" for arg in instr.operands[1:]])
    tail = f"{instr.tail} " if instr.tail else ""
    text = f"{tail}{instr.opname} {ftype.return_type} {_reference(callee)}({args}){_metadata(instr)}"
    if isinstance(instr.type, ir.VoidType):
        return text.rstrip()
    return _named(instr, text)


def _extract_value(instr: ir.ExtractValue) -> str:
    aggregate = instr.aggregate
    indices = ", ".join([str(index) for index in instr.indices])
    return _named(instr, f"extractvalue {aggregate.type} {_reference(aggregate)}, {indices} {_metadata(instr)}")


#: the printer of each instruction class (by exact class: a subclass may print differently)
_PRINTERS: dict[type, Callable[..., str | None]] = {
    ir.Instruction: _operator,
    ir.LoadInstr: _load,
    ir.StoreInstr: _store,
    ir.ICMPInstr: _compare,
    ir.FCMPInstr: _compare,
    ir.GEPInstr: _gep,
    ir.CastInstr: _cast,
    ir.SelectInstr: _select,
    ir.PhiInstr: _phi,
    ir.Branch: _terminator,
    ir.ConditionalBranch: _terminator,
    ir.Ret: _ret,
    ir.CallInstr: _call,
    ir.ExtractValue: _extract_value,
}

#: the classes of named values whose reference is their prefix and quoted name (llvmlite's NamedValue's; the
#: others, metadata for one, write theirs their own way: _reference asks them)
_NAMED: frozenset[type] = frozenset(
    {
        ir.Argument,
        ir.Block,
        ir.Function,
        ir.GlobalVariable,
        *_PRINTERS,
        ir.AllocaInstr,
        ir.LoadAtomicInstr,
        ir.InsertValue,
        ir.InsertElement,
        ir.ExtractElement,
        ir.ShuffleVector,
    }
)
