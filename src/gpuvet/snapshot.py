"""Reading, merging and querying snapshots (the schema is docs/SNAPSHOT.md).

The probe and the ingest parsers build plain dicts; everything downstream reads them through
:class:`SnapshotView`, which turns facts into typed answers and never raises on a missing section.
"""

from __future__ import annotations

import copy
import json
import re
import time
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, TypedDict

from gpuvet import __version__
from gpuvet.errors import InputError
from gpuvet.models import Message
from gpuvet.probe.facts import FAILED, FOUND, MISSING, is_found, missing, value_of
from gpuvet.probe.names import canonical_name

SCHEMA_VERSION = 1

SECTIONS = {
    "host": ("hostname", "os", "kernel", "machine", "glibc", "cpu", "memory_mib", "container", "wsl", "gcc", "platform"),
    "driver": ("version", "cuda_max", "kernel_module", "nvml_binding", "error", "cuda_compat"),
}
TOP_LEVEL_FACTS = (
    "gpus",
    "topology",
    "cuda_toolkits",
    "cudnn",
    "nccl",
    "python",
    "pip",
    "conda",
    "packages",
    "frameworks",
    "binaries",
    "env",
    "xid_events",
    "disks",  # free space where pip's cache, site-packages, conda and the HF cache live (gpuvet.probe.disks)
    "network",  # pip index reachability, collected by a live `gpuvet check` (gpuvet.sources.package_indexes)
    "gpu_p2p",  # peer-to-peer support per GPU pair (a pasted `nvidia-smi topo -p2p r`)
    "damage",  # what a broken install left in site-packages (gpuvet.probe.damage)
    "container_engine",  # how the Docker daemon runs containers (a pasted `docker info`)
    "pci",  # IOMMU state and the PCIe switch ports with ACS redirect (gpuvet.probe.pci, a pasted lspci -vvv)
    "infiniband",  # RDMA devices (InfiniBand, RoCE), their port states, GPUDirect RDMA's module (gpuvet.probe.infiniband)
    "nccl_net_plugin",  # the network plugin library NCCL would load (gpuvet.probe.comm_stack)
    "mpi",  # the MPI on PATH: implementation and version (gpuvet.probe.comm_stack)
    "ucx",  # the UCX on PATH: its version (gpuvet.probe.comm_stack)
)

# The shape of each found value that the checks and renderers rely on (docs/SNAPSHOT.md). A hand-edited or damaged
# snapshot with another shape stops at load time with one line, instead of as a traceback deep inside a check.
_OBJECT, _LIST_OF_OBJECTS, _OBJECT_OF_OBJECTS, _TEXT = "an object", "a list of objects", "an object of objects", "a string"
_LIST_OF_NAMED = "a list of objects with a \"name\""  # packages: merged and looked up by name
VALUE_SHAPES = {
    "host.os": _OBJECT,
    "host.cpu": _OBJECT,
    "host.container": _OBJECT,
    "host.platform": _OBJECT,
    "driver.version": _TEXT,
    "driver.cuda_max": _TEXT,
    "driver.cuda_compat": _TEXT,
    "network": _OBJECT,
    "disks": _OBJECT,
    "driver.kernel_module": _TEXT,
    "driver.nvml_binding": _OBJECT,
    "gpus": _LIST_OF_OBJECTS,
    "topology": _OBJECT,
    "cuda_toolkits": _LIST_OF_OBJECTS,
    "cudnn": _LIST_OF_OBJECTS,
    "nccl": _LIST_OF_OBJECTS,
    "python": _OBJECT,
    "pip": _OBJECT,
    "conda": _OBJECT,
    "packages": _LIST_OF_NAMED,
    "frameworks": _OBJECT_OF_OBJECTS,
    "binaries": _LIST_OF_OBJECTS,
    "env": _OBJECT,
    "xid_events": _LIST_OF_OBJECTS,
    "gpu_p2p": _OBJECT,
    "damage": _LIST_OF_OBJECTS,
    "container_engine": _OBJECT,
    "pci": _OBJECT,
    "infiniband": _OBJECT,
    "nccl_net_plugin": _OBJECT,
    "mpi": _OBJECT,
    "ucx": _OBJECT,
}


def new_snapshot(origin_type: str, inputs: Iterable[str] = (), host: Optional[str] = None) -> Dict[str, Any]:
    """An empty snapshot envelope; parsers fill in the sections they know."""
    origin: Dict[str, Any] = {"type": origin_type, "inputs": list(inputs)}
    if host:
        origin["host"] = host
    return {
        "schema_version": SCHEMA_VERSION,
        "gpuvet_version": __version__,
        "kind": "snapshot",
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),  # as the probe writes it (no datetime import)
        "origin": origin,
    }


