"""Shared reports as a list of neutral blocks, so Markdown and HTML say exactly the same thing.

Each command's document (the localized JSON of docs/CONTRACT.md §3) becomes a tuple of blocks here: pure functions, all
fixed words from the catalogs. ``report.markdown`` and ``report.html`` turn blocks into markup and do ALL the
escaping: every string in a block is plain, untrusted text (it may come from a hostile snapshot).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from gpuvet.i18n import label as field_label
from gpuvet.i18n import source_label, text

# Verdict-like words the blocks carry; the renderers map them to icons and colours (and nothing else).
VERDICTS = ("pass", "warn", "fail", "unknown", "skip", "info")
_HOST_OK = {"ok": "pass"}


@dataclass(frozen=True)
class Title:
    text: str
    verdict: Optional[str] = None  # overall verdict badge, when the command has one
    verdict_label: str = ""
    subtitle: str = ""


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2
    verdict: Optional[str] = None
    verdict_label: str = ""


@dataclass(frozen=True)
class Para:
    text: str
    verdict: Optional[str] = None
    muted: bool = False


@dataclass(frozen=True)
class Bullets:
    items: Tuple[str, ...]


@dataclass(frozen=True)
class Checklist:
    items: Tuple[str, ...]


@dataclass(frozen=True)
class Commands:
    commands: Tuple[str, ...]


@dataclass(frozen=True)
class Pre:
    lines: Tuple[str, ...]


@dataclass(frozen=True)
class Cell:
    text: str
    verdict: Optional[str] = None  # an icon before the text
    numeric: bool = False


@dataclass(frozen=True)
class Table:
    headers: Tuple[str, ...]
    rows: Tuple[Tuple[Cell, ...], ...]


@dataclass(frozen=True)
class ChainLink:
    label: str  # "driver", "CUDA", ... (localized)
    verdict: str
    verdict_label: str
    actual: str
    expected: str = ""
    source: str = ""


@dataclass(frozen=True)
class Chain:
    """One target: driver → CUDA → cuDNN → NCCL → framework → Python, each link with its verdict."""

    title: str
    subtitle: str
    verdict: str
    verdict_label: str
    links: Tuple[ChainLink, ...]
    headers: Tuple[str, ...]  # layer, verdict, found, needs, from


@dataclass(frozen=True)
class Card:
    """One finding or diagnosis: a titled box with its body blocks (detail, fix commands, sources)."""

    verdict: str
    title: str
    tag: str  # "driver_too_old · driver"
    body: Tuple[Any, ...] = ()


@dataclass(frozen=True)
class Details:
    """Blocks folded under a one-line summary (HTML ``<details>``): context a reader opens when they want it."""

    summary: str
    body: Tuple[Any, ...] = ()


@dataclass(frozen=True)
class Bar:
    label: str
    value_text: str
    reference_text: str
    fraction: float
    verdict: str


@dataclass(frozen=True)
class Chart:
    title: str
    reference_label: str
    bars: Tuple[Bar, ...]
    headers: Tuple[str, ...] = ()  # test, value, reference, share: the Markdown table form of the chart


@dataclass(frozen=True)
class TimelineRow:
    label: str
    values: Tuple[Optional[float], ...]  # 0..100, one per point in time (None: no reading)
    summary: str  # "mean 87 %"
    verdict: str  # pass, or warn for a device that lags


@dataclass(frozen=True)
class Timeline:
    """Utilization over time, one row per device (HTML: an inline SVG chart; Markdown: sparklines)."""

    title: str
    rows: Tuple[TimelineRow, ...]
    caption: str = ""
    headers: Tuple[str, ...] = ()  # device, utilization, mean: the Markdown table form


@dataclass(frozen=True)
class Report:
    lang: str
    title: str  # the page title (plain)
    blocks: Tuple[Any, ...]
    footer: str = ""
    extra: Dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------- helpers


def _s(value: Any) -> str:
    """Any document value as display text ('-' for nothing)."""
    if value is None or value == "":
        return "-"
    if isinstance(value, float):
        return "%.4g" % value
    return str(value)


def _verdict(value: Any) -> str:
    return value if value in VERDICTS else "unknown"


def _word(lang: str, verdict: str) -> str:
    return text(lang, "verdict." + verdict)


def _kb_line(document: Mapping[str, Any], lang: str) -> str:
    kb = document.get("kb") or {}
    if not kb.get("version"):
        return ""
    line = text(lang, "reports.kb", version=_s(kb.get("version")), updated=_s(kb.get("updated")))
    if kb.get("overlay"):
        line += text(lang, "report.kb_overlay", path=_s(kb["overlay"].get("path")), files=_s(kb["overlay"].get("files")))
    return line


def _footer(document: Mapping[str, Any], lang: str) -> str:
    parts = [text(lang, "reports.generated", version=_s(document.get("gpuvet_version"))), _kb_line(document, lang)]
    return " · ".join(p for p in parts if p)


def _machine(document: Mapping[str, Any], lang: str) -> List[Any]:
    from gpuvet.report.machine_summary import machine_lines

    snapshot = document.get("snapshot")
    if not snapshot:
        return []
    lines = machine_lines(snapshot, lang)
    return [Heading(text(lang, "reports.machine")), Bullets(tuple(lines))] if lines else []


def finding_card(finding: Mapping[str, Any], lang: str) -> Card:
    body: List[Any] = []
    if finding.get("detail"):
        body.append(Para(_s(finding["detail"])))
    if finding.get("expected") or finding.get("actual"):
        body.append(Para(text(lang, "reports.expected_actual", expected=_s(finding.get("expected")), actual=_s(finding.get("actual")))))
    if finding.get("hosts"):
        body.append(Para(text(lang, "reports.hosts", hosts=", ".join(str(h) for h in finding["hosts"]))))
    body.extend(_fix_blocks(finding.get("fix"), lang))
    body.extend(_sources(finding.get("sources"), lang))
    severity = _verdict(finding.get("severity"))
    layer = finding.get("layer")
    tag = _s(finding.get("code")) + (" · " + text(lang, "layer." + str(layer)) if layer else "")
    return Card(severity, _s(finding.get("title")), tag, tuple(body))


def _fix_blocks(fix: Optional[Mapping[str, Any]], lang: str) -> List[Any]:
    if not fix:
        return []
    out: List[Any] = [Para(text(lang, "reports.fix") + " " + _s(fix.get("summary")))]
    commands = tuple(str(c) for c in fix.get("commands") or ())
    if commands:
        out.append(Commands(commands))
    return out


def _sources(sources: Optional[Sequence[str]], lang: str) -> List[Any]:
    """The sources of a finding, folded: they back the sentence above, they are not what a reader acts on."""
    if not sources:
        return []
    # Inside the fold the line still opens with "Sources:", the mark of quoted text (a source is cited as published).
    return [Details(text(lang, "reports.sources_count", count=len(sources)),
                    (Para(text(lang, "reports.sources") + " " + " ".join(str(s) for s in sources), muted=True),))]


def _findings(title: str, findings: Sequence[Mapping[str, Any]], lang: str) -> List[Any]:
    if not findings:
        return []
    return [Heading(title)] + [finding_card(f, lang) for f in findings]


def _chain_headers(lang: str) -> Tuple[str, ...]:
    return tuple(text(lang, "reports.col." + c) for c in ("layer", "verdict", "actual", "expected", "source"))


# ---------------------------------------------------------------- commands


def _check_summary(document: Mapping[str, Any], lang: str) -> str:
    """The page in one line, read before anything else: each target's verdict, and what the machine itself has."""
    items = [text(lang, "reports.summary.target", target=_s(t.get("target")), verdict=_word(lang, _verdict(t.get("verdict"))))
             for t in document.get("targets") or []]
    machine = [f for f in document.get("machine") or [] if f.get("severity") in ("fail", "warn")]
    if machine:
        failing = sum(1 for f in machine if f.get("severity") == "fail")
        items.append(text(lang, "reports.summary.machine", failures=failing, warnings=len(machine) - failing))
    return text(lang, "reports.summary", items=text(lang, "reports.summary.separator").join(items)) if items else ""


