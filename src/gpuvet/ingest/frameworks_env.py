"""Environment reports the ML libraries print for bug reports:

* ``transformers env`` (``transformers-cli env``), ``accelerate env`` and ``llamafactory-cli env``: "- Key: value"
  lines (Platform, Python version, "PyTorch version (GPU?): 2.2.1+cu121 (True)", GPU type, library versions);
* ``python -m xformers.info``: "key:   value" lines (xFormers version, pytorch.version, gpu.name, build.*);
* ``jax.print_environment_info()``: jax/jaxlib/numpy/python, jax.devices, often followed by nvidia-smi;
* TensorFlow's ``tf.sysconfig.get_build_info()`` (an OrderedDict, one line or pretty-printed) and device lines.

Each maps what it states into the same facts collect_env.py writes; what a report does not say stays absent.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from gpuvet.debuglog import survived
from gpuvet.ingest import smi_table
from gpuvet.ingest.common import (
    block_between,
    blocks_starting,
    input_error,
    key_value,
    na,
    new_gpu,
    pasted_source,
    set_fact,
    set_platform,
    set_python,
    shell,
    torch_version_gpu,
    unquote_lines,
)
from gpuvet.ingest.packages import set_packages_and_frameworks
from gpuvet.snapshot import merge

_BACKTICK = re.compile(r"^-\s+`(?P<tool>[A-Za-z_-]+)` version:")
_GB = re.compile(r"^(\d+(?:\.\d+)?)\s*GB$", re.I)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _dash_lines(text: str) -> List[Tuple[str, str]]:
    """The top-level "- Key: value" items; deeper ones (accelerate's config, tab- or space-indented) are skipped."""
    lines = unquote_lines(text).split("\n")
    lead = next((_indent(line) for line in lines if _BACKTICK.match(line.strip())), 0)
    pairs = []
    for line in lines:
        stripped = line.strip()
        if not stripped.startswith("- ") or _indent(line) > lead:
            continue
        pair = key_value(stripped[2:])
        if pair:
            pairs.append(pair)
    return pairs


def _tool_line(text: str, tool: str) -> bool:
    for line in text.split("\n")[:60]:
        match = _BACKTICK.match(line.strip().lstrip("> ").strip())
        if match and match.group("tool").lower() == tool:
            return True
    return False


def looks_like_transformers(text: str) -> bool:
    return _tool_line(text, "transformers")


def looks_like_accelerate(text: str) -> bool:
    return _tool_line(text, "accelerate")


def looks_like_llamafactory(text: str) -> bool:
    return _tool_line(text, "llamafactory")


_LIBRARY_KEY = re.compile(r"^`?(?P<name>[A-Za-z][A-Za-z0-9_.-]*)`? version(?: \([^)]*\))?$")


def _hf_env(text: str, name: str, kind: str, tool: str) -> Dict[str, Any]:
    source = pasted_source(kind)
    snapshot = shell(kind, name)
    pairs = _dash_lines(text)
    if not any(_BACKTICK.match("- " + key + ":") and tool in key.lower() for key, _ in pairs):
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=kind, name=name)
    named: List[Tuple[str, str]] = []
    extra: Dict[str, Dict[str, Any]] = {}
    values: Dict[str, str] = {}
    for key, value in pairs:
        values.setdefault(key, value)
        library = _LIBRARY_KEY.match(key)
        if key.startswith("PyTorch version"):
            version, gpu = torch_version_gpu(value)
            if version:
                named.append(("torch", version))
                if gpu is not None:
                    extra["torch"] = {"cuda_available": gpu}
        elif key.startswith("Tensorflow version"):
            version, gpu = torch_version_gpu(value)
            if version:
                named.append(("tensorflow", version))
        elif key.startswith("Flax version"):
            version, _ = torch_version_gpu(value)
            if version:
                named.append(("flax", version))
        elif key == "Python version":
            set_python(snapshot, value, source)
        elif library and library.group("name").lower() not in ("python", "pytorch"):
            library_name = library.group("name").lower().replace("huggingface_hub", "huggingface-hub")
            named.append(("llamafactory" if library_name == "llamafactory" else library_name, value.split()[0] if value else ""))
    set_platform(snapshot, values.get("Platform"), source)
    set_packages_and_frameworks(snapshot, named, source)
    frameworks = snapshot.get("frameworks", {}).get("value")
    if frameworks and "torch" in frameworks and "torch" in extra:
        frameworks["torch"].update(extra["torch"])
    gpu_type = na(values.get("GPU type"))
    if gpu_type:
        count = values.get("GPU number", "")
        memory = _GB.match(values.get("GPU memory", "").strip())
        number = int(count) if count.strip().isdigit() else None
        gpus = [new_gpu(index, gpu_type) for index in range(number or 1)]
        if memory:
            for gpu in gpus:
                gpu["memory_total_mib"] = int(round(float(memory.group(1)) * 1024))
        extra_fact = {} if number else {"note": "the report names GPU 0's type, not how many GPUs there are",
                                        "count_known": False}
        set_fact(snapshot, "gpus", gpus, source, **extra_fact)
    ram = _GB.match(values.get("System RAM", "").strip())
    if ram:
        set_fact(snapshot, "host.memory_mib", int(round(float(ram.group(1)) * 1024)), source)
    return snapshot


