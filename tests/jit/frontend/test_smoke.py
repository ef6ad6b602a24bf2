from helpers import Args, check


def nested_loops(n):
    total = 0
    for i in range(n):
        for j in range(i):
            total += (i ^ j) & 7
    return total


def test_nested_loops():
    check(nested_loops, 0, 1, 10, 50, native=True)


def kw(a, b=2, *, c=3):
    return a * b + c


def test_keywords():
    check(kw, 1, (1, 5), Args(1, c=7), Args(a=2, b=3, c=4), Args(), Args(1, 2, 3))