_VERDICT_RANK = {"fail": 0, "unknown": 1, "warn": 2, "pass": 3, "skip": 4}


def _answer_blocks(document: Mapping[str, Any], lang: str) -> List[Any]:
    """The answer, before anything else: the verdict with its one reason and its one fix (report.answer)."""
    from gpuvet.report.answer import answer

    said = answer(document)
    verdict = _verdict(said["verdict"])
    if not said["reason"]:
        return []
    reason = "%s: %s" % (said["target"], said["reason"]) if said["target"] else _s(said["reason"])
    blocks: List[Any] = [Para(reason, verdict)]
    if said["fix"]:
        blocks.append(Para(text(lang, "reports.fix") + " " + _s(said["fix"])))
    if said["command"]:
        blocks.append(Commands((str(said["command"]),)))
    return blocks


def _acted_on(findings: Sequence[Mapping[str, Any]], lang: str) -> List[Any]:
    """Failures and warnings as cards; notes folded under one line (context, not something to act on)."""
    cards: List[Any] = [finding_card(f, lang) for f in findings if f.get("severity") != "info"]
    notes = [finding_card(f, lang) for f in findings if f.get("severity") == "info"]
    if notes:
        cards.append(Details(text(lang, "reports.notes_count", count=len(notes)), tuple(notes)))
    return cards


