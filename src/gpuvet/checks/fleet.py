"""Group hosts by every fact that differs, majority first, and say which differences break multi-node jobs.

Pure functions over snapshots: ``fingerprint`` reduces a snapshot to one comparable string per field (None when
the snapshot cannot tell), ``group_fields`` groups hosts by those strings, ``consistency_findings`` turns the
differences that matter into findings (``nccl_mismatch``; ``driver_too_old`` for hosts whose driver tops out at a
lower CUDA than the rest of the fleet).
"""

from __future__ import annotations

import posixpath
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from gpuvet.checks.health import port_is_up, port_state, rdma_ports
from gpuvet.findings import make
from gpuvet.kb.thresholds import load_thresholds
from gpuvet.models import Finding
from gpuvet.probe.facts import is_found
from gpuvet.snapshot import SnapshotView

if TYPE_CHECKING:
    from packaging.version import Version

NONE = "none"  # the snapshot says the thing is absent (no NCCL, no torch), as opposed to None: cannot tell

# Why a differing NCCL breaks multi-node jobs: NCCL maintainers' first question on a multi-node hang is whether
# nodes run different NCCL versions, and users fixed "connecting to address with family 0" by aligning them.
NCCL_SOURCES = ("https://github.com/NVIDIA/nccl/issues/354", "https://github.com/NVIDIA/nccl/issues/1267")
# The driver's maximum CUDA ("CUDA Version" in nvidia-smi) bounds what a build can run (minor-version compat).
DRIVER_SOURCES = ("https://docs.nvidia.com/deploy/cuda-compatibility/",)
# A card whose link trained at fewer lanes than its siblings moves host<->device data proportionally slower; the
# width is what nvidia-smi reports as "Link Width / Current" (pcie.link.width.current).
PCIE_SOURCES = ("https://docs.nvidia.com/deploy/nvidia-smi/index.html",)
# A GPU missing from a node: a GPU that fell off the bus (Xid 79) disappears from nvidia-smi until a reboot.
GPU_COUNT_SOURCES = ("https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",)
# With MIG enabled a process sees GPU instances (slices), not the whole GPU.
MIG_SOURCES = ("https://docs.nvidia.com/datacenter/tesla/mig-user-guide/",)


def _fact_list(view: SnapshotView, key: str) -> Optional[List[Dict[str, Any]]]:
    fact = view.fact(key)
    return list(fact.get("value") or []) if is_found(fact) else None


def _versions(view: SnapshotView, key: str) -> Optional[str]:
    items = _fact_list(view, key)
    if items is None:
        return None
    versions = sorted({str(item.get("version")) for item in items if item.get("version")})
    return ", ".join(versions) if versions else NONE


def _toolkit(view: SnapshotView) -> Optional[str]:
    on_path = view.nvcc_on_path
    if on_path and on_path.get("version"):
        return str(on_path["version"])
    return _versions(view, "cuda_toolkits")


def _torch(view: SnapshotView) -> Optional[str]:
    frameworks = view.fact("frameworks")
    torch = (frameworks.get("value") or {}).get("torch") if is_found(frameworks) else None
    if torch and torch.get("version"):
        return str(torch["version"])
    version = view.package_version("torch")
    if version:
        return version
    if is_found(frameworks) or is_found(view.fact("packages")):
        return NONE
    return None


def _gpus(view: SnapshotView) -> Optional[List[Dict[str, Any]]]:
    return _fact_list(view, "gpus")


def _gpu_model(view: SnapshotView) -> Optional[str]:
    gpus = _gpus(view)
    if gpus is None:
        return None
    counts = Counter(str(gpu.get("name") or "?") for gpu in gpus)
    return ", ".join(name if len(counts) == 1 else f"{count}× {name}" for name, count in sorted(counts.items())) or NONE


def _gpu_count(view: SnapshotView) -> Optional[str]:
    gpus = _gpus(view)
    return None if gpus is None else str(len(gpus))


