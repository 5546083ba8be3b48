"""Loading and validating the error signatures (``data/*.toml``) and the per-code facts (``data/codes.toml``).

Signatures are data: each record names a finding code (docs/CONTRACT.md §4), regexes in the wordings users actually see,
a weight (how specific the text is), optional extraction regexes with named groups, and its ``source``. The loader
compiles everything once and refuses a broken file with a KnowledgeBaseError naming the record.

Context rules, also data: a signature with ``context = [regex, ...]`` counts only when one of those regexes also
occurs anywhere in the log (the same "libcuda.so.1: cannot open" means "GPU not passed into the container" when the
log is a Kubernetes/docker one), and ``supersedes = [signature id, ...]`` drops the named signatures' matches when it
fires, so the contextual reading replaces the context-free one instead of competing with it. ``gpu_cc = "<spec>"``
(a version specifier over the compute capability, ``"==7.5"``, ``">=8.0,!=9.0"``) is a context too: the signature
counts only when the GPU the log names (or the snapshot judged) has such a compute capability, and never when no GPU
is known. One message can mean two things by the GPU it ran on (nunchaku's "no kernel image" on Turing is a build
without sm_75; on Pascal no build has kernels at all).

Files are organised by topic (driver, arch, containers, collectives, ...); no file name means anything to the engine.
A record harvested from the program that prints the message says ``harvested = true`` or carries that ``message``.

Preparing a pattern (parsing it for the literals a match must contain, whether it can span lines) costs far more
than scanning a short log, so it is done when the data is built: tools/compile_data.py writes the prepared index
(``__compiled__/_signature_index.json``, keyed by the sha256 of every data file) and validates every record then. A
pattern's regex is compiled only when its literals occur in the log being read (:func:`compiled`). Without a current
index (a test's folder, an edited file) the loader prepares and validates everything itself, only slower.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Pattern, Tuple

from gpuvet.diagnose.anchors import anchors, is_common, leading_literal, necessary_sets, normalise, spans_lines
from gpuvet.errors import KnowledgeBaseError
from gpuvet.models import FINDING_CODES
from gpuvet.tomlfile import COMPILED_DIR, load_toml

DATA_DIR = Path(__file__).parent / "data"
CODES_FILE = "codes.toml"
# The renter's own words per cause (not [[signature]] records): each record becomes signatures marked ``words``.
WORDS_FILE = "user_words.toml"
WORDS_MAX = 0.45  # a cause read from the user's words is never as likely as one a program's message names
_CLAUSE_END = "\\n。！？；;!?"  # what the gap between a noun and its predicate may not cross (one sentence)
INDEX_FILE = "_signature_index.json"  # in COMPILED_DIR; a leading underscore: no TOML twin can have this name
_NAMED_GROUP = re.compile(r"\(\?P<\w+>")
FLAGS = re.IGNORECASE

# (literals, as written): one of the literals must occur in a line a match touches. `as written` sets keep their
# digits ("801") and are sought in the lower-cased text; the others are normalised (engine: digits as 0).
Need = Tuple[Tuple[str, ...], bool]


@lru_cache(maxsize=None)
def compiled(pattern: str) -> Pattern[str]:
    """The regex of a prepared pattern, compiled on first use in this process (case-insensitive, as every pattern)."""
    return re.compile(pattern, FLAGS)


@dataclass(frozen=True)
class ScanPattern:
    """One pattern as the scan uses it, prepared when the data is built."""

    pattern: str  # the regex without named groups (those run in Signature.extract on matched lines only)
    anchors: Optional[Tuple[str, ...]]  # lower-case literals of which one must occur (None: no useful one)
    required: Tuple[Need, ...]  # every literal set a match needs, the anchors last
    multi: bool  # can a match span a line break (a wrapped message)
    bare: bool  # starts with ^: tried on the line without the logger's prefix
    lead: Optional[str]  # the normalised literal every match starts with, if any

    @property
    def regex(self) -> Pattern[str]:
        return compiled(self.pattern)


@dataclass(frozen=True)
class Signature:
    id: str
    code: str
    weight: float
    generic: bool
    scan: Tuple[ScanPattern, ...]
    extract: Tuple[str, ...]  # patterns and extract regexes that carry named groups, run on matched lines
    source: str
    file: str
    context: Tuple[str, ...] = ()  # regexes: at least one must occur somewhere in the log, or the signature is void
    supersedes: Tuple[str, ...] = ()  # signature ids whose matches this one replaces when it fires
    gpu_cc: str = ""  # a version specifier the GPU's compute capability must meet, or the signature is void
    # The catalog sentence that explains a match: diagnose.sig.<id> unless the record names a shared one (the
    # vocabulary harvested from the sources explains by cause: diagnose.source.<code>, with the project as {origin}).
    explain: str = ""
    origin: str = ""
    # Taken from the program that prints the message (the record says `harvested = true`, as the files
    # tools/harvest_messages.py writes, or carries the ``message`` it was harvested from) rather than written by
    # hand from threads: where a hand-written signature reads the same line, the hand-written one decides.
    harvested: bool = False
    # A known-harmless message (TensorFlow's TF-TRT warning, torch's "kernel errors might be asynchronously
    # reported" suffix): said to be harmless, never a cause, and what else reads only its lines goes with it.
    harmless: bool = False
    # Made from user_words.toml (the user's own words, not a program's message): a cause only when no program
    # message explains the log, below every cause one does, at a low confidence (engine._from_words).
    words: bool = False


@dataclass(frozen=True)
class CodeInfo:
    code: str
    rank: int  # place in the chain: driver < CUDA < cuDNN/NCCL < framework build < the rest
    commands: Tuple[str, ...]
    settle: Tuple[str, ...]
    source: str
    # The causes next to this one along the chain, offered after it when the log carries their terms and a place is
    # left (engine._with_neighbours), and the causes that cannot stand beside it.
    neighbours: Tuple[str, ...] = ()
    excludes: Tuple[str, ...] = ()


@dataclass(frozen=True)
class SignatureBase:
    signatures: Tuple[Signature, ...]
    codes: Dict[str, CodeInfo]
    # framework -> its own commands ("environment", "devices", "source"), for fixes in the user's framework
    frameworks: Dict[str, Dict[str, str]] = field(default_factory=dict)
    # code -> the lower-case terms that say a log concerns it (user_words.toml `terms`): a neighbour's evidence
    terms: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    # the words that, just before the user's words, deny them (user_words.toml `negations`, lower case)
    negations: Tuple[str, ...] = ()
    questions: Tuple[str, ...] = ()  # words that hold a negation's but ask ("是不是"): not a negation

    def contradicts(self, code: str, others: Any) -> bool:
        """Whether ``code`` cannot stand beside any of ``others`` (codes.toml ``excludes``, either way round)."""
        mine = self.codes[code].excludes
        return any(other in mine or code in self.codes[other].excludes for other in others if other in self.codes)


def _require(condition: object, where: str, problem: str) -> None:
    if not condition:
        # the problem stays English: a sentence for whoever edits the signature data, checked when it is compiled
        raise KnowledgeBaseError.said("errors.kb_signature", where=where, problem=problem)


def _check_regex(pattern: str, where: str) -> None:
    try:
        re.compile(pattern, FLAGS)
    except re.error as exc:
        raise KnowledgeBaseError.said("errors.kb_signature_regex", where=where, pattern=repr(pattern), error=exc)


_FLASH = re.compile(r"(flash\S{0,8}?)attn(?!\(ention\))|FlashAttention", re.IGNORECASE)


def _tokens(pattern: str) -> List[Tuple[str, bool]]:
    """A regex's text as its tokens, each with whether it stands inside a character class: an escape is one token
    ("\\s"), so is "[]" that opens a class with a literal "]"; every other character is its own. What rewrites a
    pattern (wrap tolerance, keeping the user's words to one line) rewrites tokens outside classes only."""
    tokens: List[Tuple[str, bool]] = []
    index, in_class = 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            tokens.append((pattern[index:index + 2], in_class))
            index += 2
            continue
        if in_class:
            tokens.append((char, True))
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern[index + 1:index + 2] == "]":
                tokens.append(("[]", False))
                index += 2
                continue
            tokens.append((char, False))
        else:
            tokens.append((char, False))
        index += 1
    return tokens


def tolerant(pattern: str) -> str:
    """The pattern as users paste its message: a space between words also matches a line break or several spaces
    (a wrapped terminal, an issue form), a final ``!`` may be missing, and flash-attn and FlashAttention are one
    name. Done on the pattern's text outside character classes and escapes."""
    # A pattern anchored to its line (^ or $) stays on its line: its spaces are left as written.
    anchored = pattern.startswith("^") or re.search(r"(?<!\\)\$", pattern) is not None
    tokens = _tokens(pattern)
    out: List[str] = []
    index = 0
    while index < len(tokens):
        token, in_class = tokens[index]
        if token == " " and not in_class and not anchored:
            end = index
            while end < len(tokens) and tokens[end] == (" ", False):
                end += 1
            quantified = end < len(tokens) and tokens[end][0][:1] in ("?", "*", "+", "{")
            out.append(("\\s+" if end - index > 1 else "") + "\\s" if quantified else "\\s+")
            index = end
            continue
        out.append(token)
        index += 1
    return _spellings("".join(out))


def _spellings(pattern: str) -> str:
    """The ways users write what a message spells one way: a final ``!`` left out, flash-attn and FlashAttention as
    one name, and an architecture written "sm75", "sm_75" or "sm 75" (a message's "sm75" is retyped with a space or
    an underscore as often as it is pasted). Alone, it is the tolerance that keeps a pattern's phrases (not its
    spaces)."""
    out: List[str] = []
    tokens = _tokens(pattern)
    for index, (token, in_class) in enumerate(tokens):
        out.append(token)
        if (token in ("m", "M") and not in_class and index >= 1 and tokens[index - 1][0] in ("s", "S")
                and index + 1 < len(tokens) and tokens[index + 1][0].isdigit() and not tokens[index + 1][1]
                and (index < 2 or not tokens[index - 2][0].isalnum() or tokens[index - 2][0].startswith("\\"))):
            out.append("[\\s_]?")
    text = "".join(out)
    if text.endswith("!") and not text.endswith("\\!"):
        text += "?"
    return _FLASH.sub(lambda m: (m.group(1) + "att(?:ention|n)") if m.group(1) else "flash[-_ ]?att(?:ention|n)", text)


def prepare_pattern(pattern: str, wrap: bool = True) -> Dict[str, Any]:
    """What the scan needs to know of a pattern without compiling it (JSON-ready; see ScanPattern). ``wrap``: a
    space also matches a line break (a program's message wrapped by a terminal); without it the pattern keeps to
    its line (the user's words: a noun and its predicate are said in one line)."""
    written = _NAMED_GROUP.sub("(?:", pattern)
    plain = tolerant(written) if wrap else _spellings(written)
    found = anchors(plain)
    # Wrap tolerance splits a phrase into words; where that leaves an everyday word ("error") as the only anchor,
    # the scan would try the regex on most lines of a training log: the pattern keeps its phrases (and its spaces).
    if plain != written and (not found or any(is_common(a) for a in found)) and anchors(written):
        plain = _spellings(written)
        found = anchors(plain)
    # The other literal sets a match needs: tested with `in` on a candidate line before the regex runs, so an
    # anchor that happens to be frequent in a log ("slower than expected") costs a substring test, not a regex.
    checks = [c for c in necessary_sets(plain) if not found or c != found]
    required: List[Any] = [[[normalise(a) for a in options], False] for options in checks]
    # normalise() turns "801" into "000": a set with digits is also sought as written
    required += [[[a.lower() for a in options], True] for options in checks
                 if any(ch.isdigit() for a in options for ch in a)]
    if found:
        required.append([[normalise(a) for a in found], False])
    lead = leading_literal(plain)
    return {"pattern": plain, "anchors": found, "required": required, "multi": spans_lines(plain),
            "bare": plain.startswith("^"), "lead": normalise(lead) if lead else None}


@lru_cache(maxsize=None)
def _specifier(text: str) -> Any:
    """A ``gpu_cc`` condition as a packaging SpecifierSet (imported here: only a log that matched such a signature
    needs it), or None when it is not one."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        return None


def gpu_cc_holds(spec: str, compute_capability: Optional[str]) -> bool:
    """Whether a signature's ``gpu_cc`` condition holds for the GPU's compute capability ("7.5"; None: unknown)."""
    if not spec:
        return True
    return compute_capability is not None and _specifier(spec).contains(compute_capability, prereleases=True)


def _prepare_signature(record: Dict[str, Any], file: str, index: int) -> Dict[str, Any]:
    """A record validated and prepared (JSON-ready): every regex compiles, every field has its type."""
    where = f"{file} record {index + 1} ({record.get('id', '?')})"
    _require(isinstance(record.get("id"), str) and record["id"], where, "no id")
    _require(record.get("code") in FINDING_CODES, where, f"code {record.get('code')!r} is not a docs/CONTRACT.md §4 code")
    weight: Any = record.get("weight")  # raw TOML, checked by _require below (as are source and patterns)
    _require(isinstance(weight, (int, float)) and 0 < weight <= 1, where, "weight must be in (0, 1]")
    source: Any = record.get("source")
    _require(isinstance(source, str) and source.startswith(("http://", "https://")), where, "no source URL")
    patterns: Any = record.get("patterns")
    _require(isinstance(patterns, list) and patterns, where, "no patterns")
    extractors = [p for p in patterns if _NAMED_GROUP.search(p)] + list(record.get("extract", []))
    context = record.get("context", [])
    _require(isinstance(context, list) and all(isinstance(c, str) and c for c in context), where,
             "context must be a list of regexes")
    for pattern in list(patterns) + extractors + context:
        _check_regex(pattern, where)  # each on its own so a bad one is named
    supersedes = record.get("supersedes", [])
    _require(isinstance(supersedes, list) and all(isinstance(i, str) and i for i in supersedes), where,
             "supersedes must be a list of signature ids")
    gpu_cc: Any = record.get("gpu_cc", "")
    _require(isinstance(gpu_cc, str) and (not gpu_cc or _specifier(gpu_cc) is not None), where,
             "gpu_cc must be a version specifier over the compute capability (\"==7.5\", \">=8.0,!=9.0\")")
    _require(not supersedes or context or gpu_cc, where, "supersedes needs a context (an unconditional signature "
             "would simply replace the other one: edit that one instead)")
    return {
        "id": record["id"],
        "code": record["code"],
        "weight": float(weight),
        "generic": bool(record.get("generic", False)),
        "scan": [prepare_pattern(p, wrap=not record.get("words")) for p in patterns],
        "extract": extractors,
        "source": source,
        "file": file,
        "context": context,
        "supersedes": supersedes,
        "gpu_cc": gpu_cc,
        "explain": str(record.get("explain") or "diagnose.sig." + record["id"]),
        "origin": str(record.get("origin", "")),
        "harvested": bool(record.get("harvested")) or "message" in record,
        "harmless": bool(record.get("harmless", False)),
    }


def _signature(prepared: Dict[str, Any]) -> Signature:
    scan = tuple(ScanPattern(p["pattern"], tuple(p["anchors"]) if p["anchors"] else None,
                             tuple((tuple(options), bool(as_written)) for options, as_written in p["required"]),
                             bool(p["multi"]), bool(p["bare"]), p["lead"]) for p in prepared["scan"])
    return Signature(**dict(prepared, scan=scan, extract=tuple(prepared["extract"]),
                            context=tuple(prepared["context"]), supersedes=tuple(prepared["supersedes"])))


def _prepare_codes(folder: Path) -> Dict[str, Dict[str, Any]]:
    codes: Dict[str, Dict[str, Any]] = {}
    for code, record in load_toml(folder / CODES_FILE).items():
        if code.startswith("_"):
            continue  # not a code: the frameworks' own commands (_frameworks_of)
        where = f"{CODES_FILE} [{code}]"
        _require(code in FINDING_CODES, where, "not a docs/CONTRACT.md §4 code")
        _require(str(record.get("source", "")).startswith("http"), where, "no source URL")
        related = {key: record.get(key, []) for key in ("neighbours", "excludes")}
        for key, listed in related.items():
            _require(isinstance(listed, list) and all(c in FINDING_CODES and c != code for c in listed), where,
                     f"{key} must list other docs/CONTRACT.md §4 codes")
        codes[code] = {"code": code, "rank": int(record["rank"]), "commands": list(record.get("commands", ())),
                       "settle": list(record.get("settle", ())), "source": record["source"], **related}
    return codes


def _whole_word(term: str, joined: str = "") -> str:
    """A noun or predicate that starts or ends with a Latin letter, never read inside a longer word ("hang" not in
    "change", "OOM" not in "ROOM"): bounded by what is not a Latin letter rather than by ``\\b``, so "VRAM不够" and
    "显存OOM" still read (a CJK character is a word character to ``\\b``). ``joined``: more characters that may not
    touch it (a predicate joined to a noun by "-" or "_" is a name, "cudnn-mismatch.txt", not something said)."""
    head = "(?<![A-Za-z%s])" % joined if term[:1].isascii() and term[:1].isalpha() else ""
    body = term.rstrip("?*+")
    tail = "(?![A-Za-z%s])" % joined if body[-1:].isascii() and body[-1:].isalpha() else ""
    return head + term + tail


def _one_line(pattern: str) -> str:
    """The pattern kept to one line: a space (a space, then any blanks) or ``\\s`` (one blank) never matches a line
    break."""
    out: List[str] = []
    for token, in_class in _tokens(pattern):
        if token == "\\s":
            token = " \\t" if in_class else "[ \\t]"
        elif token == " " and not in_class:
            token = " [ \\t]*"  # a literal blank first: "my GPU" keeps "my " as a literal to find it by
        out.append(token)
    return "".join(out)


def _words_signatures(folder: Path) -> Tuple[List[Dict[str, Any]], Dict[str, List[str]], List[str], List[str]]:
    """user_words.toml's records as prepared signatures (marked ``words``), and each code's terms. A record's nouns
    and predicates make a pattern each way round (or the one way its ``order`` allows), a noun and a predicate at
    most ``gap`` characters apart within one sentence; its ``phrases`` are patterns as they are. None matches right
    after a negation ("不是显存不够")."""
    path = folder / WORDS_FILE
    if not path.is_file():
        return [], {}, [], []
    document = load_toml(path)
    gap = document.get("gap", 16)
    _require(isinstance(gap, int) and 0 < gap <= 40, WORDS_FILE, "gap must be a small positive number of characters")
    negations = document.get("negations", [])
    questions = document.get("questions", [])
    _require(all(isinstance(x, list) and all(isinstance(n, str) and n for n in x) for x in (negations, questions)),
             WORDS_FILE, "negations and questions must be lists of words")
    # a negation before the words is sought when they match (engine._said_plainly): a look-behind needs a fixed width
    clause = "[^%s]{0,%d}" % (_CLAUSE_END, gap)
    prepared: List[Dict[str, Any]] = []
    terms: Dict[str, List[str]] = {}
    counts: Dict[str, int] = {}
    for index, record in enumerate(document.get("cause", [])):
        code = record.get("code")
        where = f"{WORDS_FILE} cause {index + 1} ({code})"
        _require(code in FINDING_CODES, where, f"code {code!r} is not a docs/CONTRACT.md §4 code")
        weight: Any = record.get("weight")
        _require(isinstance(weight, (int, float)) and 0 < weight <= WORDS_MAX, where,
                 f"weight must be in (0, {WORDS_MAX}]: the user's words never weigh as much as a program's message")
        _require(isinstance(record.get("paraphrases"), str) and record["paraphrases"], where,
                 "no paraphrases (the definition or the program message the words describe)")
        lists = {key: record.get(key, []) for key in ("nouns", "predicates", "phrases", "terms")}
        for key, listed in lists.items():
            _require(isinstance(listed, list) and all(isinstance(x, str) and x for x in listed), where,
                     f"{key} must be a list of strings")
        order = record.get("order", "both")
        _require(order in ("both", "noun_first", "predicate_first"), where,
                 "order must be both, noun_first or predicate_first")
        nouns, predicates = lists["nouns"], lists["predicates"]
        _require(bool(nouns) == bool(predicates), where, "nouns and predicates go together")
        patterns = []
        if nouns:
            noun = "(?:%s)" % "|".join(_whole_word(n) for n in nouns)
            predicate = "(?:%s)" % "|".join(_whole_word(w, "_-") for w in predicates)
            if order != "predicate_first":
                patterns.append(noun + clause + predicate)
            if order != "noun_first":
                patterns.append(predicate + clause + noun)
        patterns += ["(?:%s)" % phrase for phrase in lists["phrases"]]
        # within one line: a space or \s between the words never crosses a line break
        patterns = [_one_line(pattern) for pattern in patterns]
        counts[code] = counts.get(code, 0) + 1
        signature = _prepare_signature({"id": "words_%s_%d" % (code, counts[code]), "code": code, "weight": weight,
                                        "patterns": patterns, "source": record.get("source"),
                                        "context": record.get("context", []),
                                        "explain": "diagnose.from_words", "words": True}, WORDS_FILE, index)
        signature["words"] = True
        prepared.append(signature)
        terms.setdefault(code, []).extend(term.lower() for term in lists["terms"])
    return prepared, terms, [word.lower() for word in negations], [word.lower() for word in questions]


def _frameworks_of(folder: Path) -> Dict[str, Dict[str, str]]:
    frameworks = load_toml(folder / CODES_FILE).get("_frameworks", {})
    for name, record in frameworks.items():
        where = f"{CODES_FILE} [_frameworks.{name}]"
        _require(str(record.get("source", "")).startswith("http"), where, "no source URL")
        _require(isinstance(record.get("environment"), str) and isinstance(record.get("devices"), str), where,
                 "environment and devices must be commands")
    return {name: dict(record) for name, record in frameworks.items()}


def _codes(prepared: Dict[str, Dict[str, Any]]) -> Dict[str, CodeInfo]:
    codes = {code: CodeInfo(code, int(r["rank"]), tuple(r["commands"]), tuple(r["settle"]), r["source"],
                            tuple(r.get("neighbours", ())), tuple(r.get("excludes", ())))
             for code, r in prepared.items()}
    # A code added to the vocabulary later and not yet described here ranks after the chain, with no commands.
    for code in FINDING_CODES:
        codes.setdefault(code, CodeInfo(code, 70, (), (), "https://github.com/gpuvet/gpuvet/blob/main/docs/CONTRACT.md"))
    return codes


def _data_files(folder: Path) -> List[Path]:
    return sorted(folder.glob("*.toml"))


def data_digest(folder: Path) -> str:
    """The sha256 of every data file's name and bytes: what a prepared index was made from."""
    from gpuvet.tomlfile import sha256_hex as _sha256

    parts = []
    for file in _data_files(folder):
        parts.append(file.name.encode("utf-8") + b"\0" + _sha256(file.read_bytes()).encode("ascii"))
    return _sha256(b"\n".join(parts))


def index_document(folder: Path) -> Dict[str, Any]:
    """Every signature of ``folder`` validated and prepared, and the code facts: the prepared index's content
    (tools/compile_data.py writes it as JSON). Raises KnowledgeBaseError naming the first broken record."""
    signatures = []
    seen = set()
    for file in _data_files(folder):
        if file.name in (CODES_FILE, WORDS_FILE):
            continue
        for index, record in enumerate(load_toml(file).get("signature", [])):
            signature = _prepare_signature(record, file.name, index)
            _require(signature["id"] not in seen, file.name, f"signature id {signature['id']!r} defined twice")
            seen.add(signature["id"])
            signatures.append(signature)
    words, terms, negations, questions = _words_signatures(folder)
    for signature in words:
        _require(signature["id"] not in seen, WORDS_FILE, f"signature id {signature['id']!r} defined twice")
        seen.add(signature["id"])
        signatures.append(signature)
    # In id order, not file order: which file holds a record must change nothing (ties between equal weights
    # included), so records can move between topic files freely.
    signatures.sort(key=lambda s: s["id"])
    for signature in signatures:
        for other in signature["supersedes"]:
            _require(other in seen, signature["file"], f"{signature['id']} supersedes unknown signature {other!r}")
    return {"sha256": data_digest(folder), "signatures": signatures, "codes": _prepare_codes(folder),
            "frameworks": _frameworks_of(folder), "terms": terms, "negations": negations,
            "questions": questions}


def index_text(folder: Path) -> str:
    """The prepared index of ``folder`` as the JSON text tools/compile_data.py writes."""
    return json.dumps(index_document(folder), ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"


def index_path(folder: Path) -> Path:
    return folder / COMPILED_DIR / INDEX_FILE


def _current_index(folder: Path) -> Optional[Dict[str, Any]]:
    path = index_path(folder)
    if not os.path.isfile(path):
        return None
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(document, dict) or document.get("sha256") != data_digest(folder):
        return None
    return document


@lru_cache(maxsize=4)
def load_signatures(folder: Optional[str] = None) -> SignatureBase:
    """All signatures and code facts from ``folder`` (default: the shipped data), once per process: from the
    prepared index when it was made from exactly these files, else prepared (and validated) here."""
    path = Path(folder) if folder else DATA_DIR
    document = _current_index(path) or index_document(path)
    return SignatureBase(tuple(_signature(s) for s in document["signatures"]), _codes(document["codes"]),
                         dict(document.get("frameworks", {})),
                         {code: tuple(terms) for code, terms in document.get("terms", {}).items()},
                         tuple(document.get("negations", ())), tuple(document.get("questions", ())))