def check_report(document: Mapping[str, Any], lang: str) -> Report:
    verdict = _verdict(document.get("verdict"))
    blocks: List[Any] = [Title(text(lang, "reports.title.check"), verdict, _word(lang, verdict), _kb_line(document, lang))]
    blocks += _answer_blocks(document, lang)
    summary = _check_summary(document, lang)
    if summary:
        blocks.append(Para(summary, verdict))
    machine_findings = document.get("machine") or []
    acted = [f for f in machine_findings if f.get("severity") in ("fail", "warn")]
    if acted:
        blocks += [Heading(text(lang, "reports.machine_findings"))] + [finding_card(f, lang) for f in acted]
    # The targets in the order a reader acts on them: failing first, each with its fix; the machine's facts and
    # notes after them, folded.
    targets = sorted(document.get("targets") or [], key=lambda t: _VERDICT_RANK.get(_verdict(t.get("verdict")), 5))
    if targets:
        blocks.append(Heading(text(lang, "reports.targets")))
    for target in targets:
        resolved = target.get("resolved")
        subtitle = text(lang, "reports.judged_as", resolved=resolved) if resolved and resolved != target.get("target") else ""
        links = tuple(
            ChainLink(
                label=text(lang, "layer." + str(link.get("layer"))),
                verdict=_verdict(link.get("verdict")),
                verdict_label=_word(lang, _verdict(link.get("verdict"))),
                actual=_s(link.get("actual")),
                expected=_s(link.get("expected")) if link.get("expected") else "",
                source=source_label(lang, _s(link.get("source"))) if link.get("source") else "",
            )
            for link in target.get("chain") or []
        )
        tv = _verdict(target.get("verdict"))
        blocks.append(Chain(_s(target.get("target")), subtitle, tv, _word(lang, tv), links, _chain_headers(lang)))
        findings = target.get("findings") or []
        blocks += _acted_on(findings, lang)
        if not findings:
            blocks.append(Para(text(lang, "reports.no_findings"), muted=True))
    together = document.get("together") or []
    if together:
        blocks += [Heading(text(lang, "reports.together"))] + _acted_on(together, lang)
    if not targets:
        blocks.append(Para(text(lang, "reports.no_targets")))
    machine = _machine(document, lang)
    notes = [f for f in machine_findings if f.get("severity") not in ("fail", "warn")]
    if machine or notes:
        blocks.append(Details(text(lang, "reports.machine"),
                              tuple(machine[1:]) + tuple(finding_card(f, lang) for f in notes)))
    return Report(lang, "%s: %s" % (text(lang, "reports.title.check"), _word(lang, verdict)), tuple(blocks), _footer(document, lang))


