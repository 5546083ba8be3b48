"""The diagnose engine (pure): log text + optional snapshot + signatures -> ranked diagnoses.

The log is scanned a chunk of lines at a time (scan_pieces), so memory follows the chunk, not the log. In each chunk
the literals a pattern needs (prepared when the data is built, signatures.py) are looked up in the distinct lines
first; a pattern's regex is compiled and run only on the few lines that hold them. A message wrapped across a cut
still matches: each chunk is led by the previous one's last lines.

Scoring: a code's strength is the noisy-or of the weights of the distinct signatures that matched it. Generic texts
("CUDA error: unknown error", "unhandled cuda error") count half once anything specific matched, so the real line
buried in a long traceback wins. Causes earlier in the chain (driver → CUDA → cuDNN/NCCL → framework build → the
rest) get a small bonus, so when several match, the one that explains the others comes first. The snapshot then
confirms (raises) or rules out (lowers) each cause. Known-harmless messages are set aside (Reading.harmless), and a log
with fewer than three causes, or an error and none, gets the nearest classes (read_scan).

Two kinds of cause come after those a program's message names (Diagnosis.basis): the renter's own words
(user_words.toml: "显存不够", "my driver is too old"), at a low confidence, leading only when no program message explains
the log (_from_words); and the neighbours of a cause along the chain (codes.toml `neighbours`) whose terms the log
holds, each below the cause it neighbours, in a place no near miss needs (_with_neighbours). Neither ever stands beside a cause
it contradicts (codes.toml `excludes`; no stack cause beside "the stack is fine"), and there are never more than three.
"""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate
from typing import Any, Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Set, Tuple

from gpuvet.diagnose.anchors import normalise
from gpuvet.diagnose.context import CONFIRMS, RULES_OUT, Check, gpu_capability, judge, snapshot_problems
from gpuvet.diagnose.signatures import WORDS_MAX, Signature, SignatureBase, compiled, gpu_cc_holds, load_signatures
from gpuvet.i18n import has_message
from gpuvet.models import Fix, Message, msg
from gpuvet.snapshot import SnapshotView

MAX_MATCHES_PER_SIGNATURE = 1000  # bounds the work on a log that repeats one line a million times
EVIDENCE_PER_SIGNATURE = 3  # kept: the first match and the last ones (the real error is usually last)
EVIDENCE_PER_DIAGNOSIS = 6
MAX_LINE_CHARS = 300
MAX_DIAGNOSES = 3
NEAREST = 3  # classes named for a log with an error and no known cause
MIN_CONFIDENCE = 0.12
CHAIN_BONUS = 0.06  # at most; shrinks with the code's rank in codes.toml
USER_CODE = "not_a_stack_problem"
# Codes ranked below this in codes.toml are links of the chain (driver ... framework build, Python, packages); from
# it on come run-time conditions (a collective timeout, an OOM) that a bug in the user's code can itself cause.
CHAIN_END_RANK = 60
CLEAR_STACK_CAUSE = 0.5  # a chain cause at least this likely contradicts "the stack is fine"
# A neighbour of a cause (codes.toml `neighbours`) is offered this much below it, at most NEIGHBOUR_MAX, each further one
# NEIGHBOUR_STEP lower again: a lead worth ruling out next, never as likely as what a message names.
NEIGHBOUR_GAP = 0.15
NEIGHBOUR_MAX = 0.35
NEIGHBOUR_STEP = 0.03


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
    # what names the cause: "message" (a program's message in the log), "words" (the user's own words,
    # user_words.toml), "neighbour" (next to a cause found, with its terms in the log), "snapshot" (the machine's facts)
    basis: str = "message"


@dataclass
class _Hit:
    signature: Signature
    count: int = 0
    positions: List[int] = field(default_factory=list)
    columns: Dict[int, int] = field(default_factory=dict)  # line index -> where the match starts in it
    lines: FrozenSet[int] = frozenset()  # every line index it matched (positions keeps only the evidence)


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


_WORD = re.compile(r"[a-z]{3,}")
_RUN = re.compile(r"[a-z]+")
NEAR_SHARE = 0.5  # a pattern counts as nearly matched when the log holds at least this share of its literal sets
NEAR_CHARS = 1 << 13  # ...sought in the head and tail of a log at most this long each (the error sits there)
BIG_CHUNK = 1 << 16  # characters of distinct lines past which literals are first looked up by their words