def _pcie(view: SnapshotView) -> Optional[str]:
    # The link width and the generation the link can reach; the *current* generation drops at idle (power
    # saving), so comparing it would flag healthy idle nodes.
    gpus = _gpus(view)
    if not gpus:
        return None
    links = []
    for gpu in gpus:
        pcie = gpu.get("pcie") or {}
        if pcie.get("width_current") is None and pcie.get("gen_max") is None:
            return None
        links.append(f"Gen{pcie.get('gen_max', '?')} x{pcie.get('width_current', '?')}")
    counts = Counter(links)
    return ", ".join(f"{count}× {link}" for link, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _nvlink(view: SnapshotView) -> Optional[str]:
    topology = view.value("topology")
    if not isinstance(topology, dict) or topology.get("nvlink") is None:
        return None
    return "yes" if topology["nvlink"] else "no"


def _mig(view: SnapshotView) -> Optional[str]:
    gpus = _gpus(view)
    if not gpus:
        return None
    modes = sorted({str(gpu.get("mig_mode")) for gpu in gpus if gpu.get("mig_mode")})
    return ", ".join(modes) if modes else None


def _rdma_ports(view: SnapshotView) -> Optional[str]:
    """``8 up`` or ``7 up; mlx5_3 port 1: DOWN / Disabled``: the node whose port is down stands apart."""
    ports = rdma_ports(view)
    if ports is None:
        return None
    if not ports:
        return NONE
    rules = load_thresholds().health
    up = sum(1 for _, port in ports if port_is_up(port, rules))
    down = ["%s port %s: %s" % (device, port.get("port"), port_state(port))
            for device, port in ports if port_is_up(port, rules) is False]
    return "; ".join(["%d up" % up] + down)


def _peer_memory(view: SnapshotView) -> Optional[str]:
    """GPUDirect RDMA's module on a node with RDMA ports (``nvidia_peermem``, or ``none``)."""
    rdma = view.value("infiniband")
    if not rdma_ports(view) or "peer_memory_module" not in rdma:
        return None
    return rdma["peer_memory_module"] or NONE


def _nccl_net_plugin(view: SnapshotView) -> Optional[str]:
    """The file name of the network plugin NCCL would load (``libnccl-net-ofi.so``), or ``none``."""
    plugin = view.value("nccl_net_plugin")
    if not isinstance(plugin, dict):
        return None
    return posixpath.basename(plugin["loads"]) if plugin.get("loads") else NONE


def _mpi(view: SnapshotView) -> Optional[str]:
    """``Open MPI 5.0.11``; ``none`` when the probe found no mpirun on PATH."""
    if view.fact("mpi").get("status") == "missing" and "mpi" in view.document:
        return NONE
    mpi = view.value("mpi")
    return "%s %s" % (mpi.get("implementation") or "MPI", mpi["version"]) if isinstance(mpi, dict) and mpi.get("version") else None


def _ucx(view: SnapshotView) -> Optional[str]:
    if view.fact("ucx").get("status") == "missing" and "ucx" in view.document:
        return NONE
    ucx = view.value("ucx")
    return str(ucx["version"]) if isinstance(ucx, dict) and ucx.get("version") else None


FIELDS: Tuple[Tuple[str, Callable[[SnapshotView], Optional[str]]], ...] = (
    ("driver", lambda v: v.driver_version),
    ("cuda_max", lambda v: v.driver_cuda_max),
    ("toolkit", _toolkit),
    ("cudnn", lambda v: _versions(v, "cudnn")),
    ("nccl", lambda v: _versions(v, "nccl")),
    ("torch", _torch),
    ("gpu_model", _gpu_model),
    ("gpu_count", _gpu_count),
    ("pcie", _pcie),
    ("nvlink", _nvlink),
    ("mig", _mig),
    ("rdma_ports", _rdma_ports),
    ("gpudirect_rdma", _peer_memory),
    ("nccl_net_plugin", _nccl_net_plugin),
    ("mpi", _mpi),
    ("ucx", _ucx),
    ("python", lambda v: v.python_version),
)
FIELD_NAMES = tuple(name for name, _ in FIELDS)


def fingerprint(snapshot: Mapping[str, Any]) -> Dict[str, Optional[str]]:
    view = SnapshotView(snapshot)
    return {name: reader(view) for name, reader in FIELDS}


@dataclass(frozen=True)
class ValueGroup:
    value: Optional[str]  # None: the snapshot could not tell
    hosts: Tuple[str, ...]


@dataclass(frozen=True)
class FieldGroup:
    field: str
    values: Tuple[ValueGroup, ...]  # majority first; ties in order of first appearance


@dataclass(frozen=True)
class FleetDiff:
    hosts: Tuple[str, ...]
    fingerprints: Mapping[str, Mapping[str, Optional[str]]]
    groups: Tuple[FieldGroup, ...]  # only the fields whose value differs between hosts
    agreed: Mapping[str, Optional[str]]  # field -> the one value every host shares


def _group(field: str, values: Sequence[Tuple[str, Optional[str]]]) -> FieldGroup:
    order: Dict[Optional[str], List[str]] = {}
    for host, value in values:
        order.setdefault(value, []).append(host)
    # Majority first; "cannot tell" (None) last whatever its count, since it is no value to align on.
    ranked = sorted(enumerate(order.items()), key=lambda item: (item[1][0] is None, -len(item[1][1]), item[0]))
    return FieldGroup(field, tuple(ValueGroup(value, tuple(hosts)) for _, (value, hosts) in ranked))


def group_fields(named_snapshots: Sequence[Tuple[str, Mapping[str, Any]]]) -> FleetDiff:
    """Compare snapshots (host name, snapshot), keeping host order; groups only for fields that differ."""
    fingerprints = {host: fingerprint(snapshot) for host, snapshot in named_snapshots}
    hosts = tuple(host for host, _ in named_snapshots)
    groups: List[FieldGroup] = []
    agreed: Dict[str, Optional[str]] = {}
    for name in FIELD_NAMES:
        group = _group(name, [(host, fingerprints[host][name]) for host in hosts])
        if len(group.values) > 1:
            groups.append(group)
        elif group.values:
            agreed[name] = group.values[0].value
    return FleetDiff(hosts, fingerprints, tuple(groups), agreed)


@dataclass(frozen=True)
class FleetFinding:
    finding: Finding
    hosts: Tuple[str, ...]  # the hosts the finding is about (the outliers)


def _describe(group: FieldGroup) -> str:
    return "; ".join(f"{g.value or '?'}: {', '.join(g.hosts)}" for g in group.values)


def _version_key(text: str) -> Tuple[int, Union[Version, str]]:
    from packaging.version import InvalidVersion, Version

    try:
        return (1, Version(text))
    except (InvalidVersion, ValueError):  # ValueError: a 5,000-digit part is past int()'s limit
        return (0, text)


def consistency_findings(diff: FleetDiff) -> List[FleetFinding]:
    findings: List[FleetFinding] = []
    by_field = {group.field: group for group in diff.groups}
    nccl = by_field.get("nccl")
    if nccl and len([g for g in nccl.values if g.value is not None]) > 1:
        majority = nccl.values[0]
        outliers = tuple(host for g in nccl.values[1:] if g.value is not None for host in g.hosts)
        findings.append(FleetFinding(
            make("fleet.nccl_mismatch", values=_describe(nccl), version=majority.value, expected=majority.value,
                 actual=_describe(nccl), sources=NCCL_SOURCES),
            outliers,
        ))
    cuda = by_field.get("cuda_max")
    if cuda:
        known = [g for g in cuda.values if g.value is not None]
        if len(known) > 1:
            highest = max(known, key=lambda g: _version_key(g.value or ""))  # known: no None values
            lower = [g for g in known if _version_key(g.value or "") < _version_key(highest.value or "")]
            for group in lower:
                findings.append(FleetFinding(
                    make("fleet.driver_cuda_lower", hosts=", ".join(group.hosts), others=", ".join(highest.hosts),
                         expected=highest.value, actual=group.value, sources=DRIVER_SOURCES),
                    group.hosts,
                ))
    return findings


def _majority_widths(named_snapshots: Sequence[Tuple[str, Mapping[str, Any]]]) -> Dict[str, int]:
    """GPU model -> the link width most cards of that model run at in the fleet (ties: the wider).

    Per model, because some cards are x8 by design: only a card narrower than its own siblings is an outlier.
    """
    widths: Dict[str, Counter[int]] = {}
    for _, snapshot in named_snapshots:
        for gpu in _gpus(SnapshotView(snapshot)) or []:
            width = (gpu.get("pcie") or {}).get("width_current")
            if isinstance(width, int) and width > 0:
                widths.setdefault(str(gpu.get("name") or "?"), Counter())[width] += 1
    return {model: max(counts.items(), key=lambda kv: (kv[1], kv[0]))[0] for model, counts in widths.items()}


def pcie_width_findings(named_snapshots: Sequence[Tuple[str, Mapping[str, Any]]]) -> List[FleetFinding]:
    """One interconnect_slow warning per host with a card linked narrower than most cards of its model."""
    majority = _majority_widths(named_snapshots)
    findings = []
    for host, snapshot in named_snapshots:
        narrow, expected = [], set()
        for position, gpu in enumerate(_gpus(SnapshotView(snapshot)) or []):
            width = (gpu.get("pcie") or {}).get("width_current")
            usual = majority.get(str(gpu.get("name") or "?"))
            if isinstance(width, int) and usual and 0 < width < usual:
                narrow.append(f"GPU {gpu.get('index', position)} x{width}")
                expected.add(usual)
        if not narrow:
            continue
        cards, usual = ", ".join(narrow), max(expected)
        findings.append(FleetFinding(
            make("fleet.pcie_narrow", host=host, cards=cards, usual=usual, sources=PCIE_SOURCES,
                 expected=f"x{usual}", actual=cards),
            (host,),
        ))
    return findings


def _field_outliers(diff: FleetDiff, field: str) -> Optional[Tuple[ValueGroup, List[ValueGroup]]]:
    group = next((g for g in diff.groups if g.field == field), None)
    if group is None:
        return None
    known = [g for g in group.values if g.value is not None]
    if len(known) < 2:
        return None
    return known[0], known[1:]


def gpu_count_findings(diff: FleetDiff) -> List[FleetFinding]:
    split = _field_outliers(diff, "gpu_count")
    if split is None:
        return []
    majority, others = split
    findings = []
    for group in others:
        fewer = _version_key(group.value or "") < _version_key(majority.value or "")  # _field_outliers: no None values
        findings.append(FleetFinding(
            make("fleet.gpu_count", detail_variant="fewer" if fewer else "more", hosts=", ".join(group.hosts),
                 expected=majority.value, actual=group.value, sources=GPU_COUNT_SOURCES),
            group.hosts,
        ))
    return findings


def mig_findings(diff: FleetDiff) -> List[FleetFinding]:
    split = _field_outliers(diff, "mig")
    if split is None:
        return []
    majority, others = split
    return [
        FleetFinding(
            make("fleet.mig_differs", hosts=", ".join(group.hosts), expected=majority.value, actual=group.value,
                 sources=MIG_SOURCES),
            group.hosts,
        )
        for group in others
    ]


def fleet_findings(named_snapshots: Sequence[Tuple[str, Mapping[str, Any]]], diff: FleetDiff) -> List[FleetFinding]:
    """Every finding about the fleet as a whole: versions that break jobs, then hardware that differs."""
    return (consistency_findings(diff) + gpu_count_findings(diff) + pcie_width_findings(named_snapshots)
            + mig_findings(diff))
