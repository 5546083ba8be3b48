"""The facts a log states in passing, one line at a time: the GPU and its compute capability, the driver and the CUDA
it supports, the framework's version and build (``torch 2.3.1+cu121``, the CUDA and cuDNN it was built with), the
cuDNN and NCCL it loaded, the Python and platform of the wheels and paths it names. A pasted issue often holds its
answer there without any tool's block around it.

The lines are the start-up and version lines programs print (TensorFlow's device creation, PaddlePaddle's device
properties, NCCL's version, deviceQuery, nccl-tests, torch's own warnings...): each is a record of
``ingest/data/log_fact_lines.toml`` (its pattern with named slots, and the file that prints it), never code here.
The tool outputs a log may carry whole (collect_env, an nvidia-smi table, pip list) are read by their own parsers
(:mod:`gpuvet.ingest.embedded`), whose facts win; these loose lines only fill what those leave unsaid. Pure: a
partial snapshot, or None when no line states a fact.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

from gpuvet.ingest.common import new_gpu, set_fact, shell

SOURCE = "pasted:log"
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "log_fact_lines.toml")

# The slots a printer's pattern may name (see the data file's head); any other is refused by the test of the data.
SLOTS = frozenset((
    "gpu_name", "gpu_names", "cc", "sm", "cc_digits", "cc_major", "cc_minor", "driver", "driver_cuda", "driver_api", "build_cuda", "build_cuda_api",
    "version", "tag", "cudnn", "cudnn_api", "build_cudnn", "build_cudnn_api", "nccl", "nccl_cuda", "toolkit",
    "python", "python_path", "python_tag", "platform",
))
# A request to install states nothing installed (a failed `pip install torch==X` installs nothing).
_ASKED = re.compile(r"\binstall\b|requirement|Collecting|No matching distribution|Could not find", re.IGNORECASE)


class Printer(NamedTuple):
    id: str
    anchors: Tuple[str, ...]  # lower-cased; a line must hold one
    pattern: str
    framework: Optional[str]
    installed_only: bool
    prefer: Optional[str]
    source: str
    example: str


@lru_cache(maxsize=1)
def printers() -> Tuple[Printer, ...]:
    """The printers of the data file, in its order."""
    from gpuvet.tomlfile import load_toml

    found = []
    for record in load_toml(DATA).get("line", []):
        anchor = record.get("anchor") or ()
        anchors = (anchor,) if isinstance(anchor, str) else tuple(anchor)
        found.append(Printer(str(record["id"]), tuple(a.lower() for a in anchors), str(record["pattern"]),
                             record.get("framework"), bool(record.get("installed_only")), record.get("prefer"),
                             str(record["source"]), str(record.get("example", ""))))
    return tuple(found)


@lru_cache(maxsize=None)
def _regex(pattern: str) -> "re.Pattern[str]":
    return re.compile(pattern)


class Reading(NamedTuple):
    line: int  # 0-based index in the log
    printer: Printer
    slots: Dict[str, str]


def readings(lines: List[str], lowered: Optional[List[str]] = None) -> List[Reading]:
    """Every printer's match, in log order (one per printer and line)."""
    if lowered is None:
        lowered = [line.lower() for line in lines]
    blob = "\n".join(lowered)
    found: List[Reading] = []
    for printer in printers():
        if printer.anchors and not any(anchor in blob for anchor in printer.anchors):
            continue
        regex = _regex(printer.pattern)
        for index, line in enumerate(lines):
            if printer.anchors and not any(anchor in lowered[index] for anchor in printer.anchors):
                continue
            if printer.installed_only and _ASKED.search(line) and "Successfully installed" not in line:
                continue
            match = regex.search(line)
            if match:
                found.append(Reading(index, printer, {k: v for k, v in match.groupdict().items() if v}))
    found.sort(key=lambda r: r.line)
    return found


# -- slot values as facts ------------------------------------------------------------------------------------------


