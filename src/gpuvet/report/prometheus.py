"""``--format prometheus``: node_exporter's textfile-collector format, built with ``prometheus-client``.

Point ``-o`` at the collector's folder (``-o /var/lib/node_exporter/textfile/gpuvet.prom``): the file is written
atomically (a temporary file renamed over), so the collector never reads half of it. The metrics, every one a gauge:

* ``gpuvet_info{gpuvet_version, kb_version}`` 1 -- what wrote the file;
* ``gpuvet_check_verdict{target, verdict}`` 1 for each target's verdict (``target="machine"`` for the machine's own
  findings), ``gpuvet_check_findings{target, code, severity}`` how many findings of that code;
* ``gpuvet_smoke_value{name, unit, framework, gpu}`` the measured figure, ``gpuvet_smoke_fraction{...}`` its share of
  the reference, ``gpuvet_smoke_status{name, status, ...}`` 1; after ``--distributed``,
  ``gpuvet_smoke_utilization_mean{device, signal}``, ``gpuvet_smoke_utilization_lagging{device, signal}`` (1 or 0) and
  ``gpuvet_smoke_in_sync{signal}`` (1 in step, 0 when one lagged; absent when undecided);
* ``gpuvet_fleet_host_status{host, status}`` 1 per host, ``gpuvet_fleet_hosts{status}`` the count per status.

Label values are escaped by prometheus-client, so nothing a snapshot carries (a GPU name with quotes, a newline) can
break the format.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping


def render(command: str, document: Mapping[str, Any]) -> str:
    try:
        from prometheus_client import CollectorRegistry, Gauge, generate_latest
    except ImportError as exc:
        from gpuvet.errors import UsageError

        raise UsageError.said("errors.prometheus_client") from exc
    registry = CollectorRegistry(auto_describe=False)
    info = Gauge("gpuvet_info", "The gpuvet that wrote this file", ["gpuvet_version", "kb_version"], registry=registry)
    info.labels(str(document.get("gpuvet_version") or ""), str((document.get("kb") or {}).get("version") or "")).set(1)
    if command == "check":
        _check(document, registry, Gauge)
    elif command == "smoke":
        _smoke(document, registry, Gauge)
    elif command in ("fleet", "diff"):
        _fleet(document, registry, Gauge)
    return generate_latest(registry).decode("utf-8")


def _check(document: Mapping[str, Any], registry: Any, Gauge: Any) -> None:
    verdicts = Gauge("gpuvet_check_verdict", "1 for the verdict of each target (target=machine: the machine itself)",
                     ["target", "verdict"], registry=registry)
    findings = Gauge("gpuvet_check_findings", "Findings per target, code and severity",
                     ["target", "code", "severity"], registry=registry)
    machine = document.get("machine") or []
    worst = next((s for s in ("fail", "warn") if any(f.get("severity") == s for f in machine)), "pass")
    verdicts.labels("machine", worst).set(1)
    for scope, items in [("machine", machine)] + [(str(t.get("target")), t.get("findings") or [])
                                                   for t in document.get("targets") or []]:
        for (code, severity), count in Counter((str(f.get("code")), str(f.get("severity"))) for f in items).items():
            findings.labels(scope, code, severity).set(count)
    for target in document.get("targets") or []:
        verdicts.labels(str(target.get("target")), str(target.get("verdict"))).set(1)


def _smoke(document: Mapping[str, Any], registry: Any, Gauge: Any) -> None:
    labels = ["name", "unit", "framework", "gpu"]
    value = Gauge("gpuvet_smoke_value", "A smoke measurement in its unit", labels, registry=registry)
    fraction = Gauge("gpuvet_smoke_fraction", "A smoke measurement as a fraction of its reference", labels,
                     registry=registry)
    status = Gauge("gpuvet_smoke_status", "1 for the status of each smoke result", labels + ["status"],
                   registry=registry)
    for result in document.get("results") or []:
        key = [str(result.get(k) or "") for k in ("name", "unit", "framework", "gpu_name")]
        if isinstance(result.get("value"), (int, float)):
            value.labels(*key).set(result["value"])
        if isinstance(result.get("fraction_of_reference"), (int, float)):
            fraction.labels(*key).set(result["fraction_of_reference"])
        status.labels(*key, str(result.get("status") or "")).set(1)
    section = document.get("utilization")
    if isinstance(section, Mapping) and section.get("devices"):
        mean = Gauge("gpuvet_smoke_utilization_mean", "Mean busy share of a device during smoke --distributed (percent)",
                     ["device", "signal"], registry=registry)
        lagging = Gauge("gpuvet_smoke_utilization_lagging", "1 when the device was out of step with the others",
                        ["device", "signal"], registry=registry)
        signal = str(section.get("signal") or "")
        for device in section["devices"]:
            if isinstance(device.get("mean"), (int, float)):
                mean.labels(str(device.get("label")), signal).set(device["mean"])
            lagging.labels(str(device.get("label")), signal).set(1 if device.get("lagging") else 0)
        if section.get("verdict") in ("in_sync", "out_of_sync"):
            Gauge("gpuvet_smoke_in_sync", "1 when the ranks worked in step, 0 when one lagged", ["signal"],
                  registry=registry).labels(signal).set(1 if section["verdict"] == "in_sync" else 0)


def _fleet(document: Mapping[str, Any], registry: Any, Gauge: Any) -> None:
    per_host = Gauge("gpuvet_fleet_host_status", "1 for the status of each host", ["host", "status"], registry=registry)
    counts = Gauge("gpuvet_fleet_hosts", "Hosts per status", ["status"], registry=registry)
    tally: Counter[str] = Counter()
    for host in document.get("hosts") or []:
        per_host.labels(str(host.get("host")), str(host.get("status"))).set(1)
        tally[str(host.get("status"))] += 1
    for state, count in tally.items():
        counts.labels(state).set(count)
