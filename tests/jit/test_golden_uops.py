"""Golden listings of ``jit.dump(f, "uops")`` for a few small functions (tests/jit/golden/<name>.txt), and
the other dump kinds, ``JIT_DUMP`` and errors.

What varies from run to run is normalized away: the last part of a trace's symbol is the address of the
function's monitor (``tj_f_root0_0_a8d0``). Value numbers, slots, exits and lines are deterministic.

A listing changes whenever the recorder or the optimizer emits different uops. When that is intended, rewrite
the files with::

    TRACEJIT_UPDATE_GOLDEN=1 python -m pytest tests/jit/test_golden_uops.py

and review the diff.
"""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import define

from jit import environment, jit

GOLDEN = Path(__file__).parent / "golden"
UPDATE = environment.flag("TRACEJIT_UPDATE_GOLDEN")
OPTIONS = {"threshold": 2, "side_exit_threshold": 2}

# defined from source text, so the listings' line numbers do not depend on this file's layout
SOURCES = {
    "range_loop": (
        """
        def range_loop(n):
            total = 0
            for i in range(n):
                total += i * 3 - 1
            return total
        """,
        (100,),
    ),
    "float_loop": (
        """
        def float_loop(n, x):
            acc = 0.0
            for i in range(n):
                acc = acc * 0.5 + x / (i + 1.0)
            return acc
        """,
        (100, 2.5),
    ),
    "while_branch": (
        """
        def while_branch(n):
            i = 0
            evens = 0
            odds = 0
            while i < n:
                if i % 2 == 0:
                    evens += i
                else:
                    odds -= i
                i += 1
            return evens, odds
        """,
        (100,),
    ),
    "global_store": (
        """
        count = 0

        def global_store(n):
            global count
            count = 0
            for i in range(n):
                count += i * 3 - 1
            return count
        """,
        (100,),
    ),
    "int_objects": (
        """
        def int_objects(n):
            modulus = (1 << 61) - 1
            h = 0
            for i in range(n):
                h = (h * 1_000_003 + i) % modulus
            return h
        """,
        (100,),
    ),
    "combined_iterators": (
        """
        def combined_iterators(xs, ys):
            total = 0.0
            for i, x in enumerate(xs):
                total += i * x
            for x, y in zip(xs, ys):
                total += x * y
            return total
        """,
        ([0.5 * k for k in range(100)], list(range(100))),
    ),
    "builtin_iterators": (
        """
        def builtin_iterators(text, d):
            vowels = 0
            for c in text:
                if c in "aeiou":
                    vowels += 1
            total = 0.0
            for k, v in d.items():
                total += len(k) * v
            return vowels, total
        """,
        ("abcdefghij" * 10, {f"k{n}": n * 0.5 for n in range(100)}),
    ),
    "nested_loops": (
        """
        def nested_loops(n, m):
            total = 0
            for i in range(n):
                for j in range(m):
                    total += i * j
            return total
        """,
        (20, 20),
    ),
    # a loop taking one way at every other iteration: its side trace's function joins both ways, and has a fast
    # copy of the loop merged with it (jit.optimizer.merge): no branch guard, both ways computed, a _SELECT of
    # the sum, every check in its fast form under the conditions of both ways' terms
    "branch_merged": (
        """
        def branch_merged(n):
            total = 0
            for j in range(n):
                if j & 1:
                    total += j * 3 & 255
                else:
                    total -= j & 15
            return total
        """,
        (100,),
    ),
    # a swap moves the list's pointers: one _MOVE_LIST_ITEMS, no type guard, reference, unboxing or reference
    # count (jit.optimizer.moves)
    "list_swaps": (
        """
        def list_swaps(a):
            i = 0
            j = len(a) - 1
            while i < j:
                a[i], a[j] = a[j], a[i]
                i += 1
                j -= 1
            return i
        """,
        (list(range(100)),),
    ),
}

