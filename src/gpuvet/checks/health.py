"""Health signals of the GPUs in a snapshot, as findings (pure: snapshot + knowledge base in, findings out).

ECC errors, retired pages / pending row remaps, clock throttle reasons, PCIe link below its max, persistence
mode, power limit below default, Xid events, vGPU / MIG, and multi-GPU without NVLink. Thresholds and their
sources live in ``gpuvet/smoke/data/thresholds.toml`` ([health]).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, Union

from gpuvet.findings import make
from gpuvet.kb.thresholds import Thresholds, load_thresholds
from gpuvet.models import Finding, Severity, msg
from gpuvet.snapshot import SnapshotView

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase

_LAYER = "gpu"


def _on_gpu(gpu: Dict[str, Any]) -> Dict[str, Any]:
    """Where a per-GPU finding is: the label its sentences say ("GPU 3 (NVIDIA A10)") and, for code that acts on it
    (``checks.machine.merge_per_gpu``), the GPU's index as an int (None when the input gave none a number) and name."""
    index = gpu.get("index")
    name = gpu.get("name") or "GPU"
    return {"gpu": "GPU %s (%s)" % (index, name) if index is not None else name, "gpu_index": _int(index),
            "gpu_name": name}


# An info note never carries a failure code (it would read as a failure): the note's own code instead.
_INFO_CODE = {"health_problem": "gpu_setting", "interconnect_slow": "link_note", "virtualization_limit": "virtualization_note"}


def _finding(code: str, severity: Severity, key: str, where: Union[str, Dict[str, Any]], source: str,
             expected: Any = None, actual: Any = None, fix_commands: Tuple[str, ...] = (), detail_variant: str = "",
             **params: Any) -> Finding:
    """``where``: a GPU's ``_on_gpu`` facts, or the words for several GPUs ("8 GPUs")."""
    if severity is Severity.INFO:
        code = _INFO_CODE.get(code, code)
    at = where if isinstance(where, dict) else {"gpu": where}
    return make("smoke.health." + key, code=code, severity=severity, layer=_LAYER, expected=expected,
                detail_variant=detail_variant,
                actual=actual, fix="smoke.health.%s.fix" % key, commands=tuple(fix_commands),
                sources=tuple(s.strip() for s in source.split(";") if s.strip()), **at, **params)


def _int(value: Any) -> Optional[int]:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _float(value: Any) -> Optional[float]:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def ecc_findings(gpu: Dict[str, Any], rules: Dict[str, Any]) -> List[Finding]:
    at, ecc, out = _on_gpu(gpu), gpu.get("ecc") or {}, []
    source = rules["ecc_source"]
    volatile = _int(ecc.get("volatile_uncorrected"))
    aggregate = _int(ecc.get("aggregate_uncorrected"))
    if volatile:
        out.append(_finding("health_problem", Severity.FAIL, "ecc_volatile", at, source, "0", str(volatile),
                            ("nvidia-smi -q -d ECC",), count=volatile))
    elif aggregate:
        out.append(_finding("health_problem", Severity.WARN, "ecc_aggregate", at, source, "0", str(aggregate),
                            ("nvidia-smi -q -d ECC",), count=aggregate))
    retired = _int(ecc.get("retired_pages"))
    if ecc.get("retired_pages_pending"):
        out.append(_finding("health_problem", Severity.FAIL, "retired_pending", at, rules["retired_pages_source"],
                            msg("smoke.health.value.no_retirement_pending"), msg("smoke.health.value.pending"), ("nvidia-smi -q -d PAGE_RETIREMENT",)))
    if retired is not None and retired >= int(rules["retired_pages_fail"]):
        out.append(_finding("health_problem", Severity.FAIL, "retired_pages", at, rules["retired_pages_source"],
                            "< %s" % rules["retired_pages_warn"], str(retired), ("nvidia-smi -q -d PAGE_RETIREMENT",),
                            count=retired, limit=rules["retired_pages_fail"]))
    elif retired is not None and retired >= int(rules["retired_pages_warn"]):
        out.append(_finding("health_problem", Severity.WARN, "retired_pages", at, rules["retired_pages_source"],
                            "< %s" % rules["retired_pages_warn"], str(retired), ("nvidia-smi -q -d PAGE_RETIREMENT",),
                            count=retired, limit=rules["retired_pages_warn"]))
    if ecc.get("remapped_rows_pending"):
        out.append(_finding("health_problem", Severity.FAIL, "remap_pending", at, rules["remapped_rows_source"],
                            msg("smoke.health.value.no_remap_pending"), msg("smoke.health.value.pending"), ("nvidia-smi -q -d ROW_REMAPPER",)))
    return out


