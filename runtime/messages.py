"""CPython's own wording for the errors the interpreter raises itself, read off the running Python so that
tracejit's messages match it on every supported version."""

from __future__ import annotations

from typing import Any


def _unbound_local_template() -> str:
    def probe() -> None:
        del tracejit_probe_variable  # noqa: F821
        tracejit_probe_variable = 1  # noqa: F841

    try:
        probe()
    except UnboundLocalError as exc:
        return str(exc).replace("tracejit_probe_variable", "{name}")
    raise AssertionError("probe did not raise")


def _name_error_template() -> str:
    try:
        eval("tracejit_probe_global", {})
    except NameError as exc:
        return str(exc).replace("tracejit_probe_global", "{name}")
    raise AssertionError("probe did not raise")


def _unbound_in_comprehension() -> tuple[type[NameError], str]:
    """Reading an unbound local of the enclosing function inside a comprehension: NameError about a free
    variable on Python 3.11 (comprehensions are nested functions there), UnboundLocalError from 3.12."""

    def probe() -> None:
        [tracejit_probe_variable for _ in (0,)]  # noqa: F821
        tracejit_probe_variable = 1  # noqa: F841

    try:
        probe()
    except NameError as exc:
        return type(exc), str(exc).replace("tracejit_probe_variable", "{name}")
    raise AssertionError("probe did not raise")


def _unbound_free_template() -> str:
    """Reading a closure's variable whose cell is empty (the enclosing function has not assigned it yet)."""

    def probe() -> None:
        def read() -> Any:
            return tracejit_probe_variable

        read()
        tracejit_probe_variable = 1

    try:
        probe()
    except NameError as exc:
        return str(exc).replace("tracejit_probe_variable", "{name}")
    raise AssertionError("probe did not raise")


UNBOUND_LOCAL = _unbound_local_template()
NAME_ERROR = _name_error_template()
UNBOUND_IN_COMPREHENSION = _unbound_in_comprehension()
UNBOUND_FREE = _unbound_free_template()


def unbound_local(name: str, in_comprehension: bool = False) -> NameError:
    """The error of reading an unbound local; in_comprehension: read from inside a comprehension."""
    if in_comprehension:
        kind, template = UNBOUND_IN_COMPREHENSION
        return kind(template.format(name=name), name=name) if kind is NameError else kind(template.format(name=name))
    return UnboundLocalError(UNBOUND_LOCAL.format(name=name))


def name_error(name: str) -> NameError:
    return NameError(NAME_ERROR.format(name=name), name=name)


def unbound_free(name: str) -> NameError:
    return NameError(UNBOUND_FREE.format(name=name), name=name)
