"""The environment variables tracejit reads, all parsed here.

- ``JIT_DISABLE``: a yes/no value (``1``, ``true``, ``yes``, ``on`` / ``0``, ``false``, ``no``, ``off`` or
  empty; any case). Yes makes every ``@jit`` function run as plain CPython. Read when a function is decorated.
- ``JIT_DUMP``: dump kinds (``uops``, ``ir``, ``opt-ir``, ``asm``, ``trees``) separated by commas or spaces, any
  case; every trace is printed to stderr in those forms as it compiles, and the trees after each is installed.
  Read when a function's first loop gets hot.
- ``TRACEJIT_DEBUG``: a yes/no value; yes prints the Python traceback of every internal error that made a
  recording give up (they are otherwise only counted in ``jit.stats(f)["aborts"]``), and keeps tracejit's own
  frames in the tracebacks of exceptions that leave jitted functions.
- ``TRACEJIT_CACHE_DIR``: a directory; ``@jit(cache=True)`` keeps its entries there instead of next to the
  source file (``codegen.cache``). Unset or empty: the default. Read when a cached function first looks an
  entry up.
- ``TRACEJIT_WARMUP``: a non-negative integer, the default of ``@jit(warmup=...)`` (``jit.options``). Read when a
  function is decorated.
- ``TRACEJIT_UPDATE_GOLDEN`` (yes/no) and ``TRACEJIT_FUZZ_EXAMPLES`` (a count) are read by the test suite only.

A value that cannot be understood gives one ``jit.EnvironmentVariableWarning`` naming what is accepted, and is
ignored (a yes/no variable then counts as no). ``import jit`` checks every variable, so a typo shows at once.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import warnings

from jit.errors import EnvironmentVariableWarning

_YES = ("1", "true", "yes", "on")
_NO = ("0", "false", "no", "off", "")


def jit_disabled() -> bool:
    """``JIT_DISABLE``: run every ``@jit`` function as plain CPython."""
    return flag("JIT_DISABLE")


def debug() -> bool:
    """``TRACEJIT_DEBUG``: print the tracebacks of internal errors."""
    # (read at every exception leaving a handed-over loop: unset, the usual case, is seen in one lookup of the
    # mapping os.environ keeps its encoded variables in, where os.environ.get costs 0.6 us, a KeyError raised and
    # caught inside it; os.environ replaced, or not the usual _Environ, goes the ordinary way)
    if os.environ is _ENVIRON and _ENVIRON_DATA is not None and _DEBUG_KEY not in _ENVIRON_DATA:
        return False
    return flag("TRACEJIT_DEBUG")


_ENVIRON = os.environ
_ENVIRON_DATA = getattr(os.environ, "_data", None)
try:
    _DEBUG_KEY = os.environ.encodekey("TRACEJIT_DEBUG")  # type: ignore[attr-defined]
except AttributeError:
    _ENVIRON_DATA = None


def dump_kinds() -> tuple[str, ...]:
    """``JIT_DUMP``: the dump kinds to print as traces compile, in the order given, without duplicates."""
    return _dump_kinds(os.environ.get("JIT_DUMP", ""))


def warmup(default: int) -> int:
    """``TRACEJIT_WARMUP``: the default of the option ``warmup`` (else `default`)."""
    return count("TRACEJIT_WARMUP", default)


def cache_directory() -> str:
    """``TRACEJIT_CACHE_DIR``: where ``@jit(cache=True)`` keeps its entries ("": the default)."""
    return os.environ.get(CACHE_DIRECTORY, "")


CACHE_DIRECTORY = "TRACEJIT_CACHE_DIR"


def user_cache_directory() -> str:
    """The user's cache directory: ``$XDG_CACHE_HOME`` or ``~/.cache`` (``%LOCALAPPDATA%`` on Windows,
    ``~/Library/Caches`` on macOS)."""
    if sys.platform == "win32":
        return os.environ.get("LOCALAPPDATA") or os.path.expanduser("~")
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Caches")
    return os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")


def flag(name: str) -> bool:
    """A yes/no environment variable; unset, empty or not understood (with a warning) is no."""
    return _flag(name, os.environ.get(name, ""))


def count(name: str, default: int) -> int:
    """A non-negative integer environment variable; unset, empty or not understood (with a warning) is default."""
    return _count(name, os.environ.get(name, ""), default)


def check() -> None:
    """Read every variable once, so that a value tracejit does not understand is reported right away."""
    jit_disabled()
    debug()
    warmup(0)
    dump_kinds()


# parsed once per distinct value: a value is reported once, and reading it again costs a dictionary lookup


@functools.cache
def _flag(name: str, value: str) -> bool:
    spelled = value.strip().lower()
    if spelled in _YES:
        return True
    if spelled not in _NO:
        _warn(
            f"tracejit: ignoring {name}={value!r}: expected {', '.join(_YES)} (yes) or "
            f"{', '.join(_NO[:-1])}, empty (no), in any case; {name} counts as no"
        )
    return False


@functools.cache
def _count(name: str, value: str, default: int) -> int:
    spelled = value.strip()
    if not spelled:
        return default
    if spelled.isdigit():
        return int(spelled)
    _warn(f"tracejit: ignoring {name}={value!r}: expected a non-negative integer; using {default}")
    return default


#: what ``jit.dump`` and ``JIT_DUMP`` can show (``jit.dumps`` makes each)
DUMP_KINDS = ("uops", "ir", "opt-ir", "asm", "trees")


@functools.cache
def _dump_kinds(value: str) -> tuple[str, ...]:
    if not value.strip():
        return ()
    kinds: list[str] = []
    unknown: list[str] = []
    for word in re.split(r"[,\s]+", value.strip()):
        if not word:
            continue
        kind = word.lower().replace("_", "-")
        if kind not in DUMP_KINDS:
            unknown.append(word)
        elif kind not in kinds:
            kinds.append(kind)
    if unknown:
        _warn(
            f"tracejit: ignoring unknown JIT_DUMP kind(s) {', '.join(map(repr, unknown))}; "
            f"valid kinds: {', '.join(DUMP_KINDS)} (separated by commas, any case)"
        )
    return tuple(kinds)


def _warn(message: str) -> None:
    warnings.warn(message, EnvironmentVariableWarning, stacklevel=2)
