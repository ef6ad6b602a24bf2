import sys
from pathlib import Path

# tests import their helpers as `helpers`
sys.path.append(str(Path(__file__).parent))  # after the real packages: tests/jit must not shadow jit