def parse_transformers(text: str, name: str = "<input>") -> Dict[str, Any]:
    return _hf_env(text, name, "transformers-env", "transformers")


def parse_accelerate(text: str, name: str = "<input>") -> Dict[str, Any]:
    return _hf_env(text, name, "accelerate-env", "accelerate")


def parse_llamafactory(text: str, name: str = "<input>") -> Dict[str, Any]:
    return _hf_env(text, name, "llamafactory-env", "llamafactory")


def _dash_blocks(lines: List[str], tool: str) -> List[str]:
    found = []
    i = 0
    while i < len(lines):
        match = _BACKTICK.match(lines[i].strip())
        if not match or match.group("tool").lower() != tool:
            i += 1
            continue
        end = block_between(lines, i, lambda s: s.startswith("-") or s == "Not found", stop_blank=2)
        found.append("\n".join(lines[i:end]))
        i = end
    return found


def transformers_blocks(lines: List[str]) -> List[str]:
    return _dash_blocks(lines, "transformers")


def accelerate_blocks(lines: List[str]) -> List[str]:
    return _dash_blocks(lines, "accelerate")


def llamafactory_blocks(lines: List[str]) -> List[str]:
    return _dash_blocks(lines, "llamafactory")


# --- xformers.info -------------------------------------------------------------------------------------------------

_XFORMERS = re.compile(r"^xFormers (?P<version>\d\S*)$")


def looks_like_xformers(text: str) -> bool:
    lines = [line.strip() for line in text.split("\n")[:200]]
    return any(_XFORMERS.match(line) for line in lines) and any(
        line.startswith(("pytorch.version:", "memory_efficient_attention.")) for line in lines)


