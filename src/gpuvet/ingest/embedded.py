"""Tool outputs buried in a larger text (an issue report, a CI log): find each block, parse it, merge.

Every block is cut out by its own start/end markers and handed to the same parser a standalone paste gets, so a
table inside a log reads exactly like the table on its own. Nothing here raises: an unparseable block is skipped.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Optional, Tuple

from gpuvet.ingest import collect_env, ds_report, nvcc, packages, smi_list, smi_table
from gpuvet.ingest.common import clean_text, set_fact, shell
from gpuvet.snapshot import merge_all, new_snapshot

_QUOTE = re.compile(r"^(?:>\s?)+")  # e-mail / markdown quoting
_NCCL = re.compile(r"NCCL version (?P<version>\d+\.\d+\.\d+)(?:\+cuda(?P<cuda>\d+\.\d+))?")


def _lines(text: str) -> List[str]:
    return [_QUOTE.sub("", line) for line in clean_text(text).split("\n")]


def _smi_tables(lines: List[str]) -> List[str]:
    blocks = []
    i = 0
    while i < len(lines):
        if "NVIDIA-SMI" in lines[i] and smi_table.BANNER.search(lines[i]):
            start = i - 1 if i > 0 and lines[i - 1].strip().startswith("+") else i
            end = i + 1
            blank_run = 0
            while end < len(lines):
                stripped = lines[end].strip()
                if not stripped:
                    blank_run += 1
                    if blank_run > 1:
                        break
                elif stripped[0] in "|+":
                    blank_run = 0
                else:
                    break
                end += 1
            blocks.append("\n".join(line.strip() for line in lines[start:end]))
            i = end
        else:
            i += 1
    return blocks


def _collect_env_blocks(lines: List[str]) -> List[str]:
    blocks = []
    for i, line in enumerate(lines):
        if line.strip().startswith("PyTorch version:"):
            start = i - 1 if i > 0 and "Collecting environment information" in lines[i - 1] else i
            end = i + 1
            in_libraries = False
            while end < len(lines):
                stripped = lines[end].strip()
                if stripped.startswith("Versions of relevant libraries"):
                    in_libraries = True
                elif in_libraries and not stripped.startswith("["):
                    break
                elif stripped.startswith("```"):
                    break
                end += 1
            blocks.append("\n".join(lines[start:end]))
    return blocks


def _ds_report_blocks(lines: List[str]) -> List[str]:
    blocks = []
    for i, line in enumerate(lines):
        if "DeepSpeed general environment info" in line:
            end = i + 1
            while end < len(lines) and re.search(r"\.{2,}", lines[end]):
                end += 1
            blocks.append("\n".join(lines[i:end]))
    return blocks


def _package_blocks(lines: List[str]) -> List[Tuple[str, str]]:
    """Runs of >= 3 `name==version` lines (pip freeze) and `pip list` tables."""
    blocks: List[Tuple[str, str]] = []
    run: List[str] = []
    for line in lines + [""]:
        stripped = line.strip()
        if packages.FREEZE_LINE.match(stripped) and "==" in stripped or stripped.startswith("-e "):
            run.append(stripped)
            continue
        if len(run) >= 3:
            blocks.append(("pip-freeze", "\n".join(run)))
        run = []
    for i, line in enumerate(lines[:-1]):
        if packages.PIP_LIST_HEADER.match(line.strip()) and packages.PIP_LIST_RULE.match(lines[i + 1].strip()):
            end = i + 2
            while end < len(lines) and re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*\s+\S+", lines[end].strip()):
                end += 1
            blocks.append(("pip-list", "\n".join(l.strip() for l in lines[i:end])))
    return blocks


def _simple(lines: List[str], pattern: "re.Pattern[str]") -> List[str]:
    return [line for line in lines if pattern.search(line)]


def _nccl(text: str) -> Optional[Dict[str, Any]]:
    versions = []
    for match in _NCCL.finditer(text):
        entry = {"version": match.group("version"), "path": None, "source": "pasted:nccl-log", "package": None}
        if match.group("cuda"):
            entry["cuda"] = match.group("cuda")
        if entry not in versions:
            versions.append(entry)
    if not versions:
        return None
    snapshot = shell("nccl-log", "embedded")
    set_fact(snapshot, "nccl", versions, "pasted:nccl-log")
    return snapshot


def _attempt(parser: Callable[[str, str], Dict[str, Any]], text: str, kind: str) -> Optional[Dict[str, Any]]:
    try:
        return parser(text, "embedded")
    except Exception:  # a damaged block is skipped, never fatal: the rest of the log still counts
        return None


def parse_embedded(text: str) -> Dict[str, Any]:
    """Every recognisable tool output inside ``text``, merged into one snapshot (empty when none)."""
    try:
        lines = _lines(text or "")
    except Exception:
        return new_snapshot("pasted", [])
    parts: List[Dict[str, Any]] = []
    blocks: List[Tuple[str, Callable[[str, str], Dict[str, Any]], str]] = []
    for block in _package_blocks(lines):
        blocks.append((block[0], packages.parse_freeze if block[0] == "pip-freeze" else packages.parse_pip_list, block[1]))
    blocks += [("collect-env", collect_env.parse, block) for block in _collect_env_blocks(lines)]
    blocks += [("ds-report", ds_report.parse, block) for block in _ds_report_blocks(lines)]
    blocks += [("nvcc", nvcc.parse, line) for line in _simple(lines, nvcc.RELEASE)[:1]]
    list_lines = _simple(lines, smi_list.GPU_LINE)
    if list_lines:
        blocks.append(("nvidia-smi-list", smi_list.parse, "\n".join(list_lines)))
    blocks += [("nvidia-smi", smi_table.parse, block) for block in _smi_tables(lines)]
    for kind, parser, chunk in blocks:
        snapshot = _attempt(parser, chunk, kind)
        if snapshot is not None:
            snapshot["origin"]["inputs"] = ["embedded:" + kind]
            parts.append(snapshot)
    nccl = _nccl("\n".join(lines))
    if nccl is not None:
        parts.append(nccl)
    if not parts:
        return new_snapshot("pasted", [])
    merged = merge_all(parts)
    merged["origin"]["type"] = "pasted"
    return merged
