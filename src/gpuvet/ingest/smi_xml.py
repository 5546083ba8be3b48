"""``nvidia-smi -q -x``: the XML report (DTD v7 to v13 in the fixtures)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from typing import Any, Dict, List, Optional

from gpuvet.ingest.common import (
    input_error,
    mig_mode,
    na,
    new_gpu,
    on_off,
    pasted_source,
    set_fact,
    set_missing,
    shell,
    to_float,
    to_int,
    to_mib,
    virtualization_mode,
)

KIND = "nvidia-smi-xml"


def looks_like(text: str) -> bool:
    return "<nvidia_smi_log" in text


def _text(element: Optional[ElementTree.Element], path: str) -> Optional[str]:
    if element is None:
        return None
    found = element.find(path)
    return na(found.text) if found is not None and found.text is not None else None


def parse(text: str, name: str = "<input>") -> Dict[str, Any]:
    source = pasted_source(KIND)
    snapshot = shell(KIND, name)
    if "<!ENTITY" in text:
        # entity declarations have no business in nvidia-smi output and are how XML bombs work
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=KIND, name=name)
    # old drivers inline the whole DTD ("<!DOCTYPE nvidia_smi_log [ <!ELEMENT ...> ]>"); the parser needs none of it
    body = re.sub(r"<!DOCTYPE[^\[>]*(?:\[.*?\]\s*)?>", "", text, count=1, flags=re.DOTALL)
    try:
        root = ElementTree.fromstring(body.strip())
    except ElementTree.ParseError as exc:
        if "<nvidia_smi_log" in text and "</nvidia_smi_log>" not in text:
            raise input_error("ingest.truncated", "ingest.hint_truncated", kind=KIND, name=name)
        raise input_error("ingest.bad_xml", "ingest.hint_kind", kind=KIND, name=name, error=str(exc))
    if root.tag != "nvidia_smi_log":
        raise input_error("ingest.garbage", "ingest.hint_kind", kind=KIND, name=name)
    driver = _text(root, "kmd_version") or _text(root, "driver_version")
    cuda = _text(root, "cuda_umd_version") or _text(root, "cuda_version")
    if driver:
        set_fact(snapshot, "driver.version", driver, source)
    else:
        set_missing(snapshot, "driver.version", "no driver_version element in the pasted XML")
    if cuda:
        set_fact(snapshot, "driver.cuda_max", cuda, source)
    else:
        set_missing(snapshot, "driver.cuda_max", "no cuda_version in the pasted XML (driver before R410)")
    gpus = [_gpu(element) for element in root.findall("gpu")]
    if not gpus:
        raise input_error("ingest.truncated", "ingest.hint_truncated", kind=KIND, name=name)
    # nvidia-smi lists GPUs in its index order (PCI bus order); the minor number (/dev/nvidiaN) can differ
    for position, gpu in enumerate(gpus):
        gpu["index"] = position
    attached = to_int(_text(root, "attached_gpus"))
    extra: Dict[str, Any] = {}
    if attached is not None and attached != len(gpus):
        extra["note"] = "attached_gpus is {} but {} <gpu> elements pasted".format(attached, len(gpus))
        extra["attached_gpus"] = attached
    set_fact(snapshot, "gpus", gpus, source, **extra)
    if any(gpu.get("driver_model") in ("WDDM", "TCC") for gpu in gpus):
        set_fact(snapshot, "host.os", {"id": "windows", "version_id": None, "pretty": None, "system": "Windows"}, source)
    return snapshot


def _gpu(element: ElementTree.Element) -> Dict[str, Any]:
    gpu = new_gpu(None, _text(element, "product_name"))
    gpu["minor_number"] = to_int(_text(element, "minor_number"))
    gpu["pci_bus_id"] = element.get("id") or _text(element, "pci/pci_bus_id")
    gpu["uuid"] = _text(element, "uuid")
    gpu["serial"] = _text(element, "serial")
    gpu["vbios"] = _text(element, "vbios_version")
    gpu["architecture"] = _text(element, "product_architecture")
    gpu["persistence_mode"] = on_off(_text(element, "persistence_mode"))
    gpu["mig_mode"] = mig_mode(_text(element, "mig_mode/current_mig"))
    pending = mig_mode(_text(element, "mig_mode/pending_mig"))
    if gpu["mig_mode"] and pending and pending != gpu["mig_mode"]:
        gpu["mig_mode"] = "pending"
    virtualization = element.find("gpu_virtualization_mode/virtualization_mode")
    if virtualization is not None and virtualization.text:
        gpu["virtualization_mode"] = virtualization_mode(virtualization.text)
    driver_model = _text(element, "driver_model/current_dm")
    if driver_model:
        gpu["driver_model"] = driver_model
    gpu["memory_total_mib"] = to_mib(_text(element, "fb_memory_usage/total"))
    gpu["memory_used_mib"] = to_mib(_text(element, "fb_memory_usage/used"))
    gpu["temperature_c"] = to_int(_text(element, "temperature/gpu_temp"))
    power = element.find("gpu_power_readings")
    if power is None:
        power = element.find("power_readings")
    if power is not None:
        gpu["power_limit_w"] = to_float(_text(power, "current_power_limit") or _text(power, "power_limit"))
        gpu["power_default_limit_w"] = to_float(_text(power, "default_power_limit"))
    link = element.find("pci/pci_gpu_link_info")
    if link is not None:
        pcie = {
            "gen_current": to_int(_text(link, "pcie_gen/current_link_gen")),
            "gen_max": to_int(_text(link, "pcie_gen/max_link_gen")),
            "width_current": to_int(_text(link, "link_widths/current_link_width")),
            "width_max": to_int(_text(link, "link_widths/max_link_width")),
        }
        gpu["pcie"] = pcie if any(v is not None for v in pcie.values()) else None
    ecc_mode = _text(element, "ecc_mode/current_ecc")
    if ecc_mode:
        gpu["ecc"] = {
            "mode": ecc_mode.lower(),
            "volatile_uncorrected": _ecc_total(element.find("ecc_errors/volatile")),
            "aggregate_uncorrected": _ecc_total(element.find("ecc_errors/aggregate")),
            "retired_pages": _retired(element.find("retired_pages")),
            "remapped_rows_pending": on_off(_text(element, "remapped_rows/remapped_row_pending")),
        }
    clocks = {"sm_mhz": to_int(_text(element, "clocks/sm_clock")), "sm_max_mhz": to_int(_text(element, "max_clocks/sm_clock"))}
    gpu["clocks"] = clocks if any(v is not None for v in clocks.values()) else None
    reasons = element.find("clocks_event_reasons")
    if reasons is None:
        reasons = element.find("clocks_throttle_reasons")
    if reasons is not None:
        gpu["throttle_reasons"] = [
            re.sub(r"^clocks_(event|throttle)_reason_", "", item.tag)
            for item in reasons
            if (item.text or "").strip() == "Active" and "gpu_idle" not in item.tag
        ]
    gpu["mig_devices"] = [
        {
            "gi": to_int(_text(device, "gpu_instance_id")),
            "ci": to_int(_text(device, "compute_instance_id")),
            "mig_dev": to_int(_text(device, "index")),
            "memory_mib": to_mib(_text(device, "fb_memory_usage/total")),
            "profile": None,
        }
        for device in element.findall("mig_devices/mig_device")
    ]
    processes = element.find("processes")
    if processes is not None:
        gpu["processes"] = [
            {
                "pid": to_int(_text(process, "pid")),
                "type": _text(process, "type"),
                "name": _text(process, "process_name"),
                "memory_mib": to_mib(_text(process, "used_memory")),
            }
            for process in processes.findall("process_info")
        ]
    return gpu


def _ecc_total(element: Optional[ElementTree.Element]) -> Optional[int]:
    """Uncorrectable errors: ``*_uncorrectable*`` counters (R450+) or ``double_bit/total`` (older DTDs)."""
    if element is None:
        return None
    numbers = [to_int(item.text) for item in element.iter() if "uncorrectable" in item.tag]
    if not numbers:
        numbers = [to_int(_text(element, "double_bit/total"))]
    numbers = [n for n in numbers if n is not None]
    return sum(numbers) if numbers else None


def _retired(element: Optional[ElementTree.Element]) -> Optional[int]:
    if element is None:
        return None
    counts: List[int] = []
    for cause in ("multiple_single_bit_retirement", "double_bit_retirement"):
        number = to_int(_text(element, cause + "/retired_count"))
        if number is not None:
            counts.append(number)
    return sum(counts) if counts else None
