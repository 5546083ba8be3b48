"""``gpuvet kb`` in text: the shipped files, one file or framework, the sources cited, and the user's overlay
(what ``harvest`` and ``update`` read, what ``status`` finds). Pure: what the command read in, text out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Mapping, Sequence

from gpuvet.i18n import label, text
from gpuvet.kb import overlay
from gpuvet.kb.loader import sources_of
from gpuvet.report.table import pad

if TYPE_CHECKING:
    from gpuvet.kb.records import Framework, Release


def render_kb_list(version: str, updated: str, rows: Sequence[Mapping[str, Any]], lang: str) -> str:
    """``kb list``: the knowledge base's version, then one row per file (``name``, ``path``, ``records``)."""
    lines = [text(lang, "kb.list_header", version=version, updated=updated)]
    lines += [text(lang, "kb.list_row", **row) for row in rows]
    return "\n".join(lines)


def render_kb_file(name: str, path: str, records: Sequence[Mapping[str, Any]], lang: str) -> str:
    """``kb show FILE`` of a data file: each record (``id``, ``record``) with its scalar fields and its sources."""
    lines = [text(lang, "kb.show_header", name=name, records=len(records), path=path)]
    for item in records:
        record = item["record"]
        scalars = ", ".join(f"{k}={_shown(v)}" for k, v in record.items() if k != "source" and not _is_table_list(v))
        lines.append(f"  {item['id']}: {scalars}")
        if record.get("source"):
            lines.append(f"      {label(lang, 'report.sources')}{'; '.join(sources_of(record['source']))}")
    return "\n".join(lines)


def render_kb_framework(framework: Framework, releases: Sequence[Release], path: str, lang: str) -> str:
    """A framework as a person reads it: one block per release (newest first), each variant with its CUDA, cuDNN,
    NCCL, arch lists and install command, and the sources, nothing cut short."""
    lines = [text(lang, "kb.framework_header", display=framework.display, name=framework.name,
                  count=len(framework.releases), oldest=framework.releases[-1].version,
                  newest=framework.newest.version, path=path)]
    for release in releases:
        head = [release.version]
        if release.released:
            head.append(text(lang, "kb.released", date=release.released))
        if release.python:
            head.append(f"Python {release.python}")
        if release.default_variant:
            head.append(text(lang, "kb.default_build", name=release.default_variant))
        lines.append("")
        lines.append("  " + "  ·  ".join(head))
        width = max((len(name) for name in release.variants), default=0)
        for name, variant in release.variants.items():
            parts = [f"CUDA {variant.cuda}" if variant.cuda else text(lang, "kb.no_cuda")]
            if variant.cudnn:
                parts.append(f"cuDNN {variant.cudnn}")
            if variant.nccl:
                parts.append(f"NCCL {variant.nccl}")
            if variant.sass or variant.ptx:
                parts.append(f"SASS {' '.join(variant.sass) or '-'}; PTX {' '.join(variant.ptx) or '-'}")
            elif variant.cuda:
                parts.append(text(lang, "kb.archs_unknown"))
            lines.append(f"    {name.ljust(width)}  " + ", ".join(parts))
            if variant.install:
                lines.append(f"    {' ' * width}  $ {variant.install}")
        requires = release.extra.get("requires")
        if requires:
            lines.append("    " + text(lang, "kb.requires") + ": " + ", ".join(f"{k}{v}" for k, v in dict(requires).items()))
        lines.append(f"    {label(lang, 'report.sources')}{release.source}")
    return "\n".join(lines)


def render_kb_sources(cited: Mapping[str, Sequence[str]], lang: str) -> str:
    """``kb sources``: each source the knowledge base cites, with (the first five of) the records citing it."""
    lines = [text(lang, "kb.sources_header", count=len(cited))]
    for source, ids in cited.items():
        lines.append(f"- {source}")
        lines.append("    " + text(lang, "kb.cited_by", count=len(ids)) + ": " + ", ".join(ids[:5])
                     + (" ..." if len(ids) > 5 else ""))
    return "\n".join(lines)


def render_harvest(rows: Sequence[Mapping[str, Any]]) -> str:
    """``kb harvest``: each wheel read, its archs and libraries, and the overlay file it went to."""
    return "\n".join(_harvest_line(row) for row in rows)


