"""TOML loading, kept here for the modules that import it from ``gpuvet.kb.toml``; the code lives in
:mod:`gpuvet.tomlfile` so that reading a TOML file never requires the knowledge-base package."""

from gpuvet.tomlfile import load_toml, loads_toml

__all__ = ["load_toml", "loads_toml"]
