"""SGLang's ``python -m sglang.check_env``: "Key: value" lines (Python, GPUs with their compute capability, CUDA_HOME,
NVCC, the driver, then one line per package), an nvidia-smi topology matrix, ulimit."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Tuple

from gpuvet.debuglog import survived
from gpuvet.ingest import nvcc
from gpuvet.ingest.common import (
    blocks_starting,
    input_error,
    key_value,
    na,
    new_gpu,
    pasted_source,
    set_fact,
    set_python,
    shell,
    unquote_lines,
)
from gpuvet.ingest.packages import set_packages_and_frameworks
from gpuvet.probe import smi

KIND = "sglang-check-env"
_GPU = re.compile(r"^GPU (?P<indexes>\d+(?:,\d+)*)(?P<cc> Compute Capability)?$")
_CAPABILITY = re.compile(r"^\d+\.\d+$")
_NOT_PACKAGES = {"python", "cuda available", "cuda_home", "nvcc", "cuda driver version", "pytorch", "nvidia topology",
                 "hypervisor vendor", "ulimit soft", "rocm_home", "hipcc", "rocm driver version", "legend", "nic legend"}
_RENAMED = {"pil": "pillow", "zmq": "pyzmq", "multipart": "python-multipart", "pytorch": "torch"}
_TAIL = ("Hypervisor vendor:", "ulimit soft:")


def looks_like(text: str) -> bool:
    starts = set()
    for line in text.split("\n")[:80]:
        stripped = line.strip()
        for key in ("Python: ", "CUDA available: ", "PyTorch: ", "sglang: ", "CUDA_HOME: ", "NVCC: "):
            if stripped.startswith(key):
                starts.add(key)
    return {"Python: ", "PyTorch: "} <= starts and len(starts) >= 4


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    source = pasted_source(KIND)
    snapshot = shell(KIND, name)
    lines = unquote_lines(text).split("\n")
    values: Dict[str, str] = {}
    named: List[Tuple[str, str]] = []
    gpus: Dict[int, Dict[str, Any]] = {}
    topology: List[str] = []
    in_topology = False
    for line in lines:
        stripped = line.strip()
        if in_topology:
            if stripped.startswith(_TAIL):
                in_topology = False
            else:
                topology.append(line)
                continue
        pair = key_value(stripped)
        if pair is None:
            continue
        key, value = pair
        gpu = _GPU.match(key)
        if gpu:
            for index in (int(i) for i in gpu.group("indexes").split(",")):
                record = gpus.setdefault(index, new_gpu(index, None))
                if gpu.group("cc"):
                    record["compute_capability"] = value if _CAPABILITY.match(value) else None
                else:
                    record["name"] = na(value)
            continue
        lowered = key.lower()
        if lowered == "nvidia topology":
            in_topology = True
            continue
        values.setdefault(lowered, value)
        if lowered not in _NOT_PACKAGES and re.match(r"^[A-Za-z][A-Za-z0-9_.-]*$", key):
            named.append((_RENAMED.get(lowered, key), value))
    if "python" not in values or "pytorch" not in values and not named:
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=KIND, name=name)
    set_python(snapshot, values.get("python"), source)
    torch = na(values.get("pytorch"))
    if torch and re.match(r"^\d", torch):
        named.insert(0, ("torch", torch))
    set_packages_and_frameworks(snapshot, named, source)
    driver = na(values.get("cuda driver version"))
    if driver and re.match(r"^\d+\.\d+", driver):
        set_fact(snapshot, "driver.version", driver, source)
    toolkit = nvcc.toolkit(values.get("nvcc", ""), source)
    if toolkit is not None:
        home = na(values.get("cuda_home"))
        toolkit["path"] = home
        set_fact(snapshot, "cuda_toolkits", [toolkit], source)
    if gpus:
        set_fact(snapshot, "gpus", [gpus[index] for index in sorted(gpus)], source)
    if topology:
        try:
            set_fact(snapshot, "topology", smi.parse_topo("\n".join(topology), details=True), source)
        except Exception:  # a matrix cut short says nothing; the rest of the report still counts
            survived(__name__, 'a topology matrix cut short')
    return snapshot


def blocks(lines: List[str]) -> List[str]:
    """From its "Python:" line to "ulimit soft:" (its last line), a code fence or two blank lines in a row."""
    return [block for block in blocks_starting(lines, "Python: ", last="ulimit soft:", stop_blank=3) if looks_like(block)]
