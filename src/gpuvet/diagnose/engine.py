"""The diagnose engine (pure): log text + optional snapshot + signatures -> ranked diagnoses.

One pass per signature over the whole text (each signature's patterns compiled into one alternation), so a 50 MB
log costs a few C-level regex scans, not a Python loop per line. Line numbers are computed once for all matches.

Scoring: a code's strength is the noisy-or of the weights of the distinct signatures that matched it. Generic texts
("CUDA error: unknown error", "unhandled cuda error") count half once anything specific matched, so the real line
buried in a long traceback wins. Causes earlier in the chain (driver → CUDA → cuDNN/NCCL → framework build → the
rest) get a small bonus, so when several match, the one that explains the others comes first. The snapshot then
confirms (raises) or rules out (lowers) each cause.
"""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate
from typing import Any, Dict, Iterable, List, Mapping, Optional, Set, Tuple

from gpuvet.diagnose.anchors import leading_literal, spans_lines
from gpuvet.diagnose.context import CONFIRMS, RULES_OUT, Check, judge, snapshot_problems
from gpuvet.diagnose.signatures import Signature, SignatureBase, load_signatures
from gpuvet.i18n import has_message
from gpuvet.models import Fix, Message, msg
from gpuvet.snapshot import SnapshotView

MAX_MATCHES_PER_SIGNATURE = 1000  # bounds the work on a log that repeats one line a million times
EVIDENCE_PER_SIGNATURE = 3  # kept: the first match and the last ones (the real error is usually last)
EVIDENCE_PER_DIAGNOSIS = 6
MAX_LINE_CHARS = 300
MAX_DIAGNOSES = 5
MIN_CONFIDENCE = 0.12
CHAIN_BONUS = 0.06  # at most; shrinks with the code's rank in codes.toml
USER_CODE = "not_a_stack_problem"
# Codes ranked below this in codes.toml are links of the chain (driver ... framework build, Python, packages); from
# it on come run-time conditions (a collective timeout, an OOM) that a bug in the user's code can itself cause.
CHAIN_END_RANK = 60
CLEAR_STACK_CAUSE = 0.5  # a chain cause at least this likely contradicts "the stack is fine"


@dataclass(frozen=True)
class Evidence:
    line: int  # 1-based
    text: str
    signature: str


@dataclass(frozen=True)
class Diagnosis:
    code: str
    confidence: float
    title: Message
    explanations: Tuple[Message, ...]
    evidence: Tuple[Evidence, ...]
    checks: Tuple[Check, ...]
    fix: Fix
    settle: Tuple[str, ...]  # commands that would confirm or rule out the cause (when the snapshot could not)
    sources: Tuple[str, ...]
    params: Mapping[str, Any] = field(default_factory=dict)
    from_snapshot: bool = False  # named by the snapshot, not by a log line


@dataclass
class _Hit:
    signature: Signature
    count: int = 0
    positions: List[int] = field(default_factory=list)
    columns: Dict[int, int] = field(default_factory=dict)  # line index -> where the match starts in it
    lines: frozenset = frozenset()  # every line index it matched (positions keeps only the evidence)


_DIGITS = str.maketrans("123456789", "000000000")
WINDOW_LINES = 3  # a message may wrap twice (a terminal, an issue form, a log shipper) and still match

