"""The tier-1 interpreter: resuming at any pc with any stack, per-loop back-edge counts, and the invariant that
the operand stack is empty at every LOOP_HEADER (checked statically over many compiled functions, and while
running through the interpreter's trace hook)."""

import copy
import functools
import importlib
import inspect
import pkgutil
import traceback
import types

import pytest
from helpers import define

from jit import jit
from jit.api import state_of
from jit.frontend import Unsupported, compile_to_tier1
from jit.frontend import instructions as I
from runtime.errors import clean_traceback
from runtime.frame import UNBOUND, Frame
from runtime.interpreter import run

# interpret only: back-edge counts and resumed frames are then the interpreter's alone
INTERPRET = {"threshold": 0, "interpreter": True}


def prepared(func):
    jitted = jit(func, **INTERPRET)
    state = state_of(jitted)
    state.ensure_prepared()
    assert state.mode == "tier1", jit.explain(jitted)
    return jitted, state


def make_frame(state, *args, stack=()):
    code = state.code
    slots = list(args) + [UNBOUND] * (code.nslots - len(args))
    frame = Frame(state, code, slots)
    frame.stack.extend(stack)
    return frame


def pcs_of(code, op, predicate=lambda arg: True):
    return [pc for pc, (o, a) in enumerate(zip(code.ops, code.args)) if o == op and predicate(a)]


def slot(code, name):
    return code.slot_names.index(name)


# --- resuming at an arbitrary pc ----------------------------------------------------------------------------


def arith(a, b):
    return a + b * 2


def summing(n):
    total = 0
    for i in range(n):
        total += i
    return total


def iterating(items):
    total = 0
    for x in items:
        total = total * 10 + x
    return total


def countdown(n):
    steps = 0
    while n > 0:
        n -= 1
        steps += 1
    return steps


def divide(a, b):
    c = a + 1
    return c / b


def comprehension_with_pending(xs, n):
    return xs + [i * i for i in range(n)]


def test_resume_at_pc_zero_is_a_call():
    _, state = prepared(summing)
    assert run(make_frame(state, 12), 0) == summing(12)


def test_resume_before_binary_op_with_given_stack():
    _, state = prepared(arith)
    code = state.code
    [mul] = pcs_of(code, I.BINARY_OP, lambda op: op.symbol == "*")
    # at the multiplication the stack holds a, b and the constant 2: supply our own three values
    assert run(make_frame(state, 1, 1, stack=[10, 3, 4]), mul) == 10 + 12
    [add] = pcs_of(code, I.BINARY_OP, lambda op: op.symbol == "+")
    assert run(make_frame(state, 1, 1, stack=["x", "y"]), add) == "xy"


def test_resume_at_range_loop_header_with_hidden_slots():
    _, state = prepared(summing)
    code = state.code
    [loop] = code.loops
    base = loop.hidden[0]
    frame = make_frame(state, 10)
    frame.slots[slot(code, "total")] = 100
    frame.slots[base : base + 4] = [5, 10, 1, None]  # cur, stop, step, (no iterator)
    assert run(frame, loop.header_pc) == 100 + 5 + 6 + 7 + 8 + 9
    assert frame.slots[base : base + 4] == [UNBOUND] * 4  # emptied when the loop ended


def test_resume_at_range_loop_with_big_and_negative_step():
    _, state = prepared(summing)
    code = state.code
    [loop] = code.loops
    base = loop.hidden[0]
    frame = make_frame(state, 0)
    frame.slots[slot(code, "total")] = 0
    frame.slots[base : base + 4] = [2**64, 2**64 - 30, -10, None]
    assert run(frame, loop.header_pc) == 2**64 + (2**64 - 10) + (2**64 - 20)


def test_resume_at_iter_loop_with_own_iterator():
    _, state = prepared(iterating)
    code = state.code
    [loop] = code.loops
    frame = make_frame(state, [9, 9, 9])
    frame.slots[slot(code, "total")] = 4
    # hidden slots of a for loop: (sequence, index) for a list or tuple, else (None, None, iterator)
    frame.slots[loop.hidden[0]] = frame.slots[loop.hidden[1]] = None
    frame.slots[loop.hidden[2]] = iter([5, 6])
    assert run(frame, loop.header_pc) == 456


def test_resume_at_iter_loop_over_a_list_by_index():
    _, state = prepared(iterating)
    code = state.code
    [loop] = code.loops
    frame = make_frame(state, [9, 9, 9])
    frame.slots[slot(code, "total")] = 4
    frame.slots[loop.hidden[0]] = [7, 5, 6]
    frame.slots[loop.hidden[1]] = 1  # the first item was already taken
    frame.slots[loop.hidden[2]] = None
    assert run(frame, loop.header_pc) == 456