def parse_xformers(text: str, name: str = "<input>") -> Dict[str, Any]:
    kind = "xformers-info"
    source = pasted_source(kind)
    snapshot = shell(kind, name)
    version = None
    values: Dict[str, str] = {}
    unavailable = []
    for line in unquote_lines(text).split("\n"):
        stripped = line.strip()
        match = _XFORMERS.match(stripped)
        if match:
            version = match.group("version")
            continue
        pair = key_value(stripped)
        if pair is None or " " in pair[0]:
            continue
        values.setdefault(pair[0], pair[1])
        if pair[0].startswith(("memory_efficient_attention.", "swiglu.", "indexing.")) and pair[1] == "unavailable":
            unavailable.append(pair[0])
    if version is None and "pytorch.version" not in values:
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=kind, name=name)
    named = [("torch", values.get("pytorch.version", ""))]
    info: Dict[str, Dict[str, Any]] = {}
    if version:
        named.append(("xformers", version))
        xformers: Dict[str, Any] = {"ops_unavailable": unavailable}
        built_cuda = values.get("build.cuda_version", "")  # torch's encoding: 1107 -> 11.7, 1201 -> 12.1
        compiled: Dict[str, Any] = {}
        if built_cuda.isdigit() and len(built_cuda) in (3, 4):
            compiled["cuda"] = "{}.{}".format(int(built_cuda) // 100, int(built_cuda) % 100)
        if na(values.get("build.torch_version")):
            compiled["torch"] = values["build.torch_version"]
        if na(values.get("build.env.TORCH_CUDA_ARCH_LIST")):
            compiled["cuda_arch_list"] = values["build.env.TORCH_CUDA_ARCH_LIST"]
        if compiled:
            xformers["compiled_with"] = compiled
        info["xformers"] = xformers
    cuda = values.get("pytorch.cuda")
    if cuda in ("available", "not available"):
        info["torch"] = {"cuda_available": cuda == "available"}
    set_packages_and_frameworks(snapshot, named, source)
    frameworks = snapshot.get("frameworks", {}).get("value")
    if frameworks:
        for framework, extra in info.items():
            if framework in frameworks:
                frameworks[framework].update(extra)
            elif framework == "xformers" and version:
                frameworks["xformers"] = {"version": version, "source": source, **extra}
    gpu_name = na(values.get("gpu.name"))
    if gpu_name:
        gpu = new_gpu(0, gpu_name)
        capability = values.get("gpu.compute_capability", "")
        gpu["compute_capability"] = capability if re.match(r"^\d+\.\d+$", capability) else None
        set_fact(snapshot, "gpus", [gpu], source, note="xformers.info describes GPU 0 only", count_known=False)
    python = na(values.get("build.python_version"))
    if python and "python" not in snapshot:
        pass  # the Python xformers was built for, not necessarily the one running
    return snapshot


def xformers_blocks(lines: List[str]) -> List[str]:
    found = []
    i = 0
    while i < len(lines):
        if not _XFORMERS.match(lines[i].strip()):
            i += 1
            continue
        end = block_between(lines, i, lambda s: re.match(r"^[\w.@-]+:\s", s + " ") is not None, stop_blank=2)
        found.append("\n".join(lines[i:end]))
        i = end
    return found


# --- jax.print_environment_info() ----------------------------------------------------------------------------------

_JAX_KEYS = ("jax:", "jaxlib:", "numpy:", "python:", "jax.devices", "process_count:", "platform:")
_DEVICES = re.compile(r"^jax\.devices \((?P<total>\d+) total, (?P<local>\d+) local\): \[(?P<devices>.*)$")


def looks_like_jax(text: str) -> bool:
    lines = [line.strip() for line in text.split("\n")[:100]]
    return any(line.startswith("jax:") for line in lines) and any(line.startswith("jax.devices") for line in lines)


def parse_jax(text: str, name: str = "<input>") -> Dict[str, Any]:
    kind = "jax-env"
    source = pasted_source(kind)
    snapshot = shell(kind, name)
    lines = unquote_lines(text).split("\n")
    values: Dict[str, str] = {}
    devices = None
    for line in lines:
        stripped = line.strip().lstrip(">").strip() if line.strip().startswith(">>>") else line.strip()
        match = _DEVICES.match(stripped)
        if match:
            devices = match
            continue
        pair = key_value(stripped)
        if pair and pair[0] in ("jax", "jaxlib", "numpy", "python", "process_count", "platform"):
            values.setdefault(pair[0], pair[1])
    if "jax" not in values:
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=kind, name=name)
    set_python(snapshot, values.get("python"), source)
    extra: Dict[str, Any] = {}
    if devices:
        listed = devices.group("devices")
        platform = "gpu" if re.search(r"\b(?:Gpu|Cuda|Rocm)Device", listed) else "tpu" if "TpuDevice" in listed else \
            "cpu" if "CpuDevice" in listed else None
        extra = {"device_platform": platform, "device_count": int(devices.group("total"))}
    set_packages_and_frameworks(snapshot, [("jax", values.get("jax", "")), ("jaxlib", values.get("jaxlib", "")),
                                           ("numpy", values.get("numpy", ""))], source)
    frameworks = snapshot.get("frameworks", {}).get("value")
    if frameworks and "jax" in frameworks:
        frameworks["jax"].update({k: v for k, v in extra.items() if v is not None})
    uname = values.get("platform", "")
    release = re.search(r"release='([^']*)'", uname)
    machine = re.search(r"machine='([^']*)'", uname)
    if "system='Linux'" in uname:
        set_fact(snapshot, "host.os", {"id": None, "version_id": None, "pretty": None, "system": "Linux"}, source)
        if release:
            set_fact(snapshot, "host.kernel", release.group(1), source)
            set_fact(snapshot, "host.wsl", "microsoft" in release.group(1).lower(), source)
    if machine:
        set_fact(snapshot, "host.machine", machine.group(1), source)
    return _with_smi(snapshot, lines, source)


