import os
import sys
from pathlib import Path

# the suite records loops as soon as their threshold says (no warm-up: jit.options' warmup, whose own tests pass it
# explicitly), so that a few hundred iterations reach native code; subprocesses the tests start inherit it. A value
# set outside wins (TRACEJIT_WARMUP=3000 runs the program generator's differential tests through warm-ups)
os.environ.setdefault("TRACEJIT_WARMUP", "0")

# tests import their helpers as `helpers`
sys.path.append(str(Path(__file__).parent))  # after the real packages: tests/jit must not shadow jit

# no per-example deadline: the machine that runs the suite may be loaded (a deadline made a property test flaky)
from hypothesis import settings  # noqa: E402

settings.register_profile("tracejit", deadline=None)
settings.load_profile("tracejit")
