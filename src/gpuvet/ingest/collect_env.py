"""PyTorch's ``python -m torch.utils.collect_env`` report (formats from torch 1.1 to 2.13)."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

from gpuvet.ingest import packages as package_parsers
from gpuvet.ingest.common import (
    dedupe,
    input_error,
    major_minor,
    na,
    new_gpu,
    pasted_source,
    set_fact,
    shell,
)
from gpuvet.probe.packages import build_from_local_label

KIND = "collect-env"
_KEY = re.compile(r"^(?P<key>[A-Za-z][A-Za-z0-9 ()_./-]*?):\s?(?P<value>.*)$")
_MARKERS = ("PyTorch version:", "CUDA used to build PyTorch:")
_ISA_FLAGS = ("avx", "avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_tile", "amx_int8", "f16c", "fma",
              "sse4_1", "sse4_2", "asimd", "sve")


def looks_like(text: str) -> bool:
    return "PyTorch version:" in text and ("CUDA used to build PyTorch" in text or "Collecting environment information" in text)


def fields(text: str) -> Dict[str, List[str]]:
    """Each "Key: value" with its continuation lines (the GPU list, the cuDNN candidates)."""
    result: Dict[str, List[str]] = {}
    current: Optional[str] = None
    for raw in text.split("\n"):
        if not raw.strip():
            current = None
            continue
        if raw.startswith("[") or raw.startswith(" ") and current is None:
            continue
        match = _KEY.match(raw)
        if match and not re.match(r"^GPU \d+:", raw) and not raw.startswith("/"):
            current = match.group("key").strip()
            result.setdefault(current, []).append(match.group("value").strip())
        elif current is not None:
            result[current].append(raw.strip())
    return result


def _first(values: Dict[str, List[str]], key: str) -> Optional[str]:
    items = values.get(key)
    return na(items[0]) if items else None


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    source = pasted_source(KIND)
    snapshot = shell(KIND, name)
    if not any(marker in text for marker in _MARKERS):
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=KIND, name=name)
    values = fields(text)

    torch_version = _first(values, "PyTorch version")
    built_cuda = values.get("CUDA used to build PyTorch", [None])[0]
    packages = _library_lines(text)
    frameworks = package_parsers.frameworks_from(packages, source) if packages else {}
    if torch_version:
        torch: Dict[str, Any] = dict(frameworks.get("torch", {}))
        torch.update({"version": torch_version, "source": source})
        torch.update(build_from_local_label(torch_version))
        if built_cuda is not None and built_cuda.strip() == "None":
            torch["cuda"] = None  # collect_env prints None for a CPU-only build
        elif na(built_cuda):
            torch["cuda"] = major_minor(na(built_cuda))
        rocm = _first(values, "ROCM used to build PyTorch")
        if rocm:
            torch["hip"] = rocm
        debug = _first(values, "Is debug build")
        if debug:
            torch["debug"] = debug in ("True", "Yes")
        frameworks["torch"] = torch
    if frameworks:
        set_fact(snapshot, "frameworks", frameworks, source)
    if packages:
        set_fact(snapshot, "packages", sorted(packages, key=lambda p: p["name"]), source)
        for library in ("cudnn", "nccl"):
            entries = package_parsers.libraries_from(packages, library, source)
            if entries:
                set_fact(snapshot, library, entries, source)

    _host(snapshot, values, source)
    driver = _first(values, "Nvidia driver version")
    if driver:
        set_fact(snapshot, "driver.version", driver, source)
    runtime = _first(values, "CUDA runtime version")
    if runtime:
        # collect_env reads this from `nvcc --version`: it is the toolkit on PATH, not the driver
        set_fact(snapshot, "cuda_toolkits", [{"version": runtime, "path": None, "nvcc": "nvcc", "on_path": True,
                                              "source": source}], source)
    gpus = _gpus(values.get("GPU models and configuration", []))
    if gpus:
        set_fact(snapshot, "gpus", gpus, source)
    cudnn = _cudnn(values.get("cuDNN version", []), source)
    if cudnn and "cudnn" not in snapshot:
        set_fact(snapshot, "cudnn", cudnn, source)
    return snapshot


def _library_lines(text: str) -> List[Dict[str, Any]]:
    """"[pip3] torch==2.1.2+cu121" and "[conda] pytorch  2.1.2  py3.10_cuda12.1_cudnn8.9.2_0  pytorch"."""
    pip_lines: List[str] = []
    conda_lines: List[str] = []
    for line in text.split("\n"):
        match = re.match(r"^\[(pip\d?|conda)\]\s+(.*)$", line.strip())
        if not match or na(match.group(2)) is None:
            continue
        (conda_lines if match.group(1) == "conda" else pip_lines).append(match.group(2))
    packages = package_parsers.freeze_packages("\n".join(pip_lines))
    pip_names = {p["name"] for p in packages}
    for package in package_parsers.conda_packages("\n".join(conda_lines)):
        if package["name"] not in pip_names:
            packages.append(package)
    return packages


def _host(snapshot: Dict[str, Any], values: Dict[str, List[str]], source: str) -> None:
    os_line = _first(values, "OS")
    if os_line:
        machine = re.search(r"\((x86_64|aarch64|arm64|ppc64le|AMD64)\)\s*$", os_line)
        pretty = re.sub(r"\s*\([^)]*\)\s*$", "", os_line).strip()
        system = "Windows" if "Windows" in pretty else "Darwin" if re.search(r"mac ?os", pretty, re.I) else "Linux"
        os_value = {"id": _os_id(pretty), "version_id": _os_version(pretty), "pretty": pretty, "system": system}
        set_fact(snapshot, "host.os", os_value, source)
        if machine:
            set_fact(snapshot, "host.machine", machine.group(1), source)
    libc = _first(values, "Libc version")
    if libc and libc.startswith("glibc-"):
        set_fact(snapshot, "host.glibc", libc[len("glibc-"):], source)
    gcc = _first(values, "GCC version")
    if gcc:
        version = re.search(r"(\d+\.\d+(?:\.\d+)?)\s*$", gcc)
        set_fact(snapshot, "host.gcc", version.group(1) if version else gcc, source, raw=gcc)
    platform = _first(values, "Python platform")
    if platform:
        kernel = re.match(r"^Linux-(?P<kernel>.+?)-(x86_64|aarch64|ppc64le)", platform)
        if kernel:
            set_fact(snapshot, "host.kernel", kernel.group("kernel"), source)
        set_fact(snapshot, "host.wsl", "microsoft" in platform.lower(), source)
    python = _first(values, "Python version")
    if python:
        version = re.match(r"^(\d+\.\d+(?:\.\d+)?)", python)
        if version:
            implementation = "CPython"
            set_fact(snapshot, "python", {"version": version.group(1), "implementation": implementation,
                                          "executable": None, "prefix": None, "venv": None}, source)
    model = _first(values, "Model name") or _first(values, "Name")
    if model:
        cpu: Dict[str, Any] = {"model": model}
        cores = _first(values, "CPU(s)")
        if cores and cores.isdigit():
            cpu["cores"] = int(cores)
        flags = _first(values, "Flags")
        if flags:
            present = set(flags.split())
            cpu["flags"] = [flag for flag in _ISA_FLAGS if flag in present]
        set_fact(snapshot, "host.cpu", cpu, source)


def _os_id(pretty: str) -> Optional[str]:
    if not pretty:
        return None
    first = pretty.split()[0].lower()
    return {"mac": "macos", "microsoft": "windows"}.get(first, first)


def _os_version(pretty: str) -> Optional[str]:
    match = re.search(r"(\d+(?:\.\d+)*)", pretty)
    return match.group(1) if match else None


def _gpus(lines: List[str]) -> List[Dict[str, Any]]:
    gpus = []
    for line in lines:
        match = re.match(r"^GPU (\d+): (.+?)\s*$", line.strip())
        if match:
            gpus.append(new_gpu(int(match.group(1)), match.group(2)))
        elif na(line) and not gpus and not re.search(r"could not collect|no cuda", line, re.I):
            # torch < 1.5 and single-GPU reports print the bare name without "GPU 0:"
            gpus.append(new_gpu(0, line.strip()))
    return gpus


def _cudnn(lines: List[str], source: str) -> List[Dict[str, Any]]:
    versions: List[Dict[str, Any]] = []
    for line in lines:
        library = re.search(r"(/\S*libcudnn(?:_\w+)?\.so\.(\d+\.\d+\.\d+))", line)
        dll = re.search(r"(\S*cudnn\S*?(\d+)\.dll)", line, re.I)
        plain = re.match(r"^(\d+\.\d+\.\d+)$", line.strip())
        if library:
            versions.append({"version": library.group(2), "path": library.group(1), "source": source, "package": None})
        elif plain:
            versions.append({"version": plain.group(1), "path": None, "source": source, "package": None})
        elif dll:
            versions.append({"version": dll.group(2), "path": dll.group(1), "source": source, "package": None})
    unique = dedupe(v["version"] for v in versions)
    return [next(v for v in versions if v["version"] == version) for version in unique]
