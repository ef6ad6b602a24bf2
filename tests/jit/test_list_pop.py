"""`lst.pop()` of an exact list runs natively (``_LIST_POP``: no barrier, the item's reference goes to the trace),
typed at the next instruction; in an inlined method (`return self.items.pop()`) it is the call's one change
(``jit.inline.ONE_EFFECT``), its item typed where the caller goes on. An empty list leaves before anything
changed: the interpreter raises CPython's IndexError. Every result and reference count is CPython's."""

from __future__ import annotations

import sys

from helpers import check, define

import jit as jit_module
from jit import jit

SOURCE = """
class Stack:
    def __init__(self):
        self.items = []

    def push(self, v):
        self.items.append(v)

    def pop(self):
        return self.items.pop()

    def drop(self):
        self.items.pop()

def rpn(n):
    t = 0
    for i in range(n):
        st = Stack()
        st.push(i)
        st.push(i % 7 + 1)
        b = st.pop()
        a = st.pop()
        st.push(a * b - (a // b))
        t += st.pop()
    return t

def drain(items, n):
    t = 0
    for i in range(n):
        items.append(i)
        items.append(float(i))
        t += items.pop() + items.pop()
    return t, len(items)

def pops_past_the_end(items, n):
    t = 0
    for i in range(n):
        t += items.pop()
    return t

def peek_then_pop(stack, n):
    t = 0
    for i in range(n):
        stack.append((i, str(i)))
        top = stack[-1]
        stack.pop()
        t += top[0] + len(top[1])
    return t

def peek_then_drop(n):
    s = Stack()
    t = 0
    for i in range(n):
        s.push((i, str(i)))
        top = s.items[-1]
        s.drop()
        t += top[0] + len(top[1])
    return t

def objects(items, n):
    out = []
    for i in range(n):
        items.append((i, str(i)))
        out.append(items.pop()[1])
    return out[-3:], len(items)
"""


def program(name: str):
    return define(SOURCE, name, {})


def test_a_stack_made_and_popped_in_a_loop():
    jitted = check(program("rpn"), (3000,), (5,), native=True)
    uops = jit_module.dump(jitted, "uops")
    assert "_LIST_POP" in uops and "_CALL_METHOD_DESCRIPTOR" not in uops, uops
    assert "Stack.pop" in jit_module.explain(jitted).split("inlined")[0], jit_module.explain(jitted)


def test_pops_of_a_list_argument():
    check(program("drain"), ([1, 2], 3000), ([], 4), native=True)


def test_popping_an_empty_list_raises_cpythons_index_error():
    check(program("pops_past_the_end"), (list(range(3000)), 3001), (list(range(50)), 60), native=True)


def test_popped_objects_keep_their_counts():
    jitted = check(program("objects"), ([], 3000), native=True)
    g = jit(program("objects"))
    first = ("x", "y")
    keep = [first]
    for _ in range(3):
        g(keep, 2000)
    held = sys.getrefcount(first)
    for _ in range(3):
        assert g(keep, 2000)[1] == 1
    assert sys.getrefcount(first) == held  # (a name: pytest's rewritten assert keeps no temporary of it)
    assert "_LIST_POP" in jit_module.dump(jitted, "uops")


BORROWED_SCRIPT = """
import sys
sys.path.append({tests!r})  # (after the project: tests/jit is not jit)
from helpers import check, define
import jit
SOURCE = {source!r}
check(define(SOURCE, "peek_then_pop", {{}}), ([], 3000), native=True)
jitted = check(define(SOURCE, "peek_then_drop", {{}}), (3000,), native=True)
assert "_LIST_POP" in jit.dump(jitted, "uops")
print("done", flush=True)
"""


def test_an_item_read_before_the_pop_stays_alive():
    """The pop's item is the trace's, released after its last use: a pointer read out of the list before it, in
    this frame or an inlined call's caller, gets a reference of its own first (``keep_alive_everywhere``). A
    subprocess with glibc's allocator filling freed memory, so that a use after free crashes every time."""
    import os
    import subprocess
    from pathlib import Path

    script = BORROWED_SCRIPT.format(tests=str(Path(__file__).resolve().parents[1]), source=SOURCE)
    env = {**os.environ, "PYTHONMALLOC": "malloc", "MALLOC_PERTURB_": "85", "PYTHONHASHSEED": "0"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr[-3000:])
    assert done.stdout.split("\n")[-2] == "done", done.stdout
