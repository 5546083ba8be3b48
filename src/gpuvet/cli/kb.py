"""``gpuvet kb [list|show NAME|sources] [--format text|json]``: what the knowledge base holds and where it comes from."""

from __future__ import annotations

from typing import Any, Dict, List

from gpuvet.errors import ExitCode, InputError
from gpuvet.i18n import text
from gpuvet.kb import load, loader
from gpuvet.report.envelope import dumps, envelope


def run(args, output) -> int:
    lang = getattr(args, "lang", None) or "en"
    fmt = getattr(args, "format", "text")
    action = getattr(args, "action", None) or "list"
    kb = load()
    files = loader.data_files()
    if action == "show":
        name = getattr(args, "name", None)
        if not name:
            raise InputError(text(lang, "kb.show_needs_name"), hint=text(lang, "kb.unknown_file_hint", names=", ".join(files)))
        output.write(_show(name, files, fmt, lang))
    elif action == "sources":
        output.write(_sources(kb, fmt, lang))
    else:
        output.write(_list(kb, files, fmt, lang))
    return int(ExitCode.OK)


def _records(path) -> List[Dict[str, Any]]:
    return [{"id": rid, "record": record} for rid, record in loader.records(loader.raw(path))]


def _list(kb, files, fmt: str, lang: str) -> str:
    rows = [{"name": name, "path": _relative(path), "records": len(_records(path))} for name, path in files.items()]
    if fmt == "json":
        return dumps(envelope(kb={"version": kb.version, "updated": kb.updated}, files=rows))
    lines = [text(lang, "kb.list_header", version=kb.version, updated=kb.updated)]
    lines += [text(lang, "kb.list_row", **row) for row in rows]
    return "\n".join(lines)


def _show(name: str, files, fmt: str, lang: str) -> str:
    key = loader.normalize_name(name)
    path = next((p for n, p in files.items() if loader.normalize_name(n) == key), None)
    if path is None:
        raise InputError(text(lang, "kb.unknown_file", name=name), hint=text(lang, "kb.unknown_file_hint", names=", ".join(files)))
    records = _records(path)
    if fmt == "json":
        return dumps(envelope(file={"name": path.stem, "path": _relative(path)}, document=loader.raw(path)))
    lines = [text(lang, "kb.show_header", name=path.stem, records=len(records), path=_relative(path))]
    for item in records:
        record = item["record"]
        scalars = ", ".join(f"{k}={_short(v)}" for k, v in record.items() if k != "source" and not _is_table_list(v))
        lines.append(f"  {item['id']}: {scalars}")
    return "\n".join(lines)


def _sources(kb, fmt: str, lang: str) -> str:
    cited: Dict[str, List[str]] = {}
    for record_id, source in kb.sources():
        cited.setdefault(source, []).append(record_id)
    if fmt == "json":
        return dumps(envelope(kb={"version": kb.version, "updated": kb.updated},
                              sources=[{"source": s, "records": ids} for s, ids in cited.items()]))
    lines = [text(lang, "kb.sources_header", count=len(cited))]
    for source, ids in cited.items():
        lines.append(f"- {source}")
        lines.append("    " + text(lang, "kb.cited_by", count=len(ids)) + ": " + ", ".join(ids[:5]) + (" ..." if len(ids) > 5 else ""))
    return "\n".join(lines)


def _is_table_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _short(value: Any) -> str:
    shown = value if isinstance(value, str) else repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def _relative(path) -> str:
    return str(path.relative_to(loader.DATA_DIR.parent.parent)) if loader.DATA_DIR.parent.parent in path.parents else str(path)
