"""Comparisons: the six rich comparisons, is / is not, in / not in, chained comparisons, exact int/float
comparison, and comparisons returning objects that are not bools."""

import pytest
from helpers import Args
from tier1_check import check_t1

INF = float("inf")
NAN = float("nan")


def note(log, value):
    """Log that an operand was evaluated, and return it."""
    log.append(value)
    return value


def lt(a, b):
    return a < b


def le(a, b):
    return a <= b


def eq(a, b):
    return a == b


def ne(a, b):
    return a != b


def gt(a, b):
    return a > b


def ge(a, b):
    return a >= b


PAIRS = [
    (1, 2),
    (2, 2),
    (2.0, 2),
    (True, 1.0),
    (-0.0, 0.0),
    (2**53 + 1, 2.0**53),
    (2**53, 2.0**53),
    (2**63 - 1, 2.0**63),
    (2**64, 1.8446744073709552e19),
    (10**400, INF),
    (10**400, 1e308),
    (-(10**400), -INF),
    (NAN, NAN),
    (NAN, 1),
    (INF, INF),
    ("abc", "abd"),
    ([1, 2], [1, 2, 0]),
    ((1, NAN), (1, NAN)),
    ({1}, {1, 2}),
    (1, "a"),
    (None, None),
]


@pytest.mark.parametrize("op", [lt, le, eq, ne, gt, ge], ids=lambda f: f.__name__)
@pytest.mark.parametrize("a, b", PAIRS, ids=repr)
def test_compare_matrix(op, a, b):
    check_t1(op, (a, b), (b, a))


def big_vs_float_scan(base, n):
    out = []
    for i in range(n):
        x = base + i
        f = float(x)
        out.append((x == f, x < f, x > f, x <= f, f >= x))
    return out


def big_vs_float_flat(base, n):
    out = []
    for i in range(n):
        x = base + i
        f = float(x)
        out.append(x == f)
        out.append(x < f)
        out.append(x > f)
        out.append(x <= f)
        out.append(f >= x)
        out.append(f != x + 1)
    return out


def test_exact_int_float_comparison_in_loop():
    check_t1(big_vs_float_scan, (2**53 - 3, 8), (2**63 - 3, 8), (-(2**64) - 3, 8), (10**30, 4))
    # without tuples the loop compiles: ints beyond 2**53 are not exactly floats
    check_t1(big_vs_float_flat, (2**53 - 20, 40), (-(2**53) - 20, 40), (2**62, 30), (2**63 - 30, 40), native=True)


# --- identity ------------------------------------------------------------------------------------------

SHARED = [1, 2]


def identity(a, b):
    return a is b, a is not b, a is None, b is not None


@pytest.mark.parametrize(
    "call",
    [Args(None, None), Args(SHARED, SHARED), Args([1], [1]), Args(1, 1), Args(True, 1), Args(None, 0), Args(NAN, NAN)],
    ids=repr,
)
def test_identity(call):
    check_t1(identity, call)


def literal_identity():
    a = 1000
    b = 1000
    c = -1000
    d = -1000
    s = "hello world!"
    t = "hello world!"
    u = (1, 2.5, "x y")
    v = (1, 2.5, "x y")
    return a is b, c is d, s is t, u is v, a is c


def literals_across_iterations(n):
    seen = []
    for i in range(n):
        seen.append(123456789)
    return [x is seen[0] for x in seen]


def test_literal_identity_matches_cpython():
    check_t1(literal_identity, ())
    check_t1(literals_across_iterations, 5, native=True)


def count_none(xs):
    count = 0
    for x in xs:
        if x is None:
            count += 1
        elif x is not False:
            count -= 1
    return count


def test_identity_in_loop():
    check_t1(count_none, [], [None, 0, False, None, ""], [None] * 10, native=True)


# --- membership ------------------------------------------------------------------------------------------


def contains(item, container):
    return item in container, item not in container


MEMBERSHIP = [
    (2, [1, 2, 3]),
    (2.0, [1, 2, 3]),
    (4, (1, 2, 3)),
    ("k", {"k": 1}),
    (1, {"k": 1}),
    ([1], {"k": 1}),
    ([1], {1, 2}),
    ("ell", "hello"),
    ("", "abc"),
    (1, "abc"),
    (5, range(0, 10, 5)),
    (2.0, range(3)),
    (2.5, range(3)),
    (2**70, range(2**69, 2**71)),
    (NAN, [NAN]),
    (5, 3),
    (5, None),
    (b"b", b"abc"),
    (3, frozenset({1, 3})),
]


@pytest.mark.parametrize("item, container", MEMBERSHIP, ids=repr)
def test_membership(item, container):
    check_t1(contains, (item, container))


class ContainsAnything:
    def __contains__(self, item):
        return item  # not a bool: `in` turns it into one


class IterOnly:
    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)


class OldSequence:
    def __getitem__(self, i):
        if i >= 4:
            raise IndexError(i)
        return i * i


class ContainsRaises:
    def __contains__(self, item):
        raise KeyError(item)