def recommend_report(document: Mapping[str, Any], lang: str) -> Report:
    framework = _s(document.get("framework"))
    title = text(lang, "reports.title.recommend", framework=framework)
    blocks: List[Any] = [Title(title, subtitle=_kb_line(document, lang))]
    blocks += _machine(document, lang)
    items = document.get("recommendations") or []
    if not items:
        undecided = document.get("undecided") or 0
        blocks.append(Para(text(lang, "reports.recommend.none_undecided" if undecided else "reports.recommend.none",
                                framework=framework, undecided=undecided), verdict="unknown" if undecided else "fail"))
    for number, item in enumerate(items, 1):
        cuda = "CUDA %s" % item["cuda"] if item.get("cuda") else "CPU"
        verdict = "pass" if not item.get("needs") else "warn"
        blocks.append(Heading(
            text(lang, "reports.recommend.item", number=number, framework=_s(item.get("framework")),
                 version=_s(item.get("version")), variant=_s(item.get("variant")), cuda=cuda, python=_s(item.get("python"))),
            level=3, verdict=verdict, verdict_label=_word(lang, verdict)))
        if item.get("needs"):
            blocks.append(Para(text(lang, "reports.recommend.fits_after", needs="; ".join(str(n) for n in item["needs"])), verdict="warn"))
        else:
            blocks.append(Para(text(lang, "reports.recommend.fits_now"), verdict="pass"))
        if item.get("install"):
            blocks.append(Commands(tuple(str(c) for c in item["install"])))
    return Report(lang, title, tuple(blocks), _footer(document, lang))


_MEMORY_PARTS = ("weights", "gradients", "optimizer", "activations", "kv_cache", "total", "per_gpu")


def plan_report(document: Mapping[str, Any], lang: str) -> Report:
    plan = document.get("plan") or {}
    inputs = plan.get("inputs") or {}
    fits = any(row.get("fits") for row in plan.get("gpus") or [])
    verdict = "pass" if fits else "fail"
    blocks: List[Any] = [Title(text(lang, "reports.title.plan"), verdict, _word(lang, verdict), _kb_line(document, lang))]
    if inputs:
        parameters = inputs.get("parameters")
        size = "%.3gB" % (parameters / 1e9) if isinstance(parameters, (int, float)) else _s(parameters)
        model = (plan.get("model") or {}).get("display")
        blocks.append(Para(text(lang, "plan.heading", model=_s(model) if model else "?", params=size, task=_s(inputs.get("task")),
                                precision=_s(inputs.get("precision")), gpus=inputs.get("gpus") or "?")))
    memory = plan.get("memory_gib") or {}
    rows: Tuple[Tuple[Cell, ...], ...] = tuple(
        (Cell(text(lang, "reports.plan.part." + part)), Cell(_s(memory[part]), numeric=True))
        for part in _MEMORY_PARTS if memory.get(part) is not None
    )
    if rows:
        blocks += [Heading(text(lang, "reports.plan.memory")),
                   Table((text(lang, "reports.plan.part"), text(lang, "reports.plan.gib")), rows)]
    if plan.get("assumptions"):
        blocks += [Heading(text(lang, "reports.plan.assumptions"), level=3), Bullets(tuple(_s(a) for a in plan["assumptions"]))]
    gpus = plan.get("gpus") or []
    if gpus:
        headers = tuple(text(lang, "reports.plan.col." + c) for c in ("model", "memory", "count", "note"))
        rows = tuple(
            (Cell(_s(row.get("model")), verdict="pass" if row.get("fits") else "fail"),
             Cell(_s(row.get("memory_gib")), numeric=True),
             Cell(_s(row.get("count")) if row.get("count") else "-", numeric=True),
             Cell(_s(row.get("reason")) if row.get("reason") else ""))
            for row in gpus[:30]
        )
        blocks += [Heading(text(lang, "reports.plan.gpus")), Table(headers, rows)]
    software = plan.get("software") or {}
    if software:
        blocks.append(Heading(text(lang, "reports.plan.software")))
        if software.get("known"):
            blocks.append(Para(text(lang, "reports.plan.software_line", framework=_s(software.get("framework")),
                                    version=_s(software.get("version")), python=_s(software.get("python")),
                                    variant=_s(software.get("default_variant")), driver=_s(software.get("min_driver")))))
            variants = software.get("variants") or {}
            headers = (text(lang, "reports.plan.col.variant"), "CUDA", "cuDNN", "NCCL", text(lang, "reports.plan.col.min_driver"))
            rows = tuple(
                (Cell(_s(name)), Cell(_s(v.get("cuda"))), Cell(_s(v.get("cudnn"))), Cell(_s(v.get("nccl"))), Cell(_s(v.get("min_driver"))))
                for name, v in variants.items()
            )
            if rows:
                blocks.append(Table(headers, rows))
        else:
            blocks.append(Para(text(lang, "reports.plan.software_unknown", framework=_s(software.get("framework"))), verdict="unknown"))
    if plan.get("nvlink"):
        blocks += [Heading(text(lang, "reports.plan.interconnect"), level=3), Para(_s(plan["nvlink"]))]
    if plan.get("questions"):
        blocks += [Heading(text(lang, "reports.plan.questions")), Checklist(tuple(_s(q) for q in plan["questions"]))]
    return Report(lang, text(lang, "reports.title.plan"), tuple(blocks), _footer(document, lang))


