"""The fleet / diff JSON document (docs/CONTRACT.md §3): hosts, groups, and per-target verdict groups. Pure."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from gpuvet.checks.fleet import FleetDiff, FleetFinding
from gpuvet.report.envelope import envelope
from gpuvet.sources.fleet.result import STATUSES, HostResult

_VERDICT_ORDER = ("fail", "unknown", "warn", "pass", "skip")
_SEVERITY_ORDER = ("fail", "warn", "info")
TOP_FINDINGS = 3  # per verdict group in the report; the JSON keeps them all


def host_entry(result: HostResult, embed_snapshot: bool) -> Dict[str, Any]:
    entry: Dict[str, Any] = {
        "host": result.name,
        "status": result.status,
        "snapshot_file": result.snapshot_file,
        "error": result.error,
        "note": result.note,
        "method": result.method,
        "seconds": result.seconds,
    }
    if embed_snapshot and result.snapshot is not None:
        entry["snapshot"] = result.snapshot
    return entry


def groups_entry(diff: FleetDiff) -> List[Dict[str, Any]]:
    return [
        {"field": group.field, "values": [{"value": v.value, "hosts": list(v.hosts)} for v in group.values]}
        for group in diff.groups
    ]


def findings_entry(findings: Sequence[FleetFinding], lang: str) -> List[Dict[str, Any]]:
    from gpuvet.report.findings import finding_to_dict

    out = []
    for item in findings:
        document = finding_to_dict(item.finding, lang)
        document["hosts"] = list(item.hosts)
        out.append(document)
    return out


def summary(results: Sequence[HostResult]) -> Dict[str, int]:
    counts = {status: 0 for status in STATUSES}
    for result in results:
        counts[result.status] += 1
    counts["total"] = len(results)
    return counts


def group_findings(per_host: Mapping[str, Sequence[Mapping[str, Any]]], hosts: Sequence[str],
                   index: int) -> List[Dict[str, Any]]:
    """The distinct findings of these hosts for one target, worst and most widespread first, each with its hosts."""
    merged: Dict[Tuple[str, str, Optional[str]], Dict[str, Any]] = {}
    for host in hosts:
        checks = per_host[host]
        for detail in checks[index].get("details", []) if index < len(checks) else []:
            fix = (detail.get("fix") or {}).get("summary")
            key = (detail["code"], detail["title"], fix)
            item = merged.setdefault(key, {"code": detail["code"], "severity": detail["severity"],
                                           "title": detail["title"], "fix": fix, "hosts": []})
            if host not in item["hosts"]:
                item["hosts"].append(host)

    def rank(item: Mapping[str, Any]) -> Tuple[int, int]:
        severity = item["severity"]
        return (_SEVERITY_ORDER.index(severity) if severity in _SEVERITY_ORDER else 9, -len(item["hosts"]))

    return sorted(merged.values(), key=rank)


def targets_entry(per_host: Mapping[str, Sequence[Mapping[str, Any]]], targets: Sequence[str]) -> List[Dict[str, Any]]:
    """For each target, the hosts grouped by verdict, worst first (hosts keep their order), with their findings."""
    out = []
    for index, target in enumerate(targets):
        by_verdict: Dict[str, List[str]] = {}
        for host, checks in per_host.items():
            if index < len(checks):
                by_verdict.setdefault(checks[index]["verdict"], []).append(host)
        ordered = sorted(by_verdict.items(), key=lambda kv: _VERDICT_ORDER.index(kv[0]) if kv[0] in _VERDICT_ORDER else 9)
        out.append({"target": target, "verdicts": [
            {"verdict": v, "hosts": hosts, "findings": group_findings(per_host, hosts, index)} for v, hosts in ordered
        ]})
    return out


def build_document(
    results: Sequence[HostResult],
    diff: FleetDiff,
    findings: Sequence[FleetFinding],
    lang: str,
    via: Optional[str] = None,
    embed_snapshots: bool = True,
    checks: Optional[Mapping[str, Sequence[Mapping[str, Any]]]] = None,
    targets: Sequence[str] = (),
    out_dir: Optional[str] = None,
) -> Dict[str, Any]:
    hosts = []
    for result in results:
        entry = host_entry(result, embed_snapshots)
        if checks is not None and result.name in checks:
            entry["checks"] = [{k: v for k, v in check.items() if k != "details"} for check in checks[result.name]]
        hosts.append(entry)
    payload: Dict[str, Any] = {}
    if via:
        payload["via"] = via
    payload.update(
        summary=summary(results),
        out_dir=out_dir,
        hosts=hosts,
        groups=groups_entry(diff),
        agreed=[{"field": field, "value": value} for field, value in diff.agreed.items()],
        findings=findings_entry(findings, lang),
        targets=targets_entry(checks or {}, targets) if targets else [],
    )
    return envelope(**payload)


def exit_code(document: Mapping[str, Any]) -> int:
    """0 every host ok and nothing failed; 1 a host not ok, a failing finding or check; 3 only undecided checks."""
    if any(h["status"] != "ok" for h in document["hosts"]):
        return 1
    if any(f["severity"] == "fail" for f in document.get("findings", [])):
        return 1
    verdicts = {v["verdict"] for t in document.get("targets", []) for v in t["verdicts"]}
    if "fail" in verdicts:
        return 1
    if "unknown" in verdicts:
        return 3
    return 0