_SYMBOL = re.compile(r"\b(tj_\w*?_(?:root|side)\d+_\d+)_[0-9a-f]+\b")


def normalize(text: str) -> str:
    """The dump without what varies between runs: the monitor address in trace symbols."""
    text = _SYMBOL.sub(r"\1_XXXX", text)
    return "\n".join(line.rstrip() for line in text.strip().splitlines()) + "\n"


def compiled(name: str):
    source, args = SOURCES[name]
    plain = define(textwrap.dedent(source), name)
    jitted = jit(**OPTIONS)(plain)
    assert jitted(*args) == plain(*args)
    return jitted


def test_normalize_removes_only_the_monitor_address():
    text = "# tj_f_g_root0_12_a8d0: x\n  tree tj_f_g_side1_3_f (loop)  tj_other_root2_0_ffff\n"
    assert normalize(text) == "# tj_f_g_root0_12_XXXX: x\n  tree tj_f_g_side1_3_XXXX (loop)  tj_other_root2_0_XXXX\n"


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_golden_uops(name):
    text = normalize(jit.dump(compiled(name), "uops"))
    path = GOLDEN / f"{name}.txt"
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"no golden listing {path}: run with TRACEJIT_UPDATE_GOLDEN=1 to create it"
    expected = path.read_text()
    assert text == expected, (
        f"jit.dump({name}, 'uops') differs from {path.name} (TRACEJIT_UPDATE_GOLDEN=1 rewrites it):\n{text}"
    )


def test_golden_nested_loop_calls_inner_tree():
    text = (GOLDEN / "nested_loops.txt").read_text()
    assert "_CALL_TREE" in text and "_GUARD_TREE_EXIT" in text


def test_golden_branch_merged_selects_instead_of_branching():
    text = (GOLDEN / "branch_merged.txt").read_text()
    merged = text[text.index("its tree's loop merged with it") :]
    merged = merged[: merged.index("uops removed")]
    assert "_SELECT (v" in merged and "_GUARD_IS_" not in merged
    # both ways' checks in their fast forms: the side's product and sum, the root's difference
    for form in ("_BINARY_OP_MULTIPLY_INT_IN_RANGE", "_BINARY_OP_ADD_INT_IN_RANGE", "_BINARY_OP_SUBTRACT_INT_IN_RANGE"):
        assert f"fast={form}" in merged
    # the sum's bounds over the trips left: down by 15, up by 255 at most per iteration
    assert "* (-15) <= 9223372036854775807" in merged and "* 255 <= 9223372036854775807" in merged


def test_golden_swap_moves_pointers_alone():
    text = (GOLDEN / "list_swaps.txt").read_text()
    assert "_MOVE_LIST_ITEMS " in text
    assert not any(name in text for name in ("_STORE_SUBSCR_LIST", "_NEW_REF", "_GUARD_TYPE", "_UNBOX"))


def test_golden_listing_is_stable_within_a_process():
    first = normalize(jit.dump(compiled("while_branch"), "uops"))
    second = normalize(jit.dump(compiled("while_branch"), "uops"))
    assert first == second


