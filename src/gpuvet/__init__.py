"""gpuvet: will my framework run on this GPU server, fast? If not, exactly why and what to change."""

from gpuvet.probe._version import __version__

__all__ = ["__version__"]
