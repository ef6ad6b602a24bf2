"""The optimization pipeline of traces (``codegen.engine``) and the IR builder's loop-invariant hoisting
(``codegen.function.hoist_invariants``): what they do to the code, and that every opt_level gives CPython's
results."""

import os
import re
import subprocess
import sys

import pytest
from helpers import TEST_OPTIONS, check

from codegen.engine import NO_PEEL, TRACE_PASSES, TRACE_PASSES_NO_PEEL
from jit import jit


def invariant_product(n, a, b):
    total = 0
    for i in range(n):
        total += (a * b + i) & 15
    return total


def late_assignment(n):
    total = 0
    last = -1
    for i in range(n):
        if i == n - 1:
            total += last
        last = i * 3
        total += i
    return total


def while_sum(n):
    i = 0
    acc = 0
    while i < n:
        acc = acc + i
        i += 1
    return acc


def float_invariant(n, x, y):
    s = 0.0
    for i in range(n):
        s += x * y + i
    return s


def _blocks(ir_text: str, symbol: str) -> dict[str, str]:
    """Block label -> its instructions, in the function symbol of ir_text."""
    body = ir_text[ir_text.index(f'@"{symbol}"(') :]
    body = body[: body.index("\n}")]
    blocks: dict[str, str] = {}
    label = "entry"
    for line in body.splitlines()[2:]:
        match = re.match(r'^"?([\w.]+)"?:$', line)
        if match:
            label = match.group(1)
            blocks[label] = ""
        else:
            blocks[label] = blocks.get(label, "") + line + "\n"
    return blocks


def _root_symbol(f) -> str:
    (tree,) = jit.stats(f)["trees"]
    return tree["symbol"]


def _preheader(blocks: dict[str, str]) -> str:
    """The block that enters the checked loop."""
    return "enter_checked" if "enter_checked" in blocks else "entry"


def test_invariant_arithmetic_is_computed_before_the_loop():
    f = jit(**TEST_OPTIONS)(invariant_product)
    assert f(50, 6, 7) == invariant_product(50, 6, 7)
    blocks = _blocks(jit.dump(f, "ir"), _root_symbol(f))
    assert "loop" in blocks
    # a * b (with its overflow check) is in the block that enters the loop (the entry's, or after the entry's
    # branch to a vectorized fast copy: codegen.function._enter_fast); the loop adds i to it
    preheader = _preheader(blocks)
    assert "llvm.smul.with.overflow.i64" in blocks[preheader]
    assert not any("smul" in code for label, code in blocks.items() if label != preheader)
    assert any("llvm.sadd.with.overflow.i64" in code and '%"slot' in code for code in blocks.values())


def test_what_depends_on_the_loop_stays_in_it():
    f = jit(**TEST_OPTIONS)(invariant_product)
    assert f(50, 6, 7) == invariant_product(50, 6, 7)
    blocks = _blocks(jit.dump(f, "ir"), _root_symbol(f))
    # the range step's sign (a mask of all ones going down) and stop's side of the compare are invariant and
    # hoisted; the compare with the counter is not (one compare in the entry: the step's sign)
    entry = blocks[_preheader(blocks)]
    assert entry.count("icmp slt") == 1 and "sext i1" in entry and "xor i64" in entry
    assert any("icmp slt" in code and "xor i64" in code for label, code in blocks.items() if label != "entry")


def test_overflow_of_hoisted_arithmetic_still_exits_in_the_loop():
    big = 1 << 62
    f = check(invariant_product, (50, 6, 7), (50, big, 4), (50, 3, 5), native=True)
    assert jit.stats(f)["exits_to_interpreter"] > 0


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
def test_every_opt_level_gives_cpythons_results(opt_level):
    options = {"opt_level": opt_level}
    check(invariant_product, (100, 6, 7), (100, 1 << 62, 4), options=options, native=True)
    check(late_assignment, 0, 1, 2, 50, options=options)
    check(float_invariant, (100, 1.5, 2.25), (100, float("inf"), 0.0), options=options)


def test_opt_ir_is_the_trace_pipelines_output():
    f = jit(**TEST_OPTIONS)(float_invariant)
    assert f(50, 1.5, 2.5) == float_invariant(50, 1.5, 2.5)
    ir_text, opt_ir = jit.dump(f, "ir"), jit.dump(f, "opt-ir")
    assert ir_text != opt_ir
    assert jit.dump(f, "opt-ir") == opt_ir  # recomputed on demand, the same every time
    assert "fmul" in opt_ir


POWER_IN_A_WHILE_LOOP = """
def f(a, data):
    m = 0
    k = a
    for i in range(len(data)):
        w0 = 0
        while w0 < 26:
            w0 += 2
            m = (k ** 1) % 97
    return m
"""