def diagnose_report(document: Mapping[str, Any], lang: str) -> Report:
    diagnoses = document.get("diagnoses") or []
    stack = [d for d in diagnoses if d.get("code") != "not_a_stack_problem"]
    verdict = "fail" if stack else ("pass" if diagnoses else "unknown")
    title = text(lang, "reports.title.diagnose")
    blocks: List[Any] = [Title(title, subtitle=_kb_line(document, lang))]
    blocks += _machine(document, lang)
    judged = document.get("judged") or {}
    if judged.get("text"):
        blocks.append(Para(_s(judged["text"]), muted=True))
    unknown = document.get("no_known_cause")
    if unknown:
        blocks.append(Para(text(lang, "diagnose.ui.no_known_cause"), verdict="unknown"))
        blocks += [Para(text(lang, "diagnose.ui.error_lines")),
                   Pre(tuple("%s: %s" % (_s(e.get("line")), _s(e.get("text"))) for e in unknown.get("error_lines") or []))]
        facts = unknown.get("facts") or {}
        blocks.append(Para(text(lang, "diagnose.ui.facts", facts="; ".join("%s %s" % kv for kv in facts.items()))
                           if facts else text(lang, "diagnose.ui.no_facts")))
    elif not diagnoses:
        blocks.append(Para(text(lang, "reports.diagnose.none"), verdict="unknown"))
    else:
        blocks.append(Heading(text(lang, "reports.diagnose.count", count=len(diagnoses))))
    for number, item in enumerate(diagnoses, 1):
        body: List[Any] = []
        if item.get("explanation"):
            body.append(Para(_s(item["explanation"])))
        extracted = item.get("extracted") or {}
        if extracted:
            body.append(Para(field_label(lang, "reports.diagnose.extracted")
                             + ", ".join("%s=%s" % (k, v) for k, v in sorted(extracted.items()))))
        evidence = item.get("evidence") or []
        if evidence:
            body += [Para(field_label(lang, "reports.diagnose.evidence").rstrip()),
                     Pre(tuple("%s: %s" % (_s(e.get("line")), _s(e.get("text"))) for e in evidence))]
        checks = item.get("snapshot") or []
        if checks:
            body.append(Para(field_label(lang, "reports.diagnose.snapshot").rstrip()))
            body.append(Bullets(tuple(
                (field_label(lang, "reports.diagnose." + c["verdict"]) if c.get("verdict") in ("confirms", "rules_out")
                 else _s(c.get("verdict")) + ": ") + _s(c.get("text"))
                for c in checks)))
        elif item.get("settle"):
            body.append(Para(text(lang, "reports.diagnose.settle", commands="; ".join(str(s) for s in item["settle"])), muted=True))
        body.extend(_fix_blocks(item.get("fix"), lang))
        body.extend(_sources(item.get("sources"), lang))
        confidence = item.get("confidence")
        tag = _s(item.get("code"))
        if isinstance(confidence, (int, float)):
            tag += " · " + text(lang, "reports.diagnose.confidence", confidence="%.2f" % confidence)
        card_verdict = "info" if item.get("code") == "not_a_stack_problem" else ("fail" if number == 1 else "warn")
        blocks.append(Card(card_verdict, "%d. %s" % (number, _s(item.get("title"))), tag, tuple(body)))
    nearest = (unknown or {}).get("nearest") or document.get("nearest") or []
    if nearest:
        blocks.append(Para(text(lang, "diagnose.ui.nearest" if unknown else "diagnose.ui.near_misses")))
        blocks.append(Bullets(tuple("%s [%s]" % (_s(n.get("title")), _s(n.get("code"))) for n in nearest)))
    harmless = document.get("harmless") or []
    if harmless:
        blocks.append(Para(text(lang, "diagnose.ui.harmless"), muted=True))
        blocks.append(Pre(tuple("%s: %s" % (_s(e.get("line")), _s(e.get("text"))) for e in harmless)))
    return Report(lang, "%s: %s" % (title, _word(lang, verdict)), tuple(blocks), _footer(document, lang))


