"""gpuvet: will my framework run on this GPU server, fast? If not, exactly why and what to change."""

__version__ = "0.1.0"
