"""One exception hierarchy, handled in one place (cli.main): it prints ``error: ...`` and ``hint: ...``."""

import enum


class ExitCode(enum.IntEnum):
    """The exit codes of docs/CONTRACT.md §1-2: scripts depend on them."""

    OK = 0  # no failure (warnings allowed)
    FAILURE = 1  # at least one failing finding
    USAGE = 2  # usage or input error, one clear line on stderr
    UNDECIDED = 3  # a target the knowledge base cannot judge
    INTERNAL = 4  # a bug in gpuvet (an unexpected exception): never a verdict
    BROKEN_INSTALL = 5  # gpuvet's own files (the shipped knowledge base) cannot be read: reinstall, not the user's input


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
    """The shipped knowledge base is broken (a bug or a damaged installation, not a user error): its own exit code,
    so a script does not take it for bad input."""

    exit_code = ExitCode.BROKEN_INSTALL