def test_resume_at_while_header():
    _, state = prepared(countdown)
    code = state.code
    [loop] = code.loops
    frame = make_frame(state, 3)
    frame.slots[slot(code, "steps")] = 40
    assert run(frame, loop.header_pc) == 43


def test_resume_at_loop_exit():
    _, state = prepared(summing)
    code = state.code
    [loop] = code.loops
    frame = make_frame(state, 10)
    frame.slots[slot(code, "total")] = "done"
    assert run(frame, loop.exit_pc) == "done"


def test_resume_at_every_pc_of_straight_line_code():
    # replaying from each pc the exact stack and slots an uninterrupted run had there gives the same result
    _, state = prepared(arith)
    code = state.code
    snapshots = []

    class Recorder:
        def __call__(self, frame, pc):
            snapshots.append((pc, list(frame.slots), list(frame.stack)))

        def abort(self, why):
            raise AssertionError(why)

    frame = make_frame(state, 3, 4)
    frame.trace_hook = Recorder()
    assert run(frame) == 11
    assert len(snapshots) == len(code.ops) - 2  # all but the implicit `return None`
    for pc, slots, stack in snapshots:
        resumed = Frame(state, code, list(slots))
        resumed.stack.extend(stack)
        assert run(resumed, pc) == 11, pc


def test_resume_in_comprehension_with_spilled_operand():
    _, state = prepared(comprehension_with_pending)
    code = state.code
    [loop] = code.loops
    spill = [i for i, name in enumerate(code.slot_names) if name.startswith(".spill")]
    acc = [i for i, name in enumerate(code.slot_names) if name.endswith("comp")]
    assert len(spill) == 1 and len(acc) == 1
    frame = make_frame(state, [7], 5)
    frame.slots[spill[0]] = ["pending"]
    frame.slots[acc[0]] = ["partial"]
    base = loop.hidden[0]
    frame.slots[base : base + 4] = [3, 5, 1, None]
    assert run(frame, loop.header_pc) == ["pending", "partial", 9, 16]


def test_resume_then_raise_points_at_user_line():
    _, state = prepared(divide)
    code = state.code
    [div] = pcs_of(code, I.BINARY_OP, lambda op: op.symbol == "/")
    with pytest.raises(ZeroDivisionError) as info:
        run(make_frame(state, 1, 1, stack=[1, 0]), div)
    clean_traceback(info.value)  # what the generated wrapper does
    last = traceback.extract_tb(info.value.__traceback__)[-1]
    assert last.name == "divide"
    assert last.lineno == divide.__code__.co_firstlineno + 2
    assert last.line == "return c / b"


def test_unbound_local_when_resumed_with_empty_slot():
    _, state = prepared(divide)
    code = state.code
    load_c = pcs_of(code, I.LOAD_FAST, lambda s: s == slot(code, "c"))[0]
    with pytest.raises(UnboundLocalError, match="'c'"):
        run(make_frame(state, 1, 2), load_c)


# --- back-edge counts ---------------------------------------------------------------------------------------


def nested_counts(n, m):
    t = 0
    for i in range(n):
        for j in range(m):
            t += 1
    return t


def with_continue_and_break(n):
    t = 0
    for i in range(n):
        if i % 2:
            continue  # a back-edge
        if i >= 10:
            break  # not a back-edge
        t += i
    return t


def while_and_comprehension(n):
    k = 0
    while k < n:
        k += 1
    return [i for i in range(n) if i % 2], k


def three_loops(n):
    t = 0
    for i in range(n):
        for j in range(i):
            for k in range(j):
                t += 1
    for x in [1, 2, 3]:
        t += x
    return t


def loop_never_runs(n):
    for i in range(0):
        n += i
    return n