def throttle_findings(gpu: Dict[str, Any], rules: Dict[str, Any]) -> List[Finding]:
    reasons = [str(r).lower() for r in gpu.get("throttle_reasons") or []]
    at, out = _on_gpu(gpu), []
    bad = [r for r in reasons if r in rules["throttle_fail"]]
    soft = [r for r in reasons if r in rules["throttle_warn"]]
    if bad:
        out.append(_finding("health_problem", Severity.FAIL, "throttle_hw", at, rules["throttle_source"],
                            msg("smoke.health.value.no_throttle"), ", ".join(bad), ("nvidia-smi -q -d PERFORMANCE",),
                            reasons=", ".join(bad)))
    if soft:
        out.append(_finding("health_problem", Severity.WARN, "throttle_sw_thermal", at, rules["throttle_source"],
                            msg("smoke.health.value.no_throttle"), ", ".join(soft), ("nvidia-smi -q -d PERFORMANCE,TEMPERATURE",),
                            reasons=", ".join(soft)))
    return out


def pcie_findings(gpu: Dict[str, Any], rules: Dict[str, Any], kb_gen: Optional[int]) -> List[Finding]:
    pcie, at, out = gpu.get("pcie") or {}, _on_gpu(gpu), []
    gen, gen_max = _int(pcie.get("gen_current")), _int(pcie.get("gen_max"))
    width, width_max = _int(pcie.get("width_current")), _int(pcie.get("width_max"))
    source = rules["pcie_source"]
    if width and width_max and width < width_max:
        out.append(_finding("interconnect_slow", Severity.WARN, "pcie_width", at, source, "x%d" % width_max,
                            "x%d" % width, ("nvidia-smi -q -d PCIE",), width=width, width_max=width_max))
    if gen and gen_max and gen < gen_max:
        # Idle GPUs downshift the link to save power, so this alone says little: info, re-read under load.
        out.append(_finding("interconnect_slow", Severity.INFO, "pcie_gen_idle", at, source, "Gen%d" % gen_max,
                            "Gen%d" % gen, ("gpuvet smoke --quick",), gen=gen, gen_max=gen_max))
    if kb_gen and gen_max and gen_max < kb_gen:
        out.append(_finding("interconnect_slow", Severity.WARN, "pcie_slot", at, source, "Gen%d" % kb_gen,
                            "Gen%d" % gen_max, (), gen_max=gen_max, gpu_gen=kb_gen))
    return out


def power_findings(gpu: Dict[str, Any], rules: Dict[str, Any]) -> List[Finding]:
    limit, default = _float(gpu.get("power_limit_w")), _float(gpu.get("power_default_limit_w"))
    if not limit or not default:
        return []
    share = limit / default
    if share >= float(rules["power_limit_warn_fraction"]):
        return []
    severity = Severity.FAIL if share < float(rules["power_limit_fail_fraction"]) else Severity.WARN
    return [_finding("health_problem", severity, "power_limit", _on_gpu(gpu), rules["power_limit_source"],
                     "%.0f W" % default, "%.0f W" % limit, ("nvidia-smi -q -d POWER",),
                     limit="%.0f" % limit, default="%.0f" % default, percent="%d" % round(share * 100))]


def _mib(value: float) -> str:
    return "%.1f GiB" % (value / 1024) if value >= 1024 else "%d MiB" % value


