"""How many generated programs run natively: the figure issue 8 asks to report.

    python tests/native_share.py [N] [--seed S] [--baseline] [--verbose] [--show TEXT]

Draws N programs (default 300) from the test generator (tests/programs.py) with a fixed seed, runs each under
``@jit(threshold=2, side_exit_threshold=2)`` on three argument tuples drawn the same way (each call three times),
and classifies it through ``jit.stats``: loops native with no abort, native with some aborts, no native code
(with the abort messages that stopped it), no loop got hot, or refused by the front end. Results go to stdout,
the abort messages counted by how many programs met them. ``--baseline`` runs the functions as the product does
(CPython runs them and hands hot loop statements to the JIT); the default runs them in the tier-1 interpreter,
where every loop, comprehensions included, is handed to the JIT. Not a test: the figures depend on the
generator, so compare runs of the same checkout of this file.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or ".") != HERE]
import jit  # noqa: E402  (before tests/ joins the path: tests/jit/ would shadow the package)
from jit.aborts import Reason  # noqa: E402

sys.path.append(HERE)

from helpers import define  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import seed as fixed_seed  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from programs import arguments, programs  # noqa: E402


def draw_programs(count: int, seed: int) -> list[tuple[str, str, list[tuple]]]:
    """count (source, name, argument tuples) drawn from the generator, the same ones for the same seed."""
    drawn: list[tuple[str, str, list[tuple]]] = []

    @fixed_seed(seed)
    @settings(max_examples=count, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(program=programs(), calls=st.lists(arguments(), min_size=3, max_size=3))
    def collect(program, calls):
        drawn.append((program.source, program.name, calls))

    collect()
    return drawn[:count]


# aborts that only delay a recording (the loop ended, the function returned, or an exception left the loop, while
# it was being recorded): their templates, parameters matching anything
RETRIED = re.compile(
    "(?:"
    + "|".join(re.sub(r"\\\{\w+(?:!r)?\\\}", ".*", re.escape(reason.template)) for reason in Reason if reason.retry)
    + ")$"
)


def classify(source: str, name: str, calls: list[tuple], interpreter: bool) -> tuple[str, list[str]]:
    """The program's class and the abort messages its loops met."""
    func = define(source, name)
    jitted = jit.jit(threshold=2, side_exit_threshold=2, interpreter=interpreter)(func)
    for args in calls:
        for _ in range(3):
            try:
                jitted(*args)
            except Exception:
                pass
    stats = jit.stats(jitted)
    aborts = [message for message in stats["aborts"] if not RETRIED.search(message)]
    if stats["mode"] != "tier1":
        return "refused by the front end", aborts
    native = stats["traces_compiled"] > 0 and stats["native_entries"] > 0
    if native:
        return ("native, no abort" if not aborts else "native, some loop aborted"), aborts
    return ("no native code: aborted" if aborts else "no loop got hot"), aborts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", nargs="?", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", action="store_true", help="run as the product does (CPython baseline)")
    parser.add_argument("--verbose", action="store_true", help="print each program to stderr before running it")
    parser.add_argument("--show", metavar="TEXT", help="print the programs that met an abort containing TEXT")
    options = parser.parse_args()
    warnings.simplefilter("ignore")
    classes: collections.Counter[str] = collections.Counter()
    messages: collections.Counter[str] = collections.Counter()
    for index, (source, name, calls) in enumerate(draw_programs(options.count, options.seed)):
        if options.verbose:
            print(f"program {index}:\n{source}", file=sys.stderr, flush=True)
        kind, aborts = classify(source, name, calls, interpreter=not options.baseline)
        classes[kind] += 1
        if options.show and any(options.show in message for message in aborts):
            shown = "\n".join(message for message in aborts if options.show in message)
            print(f"program {index} ({kind}):\n{source}{shown}\n", flush=True)
        messages.update({re.sub(r"^.*?, at line \d+: ", "", message) for message in aborts})
    total = sum(classes.values())
    hot = total - classes["no loop got hot"] - classes["refused by the front end"]
    print(f"{total} programs ({'CPython baseline' if options.baseline else 'tier-1 interpreter'})")
    for kind, count in classes.most_common():
        print(f"  {kind:32} {count:5}  {100 * count / total:5.1f}%")
    if hot:
        clean = classes["native, no abort"]
        print(f"of the {hot} whose loops got hot: {clean} ({100 * clean / hot:.1f}%) ran natively with no abort")
    print("abort messages, without their lines (programs that met each; not counted: aborts that only delay a")
    print("recording, when the loop ended, the function returned or an exception left the loop while it was being")
    print("recorded)")
    for message, count in messages.most_common(25):
        print(f"  {count:5}  {message}")


if __name__ == "__main__":
    main()