@pytest.mark.parametrize(
    "func, args, expected",
    [
        (summing, (12,), [12]),
        (summing, (0,), [0]),
        (nested_counts, (3, 4), [3, 12]),
        (nested_counts, (5, 0), [5, 0]),
        (with_continue_and_break, (100,), [10]),  # i = 0..9 each take one back-edge; i = 10 breaks
        (with_continue_and_break, (7,), [7]),
        (while_and_comprehension, (11,), [11, 11]),
        (countdown, (12,), [12]),
        (three_loops, (6,), [6, 15, 20, 3]),
        (iterating, ([1, 2, 3],), [3]),
        (loop_never_runs, (5,), [0]),
    ],
    ids=lambda v: getattr(v, "__name__", repr(v)),
)
def test_backedge_counts_per_loop(func, args, expected):
    jitted, state = prepared(func)
    assert state.backedge_counts == [0] * len(expected)
    assert jitted(*args) == func(*args)
    assert state.backedge_counts == expected
    assert jitted(*args) == func(*args)
    assert state.backedge_counts == [2 * c for c in expected]  # they add up over calls


def test_loops_are_numbered_in_source_order():
    _, state = prepared(three_loops)
    loops = state.code.loops
    assert [loop.index for loop in loops] == [0, 1, 2, 3]
    assert [loop.depth for loop in loops] == [0, 1, 2, 0]
    assert [loop.parent for loop in loops] == [None, 0, 1, None]
    assert [loop.kind for loop in loops] == ["range", "range", "range", "iter"]
    first = three_loops.__code__.co_firstlineno
    assert [loop.line for loop in loops] == [first + 2, first + 3, first + 4, first + 6]


def test_loop_is_hot_called_once_at_threshold():
    jitted, state = prepared(nested_counts)
    hot = []
    state.hot_threshold = 5
    state.loop_is_hot = hot.append
    jitted(3, 4)
    assert hot == [1]  # the inner loop takes 12 back-edges, the outer 3
    jitted(3, 4)
    assert hot == [1, 0]  # the outer reaches 5 on the second call; the inner passed 5 already


def test_backedge_counts_shared_between_direct_runs():
    _, state = prepared(summing)
    run(make_frame(state, 7))
    run(make_frame(state, 3))
    assert state.backedge_counts == [10]


# --- empty operand stack at loop headers --------------------------------------------------------------------

CORPUS_SOURCE = """
def pending_binop(xs, n, ys):
    return xs + [i for i in range(n)] + ys

def pending_call(f, n):
    return f(n, [i for i in range(n)], -n, key={i: i for i in range(n)})

def pending_nested(n):
    return [n, [[j for j in range(i)] for i in range(n)], {k for k in range(n)}]

def pending_compare(n):
    return 0 < len([i for i in range(n)]) < 10

def pending_boolop(n):
    return n and [i for i in range(n)] or [j for j in range(3)]

def pending_subscript(d, n):
    return d["k"][len([i for i in range(n)])]

def pending_fstring(n):
    return f"{n}: {[i for i in range(n)]}"

def pending_augassign(d, n):
    d["k"] += [i for i in range(n)]
    return d

def pending_attr_store(o, n):
    o.a, o.b = [i for i in range(n)], [j for j in range(n)]
    return o

def loops_everywhere(n):
    t = 0
    for i in range(n):
        while t < i:
            t += 1
        for x in [i, i]:
            if x:
                continue
            t -= x
        else:
            t += 1
    return t
"""


def _corpus_functions():
    funcs = []
    ns = {}
    define(CORPUS_SOURCE, "loops_everywhere", ns)
    funcs += [v for v in ns.values() if isinstance(v, types.FunctionType)]
    funcs += [v for v in globals().values() if isinstance(v, types.FunctionType) and v.__module__ == __name__]
    # and every module-level function of the front-end tests
    import tests.jit.frontend as frontend_tests

    for info in pkgutil.iter_modules(frontend_tests.__path__):
        module = importlib.import_module(f"tests.jit.frontend.{info.name}")
        for value in vars(module).values():
            if isinstance(value, types.FunctionType) and value.__module__ == module.__name__:
                funcs.append(value)
            elif inspect.isclass(value) and value.__module__ == module.__name__:
                funcs += [v for v in vars(value).values() if isinstance(v, types.FunctionType)]
    return funcs


@functools.lru_cache(maxsize=1)
def compiled_corpus():
    out = []
    for func in _corpus_functions():
        try:
            out.append((func, compile_to_tier1(func)))
        except Unsupported:
            pass
    return out


def stack_depths(code):
    """The operand stack depth before each reachable instruction, by abstract interpretation; asserts that
    every path reaches an instruction with the same depth."""
    depths = {0: 0}
    work = [0]
    while work:
        pc = work.pop()
        depth = depths[pc]
        op, arg = code.ops[pc], code.args[pc]
        successors = []
        if op not in I.TERMINATORS:
            successors.append((pc + 1, depth + I.stack_effect(op, arg)))
        target = I.jump_target(op, arg)
        if target is not None:
            successors.append((target, depth + I.stack_effect(op, arg, jump=True)))
        for nxt, d in successors:
            assert d >= 0, (code.qualname, pc)
            if nxt in depths:
                assert depths[nxt] == d, f"{code.qualname}: depth {depths[nxt]} vs {d} at pc {nxt}"
            else:
                depths[nxt] = d
                work.append(nxt)
    return depths


