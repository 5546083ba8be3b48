"""Container images known by tag (kb/data/images.toml): what an image reference names, as far as the data knows it.

Pure lookups over the data; whether an image runs on a machine is gpuvet.checks.images' question.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, NamedTuple, Optional, Protocol, Tuple

from gpuvet.kb import versions
from gpuvet.models import IMAGE_PREFIX


class ImageFacts(Protocol):
    """What this module reads from the knowledge base (``gpuvet.kb.KnowledgeBase`` has it), named as a protocol so
    the module does not import the package that imports the data."""

    def images(self) -> Dict[str, Any]: ...


PREFIX = IMAGE_PREFIX
# nvidia/cuda tags: "<X.Y.Z>-<flavor>-<os>" (NVIDIA's doc/supported-tags.md)
_CUDA_TAG = re.compile(r"^(?P<version>\d+\.\d+\.\d+)-(?P<flavor>[a-z0-9]+(?:-[a-z]+)?)-(?P<os>[a-z]+\d+(?:\.\d+)?)$")
# NGC framework containers: "<YY.MM>-<suffix>", the suffixes each release's notes name ("py3", "tf2-py3" ...)
_NGC_TAG = re.compile(r"^(?P<version>\d{2}\.\d{2})-(?P<suffix>[a-z0-9-]+)$")
VLLM = "vllm/vllm-openai"


class Image(NamedTuple):
    """One image tag as the knowledge base describes it."""

    ref: str  # as the user wrote it
    family: str  # "nvidia/cuda" | "nvcr.io/nvidia/pytorch" ...
    tag: str
    cuda: Optional[str]  # the CUDA the image carries, None when the tag is not in the data
    requirement: Optional[str] = None  # NVIDIA_REQUIRE_CUDA
    cuda_compat: bool = False  # carries the forward-compatibility package of its own CUDA
    facts: Tuple[Tuple[str, str], ...] = ()  # what else the data says (cuDNN, NCCL, the framework, Python, driver)
    source: str = ""
    # The GPUs the release's notes say it supports ("GPU Requirements"): the oldest compute capability, the
    # architecture families named, and the sentence as printed; empty where the notes read say nothing
    min_cc: Optional[str] = None
    architectures: Tuple[str, ...] = ()
    gpu_requirement: str = ""


def _repository(ref: str) -> Tuple[str, Optional[str]]:
    """``docker.io/nvidia/cuda:12.4.1-base-ubuntu22.04`` -> (``nvidia/cuda``, ``12.4.1-base-ubuntu22.04``); a digest
    or a missing tag gives None for the tag."""
    name, _, digest = ref.partition("@")
    tag = None
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        name, tag = name.rsplit(":", 1)
    if digest:
        tag = None
    for prefix in ("docker.io/library/", "docker.io/", "index.docker.io/"):
        if name.lower().startswith(prefix):
            name = name[len(prefix):]
    return name.lower(), tag


def family_of(ref: str, kb: ImageFacts) -> Optional[str]:
    """The image family the knowledge base knows this reference by, or None."""
    name, _ = _repository(ref)
    data = kb.images()
    if name in ("nvidia/cuda", "nvcr.io/nvidia/cuda"):
        return "nvidia/cuda"
    if name == data.get("vllm_openai", {}).get("repository"):
        return VLLM
    frameworks = {str(r["framework"]) for r in data.get("ngc", {}).get("release", [])}
    if name.startswith("nvcr.io/nvidia/") and name.rsplit("/", 1)[-1] in frameworks:
        return name
    return None


def describe(ref: str, kb: ImageFacts) -> Optional[Image]:
    """The image a reference names, as far as the data knows it (``cuda`` None: a tag of a known family that the
    data does not list); None for a family gpuvet does not read or a reference without a tag."""
    family = family_of(ref, kb)
    name, tag = _repository(ref)
    if family is None or not tag:
        return None
    data = kb.images()
    if family == "nvidia/cuda":
        found = _CUDA_TAG.match(tag)
        if found:
            os_name, flavor = found.group("os"), found.group("flavor")
            for release in data["nvidia_cuda"]["release"]:
                if release["version"] == found.group("version") and os_name in release["os"] \
                        and flavor in release["flavors"]:
                    clauses = data["nvidia_cuda"]["clauses"][release["clauses"]]
                    requirement = " ".join(p for p in ("cuda>=%d.%d" % (versions.cuda_major_minor(release["version"]) or (0, 0)), clauses) if p)
                    # the Dockerfile the requirement was read from (one OS's; NVIDIA writes every OS's from one
                    # template), not a path made up for this OS
                    return Image(ref, family, tag, release["version"], requirement, bool(release.get("cuda_compat")),
                                 (), str(release["source"]))
        return Image(ref, family, tag, None)
    if family == VLLM:
        return Image(ref, family, tag, None)
    found = _NGC_TAG.match(tag)
    framework = name.rsplit("/", 1)[-1]
    for release in data["ngc"]["release"]:
        if found and release["framework"] == framework and release["version"] == found.group("version") \
                and found.group("suffix") in release.get("tags", ["py3"]):
            names = {"framework_version": framework, "torch": "torch", "tensorrt": "TensorRT", "cudnn": "cuDNN",
                     "nccl": "NCCL", "python": "Python", "driver": "driver"}  # product names, as the image link shows them
            facts = tuple((names[key], str(release[key])) for key in names if release.get(key))
            return Image(ref, family, tag, str(release["cuda"]), None, True, facts, str(release["source"]),
                         release.get("min_cc"), tuple(release.get("gpu_architectures", ())),
                         str(release.get("gpu_requirement", "")))
    return Image(ref, family, tag, None)


def tags(image: Image, kb: ImageFacts, other_os: bool = False) -> List[Image]:
    """The other tags of the image's family and kind that the data lists, newest first: the same flavor and OS for
    nvidia/cuda, the same framework for NGC. ``other_os``: for nvidia/cuda, the same flavor on every OS but the
    image's own instead, newest CUDA first and, for one CUDA, the same distribution's newest release first."""
    data = kb.images()
    found: List[Image] = []
    if image.family == "nvidia/cuda":
        shape = _CUDA_TAG.match(image.tag)
        if shape is None:
            return []
        own = shape.group("os")
        for release in data["nvidia_cuda"]["release"]:
            if shape.group("flavor") not in release["flavors"]:
                continue
            wanted = [o for o in release["os"] if o != own] if other_os else [o for o in release["os"] if o == own]
            for os_name in wanted:
                tag = f"{release['version']}-{shape.group('flavor')}-{os_name}"
                described = describe(f"nvidia/cuda:{tag}", kb)
                if described is not None:
                    found.append(described)
        if other_os:
            distro = re.sub(r"[\d.]+$", "", own)  # a release of the same distribution before another one

            def newest(i: Image) -> Tuple[Tuple[int, ...], bool, Tuple[int, ...]]:
                os_name = os_of(i.tag) or ""
                return order(i.tag.split("-", 1)[0]), re.sub(r"[\d.]+$", "", os_name) == distro, order(os_name)
            return sorted(found, key=newest, reverse=True)
    elif image.family != VLLM and not other_os:  # an NGC tag names no OS
        framework = image.family.rsplit("/", 1)[-1]
        shape = _NGC_TAG.match(image.tag)
        suffix = shape.group("suffix") if shape else "py3"
        for release in data["ngc"]["release"]:
            if release["framework"] == framework and suffix in release.get("tags", ["py3"]):
                described = describe(f"{image.family}:{release['version']}-{suffix}", kb)
                if described is not None:
                    found.append(described)
    return sorted(found, key=lambda i: order(i.tag.split("-", 1)[0]), reverse=True)


def os_of(tag: str) -> Optional[str]:
    """The OS of an nvidia/cuda tag (``12.4.1-runtime-ubuntu22.04`` -> ``ubuntu22.04``), None for another shape."""
    shape = _CUDA_TAG.match(tag)
    return shape.group("os") if shape else None


def order(text: str) -> Tuple[int, ...]:
    """``12.4.1`` or ``25.12`` as numbers, for newest-first sorting."""
    return tuple(int(part) for part in re.findall(r"\d+", text))