def others_findings(gpu: Dict[str, Any], rules: Dict[str, Any]) -> List[Finding]:
    """Someone else on this GPU, the first question of a renter on a shared or oversold box: the compute processes
    that hold its memory, each named, or memory in use that no listed process explains, and how busy it was when
    read. What was pasted or probed is another moment than the job's, so this warns and never fails."""
    at = _on_gpu(gpu)
    processes = [p for p in gpu.get("processes") or [] if isinstance(p, dict) and "C" in str(p.get("type") or "C")]
    held = sum(_float(p.get("memory_mib")) or 0 for p in processes)
    used, total = _float(gpu.get("memory_used_mib")), _float(gpu.get("memory_total_mib"))
    busy = _float(gpu.get("utilization_percent"))
    busy_now = busy is not None and busy >= float(rules["busy_utilization_warn_percent"])
    source = rules["others_source"]
    if processes and (held >= float(rules["others_memory_warn_mib"]) or busy_now):
        ranked = sorted(processes, key=lambda p: -(_float(p.get("memory_mib")) or 0))
        names = ", ".join("%s (pid %s, %s)" % (p.get("name") or "?", p.get("pid") if p.get("pid") is not None else "?",
                                                _mib(_float(p.get("memory_mib")) or 0)) for p in ranked[:5])
        more = len(ranked) - 5
        return [_finding("virtualization_limit", Severity.WARN, "others_on_gpu", at, source,
                         msg("smoke.health.value.gpu_to_yourself"), "%s / %s" % (_mib(held), _mib(total or 0)),
                         ("nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv",),
                         detail_variant="busy" if busy_now else "",
                         count=len(processes), held=_mib(held), total=_mib(total) if total else "?",
                         processes=names + (" +%d" % more if more > 0 else ""),
                         utilization="%d" % busy if busy is not None else "?")]
    if gpu.get("processes") is None:
        return []  # the input did not list processes (a query CSV): nothing says whose the memory or time is
    unlisted = (used or 0) - held
    memory_unlisted = used is not None and unlisted >= float(rules["unlisted_memory_warn_mib"])
    if memory_unlisted or (busy_now and not processes):
        return [_finding("virtualization_limit", Severity.WARN, "unlisted_use" if memory_unlisted else "unlisted_busy",
                         at, source,
                         msg("smoke.health.value.gpu_to_yourself"),
                         "%s / %s" % (_mib(used or 0), _mib(total or 0)),
                         ("nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv",),
                         used=_mib(used or 0), total=_mib(total) if total else "?",
                         utilization="%d" % busy if busy is not None else "?")]
    return []


def mode_findings(gpu: Dict[str, Any], rules: Dict[str, Any], segment: Optional[str] = None) -> List[Finding]:
    at, out = _on_gpu(gpu), []
    # Persistence mode is data-center practice (DCGM's check); on a consumer card it is nothing a renter acts on.
    if gpu.get("persistence_mode") is False and segment != "consumer":
        out.append(_finding("health_problem", Severity.INFO, "persistence_off", at, rules["persistence_source"],
                            "Enabled", "Disabled", ("sudo nvidia-smi -pm 1",)))
    virt = (gpu.get("virtualization_mode") or "").lower()
    if virt == "vgpu":
        out.append(_finding("virtualization_limit", Severity.WARN, "vgpu", at, rules["virtualization_source"],
                            msg("smoke.health.value.no_vgpu"), "vgpu", ()))
    elif virt == "host_vgpu":
        out.append(_finding("virtualization_limit", Severity.INFO, "host_vgpu", at, rules["virtualization_source"],
                            msg("smoke.health.value.no_vgpu"), "host_vgpu", ()))
    mig = (gpu.get("mig_mode") or "").lower()
    if mig in ("enabled", "pending"):
        out.append(_finding("virtualization_limit", Severity.WARN, "mig_" + mig, at, rules["virtualization_source"],
                            msg("smoke.health.value.mig_disabled"), mig, ("nvidia-smi mig -lgi",),
                            instances=len(gpu.get("mig_devices") or [])))
    return out


