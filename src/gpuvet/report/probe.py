"""``gpuvet probe`` in text: a readable summary of a snapshot. Pure: the snapshot and a language in, text out."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional

from gpuvet.i18n import text
from gpuvet.probe.facts import FAILED, FOUND


def _fact_text(fact: Any, lang: str, show: Callable[[Any], str] = str, with_source: bool = True) -> str:
    if not isinstance(fact, dict):
        return text(lang, "probe.missing", reason="-")
    if fact.get("status") == FOUND:
        shown = show(fact.get("value"))
        return text(lang, "probe.from", value=shown, source=fact.get("source")) if with_source else shown
    key = "probe.failed" if fact.get("status") == FAILED else "probe.missing"
    return text(lang, key, reason=fact.get("reason", ""))


def _or_dash(value: Any) -> str:
    return "-" if value is None else str(value)


def _multinode_lines(snapshot: Mapping[str, Any], lang: str) -> List[str]:
    """RDMA ports, the NCCL network plugin, MPI and UCX: what a multi-node job stands on (only in a snapshot that has
    these facts: an older probe's or a paste's says nothing rather than "not found")."""
    lines: List[str] = []

    def rdma(value: Dict[str, Any]) -> str:
        ports = ["%s port %s %s / %s (%s, %s)" % (device.get("name"), port.get("port"), port.get("state") or "?",
                                                  port.get("phys_state") or "?", port.get("link_layer") or "?",
                                                  port.get("rate") or "?")
                 for device in value.get("devices") or [] for port in device.get("ports") or []]
        shown = "; ".join(ports) or text(lang, "probe.none")
        if "peer_memory_module" in value:
            shown += "; " + text(lang, "probe.peer_memory", module=value["peer_memory_module"] or text(lang, "probe.none"))
        return shown

    def plugin(value: Dict[str, Any]) -> str:
        loads = value.get("loads")
        if loads:
            how = next((entry.get("how") for entry in value.get("tried") or [] if entry.get("path") == loads), None)
            return "%s (%s)" % (loads, how) if how else str(loads)
        tried = ", ".join(str(entry.get("name")) for entry in value.get("tried") or [])
        return text(lang, "probe.nccl_plugin_none", tried=tried or "-")

    for key, label, show in (
        ("infiniband", "probe.rdma_line", rdma),
        ("nccl_net_plugin", "probe.nccl_plugin_line", plugin),
        ("mpi", "probe.mpi_line", lambda v: "%s %s" % (v.get("implementation") or "MPI", v.get("version"))),
        ("ucx", "probe.ucx_line", lambda v: str(v.get("version"))),
    ):
        if key in snapshot:
            lines.append(text(lang, label, value=_fact_text(snapshot[key], lang, show, with_source=False)))
    return lines


def render_probe_text(snapshot: Mapping[str, Any], lang: str) -> str:
    """A readable summary of a snapshot (pure: the snapshot and a language in, text out)."""
    host = snapshot.get("host", {})
    driver = snapshot.get("driver", {})

    def value(fact: Any, key: Optional[str] = None, default: Any = None) -> Any:
        if not isinstance(fact, dict) or fact.get("status") != FOUND:
            return default
        found = fact.get("value")
        return found.get(key, default) if key and isinstance(found, dict) else found

    lines: List[str] = [text(lang, "probe.title", host=_or_dash(value(host.get("hostname"))))]
    os_info = value(host.get("os")) or {}
    cpu = value(host.get("cpu")) or {}
    lines.append(text(
        lang, "probe.host_line", os=_or_dash(os_info.get("pretty") or os_info.get("system")),
        kernel=_or_dash(value(host.get("kernel"))), machine=_or_dash(value(host.get("machine"))),
        glibc=_or_dash(value(host.get("glibc"))), cores=_or_dash(cpu.get("cores")),
        memory_mib=_or_dash(value(host.get("memory_mib"))),
    ))
    container = value(host.get("container")) or {}
    if container.get("type") not in (None, "none"):
        visible = container.get("gpu_devices_visible")
        lines.append(text(lang, "probe.container_line", type=container["type"],
                          visible=text(lang, "probe.yes" if visible else "probe.no") if visible is not None else "?"))
    lines.append(text(lang, "probe.driver_line", value=_fact_text(driver.get("version"), lang)))
    lines.append(text(lang, "probe.cuda_max_line", value=_fact_text(driver.get("cuda_max"), lang)))
    lines.append(text(lang, "probe.kernel_module_line", value=_fact_text(driver.get("kernel_module"), lang)))
    lines.append(text(lang, "probe.nvml_binding_line", value=_fact_text(
        driver.get("nvml_binding"), lang, lambda v: "%s %s" % (v.get("distribution") or "?", v.get("version") or ""))))
    if isinstance(driver.get("error"), dict) and driver["error"].get("status") == FOUND:
        lines.append(text(lang, "probe.driver_error_line", value=_fact_text(driver["error"], lang)))
    gpus_fact = snapshot.get("gpus")
    lines.append(text(lang, "probe.gpus_line", value=_fact_text(
        gpus_fact, lang, lambda v: text(lang, "probe.count_gpus", count=len(v)))))
    for gpu in value(gpus_fact) or []:
        pcie = gpu.get("pcie") or {}
        lines.append(text(
            lang, "probe.gpu_line", index=gpu.get("index"), name=_or_dash(gpu.get("name")),
            cc=_or_dash(gpu.get("compute_capability")), memory=_or_dash(gpu.get("memory_total_mib")),
            gen=_or_dash(pcie.get("gen_current")), gen_max=_or_dash(pcie.get("gen_max")),
            width=_or_dash(pcie.get("width_current")), width_max=_or_dash(pcie.get("width_max")),
            mig=_or_dash(gpu.get("mig_mode")),
        ))
    if isinstance(gpus_fact, dict) and gpus_fact.get("status") == FOUND and len(gpus_fact["value"]) > 1:
        lines.append(text(lang, "probe.topology_line", value=_fact_text(
            snapshot.get("topology"), lang,
            lambda v: text(lang, "probe.nvlink" if v.get("nvlink") else "probe.no_nvlink"))))
    lines.append(text(lang, "probe.toolkits_line", value=_fact_text(snapshot.get("cuda_toolkits"), lang, lambda v: "; ".join(
        text(lang, "probe.toolkit_item", version=_or_dash(t.get("version")), path=t.get("path"),
             on_path=text(lang, "probe.on_path") if t.get("on_path") else "") for t in v), with_source=False)))
    for key, label in (("cudnn", "probe.cudnn_line"), ("nccl", "probe.nccl_line")):
        lines.append(text(lang, label, value=_fact_text(snapshot.get(key), lang, lambda v: "; ".join(
            "%s (%s: %s)" % (item.get("version"), item.get("source"), item.get("path")) for item in v),
            with_source=False)))
    python = value(snapshot.get("python")) or {}
    lines.append(text(lang, "probe.python_line", version=_or_dash(python.get("version")),
                      implementation=_or_dash(python.get("implementation")),
                      executable=_or_dash(python.get("executable")),
                      venv=text(lang, "probe.venv") if python.get("venv") else ""))
    lines.append(text(lang, "probe.pip_line", value=_fact_text(snapshot.get("pip"), lang, lambda v: " ".join(
        part for part in (v.get("version"), v.get("index_url"), " ".join(v.get("extra_index_urls") or [])) if part),
        with_source=False)))
    lines.append(text(lang, "probe.conda_line", value=_fact_text(snapshot.get("conda"), lang, lambda v: " ".join(
        str(part) for part in (v.get("version"), v.get("active_env"), v.get("prefix")) if part))))
    lines.append(text(lang, "probe.packages_line", count=len(value(snapshot.get("packages")) or [])))

    def frameworks(found: Dict[str, Any]) -> str:
        if not found:
            return text(lang, "probe.none")
        items = []
        for name, info in sorted(found.items()):
            cuda = info.get("cuda")
            build = text(lang, "probe.cuda_build", cuda=cuda) if cuda else text(lang, "probe.cpu_build")
            items.append(text(lang, "probe.framework_item", name=name, version=_or_dash(info.get("version")),
                              build=build))
        return "; ".join(items)

    lines.append(text(lang, "probe.frameworks_line", value=_fact_text(snapshot.get("frameworks"), lang, frameworks,
                                                                      with_source=False)))
    lines.append(text(lang, "probe.binaries_line", value=_fact_text(
        snapshot.get("binaries"), lang, lambda v: text(lang, "probe.binaries_count", count=len(v)),
        with_source=False)))
    lines += _multinode_lines(snapshot, lang)
    seconds = snapshot.get("origin", {}).get("probe_seconds")
    if seconds is not None:
        lines.append(text(lang, "probe.duration", seconds=seconds))
    return "\n".join(lines)
