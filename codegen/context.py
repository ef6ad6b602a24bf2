"""What lowering one trace needs: the LLVM module and function being built, the values of trace values, the
frame buffer, guards and their exit stubs.

An exit stub writes the interpreter's state at the guard (``materialize``), records which exit was taken,
bumps the exit's counter, and either tail-jumps into the side trace linked to the exit (a per-exit function
pointer, null until a side trace is compiled) or returns the exit's number.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llvmlite import ir

from codegen import abi, capi
from codegen.capi import DOUBLE, I1, I8, I32, I64, PTR
from jit.kinds import DIRTY, Kind
from jit.trace import ExitPoint, Snapshot, Trace, Uop, Value

TRACE_FN = ir.FunctionType(I64, [PTR])


def llvm_type(kind: Kind) -> ir.Type:
    if kind == Kind.FLOAT:
        return DOUBLE
    if kind == Kind.BOOL:
        return I1
    if kind.is_pointer:
        return PTR
    return I64


class LowerContext:
    def __init__(self, trace: Trace, layout: abi.Layout, symbol: str, triple: str, data_layout: str) -> None:
        self.trace = trace
        self.layout = layout
        self.symbol = symbol
        self.module = ir.Module(name=symbol)
        self.module.triple = triple
        self.module.data_layout = data_layout
        self.function = ir.Function(self.module, TRACE_FN, name=symbol)
        self.function.attributes.add("nounwind")
        self.buf = self.function.args[0]
        self.builder = ir.IRBuilder(self.function.append_basic_block("entry"))
        self.values: dict[int, ir.Value] = {}
        self.fuel: ir.Value | None = None
        self.call_result: ir.Value | None = None  # the last inner tree's exit number
        self.valid: dict[int, tuple[ir.Value, ir.Value]] = {}  # slot -> (written-yet flag, previous value)
        self.valid_kinds: dict[int, Kind] = {}
        self.keepalive: list[Any] = []  # objects whose addresses are baked into the code
        self.exit_points: list[ExitPoint] = trace.exits()
        self.exit_index = {id(e): i for i, e in enumerate(self.exit_points)}
        self.linkable: list[int] = []  # exit indices that have a link pointer
        self.callees: dict[str, ir.Function] = {}
        self.counts = ir.GlobalVariable(
            self.module, ir.ArrayType(I64, max(len(self.exit_points), 1)), f"{symbol}_counts"
        )
        self.counts.initializer = ir.Constant(self.counts.value_type, None)
        self.links: dict[int, ir.GlobalVariable] = {}
        self.globals: dict[str, Any] = {}
        self.builtins: dict[str, Any] = {}

    # --- values ----------------------------------------------------------------------------------------
    def value(self, v: Value) -> ir.Value:
        known = self.values.get(v.id)
        if known is not None:
            return known
        if not v.is_const:
            raise KeyError(f"value v{v.id} ({v.kind.short}) used before it is defined")
        return self.constant(v.kind, v.const)

    def constant(self, kind: Kind, value: Any) -> ir.Value:
        if kind == Kind.INT:
            return ir.Constant(I64, int(value))
        if kind == Kind.FLOAT:
            return ir.Constant(DOUBLE, float(value))
        if kind == Kind.BOOL:
            return ir.Constant(I1, int(bool(value)))
        if kind.is_pointer:
            return self.pointer(value)
        return ir.Constant(I64, 0)  # None and unbound have no payload

    def pointer(self, obj: Any) -> ir.Value:
        self.keepalive.append(obj)
        return ir.Constant(I64, id(obj)).inttoptr(PTR)

    # --- the frame buffer ------------------------------------------------------------------------------
    def word(self, index: int) -> ir.Value:
        words = self.builder.bitcast(self.buf, I64.as_pointer())
        return self.builder.gep(words, [ir.Constant(I64, index)], inbounds=True)

    def load_word(self, index: int, kind: Kind) -> ir.Value:
        b = self.builder
        address = self.word(index)
        if kind == Kind.FLOAT:
            return b.load(b.bitcast(address, DOUBLE.as_pointer()))
        if kind == Kind.BOOL:
            return b.trunc(b.load(address), I1)
        if kind.is_pointer:
            return b.load(b.bitcast(address, PTR.as_pointer()))
        return b.load(address)

    def store_word(self, index: int, kind: Kind, value: ir.Value) -> None:
        b = self.builder
        address = self.word(index)
        if kind == Kind.FLOAT:
            b.store(value, b.bitcast(address, DOUBLE.as_pointer()))
        elif kind == Kind.BOOL:
            b.store(b.zext(value, I64), address)
        elif kind.is_pointer:
            b.store(value, b.bitcast(address, PTR.as_pointer()))
        elif kind == Kind.INT:
            b.store(value, address)
        else:
            b.store(ir.Constant(I64, 0), address)

    def tag_address(self, offset: int) -> ir.Value:
        return self.builder.gep(self.buf, [ir.Constant(I64, offset)], inbounds=True)

    def store_slot(self, slot: int, kind: Kind, value: ir.Value) -> None:
        self.store_word(self.layout.slot_word(slot), kind, value)
        self.builder.store(ir.Constant(I8, int(kind) | DIRTY), self.tag_address(self.layout.slot_tag(slot)))

    def load_slot(self, slot: int, kind: Kind) -> ir.Value:
        return self.load_word(self.layout.slot_word(slot), kind)

    def slot_kind_matches(self, slot: int, kind: Kind) -> ir.Value:
        b = self.builder
        tag = b.load(self.tag_address(self.layout.slot_tag(slot)))
        return b.icmp_unsigned("==", b.and_(tag, ir.Constant(I8, 0x7F)), ir.Constant(I8, int(kind)))

    def load_fuel(self) -> None:
        self.fuel = self.builder.load(self.word(abi.FUEL))

    def store_fuel(self) -> None:
        assert self.fuel is not None
        self.builder.store(self.fuel, self.word(abi.FUEL))

    # --- the interpreter's state -----------------------------------------------------------------------
    def materialize(self, snapshot: Snapshot) -> None:
        """Write what the interpreter needs at snapshot: every slot the trace assigns, and the stack."""
        trace = self.trace
        b = self.builder
        for slot in sorted(trace.written):
            value = snapshot.slots.get(slot)
            if value is None and trace.kind == "root":
                value = trace.entry_slots.get(slot)
            if value is not None:
                if trace.kind == "side" and trace.entry_slots.get(slot) is value:
                    continue  # still what the buffer holds
                if value.kind != Kind.RANGE:
                    self.store_slot(slot, value.kind, self.value(value))
                continue
            flag = self.valid.get(slot)
            if flag is not None:  # assigned later in the iteration: the previous iteration's value, if any
                written, previous = flag
                kind = self.valid_kinds[slot]
                with b.if_then(written):
                    self.store_slot(slot, kind, previous)
        for index, value in enumerate(snapshot.stack):
            self.store_word(self.layout.stack_word_of(index), value.kind, self.value(value))
            tag = self.tag_address(self.layout.stack_tag(index))
            b.store(ir.Constant(I8, int(value.kind) | DIRTY), tag)

    # --- guards and exits ------------------------------------------------------------------------------
    def guard(self, ok: ir.Value, uop: Uop, before_exit: Callable[[], None] | None = None) -> None:
        """Continue if ok, else leave through uop's exit."""
        b = self.builder
        fail = self.function.append_basic_block(f"exit_{uop.name.lower()}")
        cont = self.function.append_basic_block()
        branch = b.cbranch(ok, cont, fail)
        branch.set_weights([1000, 1])
        b.position_at_end(fail)
        if before_exit is not None:
            before_exit()
        assert uop.exit is not None
        self.exit_stub(uop.exit)
        b.position_at_end(cont)

    def exit_stub(self, exit: ExitPoint) -> None:
        b = self.builder
        index = self.exit_index[id(exit)]
        counter = b.gep(self.counts, [ir.Constant(I32, 0), ir.Constant(I32, index)], inbounds=True)
        b.store(b.add(b.load(counter), ir.Constant(I64, 1)), counter)
        if exit.propagate:
            assert self.call_result is not None
            b.ret(self.call_result)
            return
        if exit.prewritten is None:
            self.materialize(exit.snapshot)
        b.store(ir.Constant(I64, exit.id), self.word(abi.EXIT))
        if exit.when_hot == "side" and not exit.leaves_loop:
            link = self.link(index)
            target = b.load(link)
            jump = self.function.append_basic_block()
            leave = self.function.append_basic_block()
            b.cbranch(b.icmp_unsigned("!=", target, ir.Constant(PTR, None)), jump, leave)
            b.position_at_end(jump)
            if self.fuel is not None:
                self.store_fuel()
            callee = b.bitcast(target, TRACE_FN.as_pointer())
            b.ret(b.call(callee, [self.buf], tail="musttail"))
            b.position_at_end(leave)
        b.ret(ir.Constant(I64, exit.id))

    def link(self, index: int) -> ir.GlobalVariable:
        g = self.links.get(index)
        if g is None:
            g = ir.GlobalVariable(self.module, PTR, f"{self.symbol}_link{index}")
            g.initializer = ir.Constant(PTR, None)
            self.links[index] = g
            self.linkable.append(index)
        return g

    # --- calls -----------------------------------------------------------------------------------------
    def capi(self, name: str, *args: ir.Value) -> ir.Value:
        fn = self.callees.get(name)
        if fn is None:
            ret, params = capi.SIGNATURES[name]
            fn = ir.Function(self.module, ir.FunctionType(ret, params), name)
            self.callees[name] = fn
        return self.builder.call(fn, list(args))

    def libm(self, name: str, *args: ir.Value) -> ir.Value:
        fn = self.callees.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(DOUBLE, [DOUBLE] * len(args)), name)
            self.callees[name] = fn
        return self.builder.call(fn, list(args))

    def intrinsic(self, name: str, ret: ir.Type, *args: ir.Value) -> ir.Value:
        fn = self.callees.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ret, [a.type for a in args]), name)
            self.callees[name] = fn
        return self.builder.call(fn, list(args))

    def tree_function(self, symbol: str) -> ir.Function:
        fn = self.callees.get(symbol)
        if fn is None:
            fn = ir.Function(self.module, TRACE_FN, symbol)
            fn.attributes.add("noinline")
            self.callees[symbol] = fn
        return fn