def xid_findings(events: List[Dict[str, Any]], rules: Dict[str, Any]) -> List[Finding]:
    fail, warn = set(rules["xid_fail"]), set(rules["xid_warn"])
    by_code: Dict[int, List[Dict[str, Any]]] = {}
    for event in events:
        code = _int(event.get("xid"))
        if code is not None:
            by_code.setdefault(code, []).append(event)
    out = []
    for code in sorted(by_code):
        seen = by_code[code]
        where = ", ".join(sorted({str(e.get("pci_bus_id") or e.get("gpu_index") or "?") for e in seen}))
        severity = Severity.FAIL if code in fail else Severity.WARN
        key = "xid_critical" if code in fail else ("xid_app" if code in warn else "xid_other")
        out.append(_finding("health_problem", severity, key, where, rules["xid_source"], msg("smoke.health.value.no_xid"),
                            "Xid %d x%d" % (code, len(seen)), ("sudo dmesg -T | grep -i xid",), xid=code,
                            count=len(seen)))
    return out


def pcie_pairs(topology: Dict[str, Any], paths: List[str]) -> Dict[str, List[Tuple[int, int]]]:
    """{path: [(i, j), ...]} for every GPU pair of a ``topo -m`` matrix whose path is a PCIe one (PIX ... SYS)."""
    matrix = topology.get("matrix") or {}
    found: Dict[str, List[Tuple[int, int]]] = {}
    for row, cells in matrix.items():
        first = _int(str(row)[3:]) if str(row).startswith("GPU") else None
        for column, path in (cells or {}).items():
            second = _int(str(column)[3:]) if str(column).startswith("GPU") else None
            if first is not None and second is not None and first < second and path in paths:
                found.setdefault(path, []).append((first, second))
    return {path: sorted(found[path]) for path in paths if path in found}


def _pair_list(pairs: List[Tuple[int, int]], total: int) -> str:
    if len(pairs) == total and total > 1:
        return "all %d pairs" % total
    return ", ".join("%d-%d" % pair for pair in pairs)


def interconnect_findings(view: SnapshotView, rules: Dict[str, Any]) -> List[Finding]:
    """Two GPUs or more without NVLink: a note, and where ``topo -m`` names the paths, which pairs NCCL joins peer to
    peer (behind PCIe switches, up to ``nccl_p2p_max_path``) and which it joins through host memory."""
    gpus = view.whole_gpus
    topology = view.value("topology")
    if len(gpus) < 2 or not isinstance(topology, dict) or topology.get("nvlink") is not False:
        return []
    commands = ("nvidia-smi topo -m", "gpuvet smoke --distributed")
    paths = list(rules["pcie_paths"])
    by_path = pcie_pairs(topology, paths)
    if not by_path:
        return [_finding("interconnect_slow", Severity.INFO, "no_nvlink", "%d GPUs" % len(gpus),
                         rules["interconnect_source"], "NVLink", "PCIe only", commands, count=len(gpus))]
    limit = paths.index(rules["nccl_p2p_max_path"])
    total = sum(len(pairs) for pairs in by_path.values())
    near = [pair for path in paths[:limit + 1] for pair in by_path.get(path, [])]
    far = [pair for path in paths[limit + 1:] for pair in by_path.get(path, [])]
    listed = "; ".join("%s: %s" % (path, _pair_list(pairs, total)) for path, pairs in by_path.items())
    return [_finding("interconnect_slow", Severity.INFO, "no_nvlink", "%d GPUs" % len(gpus),
                     rules["interconnect_source"] + "; " + rules["nccl_p2p_source"], "NVLink", listed, commands,
                     detail_variant="paths" if near and far else ("paths_p2p" if near else "paths_host"),
                     count=len(gpus), paths=listed, p2p_pairs=_pair_list(sorted(near), total),
                     host_pairs=_pair_list(sorted(far), total))]


def p2p_findings(view: SnapshotView, rules: Dict[str, Any]) -> List[Finding]:
    """One warning naming every GPU pair that cannot reach the other peer to peer (a pasted ``topo -p2p``): NCCL
    then routes their traffic through host memory. ``U`` (unknown) pairs are not judged."""
    p2p = view.value("gpu_p2p")
    if not isinstance(p2p, dict):
        return []
    pairs = [p for p in p2p.get("not_ok") or [] if isinstance(p, dict) and p.get("status") not in ("U", None)]
    if not pairs:
        return []
    listed = ", ".join("%d-%d (%s)" % (p["gpus"][0], p["gpus"][1], p["status"]) for p in pairs)  # the legend is in the detail
    return [_finding("interconnect_slow", Severity.WARN, "p2p_unsupported", "%d GPU pair(s)" % len(pairs),
                     rules["p2p_source"], "P2P OK", listed,
                     ("gpuvet smoke --distributed", "nvidia-smi topo -m"), pairs=listed, count=len(pairs))]