def looks_like_snapshot(document: Any) -> bool:
    return isinstance(document, dict) and document.get("kind") == "snapshot" and "schema_version" in document


def load_snapshot(text: str, name: str = "snapshot") -> Dict[str, Any]:
    """Parse and validate a snapshot JSON document; InputError with one clear line when it is not one."""
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: "[[[[..." nested past the parser's depth
        raise InputError.said("errors.snapshot_not_json", name=name, detail=str(exc))
    return validate_snapshot(document, name)


# The fields of one GPU record the checks read, and the JSON types each may hold (None: the tool did not say).
_NUMBER = (int, float)
GPU_FIELDS: Dict[str, Tuple[type, ...]] = {
    "name": (str,), "index": (int,), "uuid": (str,), "serial": (str,), "architecture": (str,),
    "compute_capability": (str,), "memory_total_mib": _NUMBER, "memory_used_mib": _NUMBER, "minor_number": (int,),
    "ecc": (dict,), "pcie": (dict,), "clocks": (dict,), "mig_mode": (str,), "mig_devices": (list,),
    "virtualization_mode": (str,), "persistence_mode": (bool,), "power_limit_w": _NUMBER,
    "power_default_limit_w": _NUMBER, "power_draw_w": _NUMBER, "temperature_c": _NUMBER,
    "throttle_reasons": (list,), "processes": (list,), "pci_bus_id": (str,), "vbios": (str,),
    "utilization_percent": _NUMBER,
}


_COMPUTE_CAPABILITY = re.compile(r"[0-9]{1,3}\.[0-9]{1,3}[a-z]?\Z")


def _check_gpus(document: Mapping[str, Any], name: str) -> None:
    """Each GPU record's fields have the types the checks rely on: the first bad field is named, once, here."""
    fact = document.get("gpus")
    if not isinstance(fact, dict) or fact.get("status") != FOUND or not isinstance(fact.get("value"), list):
        return
    for position, gpu in enumerate(fact["value"]):
        if not isinstance(gpu, dict):
            raise InputError.said("errors.snapshot_gpu_not_object", name=name, position=position,
                                  type=type(gpu).__name__)
        cc = gpu.get("compute_capability")
        if isinstance(cc, str) and not _COMPUTE_CAPABILITY.match(cc):  # "9"*5000 would reach int() in every check
            raise InputError.said("errors.snapshot_gpu_cc", name=name, position=position, value=repr(cc[:20]))
        for field, kinds in GPU_FIELDS.items():
            value = gpu.get(field)
            if value is None or isinstance(value, kinds) and not (kinds != (bool,) and isinstance(value, bool)):
                continue
            wanted = " or ".join(k.__name__ for k in kinds)
            raise InputError.said("errors.snapshot_gpu_field", name=name, position=position, field=field,
                                  wanted=wanted, type=type(value).__name__)


def validate_snapshot(document: Any, name: str = "snapshot") -> Dict[str, Any]:
    if not looks_like_snapshot(document):
        raise InputError.said("errors.snapshot_not_snapshot", name=name)
    version = document.get("schema_version")
    if version != SCHEMA_VERSION:
        raise InputError.said("errors.snapshot_schema", name=name, version=repr(version), supported=SCHEMA_VERSION)
    for section, keys in SECTIONS.items():
        value = document.get(section, {})
        if not isinstance(value, dict):
            raise InputError.said("errors.snapshot_section", name=name, section=repr(section))
        for key in keys:
            _check_fact(value.get(key), f"{section}.{key}", name)
    for key in TOP_LEVEL_FACTS:
        _check_fact(document.get(key), key, name)
    _check_gpus(document, name)
    return document


def _check_fact(fact: Any, where: str, name: str) -> None:
    if fact is None:
        return
    if not isinstance(fact, dict) or fact.get("status") not in (FOUND, MISSING, FAILED):
        raise InputError.said("errors.snapshot_not_fact", name=name, where=where)
    shape = VALUE_SHAPES.get(where)
    if shape is not None and fact["status"] == FOUND and not _has_shape(fact.get("value"), shape):
        raise InputError.said("errors.snapshot_fact_shape", name=name, where=where,
                              shape=Message("errors.snapshot_shape." + shape.replace(" ", "_")),
                              type=type(fact.get("value")).__name__)