def test_golden_listing_is_stable_across_processes(tmp_path):
    script = tmp_path / "dump_twice.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(Path(__file__).parents[2])!r})
            sys.path.append({str(Path(__file__).parents[1])!r})
            from jit import jit
            from helpers import define
            f = jit(threshold=2, side_exit_threshold=2)(define({textwrap.dedent(SOURCES["float_loop"][0])!r}, "float_loop"))
            f(100, 2.5)
            print(jit.dump(f, "uops"))
            """
        )
    )
    outputs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        outputs.append(proc.stdout)
    assert normalize(outputs[0]) == normalize(outputs[1]) == (GOLDEN / "float_loop.txt").read_text()


# --- every dump kind ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def range_loop():
    return compiled("range_loop")


def _symbols(f):
    return [tree["symbol"] for tree in jit.stats(f)["trees"]]


@pytest.mark.parametrize("kind", ["uops", "ir", "opt-ir", "asm", "trees"])
def test_every_dump_kind_is_nonempty(range_loop, kind):
    text = jit.dump(range_loop, kind)
    assert isinstance(text, str) and text.strip()
    (symbol,) = _symbols(range_loop)
    assert symbol in text


def test_ir_dumps_define_the_trace_function(range_loop):
    (symbol,) = _symbols(range_loop)
    for kind in ("ir", "opt-ir"):
        text = jit.dump(range_loop, kind)
        assert re.search(rf"define\b[^\n]*\bi64 @\"?{symbol}\"?\(", text), text[:2000]
    assert "llvm.sadd.with.overflow.i64" in jit.dump(range_loop, "ir")


def test_asm_contains_the_function_symbol(range_loop):
    (symbol,) = _symbols(range_loop)
    asm = jit.dump(range_loop, "asm")
    assert re.search(rf"^{symbol}:", asm, re.MULTILINE), asm[:2000]


def test_trees_dump_lists_loops_and_trees(range_loop):
    text = jit.dump(range_loop, "trees")
    assert text.startswith("trees of range_loop:")
    assert "loop 0 at line 4: 1 tree(s)" in text


def test_dump_default_kind_is_uops(range_loop):
    assert jit.dump(range_loop) == jit.dump(range_loop, "uops")


def test_dump_of_a_function_without_traces_is_empty():
    f = jit(**OPTIONS)(define("def f(n):\n    return n + 1\n", "f"))
    assert f(1) == 2
    for kind in ("uops", "ir", "opt-ir", "asm"):
        assert jit.dump(f, kind) == ""


@pytest.mark.parametrize("kind", ["UOPS", "llvm", "", "uops,ir", "opt_ir"])
def test_unknown_dump_kind_raises(range_loop, kind):
    with pytest.raises(ValueError, match="unknown dump kind"):
        jit.dump(range_loop, kind)


def test_dump_of_a_plain_function_raises():
    with pytest.raises(TypeError):
        jit.dump(len, "uops")


# --- JIT_DUMP ------------------------------------------------------------------------------------------------

DUMP_SCRIPT = """
from jit import jit


@jit(threshold=2)
def kernel(n):
    total = 0
    for i in range(n):
        total += i * 3 - 1
    return total


print(kernel(100))
"""


def _run_with_jit_dump(tmp_path, value):
    script = tmp_path / "kernel.py"
    script.write_text(DUMP_SCRIPT)
    env = {**os.environ, "JIT_DUMP": value}
    env.pop("JIT_DISABLE", None)
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(sum(i * 3 - 1 for i in range(100)))
    return proc.stderr


def test_jit_dump_env_prints_uops_to_stderr(tmp_path):
    err = _run_with_jit_dump(tmp_path, "uops")
    assert re.search(r"^# tj_kernel_root0_0_[0-9a-f]+: root trace of the loop at line 8", err, re.MULTILINE), err
    assert "uops of tj_kernel_root0_0_" in err
    assert "_BINARY_OP_MULTIPLY_INT" in err and "_JUMP_TO_TOP" in err
    assert "define" not in err  # no IR asked for
    # the same listing as the golden one of the same loop (only the function's name differs)
    listing = normalize(err).replace("tj_kernel_", "tj_range_loop_").replace("loop at line 8", "loop at line 4")
    listing = re.sub(r"# line (\d+)", lambda m: f"# line {int(m.group(1)) - 4}", listing)
    assert listing == (GOLDEN / "range_loop.txt").read_text()


def test_jit_dump_env_several_kinds(tmp_path):
    err = _run_with_jit_dump(tmp_path, "uops,ir")
    assert "[uops]" in err and "[ir]" in err
    assert re.search(r"define\b[^\n]*\bi64 @\"?tj_kernel_root0_0_", err)


def test_without_jit_dump_nothing_is_printed(tmp_path):
    assert _run_with_jit_dump(tmp_path, "") == ""
