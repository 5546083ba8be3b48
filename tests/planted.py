"""Programs that run gpuvet's real command line with one fault planted (for ``python -c PROGRAM ARGS...``): a crash
inside the checks (exit 4, a bug) and a shipped knowledge-base file that cannot be read (exit 5, a broken install)."""

CRASH = """
import sys
import gpuvet.checks as checks
def crash(*args, **kwargs):
    raise ZeroDivisionError("planted crash")
checks.run_checks = crash
from gpuvet.cli import main
sys.exit(main(sys.argv[1:]))
"""

DAMAGED_KB = """
import sys
import gpuvet.kb.places as places  # where the knowledge base's files are read (raw)
real = places.load_toml
def damaged(path, *args, **kwargs):
    if str(path).endswith("torch.toml"):
        raise ValueError("Invalid value (at line 3, column 9)")
    return real(path, *args, **kwargs)
places.load_toml = damaged
from gpuvet.cli import main
sys.exit(main(sys.argv[1:]))
"""