def _has_shape(value: Any, shape: str) -> bool:
    if shape == _TEXT:
        return isinstance(value, str)
    if shape == _OBJECT:
        return isinstance(value, dict)
    if shape == _LIST_OF_OBJECTS:
        return isinstance(value, list) and all(isinstance(item, dict) for item in value)
    if shape == _LIST_OF_NAMED:
        return isinstance(value, list) and all(isinstance(item, dict) and isinstance(item.get("name"), str) for item in value)
    return isinstance(value, dict) and all(isinstance(item, dict) for item in value.values())


def _rank(fact: Any) -> int:
    if not isinstance(fact, dict):
        return 0
    return {FOUND: 3, FAILED: 2, MISSING: 1}.get(fact.get("status", ""), 0)


def _merge_fact(old: Any, new: Any, key: str) -> Any:
    if new is None:
        return old
    if old is None:
        return new
    if key == "packages" and is_found(old) and is_found(new):
        by_name = {p["name"]: p for p in old["value"]}
        by_name.update({p["name"]: p for p in new["value"]})
        merged = dict(new)
        merged["value"] = sorted(by_name.values(), key=lambda p: p["name"])
        return merged
    if key == "frameworks" and is_found(old) and is_found(new):
        merged = dict(new)
        combined = dict(old["value"])
        for fw, info in new["value"].items():
            combined[fw] = {**combined.get(fw, {}), **{k: v for k, v in info.items() if v is not None}}
        merged["value"] = combined
        return merged
    return new if _rank(new) >= _rank(old) else old


def merge(base: Mapping[str, Any], other: Mapping[str, Any]) -> Dict[str, Any]:
    """Merge ``other`` into a copy of ``base``: found beats missing/failed; later found beats earlier found."""
    result = copy.deepcopy(dict(base))
    for section in SECTIONS:
        if section in other:
            target = result.setdefault(section, {})
            for key, fact in other[section].items():
                target[key] = _merge_fact(target.get(key), fact, key)
    for key in TOP_LEVEL_FACTS:
        if key in other:
            result[key] = _merge_fact(result.get(key), other[key], key)
    before, after = result.get("origin", {}), other.get("origin", {})
    origin: Dict[str, Any] = {"type": "merged", "inputs": list(before.get("inputs", [])) + list(after.get("inputs", []))}
    # Keep what says whose machine this is (a fleet host, a provider's offer) when only one input carries it.
    for key in ("host", "offer"):
        carried = [o[key] for o in (before, after) if o.get(key)]
        if len(carried) == 1:
            origin[key] = carried[0]
    images = list(before.get("images") or []) + list(after.get("images") or [])
    if images:  # what each screenshot read, kept for the report (gpuvet.ingest.screenshot)
        origin["images"] = images
    result["origin"] = origin
    return result