def render_update(added: Sequence[Mapping[str, Any]], left: int, rows: Sequence[Mapping[str, Any]],
                  failed: Sequence[str]) -> str:
    """``kb update``: what was added and why, each wheel read, and what failed."""
    lines = [_added_line(added, left)]
    lines += [_harvest_line(row) for row in rows]
    lines += [f"failed: {line}" for line in failed]
    return "\n".join(lines)


def render_status(version: str, updated: str, shipped_builds: int, folder: str, exists: bool,
                  rows: Sequence[Mapping[str, Any]], problems: Sequence[str], lang: str) -> str:
    """``kb status``: the shipped data, the overlay folder, and each overlay build against the shipped one (``status``
    adds, same or disagrees; ``usable``: whether check uses it)."""
    lines = [text(lang, "kb.status.shipped", version=version, updated=updated, count=shipped_builds),
             text(lang, "kb.status.overlay_exists" if exists else "kb.status.overlay_missing", folder=folder)]
    counts = {s: sum(1 for r in rows if r["status"] == s) for s in ("adds", "same", "disagrees")}
    if rows:
        lines.append("  " + text(lang, "kb.status.counts", count=len(rows), adds=counts["adds"], same=counts["same"],
                                 disagrees=counts["disagrees"]))
    for row in rows:
        sass, ptx = overlay.archs_of(row)
        what = f"  {pad(row['status'], 9)} {row['distribution']} {row['version']} {row.get('platform', 'x86_64')}: " \
               f"sass {' '.join(sass) or '-'}, ptx {' '.join(ptx) or '-'}"
        if row["status"] == "disagrees":
            what += (f"; shipped sass {' '.join(row['shipped_sass']) or '-'}, ptx {' '.join(row['shipped_ptx']) or '-'}"
                     f" ({row.get('shipped_wheel')})")
        elif row["status"] == "adds" and not row["usable"]:
            what += "; not used by check (no framework gpuvet covers, no CUDA code read, or its CUDA cannot be told)"
        lines.append(what)
        lines.append(f"            wheel {row.get('wheel')} sha256 {str(row.get('sha256'))[:16]}... from "
                     f"{row.get('index_url')} on {row.get('read_on')}")
        lines += _library_lines(row, "            ")
        if row["status"] == "disagrees":
            lines += _library_lines({"library": row["shipped_library"]}, "            shipped ")
    lines += ["  " + text(lang, "kb.status.problem", problem=p) for p in problems]
    return "\n".join(lines)


def _is_table_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)  # whole: a value cut mid-word misleads


def _library_lines(build: Mapping[str, Any], indent: str) -> List[str]:
    """One line per library of a harvested record: what it carries (gpuvet.kb.overlay.describe_library)."""
    return [indent + overlay.describe_library(library) for library in overlay.libraries_of(build)]


def _harvest_line(row: Mapping[str, Any]) -> str:
    cuda = f", CUDA {row['cuda']}" if row.get("cuda") else ""
    pins = f", pins {' '.join(row['requires'])}" if row.get("requires") else ""
    bad = f", unreadable: {len(row['unreadable'])} member(s)" if row.get("unreadable") else ""
    sass, ptx = overlay.archs_of(row)
    return "\n".join([
        f"{row['distribution']} {row['version']} {row['platform']}: wheel {row['wheel']} (sha256 {row['sha256']})"
        f"{cuda}{pins}{bad}", f"  sass: {' '.join(sass) or '-'}", f"  ptx:  {' '.join(ptx) or '-'}"]
        + (_library_lines(row, "  library ") or ["  no library with CUDA code"])
        + [f"  from {row['index_url']} -> {row['overlay_file']} ({'written' if row['changed'] else 'unchanged'})"])


def _added_line(added: Sequence[Mapping[str, Any]], left: int) -> str:
    """What kb update added, in one line: each release and why (newer than the shipped data, or a gap in it)."""
    if not added:
        return "nothing new to harvest" if not left else f"nothing added ({left} release(s) left: raise --limit)"
    parts = []
    for row in added:
        if row["why"] == "newer":
            why = (f"newer than the knowledge base's {row['newest_shipped']}" if row["newest_shipped"]
                   else "not in the knowledge base")
        else:
            why = "a gap in the knowledge base"
        parts.append(f"{row['distribution']} {row['version']} {row['platform']} ({why})")
    more = f"; {left} more left (raise --limit)" if left else ""
    return f"added {len(added)} release(s) to the overlay: " + ", ".join(parts) + more