@lru_cache(maxsize=None)
def _inner_words(literal: str) -> Tuple[str, ...]:
    """The whole words (runs of 3+ letters that neither edge of the literal cuts) any text holding it holds too."""
    return tuple(m.group() for m in _RUN.finditer(literal)
                 if m.start() > 0 and m.end() < len(literal) and m.end() - m.start() >= 3)


def strip_prefix(line: str) -> str:
    """The line without the logger's prefix (see _PREFIX); the line itself when it has none."""
    match = _PREFIX.match(line)
    return line[match.end():] if match and match.end() else line


@dataclass
class _ScanState:
    """What the scan of a log has found so far, carried from one chunk of lines to the next: matches by global line
    index (0-based, over every chunk), and the evidence text and editor's line number of each matched line."""

    matched: Dict[str, Dict[int, int]] = field(default_factory=dict)  # signature id -> {line index: match column}
    covered: Dict[Tuple[str, int], int] = field(default_factory=dict)  # (signature, pattern) -> last line of a match
    # (line index, match column) -> (line number, evidence text: the part of a very long line around the match)
    seen: Dict[Tuple[int, int], Tuple[int, str]] = field(default_factory=dict)
    # signature id -> the largest share of a pattern's literal sets the log holds without the pattern matching
    near: Dict[str, float] = field(default_factory=dict)