def fabric_findings(view: SnapshotView, rules: Dict[str, Any]) -> List[Finding]:
    """Two GPUs or more: PCIe ports (root ports, switch downstream ports) whose ACS redirects peer traffic to the root
    complex (a warning with the per-port fix), and an IOMMU on without passthrough (a note); both from the ``pci`` fact
    (gpuvet.probe.pci, a pasted lspci -vvv)."""
    gpus = view.whole_gpus
    pci = view.value("pci")
    if len(gpus) < 2 or not isinstance(pci, dict):
        return []
    found: List[Finding] = []
    acs = pci.get("acs") or {}
    ports = [p for p in acs.get("redirecting") or [] if isinstance(p, dict)]
    if ports:
        named = [p for p in ports if p.get("bdf")]
        if named and len(named) == len(ports):
            actual = ", ".join(str(p["bdf"]) for p in named)
            commands = tuple(rules["acs_disable_command"].format(bdf=p["bdf"]) for p in named)
        else:  # a grep'd paste names no port: the guide's command to find them comes first
            actual = "%d ACSCtl line(s) with ReqRedir+ or CmpltRedir+" % len(ports)
            commands = (rules["acs_find_command"], rules["acs_disable_command"].format(bdf="BUS:DEV.FN"))
        total = acs.get("ports") if isinstance(acs.get("ports"), int) and acs["ports"] >= len(ports) else len(ports)
        found.append(_finding("interconnect_slow", Severity.WARN, "acs_redirect", "%d GPUs" % len(gpus),
                              rules["acs_source"], "ACS P2P redirect off on the PCIe ports between GPUs", actual,
                              commands, count=len(ports), total=total))
    iommu = pci.get("iommu") or {}
    if iommu.get("enabled") is True and iommu.get("passthrough") is not True:
        options = " ".join(iommu.get("cmdline") or []) or "-"
        found.append(_finding("interconnect_slow", Severity.INFO, "iommu_on", "%d GPUs" % len(gpus),
                              rules["acs_source"], "no IOMMU, or iommu=pt", "IOMMU on (%s)" % options,
                              ("cat /proc/cmdline", "gpuvet smoke --distributed"), options=options))
    return found


def port_state(port: Dict[str, Any]) -> str:
    """How sysfs said an RDMA port stands: ``DOWN / Disabled`` (state / physical state), ``?`` where unread."""
    return "%s / %s" % (port.get("state") or "?", port.get("phys_state") or "?")


def rdma_ports(view: SnapshotView) -> Optional[List[Tuple[str, Dict[str, Any]]]]:
    """(device name, port) for every RDMA port of the ``infiniband`` fact (gpuvet.probe.infiniband); none when the
    probe found no /sys/class/infiniband; None when the snapshot does not tell (no such fact, or it failed)."""
    fact = view.fact("infiniband")
    if fact.get("status") == "missing" and "infiniband" in view.document:
        return []  # the probe looked: no RDMA device (or no driver for one)
    rdma = view.value("infiniband")
    if not isinstance(rdma, dict):
        return None
    devices = [d for d in rdma.get("devices") or [] if isinstance(d, dict)]
    return [(str(d.get("name") or "?"), p) for d in devices for p in d.get("ports") or [] if isinstance(p, dict)]


def port_is_up(port: Dict[str, Any], rules: Dict[str, Any]) -> Optional[bool]:
    """ACTIVE and LinkUp (rdma-core's ibcheckstate test); None when neither state was read. One state unread is
    judged by the other."""
    state, phys = port.get("state"), port.get("phys_state")
    if state is None and phys is None:
        return None
    return state in (None, rules["rdma_port_active_state"]) and phys in (None, rules["rdma_port_up_phys_state"])


