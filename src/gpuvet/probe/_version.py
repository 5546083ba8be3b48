"""The version of gpuvet, kept inside the probe so the shipped folder carries it (the probe reports it)."""

__version__ = "0.1.0"
