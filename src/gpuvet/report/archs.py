"""``gpuvet archs`` in text: the SASS and PTX archs of each CUDA binary, from the JSON ``files`` list the command
reads (gpuvet.cli.archs.collect). Pure: the list, the language and the PTX ISA table in, text out."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Sequence, Tuple

from gpuvet.errors import printable
from gpuvet.i18n import text
from gpuvet.report.table import pad


def render_archs_text(results: Sequence[Mapping[str, Any]], paths: Sequence[str], lang: str,
                      cuda_of: Mapping[str, str]) -> str:
    """``gpuvet archs`` for a person: per file its code units, the SASS and PTX archs with how many units carry each,
    each PTX's ISA version with the CUDA release that writes it (``cuda_of``: ISA -> CUDA, kb/data/ptx_isa.toml),
    relocatable code apart and why an unreadable file could not be read."""
    if not results:
        return text(lang, "binary.archs.no_cuda", paths=", ".join(printable(p) for p in paths))
    lines: List[str] = []
    for item in results:
        lines.extend(_file_lines(item, cuda_of, lang))
    return "\n".join(lines)


def _file_lines(item: Mapping[str, Any], cuda_of: Mapping[str, str], lang: str) -> List[str]:
    total = sum(group["count"] for group in item.get("units", ()))
    path = printable(item["path"])
    if not total:
        lines = [path]
    else:
        lines = [text(lang, "binary.archs.header_one" if total == 1 else "binary.archs.header", path=path, count=total)]
    if item["sass"] or item["ptx"] or not item["error"]:
        counts = item.get("coverage", {})
        for kind, archs in (("sass", item["sass"]), ("ptx", item["ptx"])):
            shown = _covered(archs, counts, total, lang) if archs else text(lang, "binary.archs.none")
            lines.append("  %s %s" % (pad(text(lang, "binary.archs." + kind) + ":", 5), shown))
        lines.extend(" " * 8 + line for line in _isa_lines(item.get("ptx_isa", {}), cuda_of, lang))
    relocatable = item.get("relocatable")
    if relocatable:
        archs = " ".join(relocatable["sass"] + relocatable["ptx"])
        lines.append("  " + text(lang, "binary.archs.relocatable", archs=archs))
    if item["error"]:
        why = item["error"][len("unreadable: ") :] if item["error"].startswith("unreadable: ") else item["error"]
        lines.append("  " + text(lang, "binary.archs.unreadable", why=printable(why)))
    return lines


def _covered(archs: Sequence[str], counts: Mapping[str, int], total: int, lang: str) -> str:
    """``sm_75 sm_80 (340 of 340 units); sm_90a (1 of 340 units)``: archs in as many units grouped, the most
    widespread first. With one unit (an object file, a .fatbin) every arch is in all of it: no counts."""
    if total <= 1:
        return " ".join(archs)
    by_count: Dict[int, List[str]] = {}
    for arch in archs:  # archs come in numeric order, and stay in it within a group
        by_count.setdefault(counts.get(arch, 0), []).append(arch)
    parts = [text(lang, "binary.archs.in_units", archs=" ".join(by_count[count]), count=count, total=total)
             for count in sorted(by_count, reverse=True)]
    return text(lang, "binary.archs.group_separator").join(parts)


def _isa_lines(isa_of: Mapping[str, Sequence[str]], cuda_of: Mapping[str, str], lang: str) -> List[str]:
    """One line per set of PTX ISA versions: the PTX archs written at them, each version with its CUDA release."""
    archs_of: Dict[Tuple[str, ...], List[str]] = {}
    for arch, isas in isa_of.items():
        archs_of.setdefault(tuple(isas), []).append(arch)
    lines = []
    for isas, archs in archs_of.items():
        named = [text(lang, "binary.archs.isa_cuda", isa=isa, cuda=cuda_of[isa]) if isa in cuda_of
                 else text(lang, "binary.archs.isa_unknown", isa=isa) for isa in isas]
        separator = text(lang, "binary.archs.list_separator")
        lines.append(text(lang, "binary.archs.ptx_isa", archs=" ".join(archs), isas=separator.join(named)))
    return lines
