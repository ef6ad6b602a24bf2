"""Each uop is declared once (jit/uops.py) and lowered by exactly one entry of codegen/lower.py's table."""

from codegen.lower import LOWERINGS, check_complete
from jit.uops import UOPS


def test_every_uop_has_a_lowering():
    check_complete()


def test_every_lowering_is_of_a_declared_uop():
    assert set(LOWERINGS) <= set(UOPS), sorted(set(LOWERINGS) - set(UOPS))


def test_guards_are_never_removable_as_dead_code():
    for uop in UOPS.values():
        if uop.is_guard:
            assert not uop.pure, uop.name
