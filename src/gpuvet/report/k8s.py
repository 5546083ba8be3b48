"""``check --format k8s-labels``: node labels in the style of NVIDIA's GPU Feature Discovery, one ``key=value`` a line
(the file format Node Feature Discovery's local source reads from ``/etc/kubernetes/node-feature-discovery/
features.d/``), so a scheduler can place a job only where its build runs.

Keys are ``gpuvet.io/<name>``; every value is made a valid label value (at most 63 characters of ``A-Za-z0-9._-``,
starting and ending with an alphanumeric: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/
#syntax-and-character-set), and a key whose value would be empty is left out.
"""

from __future__ import annotations

import re
from typing import Any, List, Mapping, Optional

PREFIX = "gpuvet.io/"


def label_value(value: Any) -> Optional[str]:
    """``value`` as a Kubernetes label value, or None when nothing valid is left."""
    text = re.sub(r"[^A-Za-z0-9._-]+", "-", str(value if value is not None else ""))[:63]
    text = re.sub(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "", text)
    return text or None


def _name(text: str) -> Optional[str]:
    """The name part of a key: the same character rules, at most 63 characters."""
    return label_value(text.lower())


def render(document: Mapping[str, Any]) -> str:
    snapshot = document.get("snapshot") or {}
    driver = (snapshot.get("driver") or {})
    gpus = (snapshot.get("gpus") or {}).get("value") or []
    pairs = [("verdict", document.get("verdict")),
             ("kb-version", (document.get("kb") or {}).get("version")),
             ("driver", (driver.get("version") or {}).get("value")),
             ("cuda-max", (driver.get("cuda_max") or {}).get("value")),
             ("gpu-count", len(gpus) if gpus else None)]
    if gpus:
        pairs.append(("gpu-compute-capability", gpus[0].get("compute_capability")))
    machine = document.get("machine") or []
    worst = next((s for s in ("fail", "warn") if any(f.get("severity") == s for f in machine)), "pass")
    pairs.append(("machine", worst))
    for target in document.get("targets") or []:
        name = _name("target." + str(target.get("target")))
        if name:
            pairs.append((name, target.get("verdict")))
    lines: List[str] = []
    for key, value in pairs:
        name, text = _name(key), label_value(value)
        if name and text:
            lines.append(f"{PREFIX}{name}={text}")
    return "\n".join(lines)