# Colour codes (a terminal log pasted as it is) are removed from the whole text before anything else: inside a line
# they would split the words the anchors and patterns look for. Only when the text has an escape at all.
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
# What loggers put before a message, at the start of each line, so that a message wrapped onto a second prefixed line
# still reads as one: torch elastic's "[rank0]:", c10's "[W1015 12:00:00.123 1234 File.cpp:12]", glog's
# "I0101 12:00:00.123456  1234 file.cc:12]", NCCL's "host:pid:tid [dev]", Ray/vLLM's "(VllmWorker rank=0 pid=12)",
# vLLM's "INFO 01-01 12:00:00 [file.py:12]", logging's "2024-01-01 12:00:00,123 ERROR" / "[2024-01-01 12:00:00]".
# Stripped only from the lines a pattern is tried on (the anchors are found in the raw text, the prefix does not hide
# them), so a 50 MB log pays nothing for it.
_PREFIX = re.compile(
    r"(?:\s*(?:"
    r"\[rank\d+\]:"
    r"|\[[IWEF]\d{4} [\d:.]+ \d+ [\w./-]+:\d+\]"
    r"|[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ [\w./-]+:\d+\]"
    r"|\(\w+(?: rank=\d+)? pid=\d+(?:, ip=[\d.]+)?\)"
    r"|(?:DEBUG|INFO|WARNING|WARN|ERROR) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[[\w./-]+:\d+\]"
    r"|\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?"
    r"(?:\s*-?\s*\[?(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\]?\b:?)?"
    r"|[\w.-]+:\d+:\d+ \[\d+\]"
    r"))+[ \t]*"
)


@lru_cache(maxsize=None)
def _line_mode(pattern: str) -> Tuple[bool, bool, Optional[str]]:
    """(can the pattern match across a line break, does it need the logger's prefix gone, the literal a match starts
    with): a pattern that can do neither is tried on the raw line alone, the cheap path most patterns take."""
    lead = leading_literal(pattern)
    return spans_lines(pattern), pattern.startswith("^"), normalise(lead) if lead else None


def strip_prefix(line: str) -> str:
    """The line without the logger's prefix (see _PREFIX); the line itself when it has none."""
    match = _PREFIX.match(line)
    return line[match.end():] if match and match.end() else line


def normalise(text: str) -> str:
    """The form anchors are searched in: lower case, every digit 0 (so 'step 1041 loss 0.31' lines collapse)."""
    return text.lower().translate(_DIGITS)


_PREPARED: Dict[int, Tuple[Any, Any, Any, Tuple[Tuple[Tuple[str, ...], bool], ...]]] = {}


def _prepared(regex: Any, anchor_list: Any, checks: Any) -> Tuple[Any, Any, Any, Tuple[Tuple[Tuple[str, ...], bool], ...]]:
    """Per pattern, once per process: its line mode and the literal sets a match must contain (normalised; the sets
    with digits also as written, since normalise() turns "801" into "000"). Computing them per log was most of the
    time of diagnosing a short log."""
    key = id(regex)
    found = _PREPARED.get(key)
    if found is None or found[0] is not regex:
        multi, bare, lead = _line_mode(regex.pattern)
        required = [(tuple(normalise(a) for a in options), False) for options in checks]
        required += [(tuple(a.lower() for a in options), True) for options in checks
                     if any(ch.isdigit() for a in options for ch in a)]
        if anchor_list is not None:
            required.append((tuple(normalise(a) for a in anchor_list), False))
        found = _PREPARED[key] = (regex, (multi, bare, lead), None, tuple(required))
    multi, bare, lead = found[1]
    return multi, bare, lead, found[3]