def _scan(lines: List[str], signatures: Tuple[Signature, ...], state: _ScanState, offset: int = 0,
          numbers: Optional[List[int]] = None) -> None:
    """Which lines each signature matches, into ``state``: ``lines`` are the log's lines from index ``offset`` on
    (a chunk, led by the last lines of the previous one so a wrapped message across the cut still matches);
    ``numbers`` their line numbers as an editor counts them (default: index + 1).

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

    def groups_with(needle: str) -> Iterator[int]:
        pos = blob.find(needle)
        while pos >= 0:
            group = bisect_right(offsets, pos) - 1
            yield group
            pos = blob.find(needle, offsets[group] + len(keys[group]) + 1)

    grouped: Dict[Tuple[str, ...], Tuple[List[int], int]] = {}
    holding: Dict[Tuple[str, ...], Set[int]] = {}

    def groups_of(options: Tuple[str, ...]) -> Tuple[List[int], int]:
        """The distinct lines holding one of the (normalised) literals, and how many lines of the log that is."""
        found = grouped.get(options)
        if found is None:
            ids = sorted({group for option in options for group in groups_with(option)})
            found = grouped[options] = (ids, sum(len(groups[keys[g]]) for g in ids))
        return found

    def lines_with(options: Tuple[str, ...]) -> Set[int]:
        """Indices of the lines that contain one of the literals: found once per log with str.find in the distinct
        lines, so narrowing candidate windows is set algebra, not substring tests."""
        found = holding.get(options)
        if found is None:
            found = holding[options] = set()
            for group in groups_of(options)[0]:
                found.update(groups[keys[group]])
        return found

    raw: List[Any] = []  # [lower-cased text, line start offsets], built the first time a literal with digits is sought

    def raw_lines_with(options: Tuple[str, ...]) -> Set[int]:
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
    words: List[Set[str]] = []  # the chunk's words, made the first time a literal is sought in a big chunk

    def may_hold(option: str) -> bool:
        """False when a whole word of the literal is no word of the chunk: a set lookup instead of a substring search
        through megabytes, for the ~3,000 literals of which a big chunk holds a few."""
        inner = _inner_words(option)
        if not inner or len(blob) < BIG_CHUNK:
            return True
        if not words:
            words.append(set(_WORD.findall(blob)))
        return all(word in words[0] for word in inner)

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
            found = present[need] = any(may_hold(option) and option in haystack for option in options)
        return not found

    for signature in signatures:
        matched = state.matched.get(signature.id) or {}
        for number, pattern in enumerate(signature.scan):
            if len(matched) >= MAX_MATCHES_PER_SIGNATURE:
                break
            multi, bare, lead, needed = pattern.multi, pattern.bare, pattern.lead, pattern.required
            if any(map(absent, reversed(needed))):  # the anchor (last) is the likeliest to be absent
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
            # the last line of the previous match: one match per message (across chunks too)
            covered = state.covered.get((signature.id, number), -1) - offset
            regex = pattern.regex  # compiled only now: its literals occur in this log
            state.near[signature.id] = 1.0  # every literal is there; a match below makes it more than near
            for start in candidates:
                if start <= covered or start + offset in matched:
                    continue
                text = text_of(start)
                match = regex.search(text)
                if match and (not multi or match.start() <= len(clean(start))):
                    matched[start + offset] = match.start()
                    if (start + offset, match.start()) not in state.seen:
                        state.seen[(start + offset, match.start())] = (
                            numbers[start] if numbers else start + offset + 1, _line_text(lines, start, match.start()))
                    covered = start + text.count("\n", 0, match.end())
                    state.covered[(signature.id, number)] = covered + offset
                    if len(matched) >= MAX_MATCHES_PER_SIGNATURE:
                        break
        if matched:
            state.matched[signature.id] = matched


def _hits(state: _ScanState, signatures: Tuple[Signature, ...]) -> List[_Hit]:
    """The scan's findings per signature (in the signatures' order): the first match and the last ones kept as
    evidence, every matched line kept for telling readings of the same line apart."""
    hits = []
    for signature in signatures:
        matched = state.matched.get(signature.id)
        if matched:
            ordered = sorted(matched)
            keep = ordered[:1] + ordered[1:][-(EVIDENCE_PER_SIGNATURE - 1):]
            hits.append(_Hit(signature, count=len(ordered), positions=keep, columns={i: matched[i] for i in keep},
                             lines=frozenset(ordered)))
    return hits


def _apply_context(hits: List[_Hit], text: str, compute_capability: Optional[str] = None) -> List[_Hit]:
    """Drop contextual signatures whose context is absent (a regex, or the GPU's compute capability), then the
    matches their firing supersedes.

    The context regexes run on the whole text, but only for signatures that already matched a line, so a big log
    without such a line pays nothing."""
    kept = [h for h in hits if gpu_cc_holds(h.signature.gpu_cc, compute_capability)
            and (not h.signature.context or any(compiled(r).search(text) for r in h.signature.context))]
    superseded = {other for h in kept for other in h.signature.supersedes}
    # A harvested signature that only restates a superseded one (same code, no line of its own) goes with it.
    dropped: Dict[str, Set[int]] = {}
    for hit in kept:
        if hit.signature.id in superseded:
            dropped.setdefault(hit.signature.code, set()).update(hit.lines)
    kept = [h for h in kept if h.signature.id not in superseded
            and not (h.signature.harvested and h.lines <= dropped.get(h.signature.code, set()))]
    # One reading per line: the hand-written signatures were tuned on real threads (and carry the context rules), so
    # where one of them reads a line, a harvested signature reading only such lines does not compete with it.
    owned: Set[int] = set()
    for hit in kept:
        if not hit.signature.harvested and not hit.signature.words:  # the user's words own no program's line
            owned |= hit.lines
    # A harmless message stays whoever else reads its line: it is what silences that other reading.
    return [h for h in kept if not h.signature.harvested or h.signature.harmless or not h.lines <= owned]


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
        for pattern in signature.extract:
            match = compiled(pattern).search(content)
            if match:
                params.update({k: v.strip() for k, v in match.groupdict().items() if v})
    return params


def _noisy_or(weights: List[float]) -> float:
    remaining = 1.0
    for weight in weights:
        remaining *= 1.0 - weight
    return 1.0 - remaining


def _weights(code_hits: List[_Hit], specific: bool) -> List[float]:
    """The weights that add up (noisy-or) for one code. The harvested vocabulary (Signature.harvested) restates many
    hand-written patterns: where one of its signatures reads only lines a hand-written signature of the same code
    already read, they are one piece of evidence, not two, and it adds nothing."""
    weights: List[float] = []
    counted: Set[int] = set()
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
    return diagnose_pieces(_pieces(text), snapshot, snapshot_is_live, base, context=plain_text(text))


def read_text(
    text: str,
    snapshot: Optional[Mapping[str, Any]] = None,
    snapshot_is_live: bool = False,
    base: Optional[SignatureBase] = None,
) -> "Reading":
    """The whole :class:`Reading` of a log held in memory (causes, harmless messages, no-known-cause facts)."""
    base = base or load_signatures()
    return read_scan(scan_pieces(_pieces(text), base.signatures), plain_text(text), snapshot, snapshot_is_live, base)


def plain_text(text: str) -> str:
    """The text as the context rules read it: Windows line ends made plain, a terminal's colour codes removed."""
    text = text.replace("\r\n", "\n")
    return _ANSI.sub("", text) if "\x1b" in text else text


CHUNK_CHARS = 1 << 21  # a log is scanned this many characters at a time: memory follows the chunk, not the log


def _pieces(text: str) -> Iterator[str]:
    for start in range(0, len(text), CHUNK_CHARS):
        yield text[start:start + CHUNK_CHARS]


def _chunks(pieces: Iterable[str]) -> Iterator[Tuple[str, bool]]:
    """Whole lines out of pieces cut anywhere: (chunk, whether a newline ends it). Each chunk is the text up to a
    newline (the newline itself dropped), so the chunks' lines are the log's lines; the last chunk is whatever follows
    the last newline. Only a line longer than 4 chunks is cut without a newline."""
    rest: List[str] = []
    held = 0
    for piece in pieces:
        cut = piece.rfind("\n")
        if cut < 0 and held + len(piece) < 4 * CHUNK_CHARS:  # a line longer than that is cut: memory stays bounded
            rest.append(piece)
            held += len(piece)
            continue
        if cut < 0:
            yield "".join(rest) + piece, False
            rest, held = [], 0
            continue
        yield "".join(rest) + piece[:cut], True
        rest, held = [piece[cut + 1:]], len(piece) - cut - 1
    yield "".join(rest), True


def scan_pieces(pieces: Iterable[str], signatures: Tuple[Signature, ...]) -> _ScanState:
    """The scan of a log given as pieces of text (a file read a few MiB at a time): chunk by chunk, each chunk led by
    the previous one's last lines so a message wrapped across a cut still matches."""
    state = _ScanState()
    first = 0  # global index of the chunk's first line
    newline = 1  # the editor's number of the chunk's first line (newline-separated)
    carry: List[str] = []
    carry_numbers: List[int] = []
    for chunk, whole in _chunks(pieces):
        if chunk.endswith("\r"):  # the \r of a \r\n the cut fell between
            chunk = chunk[:-1]
        chunk = chunk.replace("\r\n", "\n")
        if "\x1b" in chunk:
            chunk = _ANSI.sub("", chunk)
        # A bare carriage return (a progress bar redrawing itself) separates the lines searched, but evidence is
        # numbered as an editor or `grep -n` numbers the file: by newlines.
        lines = chunk.replace("\r", "\n").split("\n")
        numbers = ([newline + n - 1 for n in _newline_numbers(chunk)] if "\r" in chunk
                   else list(range(newline, newline + len(lines))))
        if chunk.strip():  # a blank chunk (what follows a final newline) adds nothing a pattern could read
            _scan(carry + lines, signatures, state, first - len(carry), carry_numbers + numbers)
        first += len(lines)
        newline += chunk.count("\n") + whole
        carry, carry_numbers = lines[-(WINDOW_LINES - 1):], numbers[-(WINDOW_LINES - 1):]
    return state


def diagnose_pieces(
    pieces: Iterable[str],
    snapshot: Optional[Mapping[str, Any]] = None,
    snapshot_is_live: bool = False,
    base: Optional[SignatureBase] = None,
    context: str = "",
) -> List[Diagnosis]:
    """:func:`diagnose_text` for a log read piece by piece (never whole in memory). ``context``: the text context
    rules are judged on (the whole log when it is in memory; the head and tail of a huge one, where the command
    line, the environment report and the final error sit)."""
    base = base or load_signatures()
    return diagnose_scan(scan_pieces(pieces, base.signatures), context, snapshot, snapshot_is_live, base)


@dataclass(frozen=True)
class Reading:
    """All a log says: the ranked causes; the known-harmless messages it holds (said to be harmless, never causes);
    the nearest classes (codes whose wording the log partly holds without a match) when fewer than three causes
    were found; and, for a log with an error and no known cause, the lines that look like the error, so the answer
    is never silence."""

    diagnoses: Tuple[Diagnosis, ...]
    harmless: Tuple[Evidence, ...] = ()
    error_lines: Tuple[Evidence, ...] = ()
    nearest: Tuple[str, ...] = ()

    @property
    def no_known_cause(self) -> bool:
        return not self.diagnoses and bool(self.error_lines)


# What an error line looks like in any framework's log, for "an error and no known cause" (never for a cause).
_ERROR_LINE = re.compile(r"(?:\b\w*(?:error|exception)\b|\b(?:traceback|failed|failure|fatal|abort(?:ed)?|segmentation fault|"
                         r"core dumped|killed|cannot|could not|unable to)\b|错误|失败|异常|报错)", re.IGNORECASE)
ERROR_LINES = 3


def _error_lines(context: str, whole: bool) -> Tuple[Evidence, ...]:
    """The last lines that look like an error (the real one is usually last); numbered when ``context`` is the
    whole log, else 0 (a huge log's head and tail). One scan of the text, not a search per line."""
    starts: List[int] = []
    for match in _ERROR_LINE.finditer(context):
        start = context.rfind("\n", 0, match.start()) + 1
        if not starts or starts[-1] != start:
            starts.append(start)
            del starts[:-ERROR_LINES]
    found = []
    for start in starts:
        end = context.find("\n", start)
        line = context[start:end if end >= 0 else len(context)]
        found.append(Evidence(context.count("\n", 0, start) + 1 if whole else 0, _line_text([line], 0), ""))
    return tuple(found)


def _near_part(context: str) -> str:
    """The head and tail of a long log, where its error, command line and environment sit: what near misses and a
    neighbour's terms are sought in."""
    return context[:NEAR_CHARS] + "\n" + context[-NEAR_CHARS:] if len(context) > 2 * NEAR_CHARS else context


def _nearest(state: _ScanState, base: SignatureBase, context: str) -> Tuple[str, ...]:
    """The classes whose patterns' literal sets the log holds most of without a match, for a log with no known
    cause: worked out only then (the scan itself stops at a pattern's first missing literal)."""
    scores = _near_scores(state, base, context)
    ranked = sorted(scores, key=lambda code: (-scores[code], base.codes[code].rank))
    return tuple(ranked[:NEAREST])


def _near_scores(state: _ScanState, base: SignatureBase, context: str) -> Dict[str, float]:
    """Per class, how much of its wording (the largest share of a pattern's literal sets, times the signature's
    weight) the log holds, for the classes it holds at least NEAR_SHARE of without a match. The user's words are
    no class's wording here: a noun alone says little."""
    part = _near_part(context)
    folded, lowered = normalise(part), part.lower()
    scores: Dict[str, float] = {}
    for signature in base.signatures:
        if signature.harmless or signature.words:
            continue
        share = state.near.get(signature.id, 0.0)
        for pattern in signature.scan:
            if len(pattern.required) > 1:
                held = sum(any(o in (lowered if as_written else folded) for o in options)
                           for options, as_written in pattern.required)
                share = max(share, held / len(pattern.required))
        if share >= NEAR_SHARE:
            scores[signature.code] = max(scores.get(signature.code, 0.0), share * signature.weight)
    return scores


# How often a log names each framework; one other than torch that it names more often than torch is the user's.
_FRAMEWORK_WORDS = (
    ("paddle", re.compile(r"\bpaddle(?:paddle|nlp|ocr|detection|x)?\b|\bPaddlePaddle\b", re.IGNORECASE)),
    ("jax", re.compile(r"\bjax(?:lib)?\b|XlaRuntimeError", re.IGNORECASE)),
    ("tensorflow", re.compile(r"\btensorflow\b|\bkeras\b", re.IGNORECASE)),
)
_TORCH_WORDS = re.compile(r"\btorch\b|\bpytorch\b", re.IGNORECASE)


def framework_of(context: str) -> str:
    """The framework a log comes from ("torch" unless another is named more often): whose commands its fixes give."""
    torch = len(_TORCH_WORDS.findall(context))
    counts = [(len(pattern.findall(context)), name) for name, pattern in _FRAMEWORK_WORDS]
    count, name = max(counts)
    return name if count > torch else "torch"


def _in_framework(commands: Tuple[str, ...], framework: str, base: SignatureBase) -> Tuple[str, ...]:
    """Commands for the user's framework: torch's own dropped, that framework's added (codes.toml _frameworks)."""
    own = base.frameworks.get(framework)
    if own is None or not any("torch" in command for command in commands):
        return commands
    kept = tuple(command for command in commands if "torch" not in command)
    return tuple(dict.fromkeys(kept + (own["devices"], own["environment"])))


def read_scan(
    state: _ScanState,
    context: str,
    snapshot: Optional[Mapping[str, Any]] = None,
    snapshot_is_live: bool = False,
    base: Optional[SignatureBase] = None,
    whole: bool = True,
) -> Reading:
    """The :class:`Reading` of a finished scan: :func:`diagnose_scan`'s causes, the harmless messages, and for an
    error with no known cause its lines and the nearest classes."""
    base = base or load_signatures()
    every = _hits(state, base.signatures)
    # the GPU's compute capability only where a signature that matched asks for it (it may load the knowledge base)
    compute_capability = (gpu_capability(SnapshotView(snapshot))
                          if snapshot and any(h.signature.gpu_cc for h in every) else None)
    hits = _apply_context(every, context, compute_capability)
    harmless = [h for h in hits if h.signature.harmless]
    diagnoses = _diagnose_hits([h for h in hits if not h.signature.harmless], hits, state, snapshot, snapshot_is_live,
                               base)
    scores: Optional[Dict[str, float]] = None
    if diagnoses and len(diagnoses) < MAX_DIAGNOSES:
        # Fewer than three causes: the neighbours of those found whose terms the log holds come next, as causes of
        # their own lower confidence. A reading the context rules set aside (a superseded signature) is not offered
        # again as a neighbour.
        superseded = {other for h in hits for other in h.signature.supersedes}
        set_aside = {h.signature.code for h in every if h.signature.id in superseded}
        found = scores = _near_scores(state, base, context)  # worked out once: the near misses below are these too
        near_codes = [code for code in sorted(found, key=lambda code: (-found[code], base.codes[code].rank))[:NEAREST]
                      if code != USER_CODE]
        diagnoses = _with_neighbours(diagnoses, set_aside, base, context, whole, near_codes)
    framework = framework_of(context)
    if framework in base.frameworks:
        diagnoses = [dataclasses.replace(d, fix=d.fix._replace(commands=_in_framework(d.fix.commands, framework, base)),
                                         settle=_in_framework(d.settle, framework, base),
                                         sources=d.sources + (base.frameworks[framework]["source"],))
                     for d in diagnoses]
    notes = sorted({(p, h.signature.id): Evidence(state.seen[(p, h.columns[p])][0], state.seen[(p, h.columns[p])][1],
                                                  h.signature.id) for h in harmless for p in h.positions}.values(),
                   key=lambda e: e.line)
    if diagnoses:
        # Still fewer than three causes: the classes the log nearly matched are named after them, as near misses
        # (never causes: no confidence, no exit code, and never "the stack looks fine" as a guess beside a stack cause).
        near: Tuple[str, ...] = ()
        if len(diagnoses) < MAX_DIAGNOSES:
            near_scores = _near_scores(state, base, context) if scores is None else scores
            present = {d.code for d in diagnoses}
            ranked = sorted(near_scores, key=lambda code: (-near_scores[code], base.codes[code].rank))[:NEAREST]
            near = tuple(code for code in ranked
                         if code not in present and code != USER_CODE)[:MAX_DIAGNOSES - len(diagnoses)]
        return Reading(tuple(diagnoses), tuple(notes), nearest=near)
    quiet = {e.text for e in notes}
    errors = tuple(e for e in _error_lines(context, whole) if e.text not in quiet)
    nearest = _nearest(state, base, context) if errors else ()
    return Reading((), tuple(notes), errors, nearest)


def diagnose_scan(
    state: _ScanState,
    context: str,
    snapshot: Optional[Mapping[str, Any]] = None,
    snapshot_is_live: bool = False,
    base: Optional[SignatureBase] = None,
) -> List[Diagnosis]:
    """The ranked diagnoses from a finished scan (:func:`scan_pieces`), judged against ``snapshot``."""
    return list(read_scan(state, context, snapshot, snapshot_is_live, base).diagnoses)


def _diagnose_hits(hits: List[_Hit], every: List[_Hit], state: _ScanState, snapshot: Optional[Mapping[str, Any]],
                   snapshot_is_live: bool, base: SignatureBase) -> List[Diagnosis]:
    # A message known to be harmless holds no cause: what else reads only its lines goes with it. A pasted log that
    # lost its line breaks puts the real error and a harmless suffix (torch's "kernel errors might be asynchronously
    # reported") on one line: a reading that starts before the harmless text on such a line is the error, and stays.
    quiet: Dict[int, int] = {}  # line index -> where the earliest harmless message on it starts
    for hit in every:
        if hit.signature.harmless:
            for line in hit.lines:
                quiet[line] = min(quiet.get(line, 1 << 30), hit.columns.get(line, 0))
    hits = [h for h in hits if not (quiet and h.lines <= quiet.keys()
                                    and not any(h.columns[p] < quiet[p] for p in h.positions))]
    view = SnapshotView(snapshot) if snapshot else None
    strength = 0.5 if snapshot_is_live else 1.0
    words = [h for h in hits if h.signature.words]
    hits = [h for h in hits if not h.signature.words]
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
            hit_lines = [state.seen[(p, hit.columns[p])] for p in hit.positions]
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
    return _from_words(diagnoses[:MAX_DIAGNOSES], words, state, view, strength, base)


def _stands_beside(code: str, present: List[Diagnosis], base: SignatureBase) -> bool:
    """Whether a cause offered from the user's words or as a neighbour may be named beside ``present``: not one of
    them already, not excluded by one (codes.toml ``excludes``), and no link of the stack beside "the stack is fine"."""
    codes = [d.code for d in present]
    if code in codes or base.contradicts(code, codes):
        return False
    if code == USER_CODE:  # "the stack is fine" only beside run-time conditions (an OOM), never beside a link
        return all(base.codes[c].rank >= CHAIN_END_RANK for c in codes)
    return not (USER_CODE in codes and base.codes[code].rank < CHAIN_END_RANK)


def _from_words(diagnoses: List[Diagnosis], hits: List[_Hit], state: _ScanState, view: Optional[SnapshotView],
                strength: float, base: SignatureBase) -> List[Diagnosis]:
    """The causes the user's own words name (user_words.toml), after those program messages name: each at its
    record's low weight (the snapshot may confirm it up to WORDS_MAX or lower it), below the least likely cause a
    message names, never beside one it contradicts, never past three. With no such cause they lead."""
    if not hits or len(diagnoses) >= MAX_DIAGNOSES:
        return diagnoses
    ceiling = min((d.confidence for d in diagnoses), default=1.0) - 0.01
    by_code: Dict[str, List[_Hit]] = {}
    for hit in hits:
        by_code.setdefault(hit.signature.code, []).append(hit)
    found: List[Diagnosis] = []
    for code, code_hits in by_code.items():
        code_hits = [h for h in code_hits if _said_plainly(h, state, base.negations, base.questions)]
        if not code_hits:
            continue
        info = base.codes[code]
        code_hits.sort(key=lambda h: -h.signature.weight)
        confidence = code_hits[0].signature.weight
        checks = judge(code, view, {})
        verdicts = {c.verdict for c in checks}
        if CONFIRMS in verdicts:
            confidence = confidence + (WORDS_MAX - confidence) * strength
        elif RULES_OUT in verdicts:
            confidence = confidence * (1.0 - 0.6 * strength)
        confidence = round(min(confidence, WORDS_MAX, ceiling), 2)
        if confidence < MIN_CONFIDENCE:
            continue
        evidence = sorted({state.seen[(p, h.columns[p])] for h in code_hits for p in h.positions})
        said = _words_said(code_hits[0], state)
        found.append(Diagnosis(
            code=code,
            confidence=confidence,
            title=msg("diagnose.code.%s.title" % code),
            explanations=(msg("diagnose.from_words", words=said),),
            evidence=tuple(Evidence(n, t, h.signature.id) for h in code_hits[:1] for n, t in evidence)[
                -EVIDENCE_PER_DIAGNOSIS:],
            checks=tuple(checks),
            fix=Fix(msg("diagnose.code.%s.fix" % code), info.commands),
            settle=() if checks else info.settle,
            sources=tuple(dict.fromkeys([h.signature.source for h in code_hits] + [info.source])),
            basis="words",
        ))
    found.sort(key=lambda d: (-d.confidence, base.codes[d.code].rank))
    for diagnosis in found:
        if len(diagnoses) < MAX_DIAGNOSES and _stands_beside(diagnosis.code, diagnoses, base):
            diagnoses = diagnoses + [diagnosis]
    return diagnoses


_CLAUSE_END = re.compile(r"[\n。！？；;!?，]")
NEGATION_REACH = 16  # characters before the user's words a negation is sought in ("不是因为显存不够")


def _said_plainly(hit: _Hit, state: _ScanState, negations: Tuple[str, ...], questions: Tuple[str, ...] = ()) -> bool:
    """Whether one of the lines a words signature read says it without a negation just before, in the same clause
    ("it's not because the driver is too old", "并不是显存不够"); a question that holds a negation's words asks
    ("是不是驱动太旧"), it does not deny."""
    for position in hit.positions:
        text = state.seen[(position, hit.columns[position])][1]
        for pattern in hit.signature.scan:
            match = pattern.regex.search(text)
            if match:
                before = _CLAUSE_END.split(text[:match.start()])[-1][-NEGATION_REACH:].lower()
                for word in sorted(questions, key=len, reverse=True):
                    before = before.replace(word, " ")
                if not any(word in before for word in negations):
                    return True
                break
        else:
            return True  # the line as kept no longer shows the match (a long line's excerpt): it stands
    return False


def _words_said(hit: _Hit, state: _ScanState) -> str:
    """The user's words a words signature read (the matched text of its first line), for the explanation."""
    text = state.seen[(hit.positions[0], hit.columns[hit.positions[0]])][1]
    for pattern in hit.signature.scan:
        match = pattern.regex.search(text)
        if match:
            return " ".join(match.group().split())[:80]
    return text[:80]


@lru_cache(maxsize=None)
def _terms_regex(terms: Tuple[str, ...]) -> "re.Pattern[str]":
    """The terms (lower case) as whole words: no letter, digit or underscore right before one that starts with such a
    character, nor right after one that ends with one ("bf16" is not read in "avx512_bf16"). Matches nothing when
    there are none."""
    def bounded(term: str) -> str:
        head = r"(?<![a-z0-9_])" if term[:1].isalnum() or term[:1] == "_" else ""
        tail = r"(?![a-z0-9_])" if term[-1:].isalnum() or term[-1:] == "_" else ""
        return head + re.escape(term) + tail
    return re.compile("|".join(bounded(t) for t in terms) if terms else r"(?!)")


def _with_neighbours(diagnoses: List[Diagnosis], set_aside: Set[str], base: SignatureBase, context: str,
                     whole: bool, near: List[str]) -> List[Diagnosis]:
    """Fill the places left (up to three) with the neighbours of the causes found (codes.toml ``neighbours``, the
    likeliest cause's first) for which the log carries evidence: one of their terms (user_words.toml ``terms``, in
    the head and tail of a long log). ``near``: the near misses that would be named after the causes; a neighbour
    among them becomes a cause, as does one whose term is in the parent's own evidence line; one known only by its
    terms elsewhere takes only a place none of them needs. Each below the
    cause it neighbours, lower again after the first; never one excluded by a cause present, nor one whose reading
    the context rules set aside (``set_aside``)."""
    part = None
    added = 0
    for parent in list(diagnoses):
        for code in base.codes[parent.code].neighbours:
            if len(diagnoses) >= MAX_DIAGNOSES:
                return diagnoses
            if code in set_aside or not _stands_beside(code, diagnoses, base):
                continue
            if part is None:
                part = _near_part(context).lower()
            found = _terms_regex(base.terms.get(code, ())).search(part)
            if not found:
                continue
            term = found.group()
            # The near misses named after the causes (part of a known message's wording) keep their places: a
            # neighbour that is one of them becomes a cause; one known only by its terms takes a place none needs.
            # A term inside the very message that named the parent ("Unsupported CUDA architecture" beside a feature's
            # arch floor) is as strong as a near miss: the program itself spoke of it.
            said_by_parent = any(term in e.text.lower() for e in parent.evidence)
            waiting = [c for c in near if c != code and c not in {d.code for d in diagnoses}]
            if code not in near and not said_by_parent and len(diagnoses) + 1 + len(waiting) > MAX_DIAGNOSES:
                continue
            confidence = round(min(NEIGHBOUR_MAX, parent.confidence - NEIGHBOUR_GAP) - NEIGHBOUR_STEP * added, 2)
            if confidence < MIN_CONFIDENCE:
                continue
            info = base.codes[code]
            evidence: Tuple[Evidence, ...] = ()
            # the line that mentions it, as evidence, where the log is whole and short enough to be searched as it is
            where = found.start() if whole and len(part) == len(context) else -1
            if where >= 0:
                start = context.rfind("\n", 0, where) + 1
                end = context.find("\n", where)
                line = context[start:end if end >= 0 else len(context)]
                evidence = (Evidence(context.count("\n", 0, start) + 1, _line_text([line], 0, where - start), ""),)
            diagnoses = diagnoses + [Diagnosis(
                code=code,
                confidence=confidence,
                title=msg("diagnose.code.%s.title" % code),
                explanations=(msg("diagnose.neighbour", cause=parent.title, term=term),),
                evidence=evidence,
                checks=(),
                fix=Fix(msg("diagnose.code.%s.fix" % code), info.commands),
                settle=info.settle,
                sources=(info.source,),
                basis="neighbour",
            )]
            added += 1
    return diagnoses


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
            basis="snapshot",
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
    # ...nor can its title say "the GPU stack looks fine" beside it: a contradictory pair. It is "also" a bug.
    return [dataclasses.replace(d, confidence=min(d.confidence, cap), title=msg("diagnose.code.%s.title_also" % USER_CODE))
            if d.code == USER_CODE else d for d in diagnoses]


def _origin(name: str) -> Any:
    """Who prints a message, for its explanation: a project's name as it is (PyTorch, NCCL); one described by a
    phrase ("the CUDA runtime") is a catalog entry of each language (diagnose.origin.*), never English in zh."""
    key = "diagnose.origin." + re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    return msg(key) if name and has_message(key) else name
