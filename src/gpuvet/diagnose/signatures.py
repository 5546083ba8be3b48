"""Loading and validating the error signatures (``data/*.toml``) and the per-code facts (``data/codes.toml``).

Signatures are data: each record names a finding code (docs/CONTRACT.md §4), regexes in the wordings users actually see,
a weight (how specific the text is), optional extraction regexes with named groups, and its ``source``. The loader
compiles everything once and refuses a broken file with a KnowledgeBaseError naming the record.

Context rules, also data: a signature with ``context = [regex, ...]`` counts only when one of those regexes also
occurs anywhere in the log (the same "libcuda.so.1: cannot open" means "GPU not passed into the container" when the
log is a Kubernetes/docker one), and ``supersedes = [signature id, ...]`` drops the named signatures' matches when it
fires, so the contextual reading replaces the context-free one instead of competing with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Optional, Pattern, Tuple

from gpuvet.diagnose.anchors import anchors, necessary_sets
from gpuvet.errors import KnowledgeBaseError
from gpuvet.models import FINDING_CODES
from gpuvet.tomlfile import load_toml

DATA_DIR = Path(__file__).parent / "data"
CODES_FILE = "codes.toml"
HARVESTED_FILE = "sources.toml"  # the first harvest, whose records predate the `harvested` key
_NAMED_GROUP = re.compile(r"\(\?P<\w+>")
FLAGS = re.IGNORECASE


@dataclass(frozen=True)
class Signature:
    id: str
    code: str
    weight: float
    generic: bool
    # (literal anchors or None, regex without named groups): str.find on an anchor finds candidate lines fast
    scan: Tuple[Tuple[Optional[Tuple[str, ...]], Pattern[str], Tuple[Tuple[str, ...], ...]], ...]
    extract: Tuple[Pattern[str], ...]  # patterns and extract regexes that carry named groups, run on matched lines
    source: str
    file: str
    context: Tuple[Pattern[str], ...] = ()  # at least one must occur somewhere in the log, or the signature is void
    supersedes: Tuple[str, ...] = ()  # signature ids whose matches this one replaces when it fires
    # The catalog sentence that explains a match: diagnose.sig.<id> unless the record names a shared one (the
    # vocabulary harvested from the sources explains by cause: diagnose.source.<code>, with the project as {origin}).
    explain: str = ""
    origin: str = ""
    # Taken from the programs that print the messages (sources.toml, or a record with `harvested = true`, as the files
    # tools/harvest_messages.py writes): where a hand-written signature reads the same line, it wins.
    harvested: bool = False


@dataclass(frozen=True)
class CodeInfo:
    code: str
    rank: int  # place in the chain: driver < CUDA < cuDNN/NCCL < framework build < the rest
    commands: Tuple[str, ...]
    settle: Tuple[str, ...]
    source: str


@dataclass(frozen=True)
class SignatureBase:
    signatures: Tuple[Signature, ...]
    codes: Dict[str, CodeInfo]


def _require(condition: object, where: str, problem: str) -> None:
    if not condition:
        raise KnowledgeBaseError(f"diagnose signatures: {where}: {problem}")


def _compile(pattern: str, where: str) -> Pattern[str]:
    try:
        return re.compile(pattern, FLAGS)
    except re.error as exc:
        raise KnowledgeBaseError(f"diagnose signatures: {where}: bad regex {pattern!r}: {exc}")


def _load_signature(record: Dict, file: str, index: int) -> Signature:
    where = f"{file} record {index + 1} ({record.get('id', '?')})"
    _require(isinstance(record.get("id"), str) and record["id"], where, "no id")
    _require(record.get("code") in FINDING_CODES, where, f"code {record.get('code')!r} is not a docs/CONTRACT.md §4 code")
    weight: Any = record.get("weight")  # raw TOML, checked by _require below (as are source and patterns)
    _require(isinstance(weight, (int, float)) and 0 < weight <= 1, where, "weight must be in (0, 1]")
    source: Any = record.get("source")
    _require(isinstance(source, str) and source.startswith(("http://", "https://")), where, "no source URL")
    patterns: Any = record.get("patterns")
    _require(isinstance(patterns, list) and patterns, where, "no patterns")
    for pattern in patterns:
        _compile(pattern, where)  # each on its own so a bad one is named
    scan = []
    for pattern in patterns:
        plain = _NAMED_GROUP.sub("(?:", pattern)
        found = anchors(plain)
        # The other literal sets a match needs: tested with `in` on a candidate line before the regex runs, so an
        # anchor that happens to be frequent in a log ("slower than expected") costs a substring test, not a regex.
        checks = tuple(tuple(c) for c in necessary_sets(plain) if not found or tuple(c) != tuple(found))
        scan.append((tuple(found) if found else None, _compile(plain, where), checks))
    extractors = [p for p in patterns if _NAMED_GROUP.search(p)] + list(record.get("extract", []))
    context = record.get("context", [])
    _require(isinstance(context, list) and all(isinstance(c, str) and c for c in context), where,
             "context must be a list of regexes")
    supersedes = record.get("supersedes", [])
    _require(isinstance(supersedes, list) and all(isinstance(i, str) and i for i in supersedes), where,
             "supersedes must be a list of signature ids")
    _require(not supersedes or context, where, "supersedes needs a context (an unconditional signature would "
             "simply replace the other one: edit that one instead)")
    return Signature(
        id=record["id"],
        code=record["code"],
        weight=float(weight),
        generic=bool(record.get("generic", False)),
        scan=tuple(scan),
        extract=tuple(_compile(p, where) for p in extractors),
        source=source,
        file=file,
        context=tuple(_compile(c, where) for c in context),
        supersedes=tuple(supersedes),
        explain=str(record.get("explain") or "diagnose.sig." + record["id"]),
        origin=str(record.get("origin", "")),
        harvested=bool(record.get("harvested")) or file == HARVESTED_FILE,
    )


def _load_codes(folder: Path) -> Dict[str, CodeInfo]:
    codes: Dict[str, CodeInfo] = {}
    for code, record in load_toml(folder / CODES_FILE).items():
        where = f"{CODES_FILE} [{code}]"
        _require(code in FINDING_CODES, where, "not a docs/CONTRACT.md §4 code")
        _require(str(record.get("source", "")).startswith("http"), where, "no source URL")
        codes[code] = CodeInfo(
            code=code,
            rank=int(record["rank"]),
            commands=tuple(record.get("commands", ())),
            settle=tuple(record.get("settle", ())),
            source=record["source"],
        )
    # A code added to the vocabulary later and not yet described here ranks after the chain, with no commands.
    for code in FINDING_CODES:
        codes.setdefault(code, CodeInfo(code, 70, (), (), "https://github.com/gpuvet/gpuvet/blob/main/docs/CONTRACT.md"))
    return codes


@lru_cache(maxsize=4)
def load_signatures(folder: Optional[str] = None) -> SignatureBase:
    """All signatures and code facts from ``folder`` (default: the shipped data), compiled once per process."""
    path = Path(folder) if folder else DATA_DIR
    signatures = []
    seen = set()
    for file in sorted(path.glob("*.toml")):
        if file.name == CODES_FILE:
            continue
        for index, record in enumerate(load_toml(file).get("signature", [])):
            signature = _load_signature(record, file.name, index)
            _require(signature.id not in seen, file.name, f"signature id {signature.id!r} defined twice")
            seen.add(signature.id)
            signatures.append(signature)
    for signature in signatures:
        for other in signature.supersedes:
            _require(other in seen, signature.file, f"{signature.id} supersedes unknown signature {other!r}")
    return SignatureBase(tuple(signatures), _load_codes(path))
