"""The module text printer (``codegen.text``): the same text as llvmlite's ``str``, instruction by instruction
for every form it prints itself (and those it leaves to llvmlite), and for whole modules of lowered traces."""

from __future__ import annotations

import pytest
from helpers import TEST_OPTIONS, check
from llvmlite import ir

import codegen.function
from codegen.text import _PRINTERS, _reference, instruction_text, module_text

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
DOUBLE = ir.DoubleType()
PAIR = ir.LiteralStructType([I64, I1])


def sample_module() -> ir.Module:
    """A module with each form of each instruction class the printer knows, some it leaves to llvmlite, names
    that need quotes, metadata, globals and declarations."""
    module = ir.Module(name="sample")
    module.triple = "x86_64-unknown-linux-gnu"
    counts = ir.GlobalVariable(module, ir.ArrayType(I64, 3), "counts")
    counts.initializer = ir.Constant(ir.ArrayType(I64, 3), None)
    callee = ir.Function(module, ir.FunctionType(I64, [I64, DOUBLE]), "callee")
    sink = ir.Function(module, ir.FunctionType(ir.VoidType(), [I64]), "sink")
    printf = ir.Function(module, ir.FunctionType(I32, [I8.as_pointer()], var_arg=True), "printf")
    overflow = ir.Function(module, ir.FunctionType(PAIR, [I64, I64]), "llvm.sadd.with.overflow.i64")
    fn = ir.Function(module, ir.FunctionType(I64, [I64.as_pointer(), I64, DOUBLE]), 'a "quoted\\ name')
    ptr, n, x = fn.args
    ptr.name, n.name = "words", "n"
    entry = fn.append_basic_block("entry")
    body = fn.append_basic_block('odd "label"')
    merge = fn.append_basic_block()
    done = fn.append_basic_block("done")
    b = ir.IRBuilder(entry)
    loaded = b.load(ptr, name="first")
    aligned = b.load(ptr, align=8)
    b.store(loaded, ptr)
    b.store(aligned, ptr, align=8)
    total = b.add(loaded, n, name="x\\y")
    wrapped = b.add(total, ir.Constant(I64, 1), flags=["nsw"])
    product = b.mul(wrapped, n)
    both = b.and_(product, ir.Constant(I64, 255))
    b.or_(both, b.xor(both, ir.Constant(I64, -1)))
    b.sdiv(product, ir.Constant(I64, 3))
    fsum = b.fadd(x, ir.Constant(DOUBLE, 1.5))
    b.fmul(fsum, x, flags=["fast"])
    b.fneg(fsum)
    signed = b.icmp_signed("<", loaded, n)
    unsigned = b.icmp_unsigned("!=", loaded, ir.Constant(I64, 0))
    ordered = b.fcmp_ordered("==", fsum, ir.Constant(DOUBLE, 0.0), flags=["nnan"])
    b.fcmp_unordered("<", fsum, x)
    b.gep(ptr, [ir.Constant(I64, 4)], inbounds=True)
    b.gep(counts, [ir.Constant(I32, 0), n], inbounds=False)
    b.bitcast(ptr, I8.as_pointer())
    b.zext(signed, I64)
    b.inttoptr(ir.Constant(I64, 4096), I64.as_pointer(), name="fixed")
    b.select(unsigned, loaded, n)
    b.select(ordered, fsum, x, flags=["fast"])
    result = b.call(overflow, [loaded, n], name="checked")
    b.extract_value(result, 1)
    b.call(callee, [loaded, x], name="called")
    b.call(callee, [loaded, x], tail=True)
    b.call(sink, [loaded])
    b.call(sink, [loaded], tail="musttail")
    b.call(callee, [loaded, x], attrs=["noinline"])  # (left to llvmlite)
    b.call(callee, [loaded, x], cconv="fastcc")  # (left to llvmlite)
    b.call(printf, [ir.Constant(I8.as_pointer(), None), loaded])  # (a variadic callee: left to llvmlite)
    b.alloca(I64)  # (left to llvmlite)
    b.insert_value(ir.Constant(PAIR, None), loaded, 0)  # (left to llvmlite)
    branch = b.cbranch(signed, body, merge)
    branch.set_weights([1000, 1])
    b.position_at_end(body)
    b.branch(merge)
    b.position_at_end(merge)
    phi = b.phi(I64, name="joined")
    phi.add_incoming(loaded, entry)
    phi.add_incoming(ir.Constant(I64, 7), body)
    switch = b.switch(phi, done)  # (left to llvmlite)
    switch.add_case(1, body)
    b.position_at_end(done)
    b.ret(phi)
    void = ir.Function(module, ir.FunctionType(ir.VoidType(), []), "nothing")
    vb = ir.IRBuilder(void.append_basic_block())
    vb.ret_void()
    module.add_named_metadata("named", [ir.Constant(I32, 1)])
    return module