def _with_smi(snapshot: Dict[str, Any], lines: List[str], source: str) -> Dict[str, Any]:
    """The nvidia-smi table the report prints after itself: parsed as nvidia-smi when whole, else its banner."""
    from gpuvet.ingest.embedded_blocks import smi_tables

    for table in smi_tables(lines)[:1]:
        try:
            return merge(snapshot, smi_table.parse(table, "embedded"))
        except Exception:
            survived(__name__, 'the nvidia-smi table in an environment report')
            banner = smi_table.BANNER.search(table)
            if banner:
                set_fact(snapshot, "driver.version", banner.group("driver"), source)
                if banner.group("cuda") and na(banner.group("cuda")):
                    set_fact(snapshot, "driver.cuda_max", banner.group("cuda"), source)
    return snapshot


def jax_blocks(lines: List[str]) -> List[str]:
    # its lines, then (often) "$ nvidia-smi" and the table after two blank lines: up to a fence or 3 blank lines
    return [block for block in blocks_starting(lines, "jax:", stop_blank=3) if looks_like_jax(block)]


# --- TensorFlow build info -----------------------------------------------------------------------------------------


def looks_like_tensorflow(text: str) -> bool:
    return "'cuda_version'" in text and ("'is_cuda_build'" in text or "'cudnn_version'" in text)


def _string_item(text: str, key: str) -> Optional[str]:
    at = text.find("'" + key + "'")
    if at < 0:
        return None
    match = re.match(r"'[^']*'\s*[,:]\s*(?:'(?P<text>[^']*)'|(?P<word>True|False))", text[at:at + 200])
    if not match:
        return None
    return match.group("text") if match.group("text") is not None else match.group("word")


def parse_tensorflow(text: str, name: str = "<input>") -> Dict[str, Any]:
    kind = "tensorflow-build-info"
    source = pasted_source(kind)
    snapshot = shell(kind, name)
    cuda = _string_item(text, "cuda_version")
    is_cuda = _string_item(text, "is_cuda_build")
    if cuda is None and is_cuda is None:
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=kind, name=name)
    build: Dict[str, Any] = {"cuda": major_minor_or(cuda), "cudnn": _string_item(text, "cudnn_version"),
                             "is_cuda_build": is_cuda == "True" if is_cuda else None,
                             "is_rocm_build": _string_item(text, "is_rocm_build") == "True"}
    at = text.find("'cuda_compute_capabilities'")
    if at >= 0:
        close = text.find("]", at)
        if close > at:
            build["cuda_compute_capabilities"] = re.findall(r"'((?:sm|compute)_\d+)'", text[at:close])
    version = None
    for line in text.split("\n"):
        match = re.match(r"^\s*(?:TensorFlow version|tf\.__version__|tensorflow)\s*[:=]\s*'?(\d+\.\d+\.\d+\S*?)'?\s*$",
                         line, re.I)
        if match:
            version = match.group(1)
            break
    gpus: List[Dict[str, Any]] = []
    for line in text.split("\n"):
        if "PhysicalDevice(" in line and "device_type='GPU'" in line:
            device = new_gpu(len(gpus), None)
            device_name = re.search(r"'device_name':\s*'([^']*)'", line)
            capability = re.search(r"'compute_capability':\s*\((\d+),\s*(\d+)\)", line)
            device["name"] = device_name.group(1) if device_name else None
            device["compute_capability"] = "{}.{}".format(*capability.groups()) if capability else None
            gpus.append(device)
    if gpus:
        set_fact(snapshot, "gpus", gpus, source, tensorflow_build=build)
    if version:
        info = {"version": version, "source": source, **{k: v for k, v in build.items() if k != "is_cuda_build"}}
        if build["is_cuda_build"] is False:
            info["cuda"] = None
        set_fact(snapshot, "frameworks", {"tensorflow": info}, source)
    snapshot["origin"]["tensorflow_build"] = build  # the build names no TensorFlow version: kept, not a framework
    return snapshot


def major_minor_or(value: Optional[str]) -> Optional[str]:
    match = re.match(r"^(\d+)\.(\d+)", value or "")
    return "{}.{}".format(match.group(1), match.group(2)) if match else (value or None)


def tensorflow_blocks(lines: List[str]) -> List[str]:
    found = []
    i = 0
    while i < len(lines):
        if "'cuda_version'" not in lines[i] and "OrderedDict([" not in lines[i] and "'cpu_compiler'" not in lines[i]:
            i += 1
            continue
        end = block_between(lines, i, lambda s: s.startswith(("(", "'", "[", "]", "physical device", "logical device"))
                            or "OrderedDict" in s or s.endswith(("),", ")])", "',", "]),")), stop_blank=2)
        block = "\n".join(lines[i:end])
        if looks_like_tensorflow(block):
            found.append(block)
        i = end
    return found