def _scan(lines: List[str], signatures: Tuple[Signature, ...]) -> List[_Hit]:
    """Which lines (0-based indices) each signature matches.

    Long logs are mostly the same few lines with different numbers, so lines are grouped by their normalised form
    and anchors are searched once in the distinct forms (str.find, C speed). A pattern's regex then runs only on the
    real lines of the groups where its anchor occurs, on that line joined with the next (a message may wrap once).
    """
    groups: Dict[str, List[int]] = {}
    folded_lines = normalise("\n".join(lines)).split("\n")
    lowered: Dict[int, str] = {}

    cleaned: Dict[int, str] = {}

    def clean(index: int) -> str:
        text = cleaned.get(index)
        if text is None:
            text = cleaned[index] = strip_prefix(lines[index])
        return text

    def lower(index: int) -> str:
        text = lowered.get(index)
        if text is None:
            text = lowered[index] = lines[index].lower()
        return text

    for index, key in enumerate(folded_lines):
        members = groups.get(key)
        if members is None:
            groups[key] = [index]
        else:
            members.append(index)
    keys = list(groups)
    offsets = []
    cursor = 0
    for key in keys:
        offsets.append(cursor)
        cursor += len(key) + 1
    blob = "\n".join(keys)

    def groups_with(needle: str):
        pos = blob.find(needle)
        while pos >= 0:
            group = bisect_right(offsets, pos) - 1
            yield group
            pos = blob.find(needle, offsets[group] + len(keys[group]) + 1)

    grouped: Dict[Tuple[str, ...], Tuple[List[int], int]] = {}
    holding: Dict[Tuple[str, ...], set] = {}

    def groups_of(options: Tuple[str, ...]) -> Tuple[List[int], int]:
        """The distinct lines holding one of the (normalised) literals, and how many lines of the log that is."""
        found = grouped.get(options)
        if found is None:
            ids = sorted({group for option in options for group in groups_with(option)})
            found = grouped[options] = (ids, sum(len(groups[keys[g]]) for g in ids))
        return found

    def lines_with(options: Tuple[str, ...]) -> set:
        """Indices of the lines that contain one of the literals: found once per log with str.find in the distinct
        lines, so narrowing candidate windows is set algebra, not substring tests."""
        found = holding.get(options)
        if found is None:
            found = holding[options] = set()
            for group in groups_of(options)[0]:
                found.update(groups[keys[group]])
        return found

    raw: List[Any] = []  # [lower-cased text, line start offsets], built the first time a literal with digits is sought

    def raw_lines_with(options: Tuple[str, ...]) -> set:
        """Indices of the lines that contain one of the literals with their digits as written ("801"), found with
        str.find in the lower-cased text."""
        found = holding.get(("raw",) + options)
        if found is None:
            if not raw:
                raw.append("\n".join(lines).lower())
                raw.append(list(accumulate((len(line) + 1 for line in lines), initial=0)))
            text, line_starts = raw
            found = holding[("raw",) + options] = set()
            for option in options:
                pos = text.find(option)
                while pos >= 0:
                    line = bisect_right(line_starts, pos) - 1
                    found.add(line)
                    pos = text.find(option, line_starts[line + 1] if line + 1 < len(line_starts) else len(text))
        return found

    def window(index: int) -> str:
        return "\n".join(clean(i) for i in range(index, min(index + WINDOW_LINES, len(lines))))

    def single(index: int) -> str:
        return lines[index]

    present: Dict[Tuple[Tuple[str, ...], bool], bool] = {}

    def absent(need: Tuple[Tuple[str, ...], bool]) -> bool:
        """Whether no line holds any of the literals: a pattern with such a need cannot match anywhere. Most of
        the ~1,400 patterns fail this on a short message, so it is asked (once per literal set) before any sorting."""
        found = present.get(need)
        if found is None:
            options, as_written = need
            if as_written and not raw:
                raw.append("\n".join(lines).lower())
                raw.append(list(accumulate((len(line) + 1 for line in lines), initial=0)))
            haystack = raw[0] if as_written else blob
            found = present[need] = any(option in haystack for option in options)
        return not found

    hits = []
    for signature in signatures:
        matched: Dict[int, int] = {}
        for anchor_list, regex, checks in signature.scan:
            if len(matched) >= MAX_MATCHES_PER_SIGNATURE:
                break
            multi, bare, lead, needed = _prepared(regex, anchor_list, checks)
            if any(map(absent, needed)):
                continue
            text_of = window if multi else (clean if bare else single)
            reach = WINDOW_LINES if multi else 1
            required = list(needed)
            # Where a match can start: within `reach` lines before a line holding each required literal. The
            # rarest literal in this log gives the candidates (a set, in C); the others then filter those few with
            # substring tests, or with set algebra while the candidates are still many.
            required.sort(key=lambda need: (need[1], groups_of(need[0])[1]))
            # A wrapped match still starts on the line holding its first literal: no shifting for that one.
            starts = lines_with((lead,)) if multi and lead else None
            for options, as_written in required:
                if as_written:
                    found = raw_lines_with(options)
                elif starts is not None and len(starts) * reach * 4 < groups_of(options)[1]:
                    starts = {i for i in starts
                              if any(o in folded_lines[j] for j in range(i, min(i + reach, len(lines))) for o in options)}
                    if not starts:
                        break
                    continue
                else:
                    found = lines_with(options)
                if reach == 1:
                    starts = found if starts is None else starts & found
                elif starts is not None and len(starts) < len(found):
                    starts = {i for i in starts if any(j in found for j in range(i, i + reach))}
                else:
                    reachable = {i - d for i in found for d in range(reach) if i - d >= 0}
                    starts = reachable if starts is None else starts & reachable
                if not starts:
                    break
            candidates: Iterable[int] = range(len(lines)) if starts is None else sorted(starts)
            covered = -1  # the last line of the previous match: one match per message
            for start in candidates:
                if start <= covered or start in matched:
                    continue
                text = text_of(start)
                match = regex.search(text)
                if match and (not multi or match.start() <= len(clean(start))):
                    matched[start] = match.start()
                    covered = start + text.count("\n", 0, match.end())
                    if len(matched) >= MAX_MATCHES_PER_SIGNATURE:
                        break
        if matched:
            ordered = sorted(matched)
            keep = ordered[:1] + ordered[1:][-(EVIDENCE_PER_SIGNATURE - 1):]
            hits.append(_Hit(signature, count=len(ordered), positions=keep, columns={i: matched[i] for i in keep},
                             lines=frozenset(ordered)))
    return hits