def rdma_findings(view: SnapshotView, rules: Dict[str, Any]) -> List[Finding]:
    """Each RDMA port (InfiniBand, RoCE) that is not ACTIVE / LinkUp is a warning naming device, port and state (a
    multi-node job over it fails or falls back to sockets); with GPUs and RDMA ports but no GPUDirect RDMA module
    loaded, a note. A port whose state was not read is not judged."""
    ports = rdma_ports(view)
    if not ports:
        return []
    found: List[Finding] = []
    expected = "%s / %s" % (rules["rdma_port_active_state"], rules["rdma_port_up_phys_state"])
    for device, port in ports:
        if port_is_up(port, rules) is False:
            where = "%s port %s" % (device, port.get("port"))
            found.append(make("smoke.health.rdma_port_down", port=where, state=port_state(port),
                              link_layer=port.get("link_layer") or "RDMA", expected=expected, actual=port_state(port),
                              commands=tuple(rules["rdma_port_commands"]), sources=_sources(rules["rdma_port_source"])))
    rdma = view.value("infiniband")
    if view.whole_gpus and "peer_memory_module" in rdma and rdma["peer_memory_module"] is None:
        found.append(make("smoke.health.gpudirect_rdma_off", count=len(ports), expected="nvidia_peermem loaded",
                          actual="not loaded", commands=(rules["peer_memory_command"],),
                          sources=_sources(rules["peer_memory_source"])))
    return found


def nccl_net_plugin_findings(view: SnapshotView, rules: Dict[str, Any]) -> List[Finding]:
    """NCCL_NET_PLUGIN set but none of the libraries it names found where dlopen() looks: a warning (NCCL goes on
    without the plugin, on its internal InfiniBand or socket transport). Unset (NCCL's optional default
    libnccl-net.so) or ``none`` is no finding: nothing was asked for."""
    plugin = view.value("nccl_net_plugin")
    if not isinstance(plugin, dict) or not plugin.get("requested") or plugin.get("loads"):
        return []
    tried = [str(entry.get("name")) for entry in plugin.get("tried") or [] if isinstance(entry, dict)]
    if not tried:
        return []
    return [make("smoke.health.nccl_net_plugin_missing", requested=plugin["requested"], tried=", ".join(tried),
                 expected="one of %s found" % ", ".join(tried), actual="none found",
                 commands=(rules["nccl_net_plugin_command"],), sources=_sources(rules["nccl_net_plugin_source"]))]


def _sources(text: str) -> Tuple[str, ...]:
    return tuple(s.strip() for s in text.split(";") if s.strip())


def _kb_segment(kb: Optional[KnowledgeBase], name: Optional[str]) -> Optional[str]:
    """datacenter | workstation | consumer | embedded, as the knowledge base's GPU model says; None when unknown."""
    if kb is None or not name:
        return None
    model = kb.gpu(name)
    return getattr(model, "segment", None) if model is not None else None


def _kb_pcie_gen(kb: Optional[KnowledgeBase], name: Optional[str]) -> Optional[int]:
    if kb is None or not name:
        return None
    try:
        model = kb.gpu(name)
    except (AttributeError, LookupError):
        return None
    return _int(getattr(model, "pcie_gen", None)) if model is not None else None


def health_findings(view: SnapshotView, kb: Optional[KnowledgeBase] = None, thresholds: Optional[Thresholds] = None) -> List[Finding]:
    """Every health finding for the GPUs in ``view`` (empty when the snapshot has no GPU list)."""
    rules = (thresholds or load_thresholds()).health
    findings: List[Finding] = []
    for gpu in view.gpus:
        findings += ecc_findings(gpu, rules)
        findings += throttle_findings(gpu, rules)
        findings += pcie_findings(gpu, rules, _kb_pcie_gen(kb, gpu.get("name")))
        findings += power_findings(gpu, rules)
        findings += mode_findings(gpu, rules, _kb_segment(kb, gpu.get("name")))
        findings += others_findings(gpu, rules)
    events = view.value("xid_events")
    if isinstance(events, list):
        findings += xid_findings(events, rules)
    findings += interconnect_findings(view, rules)
    findings += p2p_findings(view, rules)
    findings += fabric_findings(view, rules)
    findings += rdma_findings(view, rules)
    findings += nccl_net_plugin_findings(view, rules)
    return findings