def test_each_instruction_prints_as_llvmlite_prints_it():
    module = sample_module()
    instructions = [i for f in module.functions for block in f.blocks for i in block.instructions]
    covered = {type(i) for i in instructions if type(i) in _PRINTERS}
    assert covered == set(_PRINTERS)  # (every printer is tried)
    for instr in instructions:
        assert instruction_text(instr) == str(instr)


def test_a_module_prints_as_llvmlite_prints_it():
    module = sample_module()
    assert module_text(module) == str(module)


def test_operands_are_written_as_llvmlite_writes_them():
    module = sample_module()
    values = [
        ir.Constant(I1, True),
        ir.Constant(I1, 0),
        ir.Constant(I64, -(2**63)),
        ir.Constant(I64, None),
        ir.Constant(I32, 7),
        *(ir.Constant(DOUBLE, v) for v in (0.1, -0.0, float("inf"), float("nan"), 1e300, 5e-324)),
        ir.Constant(ir.FloatType(), 0.1),
        ir.Constant(I64.as_pointer(), None),
        ir.Constant(I64, ir.Undefined),
        ir.Constant(PAIR, None),
        ir.Constant(PAIR, [ir.Constant(I64, 3), ir.Constant(I1, 1)]),
        ir.Constant(ir.ArrayType(I64, 2), [1, 2]),
        ir.Constant(ir.ArrayType(I8, 3), bytearray(b'a"\\')),
        ir.Constant(I64, 4096).inttoptr(I64.as_pointer()),
        module.add_metadata([ir.Constant(I32, 1)]),
    ]
    for fn in module.functions:
        values += [fn, *fn.args, *fn.blocks]
        values += [op for block in fn.blocks for i in block.instructions for op in [i, *i.operands]]
    values += list(module.global_values)
    for value in values:
        assert _reference(value) == value.get_reference()


def test_an_instruction_changed_after_it_was_printed_prints_as_it_is_now():
    """(llvmlite keeps an instruction's first text: a phi given an incoming value after being printed prints
    without it there. Lowering prints nothing before the module is done, so the two agree on its modules.)"""
    module = sample_module()
    fn = module.get_global('a "quoted\\ name')
    phi = next(i for block in fn.blocks for i in block.instructions if isinstance(i, ir.PhiInstr))
    before = instruction_text(phi)
    phi.add_incoming(ir.Constant(I64, 9), fn.blocks[-1])
    assert instruction_text(phi) == before + ', [9, %"done"]'


def int_loop(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            total += i * 2
        else:
            total -= i
    return total


def float_loop(n, x):
    s = 0.0
    for i in range(n):
        s += x * i - 0.5
    return s


def nested(n):
    total = 0
    for i in range(n):
        for j in range(i):
            total += (i ^ j) & 7
    return total


def objects(words):
    counts = {}
    out = []
    for w in words:
        counts[w] = counts.get(w, 0) + 1
        out.append(w.upper())
    return counts, out


def vectorizable(a, n):
    """(its loop's fast copy is a module of its own: codegen.function.module_texts prints two)"""
    total = 0
    for i in range(n):
        total += (i * 3) ^ a
    return total


@pytest.fixture
def compared(monkeypatch):
    """Every module lowered while it is active is printed both ways; returns the number printed."""
    printed = []

    def both(module: ir.Module) -> str:
        text = module_text(module)
        assert text == str(module)
        printed.append(module)
        return text

    monkeypatch.setattr(codegen.function, "module_text", both)
    return printed


@pytest.mark.parametrize(
    "func, calls",
    [
        (int_loop, [30, 0, 7]),
        (float_loop, [(40, 0.25), (5, -1.5)]),
        (nested, [12]),
        (objects, [["a", "b", "a", "c", "b", "a"] * 3]),
        (vectorizable, [(5, 300)]),
    ],
)
def test_lowered_traces_print_as_llvmlite_prints_them(compared, func, calls):
    check(func, *calls, options=TEST_OPTIONS)
    assert compared  # (traces were lowered)