def _smoke_value(result: Mapping[str, Any]) -> str:
    value = _s(result.get("value"))
    if result.get("unit") and result.get("value") is not None:
        value += " " + str(result["unit"])
    return value


def _smoke_name(result: Mapping[str, Any]) -> str:
    name = _s(result.get("name"))
    where = []
    if result.get("framework") and result.get("framework") != "torch":
        where.append(str(result["framework"]))
    if result.get("device_index") is not None:
        where.append("cuda:%s" % result["device_index"])
    return name + (" [%s]" % " ".join(where) if where else "")


def smoke_report(document: Mapping[str, Any], lang: str) -> Report:
    results = document.get("results") or []
    statuses = [_verdict(r.get("status")) for r in results]
    verdict = next((v for v in ("fail", "warn", "pass") if v in statuses), "skip")
    title = text(lang, "reports.title.smoke")
    counts = Counter(statuses)
    blocks: List[Any] = [Title(title, verdict, _word(lang, verdict), _kb_line(document, lang))]
    blocks.append(Para(text(lang, "reports.smoke.device", device=_s(document.get("device")))))
    if document.get("device") == "cpu":
        blocks.append(Para(text(lang, "smoke.cpu_note"), muted=True))
    dist = document.get("distributed")
    if dist:
        blocks.append(Para(text(lang, "smoke.dist.header", backend=_s(dist.get("backend")), ranks=dist.get("ranks") or "?",
                                nccl=dist.get("nccl_version") or "-")))
    headers = tuple(text(lang, "smoke.col." + c) for c in ("status", "test", "value", "reference", "fraction", "detail"))
    rows = []
    for result, status in zip(results, statuses):
        share = result.get("fraction_of_reference")
        rows.append((
            Cell("", verdict=status),  # the icon alone: scanning a long table by symbol, the word next to it
            Cell(_word(lang, status)),
            Cell(_smoke_name(result)),
            Cell(_smoke_value(result), numeric=True),
            Cell(_s(result.get("reference")), numeric=True),
            Cell("%d %%" % round(share * 100) if isinstance(share, (int, float)) else "-", numeric=True),
            Cell(_s(result.get("detail")) if result.get("detail") else ""),
        ))
    blocks += [Heading(text(lang, "reports.smoke.results")), Table(("",) + headers, tuple(rows))]
    bars = tuple(
        Bar(_smoke_name(r), _smoke_value(r), _s(r.get("reference")), float(r["fraction_of_reference"]), status)
        for r, status in zip(results, statuses)
        if isinstance(r.get("fraction_of_reference"), (int, float)) and r.get("reference") is not None
    )
    blocks.append(Heading(text(lang, "reports.smoke.chart")))
    if bars:
        blocks.append(Chart(text(lang, "reports.smoke.chart"), text(lang, "reports.smoke.chart_reference"), bars,
                            (headers[1], headers[2], headers[3], headers[4])))
    else:
        blocks.append(Para(text(lang, "reports.smoke.chart_none"), muted=True))
    blocks.extend(_utilization_blocks(document.get("utilization"), lang))
    fixes = [(r, s) for r, s in zip(results, statuses) if r.get("fix")]
    if fixes:
        blocks.append(Heading(text(lang, "reports.smoke.fixes")))
        for result, status in fixes:
            threshold = []
            if result.get("threshold"):
                threshold = [Para(text(lang, "smoke.threshold", rule=_s(result["threshold"]), source=_s(result.get("threshold_source"))), muted=True)]
            blocks.append(Card(status, _smoke_name(result), _s(result.get("unit")) if result.get("unit") else "",
                               tuple([Para(_s(result.get("detail")))] if result.get("detail") else []) + tuple(_fix_blocks(result["fix"], lang)) + tuple(threshold)))
    blocks.append(Para(text(lang, "smoke.summary", **{k: counts.get(k, 0) for k in ("pass", "warn", "fail", "skip")})))
    footer = _footer(document, lang)
    if document.get("thresholds_version"):
        footer += " · " + text(lang, "reports.smoke.thresholds", version=_s(document["thresholds_version"]))
    return Report(lang, "%s: %s" % (title, _word(lang, verdict)), tuple(blocks), footer)


