"""Testing one optimizer pass: a trace in, as listing text, and the trace expected out, as listing text.

Both sides go through the listing's parser and formatter, so a test writes only what matters to it (no
indices, no column alignment, `target=` and `# line` where they matter) and compares canonical text.
"""

from collections.abc import Callable

from jit.listing import format_listing, parse_listing
from jit.trace import Trace

Pass = Callable[[Trace], None]


def canonical(text: str, *, snapshots: bool = False) -> str:
    return format_listing(parse_listing(text), snapshots=snapshots)


def after(run: Pass, text: str, *, snapshots: bool = False) -> str:
    """The listing of the trace `text` after the pass `run`."""
    listing = parse_listing(text)
    run(listing.trace)
    return format_listing(listing, snapshots=snapshots)


def assert_pass(run: Pass, before: str, expected: str, *, snapshots: bool = False) -> None:
    got = after(run, before, snapshots=snapshots)
    want = canonical(expected, snapshots=snapshots)
    assert got == want, f"the pass gave:\n{got}\nexpected:\n{want}"


def assert_unchanged(run: Pass, text: str, *, snapshots: bool = False) -> None:
    assert_pass(run, text, text, snapshots=snapshots)