def merge_all(snapshots: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
    """:func:`merge` folded over ``snapshots`` in order (each later one's found facts win), in time linear in their
    size: the fold itself copied everything merged so far at each step and re-sorted every package, which made a
    paste of thousands of tool blocks (gpuvet.ingest.embedded) quadratic. Same result as the fold, to the byte."""
    if not snapshots:
        return new_snapshot("merged")
    result = copy.deepcopy(dict(snapshots[0]))
    if len(snapshots) == 1:
        return result
    first = result.get("origin", {})
    inputs: List[Any] = list(first.get("inputs", []))
    images: List[Any] = list(first.get("images") or [])
    carried = {key: first.get(key) for key in ("host", "offer")}
    by_name: Optional[Dict[str, Any]] = None  # the found packages merged so far, by name; sorted once at the end
    for other in snapshots[1:]:
        for section in SECTIONS:
            if section in other:
                target = result.setdefault(section, {})
                for key, fact in other[section].items():
                    target[key] = _merge_fact(target.get(key), copy.deepcopy(fact), key)
        for key in TOP_LEVEL_FACTS:
            if key not in other:
                continue
            new = copy.deepcopy(other[key])
            if key == "packages" and is_found(result.get(key)) and is_found(new):
                if by_name is None:
                    by_name = {p["name"]: p for p in result[key]["value"]}
                by_name.update({p["name"]: p for p in new["value"]})
                result[key] = new  # the latest found fact's envelope, as merge keeps; its value is set below
            else:
                chosen = _merge_fact(result.get(key), new, key)
                if key == "packages" and chosen is new:
                    by_name = None
                result[key] = chosen
        after = other.get("origin", {})
        inputs += list(after.get("inputs", []))
        images += list(after.get("images") or [])
        for key in carried:  # as merge: kept when only one side carries it, dropped when both do
            carried[key] = (None if carried[key] and after.get(key) else carried[key] or after.get(key)) or None
    if by_name is not None:
        result["packages"]["value"] = sorted(by_name.values(), key=lambda p: p["name"])
    origin: Dict[str, Any] = {"type": "merged", "inputs": inputs}
    origin.update({key: value for key, value in carried.items() if value})
    if images:
        origin["images"] = images
    result["origin"] = origin
    return result


class CodeUnits(TypedDict, total=False):
    """Code units of one file that carry the same archs (gpuvet.probe.binaries.unit_groups)."""

    count: int
    sass: List[str]
    ptx: List[str]
    isa: Dict[str, str]  # PTX arch -> the PTX ISA version its units name


class BinaryReading(TypedDict, total=False):
    """One CUDA binary of an installed package as the probe read it (gpuvet.probe.binaries: ``scan_site_packages``
    adds ``package`` to ``ScanResult.as_dict``). ``error``: why the file could not be read; None when it was."""

    package: str
    path: str
    sass: List[str]
    ptx: List[str]
    error: Optional[str]
    units: List[CodeUnits]


class LibraryReading(TypedDict, total=False):
    """One cuDNN or NCCL found on the machine (gpuvet.probe.libraries; a pasted log gives the version alone): where it
    was read (``source``: a header, a library file, a wheel), from which wheel when one ships it."""

    version: Optional[str]
    path: Optional[str]
    source: str
    package: Optional[str]


class SnapshotView:
    """Typed, forgiving accessors over a snapshot dict. Missing sections read as missing facts."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.document = document
        self._packages: Optional[Dict[str, Dict[str, Any]]] = None

    # -- raw facts ---------------------------------------------------------------------------------------------
    def fact(self, path: str) -> Dict[str, Any]:
        """The fact at ``section.key`` or ``key``; a missing fact (reason: not provided) when absent."""
        node: Any = self.document
        for part in path.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return missing("not in this snapshot")
            node = node[part]
        return node if isinstance(node, dict) and "status" in node else missing("not a fact")

    def value(self, path: str, default: Any = None) -> Any:
        return value_of(self.fact(path), default)

    def source(self, path: str) -> Optional[str]:
        fact = self.fact(path)
        return fact.get("source") if is_found(fact) else None

    # -- convenient answers ------------------------------------------------------------------------------------
    @property
    def driver_version(self) -> Optional[str]:
        return self.value("driver.version") or self.value("driver.kernel_module")

    @property
    def driver_cuda_max(self) -> Optional[str]:
        return self.value("driver.cuda_max")

    @property
    def driver_error(self) -> Optional[str]:
        return self.value("driver.error")

    @property
    def gpus(self) -> List[Dict[str, Any]]:
        return list(self.value("gpus", []) or [])

    @property
    def whole_gpus(self) -> List[Dict[str, Any]]:
        """The GPUs that are not split into MIG instances: the ones that talk to each other over NVLink or PCIe."""
        return [g for g in self.gpus if (g.get("mig_mode") or "").lower() != "enabled"]

    @property
    def packages(self) -> Dict[str, Dict[str, Any]]:
        # Built once per view: checks look packages up per framework and candidate build.
        if self._packages is None:
            self._packages = {p["name"]: p for p in self.value("packages", []) or [] if isinstance(p, dict) and "name" in p}
        return self._packages

    def package_version(self, name: str) -> Optional[str]:
        package = self.packages.get(canonical_name(name))
        return package.get("version") if package else None

    @property
    def frameworks(self) -> Dict[str, Dict[str, Any]]:
        return dict(self.value("frameworks", {}) or {})

    @property
    def python_version(self) -> Optional[str]:
        return (self.value("python") or {}).get("version")

    @property
    def toolkits(self) -> List[Dict[str, Any]]:
        return list(self.value("cuda_toolkits", []) or [])

    @property
    def nvcc_on_path(self) -> Optional[Dict[str, Any]]:
        for toolkit in self.toolkits:
            if toolkit.get("on_path"):
                return toolkit
        return None

    @property
    def cudnn(self) -> List[LibraryReading]:
        return list(self.value("cudnn", []) or [])

    @property
    def nccl(self) -> List[LibraryReading]:
        return list(self.value("nccl", []) or [])

    @property
    def binaries(self) -> List[BinaryReading]:
        return list(self.value("binaries", []) or [])

    @property
    def origin_is_live(self) -> bool:
        return self.document.get("origin", {}).get("type") == "probe"
