"""PyTorch's ``python -m torch.utils.collect_env`` report (formats from torch 1.1 to 2.13) and vLLM's copy of it
(``vllm collect-env`` / ``python collect_env.py``): the same fields, since vLLM 0.8 in sections
(``==== PyTorch Info ====``) with the keys padded to one column (``PyTorch version   : 2.6.0``), plus a vLLM section."""

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
    python_record,
    set_fact,
    shell,
    unquote_lines,
)
from gpuvet.probe.packages import build_from_local_label

KIND = "collect-env"
VLLM_KIND = "vllm-collect-env"
_PYTORCH_KEY = re.compile(r"^[^\S\n]*PyTorch version[^\S\n]*:", re.M)
_SECTION = re.compile(r"^[^\S\n]*(System Info|PyTorch Info|Python Environment|CUDA / GPU Info|vLLM Info)[^\S\n]*$", re.M)
_BANNER = "Collecting environment information"
_NUMERIC = re.compile(r"^\d+(?:\.\d+)*$")
_KEY = re.compile(r"^(?P<key>[A-Za-z][A-Za-z0-9 ()_./-]*?):\s?(?P<value>.*)$")
_ISA_FLAGS = ("avx", "avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_tile", "amx_int8", "f16c", "fma",
              "sse4_1", "sse4_2", "asimd", "sve")


def looks_like(text: str) -> bool:
    return "PyTorch version:" in text and ("CUDA used to build PyTorch" in text or _BANNER in text)


def looks_like_vllm(text: str) -> bool:
    """vLLM's report: its sectioned layout, or the flat (torch) layout with vLLM's own fields."""
    if _PYTORCH_KEY.search(text) is None or "CUDA used to build PyTorch" not in text:
        return False
    return _SECTION.search(text) is not None or "vLLM Version" in text or "vLLM Build Flags" in text


def _lines(text: str) -> List[str]:
    """The report's lines, unquoted, with the banner split off the first field when a paste ran them together."""
    lines = []
    for raw in unquote_lines(text).split("\n"):
        at = raw.find(_BANNER)
        if at >= 0:
            rest = raw[at + len(_BANNER):].lstrip(".` ")
            if not rest:
                continue
            raw = rest
        lines.append(raw)
    return lines


def fields(text: str) -> Dict[str, List[str]]:
    """Each "Key: value" with its continuation lines (the GPU list, the cuDNN candidates)."""
    result: Dict[str, List[str]] = {}
    current: Optional[str] = None
    for raw in _lines(text):
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
    return _parse(text, name, KIND)


def parse_vllm(text: str, name: str = "<input>") -> Dict[str, Any]:
    snapshot = _parse(text, name, VLLM_KIND)
    values = fields(text)
    version = _first(values, "vLLM Version")
    if version:
        info: Dict[str, Any] = {"version": version.split(" (")[0].strip(), "source": pasted_source(VLLM_KIND)}
        flags = " ".join(values.get("vLLM Build Flags", []))
        archs = re.search(r"CUDA Archs:\s*([^;]+)", flags)
        if archs and na(archs.group(1)) and archs.group(1).strip() != "Not Set":
            info["cuda_archs"] = archs.group(1).strip()
        frameworks = snapshot.get("frameworks", {}).get("value", {})
        frameworks = dict(frameworks)
        frameworks["vllm"] = {**frameworks.get("vllm", {}), **info}
        set_fact(snapshot, "frameworks", frameworks, pasted_source(VLLM_KIND))
    return snapshot


def _torch_cuda(torch: Dict[str, Any], built: Optional[str], cuda_available: Optional[str]) -> None:
    """What "CUDA used to build PyTorch" says: a version, or (None, N/A, Could not collect: torch.version.cuda was
    None, which collect_env prints so) a build without CUDA. Never left to a guess from the other packages: a report
    that names no CUDA version never reads as the default CUDA build."""
    if built is None:
        return
    raw = built.strip()
    if _NUMERIC.match(raw):
        torch["cuda"] = major_minor(raw) or raw
        torch.pop("cuda_from", None)
        return
    label = build_from_local_label(torch.get("version"))
    torch.pop("cuda_from", None)
    torch["cuda_reported"] = raw or "(empty)"
    if label.get("cuda"):
        torch["cuda"] = label["cuda"]  # the wheel's own +cuXXX label names the build even when the field did not
        return
    torch["cuda"] = None
    if cuda_available in ("True", "Yes"):
        # CUDA usable although the build names no CUDA version: the report cannot be read, said so, not guessed
        torch["cuda_unreadable"] = True


def _parse(text: str, name: str, kind: str) -> Dict[str, Any]:
    source = pasted_source(kind)
    snapshot = shell(kind, name)
    values = fields(text)
    if not any(key in values for key in ("PyTorch version", "CUDA used to build PyTorch")):
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=kind, name=name)

    torch_version = _first(values, "PyTorch version")
    built_cuda = values.get("CUDA used to build PyTorch", [None])[0]
    packages = _library_lines("\n".join(_lines(text)))
    frameworks = package_parsers.frameworks_from(packages, source) if packages else {}
    if torch_version:
        torch: Dict[str, Any] = dict(frameworks.get("torch", {}))
        torch.update({"version": torch_version, "source": source})
        torch.update(build_from_local_label(torch_version))
        rocm = _first(values, "ROCM used to build PyTorch")
        if rocm:
            torch["hip"] = rocm
        available = _first(values, "Is CUDA available")
        _torch_cuda(torch, built_cuda, None if rocm else available)
        if available in ("True", "Yes", "False", "No"):
            torch["cuda_available"] = available in ("True", "Yes")
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
            set_fact(snapshot, "python", python_record(version.group(1), python), source)
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


def vllm_blocks(lines: List[str]) -> List[str]:
    """vLLM's sectioned report inside a log: from its banner (or first section) to the end of its last section (the
    environment variables, ``NAME=value`` lines), a code fence, or three blank lines; one pass over the lines."""
    blocks = []
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        starts = stripped == "System Info" or stripped == "PyTorch Info"
        if not starts:
            i += 1
            continue
        start = i - 1 if i > 0 and lines[i - 1].strip().startswith("===") else i
        if start > 0 and _BANNER in lines[start - 1]:
            start -= 1
        end = i + 1
        blanks = 0
        in_env = False
        while end < len(lines):
            current = lines[end].strip()
            if current.startswith("```") or blanks >= 3:
                break
            if current == "Environment Variables":
                in_env = True
            elif in_env and current and not current.startswith("===") and "=" not in current:
                break
            blanks = blanks + 1 if not current else 0
            end += 1
        blocks.append("\n".join(lines[start:end]))
        i = end
    return [block for block in blocks if _PYTORCH_KEY.search(block)] + _flat_vllm_blocks(lines)


def _flat_vllm_blocks(lines: List[str]) -> List[str]:
    """The flat layout (vLLM < 0.9): torch's report, then ROCM/Neuron/vLLM Version, Build Flags and the topology."""
    from gpuvet.ingest.embedded_blocks import collect_env_blocks

    found = []
    position = 0
    for block in collect_env_blocks(lines):
        count = block.count("\n") + 1
        first = block.split("\n", 1)[0]
        while position < len(lines) and lines[position] != first:
            position += 1
        end = position + count
        tail = end
        while tail < len(lines) and tail < end + 8 and not lines[tail].strip().startswith("```"):
            if lines[tail].strip().startswith("vLLM Build Flags"):
                found.append("\n".join(lines[position:tail + 2]))
                break
            tail += 1
        position = end
    return found
