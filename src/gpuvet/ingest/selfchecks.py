"""What a framework's own install self-check prints:

* ``python -m bitsandbytes`` (and the "BUG REPORT" banner bitsandbytes < 0.43 printed on import): the CUDA runtime
  it found, the highest compute capability, the binary it loaded (or the CPU fallback);
* ``paddle.utils.run_check()`` (``fluid.install_check.run_check()`` before 2.0): per device the compute capability,
  the driver's and the runtime's CUDA API versions, cuDNN, and whether it works on one or all GPUs;
* ``mindspore.run_check()``: the version and the platform it was installed for.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

from gpuvet.ingest.common import (
    block_between,
    input_error,
    major_minor,
    new_gpu,
    pasted_source,
    python_record,
    set_fact,
    shell,
    unquote_lines,
)
from gpuvet.ingest.packages import set_packages_and_frameworks

# --- bitsandbytes --------------------------------------------------------------------------------------------------

_BNB_CC = re.compile(r"Highest compute capability among GPUs detected: (\d+\.\d+)")
_BNB_CUDA = re.compile(r"Detected CUDA version (\d+)")
_BNB_RUNTIME = re.compile(r"CUDA runtime path found: (\S+)")
_BNB_BINARY = re.compile(r"(?:Loading binary |^bin )(\S*libbitsandbytes_\w+\.(?:so|dll|dylib))")
_SITE = re.compile(r"/lib/python(\d+\.\d+)(t?)/site-packages/bitsandbytes")  # python3.13t: free-threaded


def looks_like_bitsandbytes(text: str) -> bool:
    return "CUDA SETUP:" in text and "bitsandbytes" in text


def parse_bitsandbytes(text: str, name: str = "<input>") -> Dict[str, Any]:
    kind = "bitsandbytes"
    source = pasted_source(kind)
    snapshot = shell(kind, name)
    if "CUDA SETUP:" not in text:
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=kind, name=name)
    report: Dict[str, Any] = {}
    cuda = _BNB_CUDA.search(text)
    if cuda:
        digits = cuda.group(1)  # "117" -> 11.7, "101" -> 10.1
        report["cuda_runtime"] = "{}.{}".format(digits[:-1], digits[-1]) if len(digits) >= 2 else digits
    runtime = _BNB_RUNTIME.search(text)
    if runtime:
        report["cuda_runtime_path"] = runtime.group(1)
    binary: Optional[str] = None
    for line in text.split("\n"):
        match = _BNB_BINARY.search(line.strip())
        if match:
            binary = match.group(1)
    if binary:
        report["binary"] = binary
    report["cpu_fallback"] = "Defaulting to libbitsandbytes_cpu" in text
    report["cuda_detection_failed"] = "CUDA detection failed" in text
    capability = _BNB_CC.search(text)
    if capability:
        gpu = new_gpu(0, None)
        gpu["compute_capability"] = capability.group(1)
        set_fact(snapshot, "gpus", [gpu], source, count_known=False, bitsandbytes=report,
                 note="bitsandbytes names only the highest compute capability among the GPUs")
    else:
        snapshot["origin"]["bitsandbytes"] = report
    python = _SITE.search(text)
    if python:
        set_fact(snapshot, "python", python_record(python.group(1), "python%st" % python.group(1) if python.group(2) else None),
                 source)
    return snapshot


def bitsandbytes_blocks(lines: List[str]) -> List[str]:
    found = []
    i = 0
    while i < len(lines):
        if "BUG REPORT" not in lines[i] and not lines[i].strip().startswith("CUDA SETUP:"):
            i += 1
            continue
        end = block_between(lines, i, lambda s: True, stop_blank=3)
        block = "\n".join(lines[i:end])
        if looks_like_bitsandbytes(block):
            found.append(block)
        i = end
    return found


# --- paddle run_check ----------------------------------------------------------------------------------------------

_PADDLE_START = ("Running verify PaddlePaddle program", "Running Verify Fluid Program")
_PADDLE_NOTE = re.compile(r"device: (?P<device>\d+), (?:GPU Compute|CUDA) Capability: (?P<cc>\d+(?:\.\d+)?), "
                          r"Driver API Version: (?P<driver>\d+\.\d+), Runtime API Version: (?P<runtime>\d+\.\d+)")
_PADDLE_CUDNN = re.compile(r"device: (?P<device>\d+), cuDNN Version: (?P<cudnn>\d+\.\d+)")
_PADDLE_WORKS = re.compile(r"PaddlePaddle works well on (\d+) GPUs?|PaddlePaddle is installed successfully|"
                           r"Your Paddle Fluid is installed successfully")
_PADDLE_ARCH = re.compile(r"GPU architecture in your current machine is (\w+), which is not compatible with Paddle "
                          r"installation with arch: ([\d ]+)")
_PADDLE_VERSION = re.compile(r"^Out\[\d+\]: '(\d+\.\d+\.\d+\S*)'$")


def looks_like_paddle(text: str) -> bool:
    return any(start in text for start in _PADDLE_START) or "PaddlePaddle works well on" in text


def _capability(value: str) -> str:
    return value if "." in value else "{}.{}".format(value[:-1], value[-1])  # fluid printed 70 for 7.0


def parse_paddle(text: str, name: str = "<input>") -> Dict[str, Any]:
    kind = "paddle-run-check"
    source = pasted_source(kind)
    snapshot = shell(kind, name)
    if not looks_like_paddle(text):
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=kind, name=name)
    gpus: Dict[int, Dict[str, Any]] = {}
    driver_api = runtime_api = None
    cudnn: List[str] = []
    version = None
    works = None
    arch: Optional[Dict[str, Any]] = None
    for raw in unquote_lines(text).split("\n"):
        line = raw.strip()
        note = _PADDLE_NOTE.search(line)
        if note:
            gpu = gpus.setdefault(int(note.group("device")), new_gpu(int(note.group("device")), None))
            gpu["compute_capability"] = _capability(note.group("cc"))
            driver_api, runtime_api = note.group("driver"), note.group("runtime")
        found = _PADDLE_CUDNN.search(line)
        if found and found.group("cudnn") not in cudnn:
            cudnn.append(found.group("cudnn"))
        outcome = _PADDLE_WORKS.search(line)
        if outcome:
            works = outcome.group(0)
        mismatch = _PADDLE_ARCH.search(line)
        if mismatch:
            arch = {"gpu_architecture": mismatch.group(1), "built_for": ["sm_" + a for a in mismatch.group(2).split()]}
        out = _PADDLE_VERSION.match(line)
        if out:
            version = out.group(1)
    result: Dict[str, Any] = {"outcome": works or "no result (it did not finish, or the paste ends before it did)"}
    if arch:
        result["arch_mismatch"] = arch
    if gpus:
        set_fact(snapshot, "gpus", [gpus[i] for i in sorted(gpus)], source, count_known=False, run_check=result,
                 note="run_check names the devices it ran on")
    else:
        snapshot["origin"]["run_check"] = result
    if driver_api:
        # cudaDriverGetVersion: the newest CUDA the installed driver supports, what nvidia-smi prints as CUDA Version
        set_fact(snapshot, "driver.cuda_max", driver_api, source)
    if cudnn:
        set_fact(snapshot, "cudnn", [{"version": v, "path": None, "source": source, "package": None} for v in cudnn],
                 source)
    if version:
        extra = {"paddle": {"cuda": major_minor(runtime_api)}} if runtime_api else None
        set_packages_and_frameworks(snapshot, [("paddlepaddle-gpu" if gpus else "paddlepaddle", version)], source,
                                    extra)
    return snapshot


def paddle_blocks(lines: List[str]) -> List[str]:
    found = []
    i = 0
    while i < len(lines):
        if not any(start in lines[i] for start in _PADDLE_START):
            i += 1
            continue
        end = block_between(lines, i, lambda s: re.match(r"^[WIEF]\d{4} ", s) is not None or "Paddle" in s,
                            stop_blank=2)
        found.append("\n".join(lines[i:end]))
        i = end
    return found


# --- mindspore run_check -------------------------------------------------------------------------------------------

_MS_VERSION = re.compile(r"^MindSpore version:\s*(\S+)")
_MS_OK = re.compile(r"MindSpore has been installed (?:on platform \[(?P<platform>\w+)\] )?successfully")


def looks_like_mindspore(text: str) -> bool:
    return "MindSpore version:" in text and ("MindSpore has been installed" in text or "multiplication" in text
                                             or "run_check" in text)


def parse_mindspore(text: str, name: str = "<input>") -> Dict[str, Any]:
    kind = "mindspore-run-check"
    source = pasted_source(kind)
    snapshot = shell(kind, name)
    version = None
    platform = None
    ok = False
    for raw in text.split("\n"):
        line = raw.strip()
        match = _MS_VERSION.match(line)
        if match and version is None:
            version = match.group(1)
        done = _MS_OK.search(line)
        if done:
            ok = True
            platform = done.group("platform")
    if version is None:
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=kind, name=name)
    info: Dict[str, Any] = {"run_check": "ok" if ok else "failed or unfinished"}
    if platform:
        info["device_target"] = platform
    set_packages_and_frameworks(snapshot, [("mindspore", version)], source, {"mindspore": info})
    return snapshot


def mindspore_blocks(lines: List[str]) -> List[str]:
    found = []
    for i, line in enumerate(lines):
        if _MS_VERSION.match(line.strip()):
            end = min(len(lines), i + 3)
            found.append("\n".join(lines[i:end]))
    return found[:1]