def _utilization_blocks(section: Any, lang: str) -> List[Any]:
    from gpuvet.report.smoke import utilization_title

    if not isinstance(section, Mapping) or not section.get("devices"):
        return []
    rows = []
    for device in section["devices"]:
        mean = device.get("mean")
        values = tuple(float(v) if isinstance(v, (int, float)) else None for v in device.get("samples") or ())
        rows.append(TimelineRow(_s(device.get("label")), values,
                                text(lang, "smoke.sync.row", mean="%g" % round(mean) if isinstance(mean, (int, float)) else "?"),
                                "warn" if device.get("lagging") else "pass"))
    title = utilization_title(dict(section), lang)
    headers = tuple(text(lang, "reports.smoke.timeline." + c) for c in ("device", "series", "mean"))
    return [Heading(title), Timeline(title, tuple(rows), _s(section.get("source")), headers)]


def _fleet_value(value: Any, lang: str) -> str:
    return text(lang, "reports.fleet.unknown") if value is None else _s(value)


def _fleet_reasons(group: Mapping[str, Any], lang: str) -> str:
    """Why these hosts have this verdict for a target: each failure or warning of theirs, with its fix, and the
    hosts it holds for where only some of the group have it (a per-target reason is never dropped)."""
    hosts = list(group.get("hosts") or [])
    said = []
    for finding in group.get("findings") or []:
        if finding.get("severity") == "info":
            continue
        line = _s(finding.get("title"))
        if finding.get("fix"):
            line += " — %s %s" % (text(lang, "reports.fix"), _s(finding["fix"]))
        if set(finding.get("hosts") or []) != set(hosts):
            line += " (%s)" % ", ".join(str(h) for h in finding.get("hosts") or [])
        said.append(line)
    return "; ".join(said)