def _apply_context(hits: List[_Hit], text: str) -> List[_Hit]:
    """Drop contextual signatures whose context is absent, then the matches their firing supersedes.

    The context regexes run on the whole text, but only for signatures that already matched a line, so a big log
    without such a line pays nothing."""
    kept = [h for h in hits if not h.signature.context or any(r.search(text) for r in h.signature.context)]
    superseded = {other for h in kept for other in h.signature.supersedes}
    # A harvested signature that only restates a superseded one (same code, no line of its own) goes with it.
    dropped: Dict[str, set] = {}
    for hit in kept:
        if hit.signature.id in superseded:
            dropped.setdefault(hit.signature.code, set()).update(hit.lines)
    kept = [h for h in kept if h.signature.id not in superseded
            and not (h.signature.harvested and h.lines <= dropped.get(h.signature.code, set()))]
    # One reading per line: the hand-written signatures were tuned on real threads (and carry the context rules), so
    # where one of them reads a line, a harvested signature reading only such lines does not compete with it.
    owned: Set[int] = set()
    for hit in kept:
        if not hit.signature.harvested:
            owned |= hit.lines
    return [h for h in kept if not h.signature.harvested or not h.lines <= owned]


def _line_text(lines: List[str], index: int, column: int = 0) -> str:
    """The line, or for a very long one (minified JSON, a progress bar without newlines) the part around the match."""
    line = lines[index]
    if len(line.strip()) <= MAX_LINE_CHARS:
        return line.strip()
    start = max(0, min(column - MAX_LINE_CHARS // 4, len(line) - MAX_LINE_CHARS))
    excerpt = line[start : start + MAX_LINE_CHARS].strip()
    return ("…" if start > 0 else "") + excerpt + ("…" if start + MAX_LINE_CHARS < len(line) else "")


def _extract(signature: Signature, lines: List[str]) -> Dict[str, str]:
    params: Dict[str, str] = {}
    for content in lines:  # in log order: the last occurrence wins
        for regex in signature.extract:
            match = regex.search(content)
            if match:
                params.update({k: v.strip() for k, v in match.groupdict().items() if v})
    return params


def _noisy_or(weights: List[float]) -> float:
    remaining = 1.0
    for weight in weights:
        remaining *= 1.0 - weight
    return 1.0 - remaining


def _weights(code_hits: List[_Hit], specific: bool) -> List[float]:
    """The weights that add up (noisy-or) for one code. The harvested vocabulary (sources.toml, the generated files)
    restates many hand-written patterns: where one of its signatures reads only lines a hand-written signature of the
    same code already read, they are one piece of evidence, not two, and it adds nothing."""
    weights: List[float] = []
    counted: set = set()
    for hit in sorted(code_hits, key=lambda h: (h.signature.harvested, -h.signature.weight)):
        if hit.signature.harvested and hit.lines <= counted:
            continue
        counted |= hit.lines
        weights.append(hit.signature.weight * (0.5 if hit.signature.generic and specific else 1.0))
    return weights


def _apply_checks(confidence: float, checks: List[Check], strength: float) -> float:
    verdicts = {c.verdict for c in checks}
    if CONFIRMS in verdicts:
        confidence = confidence + (max(confidence, 0.9) + 0.05 - confidence) * strength
    elif RULES_OUT in verdicts:
        confidence = confidence * (1.0 - 0.6 * strength)
    return min(confidence, 0.99)


def _asked_text(params: Dict[str, str]) -> Dict[str, str]:
    if "asked" not in params and params.get("asked_bytes", "").isdigit():
        params["asked"] = "%.2f GiB" % (int(params["asked_bytes"]) / 2**30)
    return params


def diagnose_text(
    text: str,
    snapshot: Optional[Mapping[str, Any]] = None,
    snapshot_is_live: bool = False,
    base: Optional[SignatureBase] = None,
) -> List[Diagnosis]:
    """Ranked diagnoses for a log. ``snapshot``: the machine's facts (merged with what the log itself carries is
    the caller's job, see :func:`gpuvet.diagnose.diagnose`). A live snapshot of *this* machine may not be the one
    that produced the log, so its judgments count half and it never adds causes of its own."""
    base = base or load_signatures()
    text = text.replace("\r\n", "\n")
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    # A bare carriage return (a progress bar redrawing itself) separates the lines searched, but evidence is
    # numbered as an editor or `grep -n` numbers the file: by newlines.
    lines = text.replace("\r", "\n").split("\n")
    line_numbers = _newline_numbers(text) if "\r" in text else None
    hits = _apply_context(_scan(lines, base.signatures), text)
    view = SnapshotView(snapshot) if snapshot else None
    strength = 0.5 if snapshot_is_live else 1.0
    specific = any(not hit.signature.generic for hit in hits)

    by_code: Dict[str, List[_Hit]] = {}
    for hit in hits:
        by_code.setdefault(hit.signature.code, []).append(hit)

    diagnoses: List[Diagnosis] = []
    for code, code_hits in by_code.items():
        info = base.codes[code]
        weights = _weights(code_hits, specific)
        confidence = min(_noisy_or(weights), 0.95)
        confidence += CHAIN_BONUS * (100 - info.rank) / 100.0
        params: Dict[str, str] = {}
        evidence: List[Evidence] = []
        for hit in sorted(code_hits, key=lambda h: -h.signature.weight):
            hit_lines = [(line_numbers[p] if line_numbers else p + 1, _line_text(lines, p, hit.columns.get(p, 0)))
                         for p in hit.positions]
            params.update({k: v for k, v in _extract(hit.signature, [t for _, t in hit_lines]).items()
                           if k not in params})
            evidence.extend(Evidence(n, t, hit.signature.id) for n, t in hit_lines)
        params = _asked_text(params)
        checks = judge(code, view, params)
        confidence = _apply_checks(confidence, checks, strength)
        explanations = [msg(h.signature.explain, **dict(params, origin=_origin(h.signature.origin)))
                        for h in sorted(code_hits, key=lambda h: -h.signature.weight)][:2]
        if code == "insufficient_vram" and ("asked" in params or "free" in params):
            explanations.append(msg("diagnose.oom.amounts", asked=params.get("asked", "?"),
                                    free=params.get("free", "?"), total=params.get("total", "?")))
        unique_evidence = sorted({(e.line, e.text): e for e in evidence}.values(), key=lambda e: e.line)
        diagnoses.append(Diagnosis(
            code=code,
            confidence=round(min(confidence, 0.99), 2),
            title=msg("diagnose.code.%s.title" % code),
            explanations=tuple(explanations),
            evidence=tuple(unique_evidence[-EVIDENCE_PER_DIAGNOSIS:]),
            checks=tuple(checks),
            fix=Fix(msg("diagnose.code.%s.fix" % code, **params), info.commands),
            settle=() if checks else info.settle,
            sources=tuple(dict.fromkeys([h.signature.source for h in code_hits] + [info.source])),
            params=params,
        ))

    # Only a stack symptom can have a stack cause underneath: a shape error on a CPU-only torch is still the user's.
    if view is not None and not snapshot_is_live and any(d.code != "not_a_stack_problem" for d in diagnoses):
        diagnoses = _add_underlying(diagnoses, view, base)

    diagnoses = _user_code_after_clear_stack_causes(diagnoses, base)
    diagnoses = [d for d in diagnoses if d.confidence >= MIN_CONFIDENCE]
    diagnoses.sort(key=lambda d: (-d.confidence, base.codes[d.code].rank))
    return diagnoses[:MAX_DIAGNOSES]


def _add_underlying(diagnoses: List[Diagnosis], view: SnapshotView, base: SignatureBase) -> List[Diagnosis]:
    """Name a driver/build problem the snapshot shows even when the log's wording points elsewhere."""
    present = {d.code for d in diagnoses}
    for code, checks in snapshot_problems(view).items():
        if code in present:
            continue
        info = base.codes[code]
        diagnoses.append(Diagnosis(
            code=code,
            confidence=round(0.8 + CHAIN_BONUS * (100 - info.rank) / 100.0, 2),
            title=msg("diagnose.code.%s.title" % code),
            explanations=(msg("diagnose.from_snapshot"),),
            evidence=(),
            checks=tuple(checks),
            fix=Fix(msg("diagnose.code.%s.fix" % code), info.commands),
            settle=(),
            sources=(info.source,),
            from_snapshot=True,
        ))
    return diagnoses


def _newline_numbers(text: str) -> List[int]:
    """For each carriage-return-separated piece of ``text``, the 1-based number of the newline-separated line."""
    numbers: List[int] = []
    for number, line in enumerate(text.split("\n"), 1):
        numbers.extend([number] * (line.count("\r") + 1))
    return numbers


def _user_code_after_clear_stack_causes(diagnoses: List[Diagnosis], base: SignatureBase) -> List[Diagnosis]:
    """"The stack is fine" cannot be likelier than a clear failure of the stack in the same log: cap it below the
    least likely such cause (a shape error next to "driver too old" is still worth fixing, second)."""
    clear = [d.confidence for d in diagnoses if d.code != USER_CODE
             and base.codes[d.code].rank < CHAIN_END_RANK and d.confidence >= CLEAR_STACK_CAUSE]
    if not clear:
        return diagnoses
    cap = round(min(clear) - 0.01, 2)
    return [dataclasses.replace(d, confidence=min(d.confidence, cap)) if d.code == USER_CODE else d
            for d in diagnoses]


def _origin(name: str) -> Any:
    """Who prints a message, for its explanation: a project's name as it is (PyTorch, NCCL); one described by a
    phrase ("the CUDA runtime") is a catalog entry of each language (diagnose.origin.*), never English in zh."""
    key = "diagnose.origin." + re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    return msg(key) if name and has_message(key) else name
