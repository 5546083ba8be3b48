"""``docker image inspect IMAGE`` (or ``docker inspect``): what a CUDA image carries, from its ``Config.Env``.

NVIDIA's CUDA images (and every image built on them: NGC framework images, ``pytorch/pytorch``, ``vllm/vllm-openai``)
state their stack as environment variables: ``CUDA_VERSION``, ``NV_CUDNN_VERSION`` / ``CUDNN_VERSION``,
``NCCL_VERSION`` / ``NV_LIBNCCL_PACKAGE_VERSION``, NGC's ``PYTORCH_VERSION`` / ``NVIDIA_PYTORCH_VERSION``, and
``NVIDIA_REQUIRE_CUDA``, the driver condition the NVIDIA container runtime enforces when the container starts
(``cuda>=12.1 brand=tesla,driver>=470,driver<471 ...``; https://github.com/NVIDIA/nvidia-container-toolkit,
"Environment variables (OCI spec)"). The snapshot is the container's software, with no driver and no GPU: merge it
with the host's nvidia-smi (``--from`` both) to check the image against that host.
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional

from gpuvet.ingest.common import input_error, pasted_source, set_fact, shell

KIND = "docker-inspect"

# Variables kept verbatim in the snapshot's env fact (the driver condition and what selects GPUs)
_KEPT = ("NVIDIA_REQUIRE_CUDA", "NVIDIA_DISABLE_REQUIRE", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES",
         "CUDA_VERSION", "NV_CUDNN_VERSION", "CUDNN_VERSION", "NCCL_VERSION", "NV_LIBNCCL_PACKAGE_VERSION",
         "PYTORCH_VERSION", "NVIDIA_PYTORCH_VERSION", "TENSORFLOW_VERSION", "NVIDIA_TENSORFLOW_VERSION",
         "JAX_VERSION", "NVIDIA_BUILD_ID", "PYTHON_VERSION")


def _documents(text: str) -> Optional[List[Dict[str, Any]]]:
    stripped = text.strip()
    if not stripped.startswith(("[", "{")):
        return None
    try:
        document = json.loads(stripped)
    except (ValueError, RecursionError):  # JSON nested past the parser's depth is not an inspect output either
        return None
    items = document if isinstance(document, list) else [document]
    images = [item for item in items if isinstance(item, dict) and isinstance(item.get("Config"), dict)]
    return images or None


def _env(image: Dict[str, Any]) -> Dict[str, str]:
    env: Dict[str, str] = {}
    for entry in image.get("Config", {}).get("Env") or []:
        if isinstance(entry, str) and "=" in entry:
            key, _, value = entry.partition("=")
            env[key] = value
    return env


# One Env entry as the inspect JSON quotes it: pastes are often fragments (the Config part, or `| grep -i nvidia`),
# so the entries are read wherever they stand, and the whole JSON only adds the image's tags and architecture.
_ENTRY = re.compile(r'"([A-Z_][A-Z0-9_]*)=([^"\n]*)"')
_SIGNATURE = re.compile(r'"(?:NVIDIA_REQUIRE_CUDA|CUDA_VERSION)=[^"\n]*"')


def looks_like(text: str) -> bool:
    return _SIGNATURE.search(text) is not None


def blocks(lines: List[str]) -> List[str]:
    """The inspect output inside an issue text: the lines from the first quoted CUDA Env entry to the last one."""
    hits = [i for i, line in enumerate(lines) if _ENTRY.search(line)]
    if not any(_SIGNATURE.search(lines[i]) for i in hits):
        return []
    return ["\n".join(lines[hits[0]:hits[-1] + 1])]


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    source = pasted_source(KIND)
    snapshot = shell(KIND, name)
    images = _documents(text) or []
    image = next((i for i in images if "CUDA_VERSION" in _env(i) or "NVIDIA_REQUIRE_CUDA" in _env(i)), None)
    env = _env(image) if image is not None else {m.group(1): m.group(2) for m in _ENTRY.finditer(text)}
    if "CUDA_VERSION" not in env and "NVIDIA_REQUIRE_CUDA" not in env:
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=KIND, name=name)
    tags = [t for t in (image or {}).get("RepoTags") or [] if isinstance(t, str)]
    kept = {key: env[key] for key in _KEPT if key in env}
    set_fact(snapshot, "env", kept, source, image=tags[0] if tags else None)
    cuda = _version(env.get("CUDA_VERSION"))
    if cuda:
        set_fact(snapshot, "cuda_toolkits", [{"version": cuda, "path": "/usr/local/cuda", "nvcc": None, "on_path": None,
                                              "source": "image Env CUDA_VERSION"}], source)
    cudnn = _version(env.get("NV_CUDNN_VERSION") or env.get("CUDNN_VERSION"))
    if cudnn:
        set_fact(snapshot, "cudnn", [{"version": cudnn, "path": None, "source": source, "package": None}], source)
    nccl = _version(env.get("NCCL_VERSION") or env.get("NV_LIBNCCL_PACKAGE_VERSION"))
    if nccl:
        set_fact(snapshot, "nccl", [{"version": nccl, "path": None, "source": source, "package": None}], source)
    architecture = (image or {}).get("Architecture")
    if architecture in ("amd64", "arm64"):
        set_fact(snapshot, "host.machine", {"amd64": "x86_64", "arm64": "aarch64"}[architecture], source)
    return snapshot


def _version(value: Optional[str]) -> Optional[str]:
    """``12.1.0``, ``8.9.0.131-1+cuda12.1`` (a Debian package version) -> the upstream version, or None."""
    if not value:
        return None
    match = re.match(r"^(\d+(?:\.\d+){1,3})", value.strip())
    return match.group(1) if match else None
