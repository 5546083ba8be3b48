"""Package listings (``pip freeze``, ``pip list``, ``conda list``) and what they tell about the stack:
framework builds (``torch==2.1.2+cu121`` -> CUDA 12.1), cuDNN and NCCL shipped as wheels or conda packages.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from gpuvet.ingest.common import input_error, major_minor, pasted_source, redact_urls, set_fact, shell
from gpuvet.probe.framework_names import DISTRIBUTIONS
from gpuvet.probe.names import canonical_name
from gpuvet.probe.packages import build_from_local_label

FREEZE_LINE = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*(?:===?\s*(?P<version>[^\s;#]+)|\s@\s+(?P<url>\S+))"
)
PIP_LIST_HEADER = re.compile(r"^Package\s+Version(\s+.*)?$")
PIP_LIST_RULE = re.compile(r"^-{3,}\s+-{3,}")
CONDA_HEADER = re.compile(r"^#\s*(packages in environment at|Name\s+Version\s+Build)")
CONDA_LINE = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s+(?P<version>[^\s]+)\s+(?P<build>\S+)(?:\s+(?P<channel>\S+))?\s*$")
_CONDA_TO_PYPI = {"pytorch": "torch", "pytorch-gpu": "torch", "pytorch-cpu": "torch"}


def looks_like_freeze(text: str) -> bool:
    lines = [l.strip() for l in text.split("\n") if l.strip() and not l.strip().startswith("#")]
    if not lines:
        return False
    matched = sum(1 for line in lines if FREEZE_LINE.match(line) or line.startswith("-e "))
    return matched >= max(1, int(len(lines) * 0.8))


def looks_like_pip_list(text: str) -> bool:
    lines = [l for l in text.split("\n") if l.strip()]
    return len(lines) >= 2 and PIP_LIST_HEADER.match(lines[0].strip()) is not None and PIP_LIST_RULE.match(lines[1].strip()) is not None


def looks_like_conda(text: str) -> bool:
    return any(CONDA_HEADER.match(line.strip()) for line in text.split("\n")[:10])


def _package(name: str, version: Optional[str], installer: str, **extra: Any) -> Dict[str, Any]:
    record = {"name": canonical_name(name), "version": version, "location": None, "installer": installer}
    for key, value in extra.items():
        if value is not None:
            record[key] = value
    return record


def freeze_packages(text: str) -> List[Dict[str, Any]]:
    packages = []
    for raw in text.split("\n"):
        line = raw.strip()
        match = FREEZE_LINE.match(line)
        if not match:
            continue
        name, version, url = match.group("name", "version", "url")
        record = {"name": canonical_name(name), "version": version, "location": None, "installer": "pip"}
        if url:
            record["url"] = redact_urls(url)
        packages.append(record)
    return packages


def pip_list_packages(text: str) -> List[Dict[str, Any]]:
    lines = [l for l in text.split("\n") if l.strip()]
    packages = []
    for line in lines[2:]:
        cells = line.split()
        if len(cells) >= 2 and re.match(r"^[A-Za-z0-9]", cells[0]):
            packages.append(_package(cells[0], cells[1], "pip", editable_location=cells[2] if len(cells) > 2 else None))
    return packages


def conda_packages(text: str) -> List[Dict[str, Any]]:
    packages = []
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = CONDA_LINE.match(line)
        if not match:
            continue
        channel = match.group("channel")
        installer = "pip" if channel in ("pypi", "<pip>") else "conda"
        conda_name = match.group("name")
        name = _CONDA_TO_PYPI.get(conda_name.lower(), conda_name)
        packages.append(
            _package(name, match.group("version"), installer, build=match.group("build"), channel=channel,
                     conda_name=conda_name if name != conda_name else None)
        )
    return packages


def _conda_torch_cuda(build: str) -> Dict[str, Any]:
    """pytorch builds name their CUDA: py3.10_cuda12.1_cudnn8.9.2_0 (pytorch channel), cuda120_py310h... (conda-forge)."""
    if build.startswith("cpu") or "_cpu_" in build or build.startswith("py") and "cpu" in build:
        return {"variant": "cpu", "cuda": None}
    dotted = re.search(r"cuda(\d+\.\d+)", build)
    if dotted:
        return {"variant": "cu" + dotted.group(1).replace(".", ""), "cuda": dotted.group(1)}
    packed = re.search(r"cuda(\d{2,3})", build)
    if packed:
        digits = packed.group(1)
        return {"variant": "cu" + digits, "cuda": "{}.{}".format(int(digits[:-1]), digits[-1])}
    return {}


def frameworks_from(packages: List[Dict[str, Any]], source: str) -> Dict[str, Dict[str, Any]]:
    by_name = {p["name"]: p for p in packages}
    frameworks: Dict[str, Dict[str, Any]] = {}
    torch = by_name.get("torch")
    if torch and torch.get("version"):
        info: Dict[str, Any] = {"version": torch["version"], "source": source}
        if torch.get("build"):
            info.update(_conda_torch_cuda(torch["build"]))
            pytorch_cuda = by_name.get("pytorch-cuda")
            if pytorch_cuda and pytorch_cuda.get("version") and "cuda" not in info:
                info["cuda"] = major_minor(pytorch_cuda["version"])
        info.update(build_from_local_label(torch["version"]))
        if "cuda" not in info:
            # a bare version (PyPI default wheel) says nothing by itself; its CUDA runtime wheel does
            runtime = next((p for n, p in by_name.items() if re.match(r"^nvidia-cuda-runtime-cu\d+$", n)), None)
            if runtime and runtime.get("version"):
                info["cuda"] = major_minor(runtime["version"])
                info["cuda_from"] = runtime["name"]
        frameworks["torch"] = info
    for name in DISTRIBUTIONS["tensorflow"]:
        package = by_name.get(name)
        if package and package.get("version"):
            info = {"version": package["version"], "source": source, "distribution": name}
            if name == "tensorflow-cpu":
                info["cuda"] = None
            frameworks["tensorflow"] = info
            break
    jax = by_name.get("jax")
    if jax and jax.get("version"):
        info = {"version": jax["version"], "source": source}
        jaxlib = by_name.get("jaxlib")
        if jaxlib and jaxlib.get("version"):
            info["jaxlib"] = jaxlib["version"]
            label = re.search(r"\+cuda(\d+)", jaxlib["version"])
            if label:
                info["cuda_major"] = label.group(1)
        plugin = next((n for n in by_name if re.match(r"^jax-cuda(\d+)-plugin$", n)), None)
        if plugin:
            plugin_match = re.match(r"^jax-cuda(\d+)-plugin$", plugin)  # always matches: plugin was picked by it
            if plugin_match:
                info["cuda_major"] = plugin_match.group(1)
        frameworks["jax"] = info
    for name in ("paddlepaddle-gpu", "paddlepaddle"):
        package = by_name.get(name)
        if package and package.get("version"):
            info = {"version": package["version"], "source": source, "distribution": name}
            post = re.search(r"\.post(\d+)(\d)$", package["version"])
            if post:
                info["cuda"] = "{}.{}".format(int(post.group(1)), post.group(2))
            elif name == "paddlepaddle":
                info["cuda"] = None
            frameworks["paddle"] = info
            break
    mindspore = by_name.get("mindspore") or by_name.get("mindspore-gpu")
    if mindspore and mindspore.get("version"):
        frameworks["mindspore"] = {"version": mindspore["version"], "source": source}
    return frameworks


def libraries_from(packages: List[Dict[str, Any]], library: str, source: str) -> List[Dict[str, Any]]:
    """cuDNN or NCCL shipped as packages: nvidia-cudnn-cu12==9.1.0.70 -> 9.1.0; conda cudnn 8.9.2.26 -> 8.9.2."""
    pip_name = re.compile(r"^nvidia-{}-cu\d+$".format(library))
    found = []
    for package in packages:
        if library not in package["name"] or not package.get("version"):  # cheap test first: most packages are neither
            continue
        if pip_name.match(package["name"]) or (package["name"] == library and package.get("installer") == "conda"):
            version = re.match(r"^(\d+\.\d+(?:\.\d+)?)", package["version"])
            if version:
                found.append({"version": version.group(1), "path": None, "source": source, "package": package["name"],
                              "package_version": package["version"]})
    return found


def toolkits_from_conda(packages: List[Dict[str, Any]], source: str) -> List[Dict[str, Any]]:
    toolkits = []
    for package in packages:
        if package.get("installer") != "conda" or not package.get("version"):
            continue
        if package["name"] in ("cudatoolkit", "cuda-toolkit", "cuda-nvcc"):
            toolkits.append({"version": package["version"], "path": None,
                             "nvcc": "nvcc" if package["name"] != "cudatoolkit" else None,
                             "on_path": False, "source": source, "package": package["name"]})
    return toolkits


def fill_from_packages(snapshot: Dict[str, Any], packages: List[Dict[str, Any]], source: str) -> None:
    set_fact(snapshot, "packages", sorted(packages, key=lambda p: p["name"]), source)
    frameworks = frameworks_from(packages, source)
    if frameworks:
        set_fact(snapshot, "frameworks", frameworks, source)
    for library in ("cudnn", "nccl"):
        entries = libraries_from(packages, library, source)
        if entries:
            set_fact(snapshot, library, entries, source)
    toolkits = toolkits_from_conda(packages, source)
    if toolkits:
        set_fact(snapshot, "cuda_toolkits", toolkits, source)


def _parse_with(kind: str, reader, text: str, name: str) -> Dict[str, Any]:
    snapshot = shell(kind, name)
    packages = reader(text)
    if not packages:
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=kind, name=name)
    fill_from_packages(snapshot, packages, pasted_source(kind))
    return snapshot


def parse_freeze(text: str, name: str = "<input>") -> Dict[str, Any]:
    snapshot = _parse_with("pip-freeze", freeze_packages, text, name)
    index = re.search(r"^(?:-i|--index-url)\s+(\S+)", text, re.MULTILINE)
    if index:
        set_fact(snapshot, "pip", {"version": None, "index_url": redact_urls(index.group(1))}, pasted_source("pip-freeze"))
    return snapshot


def parse_pip_list(text: str, name: str = "<input>") -> Dict[str, Any]:
    return _parse_with("pip-list", pip_list_packages, text, name)


def parse_conda(text: str, name: str = "<input>") -> Dict[str, Any]:
    snapshot = _parse_with("conda-list", conda_packages, text, name)
    prefix = re.search(r"^#\s*packages in environment at\s+(.+?):?\s*$", text, re.MULTILINE)
    if prefix:
        set_fact(snapshot, "conda", {"version": None, "active_env": None, "prefix": prefix.group(1)}, pasted_source("conda-list"))
    return snapshot


def set_packages_and_frameworks(snapshot: Dict[str, Any], named: List[Tuple[str, str]], source: str,
                                extra_frameworks: Optional[Dict[str, Dict[str, Any]]] = None) -> None:
    """(name, version) pairs a report lists -> packages, and the frameworks they make (torch's build from its local
    label, as from a pip listing)."""
    records = []
    seen = set()
    for name, version in named:
        version = (version or "").strip()
        if not name or not re.match(r"^\d", version):
            continue
        record = _package(name, version, "pip")
        if record["name"] in seen:
            continue
        seen.add(record["name"])
        records.append(record)
    frameworks = frameworks_from(records, source) if records else {}
    for framework, info in (extra_frameworks or {}).items():
        frameworks[framework] = {**frameworks.get(framework, {}), **info, "source": source}
    if records:
        set_fact(snapshot, "packages", sorted(records, key=lambda p: p["name"]), source)
        for library in ("cudnn", "nccl"):
            entries = libraries_from(records, library, source)
            if entries:
                set_fact(snapshot, library, entries, source)
    if frameworks:
        set_fact(snapshot, "frameworks", frameworks, source)
