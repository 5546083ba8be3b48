"""One exception hierarchy, handled in one place (cli.main): it prints ``error: ...`` and ``hint: ...``."""

import enum


class ExitCode(enum.IntEnum):
    """The exit codes of DESIGN.md §3: scripts depend on them."""

    OK = 0  # no failure (warnings allowed)
    FAILURE = 1  # at least one failing finding
    USAGE = 2  # usage or input error, one clear line on stderr
    UNDECIDED = 3  # a target the knowledge base cannot judge
    INTERNAL = 4  # a bug in gpuvet (an unexpected exception): never a verdict


class GpuvetError(Exception):
    """Base of every error gpuvet reports to a user. ``message`` is one line; ``hint`` says what to do."""

    exit_code = ExitCode.USAGE

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(GpuvetError):
    """The command line does not make sense."""


class InputError(GpuvetError):
    """A file or pasted text that gpuvet cannot read (garbage, truncated, binary, unknown kind)."""


class KnowledgeBaseError(GpuvetError):
    """The shipped knowledge base is broken (a bug, not a user error)."""
