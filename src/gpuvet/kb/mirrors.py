"""Network endpoints and their public mirrors (``kb/data/mirrors.toml``), and install sizes (``install_sizes.toml``).

Read through :meth:`gpuvet.kb.KnowledgeBase.mirrors` (or the functions here): plain frozen records, no I/O beyond
reading the shipped data once.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Dict, Mapping, NamedTuple, Optional, Tuple

from gpuvet.kb import loader


class Endpoint(NamedTuple):
    """A network endpoint a setup reaches (a pip index, a conda channel, a model hub, a registry) and its source."""

    id: str
    kind: str  # pip-index | conda-channel | wheel-index | model-hub | git | registry
    url: str
    source: str
    family: str = ""  # what it serves (an upstream); a mirror names the family it mirrors in mirror_of
    mirror_of: str = ""
    default: bool = False  # tested by `gpuvet net` unless --no-defaults
    env: str = ""  # the environment variable that overrides it (HF_ENDPOINT)
    default_channels: Tuple[str, ...] = ()  # conda mirrors: the .condarc default_channels
    custom_channels: str = ""  # conda mirrors: the base URL for conda-forge, pytorch ... in .condarc


class Mirrors(NamedTuple):
    """The endpoints, their public mirrors and what counts as slow."""

    endpoints: Tuple[Endpoint, ...]
    slow_latency_ms: float
    slow_mbps: float
    verdict_source: str

    def mirrors_of(self, family: str) -> Tuple[Endpoint, ...]:
        return tuple(e for e in self.endpoints if e.mirror_of == family)

    def defaults(self) -> Tuple[Endpoint, ...]:
        return tuple(e for e in self.endpoints if e.default)

    def by_id(self, endpoint_id: str) -> Optional[Endpoint]:
        return next((e for e in self.endpoints if e.id == endpoint_id), None)


def _source(record: Mapping[str, Any]) -> str:
    return "; ".join(loader.sources_of(record.get("source")))


@lru_cache(maxsize=1)
def mirrors() -> Mirrors:
    data = loader.raw(loader.data_path("mirrors.toml"))
    endpoints = tuple(
        Endpoint(id=str(r["id"]), kind=str(r["kind"]), url=str(r["url"]), source=_source(r),
                 family=str(r.get("family") or ""), mirror_of=str(r.get("mirror_of") or ""),
                 default=bool(r.get("default", False)), env=str(r.get("env") or ""),
                 default_channels=tuple(r.get("default_channels", ())), custom_channels=str(r.get("custom_channels") or ""))
        for r in data.get("endpoint", ())
    )
    verdict = data.get("verdict", {})
    return Mirrors(endpoints, float(verdict.get("slow_latency_ms", 300.0)), float(verdict.get("slow_mbps", 8.0)),
                   _source(verdict))


class InstallSize(NamedTuple):
    """What installing a framework build downloads and takes on disk."""

    framework: str
    build: str  # cuda | cpu
    download_gb: float
    installed_gb: float
    source: str
    estimate: bool


@lru_cache(maxsize=1)
def _sizes() -> Dict[Tuple[str, str], InstallSize]:
    data = loader.raw(loader.data_path("install_sizes.toml"))
    return {(str(r["framework"]), str(r["build"])): InstallSize(
        str(r["framework"]), str(r["build"]), float(r["download_gb"]), float(r["installed_gb"]), _source(r),
        bool(r.get("estimate", False))) for r in data.get("size", ())}


def install_size(framework: str, build: str = "cuda") -> Optional[InstallSize]:
    """Download and unpacked size of a framework's install (its CUDA or CPU build), or None when not recorded."""
    return _sizes().get((loader.normalize_name(framework), build))
