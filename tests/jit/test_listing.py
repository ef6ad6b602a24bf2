"""The uop listing (jit/listing.py): what ``jit.dump(f, "uops")`` prints reads back into the same trace.

Round trips: every golden listing, and the traces of functions that use every kind of operand, with and
without snapshots. Then what the parser refuses, with the line it refuses.
"""

import math
import textwrap
from pathlib import Path

import pytest
from helpers import define

from jit import jit
from jit.api import state_of
from jit.kinds import Kind
from jit.listing import (
    Listing,
    ListingError,
    Shown,
    format_dump,
    format_listing,
    format_snapshot,
    parse_dump,
    parse_listing,
)
from jit.trace import TraceEnd, TraceKind, WhenHot
from jit.uops import GlobalBinding, ModuleAttr, Operand, SlotKind, TreeCall, TreeExit

GOLDEN = Path(__file__).parent / "golden"
# (a dump with a side trace's merged loop, jit.optimizer.merge, is not read back: that part is derived at compile
# time, not a trace of its own; the rest of its listing is read as the others in the tests that compile it)
LISTINGS = sorted(
    p
    for p in GOLDEN.glob("*.txt")
    if p.read_text().startswith("# tj_") and "its tree's loop merged with it" not in p.read_text()
)

# functions whose traces use every kind of operand: globals and module attributes, builtins, math, kinds,
# comparisons, identity, inner trees, side traces with their operand stack, jumps into trees
SOURCES = {
    "globals_and_math": (
        """
        import math
        def globals_and_math(n, x):
            acc = 0.0
            for i in range(n):
                acc += math.sqrt(x + i) + math.hypot(x, 1.0) + abs(-x)
                if math.isnan(acc):
                    acc = 0.0
            return acc
        """,
        (50, 2.5),
    ),
    "lists": (
        """
        def lists(rows, last):
            out = []
            total = 0
            for row in rows:
                if row is last:
                    continue
                total += len(row) + row[0]
                out.append(total)
            return total, len(out)
        """,
        ([[1, 2], [3], [4, 5, 6]] * 20, None),
    ),
    "branches": (
        """
        def branches(n):
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
    "inlined": (
        """
        def norm(x, y):
            return (x * x + y * y) ** 0.5

        def inlined(n):
            acc = 0.0
            for i in range(n):
                acc += norm(i * 0.5, 2.0)
            return acc
        """,
        (50,),
    ),
    "closures": (
        """
        def closures(n):
            k = 3
            def add_k(v):
                return v + k
            acc = 0
            for i in range(n):
                acc += add_k(i)
            return acc
        """,
        (50,),
    ),
    "int_objects": (
        """
        def int_objects(n):
            modulus = (1 << 61) - 1
            h = 0
            for i in range(n):
                h = ((i + 1) << 70 | h) % modulus
            return h
        """,
        (50,),
    ),
    "stores_a_global": (
        """
        def stores_a_global(n):
            global COUNTER
            COUNTER = 0
            for i in range(n):
                COUNTER = COUNTER + i
            return COUNTER
        """,
        (50,),
    ),
    "nested": (
        """
        def nested(n, m):
            total = 0
            for i in range(n):
                for j in range(m):
                    if j % 3 == 0:
                        total += i * j
                    else:
                        total -= j
            return total
        """,
        (20, 20),
    ),
    "generic": (
        """
        def generic(n):
            total = 0
            for i in range(n):
                total += int(str(i).zfill(3), base=10) + math.pi.real
                label = f"{i!r:>4}"
            return total, label
        """,
        (50,),
    ),
    "instances": (
        """
        class Pair:
            __slots__ = ("a", "b")

            def __init__(self, a):
                self.a = a
                self.b = a + 1

        class Point:
            def __init__(self, x):
                self.x = x

        def instances(n):
            p, q = Pair(2), Point(0.5)
            total = 0.0
            for i in range(n):
                total += p.b * q.x
            return total
        """,
        (50,),
    ),
}
try:
    import numpy
except ImportError:  # (the array operands are then not required below)
    numpy = None
else:
    SOURCES["arrays"] = (
        """
        def arrays(a, out):
            s = 0.0
            for i in range(len(a)):
                s += a[i] * a.shape[0]
                out[i] = s
            return s
        """,
        (numpy.arange(50.0), numpy.zeros(50)),
    )


def listings_of(name):
    source, args = SOURCES[name]
    if name == "lists":
        args = (args[0], args[0][4])
    plain = define(textwrap.dedent(source), name, {"math": math, "COUNTER": 0})
    jitted = jit(threshold=2, side_exit_threshold=2)(plain)
    assert jitted(*args) == plain(*args)
    monitor = state_of(jitted).monitor
    out = []
    for compiled in monitor.traces:
        parent = compiled.parent or compiled.trace.parent_exit
        out.append((Listing(compiled.trace, compiled.symbol, monitor.code.slot_names, parent), jitted))
    assert out, f"{name} compiled no trace"
    return out


@pytest.mark.parametrize("path", LISTINGS, ids=lambda p: p.stem)
def test_golden_listing_round_trips(path):
    text = path.read_text()
    assert format_dump(parse_dump(text)) == text


@pytest.mark.parametrize("path", LISTINGS, ids=lambda p: p.stem)
def test_golden_listing_reads_as_traces(path):
    for listing in parse_dump(path.read_text()):
        trace = listing.trace
        assert trace.end in (TraceEnd.LOOP, TraceEnd.TREE, TraceEnd.EXIT)
        assert trace.uops and all(u.exit is not None for u in trace.uops if u.op.is_guard)
        assert trace.next_value > max(v.id for v in trace.entry_slots.values())


def test_every_golden_listing_is_read():
    assert {p.stem for p in LISTINGS} >= {"range_loop", "float_loop", "while_branch", "nested_loops"}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_dump_is_the_listing(name):
    pairs = listings_of(name)
    jitted = pairs[0][1]
    assert format_dump([listing for listing, _ in pairs]) == jit.dump(jitted, "uops")


@pytest.mark.parametrize("name", sorted(SOURCES))
@pytest.mark.parametrize("snapshots", [False, True], ids=["plain", "snapshots"])
def test_compiled_traces_round_trip(name, snapshots):
    for listing, _ in listings_of(name):
        text = format_listing(listing, snapshots=snapshots)
        again = parse_listing(text)
        assert format_listing(again, snapshots=snapshots) == text


def test_the_sources_use_every_kind_of_operand():
    seen = set()
    for name in SOURCES:
        for listing, _ in listings_of(name):
            seen.update(u.op.operand for u in [*listing.trace.hoisted, *listing.trace.uops])
            if listing.trace.entry_slots:
                seen.add(Operand.SLOT)
            if listing.trace.entry_stack:
                seen.add(Operand.STACK_INDEX)
    missing = set(Operand) - seen - {Operand.CONST, Operand.PC}  # constants are folded into operands; see below
    if numpy is None:
        missing -= {Operand.ARRAY_SPEC, Operand.AXIS}
    assert not missing, missing


def test_snapshots_read_back_as_written():
    (listing, _), *_ = listings_of("branches")
    names = listing.slot_names
    again = parse_listing(format_listing(listing, snapshots=True))
    exits = [u.exit for u in listing.trace.uops if u.exit is not None]
    assert exits and len(exits) == len([u for u in again.trace.uops if u.exit is not None])
    for before, after in zip(exits, [u.exit for u in again.trace.uops if u.exit is not None], strict=True):
        assert (after.id, after.leaves_loop, after.propagate, after.when_hot) == (
            before.id,
            before.leaves_loop,
            before.propagate,
            before.when_hot,
        )
        assert format_snapshot(again.slot_names, after.snapshot) == format_snapshot(names, before.snapshot)
    assert any(e.leaves_loop for e in exits) and any(e.when_hot is not WhenHot.SIDE for e in exits)
    assert again.trace.written == listing.trace.written
    assert format_snapshot(names, again.trace.end_snapshot) == format_snapshot(names, listing.trace.end_snapshot)


# --- reading what a test writes --------------------------------------------------------------------------------

SMALL = """
uops of t:
  _LOAD_SLOT (target=3, operand=0 (n)) -> v0:int
  _LOAD_SLOT (target=3, operand=1 (i)) -> v1:int
  _CHECK_PERIODIC (target=3, exit=0)
  _COMPARE_OP_INT (v1, v0, target=4, operand=<) -> v2:bool   # line 2
  _GUARD_IS_TRUE_POP (v2, target=5, exit=1)                  # line 2
  _BINARY_OP_ADD_INT (v1, 1, target=6, exit=2) -> v3:int     # line 3
      exit 2 at 6: {1 (i)=v1} [v1, 1]
  _JUMP_TO_TOP (target=2)                                    # line 2
  loop-carried: n=v0, i=v3
  written: i
"""


def test_a_hand_written_listing():
    listing = parse_listing(SMALL)
    trace = listing.trace
    assert not listing.titled and listing.symbol == "t"
    assert trace.kind is TraceKind.ROOT and trace.end is TraceEnd.LOOP and trace.start_pc == 3
    assert [u.name for u in trace.uops] == [
        "_CHECK_PERIODIC",
        "_COMPARE_OP_INT",
        "_GUARD_IS_TRUE_POP",
        "_BINARY_OP_ADD_INT",
        "_JUMP_TO_TOP",
    ]
    add = trace.uops[3]
    assert add.args[0] is trace.entry_slots[1] and add.args[1].const == 1 and add.args[1].kind == Kind.INT
    assert add.exit.snapshot.pc == 6 and add.exit.snapshot.outer.slots == {1: trace.entry_slots[1]}
    assert [repr(v) for v in add.exit.snapshot.outer.stack][0] == "v1" and add.exit.snapshot.outer.stack[1].const == 1
    assert trace.uops[0].line == 0 and trace.uops[1].line == 2
    assert trace.end_snapshot.outer.slots == {0: trace.entry_slots[0], 1: add.out}
    assert trace.written == {1}
    assert trace.next_value > 3 and add.args[1].id >= 4  # constants get ids of their own


def test_operands_read_into_their_types():
    text = """
    uops of t:
      _LOAD_SLOT (target=1, operand=0 (x)) -> v0:float
      _GUARD_GLOBAL (target=1, operand=range is <type range>, exit=0)
      _GUARD_GLOBAL (target=2, operand=range is <type range>, exit=1)
      _GUARD_MODULE_ATTR (target=2, operand=os.path.sep is '/', exit=2)
      _GUARD_SLOT_KIND (target=2, operand=0 (x) is float, exit=3)
      _CALL_TREE (target=3, operand=tree tj_inner (loop at line 7))
      _GUARD_TREE_EXIT (target=3, operand=exit 4 of tj_inner, exit=4)
      _CALL_MATH_UNARY (v0, target=4, operand=sqrt, exit=5) -> v1:float
      _CALL_BUILTIN_FLOAT (v0, v1, target=4, operand=math.hypot, exit=6) -> v2:float
      _IS_OP (v1, None, target=5, operand=True) -> v3:bool
      _LOAD_CONST_INLINE (target=5, operand=inf) -> v4:float
      _EXIT_TRACE (target=9, operand=9, exit=7)
    """
    trace = parse_listing(text).trace
    ops = {u.name: u.operand for u in trace.uops}
    first, second = trace.uops[0].operand, trace.uops[1].operand
    assert isinstance(first, GlobalBinding) and first.name == "range" and isinstance(first.value, Shown)
    assert second.value is first.value  # the same text: the same stand-in
    attr = ops["_GUARD_MODULE_ATTR"]
    assert isinstance(attr, ModuleAttr) and attr.module.__name__ == "os.path" and attr.value == "/"
    assert isinstance(ops["_GUARD_SLOT_KIND"], SlotKind) and ops["_GUARD_SLOT_KIND"].kind == Kind.FLOAT
    call, tree_exit = ops["_CALL_TREE"], ops["_GUARD_TREE_EXIT"]
    assert isinstance(call, TreeCall) and isinstance(tree_exit, TreeExit)
    assert call.tree is tree_exit.tree and call.tree.loop.line == 7 and tree_exit.exit == 4
    assert ops["_CALL_BUILTIN_FLOAT"] is math.hypot and ops["_CALL_MATH_UNARY"] == "sqrt"
    assert ops["_IS_OP"] is True and trace.uops[-3].args[1].kind == Kind.NONE
    assert math.isinf(trace.uops[-2].out.const)
    assert trace.end is TraceEnd.EXIT and ops["_EXIT_TRACE"] == 9


def test_hoisted_guards_leave_where_the_trace_starts():
    text = """
    uops of t:
       0 _LOAD_SLOT (target=7, operand=1 (total)) -> v4:int
       1 _GUARD_GLOBAL (target=9, operand=range is <type range>, exit=5)   # line 5 (hoisted to the entry)
       2 _JUMP_TO_TOP (target=6)                                           # line 4
    """
    trace = parse_listing(text).trace
    (hoisted,) = trace.hoisted
    assert hoisted.exit.snapshot.pc == 7 and hoisted.exit.snapshot.outer.slots == trace.entry_slots
    assert hoisted.exit.when_hot is WhenHot.INVALIDATE


def test_a_side_trace_title():
    (golden,) = [p for p in LISTINGS if p.stem == "while_branch"]
    root, side = parse_dump(golden.read_text())
    assert root.trace.kind is TraceKind.ROOT and root.parent is None
    assert side.trace.kind is TraceKind.SIDE and (side.parent.id, side.parent.line) == (4, 7)
    assert side.trace.end is TraceEnd.TREE and side.trace.end_tree.symbol == root.symbol
    assert side.trace.loop.line == 6
    assert [v.kind for v in side.trace.start_stack] == [Kind.BOOL]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("uops of t:\n _BINARY_OP_ADD_INT (v1, 1, target=0, exit=0) -> v2:int", "v1 is used before it is defined"),
        ("uops of t:\n _NO_SUCH_UOP (target=0)", "no uop _NO_SUCH_UOP"),
        ("uops of t:\n _LOAD_SLOT (target=0, operand=0 (a)) -> v0:int\n _GUARD_NONZERO_INT (v0)", "needs exit="),
        (
            "uops of t:\n _LOAD_SLOT (target=0, operand=0 (a)) -> v0:int\n _TO_BOOL_INT (v0, exit=1) -> v1:bool",
            "not a guard",
        ),
        ("uops of t:\n _LOAD_SLOT (target=0, operand=0 (a)) -> v0:int\n _TO_BOOL_INT (v0)", "has output"),
        (
            "uops of t:\n _LOAD_SLOT (target=0, operand=0 (a)) -> v0:int\n _LOAD_SLOT (operand=1 (b)) -> v0:int",
            "defined twice",
        ),
        (
            "uops of t:\n _LOAD_SLOT (target=0, operand=0 (a)) -> v0:int\n _LOAD_SLOT (operand=0 (b)) -> v1:int",
            "is named a",
        ),
        ("uops of t:\n _GUARD_SLOT_KIND (target=0, operand=c is int, exit=0)", "no slot named 'c'"),
        ("uops of t:\n _GUARD_SLOT_KIND (target=0, operand=0 (c) is integer, exit=0)", "no kind 'integer'"),
        ("uops of t:\n _COMPARE_OP_INT (1, 2, operand=<>) -> v0:bool", "no comparison '<>'"),
        ("uops of t:\n _CALL_MATH_UNARY (1.0, exit=0) -> v0:float", "needs an operand"),
        ("uops of t:\n _JUMP_TO_TOP (target=0, operand=3)", "takes no operand"),
        ("uops of t:\n _JUMP_TO_TOP (target=0)\n loop-carried: x=v9", "v9 is used before"),
        ("uops of t:\n _EXIT_TRACE (target=0, exit=0)\n loop-carried: ", "does not end with _JUMP_TO_TOP"),
        ("uops of t:\n _CHECK_PERIODIC (target=0, exit=0)\n     exit 1 at 0: {} []", "is not the exit of"),
        ("uops of t:\n _JUMP_TO_TOP (target=0)\n nonsense", "not a line of a uop listing"),
        (
            "# t: root trace of the loop at line 1; entry kinds {a:int} [uops]\nuops of t:\n _JUMP_TO_TOP (target=0)",
            "entry kinds",
        ),
        ("_JUMP_TO_TOP (target=0)", "expected `uops of <symbol>:`"),
    ],
)
def test_what_the_parser_refuses(text, message):
    with pytest.raises(ListingError, match=message):
        parse_dump(text)


def test_errors_name_the_line():
    with pytest.raises(ListingError, match=r"^line 3: "):
        parse_listing("uops of t:\n _JUMP_TO_TOP (target=0)\n bad line")


def test_a_listing_of_one_trace_only():
    (golden,) = [p for p in LISTINGS if p.stem == "while_branch"]
    with pytest.raises(ListingError, match="one trace, found 2"):
        parse_listing(golden.read_text())


def test_every_kind_of_operand_is_written_and_read():
    from jit.listing import OPERAND_TEXT

    assert set(OPERAND_TEXT) == set(Operand) - {Operand.NONE}