@pytest.mark.parametrize(
    "item, container",
    [
        (0, ContainsAnything()),
        ("x", ContainsAnything()),
        (2, IterOnly([1, 2])),
        (3, IterOnly([1, 2])),
        (9, OldSequence()),
        (5, OldSequence()),
        ("k", ContainsRaises()),
    ],
    ids=repr,
)
def test_membership_protocols(item, container):
    check_t1(contains, (item, container))


def count_members(xs, allowed):
    hits = 0
    for x in xs:
        if x in allowed:
            hits += 1
        if x not in allowed and x in "aeiou":
            hits += 100
    return hits


def test_membership_in_loop():
    check_t1(count_members, ("abcdeu", {"a", "b"}), ("hello", ["l", "o"]), ("ab", {"a": 1}), (["a", 1], "abc"))


# --- chained comparisons --------------------------------------------------------------------------------


def chain3(log, a, b, c):
    return note(log, a) < note(log, b) < note(log, c)


def chain4_mixed(log, a, b, c, d):
    return note(log, a) <= note(log, b) == note(log, c) != note(log, d)


def chain_if(log, a, b, c):
    if note(log, a) < note(log, b) <= note(log, c):
        return "yes"
    return "no"


def chain_not_if(log, a, b, c):
    if not note(log, a) < note(log, b) < note(log, c):
        return "not"
    return "is"


def chain_membership(a, b, c):
    return a in b in c, a is b is not c, a == b in c


CHAIN_CALLS = [(1, 2, 3), (1, 3, 2), (3, 2, 1), (2, 2, 2), (1, 2.5, 3), (1, "x", 3), (NAN, 1, 2), (2**64, 2**65, INF)]


@pytest.mark.parametrize("func", [chain3, chain_if, chain_not_if], ids=lambda f: f.__name__)
@pytest.mark.parametrize("abc", CHAIN_CALLS, ids=repr)
def test_chained_side_effects_evaluated_once(func, abc):
    check_t1(func, ([], *abc))


def test_chained_mixed_operators():
    check_t1(chain4_mixed, ([], 1, 2, 2, 3), ([], 1, 2, 2, 2), ([], 3, 2, 2, 3), ([], 1, 2, 3, 4), ([], 1, 1, 1.0, "a"))
    check_t1(chain_membership, ("a", "abc", ["abc"]), ("a", "a", None), (1, [1], [[1]]), (1, 1, [True]), (1, 1, 5))


def chain_in_loop(log, lo, hi, n):
    count = 0
    for i in range(n):
        if lo <= note(log, i * i) < hi:
            count += 1
    while lo < n < hi:
        n -= 1
    return count, n


def chain_in_loop_numeric(lo, hi, n):
    count = 0
    for i in range(n):
        if lo <= i * i < hi:
            count += 1
        if lo < i == hi - i > -1 != i:
            count += 100
    while lo < n < hi:
        n -= 1
    return count, n


def test_chained_in_loops():
    check_t1(chain_in_loop, ([], 10, 50, 12), ([], 0, 2**64, 8), ([], 1.5, 30.5, 10), ([], 5, "a", 3))
    check_t1(chain_in_loop_numeric, (10, 50, 30), (0, 40, 30), (1.5, 30.5, 30), (-5, 2**64, 20), native=True)


# --- comparisons returning objects that are not bools --------------------------------------------------


class Truthy:
    """A comparison result whose truth tests are logged."""

    def __init__(self, value, log):
        self.value = value
        self.log = log

    def __bool__(self):
        self.log.append(("bool", self.value))
        return self.value


class Probe:
    """Compares like its value, logging each comparison, and returns Truthy objects."""

    def __init__(self, value, log):
        self.value = value
        self.log = log

    def __lt__(self, other):
        self.log.append(("lt", self.value, other))
        return Truthy(self.value < other, self.log)

    def __gt__(self, other):
        self.log.append(("gt", self.value, other))
        return Truthy(self.value > other, self.log)

    def __le__(self, other):
        self.log.append(("le", self.value, other))
        return Truthy(self.value <= other, self.log)


class Elementwise:
    def __init__(self, items):
        self.items = items

    def __lt__(self, other):
        return [x < other for x in self.items]

    def __eq__(self, other):
        return "equal?"


def probe_value(p, q):
    return p < 5, p < 5 < q, p <= 3, 1 < p <= 5


def probe_branches(p, q):
    out = []
    if p < 5 < q:
        out.append("chain")
    if p < 5:
        out.append("lt")
    if not p <= 3:
        out.append("gt3")
    if 1 < p < 9 and p < 7:
        out.append("and")
    x = "t" if p < 5 < 10 else "f"
    out.append(x)
    while p < 5 < q:
        break
    return out


@pytest.mark.parametrize("value", [3, 7, 5])
def test_non_bool_results_tested_once(value):
    log = []
    p = Probe(value, log)
    check_t1(probe_value, Args(p, 6), Args(p, Probe(4, log)))
    check_t1(probe_branches, Args(p, 6), Args(p, Probe(4, log)), Args(p, 100))


def elementwise(e, x):
    return e < x, e == x, e != x


def test_elementwise_results():
    check_t1(elementwise, (Elementwise([1, 5, 9]), 5), (Elementwise([]), 0))
