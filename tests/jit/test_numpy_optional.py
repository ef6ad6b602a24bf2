"""tracejit installs and runs without NumPy: with NumPy made unimportable, jitting, compiling and running a loop
works as before, and tracejit never imports NumPy itself (arrays only exist once the program imported it)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent

SCRIPT = r"""
import linecache
import sys


class NoNumpy:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy" or name.startswith("numpy."):
            raise ImportError("numpy is not installed (made unimportable by the test)")
        return None


sys.meta_path.insert(0, NoNumpy())
try:
    import numpy  # noqa: F401
except ImportError:
    pass
else:
    raise SystemExit("numpy is still importable")

import jit
from jit import kinds

source = "def kernel(n):\n    total = 0.0\n    for i in range(n):\n        total += i * 0.5\n    return total\n"
linecache.cache["<no-numpy>"] = (len(source), None, source.splitlines(True), "<no-numpy>")
namespace = {}
exec(compile(source, "<no-numpy>", "exec"), namespace)
f = jit.jit(threshold=2)(namespace["kernel"])
assert f(1000) == namespace["kernel"](1000)
stats = jit.stats(f)
assert stats["native_entries"] >= 1, stats
assert kinds.kind_of(object()) is kinds.Kind.OBJECT
assert "numpy" not in sys.modules
print("ok")
"""

NUMPY_NOT_IMPORTED = textwrap.dedent(
    """
    import sys
    import jit
    from jit import kinds
    kinds.kind_of(object())
    f = jit.jit(threshold=2)(lambda n: n)
    assert "numpy" not in sys.modules
    print("ok")
    """
)


def _run(script: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_tracejit_works_with_numpy_unimportable():
    assert _run(SCRIPT) == "ok"


def test_tracejit_never_imports_numpy_itself():
    assert _run(NUMPY_NOT_IMPORTED) == "ok"
