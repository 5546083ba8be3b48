"""The answer of a check document, said first: the verdict, the one reason behind it and the one fix.

Every renderer opens with it (text: the first line; Markdown: the first paragraph; HTML: the first box), so a
reader who stops after one line knows whether the build runs, why not, and what to run. A pure function of the
document (``report.findings.check_to_dict``): it picks, never judges.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from gpuvet.i18n import text

# The verdicts in the order the answer names them: the worst one is the answer.
_ORDER = ("fail", "unknown", "warn")


def _reason(findings: List[Mapping[str, Any]], verdict: str) -> Optional[Mapping[str, Any]]:
    """The finding that makes ``verdict``: the first of that severity with a fix, else the first of it."""
    severity = "warn" if verdict == "unknown" else verdict
    matching = [f for f in findings if f.get("severity") == severity]
    if verdict == "unknown":
        matching = [f for f in findings if f.get("code") in ("unknown_version", "arch_list_unknown")] or matching
    with_fix = [f for f in matching if (f.get("fix") or {}).get("commands")] or [f for f in matching if f.get("fix")]
    chosen = with_fix or matching
    return chosen[0] if chosen else None


def answer(document: Mapping[str, Any]) -> Dict[str, Any]:
    """``{"verdict", "target", "reason", "fix", "command", "failing"}`` of a check document: the first target whose
    verdict is the document's, its reason and fix; ``failing`` counts the targets with that verdict. A machine
    finding (no driver) answers when no target carries the verdict."""
    verdict = str(document.get("verdict") or "unknown")
    targets = [t for t in document.get("targets") or [] if t.get("verdict") == verdict]
    result: Dict[str, Any] = {"verdict": verdict, "target": None, "reason": None, "fix": None, "command": None,
                              "failing": len(targets), "total": len(document.get("targets") or [])}
    if verdict not in _ORDER:
        return result
    candidates = [(t.get("target"), t.get("findings") or []) for t in targets]
    candidates.append((None, list(document.get("machine") or []) + list(document.get("together") or [])))
    for target, findings in candidates:
        finding = _reason(findings, verdict)
        if finding is None:
            continue
        fix = finding.get("fix") or {}
        commands = fix.get("commands") or []
        result.update(target=target, reason=finding.get("title"), fix=fix.get("summary"),
                      command=commands[0] if commands else None)
        break
    if result["target"] is None and targets:
        result["target"] = targets[0].get("target")
    return result


def _colon(lang: str) -> str:
    return "：" if lang == "zh" else ": "


def answer_line(document: Mapping[str, Any], lang: str) -> str:
    """The answer as one line of plain text: ``FAIL · vllm==0.9.0: <reason> · Fix: <summary> $ <command>``."""
    said = answer(document)
    parts = [text(lang, "report.verdict_line", verdict=text(lang, "verdict." + said["verdict"]).upper())]
    if said["total"] > 1 and said["verdict"] in _ORDER:
        parts.append(text(lang, "report.answer_count", count=said["failing"], total=said["total"]))
    if said["reason"]:
        parts.append(f"{said['target']}: {said['reason']}" if said["target"] else str(said["reason"]))
    elif said["verdict"] == "pass" and said["total"]:
        parts.append(text(lang, "report.answer_runs"))
    if said["fix"]:
        fix = f"{text(lang, 'report.fix')}{_colon(lang)}{str(said['fix']).rstrip(':：')}"
        parts.append(fix + (f" $ {said['command']}" if said["command"] else ""))
    return " · ".join(parts)


def fleet_answer_line(document: Mapping[str, Any], lang: str) -> str:
    """The answer of a fleet or diff document in one line: the worst thing first (hosts not reached, a failing
    finding or target verdict with its hosts and fix), else how the hosts differ, else that they agree."""
    hosts = list(document.get("hosts") or [])
    down = [str(h.get("host")) for h in hosts if h.get("status") != "ok"]
    failing = [f for f in document.get("findings") or [] if f.get("severity") == "fail"]
    groups = [(t.get("target"), g) for t in document.get("targets") or [] for g in t.get("verdicts") or []]
    bad = [(target, g) for target, g in groups if g.get("verdict") == "fail"] or \
        [(target, g) for target, g in groups if g.get("verdict") == "unknown"]
    verdict = "fail" if down or failing or any(g.get("verdict") == "fail" for _, g in groups) else (
        "unknown" if bad else ("warn" if document.get("groups") or any(g.get("verdict") == "warn" for _, g in groups)
                               else "pass"))
    parts = [text(lang, "report.verdict_line", verdict=text(lang, "verdict." + verdict).upper())]
    if down:
        parts.append(text(lang, "report.answer_hosts_down", count=len(down), total=len(hosts), hosts=", ".join(down)))
    elif failing:
        finding = failing[0]
        parts.append("%s (%s)" % (finding.get("title"), ", ".join(str(h) for h in finding.get("hosts") or [])))
        if finding.get("fix"):
            summary = finding["fix"].get("summary") if isinstance(finding["fix"], Mapping) else finding["fix"]
            parts.append(f"{text(lang, 'report.fix')}{_colon(lang)}{summary}")
    elif bad:
        target, group = bad[0]
        reasons = [f for f in group.get("findings") or [] if f.get("severity") in ("fail", "warn")]
        where = ", ".join(str(h) for h in group.get("hosts") or [])
        parts.append(f"{target} ({where})" + (f": {reasons[0].get('title')}" if reasons else ""))
        if reasons and reasons[0].get("fix"):
            parts.append(f"{text(lang, 'report.fix')}{_colon(lang)}{reasons[0]['fix']}")
    elif document.get("groups"):
        fields = ", ".join(text(lang, "fleet.field." + str(g.get("field"))) for g in document["groups"])
        parts.append(text(lang, "report.answer_differ", fields=fields))
    else:
        parts.append(text(lang, "report.answer_agree", total=len(hosts)))
    return " · ".join(parts)
