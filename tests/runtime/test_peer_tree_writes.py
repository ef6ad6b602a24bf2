"""What an inner loop's trees may change, as an outer trace reads it back after a nested call
(``runtime.trees.Tree.writes_at``), and the symbols traces are linked by (``runtime.registry``).

Both were found by the generated-program test (a wrong result: the outer trace kept ``x`` in a register after
its inner call, although the inner loop had assigned it). The inner loop there has two trees (``n`` a bool or
an int) whose side traces jump into each other: the loop may run in the peer tree, where a side trace assigns
``x``, and come back to end in the tree the outer trace called. Only the called tree's own side traces' writes
were counted as uncertain."""

from __future__ import annotations

from helpers import check, define

import jit as jit_module

SOURCE = """
LIMIT = -1
SCALE = 1e-300


def f(a, b, x, y, data):
    n = a
    m = a
    s = float(9223372036854775807)
    t = x
    i = j = k = 0
    acc = []
    w0 = 0
    while w0 < 27:
        w0 += 3
        b ^= len(acc)
        x *= 2
        w1 = a % 26
        while w1 < 28 and x:
            w1 += 1
            m, a, b = a, b, m
            if not x:
                return (a,)
            t = ((x * 2) * 2) / (((0.5 / x) + 0.5) or 1)
            if (9007199254740993.0 < s < t) or ((LIMIT != data[-1 - w1 % len(data)] >= 65537) or (y > 255 > (-math.inf) == data[k % len(data)]) or (x == n)):
                n >>= 27
                if (x < 2.5) and (data[65537 % len(data)] < w0 > s < x) and ((acc[-1] if acc else 0.5) < len(acc)):
                    a *= 3
                    if (data[-1 - n % len(data)] == (len(data) % (j or -7))) is not True:
                        return (w0,)
                elif (3 >> 50) > y:
                    b = (math.ceil(abs(y) ** 0.5)) % 1000003
                    if (s == s == 0.0 > data[(-9223372036854775808) % len(data)]) and (x > len(data)) and 1e16:
                        return (n, t, w1, y)
                x = t = (LIMIT / (-2.5)) % 97
            elif data[0]:
                s = (float(1.0)) % 1000003
                n = (SCALE >= n) | (3.25 != s)
    return (a, b, n, m, i, j, k, x, y, s, t, acc)
"""

CALLS = [
    (-6102, 2692, -2.7521171698767965e-52, -5.239708356314411e129, [42.29804797147912]),
    (-664, -40988, -17.0, -26.0, [2.539879794055068e-41, 1e16]),
    (-3, -3043150, 87.4660175284263, 1.401298464324817e-45, [100591854, 22.0, -9, -6.176830970609951e16, -75604, 1]),
]


def test_a_variable_a_peer_trees_side_trace_assigns_is_read_back_after_the_call():
    jitted = check(define(SOURCE, "f"), *CALLS, native=True)
    trees = jit_module.stats(jitted)["trees"]
    inner = {t["symbol"] for t in trees if t["loop_line"] == 18 + 1}  # (the source's leading newline)
    assert len(inner) == 2, trees  # (the case needs the two peer trees of the inner loop)


def test_every_compiled_trace_has_a_symbol_of_its_own():
    """A trace's symbol was numbered by the count of traces held, which goes down when a tree is invalidated:
    a later trace got the symbol of one still linked (two side traces named alike in this very program), and
    calls and jumps are linked by symbol."""
    jitted = jit_module.jit(threshold=2, side_exit_threshold=2, interpreter=True)(define(SOURCE, "f"))
    seen: dict[str, set[tuple]] = {}
    for call in (*CALLS, *CALLS):
        jitted(*call)
        for tree in jit_module.stats(jitted)["trees"]:
            for trace in tree["traces"]:
                exits = tuple(e["line"] for e in trace["exits"])
                seen.setdefault(trace["symbol"], set()).add((trace["kind"], trace["uops"], exits))
    assert jit_module.stats(jitted)["invalidated_trees"] >= 1  # (the case needs a tree freed, then new traces)
    assert all(len(traces) == 1 for traces in seen.values()), {s: t for s, t in seen.items() if len(t) > 1}
