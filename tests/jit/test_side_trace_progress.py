"""No chain of side traces at a loop header: a trace ending at its header with a state no tree takes asks for a
root tree of its own (``WhenHot.ROOT``) instead of growing side traces that end there again, each the next one's
parent (found on ordinary code: a loop dispatching on the type of list items with isinstance compiled 33 traces,
30 of them empty, and ran 3.4x slower than plain CPython)."""

from helpers import check, define

from jit import stats

DISPATCH = """
def dispatch(n):
    data = [1, 2.5, "x", (1, 2), None, 7, 3.25, "yz"]
    score = 0.0
    for i in range(n):
        v = data[i % len(data)]
        if isinstance(v, int):
            score += v
        elif isinstance(v, float):
            score += v * 2
        elif isinstance(v, str):
            score += len(v)
        else:
            score -= 1
    return score, v
"""


def test_no_chain_of_empty_side_traces_at_the_header() -> None:
    jitted = check(define(DISPATCH, "dispatch"), 0, 3, 9, 400, 2000, native=True)
    for variant in (jitted, jitted.cpython_baseline):
        counted = stats(variant)
        # (the root and one side trace per kind of item at most; the chain had one trace per exit taken)
        assert counted["traces_compiled"] <= 8, counted["traces_compiled"]
