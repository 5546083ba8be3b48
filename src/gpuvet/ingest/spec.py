"""A provider's offer written as TOML (docs/SPEC-FORMAT.md): what they promise, before anyone logs in.

Facts from a spec carry source ``spec`` (a promise, not a measurement) and the snapshot's origin is ``spec``.
Unknown keys are an error: a typo (``drvier``) must not silently drop the driver from the check.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List

from gpuvet.debuglog import survived
from gpuvet.ingest import packages as package_parsers
from gpuvet.ingest.common import input_error, new_gpu, python_record, set_fact
from gpuvet.snapshot import new_snapshot

KIND = "spec"
SOURCE = "spec"

# section -> allowed keys; top-level shorthands are folded into these sections first
SCHEMA = {
    "offer": {"provider", "name", "url", "region", "price_per_hour", "currency", "notes"},
    "gpu": {"model", "count", "memory_gib", "compute_capability", "nvlink", "virtualization", "mig", "pcie_gen",
            "pcie_width", "interconnect"},
    "driver": {"version", "cuda"},
    "host": {"os", "cpu", "cpu_cores", "memory_gib", "container", "hostname"},
    "image": {"os", "python", "cuda_toolkit", "cudnn", "nccl", "frameworks", "packages", "container"},
}
SHORTHANDS = {
    "driver": ("driver", "version"),
    "cuda": ("driver", "cuda"),
    "python": ("image", "python"),
    "frameworks": ("image", "frameworks"),
    "virtualization": ("gpu", "virtualization"),
    "nvlink": ("gpu", "nvlink"),
    "os": ("image", "os"),
}
VIRTUALIZATION = {"passthrough": "passthrough", "pass-through": "passthrough", "vgpu": "vgpu", "none": "none",
                  "bare-metal": "none", "baremetal": "none"}


def looks_like(text: str) -> bool:
    if not re.search(r"^[ \t]*\[(gpu|image|driver|offer)\][ \t]*$", text, re.MULTILINE) and not re.search(
        r"^[ \t]*(driver|cuda)[ \t]*=[ \t]*\"", text, re.MULTILINE
    ):
        return False
    try:
        from gpuvet.tomlfile import loads_toml

        loads_toml(text)
    except Exception:
        survived(__name__, "a spec detector's parse")
        return False
    return True


def _normalise(document: Dict[str, Any], name: str) -> Dict[str, Dict[str, Any]]:
    sections: Dict[str, Dict[str, Any]] = {section: {} for section in SCHEMA}
    for key, value in document.items():
        if key in SCHEMA and not (key in SHORTHANDS and not isinstance(value, dict)):
            if not isinstance(value, dict):
                raise input_error("ingest.spec_bad_value", "ingest.hint_spec", name=name, key=key, expected="a [table]")
            for inner in value:
                if inner not in SCHEMA[key]:
                    raise input_error("ingest.spec_unknown_key", "ingest.hint_spec", name=name, key="{}.{}".format(key, inner))
            sections[key].update(value)
        elif key in SHORTHANDS:
            section, inner = SHORTHANDS[key]
            sections[section][inner] = value
        else:
            raise input_error("ingest.spec_unknown_key", "ingest.hint_spec", name=name, key=key)
    return sections


def _expect(value: Any, kinds: tuple, name: str, key: str, expected: str) -> Any:
    if value is not None and (not isinstance(value, kinds) or isinstance(value, bool) and bool not in kinds):
        raise input_error("ingest.spec_bad_value", "ingest.hint_spec", name=name, key=key, expected=expected)
    return value


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    from gpuvet.tomlfile import loads_toml

    try:
        document = loads_toml(text)
    except Exception as exc:  # tomllib.TOMLDecodeError; tomli's has the same shape
        raise input_error("ingest.spec_invalid", "ingest.hint_spec", name=name, error=str(exc))
    sections = _normalise(document, name)
    snapshot = new_snapshot("spec", ["spec:{}".format(name)])
    gpu_section, driver, image, host = sections["gpu"], sections["driver"], sections["image"], sections["host"]

    model = _expect(gpu_section.get("model"), (str,), name, "gpu.model", "a string")
    count = _expect(gpu_section.get("count", 1 if model else None), (int,), name, "gpu.count", "a whole number")
    if count is not None and not 0 <= count <= 1024:
        raise input_error("ingest.spec_bad_value", "ingest.hint_spec", name=name, key="gpu.count", expected="0..1024")
    virtualization = _expect(gpu_section.get("virtualization"), (str,), name, "gpu.virtualization", "passthrough|vgpu|none")
    if virtualization is not None and virtualization.lower() not in VIRTUALIZATION:
        raise input_error("ingest.spec_bad_value", "ingest.hint_spec", name=name, key="gpu.virtualization",
                          expected="passthrough|vgpu|none")
    if model is not None and count is not None:
        gpus: List[Dict[str, Any]] = []
        memory = _expect(gpu_section.get("memory_gib"), (int, float), name, "gpu.memory_gib", "a number")
        capability = _expect(gpu_section.get("compute_capability"), (str,), name, "gpu.compute_capability", 'a string like "9.0"')
        mig = _expect(gpu_section.get("mig"), (bool, str), name, "gpu.mig", "true, false or a profile list")
        for index in range(count):
            gpu = new_gpu(index, model)
            gpu["compute_capability"] = capability
            gpu["memory_total_mib"] = int(memory * 1024) if memory is not None else None
            gpu["virtualization_mode"] = VIRTUALIZATION[virtualization.lower()] if virtualization else None
            if mig is not None:
                gpu["mig_mode"] = "enabled" if mig not in (False, "disabled") else "disabled"
            pcie_gen = _expect(gpu_section.get("pcie_gen"), (int,), name, "gpu.pcie_gen", "a whole number")
            pcie_width = _expect(gpu_section.get("pcie_width"), (int,), name, "gpu.pcie_width", "a whole number")
            if pcie_gen or pcie_width:
                gpu["pcie"] = {"gen_current": pcie_gen, "gen_max": pcie_gen, "width_current": pcie_width, "width_max": pcie_width}
            gpus.append(gpu)
        set_fact(snapshot, "gpus", gpus, SOURCE)
    nvlink = _expect(gpu_section.get("nvlink"), (bool,), name, "gpu.nvlink", "true or false")
    if nvlink is not None:
        set_fact(snapshot, "topology", {"matrix": None, "nvlink": nvlink, "legend": "spec"}, SOURCE)

    version = _expect(driver.get("version"), (str,), name, "driver.version", 'a string like "535.104.05"')
    if version is not None:
        if not re.match(r"^\d{3}\.\d+(\.\d+)?$", version):
            raise input_error("ingest.spec_bad_value", "ingest.hint_spec", name=name, key="driver.version",
                              expected='a driver version like "535.104.05"')
        set_fact(snapshot, "driver.version", version, SOURCE)
    cuda = _expect(driver.get("cuda"), (str,), name, "driver.cuda", 'a string like "12.2"')
    if cuda is not None:
        if not re.match(r"^\d+\.\d+$", cuda):
            raise input_error("ingest.spec_bad_value", "ingest.hint_spec", name=name, key="driver.cuda", expected='"12.2"')
        set_fact(snapshot, "driver.cuda_max", cuda, SOURCE)

    python = _expect(image.get("python"), (str,), name, "image.python", 'a string like "3.10"')
    if python is not None:
        free = python.strip().lower().endswith("t")  # "3.13t": the free-threaded build (PEP 703)
        set_fact(snapshot, "python", python_record(python.strip().rstrip("tT"), "python%st" % python.strip().rstrip("tT") if free else None),
                 SOURCE)
    requirements = []
    for key in ("frameworks", "packages"):
        listed = _expect(image.get(key), (list,), name, "image." + key, 'a list like ["torch==2.3.1+cu121"]')
        for item in listed or []:
            _expect(item, (str,), name, "image." + key, "strings")
            if not package_parsers.FREEZE_LINE.match(item.strip()):
                raise input_error("ingest.spec_bad_value", "ingest.hint_spec", name=name, key="image." + key,
                                  expected='exact pins like "torch==2.3.1+cu121"')
            requirements.append(item.strip())
    if requirements:
        package_parsers.fill_from_packages(snapshot, package_parsers.freeze_packages("\n".join(requirements)), SOURCE)
    toolkit = _expect(image.get("cuda_toolkit"), (str,), name, "image.cuda_toolkit", 'a string like "12.1"')
    if toolkit is not None:
        set_fact(snapshot, "cuda_toolkits", [{"version": toolkit, "path": None, "nvcc": "nvcc", "on_path": True,
                                              "source": SOURCE}], SOURCE)
    for library in ("cudnn", "nccl"):
        value = _expect(image.get(library), (str,), name, "image." + library, 'a string like "8.9.2"')
        if value is not None:
            set_fact(snapshot, library, [{"version": value, "path": None, "source": SOURCE, "package": None}], SOURCE)
    os_name = _expect(image.get("os") or host.get("os"), (str,), name, "image.os", 'a string like "Ubuntu 22.04"')
    if os_name is not None:
        version = re.search(r"(\d+(?:\.\d+)+)", os_name)
        set_fact(snapshot, "host.os", {"id": os_name.split()[0].lower(), "version_id": version.group(1) if version else None,
                                       "pretty": os_name, "system": "Linux"}, SOURCE)
    memory = _expect(host.get("memory_gib"), (int, float), name, "host.memory_gib", "a number")
    if memory is not None:
        set_fact(snapshot, "host.memory_mib", int(memory * 1024), SOURCE)
    offer = {k: v for k, v in sections["offer"].items()}
    if offer:
        snapshot["origin"]["offer"] = offer
    if len(snapshot) <= 5 + (1 if offer else 0) and not any(k in snapshot for k in ("gpus", "driver", "python", "packages")):
        raise input_error("ingest.spec_empty", "ingest.hint_spec", name=name)
    return snapshot


