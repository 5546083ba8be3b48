"""`gpuvet diagnose [LOGFILE|-] [--from FILE ...] [--snapshot FILE] [--format ...]`: the edge (I/O) of diagnose."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any, Dict, Iterator, List, Optional, Tuple

from gpuvet.debuglog import survived
from gpuvet.errors import ExitCode, InputError
from gpuvet.models import Message

PIECE_BYTES = 1 << 21  # characters: a log is scanned 2 Mi characters at a time (its size limit: userfiles.LIMITS)
# Context rules and the log's own environment are judged on the whole text up to this many characters, and on its
# head and tail (half each) beyond: where the command line, the environment report and the final error sit.
WHOLE_CONTEXT = 4 * 1024 * 1024
# What to do about a log that cannot be read, said in the report's language (errors.no_log.hint).
HINT = Message("errors.no_log.hint")


class LogReader:
    """A log read piece by piece (:meth:`pieces`, decoded UTF-8 with errors replaced), keeping what is judged as a
    whole afterwards (:meth:`context`): the whole text of a log up to WHOLE_CONTEXT characters, else its head and
    tail. One clear InputError for a missing, special, binary, oversized or empty log."""

    def __init__(self, name: Optional[str], stdin: Any = None) -> None:
        if not name:
            raise InputError.said("errors.no_log")
        self.name = name
        self.label = "stdin" if name == "-" else name
        self.stdin = stdin
        self.chars = 0
        self.size = 0  # bytes read
        self._kept: List[str] = []
        self._head = ""
        self._tail: List[str] = []
        self._tail_chars = 0
        self._content = False

    def pieces(self) -> Iterator[str]:
        from gpuvet.userfiles import ReadRefused, decode_text, read_bytes

        # Read through the one reader of user files (bounded in size and in time, a pipe the user made, never a
        # device; /dev/zero on stdin refused after its first piece) and decoded as every user file is (a BOM, UTF-16,
        # GB18030, Big5, Shift-JIS), then scanned a piece at a time (the engine's result does not depend on the cuts).
        data = read_bytes(self.name, "log", hint=HINT, stdin=self.stdin, binary_ok=False)
        self.size = len(data)
        try:
            text = decode_text(data, self.label, "log", HINT)
        except ReadRefused:  # no NUL byte (read_bytes saw to that): a log mixing encodings is still read
            text = data.decode("utf-8", errors="replace")
        del data
        for start in range(0, len(text), PIECE_BYTES):
            piece = text[start:start + PIECE_BYTES]
            self._keep(piece)
            yield piece
        if not self._content:
            raise InputError.said("errors.log_empty", name=self.label)

    def _keep(self, text: str) -> None:
        self.chars += len(text)
        self._content = self._content or bool(text.strip())
        if self._kept is not None:
            self._kept.append(text)
            if self.chars <= WHOLE_CONTEXT:
                return
            whole = "".join(self._kept)
            self._kept = None  # type: ignore[assignment]
            self._head = whole[:WHOLE_CONTEXT // 2]
            text = whole[WHOLE_CONTEXT // 2:]
        self._tail.append(text)
        self._tail_chars += len(text)
        while len(self._tail) > 1 and self._tail_chars - len(self._tail[0]) >= WHOLE_CONTEXT // 2:
            self._tail_chars -= len(self._tail.pop(0))

    def context(self) -> str:
        """The text judged as a whole: the log itself, or its head and tail when it is longer than WHOLE_CONTEXT."""
        if self._kept is not None:
            return "".join(self._kept)
        return self._head + "\n" + "".join(self._tail)[-(WHOLE_CONTEXT // 2):]


def _snapshot(args: argparse.Namespace) -> Tuple[Optional[Dict[str, Any]], bool]:
    """(snapshot, is_live). Explicit inputs must work (their errors reach the user); the live probe may fail."""
    from gpuvet.cli.choices import gather_snapshot

    if getattr(args, "from_files", None) or getattr(args, "snapshot", None):
        return gather_snapshot(args), False
    try:
        return gather_snapshot(args, binaries=True), True
    except Exception:  # no probe on this install, or it broke: the log alone still answers
        survived(__name__, 'the live probe of this machine')
        return None, True


def _redacted(diagnoses: List[Any], state: Any = None, host: bool = False) -> List[Any]:
    """Every string a diagnosis carries (evidence lines, extracted values, the sentences built from them) through the
    one redaction pass (gpuvet.probe.redact.redact) with this command's state, so a name learnt in one line (an
    NCCL host prefix) is removed from every other."""
    from gpuvet.probe.redact import Redaction, redact

    state = state if state is not None else Redaction(host)

    def line(value: Any) -> str:
        return redact(str(value), state=state)

    def message(m: Any) -> Any:  # the sentences carry the log's extracted values too, for any template to use
        return m._replace(params={k: line(v) for k, v in m.params.items()})

    # Learn first (every evidence line), then redact: a host name seen in line 9 also goes from line 2.
    for d in diagnoses:
        for e in d.evidence:
            line(e.text)
    result = []
    for d in diagnoses:
        evidence = tuple(dataclasses.replace(e, text=line(e.text)) for e in d.evidence)
        params = {k: line(v) for k, v in d.params.items()}
        result.append(dataclasses.replace(d, evidence=evidence, params=params,
                                          explanations=tuple(message(m) for m in d.explanations),
                                          fix=d.fix._replace(summary=message(d.fix.summary),
                                                             commands=tuple(line(c) for c in d.fix.commands))))
    return result


LARGE_LOG = 8 * 1024 * 1024  # characters: a log this long takes about a second, worth saying so on a terminal


def announce_large_log(text: str, lang: str, stream: Any = None) -> bool:
    """One line on a terminal's stderr before a large log is read (never piped, never in the report)."""
    import sys

    from gpuvet.i18n import text as message

    stream = sys.stderr if stream is None else stream
    if len(text) < LARGE_LOG or not (hasattr(stream, "isatty") and stream.isatty()):
        return False
    stream.write(message(lang, "diagnose.progress.large", megabytes="%d" % (len(text) // (1024 * 1024)),
                         lines="%d" % text.count("\n")) + "\n")
    stream.flush()
    return True


def announce_large_file(size: int, lang: str, stream: Any = None) -> bool:
    """announce_large_log for a log file of ``size`` bytes, before it is read piece by piece."""
    import sys

    from gpuvet.i18n import text as message

    stream = sys.stderr if stream is None else stream
    if size < LARGE_LOG or not (hasattr(stream, "isatty") and stream.isatty()):
        return False
    stream.write(message(lang, "diagnose.progress.large_file", megabytes="%d" % (size // (1024 * 1024))) + "\n")
    stream.flush()
    return True


def _file_size(name: str) -> int:
    import os

    try:
        return os.stat(name).st_size
    except OSError:
        return 0


def run(args: argparse.Namespace, output: Any) -> int:
    from gpuvet.diagnose import machine_for, stated_facts
    from gpuvet.diagnose.engine import framework_of, plain_text, read_scan, scan_pieces
    from gpuvet.diagnose.signatures import load_signatures
    from gpuvet.report import diagnose as render
    from gpuvet.report.console import use_color
    from gpuvet.report.envelope import dumps

    reader = LogReader(getattr(args, "logfile", None))
    lang = getattr(args, "lang", None) or "en"
    if reader.name != "-":
        announce_large_file(_file_size(reader.name), lang)
    base = load_signatures()
    scanned = scan_pieces(reader.pieces(), base.signatures)
    text = plain_text(reader.context())
    snapshot, is_live, judged = machine_for(text, *_snapshot(args), here=bool(getattr(args, "here", False)))
    from gpuvet.probe.redact import Redaction, redact

    state = getattr(output, "redaction", None) or Redaction()
    state.host = state.host or bool(getattr(args, "redact_host", False))
    if snapshot is not None and state.host:
        redact(snapshot, state=state)  # learn the machine's host name and serials for the text below
    reading = read_scan(scanned, text, snapshot, is_live, base, whole=reader.chars <= WHOLE_CONTEXT)
    diagnoses = _redacted(list(reading.diagnoses), state)
    facts = stated_facts(snapshot)
    fmt = getattr(args, "format", "text")
    if fmt == "json":
        document = render.to_json(diagnoses, lang, reading=reading, judged=judged, facts=facts)
        output.write(redact(dumps(redact(document, state=state)), state=state, free=False))
    elif fmt in ("markdown", "html"):
        # One Markdown/HTML implementation for every command (gpuvet.report); secrets are already redacted above.
        from gpuvet.cli.formats import render_document

        document = render.to_json(diagnoses, lang, reading=reading, judged=judged, facts=facts)
        if snapshot is not None:
            document["snapshot"] = snapshot
        output.write(render_document("diagnose", document, args, output))
    else:
        output.write(redact(render.to_text(diagnoses, lang, color=use_color(output.is_terminal),
                                           has_snapshot=snapshot is not None, live=is_live, reading=reading,
                                           judged=judged, facts=facts, framework=framework_of(text)),
                            state=state, free=False))
    stack_causes = [d for d in diagnoses if d.code != "not_a_stack_problem"]
    if stack_causes:
        return int(ExitCode.FAILURE)
    # An error with no known cause is undecided, not "no failure"
    return int(ExitCode.UNDECIDED if reading.no_known_cause else ExitCode.OK)