def api_version(value: str) -> Optional[str]:
    """CUDA's integer version (12020, as cudaDriverGetVersion and cudaRuntimeGetVersion give it) -> "12.2"."""
    if not value.isdigit() or not 4 <= len(value) <= 6:
        return None
    number = int(value)
    return "%d.%d" % (number // 1000, (number % 1000) // 10)


def cudnn_api_version(value: str) -> Optional[str]:
    """cuDNN's integer version -> "8.9.4" (8904: major*1000 + minor*100 + patch) or "9.1.0" from cuDNN 9 on
    (90100: major*10000 + minor*100 + patch), as cudnn.h defines CUDNN_VERSION."""
    if not value.isdigit():
        return None
    number = int(value)
    if number >= 90000:
        return "%d.%d.%d" % (number // 10000, (number % 10000) // 100, number % 100)
    return "%d.%d.%d" % (number // 1000, (number % 1000) // 100, number % 100)


def _cc(slots: Mapping[str, str]) -> Optional[str]:
    digits = slots.get("sm") or slots.get("cc_digits")
    if digits:
        return "%s.%s" % (digits[:-1], digits[-1])
    if slots.get("cc_major") and slots.get("cc_minor"):
        return "%s.%s" % (slots["cc_major"], slots["cc_minor"])
    return slots.get("cc")


def _cuda_of_tag(tag: str) -> Optional[str]:
    digits = tag[2:]
    return "%s.%s" % (digits[:-1], digits[-1]) if tag.startswith("cu") else None


def _gpus(found: List[Reading]) -> List[Dict[str, Any]]:
    """The GPUs named, each model once, in log order; a compute capability a line states without a name goes to the
    GPU the nearest earlier line named (deviceQuery prints the name, then the capability), else to one GPU of its own."""
    gpus: List[Dict[str, Any]] = []
    last: Optional[Dict[str, Any]] = None
    named: List[Tuple[Dict[str, str], str]] = []
    for reading in found:  # a line naming several GPUs ("A, B") is a line each
        several = [n.strip() for n in reading.slots.get("gpu_names", "").split(", ") if n.strip()]
        if several:
            named.extend((dict(reading.slots, gpu_name=n), n) for n in several)
        else:
            named.append((reading.slots, ""))
    for slots, _ in named:
        cc = _cc(slots)
        name = (slots.get("gpu_name") or "").strip()
        if not name and not cc:
            continue
        if not name:
            target = last if last is not None and not last.get("compute_capability") else None
            if target is None:
                target = next((g for g in gpus if g["compute_capability"] is None and g["name"] is None), None)
            if target is None and not any(g.get("compute_capability") == cc for g in gpus):
                target = new_gpu(len(gpus), None)
                target["compute_capability"] = None
                gpus.append(target)
            if target is not None:
                target["compute_capability"] = cc
            continue
        known = next((g for g in gpus if g["name"] == name), None)
        if known is None:
            known = new_gpu(len(gpus), name)
            known["compute_capability"] = None
            gpus.append(known)
        if cc and not known.get("compute_capability"):
            known["compute_capability"] = cc
        last = known
    # A nameless GPU whose capability a named one shares adds nothing (bitsandbytes' "highest compute capability").
    named_ccs = {g["compute_capability"] for g in gpus if g["name"]}
    kept = [g for g in gpus if g["name"] or g["compute_capability"] not in named_ccs]
    for index, gpu in enumerate(kept):
        gpu["index"] = index
    return kept


def _last(found: List[Reading], *slots: str) -> Optional[Tuple[Reading, str, str]]:
    """(reading, slot, value) of the last line holding one of ``slots``: the failing run is usually the last one a
    paste shows."""
    for reading in reversed(found):
        for slot in slots:
            if reading.slots.get(slot):
                return reading, slot, reading.slots[slot]
    return None


def _frameworks(found: List[Reading]) -> Dict[str, Dict[str, Any]]:
    frameworks: Dict[str, Dict[str, Any]] = {}
    names = dict.fromkeys(r.printer.framework for r in found if r.printer.framework)
    for name in names:
        own = [r for r in found if r.printer.framework == name]
        entry: Dict[str, Any] = {}
        versioned = [r for r in own if r.slots.get("version")]
        preferred = [r for r in versioned if r.printer.prefer and r.slots.get(r.printer.prefer)]
        chosen = preferred or versioned
        if chosen:
            pick = chosen[-1]
            tag = (pick.slots.get("tag") or "").lower()
            entry["version"] = pick.slots["version"] + ("+" + tag if tag else "")
            if tag:
                entry["cuda"] = _cuda_of_tag(tag)
        built = _last(own, "build_cuda", "build_cuda_api")
        if built is not None and "cuda" not in entry:
            _, slot, value = built
            entry["cuda"] = api_version(value) if slot.endswith("_api") else value
        if entry:
            entry["source"] = SOURCE
            frameworks[name] = entry
    return frameworks


def _cudnn(found: List[Reading]) -> Optional[Tuple[List[Dict[str, Any]], Dict[str, Any]]]:
    """The cuDNN loaded at run time ([entry], extra) with the version the framework was compiled with as the
    fact's extra ``compiled_with`` when the same line says it."""
    loaded = _last(found, "cudnn", "cudnn_api")
    if loaded is None:
        return None
    reading, slot, value = loaded
    version = cudnn_api_version(value) if slot.endswith("_api") else value
    if version is None:
        return None
    extra: Dict[str, Any] = {"printer": reading.printer.id}
    built = reading.slots.get("build_cudnn") or (cudnn_api_version(reading.slots["build_cudnn_api"])
                                                 if reading.slots.get("build_cudnn_api") else None)
    if built:
        extra["compiled_with"] = built
    return [{"version": version, "path": None, "source": SOURCE, "package": None}], extra


def _nccl(found: List[Reading]) -> List[Dict[str, Any]]:
    versions: List[Dict[str, Any]] = []
    for reading in found:
        if not reading.slots.get("nccl"):
            continue
        entry = {"version": reading.slots["nccl"], "path": None, "source": "pasted:nccl-log", "package": None}
        if reading.slots.get("nccl_cuda"):
            entry["cuda"] = reading.slots["nccl_cuda"]
        if entry not in versions:
            versions.append(entry)
    # "vLLM is using nccl==2.21.5" and NCCL's own "2.21.5+cuda12.4" are one NCCL
    return [e for e in versions if "cuda" in e or not any(o is not e and o["version"] == e["version"] for o in versions)]


def parse(text: str, name: str = "log") -> Optional[Dict[str, Any]]:
    lines = text.split("\n")
    found = readings(lines)
    if not found:
        return None
    snapshot = shell("log", name)
    stated = False
    gpus = _gpus(found)
    if gpus:
        set_fact(snapshot, "gpus", gpus, SOURCE)
        stated = True
    driver = _last(found, "driver")
    if driver:
        set_fact(snapshot, "driver.version", driver[2], SOURCE)
        stated = True
    # (torch's "found version 11040" is the error's own evidence, read by its signature: not a fact to judge it by)
    cuda = _last(found, "driver_cuda", "driver_api")
    if cuda:
        _, slot, stated_cuda = cuda
        cuda_max = api_version(stated_cuda) if slot == "driver_api" else stated_cuda
        if cuda_max:
            set_fact(snapshot, "driver.cuda_max", cuda_max, SOURCE)
            stated = True
    frameworks = _frameworks(found)
    if frameworks:
        set_fact(snapshot, "frameworks", frameworks, SOURCE)
        stated = True
    cudnn = _cudnn(found)
    if cudnn:
        set_fact(snapshot, "cudnn", cudnn[0], SOURCE, **cudnn[1])
        stated = True
    nccl = _nccl(found)
    if nccl:
        set_fact(snapshot, "nccl", nccl, "pasted:nccl-log")
        stated = True
    toolkit = _last(found, "toolkit")
    if toolkit:
        set_fact(snapshot, "cuda_toolkits", [{"version": toolkit[2], "path": None, "nvcc": "nvcc", "on_path": True,
                                              "source": SOURCE}], SOURCE)
        stated = True
    python = _last(found, "python", "python_path")
    wheel = _last(found, "platform")
    version = python[2] if python else None
    if wheel and not version and wheel[0].slots.get("python_tag"):
        digits = wheel[0].slots["python_tag"]
        version = "%s.%s" % (digits[0], digits[1:])
    if version:
        set_fact(snapshot, "python", {"version": version, "implementation": "CPython", "executable": None,
                                      "prefix": None, "venv": None}, SOURCE)
        stated = True
    if wheel:
        platform = wheel[2]
        system = "Windows" if platform.startswith("win") else "Darwin" if platform.startswith("macosx") else "Linux"
        machine = ("x86_64" if platform.endswith(("x86_64", "amd64")) else "aarch64" if platform.endswith("aarch64")
                   else "arm64" if platform.endswith("arm64") else None)
        set_fact(snapshot, "host.os", {"id": system.lower(), "version_id": None, "pretty": system, "system": system},
                 SOURCE)
        if machine:
            set_fact(snapshot, "host.machine", machine, SOURCE)
        stated = True
    return snapshot if stated else None
