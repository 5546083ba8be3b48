"""The facts a log states in passing, one line at a time: the GPU and its compute capability, the driver and the CUDA
it supports, the framework's version and build tag (``torch 2.3.1+cu121``), the Python and platform of the wheels and
paths it names. A pasted issue often holds its answer there without any tool's block around it.

The tool outputs a log may carry whole (collect_env, an nvidia-smi table, pip list) are read by their own parsers
(:mod:`gpuvet.ingest.embedded`), whose facts win; these loose lines only fill what those leave unsaid. Pure: a
partial snapshot, or None when no line states a fact.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

from gpuvet.ingest.common import new_gpu, set_fact, shell

SOURCE = "pasted:log"

# torch's own warning: "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch
# installation." and the old "Found GPU0 Tesla K80 which is of cuda capability 3.7."
_GPU_CC = re.compile(r"(?P<name>(?:NVIDIA |Tesla |GeForce |Quadro )[\w .-]*?\w) with CUDA capability sm_(?P<sm>\d{2,3})\b")
_GPU_OLD = re.compile(r"Found GPU\d+ (?P<name>[\w .-]+?) which is of cuda capability (?P<cc>\d+\.\d+)")
# nvidia-smi -L and collect_env's "GPU 0: NVIDIA A100-SXM4-80GB"
_GPU_LINE = re.compile(r"^\s*GPU \d+: (?P<name>(?:NVIDIA|Tesla|GeForce|Quadro|RTX)[\w .()/-]*?)(?:\s+\(UUID: [^)]*\))?\s*$")
_DRIVER = re.compile(r"(?:Driver Version|NVIDIA-SMI|nvidia[- _]driver(?: version)?|driver version)\s*[:=]?\s*"
                     r"(?P<driver>\d{3}\.\d{1,3}(?:\.\d{1,3})?)\b", re.IGNORECASE)
_CUDA_MAX = re.compile(r"CUDA Version\s*:\s*(?P<cuda>\d{1,2}\.\d)\b")
_TORCH_VERSION = r"(?<![\w-])(?:torch|pytorch)(?:==|-|\s+version:?\s+|:\s*|\s+)(?P<version>\d+\.\d+(?:\.\d+)?)"
_TORCH_TAG = r"(?:\+(?P<tag>cu\d{2,3}|cpu|rocm[\d.]+))"
_TORCH = re.compile(_TORCH_VERSION + _TORCH_TAG + r"?(?![\w.])", re.IGNORECASE)
_TORCH_TAGGED = re.compile(_TORCH_VERSION + _TORCH_TAG + r"(?![\w.])", re.IGNORECASE)
_ASKED = re.compile(r"\binstall\b|requirement|Collecting|No matching distribution|Could not find", re.IGNORECASE)
_PYTHON = re.compile(r"(?:\bPython (?P<version>3\.\d{1,2})(?:\.\d+)?\b|/python(?P<path>3\.\d{1,2})/(?:site|dist)-packages)")
_WHEEL_TAGS = re.compile(r"-cp(?P<py>3\d{1,2})-(?:cp3\d{1,2}t?|abi3|none)-(?P<platform>manylinux\w*|linux_\w+|"
                         r"win_amd64|win32|macosx_\w+)")


def _cuda_of_tag(tag: str) -> Optional[str]:
    digits = tag[2:]
    return "%s.%s" % (digits[:-1], digits[-1]) if tag.startswith("cu") else None


def _last(pattern: "re.Pattern[str]", lines: List[str]) -> Optional["re.Match[str]"]:
    """The last line's match: the failing run is usually the last one a paste shows."""
    for line in reversed(lines):
        match = pattern.search(line)
        if match:
            return match
    return None


def parse(text: str, name: str = "log") -> Optional[Dict[str, Any]]:
    lines = text.split("\n")
    snapshot = shell("log", name)
    stated = False
    gpus: List[Dict[str, Any]] = []
    for line in lines:
        match = _GPU_CC.search(line) or _GPU_OLD.search(line) or _GPU_LINE.search(line)
        if not match:
            continue
        groups = match.groupdict()
        cc = groups.get("cc") or (("%s.%s" % (groups["sm"][:-1], groups["sm"][-1])) if groups.get("sm") else None)
        if any(g["name"] == match.group("name").strip() for g in gpus):
            continue
        gpu = new_gpu(len(gpus), match.group("name").strip())
        gpu["compute_capability"] = cc
        gpus.append(gpu)
    if gpus:
        set_fact(snapshot, "gpus", gpus, SOURCE)
        stated = True
    driver = _last(_DRIVER, lines)
    if driver:
        set_fact(snapshot, "driver.version", driver.group("driver"), SOURCE)
        stated = True
    # (torch's "found version 11040" is the error's own evidence, read by its signature: not a fact to judge it by)
    cuda = _last(_CUDA_MAX, lines)
    if cuda:
        set_fact(snapshot, "driver.cuda_max", cuda.group("cuda"), SOURCE)
        stated = True
    # What is installed, not what a command asked for (a failed `pip install torch==X` installs nothing); a version
    # with its build tag says more than one without.
    installed = [line for line in lines if not _ASKED.search(line) or "Successfully installed" in line]
    torch = _last(_TORCH_TAGGED, installed) or _last(_TORCH, installed)
    if torch:
        tag = (torch.group("tag") or "").lower()
        entry: Dict[str, Any] = {"version": torch.group("version") + ("+" + tag if tag else ""), "source": SOURCE}
        if tag:
            entry["cuda"] = _cuda_of_tag(tag)
        set_fact(snapshot, "frameworks", {"torch": entry}, SOURCE)
        stated = True
    python = _last(_PYTHON, lines)
    wheel = _last(_WHEEL_TAGS, lines)
    version = (python.group("version") or python.group("path")) if python else None
    if wheel and not version:
        digits = wheel.group("py")
        version = "%s.%s" % (digits[0], digits[1:])
    if version:
        set_fact(snapshot, "python", {"version": version, "implementation": "CPython", "executable": None,
                                      "prefix": None, "venv": None}, SOURCE)
        stated = True
    if wheel:
        platform = wheel.group("platform")
        system = "Windows" if platform.startswith("win") else "Darwin" if platform.startswith("macosx") else "Linux"
        machine = ("x86_64" if platform.endswith(("x86_64", "amd64")) else "aarch64" if platform.endswith("aarch64")
                   else "arm64" if platform.endswith("arm64") else None)
        set_fact(snapshot, "host.os", {"id": system.lower(), "version_id": None, "pretty": system, "system": system},
                 SOURCE)
        if machine:
            set_fact(snapshot, "host.machine", machine, SOURCE)
        stated = True
    return snapshot if stated else None
