import sys
from pathlib import Path

# tests import their helpers as `helpers`
sys.path.append(str(Path(__file__).parent))  # after the real packages: tests/jit must not shadow jit

# no per-example deadline: the machine that runs the suite may be loaded (a deadline made a property test flaky)
from hypothesis import settings  # noqa: E402

settings.register_profile("tracejit", deadline=None)
settings.load_profile("tracejit")