def test_corpus_is_large():
    assert len(compiled_corpus()) >= 150


def test_stack_empty_at_every_loop_header_statically():
    checked = 0
    for func, code in compiled_corpus():
        depths = stack_depths(code)
        for loop in code.loops:
            assert code.ops[loop.header_pc] == I.LOOP_HEADER
            assert depths.get(loop.header_pc) == 0, f"{func.__qualname__}: loop {loop.index}"
            checked += 1
        for pc, depth in depths.items():
            assert depth <= code.max_stack, func.__qualname__
            if code.ops[pc] == I.RETURN_VALUE:
                assert depth == 1, func.__qualname__
    assert checked >= 150


def test_every_loop_header_is_a_declared_loop():
    for func, code in compiled_corpus():
        headers = {pc for pc, op in enumerate(code.ops) if op == I.LOOP_HEADER}
        assert headers == {loop.header_pc for loop in code.loops}, func.__qualname__
        for pc, (op, arg) in enumerate(zip(code.ops, code.args)):
            if op == I.JUMP_BACKWARD:
                assert code.ops[arg] == I.LOOP_HEADER and arg <= pc, func.__qualname__
                loop = code.loops[code.args[arg]]
                assert loop.contains(pc), func.__qualname__


class StackChecker:
    """A trace hook asserting an empty operand stack whenever a LOOP_HEADER is about to run."""

    def __init__(self):
        self.headers = 0

    def __call__(self, frame, pc):
        if frame.code.ops[pc] == I.LOOP_HEADER:
            assert frame.stack == [], (frame.code.qualname, pc, frame.stack)
            self.headers += 1

    def abort(self, why):
        pass


@pytest.mark.parametrize(
    "source_name, args",
    [
        ("pending_binop", ([1], 12, [2])),
        ("pending_call", (lambda *a, **k: (a, k), 11)),
        ("pending_nested", (6,)),
        ("pending_compare", (12,)),
        ("pending_boolop", (12,)),
        ("pending_subscript", ({"k": list(range(20))}, 12)),
        ("pending_fstring", (11,)),
        ("pending_augassign", ({"k": [0]}, 11)),
        ("pending_attr_store", (types.SimpleNamespace(), 11)),
        ("loops_everywhere", (12,)),
    ],
)
def test_stack_empty_at_loop_headers_while_running(source_name, args):
    ns = {}
    define(CORPUS_SOURCE, source_name, ns)
    func = ns[source_name]
    _, state = prepared(func)
    frame = make_frame(state, *copy.deepcopy(args))
    checker = StackChecker()
    frame.trace_hook = checker
    assert repr(run(frame)) == repr(func(*copy.deepcopy(args)))
    assert checker.headers >= 10


# --- run_loop: one loop at a time, for the CPython baseline ----------------------------------------------------

ONE_LOOP = """
def one_loop(n, stop, give):
    total = 100
    for i in range(n):
        if i == stop:
            break
        if i == give:
            return total
        total += 10 // (i - 7)
    else:
        total = -total
    total += 1
    return total
"""


def loop_ready(own_header=lambda frame, loop, pc: pc + 1):
    from runtime.interpreter import loop_view

    jitted, state = prepared(define(ONE_LOOP, "one_loop"))
    state.loop_views = [loop_view(state.code, state.exec_args, loop) for loop in state.code.loops]
    state.at_own_header = own_header
    return state, state.code.loops[0]


def loop_frame(state, loop, n, stop, give, start):
    """A frame as CPython hands the loop over at its header: its range in the hidden slots."""
    frame = make_frame(state, n, stop, give)
    frame.slots[slot(state.code, "total")] = 100
    base = loop.hidden[0]
    frame.slots[base : base + 4] = [start, n, 1, None]
    return frame


