"""Pass/warn/fail rules as data (``data/thresholds.toml``), each with its source, and the one scoring function."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Any, Dict, List, NamedTuple, Optional

from gpuvet.tomlfile import load_toml

DEFAULT_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "thresholds.toml")


class Rule(NamedTuple):
    """When a measured fraction of the reference passes, warns or fails."""

    metric: str
    pass_at: float  # fraction of the reference at or above which a result passes
    warn_at: float  # at or above this (and below pass_at) it warns; below it fails
    source: str
    estimate: bool = False

    def describe(self) -> str:
        """How the rule reads in a report, e.g. 'pass >= 60 %, warn >= 40 % of reference'."""
        return "pass >= %d %%, warn >= %d %%" % (round(self.pass_at * 100), round(self.warn_at * 100))


class Thresholds(NamedTuple):
    """The rules of thresholds.toml: per metric with their overrides, and the collective, health and sync rules."""

    version: str
    metrics: Dict[str, Rule]
    overrides: List[Dict[str, Any]]
    collective: Dict[str, Any]
    health: Dict[str, Any]
    sync: Dict[str, Any] = {}  # whether ranks work in step (checks.sync); default: one shared dict, never mutated

    def rule(self, metric: str, gpu_name: Optional[str] = None) -> Optional[Rule]:
        """The rule for a metric, a per-GPU override first (pattern matched against the nvidia-smi name)."""
        if gpu_name:
            for override in self.overrides:
                if override["metric"] == metric and re.search(override["gpu_pattern"], gpu_name):
                    return Rule(
                        metric,
                        float(override["pass_at"]),
                        float(override["warn_at"]),
                        override["source"],
                        bool(override.get("estimate", False)),
                    )
        return self.metrics.get(metric)


def status_for(fraction: Optional[float], rule: Optional[Rule]) -> Optional[str]:
    """pass / warn / fail for a fraction of the reference; None when there is nothing to compare."""
    if fraction is None or rule is None:
        return None
    if fraction >= rule.pass_at:
        return "pass"
    if fraction >= rule.warn_at:
        return "warn"
    return "fail"


def parse_thresholds(document: Dict[str, Any]) -> Thresholds:
    metrics = {}
    for name, spec in document.get("metric", {}).items():
        if not spec.get("source"):
            raise ValueError("threshold %r has no source" % name)
        if not 0 <= float(spec["warn_at"]) <= float(spec["pass_at"]):
            raise ValueError("threshold %r: need 0 <= warn_at <= pass_at" % name)
        metrics[name] = Rule(name, float(spec["pass_at"]), float(spec["warn_at"]), spec["source"],
                             bool(spec.get("estimate", False)))
    overrides = list(document.get("override", []))
    for override in overrides:
        if not override.get("source"):
            raise ValueError("override for %r has no source" % override.get("metric"))
        re.compile(override["gpu_pattern"])
    return Thresholds(
        version=str(document.get("version", "")),
        metrics=metrics,
        overrides=overrides,
        collective=dict(document.get("collective", {})),
        health=dict(document.get("health", {})),
        sync=dict(document.get("sync", {})),
    )


@lru_cache(maxsize=4)
def load_thresholds(path: Optional[str] = None) -> Thresholds:
    return parse_thresholds(load_toml(path or DEFAULT_PATH))