def test_a_trace_that_crashed_llvm_compiles(tmp_path):
    """A generated program whose inner loop's trace made NewGVN fail an assertion inside LLVM, which aborted the
    whole process: the pipeline has no NewGVN since. Run in a child process, so that a crash is a test failure
    with its message rather than the end of the test session."""
    (tmp_path / "power_loop.py").write_text(POWER_IN_A_WHILE_LOOP)
    script = (
        "import jit, power_loop\n"
        "f = power_loop.f\n"
        "g = jit.jit(threshold=2, side_exit_threshold=2)(f)\n"
        "for args in [(821, [1]), (3, [1, 2, 3]), (-(2**40), [0] * 9)]:\n"
        "    assert g(*args) == f(*args), args\n"
        "assert jit.stats(g)['traces_compiled'] >= 1, jit.stats(g)['aborts']\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "new_gvn" not in TRACE_PASSES


def test_the_pipeline_has_no_module_passes():
    # the trace pipeline is a short list of function passes, not LLVM's default O2 (issue 9: compile time)
    assert len(TRACE_PASSES) <= 10
    assert "loop_unroll" in TRACE_PASSES  # peels the first iteration of loops with late assignments


def test_entry_stubs_are_compiled_without_optimization():
    # (issue 9: compile time) a tree's entry stub is marked cold and compiled as optnone, the trace itself is not
    f = jit(**TEST_OPTIONS)(invariant_product)
    assert f(50, 6, 7) == invariant_product(50, 6, 7)
    symbol = _root_symbol(f)
    assert jit.stats(f)["stub_entries"] > 0 or jit.stats(f)["native_entries"] > 0
    opt_ir = jit.dump(f, "opt-ir")
    groups = dict(re.findall(r"^attributes (#\d+) = \{(.*)\}$", opt_ir, re.M))
    attributes = {name: groups[group] for name, group in re.findall(r"^define [^@]*@(\w+)\(.*\) (#\d+)", opt_ir, re.M)}
    assert "optnone" in attributes[f"{symbol}_entry"]
    assert "optnone" not in attributes[symbol]
    assert check(invariant_product, (50, 6, 7), (50, 1 << 62, 4), native=True)


def test_a_stub_without_numpy_kinds_jumps_to_the_support_library():
    # (issue 9: compile time) a tree's stub is a jump to tj_entry_run with the tree's entry parameters, a constant
    # of the root's module: no unboxing or boxing code of its own; entries that match, and one that does not (a
    # float where the map says int: the stub refuses it, CPython runs the loop and raises its TypeError at `& 15`)
    # give CPython's results
    f = check(invariant_product, (50, 6, 7), (50, 2.5, 4), (60, 6, 7), native=True)
    symbol = _root_symbol(f)
    ir = jit.dump(f, "ir")
    stub = re.search(rf'define i8\* @"{symbol}_entry"\(.*?\n}}\n', ir, re.S)
    assert stub is not None
    assert 'musttail call i8* @"tj_entry_run"' in stub.group(0)
    assert stub.group(0).count("\n  ") == 2  # (the call and the return)
    assert f'@"{symbol}_entry_params" = internal constant' in ir
    assert "tj_entry_unbox" not in ir and "tj_entry_leave" not in ir
    assert jit.stats(f)["stub_entries"] > 0


def test_exits_write_slots_assigned_late_without_branches():
    # late_assignment's loop assigns `last` after the guard of `i == n - 1`: its exit writes last's previous
    # value only once there is one, with selects rather than a block per slot (issue 9: fewer blocks)
    f = check(late_assignment, 0, 1, 2, 50, native=True)
    blocks = _blocks(jit.dump(f, "ir"), _root_symbol(f))
    exits = {label: code for label, code in blocks.items() if label.startswith("exit_state")}
    assert exits and not any(".if" in label or ".endif" in label for label in exits)
    assert any("select" in code for code in exits.values())


def test_only_a_loop_with_slots_assigned_late_gets_the_loop_passes():
    # late_assignment's loop keeps flags of slots assigned late (peeled: the full pipeline); while_sum's reads
    # every slot before it assigns it: its module starts with NO_PEEL and gets the short pipeline
    late = check(late_assignment, 50, native=True)
    plain = check(while_sum, 50, native=True)
    assert not jit.dump(late, "ir").split("\n", 1)[1].startswith(NO_PEEL)
    assert jit.dump(plain, "ir").split("\n", 1)[1].startswith(NO_PEEL)
    assert "loop_unroll" not in TRACE_PASSES_NO_PEEL and set(TRACE_PASSES_NO_PEEL) < set(TRACE_PASSES)


def test_a_library_imports_the_symbols_its_module_declares():
    # (issue 9: compile time) linking defines only the C-API and runtime symbols the module declares, and the
    # 128-bit division helpers code generation calls without a declaration: not every import for every trace
    import llvmlite.binding as llvm

    from codegen import capi
    from codegen.engine import engine

    llvm_engine = engine()
    text = (
        'declare i32 @"PyErr_CheckSignals"()\n'
        '@"tj_python_epoch" = external global i64\n'
        'define i64 @"f"(i128 %".1", i128 %".2") {\n'
        '  %".3" = srem i128 %".1", %".2"\n'
        '  %".4" = trunc i128 %".3" to i64\n'
        '  %".5" = call i32 @"PyErr_CheckSignals"()\n'
        '  %".6" = load i64, i64* @"tj_python_epoch"\n'
        '  %".7" = add i64 %".4", %".6"\n'
        '  ret i64 %".7"\n'
        "}\n"
    )
    imports = llvm_engine._imports_of(llvm.parse_assembly(text))
    expected = {"PyErr_CheckSignals", "tj_python_epoch", *capi.WIDE_DIVISION_ADDRESSES}
    assert set(imports) == expected
    assert all(imports[name] == llvm_engine.imports[name] for name in imports)
    assert len(llvm_engine.imports) > 2 * len(expected)
    # and the module links with them (LLVM compiles srem of i128 to a call of __modti3)
    compiled = llvm_engine.compile(text, ["f"], [], 2)
    assert compiled.addresses["f"]
