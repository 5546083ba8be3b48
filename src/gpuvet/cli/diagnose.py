"""`gpuvet diagnose [LOGFILE|-] [--from FILE ...] [--snapshot FILE] [--format ...]`: the edge (I/O) of diagnose."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any, Dict, List, Optional, Tuple

from gpuvet.errors import ExitCode, InputError


def read_log(name: Optional[str], stdin: Any = None) -> str:
    """The log's text: a file, a pipe the user made, or stdin for '-', read and decoded as every user file is
    (gpuvet.userfiles: bounded in size and time, UTF-16 and the legacy CJK encodings decoded). One clear
    InputError for missing, binary or empty input."""
    hint = "pass a log file, or pipe it: `python train.py 2>&1 | gpuvet diagnose -`"
    if not name:
        raise InputError("no log given", hint=hint)
    from gpuvet.userfiles import ReadRefused, decode_text, read_bytes

    data = read_bytes(name, "log", hint=hint, stdin=stdin, binary_ok=False)
    label = "stdin" if name == "-" else name
    try:
        text = decode_text(data, label, "log", hint)
    except ReadRefused:  # no NUL byte (read_bytes saw to that): a log mixing encodings is still read
        text = data.decode("utf-8", errors="replace")
    if not text.strip():
        raise InputError(f"{label} is empty", hint=hint)
    return text


def _snapshot(args: argparse.Namespace) -> Tuple[Optional[Dict[str, Any]], bool]:
    """(snapshot, is_live). Explicit inputs must work (their errors reach the user); the live probe may fail."""
    from gpuvet.sources.inputs import gather_snapshot

    if getattr(args, "from_files", None) or getattr(args, "snapshot", None):
        return gather_snapshot(args), False
    try:
        return gather_snapshot(args, binaries=True), True
    except Exception:  # no probe on this install, or it broke: the log alone still answers
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


def run(args: argparse.Namespace, output: Any) -> int:
    from gpuvet.diagnose import context_for
    from gpuvet.diagnose.engine import diagnose_text
    from gpuvet.report import diagnose as render
    from gpuvet.report.console import use_color
    from gpuvet.report.envelope import dumps

    text = read_log(getattr(args, "logfile", None))
    lang = getattr(args, "lang", None) or "en"
    announce_large_log(text, lang)
    snapshot, is_live = context_for(text, *_snapshot(args))
    from gpuvet.probe.redact import Redaction, redact

    state = getattr(output, "redaction", None) or Redaction()
    state.host = state.host or bool(getattr(args, "redact_host", False))
    if snapshot is not None and state.host:
        redact(snapshot, state=state)  # learn the machine's host name and serials for the text below
    diagnoses = _redacted(diagnose_text(text, snapshot, snapshot_is_live=is_live), state)
    fmt = getattr(args, "format", "text")
    if fmt == "json":
        output.write(redact(dumps(redact(render.to_json(diagnoses, lang), state=state)), state=state, free=False))
    elif fmt in ("markdown", "html"):
        # One Markdown/HTML implementation for every command (gpuvet.report); secrets are already redacted above.
        from gpuvet.cli.formats import render_document

        document = render.to_json(diagnoses, lang)
        if snapshot is not None:
            document["snapshot"] = snapshot
        output.write(render_document("diagnose", document, args, output))
    else:
        output.write(redact(render.to_text(diagnoses, lang, color=use_color(output.is_terminal),
                                           has_snapshot=snapshot is not None, live=is_live), state=state, free=False))
    stack_causes = [d for d in diagnoses if d.code != "not_a_stack_problem"]
    return int(ExitCode.FAILURE if stack_causes else ExitCode.OK)