@pytest.mark.parametrize(
    "stop, give, how, value, total",
    [
        (-1, -1, "exhausted", None, 100 + sum(10 // (i - 7) for i in range(2, 5))),
        (3, -1, "break", None, 100 + sum(10 // (i - 7) for i in range(2, 3))),
        (-1, 4, "return", 100 + sum(10 // (i - 7) for i in range(2, 4)), None),
    ],
)
def test_run_loop_stops_where_the_loop_is_left(stop, give, how, value, total):
    from runtime.interpreter import BREAK, EXHAUSTED, RETURN, run_loop

    state, loop = loop_ready()
    frame = loop_frame(state, loop, 5, stop, give, start=2)
    result = run_loop(frame, loop.index, loop.header_pc)
    assert result == ({"exhausted": EXHAUSTED, "break": BREAK, "return": RETURN}[how], value)
    if total is not None:
        # stopped at the loop's exit or break target: nothing after the loop ran (not the else clause either)
        assert frame.slots[slot(state.code, "total")] == total
        assert frame.stack == []


def test_run_loop_from_the_body_start():
    from runtime.interpreter import EXHAUSTED, run_loop

    state, loop = loop_ready()
    frame = loop_frame(state, loop, 5, -1, -1, start=3)
    frame.slots[slot(state.code, "i")] = 2  # CPython fetched 2 and stored it: the body runs for 2, then 3, 4
    assert run_loop(frame, loop.index, loop.body_pc) == (EXHAUSTED, None)
    assert frame.slots[slot(state.code, "total")] == 100 + sum(10 // (i - 7) for i in range(2, 5))


def test_run_loop_gives_the_loop_back_at_its_header():
    from runtime.interpreter import CONTINUE, run_loop

    visits = []

    def own_header(frame, loop, pc):
        visits.append(frame.slots[loop_info.hidden[0]])
        return pc + 1 if len(visits) < 3 else -1

    state, loop_info = loop_ready(own_header)
    frame = loop_frame(state, loop_info, 10, -1, -1, start=0)
    assert run_loop(frame, loop_info.index, loop_info.header_pc) == (CONTINUE, None)
    assert visits == [0, 1, 2]  # asked at every header: the third time it gave the loop back, before item 2
    assert frame.slots[slot(state.code, "total")] == 100 + 10 // -7 + 10 // -6


def test_run_loop_error_pc():
    from runtime.interpreter import run_loop

    state, loop = loop_ready()
    frame = loop_frame(state, loop, 10, -1, -1, start=5)
    with pytest.raises(ZeroDivisionError) as info:
        run_loop(frame, loop.index, loop.header_pc)
    pc = frame.error_pc
    assert I.OPS[state.code.ops[pc]].name == "BINARY_OP" and "//" in str(state.code.args[pc])
    assert frame.slots[slot(state.code, "i")] == 7
    # raise_at adds no frame at the user's line: the loop driver points the user's own frame there instead
    files = {entry.filename for entry in traceback.extract_tb(info.value.__traceback__)}
    assert state.code.filename not in files


LIFETIMES = """
DIED = []


class Mortal:
    def __init__(self, name):
        self.name = name

    def __del__(self):
        DIED.append(self.name)

    def __add__(self, other):
        return 1

    def __format__(self, spec):
        return "m"


class Holder:
    pass


def idem(x, y=None):
    return 0


def f():
    log = []
    t = (1, Mortal("tuple"))
    t = None
    log.append(list(DIED))
    l = [Mortal("list"), 2]
    l = None
    log.append(list(DIED))
    n = idem(Mortal("one argument"))
    log.append(list(DIED))
    n = idem(Mortal("two arguments"), 3)
    log.append(list(DIED))
    n = idem(Mortal("keyword"), y=3)
    log.append(list(DIED))
    h = Holder()
    h.x = Mortal("attribute")
    h.x = None
    log.append(list(DIED))
    d = {}
    d["k"] = Mortal("item")
    d["k"] = None
    log.append(list(DIED))
    m = Mortal("local")
    n = m
    del m
    n = None
    log.append(list(DIED))
    n = Mortal("operand") + 1
    log.append(list(DIED))
    a, b = (Mortal("unpacked"), 1)
    a = None
    log.append(list(DIED))
    s = f"{Mortal('formatted')}"
    log.append(list(DIED))
    return log
"""


def test_an_object_lives_as_long_as_under_cpython():
    """The interpreter keeps no reference of its own after an instruction (a local of its loop holding the last
    operand, argument or item): an object's finalizer runs where CPython's does. (A tuple built, then dropped, kept
    alive until the next tuple was built made a finalizer run one iteration late: a wrong result.)"""
    namespace: dict = {}
    func = define(LIFETIMES, "f", namespace)
    expected = func()
    namespace["DIED"].clear()
    assert jit(func, **INTERPRET)() == expected