def fleet_report(document: Mapping[str, Any], lang: str, command: str = "fleet") -> Report:
    hosts = document.get("hosts") or []
    summary = document.get("summary") or {}
    title = text(lang, "reports.title." + command)
    if document.get("via"):
        counts = ", ".join("%s %s" % (n, text(lang, "fleet.status." + s)) for s, n in summary.items() if s != "total" and n)
        heading = text(lang, "fleet.heading.summary", total=summary.get("total", len(hosts)), via=_s(document["via"]), counts=counts)
    else:
        heading = text(lang, "fleet.heading.diff_summary", total=summary.get("total", len(hosts)))
    bad_hosts = any(h.get("status") != "ok" for h in hosts)
    severities = {f.get("severity") for f in document.get("findings") or []}
    target_verdicts = {g.get("verdict") for t in document.get("targets") or [] for g in t.get("verdicts") or []}
    verdict = "fail" if bad_hosts or "fail" in severities or "fail" in target_verdicts else (
        "unknown" if "unknown" in target_verdicts else (
            "warn" if "warn" in severities | target_verdicts or document.get("groups") else "pass"))
    blocks: List[Any] = [Title(title, verdict, _word(lang, verdict), _kb_line(document, lang)), Para(heading)]
    headers = tuple(text(lang, "reports.fleet.col." + c) for c in ("host", "status", "detail"))
    rows = tuple(
        (Cell(_s(h.get("host"))),
         Cell(text(lang, "fleet.status." + str(h.get("status"))), verdict=_HOST_OK.get(str(h.get("status")), "fail")),
         Cell(_s(h.get("error") or h.get("note") or "") if (h.get("error") or h.get("note")) else ""))
        for h in hosts
    )
    blocks += [Heading(text(lang, "reports.fleet.hosts")), Table(headers, rows)]
    if document.get("out_dir"):
        blocks.append(Para(text(lang, "reports.fleet.saved_to", folder=_s(document["out_dir"])), muted=True))
    groups = document.get("groups") or []
    if groups:
        blocks.append(Heading(text(lang, "reports.fleet.differences")))
        for group in groups:
            blocks.append(Heading(text(lang, "fleet.field." + str(group.get("field"))), level=3))
            vrows = []
            for index, value in enumerate(group.get("values") or []):
                outlier = index > 0 and value.get("value") is not None
                label = _fleet_value(value.get("value"), lang) + ("  (%s)" % text(lang, "reports.fleet.outlier") if outlier else "")
                vrows.append((Cell(label, verdict="warn" if outlier else None), Cell(", ".join(str(h) for h in value.get("hosts") or []))))
            blocks.append(Table((text(lang, "reports.fleet.col.value"), text(lang, "reports.fleet.col.hosts")), tuple(vrows)))
    elif any(h.get("status") == "ok" for h in hosts):
        blocks.append(Para(text(lang, "reports.fleet.no_differences"), verdict="pass"))
    if document.get("agreed"):
        blocks += [Heading(text(lang, "reports.fleet.agreed"), level=3), Bullets(tuple(
            field_label(lang, "fleet.field." + str(a.get("field"))) + _fleet_value(a.get("value"), lang) for a in document["agreed"]))]
    blocks += _findings(text(lang, "reports.fleet.findings"), document.get("findings") or [], lang)
    targets = document.get("targets") or []
    if targets:
        headers = (text(lang, "reports.fleet.col.target"), text(lang, "reports.col.verdict"), text(lang, "reports.fleet.col.hosts"),
                   text(lang, "reports.fleet.col.reason"))
        trows = tuple(
            (Cell(_s(t.get("target"))), Cell(_word(lang, _verdict(g.get("verdict"))), verdict=_verdict(g.get("verdict"))),
             Cell(", ".join(str(h) for h in g.get("hosts") or [])), Cell(_fleet_reasons(g, lang)))
            for t in targets for g in t.get("verdicts") or []
        )
        blocks += [Heading(text(lang, "reports.fleet.checks")), Table(headers, trows)]
    return Report(lang, "%s: %s" % (title, _word(lang, verdict)), tuple(blocks), _footer(document, lang))


def diff_report(document: Mapping[str, Any], lang: str) -> Report:
    return fleet_report(document, lang, command="diff")


BUILDERS: Dict[str, Callable[[Mapping[str, Any], str], Report]] = {
    "check": check_report,
    "recommend": recommend_report,
    "plan": plan_report,
    "diagnose": diagnose_report,
    "smoke": smoke_report,
    "fleet": fleet_report,
    "diff": diff_report,
}
